//! `anchors` (`anchors:T`): the first and last lines of `oldText` are anchors, found trimmed; the
//! window between them may be up to two lines longer than `oldText` (lines the model dropped,
//! provided `oldText` does not have them elsewhere: a `}`, a `#` or a line moved to another
//! place was not dropped), or shorter by as many blank lines as `oldText`'s middle has (blank
//! lines the model added),
//! and its middle must hold `oldText`'s middle: each non-blank middle line of `oldText` is
//! aligned, in order, with a non-blank window line that is the same or a typo of it (see
//! `near_copy`: a character or two wrong inside a word). The score is the share of `oldText`'s
//! middle lines so found, each credited with its similarity (each line counts the same), and
//! must reach the threshold `T` (0.8 unless given; never 0). A second matching window whose
//! score comes within [`RUNNER_UP_MARGIN`] of the best makes the match ambiguous.
//!
//! A window whose anchors match but where a middle line differs by more than a typo (a whole
//! identifier, keyword, number or literal replaced, a line added or out of order) is a
//! near-copy: the model is describing code that is not in the file. It is refused with the line
//! that differs, when it scores at the threshold or only that one line differs. So is a window
//! whose middle matches and one of whose anchors has one identifier, keyword or number replaced
//! (no anchor pair finds that window).
//!
//! This is the block-anchor idea of Cline and opencode with the hazards removed: Cline accepts
//! any window of the same length whose anchors match, whatever lies between; opencode accepts a
//! single candidate at similarity 0 and lets the last anchor be any later line of the file, so a
//! decoy or a far-away block gets replaced. `newText` is re-indented by the map of indentation
//! that the anchors and the aligned middle lines agree on (a shift, tabs for spaces, another
//! nesting unit); a window on which no one map fits is not a match. An `oldText` with elision
//! markers is left to the `elision` tier.

use super::elision::is_marker;
use super::indentation::Reindent;
use super::lines::{Haystack, TextLines};
use super::near_copy::{Alignment, LineDifference, align, is_substitution, tokens};
use super::{Found, Locate, Locator, NearCopy, Replacement};

/// The default threshold.
pub(crate) const DEFAULT_THRESHOLD: f64 = 0.8;
/// A runner-up this close to the best window makes the match ambiguous.
pub(crate) const RUNNER_UP_MARGIN: f64 = 0.05;
/// How many lines longer than `oldText` a window may be.
const MAX_DROPPED: usize = 2;

pub(super) struct Anchors {
    threshold: f64,
}

impl Anchors {
    pub fn new(threshold: f64) -> Self {
        Anchors { threshold }
    }
}

