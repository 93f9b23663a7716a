//! `pi-local`: Pi's matching used only to locate. Exact `indexOf` first, then Pi's normalised
//! space (NFKC, trailing whitespace trimmed per line, Unicode quotes, dashes and spaces folded),
//! with uniqueness counted in normalised space as Pi counts it. The difference from `pi`: the
//! match is mapped back to a span of the original text and only that span is replaced, so the
//! bytes outside it stay exactly as they were (Pi writes the whole file back normalised once
//! any edit needs its fuzzy tier).
//!
//! Normalisation keeps every line (no NFKC mapping adds or removes a `\n`), so a normalised
//! offset maps back line by line; inside a non-ASCII line the column is found by normalising
//! prefixes, and a column that falls inside a composed character is not found at all.

use unicode_normalization::UnicodeNormalization;

use super::super::normalize::{count_occurrences, find, normalize_for_fuzzy_match};
use super::lines::Haystack;
use super::{Found, Locate, Locator, Replacement};

pub(super) struct PiLocal;

impl Locator for PiLocal {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        let normalized_old = normalize_for_fuzzy_match(&edit.old_text);
        let normalized = hay.pi_normalized();
        let count = count_occurrences(normalized, &normalized_old);
        if count > 1 {
            return Locate::Ambiguous(usize::try_from(count).unwrap_or(usize::MAX));
        }
        if let Some(start) = find(hay.text, &edit.old_text) {
            return Locate::Found(Found::exact("exact", start, start + edit.old_text.len()));
        }
        if normalized_old.is_empty() {
            return Locate::NotFound;
        }
        let Some(at) = find(normalized, &normalized_old) else {
            return Locate::NotFound;
        };
        let norm = Haystack::new(normalized);
        // An offset right after a `\n` is column 0 of the next line, so a match that ends with
        // a line break takes the original line's trailing whitespace and `\n` with it.
        let map = |offset: usize| -> Option<usize> {
            let line = norm.line_of(offset);
            let column = offset - norm.line_start(line);
            original_column(hay.line(line), norm.line(line), column)
                .map(|c| hay.line_start(line) + c)
        };
        let (Some(start), Some(end)) = (map(at), map(at + normalized_old.len())) else {
            return Locate::NotFound;
        };
        Locate::Found(Found::fuzzy("pi-local", start, end, None))
    }
}

/// The byte column in `original` (one line) that normalises to column `column` of `normalized`
/// (the same line normalised), if there is one.
fn original_column(original: &str, normalized: &str, column: usize) -> Option<usize> {
    if column == 0 {
        return Some(0);
    }
    if original.is_ascii() {
        // Only trailing whitespace was removed: columns are the same bytes.
        return (column <= normalized.len()).then_some(column);
    }
    // Normalise growing prefixes (without the trim, which only removes the line's tail) until
    // one is `column` bytes long.
    let fold = |s: &str| -> usize {
        s.nfkc()
            .map(super::unicode::fold_punctuation)
            .map(char::len_utf8)
            .sum()
    };
    for (at, c) in original.char_indices() {
        let end = at + c.len_utf8();
        let len = fold(&original[..end]);
        if len == column {
            return Some(end);
        }
        if len > column {
            return None;
        }
    }
    None
}
