//! `similarity:T`: the window of whole lines closest to `oldText` by normalised edit distance
//! (`1 - distance / max(len)`, over the lines with trailing whitespace dropped and Unicode
//! punctuation folded), among windows of `oldText`'s line count and one line fewer or more. The
//! best must score at least `T` (0.9 unless given), and the best window that does not overlap it
//! must score less than `best - 0.05`, or the match is ambiguous. Only a window that holds
//! `oldText` counts: every non-blank line of `oldText` aligned, in order, with a window line that
//! is the same or a typo of it (see `near_copy`); a best window in which a line differs by a
//! substitution (a whole identifier, keyword, number or literal) is a near-copy, refused with
//! that line. `newText` replaces the window as sent.
//!
//! This is Roo Code's `multi-search-replace` fuzzy search (Levenshtein similarity with a
//! threshold, punctuation normalised first), which searches middle-out and keeps the first best
//! window it meets; we score every window (pruned by length and character counts, which bound
//! the distance from below) and refuse near ties.

use super::anchors::{RUNNER_UP_MARGIN, near_copy};
use super::levenshtein::bounded;
use super::lines::{Haystack, TextLines};
use super::near_copy::align;
use super::unicode::fold_punctuation;
use super::{Found, Locate, Locator, Replacement};

/// The default threshold.
pub(crate) const DEFAULT_THRESHOLD: f64 = 0.9;

pub(super) struct Similarity {
    threshold: f64,
}

impl Similarity {
    pub fn new(threshold: f64) -> Self {
        Similarity { threshold }
    }
}

/// A line as compared: trailing whitespace dropped, punctuation folded.
fn normal(line: &str) -> Vec<char> {
    line.trim_end().chars().map(fold_punctuation).collect()
}

/// Counts of chars by their low 7 bits: the distance is at least the larger one-sided
/// difference of two such counts.
type Histogram = [u32; 128];

fn histogram(chars: &[char]) -> Histogram {
    let mut h = [0u32; 128];
    for c in chars {
        h[(*c as usize) & 127] += 1;
    }
    h
}

fn bag_distance(a: &Histogram, b: &Histogram) -> usize {
    let (mut more, mut less) = (0u32, 0u32);
    for (x, y) in a.iter().zip(b) {
        if x > y {
            more += x - y;
        } else {
            less += y - x;
        }
    }
    more.max(less) as usize
}

impl Locator for Similarity {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        let old = TextLines::new(&edit.old_text);
        if old.all_blank() {
            return Locate::NotFound;
        }
        let n = old.len();
        let mut target: Vec<char> = Vec::new();
        for (i, line) in old.lines.iter().enumerate() {
            if i > 0 {
                target.push('\n');
            }
            target.extend(normal(line));
        }
        let target_hist = histogram(&target);
        let lines: Vec<Vec<char>> = (0..hay.len()).map(|i| normal(hay.line(i))).collect();
        let hists: Vec<Histogram> = lines.iter().map(|l| histogram(l)).collect();
        // The lowest score worth knowing: anything below cannot be the best nor a close runner-up.
        let floor = self.threshold - RUNNER_UP_MARGIN;
        let mut scored: Vec<(usize, usize, f64)> = Vec::new();
        let sizes = n.saturating_sub(1).max(1)..=n + 1;
        for m in sizes {
            if m > hay.len() {
                continue;
            }
            let mut window_hist = [0u32; 128];
            let mut window_len = m - 1;
            for k in 0..m {
                for (w, h) in window_hist.iter_mut().zip(&hists[k]) {
                    *w += h;
                }
                window_len += lines[k].len();
            }
            window_hist[usize::from(b'\n')] += (m - 1) as u32;
            for i in 0..=hay.len() - m {
                if i > 0 {
                    for ((w, out), inn) in window_hist
                        .iter_mut()
                        .zip(&hists[i - 1])
                        .zip(&hists[i + m - 1])
                    {
                        *w = *w - out + inn;
                    }
                    window_len = window_len - lines[i - 1].len() + lines[i + m - 1].len();
                }
                let longest = window_len.max(target.len());
                let bound = ((1.0 - floor) * longest as f64).floor() as usize;
                if window_len.abs_diff(target.len()) > bound
                    || bag_distance(&window_hist, &target_hist) > bound
                {
                    continue;
                }
                let mut window: Vec<char> = Vec::with_capacity(window_len);
                for (k, line) in lines[i..i + m].iter().enumerate() {
                    if k > 0 {
                        window.push('\n');
                    }
                    window.extend_from_slice(line);
                }
                if let Some(d) = bounded(&window, &target, bound) {
                    scored.push((i, m, 1.0 - d as f64 / longest as f64));
                }
            }
        }
        // The best window that holds oldText (every line the same or a typo); a near-copy
        // scoring at the threshold is kept to be named if there is none.
        let mut ranked: Vec<&(usize, usize, f64)> =
            scored.iter().filter(|c| c.2 >= self.threshold).collect();
        ranked.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
        let holds = |&(i, m, _): &(usize, usize, f64)| {
            let window: Vec<&str> = (i..i + m).map(|k| hay.line(k)).collect();
            align(&old.lines, &window, hay.words()).difference
        };
        let mut near = None;
        let mut chosen = None;
        for candidate in ranked {
            match holds(candidate) {
                None => {
                    chosen = Some(*candidate);
                    break;
                }
                Some(difference) => {
                    near.get_or_insert((*candidate, difference));
                }
            }
        }
        let Some((i, m, best)) = chosen else {
            return match near {
                Some(((i, m, _), difference)) => {
                    Locate::NearCopy(near_copy(hay, &old.lines, (i, m), 0, difference))
                }
                None => Locate::NotFound,
            };
        };
        let disjoint_close = scored
            .iter()
            .filter(|c| (c.0 + c.1 <= i || c.0 >= i + m) && c.2 >= best - RUNNER_UP_MARGIN)
            .filter(|c| holds(c).is_none())
            .count();
        if disjoint_close > 0 {
            return Locate::Ambiguous(disjoint_close + 1);
        }
        let (start, end) = hay.span(i, m, old.trailing_newline);
        Locate::Found(Found::fuzzy("similarity", start, end, None).with_score(best))
    }
}
