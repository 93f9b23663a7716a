//! `anchors` (`anchors:T`): the first and last lines of `oldText` are anchors, found trimmed; the
//! window between them may be up to two lines longer than `oldText` (lines the model dropped),
//! and its middle must hold `oldText`'s middle: each non-blank middle line of `oldText` is
//! aligned, in order, with a window line and credited with their similarity; the score is the
//! share of `oldText`'s middle lines so found (each line counts the same) and must reach the
//! threshold `T` (0.8 unless given; never 0). A second window whose score comes within [`RUNNER_UP_MARGIN`] of the best
//! makes the match ambiguous.
//!
//! This is the block-anchor idea of Cline and opencode with the hazards removed: Cline accepts
//! any window of the same length whose anchors match, whatever lies between; opencode accepts a
//! single candidate at similarity 0 and lets the last anchor be any later line of the file, so a
//! decoy or a far-away block gets replaced. `newText` is re-indented when the anchors agree on a
//! consistent shift. An `oldText` with elision markers is left to the `elision` tier.

use super::elision::is_marker;
use super::indentation::Reindent;
use super::levenshtein::similarity;
use super::lines::{Haystack, TextLines};
use super::{Found, Locate, Locator, Replacement};

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

/// The share of `model`'s non-blank lines found in order in `file`, each credited with its
/// similarity to the file line it is aligned with. Every line counts the same, so one long
/// matching line cannot outweigh short lines that are not there.
fn middle_score(model: &[&str], file: &[&str]) -> f64 {
    let model: Vec<&str> = model
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    let file: Vec<&str> = file
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    if model.is_empty() {
        return if file.is_empty() { 1.0 } else { 0.0 };
    }
    // best[a][b]: credit of model[..a] aligned within file[..b].
    let mut best = vec![vec![0.0f64; file.len() + 1]; model.len() + 1];
    for a in 1..=model.len() {
        for b in 1..=file.len() {
            let pair = best[a - 1][b - 1] + similarity(model[a - 1], file[b - 1]);
            best[a][b] = pair.max(best[a - 1][b]).max(best[a][b - 1]);
        }
    }
    best[model.len()][file.len()] / model.len() as f64
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
        // (first line, window length, score) of every window whose anchors match.
        let mut scored: Vec<(usize, usize, f64)> = Vec::new();
        for i in 0..hay.len() {
            if hay.line(i).trim() != first {
                continue;
            }
            for m in n..=n + MAX_DROPPED {
                if i + m > hay.len() || hay.line(i + m - 1).trim() != last {
                    continue;
                }
                let window: Vec<&str> = (i + 1..i + m - 1).map(|k| hay.line(k)).collect();
                let score = middle_score(&old.lines[1..n - 1], &window);
                scored.push((i, m, score));
            }
        }
        let Some(&(i, m, best)) = scored.iter().max_by(|a, b| a.2.total_cmp(&b.2)) else {
            return Locate::NotFound;
        };
        if best < self.threshold {
            return Locate::NotFound;
        }
        let close = scored
            .iter()
            .filter(|c| c.2 >= best - RUNNER_UP_MARGIN)
            .count();
        if close > 1 {
            return Locate::Ambiguous(close);
        }
        let anchors_model = [old.lines[0], old.lines[n - 1]];
        let anchors_file = [hay.line(i), hay.line(i + m - 1)];
        let new_text =
            Reindent::between(&anchors_model, &anchors_file).and_then(|r| r.apply(&edit.new_text));
        let (start, end) = hay.span(i, m, old.trailing_newline);
        Locate::Found(Found::fuzzy("anchors", start, end, new_text).with_score(best))
    }
}
