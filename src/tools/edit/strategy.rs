//! The matching seam of `edit`: how a call's `oldText`s are located in the file, and the two
//! strategies we ship. `pi` is Pi's `applyEditsToNormalizedContent` (exact `indexOf`, then a fuzzy
//! search in normalised space, uniqueness always counted in normalised space, and the whole file
//! rewritten in normalised form once any edit needed the fuzzy tier). `exact` only accepts exact,
//! unique matches and never normalises.
//!
//! A strategy sees text only (BOM stripped, LF line endings); it never touches files. It must not
//! depend on anything in `tools` but the shared result types.

use std::borrow::Cow;
use std::sync::Arc;

use super::normalize::{count_occurrences, find, normalize_for_fuzzy_match, scan_all};
use crate::tools::{EditFailure, MatchTier};

/// One replacement of an edit call, with `oldText` and `newText` already LF-normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    pub old_text: String,
    pub new_text: String,
}

impl Replacement {
    pub fn new(old_text: impl Into<String>, new_text: impl Into<String>) -> Self {
        Replacement {
            old_text: old_text.into(),
            new_text: new_text.into(),
        }
    }
}

/// A successful match of every edit: the text the replacements were applied to (the file, or its
/// normalised form), the result, and how each edit was located (in edit order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied<'a> {
    /// What the replacements were applied to; the diff is computed from this to `new_content`.
    pub base: Cow<'a, str>,
    pub new_content: String,
    pub tiers: Vec<MatchTier>,
}

/// A failed edit call: why, and the tiers of the edits located before the failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Miss {
    pub failure: EditFailure,
    pub tiers: Vec<MatchTier>,
}

impl Miss {
    fn new(failure: EditFailure, tiers: Vec<MatchTier>) -> Self {
        Miss { failure, tiers }
    }
}

/// How an edit call's `oldText`s are located in the file. `pi` (exact, then fuzzy) is the default.
///
/// A strategy reports failures as [`EditFailure`]s (never `File` or `InvalidArguments`, which
/// belong to the tool); the tool turns them into Pi's texts with [`failure_message`].
pub trait EditStrategy: Send + Sync {
    /// The strategy's name as users select it (`pi`, `exact`, ...).
    fn name(&self) -> &'static str;

    /// Locates every edit in `content` (BOM stripped, LF line endings) and applies them all
    /// against that same original text.
    fn apply<'a>(&self, content: &'a str, edits: &[Replacement]) -> Result<Applied<'a>, Miss>;
}

/// Pi's matching: exact first, then fuzzy in normalised space.
pub struct PiStrategy;

/// Exact matching only: `indexOf`, uniqueness counted exactly, no normalisation.
pub struct ExactStrategy;

/// The names [`strategy_by_name`] accepts, the default first.
pub fn strategy_names() -> &'static [&'static str] {
    &["pi", "exact"]
}

/// The strategy called `name`, if there is one.
pub fn strategy_by_name(name: &str) -> Option<Arc<dyn EditStrategy>> {
    match name {
        "pi" => Some(Arc::new(PiStrategy)),
        "exact" => Some(Arc::new(ExactStrategy)),
        _ => None,
    }
}

