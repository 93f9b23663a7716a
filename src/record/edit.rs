//! How one `edit` call went, as the tool reports it and the records keep it: whether each edit
//! was located exactly or not and by which tier ([`LocatedEdit`]), and why a call failed
//! ([`EditFailure`]); together an [`EditReport`].

use serde::{Deserialize, Serialize};

/// Whether a strategy located an edit exactly or not; scoring counts the two (`calls_exact`,
/// `calls_fuzzy`). The tier that found it is in [`LocatedEdit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchTier {
    /// The file holds the `oldText` bytes (or its lines) exactly.
    Exact,
    /// Any other tier: normalised, re-indented, similar, ...
    Fuzzy,
}

impl MatchTier {
    /// `exact` or `fuzzy`: the name a report shows.
    pub fn name(self) -> &'static str {
        match self {
            MatchTier::Exact => "exact",
            MatchTier::Fuzzy => "fuzzy",
        }
    }
}

/// How one edit was located: exact or not, the name of the strategy's tier that found it
/// (`exact`, `fuzzy`, `indent`, `anchors`, ...), and for similarity tiers the score in `[0, 1]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocatedEdit {
    pub kind: MatchTier,
    pub tier: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

impl LocatedEdit {
    /// An exact match found by the tier `tier`.
    pub fn exact(tier: &str) -> Self {
        LocatedEdit {
            kind: MatchTier::Exact,
            tier: tier.to_owned(),
            score: None,
        }
    }

    /// A fuzzy match found by the tier `tier`, with its similarity score if it has one.
    pub fn fuzzy(tier: &str, score: Option<f64>) -> Self {
        LocatedEdit {
            kind: MatchTier::Fuzzy,
            tier: tier.to_owned(),
            score,
        }
    }
}

/// Why an edit call failed, as the harness counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EditFailure {
    /// `edits` missing or empty.
    NoEdits,
    /// An `oldText` was empty.
    EmptyOldText {
        index: usize,
    },
    NotFound {
        index: usize,
    },
    NotUnique {
        index: usize,
        count: usize,
    },
    Overlap {
        first: usize,
        second: usize,
    },
    NoChange,
    /// The file could not be read or written (ENOENT, EACCES, a directory...).
    File,
    /// The arguments failed validation before the tool ran.
    InvalidArguments,
}

impl EditFailure {
    /// A stable short name for reports and CSV columns.
    pub fn name(&self) -> &'static str {
        match self {
            EditFailure::NoEdits => "no_edits",
            EditFailure::EmptyOldText { .. } => "empty_old_text",
            EditFailure::NotFound { .. } => "not_found",
            EditFailure::NotUnique { .. } => "not_unique",
            EditFailure::Overlap { .. } => "overlap",
            EditFailure::NoChange => "no_change",
            EditFailure::File => "file_error",
            EditFailure::InvalidArguments => "invalid_arguments",
        }
    }
}

/// The name of the edit tool, whose calls are counted apart.
pub const EDIT_TOOL: &str = "edit";

/// The failure kind counted for a failed edit call that carries no [`EditReport`].
pub const UNREPORTED_FAILURE: &str = "unreported";

/// Every edit failure kind counted in the reports, in column order: the names of
/// [`EditFailure`], then [`UNREPORTED_FAILURE`].
pub const FAILURE_KINDS: [&str; 9] = [
    "no_edits",
    "empty_old_text",
    "not_found",
    "not_unique",
    "overlap",
    "no_change",
    "file_error",
    "invalid_arguments",
    UNREPORTED_FAILURE,
];

/// What happened to one edit call: the strategy, how every located edit was found, and the
/// failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EditReport {
    pub strategy: String,
    /// Exact or fuzzy, for each edit located before success or failure, in edit order (what
    /// scoring counts; the same edits as `located`).
    pub tiers: Vec<MatchTier>,
    /// The same edits with the tier that found each and its score.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub located: Vec<LocatedEdit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<EditFailure>,
}

impl EditReport {
    /// The report of a call under `strategy` whose located edits are `located`.
    pub fn new(strategy: &str, located: Vec<LocatedEdit>, failure: Option<EditFailure>) -> Self {
        EditReport {
            strategy: strategy.to_owned(),
            tiers: located.iter().map(|l| l.kind).collect(),
            located,
            failure,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failure_is_a_counted_kind() {
        let all = [
            EditFailure::NoEdits,
            EditFailure::EmptyOldText { index: 0 },
            EditFailure::NotFound { index: 0 },
            EditFailure::NotUnique { index: 0, count: 2 },
            EditFailure::Overlap {
                first: 0,
                second: 1,
            },
            EditFailure::NoChange,
            EditFailure::File,
            EditFailure::InvalidArguments,
        ];
        let names: Vec<&str> = all.iter().map(EditFailure::name).collect();
        assert_eq!(names, FAILURE_KINDS[..FAILURE_KINDS.len() - 1]);
    }
}
