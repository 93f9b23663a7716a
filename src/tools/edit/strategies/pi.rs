//! `pi`: Pi 0.73.1's `applyEditsToNormalizedContent`, byte-faithful. Exact `indexOf` first,
//! then a search in normalised space (NFKC, trailing whitespace trimmed per line, Unicode quotes,
//! dashes and spaces folded to ASCII); uniqueness is always counted in normalised space; and once
//! any edit of the call needs the fuzzy tier, the replacements are applied to the normalised file,
//! so the whole file is written back normalised. That last rule is Pi's, kept on purpose: `pi`
//! is the reference the differential test (`edit_matches_pi`) holds us to. `pi-local` is the
//! variant that leaves the bytes outside the match alone.

use std::borrow::Cow;

use super::super::normalize::{count_occurrences, find, normalize_for_fuzzy_match, scan_all};
use super::{
    Applied, EditStrategy, Located, Miss, Replacement, check_not_empty, exact_tier, splice,
};
use crate::tools::{EditFailure, LocatedEdit, MatchTier};

/// Pi's matching: exact first, then fuzzy in normalised space.
pub struct PiStrategy;

/// The name of Pi's second tier.
const FUZZY: &str = "fuzzy";

impl EditStrategy for PiStrategy {
    fn name(&self) -> &'static str {
        "pi"
    }

    fn apply<'a>(&self, content: &'a str, edits: &[Replacement]) -> Result<Applied<'a>, Miss> {
        check_not_empty(edits)?;
        // Pi normalises the whole file once per edit (in fuzzyFindText and countOccurrences); the
        // result is the same every time, so it is computed once here.
        let normalized = normalize_for_fuzzy_match(content);
        let normalized_olds: Vec<Cow<'_, str>> = edits
            .iter()
            .map(|e| normalize_for_fuzzy_match(&e.old_text))
            .collect();

        let olds: Vec<&str> = edits.iter().map(|e| e.old_text.as_str()).collect();
        let norm_olds: Vec<&str> = normalized_olds.iter().map(|n| n.as_ref()).collect();

        // The first pass, against the original text, only decides the base and the tiers.
        let exact_in_content = positions(content, &olds);
        let initial: Vec<Option<(MatchTier, usize)>> = exact_in_content
            .iter()
            .zip(&norm_olds)
            .map(|(exact, norm_old)| match exact {
                Some(at) => Some((MatchTier::Exact, *at)),
                None => find(&normalized, norm_old).map(|at| (MatchTier::Fuzzy, at)),
            })
            .collect();
        let any_fuzzy = initial
            .iter()
            .any(|m| matches!(m, Some((MatchTier::Fuzzy, _))));

        // With a fuzzy match the base is the normalised file; normalising it again changes nothing
        // (the normalisation is idempotent), so it is its own fuzzy space.
        let (base, kept): (Cow<'a, str>, Option<Cow<'a, str>>) = if any_fuzzy {
            (normalized, None)
        } else {
            (Cow::Borrowed(content), Some(normalized))
        };
        let fuzzy_space: &str = kept.as_deref().unwrap_or(&base);

        // Where each oldText is found in the base (exact, then fuzzy), and how often its
        // normalised form occurs in fuzzy space, as Pi's loop computes them one edit at a time.
        let n = edits.len();
        let (found, counts): (Vec<Option<(usize, usize)>>, Vec<i64>) = if any_fuzzy {
            let mut needles = olds.clone();
            needles.extend(&norm_olds);
            let scanned = scan(&base, &needles);
            (0..n)
                .map(|i| {
                    let at = scanned[i]
                        .0
                        .map(|at| (at, olds[i].len()))
                        .or_else(|| scanned[n + i].0.map(|at| (at, norm_olds[i].len())));
                    (at, scanned[n + i].1)
                })
                .unzip()
        } else {
            // The base is the original text: the first pass already searched it the same way,
            // and a fuzzy hit there would have made the base normalised.
            let scanned = scan(fuzzy_space, &norm_olds);
            (0..n)
                .map(|i| {
                    let at = initial[i].map(|(_, at)| (at, olds[i].len()));
                    (at, scanned[i].1)
                })
                .unzip()
        };

        let mut tiers = Vec::with_capacity(n);
        let mut located = Vec::with_capacity(n);
        for (i, (found, count)) in found.into_iter().zip(counts).enumerate() {
            let Some((start, len)) = found else {
                return Err(Miss::new(EditFailure::NotFound { index: i }, tiers));
            };
            unique(count, i, &tiers)?;
            tiers.push(match initial[i] {
                Some((MatchTier::Exact, _)) => exact_tier(),
                _ => LocatedEdit::fuzzy(FUZZY, None),
            });
            located.push(Located {
                edit: i,
                start,
                end: start + len,
                new_text: Cow::Borrowed(edits[i].new_text.as_str()),
            });
        }

        match splice(&base, located) {
            Ok(new_content) => Ok(Applied {
                base,
                new_content,
                tiers,
            }),
            Err(failure) => Err(Miss::new(failure, tiers)),
        }
    }
}

/// From this many edits on, all needles are searched in one pass over the text.
pub(super) const ONE_PASS_FROM: usize = 12;

/// First position and non-overlapping count of every needle in `haystack`.
pub(super) fn scan(haystack: &str, needles: &[&str]) -> Vec<(Option<usize>, i64)> {
    if needles.len() >= ONE_PASS_FROM {
        scan_all(haystack, needles)
    } else {
        needles
            .iter()
            .map(|n| (find(haystack, n), count_occurrences(haystack, n)))
            .collect()
    }
}

/// First position of every needle in `haystack`.
fn positions(haystack: &str, needles: &[&str]) -> Vec<Option<usize>> {
    if needles.len() >= ONE_PASS_FROM {
        scan_all(haystack, needles)
            .into_iter()
            .map(|(at, _)| at)
            .collect()
    } else {
        needles.iter().map(|n| find(haystack, n)).collect()
    }
}

pub(super) fn unique(count: i64, index: usize, tiers: &[LocatedEdit]) -> Result<(), Miss> {
    if count > 1 {
        let count = usize::try_from(count).unwrap_or(usize::MAX);
        return Err(Miss::new(
            EditFailure::NotUnique { index, count },
            tiers.to_vec(),
        ));
    }
    Ok(())
}
