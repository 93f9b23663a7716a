//! Near-copies: telling a typo from a substitution, for the tiers that score lines (`anchors`,
//! `similarity`).
//!
//! A model that quotes a block with a typo in it (a character or two wrong inside one word) is
//! describing the block that is there, and recovering it is right. A model that quotes a block in
//! which one whole identifier, keyword, number or string literal is another one is describing
//! code that is *not* in the file (a neighbouring block, a version it remembers, one it
//! imagines): the block it matches is a near-copy, and replacing it would edit the wrong code.
//!
//! Lines are compared as tokens (words, numbers, single punctuation characters; whitespace
//! between tokens does not count). Two lines are the *same* when their tokens are equal; a
//! *typo* when they have as many tokens and every pair that differs is a typo of a word: both
//! are words (a number is a value: any change to one is a substitution), the longer has at least
//! four characters, they are at most one edit apart (two from eight characters on; a swap of two
//! neighbours is one edit), and the model's word does not occur anywhere in the file (a word
//! the file does use is another name, not a misspelling). Anything else *differs*.
//!
//! A window of the file matches `oldText` when every non-blank line of `oldText` is aligned, in
//! order, with a non-blank line of the window that is the same or a typo of it; blank lines on
//! either side are free (a dropped or an added blank line). Pure functions over text; nothing
//! here knows about files or strategies.

use std::collections::HashSet;

use super::levenshtein::similarity;

/// A line's tokens: words, numbers and single punctuation characters, whitespace dropped.
pub(crate) fn tokens(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut chars = line.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        let word = is_word_start(c);
        let number = c.is_ascii_digit();
        if !word && !number {
            out.push(&line[start..start + c.len_utf8()]);
            continue;
        }
        let mut end = start + c.len_utf8();
        while let Some(&(at, next)) = chars.peek() {
            // A number runs on through `.` only when a digit follows (`1.5`, not `x[0].y`).
            let dot_in_number = number
                && next == '.'
                && line[at + 1..]
                    .chars()
                    .next()
                    .is_some_and(|d| d.is_ascii_digit());
            if is_word_char(next) || dot_in_number {
                end = at + next.len_utf8();
                chars.next();
            } else {
                break;
            }
        }
        out.push(&line[start..end]);
    }
    out
}

fn is_word_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn is_word(token: &str) -> bool {
    token.chars().next().is_some_and(is_word_start)
}

/// The words of a file: what a model's word is checked against before it counts as a typo.
#[derive(Debug, Default)]
pub(crate) struct FileWords<'a> {
    words: HashSet<&'a str>,
}

impl<'a> FileWords<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut words = HashSet::new();
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let Some(c) = text[i..].chars().next() else {
                break;
            };
            if !is_word_start(c) {
                i += c.len_utf8();
                continue;
            }
            let start = i;
            i += c.len_utf8();
            while let Some(next) = text[i..].chars().next() {
                if !is_word_char(next) {
                    break;
                }
                i += next.len_utf8();
            }
            words.insert(&text[start..i]);
        }
        FileWords { words }
    }

    fn contains(&self, word: &str) -> bool {
        self.words.contains(word)
    }
}

/// How a line of `oldText` compares with the file's line it is aligned with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineDiff {
    Same,
    Typo,
    Differs,
}

/// The optimal string alignment distance (Levenshtein plus swaps of two neighbours).
fn osa(a: &[char], b: &[char]) -> usize {
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// True if the model's word `model` is a typo of the file's word `file`.
fn is_typo(model: &str, file: &str, words: &FileWords<'_>) -> bool {
    if !is_word(model) || !is_word(file) || words.contains(model) {
        return false;
    }
    let (m, f): (Vec<char>, Vec<char>) = (model.chars().collect(), file.chars().collect());
    let longest = m.len().max(f.len());
    if longest < 4 {
        return false;
    }
    let allowed = if longest >= 8 { 2 } else { 1 };
    osa(&m, &f) <= allowed
}

/// How the model's line compares with the file's.
pub(crate) fn compare_lines(model: &str, file: &str, words: &FileWords<'_>) -> LineDiff {
    if model.trim() == file.trim() {
        return LineDiff::Same;
    }
    let (m, f) = (tokens(model), tokens(file));
    if m == f {
        return LineDiff::Same;
    }
    if m.len() != f.len() {
        return LineDiff::Differs;
    }
    let typos_only = m
        .iter()
        .zip(&f)
        .all(|(a, b)| a == b || is_typo(a, b, words));
    if typos_only {
        LineDiff::Typo
    } else {
        LineDiff::Differs
    }
}

/// True if the model's line (its [`tokens`], made once by a caller that compares it with many
/// lines) is the file's line with exactly one identifier, keyword or number replaced by another
/// (not a typo of it): every other token the same, in the same order. A change of punctuation
/// (quotes, escapes, brackets) is not one: other tiers read those.
pub(crate) fn is_substitution(m: &[&str], file: &str, words: &FileWords<'_>) -> bool {
    let f = tokens(file);
    if m.len() != f.len() {
        return false;
    }
    let mut differing = m.iter().zip(&f).filter(|(a, b)| a != b);
    let (Some((a, b)), None) = (differing.next(), differing.next()) else {
        return false;
    };
    let value = |t: &str| is_word(t) || t.starts_with(|c: char| c.is_ascii_digit());
    value(a) && value(b) && !is_typo(a, b, words)
}

/// The first line of `oldText` that differs from the window: its index among `oldText`'s lines
/// given, and the window line it was aligned with (index among the window's lines given), if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineDifference {
    pub model: usize,
    pub file: Option<usize>,
}

