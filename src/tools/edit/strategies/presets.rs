//! The named ladders: three reproduce other agents' matching, one is ours.
//!
//! - `codex`: exact, then Codex's `seek_sequence` ladder (the `unicode` tier). Codex's hunks are
//!   whole lines; the exact substring tier comes first because an `oldText` need not be.
//! - `cline`: Cline's `replace_in_file` (`constructNewFileContent`): exact, then
//!   `lineTrimmedFallbackMatch`, then `blockAnchorFallbackMatch`: a block of three or more lines
//!   whose first and last lines match trimmed, at the same length, whatever the middle holds.
//!   Cline takes the first match of each; we count (see the module docs of `strategies`).
//! - `opencode`: opencode's replacers in its order (see `opencode`).
//! - `safe`, the recommended ladder: `exact`, `pi-local`, `indent`, `line-numbers`, `escapes`,
//!   `elision`, `anchors`. Every tier either maps the model's text back to the file's bytes
//!   (normalisation only to locate, re-indentation, unescaping, stripped numbers, filled
//!   elisions) or scores the whole block with a threshold; nothing that would insert `newText`
//!   at a different indentation or accept a block on its anchors alone.

use std::sync::Arc;

use super::lines::{Haystack, TextLines, windows_where};
use super::{Found, Locate, Locator, Replacement, unique_or_ambiguous};
use super::{anchors, elision, escapes, exact, indent, line_numbers, opencode, pi_local, unicode};

/// The tiers of the preset `name` (one of `codex`, `cline`, `opencode`, `safe`).
pub(super) fn tiers(name: &str) -> Vec<Arc<dyn Locator>> {
    match name {
        "codex" => vec![Arc::new(exact::Exact), Arc::new(unicode::Unicode)],
        "cline" => vec![
            Arc::new(exact::Exact),
            Arc::new(ClineLineTrimmed),
            Arc::new(ClineBlockAnchor),
        ],
        "opencode" => vec![
            Arc::new(exact::Exact),
            Arc::new(opencode::LineTrimmed),
            Arc::new(opencode::BlockAnchor),
            Arc::new(opencode::WhitespaceNormalized),
            Arc::new(opencode::IndentationFlexible),
            Arc::new(opencode::EscapeNormalized),
            Arc::new(opencode::TrimmedBoundary),
            Arc::new(opencode::ContextAware),
        ],
        _ => vec![
            Arc::new(exact::Exact),
            Arc::new(pi_local::PiLocal),
            Arc::new(indent::Indent),
            Arc::new(line_numbers::LineNumbers),
            Arc::new(escapes::Escapes),
            Arc::new(elision::Elision),
            Arc::new(anchors::Anchors::new(anchors::DEFAULT_THRESHOLD)),
        ],
    }
}

/// Cline's `lineTrimmedFallbackMatch`: windows equal line by line once trimmed.
struct ClineLineTrimmed;

impl Locator for ClineLineTrimmed {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        let old = TextLines::new(&edit.old_text);
        let hits = windows_where(hay, old.len(), |i| {
            old.lines
                .iter()
                .enumerate()
                .all(|(j, o)| hay.line(i + j).trim() == o.trim())
        })
        .into_iter()
        .map(|i| {
            let (start, end) = hay.span(i, old.len(), old.trailing_newline);
            Found::fuzzy("line-trimmed", start, end, None)
        })
        .collect();
        unique_or_ambiguous(hits)
    }
}

/// Cline's `blockAnchorFallbackMatch`: three or more lines, first and last equal once trimmed at
/// `oldText`'s length; the middle is not looked at.
struct ClineBlockAnchor;

impl Locator for ClineBlockAnchor {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        if edit.old_text.split('\n').count() < 3 {
            return Locate::NotFound;
        }
        let old = TextLines::new(&edit.old_text);
        let n = old.len();
        let (first, last) = (old.lines[0].trim(), old.lines[n - 1].trim());
        let hits = windows_where(hay, n, |i| {
            hay.line(i).trim() == first && hay.line(i + n - 1).trim() == last
        })
        .into_iter()
        .map(|i| {
            let (start, end) = hay.span(i, n, old.trailing_newline);
            Found::fuzzy("block-anchor", start, end, None)
        })
        .collect();
        unique_or_ambiguous(hits)
    }
}
