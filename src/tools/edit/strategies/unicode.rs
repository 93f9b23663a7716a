//! `unicode`: Codex's `seek_sequence` ladder (codex-rs `apply-patch`), four passes over windows
//! of whole lines: lines equal exactly, then equal after `trim_end`, then after `trim`, then
//! after `trim` with Unicode dashes, quotes and odd spaces folded to ASCII. The first pass that
//! matches decides. Codex takes the first matching window of a pass; we count them and refuse
//! two. Like Codex, `newText` replaces the lines as sent (no re-indentation).

use super::lines::{Haystack, TextLines, windows_equal_by};
use super::{Found, Locate, Locator, Replacement, unique_or_ambiguous};

pub(super) struct Unicode;

/// Codex's punctuation folding (its `normalise`, after trimming).
pub(crate) fn fold_punctuation(c: char) -> char {
    match c {
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' => '-',
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2004}' | '\u{2005}' | '\u{2006}'
        | '\u{2007}' | '\u{2008}' | '\u{2009}' | '\u{200A}' | '\u{202F}' | '\u{205F}'
        | '\u{3000}' => ' ',
        other => other,
    }
}

fn folded_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim(), b.trim());
    if a.is_ascii() && b.is_ascii() {
        return a == b;
    }
    a.chars()
        .map(fold_punctuation)
        .eq(b.chars().map(fold_punctuation))
}

impl Locator for Unicode {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        let old = TextLines::new(&edit.old_text);
        if old.all_blank() {
            return Locate::NotFound;
        }
        type Eq = fn(&str, &str) -> bool;
        let passes: [(&str, Eq); 4] = [
            ("lines", |a, b| a == b),
            ("trim-end", |a, b| a.trim_end() == b.trim_end()),
            ("trim", |a, b| a.trim() == b.trim()),
            ("unicode", folded_eq),
        ];
        for (tier, eq) in passes {
            let hits: Vec<Found> = windows_equal_by(hay, &old, eq)
                .into_iter()
                .map(|i| {
                    let (start, end) = hay.span(i, old.len(), old.trailing_newline);
                    if tier == "lines" {
                        Found::exact(tier, start, end)
                    } else {
                        Found::fuzzy(tier, start, end, None)
                    }
                })
                .collect();
            if !hits.is_empty() {
                return unique_or_ambiguous(hits);
            }
        }
        Locate::NotFound
    }
}
