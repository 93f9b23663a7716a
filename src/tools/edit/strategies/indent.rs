//! `indent`: whole lines equal once leading whitespace is set aside (and trailing whitespace
//! ignored), provided the indentation differs consistently: the same shift in columns on every
//! line, tabs where the model wrote spaces (or the reverse), or nesting by another unit (2 columns
//! a level where the file has 4: one linear map of columns fits every line). `newText` is
//! re-indented the same way (see `indentation`), so a block the model sent at the wrong depth
//! lands at the file's.
//!
//! This is aider's `replace_part_with_missing_leading_whitespace` (a uniform prefix missing or
//! added) generalised to shifts in columns and tab/space swaps, and the re-indentation Roo Code
//! applies to its replacement. Unlike `trimmed-lines`, lines whose indentation changes
//! inconsistently do not match at all: there is no way to re-indent them right.

use super::indentation::{Reindent, is_blank};
use super::lines::{Haystack, TextLines, windows_where};
use super::{Found, Locate, Locator, Replacement, unique_or_ambiguous};

pub(super) struct Indent;

impl Locator for Indent {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        locate_indent(hay, edit, "indent")
    }
}

/// The `indent` tier under the name `tier`.
pub(super) fn locate_indent(hay: &Haystack<'_>, edit: &Replacement, tier: &str) -> Locate {
    let old = TextLines::new(&edit.old_text);
    if old.all_blank() {
        return Locate::NotFound;
    }
    let n = old.len();
    let same_text = |file: &str, model: &str| match (is_blank(file), is_blank(model)) {
        (true, true) => true,
        (false, false) => file.trim() == model.trim(),
        _ => false,
    };
    let mut hits = Vec::new();
    for i in windows_where(hay, n, |i| {
        old.lines
            .iter()
            .enumerate()
            .all(|(j, m)| same_text(hay.line(i + j), m))
    }) {
        let file: Vec<&str> = (i..i + n).map(|k| hay.line(k)).collect();
        let Some(reindent) = Reindent::between(&old.lines, &file) else {
            continue;
        };
        let (start, end) = hay.span(i, n, old.trailing_newline);
        hits.push(Found::fuzzy(
            tier,
            start,
            end,
            reindent.apply(&edit.new_text),
        ));
    }
    unique_or_ambiguous(hits)
}