/// Pi's error text for `failure` in a call with `edit_count` edits on the raw path argument
/// `path` (spec section 3, "Exact error strings").
///
/// `File` and `InvalidArguments` have no fixed text (the tool reports the operating system's or
/// the validator's message); they get a generic one here.
pub fn failure_message(failure: &EditFailure, edit_count: usize, path: &str) -> String {
    let single = edit_count == 1;
    match *failure {
        EditFailure::NoEdits => {
            "Edit tool input is invalid. edits must contain at least one replacement.".to_owned()
        }
        EditFailure::EmptyOldText { .. } if single => {
            format!("oldText must not be empty in {path}.")
        }
        EditFailure::EmptyOldText { index } => {
            format!("edits[{index}].oldText must not be empty in {path}.")
        }
        EditFailure::NotFound { .. } if single => format!(
            "Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines."
        ),
        EditFailure::NotFound { index } => format!(
            "Could not find edits[{index}] in {path}. The oldText must match exactly including all whitespace and newlines."
        ),
        EditFailure::NotUnique { count, .. } if single => format!(
            "Found {count} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique."
        ),
        EditFailure::NotUnique { index, count } => format!(
            "Found {count} occurrences of edits[{index}] in {path}. Each oldText must be unique. Please provide more context to make it unique."
        ),
        EditFailure::Overlap { first, second } => format!(
            "edits[{first}] and edits[{second}] overlap in {path}. Merge them into one edit or target disjoint regions."
        ),
        EditFailure::NoChange if single => format!(
            "No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
        ),
        EditFailure::NoChange => {
            format!("No changes made to {path}. The replacements produced identical content.")
        }
        EditFailure::File => format!("Could not edit file: {path}."),
        EditFailure::InvalidArguments => {
            format!("Edit tool input is invalid for {path}.")
        }
    }
}

/// Where one edit matched in the base text (byte offsets).
#[derive(Debug, Clone, Copy)]
struct Located {
    edit: usize,
    start: usize,
    len: usize,
}

/// Pi checks every `oldText` for emptiness before matching anything.
fn check_not_empty(edits: &[Replacement]) -> Result<(), Miss> {
    match edits.iter().position(|e| e.old_text.is_empty()) {
        Some(index) => Err(Miss::new(EditFailure::EmptyOldText { index }, Vec::new())),
        None => Ok(()),
    }
}

/// Sorts the matches by position (stably, as JS does), rejects overlaps with the original edit
/// indices, splices the new texts in, and rejects a result identical to the base.
fn splice(
    base: &str,
    edits: &[Replacement],
    mut located: Vec<Located>,
) -> Result<String, EditFailure> {
    located.sort_by_key(|m| m.start);
    for pair in located.windows(2) {
        let (prev, cur) = (pair[0], pair[1]);
        if prev.start + prev.len > cur.start {
            return Err(EditFailure::Overlap {
                first: prev.edit,
                second: cur.edit,
            });
        }
    }
    let grown: usize = located.iter().map(|m| edits[m.edit].new_text.len()).sum();
    let mut out = String::with_capacity(base.len() + grown);
    let mut cursor = 0;
    for m in &located {
        out.push_str(&base[cursor..m.start]);
        out.push_str(&edits[m.edit].new_text);
        cursor = m.start + m.len;
    }
    out.push_str(&base[cursor..]);
    if out == base {
        return Err(EditFailure::NoChange);
    }
    Ok(out)
}

/// From this many edits on, all needles are searched in one pass over the text.
const ONE_PASS_FROM: usize = 12;

/// First position and non-overlapping count of every needle in `haystack`.
fn scan(haystack: &str, needles: &[&str]) -> Vec<(Option<usize>, i64)> {
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

fn unique(count: i64, index: usize, tiers: &[MatchTier]) -> Result<(), Miss> {
    if count > 1 {
        let count = usize::try_from(count).unwrap_or(usize::MAX);
        return Err(Miss::new(
            EditFailure::NotUnique { index, count },
            tiers.to_vec(),
        ));
    }
    Ok(())
}

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
                Some((MatchTier::Exact, _)) => MatchTier::Exact,
                _ => MatchTier::Fuzzy,
            });
            located.push(Located {
                edit: i,
                start,
                len,
            });
        }

        match splice(&base, edits, located) {
            Ok(new_content) => Ok(Applied {
                base,
                new_content,
                tiers,
            }),
            Err(failure) => Err(Miss::new(failure, tiers)),
        }
    }
}

impl EditStrategy for ExactStrategy {
    fn name(&self) -> &'static str {
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
            tiers.push(MatchTier::Exact);
            located.push(Located {
                edit: i,
                start,
                len: olds[i].len(),
            });
        }
        match splice(content, edits, located) {
            Ok(new_content) => Ok(Applied {
                base: Cow::Borrowed(content),
                new_content,
                tiers,
            }),
            Err(failure) => Err(Miss::new(failure, tiers)),
        }
    }
}
