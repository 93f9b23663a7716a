//! `whitespace`: every run of whitespace (newlines included) collapsed to one space on both
//! sides, then an exact search. This is opencode's `WhitespaceNormalizedReplacer` made stricter:
//! opencode matches inside tokens (its regex search for `a b` also hits `xa by`); here a match
//! must start and end at token boundaries, and every occurrence counts toward uniqueness.
//!
//! The span replaced is the matched text in the original; when `oldText` starts with
//! indentation the span starts at the line's start, and when it ends with a line break the span
//! takes the rest of the line and its `\n`, so `newText`'s own indentation and final newline
//! take their places (`newText` is inserted as sent).

use super::super::normalize::find;
use super::lines::Haystack;
use super::{Found, Locate, Locator, Replacement, unique_or_ambiguous};

pub(super) struct Whitespace;

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl Locator for Whitespace {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        let needle = collapse(&edit.old_text);
        if needle.is_empty() {
            return Locate::NotFound;
        }
        let collapsed = hay.collapsed();
        let text = &collapsed.text;
        let first_is_word = needle.chars().next().is_some_and(is_word);
        let last_is_word = needle.chars().next_back().is_some_and(is_word);
        let mut hits = Vec::new();
        let mut from = 0;
        while let Some(off) = find(&text[from..], &needle) {
            let at = from + off;
            let end = at + needle.len();
            from = at + needle.chars().next().map_or(1, char::len_utf8);
            let before = text[..at].chars().next_back();
            let after = text[end..].chars().next();
            if (first_is_word && before.is_some_and(is_word))
                || (last_is_word && after.is_some_and(is_word))
            {
                continue;
            }
            let start = collapsed.origin[at];
            let last = collapsed.origin[end - 1];
            let end = last + hay.text[last..].chars().next().map_or(0, char::len_utf8);
            let (start, end) = widen(hay, &edit.old_text, start, end);
            hits.push(Found::fuzzy("whitespace", start, end, None));
        }
        unique_or_ambiguous(hits)
    }
}

/// Widens `start..end` to the line's start when `old` starts with indentation and only
/// whitespace precedes the match on its line, and past the line's end and `\n` when `old` ends
/// with a line break and only whitespace follows.
fn widen(hay: &Haystack<'_>, old: &str, start: usize, end: usize) -> (usize, usize) {
    let text = hay.text;
    let mut start = start;
    if old.starts_with([' ', '\t']) {
        let line_start = hay.line_start(hay.line_of(start));
        if text[line_start..start].trim().is_empty() {
            start = line_start;
        }
    }
    let mut end = end;
    if old.ends_with('\n') {
        let line_end = hay.line_end(hay.line_of(end.saturating_sub(1)));
        if text[end..line_end].trim().is_empty() && line_end < text.len() {
            end = line_end + 1;
        }
    }
    (start, end)
}