/// An alignment of `oldText`'s lines with a window's.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Alignment {
    /// The share of `oldText`'s non-blank lines found, each credited with its similarity to the
    /// window line it is aligned with.
    pub score: f64,
    /// `None` when every line is the same or a typo; otherwise the first line that differs.
    pub difference: Option<LineDifference>,
    /// How many lines differ.
    pub differing: usize,
    /// The aligned lines: (index among the model lines given, index among the window's).
    pub pairs: Vec<(usize, usize)>,
}

/// Aligns the non-blank `model` lines, in order, with the non-blank `file` lines so that the
/// sum of their similarities is largest (every line counts the same, so one long matching line
/// cannot outweigh short lines that are not there), then classifies each aligned pair. A model
/// line left without a partner differs. With no non-blank model line, the window must have none
/// either.
pub(crate) fn align(model: &[&str], file: &[&str], words: &FileWords<'_>) -> Alignment {
    let model: Vec<(usize, &str)> = model
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i, l.trim()))
        .collect();
    let file: Vec<(usize, &str)> = file
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i, l.trim()))
        .collect();
    if model.is_empty() {
        let empty = file.is_empty();
        return Alignment {
            score: if empty { 1.0 } else { 0.0 },
            difference: None,
            differing: 0,
            pairs: Vec::new(),
        };
    }
    let (a, b) = (model.len(), file.len());
    // best[x][y]: credit of model[..x] aligned within file[..y].
    let mut best = vec![vec![0.0f64; b + 1]; a + 1];
    let mut sim = vec![vec![0.0f64; b]; a];
    for x in 1..=a {
        for y in 1..=b {
            let s = if model[x - 1].1 == file[y - 1].1 {
                1.0
            } else {
                similarity(model[x - 1].1, file[y - 1].1)
            };
            sim[x - 1][y - 1] = s;
            let pair = best[x - 1][y - 1] + s;
            best[x][y] = pair.max(best[x - 1][y]).max(best[x][y - 1]);
        }
    }
    // Walk back: which file line each model line took.
    let mut partner: Vec<Option<usize>> = vec![None; a];
    let (mut x, mut y) = (a, b);
    while x > 0 && y > 0 {
        if best[x][y] == best[x - 1][y] {
            x -= 1;
        } else if best[x][y] == best[x][y - 1] {
            y -= 1;
        } else {
            partner[x - 1] = Some(y - 1);
            x -= 1;
            y -= 1;
        }
    }
    let mut difference = None;
    let mut differing = 0;
    for (k, p) in partner.iter().enumerate() {
        let verdict = match p {
            Some(y) => compare_lines(model[k].1, file[*y].1, words),
            None => LineDiff::Differs,
        };
        if verdict == LineDiff::Differs {
            differing += 1;
            if difference.is_none() {
                difference = Some(LineDifference {
                    model: model[k].0,
                    file: p.map(|y| file[y].0),
                });
            }
        }
    }
    let pairs = partner
        .iter()
        .enumerate()
        .filter_map(|(k, p)| p.map(|y| (model[k].0, file[y].0)))
        .collect();
    Alignment {
        score: best[a][b] / a as f64,
        difference,
        differing,
        pairs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(model: &str, file: &str, text: &str) -> LineDiff {
        compare_lines(model, file, &FileWords::new(text))
    }

    #[test]
    fn lines_are_tokens_and_whitespace_between_them_does_not_count() {
        assert_eq!(
            tokens("  x=foo(a, 1.5)+x[0].y  # \"s\""),
            vec![
                "x", "=", "foo", "(", "a", ",", "1.5", ")", "+", "x", "[", "0", "]", ".", "y", "#",
                "\"", "s", "\""
            ]
        );
        assert_eq!(tokens("0x7f_ff café"), vec!["0x7f_ff", "café"]);
        assert_eq!(verdict("x = foo(a,b)", "  x=foo(a, b)", ""), LineDiff::Same);
    }

    #[test]
    fn a_character_or_two_inside_a_word_is_a_typo() {
        let file = "let doubled = value * 2;\n";
        for model in [
            "let dubled = value * 2;",   // a letter dropped
            "let doubbled = value * 2;", // doubled
            "let doubeld = value * 2;",  // two neighbours swapped
            "let doubled = vaQue * 2;",  // one replaced
        ] {
            assert_eq!(
                verdict(model, "let doubled = value * 2;", file),
                LineDiff::Typo,
                "{model}"
            );
        }
        // Two edits in a long word.
        assert_eq!(
            verdict("x = recieve_mesage()", "x = receive_message()", ""),
            LineDiff::Typo
        );
    }

    #[test]
    fn a_substitution_is_one_identifier_keyword_or_number_replaced() {
        let file = "total = count + offset\nname = \"alpha\"\n";
        let words = FileWords::new(file);
        for (model, real, substitution) in [
            ("total = amount + offset", "total = count + offset", true),
            ("total = offset + offset", "total = count + offset", true),
            ("while ready:", "if ready:", true),
            ("limit = 11", "limit = 10", true),
            ("name = \"beta\"", "name = \"alpha\"", true),
            // Not one: a typo, two tokens replaced, punctuation, a token added, the same.
            ("total = cuont + offset", "total = count + offset", false),
            ("total = amount + base", "total = count + offset", false),
            ("total = count - offset", "total = count + offset", false),
            ("name = \u{201c}alpha\u{201d}", "name = \"alpha\"", false),
            (
                "total = count + offset + 1",
                "total = count + offset",
                false,
            ),
            ("total  =  count + offset", "total = count + offset", false),
        ] {
            assert_eq!(
                is_substitution(&tokens(model), real, &words),
                substitution,
                "{model} for {real}"
            );
        }
    }

    #[test]
    fn a_whole_token_replaced_is_a_substitution() {
        let file = "total = count + offset\nlimit = 10\nname = \"alpha\"\nif ready and done:\n";
        for (model, real) in [
            // identifier: another name of the file, or one far from the real one
            ("total = offset + offset", "total = count + offset"),
            ("total = amount + offset", "total = count + offset"),
            // keyword
            ("if ready or done:", "if ready and done:"),
            ("while ready and done:", "if ready and done:"),
            // number
            ("limit = 11", "limit = 10"),
            ("limit = 100", "limit = 10"),
            // string literal
            ("name = \"beta\"", "name = \"alpha\""),
            ("name = \"gamma\"", "name = \"alpha\""),
            // operator, or a token added or dropped
            ("total = count - offset", "total = count + offset"),
            ("total = count + offset + 1", "total = count + offset"),
        ] {
            assert_eq!(verdict(model, real, file), LineDiff::Differs, "{model}");
        }
        // Short words have no room for a typo: `get` for `set` is another name.
        assert_eq!(verdict("x.get(k)", "x.set(k)", ""), LineDiff::Differs);
        // A word the file uses is never a typo of another, however close.
        assert_eq!(
            verdict(
                "items = load()",
                "item = load()",
                "item = load()\nfor x in items:\n"
            ),
            LineDiff::Differs
        );
        assert_eq!(
            verdict("items = load()", "item = load()", "item = load()\n"),
            LineDiff::Typo
        );
    }

    #[test]
    fn alignment_names_the_first_line_that_differs() {
        let file = ["a = compute(x)", "", "b = a * 2", "return b"];
        let words = FileWords::new("a = compute(x)\n\nb = a * 2\nreturn b\n");
        // A blank line dropped and a typo: a match.
        let ok = align(&["a = compute(x)", "b = a * 2", "retrun b"], &file, &words);
        assert_eq!((ok.difference, ok.differing), (None, 0));
        assert!(ok.score > 0.9 && ok.score < 1.0, "{ok:?}");
        // A number substituted on the second line.
        let near = align(&["a = compute(x)", "b = a * 3", "return b"], &file, &words);
        assert_eq!(
            near.difference,
            Some(LineDifference {
                model: 1,
                file: Some(2)
            })
        );
        assert_eq!(near.differing, 1);
        // Two lines swapped: one of them has no partner in order.
        let swapped = align(&["b = a * 2", "a = compute(x)", "return b"], &file, &words);
        assert_eq!(swapped.differing, 1);
        assert!(swapped.difference.is_some());
    }
}