impl Locator for Anchors {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        let old = TextLines::new(&edit.old_text);
        let n = old.len();
        if n < 3 {
            return Locate::NotFound;
        }
        let first = old.lines[0].trim();
        let last = old.lines[n - 1].trim();
        // An elision marker stands for lines that are not there to compare (the `elision` tier
        // handles those).
        if first.is_empty() || last.is_empty() || old.lines.iter().any(|l| is_marker(l)) {
            return Locate::NotFound;
        }
        // Blank middle lines of oldText may be missing from the file.
        let blank_middle = old.lines[1..n - 1]
            .iter()
            .filter(|l| l.trim().is_empty())
            .count();
        let shortest = (n - blank_middle).max(2);
        let quoted: Vec<&str> = old.lines.iter().map(|l| l.trim()).collect();
        // (first line, window length, alignment) of every window whose anchors match.
        let mut scored: Vec<(usize, usize, Alignment)> = Vec::new();
        for i in 0..hay.len() {
            if hay.line(i).trim() != first {
                continue;
            }
            for m in shortest..=n + MAX_DROPPED {
                if i + m > hay.len() || hay.line(i + m - 1).trim() != last {
                    continue;
                }
                let window: Vec<&str> = (i + 1..i + m - 1).map(|k| hay.line(k)).collect();
                let mut alignment = align(&old.lines[1..n - 1], &window, hay.words());
                // A window line left out that oldText has elsewhere (a `}`, a `#`, a line it
                // moved) was not dropped: the model put it in another place. The window holds
                // oldText only if a line of oldText is out of place, and that line differs.
                let moved = (0..window.len()).any(|k| {
                    let line = window[k].trim();
                    !line.is_empty()
                        && !alignment.pairs.iter().any(|p| p.1 == k)
                        && quoted.contains(&line)
                });
                if moved && alignment.difference.is_none() {
                    let out_of_place = (0..n - 2).find(|&a| {
                        !old.lines[1 + a].trim().is_empty()
                            && !alignment.pairs.iter().any(|p| p.0 == a)
                    });
                    let Some(model) = out_of_place else {
                        continue;
                    };
                    alignment.difference = Some(LineDifference { model, file: None });
                    alignment.differing += 1;
                }
                scored.push((i, m, alignment));
            }
        }
        let best_of = |matching: bool| {
            scored
                .iter()
                .filter(|c| c.2.difference.is_none() == matching)
                .max_by(|a, b| a.2.score.total_cmp(&b.2.score))
        };
        let Some(&(i, m, ref alignment)) = best_of(true).filter(|c| c.2.score >= self.threshold)
        else {
            return match best_of(false) {
                Some((i, m, a)) if a.score >= self.threshold || a.differing == 1 => {
                    a.difference.map_or(Locate::NotFound, |d| {
                        Locate::NearCopy(near_copy(hay, &old.lines, (*i, *m), 1, d))
                    })
                }
                _ => self
                    .anchor_substituted(hay, &old.lines, shortest)
                    .map_or(Locate::NotFound, Locate::NearCopy),
            };
        };
        let best = alignment.score;
        let close = scored
            .iter()
            .filter(|c| c.2.difference.is_none() && c.2.score >= best - RUNNER_UP_MARGIN)
            .count();
        if close > 1 {
            return Locate::Ambiguous(close);
        }
        // newText is re-indented the way the anchors and the middle lines agree on; when no one
        // map fits them all, it could only go in at a wrong indentation.
        let mut model_lines = vec![old.lines[0], old.lines[n - 1]];
        let mut file_lines = vec![hay.line(i), hay.line(i + m - 1)];
        for &(a, b) in &alignment.pairs {
            model_lines.push(old.lines[1 + a]);
            file_lines.push(hay.line(i + 1 + b));
        }
        let Some(reindent) = Reindent::between(&model_lines, &file_lines) else {
            return Locate::NotFound;
        };
        let new_text = reindent.apply(&edit.new_text);
        let (start, end) = hay.span(i, m, old.trailing_newline);
        Locate::Found(Found::fuzzy("anchors", start, end, new_text).with_score(best))
    }
}

impl Anchors {
    /// A window whose middle holds `oldText`'s middle (as a match's must) and one of whose
    /// anchors is `oldText`'s with one identifier, keyword or number replaced, the other the
    /// same: a near-copy, named by the anchor that differs. (No anchor pair matches it, so
    /// without this the model would only hear that `oldText` is not there.)
    fn anchor_substituted(
        &self,
        hay: &Haystack<'_>,
        old: &[&str],
        shortest: usize,
    ) -> Option<NearCopy> {
        let n = old.len();
        let (first, last) = (old[0], old[n - 1]);
        let (first_tokens, last_tokens) = (tokens(first), tokens(last));
        for i in 0..hay.len() {
            let first_same = hay.line(i).trim() == first.trim();
            if !first_same && !is_substitution(&first_tokens, hay.line(i), hay.words()) {
                continue;
            }
            for m in shortest..=n + MAX_DROPPED {
                if i + m > hay.len() {
                    break;
                }
                let end = hay.line(i + m - 1);
                let differs = match (first_same, end.trim() == last.trim()) {
                    (true, false) if is_substitution(&last_tokens, end, hay.words()) => m - 1,
                    (false, true) => 0,
                    _ => continue,
                };
                let window: Vec<&str> = (i + 1..i + m - 1).map(|k| hay.line(k)).collect();
                let alignment = align(&old[1..n - 1], &window, hay.words());
                if alignment.difference.is_some() || alignment.score < self.threshold {
                    continue;
                }
                return Some(NearCopy {
                    first_line: i + 1,
                    last_line: i + m,
                    file_line: Some((i + differs + 1, hay.line(i + differs).to_owned())),
                    model_line: if differs == 0 { first } else { last }.to_owned(),
                });
            }
        }
        None
    }
}

/// The near-copy at window `first..first + len` of the file for `oldText` lines `old`, whose
/// lines from `skip` on (on both sides) were aligned with the `difference`.
pub(super) fn near_copy(
    hay: &Haystack<'_>,
    old: &[&str],
    (first, len): (usize, usize),
    skip: usize,
    difference: LineDifference,
) -> NearCopy {
    let file_line = difference.file.map(|f| {
        let k = first + skip + f;
        (k + 1, hay.line(k).to_owned())
    });
    NearCopy {
        first_line: first + 1,
        last_line: first + len,
        file_line,
        model_line: old[skip + difference.model].to_owned(),
    }
}
