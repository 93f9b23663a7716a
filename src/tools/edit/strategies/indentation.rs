//! Indentation arithmetic for the tiers that re-indent `newText`: the leading whitespace of a
//! line, its width in columns, and the mapping from the indentation the model used to the file's.
//!
//! A mapping is accepted only when it is consistent: every non-blank line pair differs by the
//! same number of columns (for some tab width among 4, 8 and 2), or else the model nests by
//! another unit than the file (2 columns a level where the file has 4, say):
//! one linear, increasing map from the model's columns to the file's fits every pair. `newText`
//! is then re-indented line by line: an indentation string the model used on a matched line
//! becomes the file's string for it; any other is shifted (or scaled) the same way and written
//! in the file's style (tabs if the matched lines are indented with tabs). Blank lines are left
//! as they are.

/// Tab widths tried, most common first.
const TAB_WIDTHS: [usize; 3] = [4, 8, 2];

/// The leading spaces and tabs of `line`.
pub(crate) fn leading(line: &str) -> &str {
    let rest = line.trim_start_matches([' ', '\t']);
    &line[..line.len() - rest.len()]
}

pub(crate) fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// The width of `indent` in columns with tabs `tab` wide (tab stops).
fn columns(indent: &str, tab: usize) -> usize {
    indent.chars().fold(0, |col, c| match c {
        '\t' => (col / tab + 1) * tab,
        _ => col + 1,
    })
}

/// How to turn the model's indentation into the file's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reindent {
    /// Model's indentation string -> file's, from the matched lines.
    pairs: Vec<(String, String)>,
    /// Columns to add (may be negative).
    delta: isize,
    /// A map `file = f0 + (model - m0) * df / dm` instead of the shift: `(m0, f0, dm, df)`.
    scale: Option<(isize, isize, isize, isize)>,
    tab: usize,
    tabs: bool,
    identity: bool,
}

impl Reindent {
    /// The mapping from the indentation of `model` lines to that of `file` lines (pairwise), or
    /// `None` if no single shift explains every non-blank pair, nor (when the model nests by
    /// another unit than the file) one linear map of columns.
    pub fn between(model: &[&str], file: &[&str]) -> Option<Reindent> {
        let pairs: Vec<(&str, &str)> = model
            .iter()
            .zip(file)
            .filter(|(m, f)| !is_blank(m) && !is_blank(f))
            .map(|(m, f)| (leading(m), leading(f)))
            .collect();
        let identity = pairs.iter().all(|(m, f)| m == f);
        let tabs = pairs.iter().any(|(_, f)| f.contains('\t'));
        let consistent = |tab: usize| -> Option<isize> {
            let mut delta = None;
            for (m, f) in &pairs {
                let d = columns(f, tab) as isize - columns(m, tab) as isize;
                match delta {
                    None => delta = Some(d),
                    Some(prev) if prev == d => {}
                    Some(_) => return None,
                }
            }
            Some(delta.unwrap_or(0))
        };
        // The same model column always at the same file column, higher ones higher, all on one
        // line through the two lowest levels.
        let linear = |tab: usize| -> Option<(isize, isize, isize, isize)> {
            let mut points: Vec<(isize, isize)> = pairs
                .iter()
                .map(|(m, f)| (columns(m, tab) as isize, columns(f, tab) as isize))
                .collect();
            points.sort_unstable();
            points.dedup();
            let (&(m0, f0), &(m1, f1)) = (points.first()?, points.get(1)?);
            let (dm, df) = (m1 - m0, f1 - f0);
            (dm > 0 && df > 0 && points.iter().all(|&(m, f)| (f - f0) * dm == (m - m0) * df))
                .then_some((m0, f0, dm, df))
        };
        let shifted = TAB_WIDTHS
            .iter()
            .find_map(|&tab| consistent(tab).map(|d| (tab, d, None)));
        let (tab, delta, scale) = match shifted {
            Some(found) => found,
            None => TAB_WIDTHS
                .iter()
                .find_map(|&tab| linear(tab).map(|s| (tab, 0, Some(s))))?,
        };
        let mut map: Vec<(String, String)> = Vec::new();
        for (m, f) in &pairs {
            if !map.iter().any(|(k, _)| k == m) {
                map.push(((*m).to_owned(), (*f).to_owned()));
            }
        }
        Some(Reindent {
            pairs: map,
            delta,
            scale,
            tab,
            tabs,
            identity,
        })
    }

