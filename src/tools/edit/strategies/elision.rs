//! `elision`: `oldText` with lines left out and a marker in their place: a line that is only
//! `...` or `…`, or a comment made of one (`# ...`, `// ... existing code ...`,
//! `/* ... */`, `<!-- ... -->`). The pieces between markers are found exactly, in order: the
//! first must be unique in the file, each later one unique in the rest of the file after the
//! piece before it. If `newText` has as many markers, each is filled with the lines it stands
//! for (the elided lines are kept); if it has none, it replaces the whole span from the first
//! piece to the last.
//!
//! This is aider's `try_dotdotdots` (which only knows bare `...` lines, and needs every piece
//! unique in the whole file and the same markers in both texts), with comment markers added.

use super::super::normalize::{count_occurrences, find};
use super::lines::Haystack;
use super::{Found, Locate, Locator, Replacement};

pub(super) struct Elision;

/// True if `line` stands for elided lines.
pub fn is_marker(line: &str) -> bool {
    let mut body = line.trim();
    for open in ["//", "#", "/*", "<!--", "--", ";"] {
        if let Some(rest) = body.strip_prefix(open) {
            body = rest.trim_start();
            break;
        }
    }
    for close in ["*/", "-->"] {
        if let Some(rest) = body.strip_suffix(close) {
            body = rest.trim_end();
            break;
        }
    }
    let Some(rest) = body.strip_prefix("...").or_else(|| body.strip_prefix('…')) else {
        return false;
    };
    let words = rest.trim().trim_end_matches(['.', '…']).trim();
    words
        .chars()
        .all(|c| c.is_alphabetic() || c == ' ' || c == '-' || c == '\'')
}

/// `text` split at marker lines: the pieces (each ending with `\n` but the last, which keeps
/// `text`'s ending), or `None` if there is no marker.
fn pieces(text: &str) -> Option<Vec<String>> {
    let mut pieces = vec![String::new()];
    let mut markers = 0;
    for line in text.split_inclusive('\n') {
        if is_marker(line) {
            markers += 1;
            pieces.push(String::new());
        } else if let Some(last) = pieces.last_mut() {
            last.push_str(line);
        }
    }
    (markers > 0).then_some(pieces)
}

impl Locator for Elision {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        let Some(olds) = pieces(&edit.old_text) else {
            return Locate::NotFound;
        };
        if olds.first().is_none_or(|p| p.trim().is_empty())
            || olds.last().is_none_or(|p| p.trim().is_empty())
        {
            return Locate::NotFound;
        }
        let text = hay.text;
        // Each piece: where it is, searched after the previous one.
        let mut spans: Vec<(usize, usize)> = Vec::with_capacity(olds.len());
        let mut from = 0;
        for (i, piece) in olds.iter().enumerate() {
            if piece.is_empty() {
                spans.push((from, from));
                continue;
            }
            let rest = &text[from..];
            let Some(at) = find(rest, piece) else {
                return Locate::NotFound;
            };
            let count = count_occurrences(if i == 0 { text } else { rest }, piece);
            if count > 1 {
                return Locate::Ambiguous(usize::try_from(count).unwrap_or(usize::MAX));
            }
            let start = from + at;
            // A piece after a marker starts a line.
            if i > 0 && start > 0 && text.as_bytes()[start - 1] != b'\n' {
                return Locate::NotFound;
            }
            spans.push((start, start + piece.len()));
            from = start + piece.len();
        }
        let start = spans[0].0;
        let end = spans[spans.len() - 1].1;
        let new_text = match pieces(&edit.new_text) {
            None => None,
            Some(news) if news.len() == olds.len() => {
                let mut out = String::new();
                for (i, piece) in news.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&text[spans[i - 1].1..spans[i].0]);
                    }
                    out.push_str(piece);
                }
                Some(out)
            }
            Some(_) => return Locate::NotFound,
        };
        Locate::Found(Found::fuzzy("elision", start, end, new_text))
    }
}
