//! `exact`: exact bytes only. Pi's first tier without its fuzzy fallback: `indexOf`, uniqueness
//! counted exactly (non-overlapping occurrences, as JS `split` counts them), nothing normalised.
//! As a step of a chain it is the [`Exact`] tier; on its own it searches all the edits of a call
//! in one pass when there are many.

use std::borrow::Cow;

use super::super::normalize::{count_occurrences, find};
use super::lines::Haystack;
use super::pi::{scan, unique};
use super::{
    Applied, EditStrategy, Found, Locate, Located, Locator, Miss, Replacement, check_not_empty,
    exact_tier, splice,
};
use crate::tools::EditFailure;

/// Exact matching only: `indexOf`, uniqueness counted exactly, no normalisation.
pub struct ExactStrategy;

impl EditStrategy for ExactStrategy {
    fn name(&self) -> &str {
        "exact"
    }

    fn apply<'a>(&self, content: &'a str, edits: &[Replacement]) -> Result<Applied<'a>, Miss> {
        check_not_empty(edits)?;
        let olds: Vec<&str> = edits.iter().map(|e| e.old_text.as_str()).collect();
        let scanned = scan(content, &olds);
        let mut tiers = Vec::with_capacity(edits.len());
        let mut located = Vec::with_capacity(edits.len());
        for (i, (at, count)) in scanned.into_iter().enumerate() {
            let Some(start) = at else {
                return Err(Miss::new(EditFailure::NotFound { index: i }, tiers));
            };
            unique(count, i, &tiers)?;
            tiers.push(exact_tier());
            located.push(Located {
                edit: i,
                start,
                end: start + olds[i].len(),
                new_text: Cow::Borrowed(edits[i].new_text.as_str()),
            });
        }
        match splice(content, located) {
            Ok(new_content) => Ok(Applied {
                base: Cow::Borrowed(content),
                new_content,
                tiers,
            }),
            Err(failure) => Err(Miss::new(failure, tiers)),
        }
    }
}

/// The exact tier of a ladder.
pub(super) struct Exact;

impl Locator for Exact {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        locate_exact(hay.text, &edit.old_text, "exact")
    }

    fn is_exact(&self) -> bool {
        true
    }
}

/// `needle` found exactly and uniquely in `text`, reported as tier `tier`.
pub(super) fn locate_exact(text: &str, needle: &str, tier: &str) -> Locate {
    if needle.is_empty() {
        return Locate::NotFound;
    }
    let Some(start) = find(text, needle) else {
        return Locate::NotFound;
    };
    match count_occurrences(text, needle) {
        1 => Locate::Found(Found::exact(tier, start, start + needle.len())),
        n => Locate::Ambiguous(usize::try_from(n).unwrap_or(usize::MAX)),
    }
}