    /// True if nothing changes.
    #[cfg(test)]
    pub fn is_identity(&self) -> bool {
        self.identity
    }

    /// The indentation for a line the model indented with `indent`.
    fn map(&self, indent: &str) -> String {
        if let Some((_, file)) = self.pairs.iter().find(|(m, _)| m == indent) {
            return file.clone();
        }
        let model = columns(indent, self.tab) as isize;
        let col = match self.scale {
            // Rounded to the nearest column.
            Some((m0, f0, dm, df)) => f0 + ((model - m0) * df * 2 + dm).div_euclid(2 * dm),
            None => model + self.delta,
        };
        let col = col.max(0) as usize;
        if self.tabs {
            let mut out = "\t".repeat(col / self.tab);
            out.push_str(&" ".repeat(col % self.tab));
            out
        } else {
            " ".repeat(col)
        }
    }

    /// `text` re-indented, or `None` if the mapping is the identity.
    pub fn apply(&self, text: &str) -> Option<String> {
        if self.identity {
            return None;
        }
        let mut out = String::with_capacity(text.len() + 16);
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
            }
            if is_blank(line) {
                out.push_str(line);
                continue;
            }
            let indent = leading(line);
            out.push_str(&self.map(indent));
            out.push_str(&line[indent.len()..]);
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uniform_shift_is_added_to_every_line() {
        let r = Reindent::between(&["if x:", "    y()"], &["    if x:", "        y()"]).unwrap();
        assert_eq!(
            r.apply("if x:\n    z()\n\n        w()").unwrap(),
            "    if x:\n        z()\n\n            w()"
        );
    }

    #[test]
    fn spaces_become_the_files_tabs() {
        let r = Reindent::between(&["fn f() {", "    a();"], &["fn f() {", "\ta();"]).unwrap();
        assert_eq!(
            r.apply("fn f() {\n    b();\n        c();\n}").unwrap(),
            "fn f() {\n\tb();\n\t\tc();\n}"
        );
    }

    #[test]
    fn an_inconsistent_shift_is_refused_and_the_identity_changes_nothing() {
        assert!(Reindent::between(&["a", "  b"], &["  a", "  b"]).is_none());
        let same = Reindent::between(&["  a", "b"], &["  a", "b"]).unwrap();
        assert!(same.is_identity());
        assert_eq!(same.apply("x"), None);
    }

    #[test]
    fn a_block_nested_by_another_unit_is_scaled_to_the_files() {
        let model = ["if x:", "  if y:", "    a()"];
        let file = ["    if x:", "        if y:", "            a()"];
        let r = Reindent::between(&model, &file).unwrap();
        assert_eq!(
            r.apply("if x:\n  b()\n  if y:\n      c()\n").unwrap(),
            "    if x:\n        b()\n        if y:\n                c()\n"
        );
        // Tabs in the file: two model columns a level become one tab.
        let r =
            Reindent::between(&["f {", "  g {", "    h;"], &["f {", "\tg {", "\t\th;"]).unwrap();
        assert_eq!(r.apply("  g {\n      i;").unwrap(), "\tg {\n\t\t\ti;");
        // Levels out of order or off the line are not a map.
        assert!(Reindent::between(&["a", "  b", "    c"], &["a", "    b", "  c"]).is_none());
        assert!(Reindent::between(&["a", "  b", "    c"], &["a", "    b", "      c"]).is_none());
    }

    #[test]
    fn a_negative_shift_never_goes_below_column_zero() {
        let r =
            Reindent::between(&["        a", "            b"], &["    a", "        b"]).unwrap();
        assert_eq!(r.apply("  c\n        a").unwrap(), "c\n    a");
    }
}
