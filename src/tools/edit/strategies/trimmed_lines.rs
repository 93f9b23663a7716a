//! `trimmed-lines`: a window of whole lines that equals `oldText` line by line once each line is
//! trimmed on both sides. This is Cline's `lineTrimmedFallbackMatch` and opencode's
//! `LineTrimmedReplacer`; both take the first such window, we count them all (two windows is an
//! error). `newText` replaces the window as sent, as they do: a block found at another
//! indentation gets the model's indentation (the `indent` tier re-indents instead).

use super::lines::{Haystack, TextLines, windows_equal_by};
use super::{Found, Locate, Locator, Replacement, unique_or_ambiguous};

pub(super) struct TrimmedLines;

impl Locator for TrimmedLines {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        let old = TextLines::new(&edit.old_text);
        if old.all_blank() {
            return Locate::NotFound;
        }
        let hits = windows_equal_by(hay, &old, |file, model| file.trim() == model.trim())
            .into_iter()
            .map(|i| {
                let (start, end) = hay.span(i, old.len(), old.trailing_newline);
                Found::fuzzy("trimmed-lines", start, end, None)
            })
            .collect();
        unique_or_ambiguous(hits)
    }
}
