//! How a run ended ([`Outcome`]) and whether a replay's outcome is the one its cassette
//! recorded ([`OutcomeChange`]).

use std::fmt;

use serde::{Deserialize, Serialize};

/// How a run ended, as the reports show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Every check passed.
    Passed,
    /// Some check failed.
    Failed,
    /// The request the harness built no longer matches the cassette.
    Diverged,
    /// The run failed before a verdict: a provider, cassette or setup failure (an
    /// infrastructure error, left out of pass rates), or a reply that ended in error (kind
    /// `model_error`, which counts against the model). The record's `error_kind` says which.
    Error,
    /// A turn, token or wall-time limit ended the run (checks still ran).
    LimitReached,
    /// The run was never started (the `--max-cost` budget was spent); not a verdict on the model.
    Skipped,
}

impl Outcome {
    /// All outcomes, in report order.
    pub const ALL: [Outcome; 6] = [
        Outcome::Passed,
        Outcome::Failed,
        Outcome::Diverged,
        Outcome::Error,
        Outcome::LimitReached,
        Outcome::Skipped,
    ];

    /// The stable name used in CSV and markdown.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::Diverged => "diverged",
            Outcome::Error => "error",
            Outcome::LimitReached => "limit_reached",
            Outcome::Skipped => "skipped",
        }
    }

    /// The outcome named `name` (the inverse of [`Outcome::name`]).
    pub fn from_name(name: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.name() == name)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether a replayed run's outcome is the one its cassette recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeChange {
    /// The same verdict, and every check passed or failed as recorded.
    Held,
    /// Another verdict, or a check that now passes or fails otherwise.
    Changed,
    /// The cassette kept no outcome (recorded before outcomes were kept).
    Unknown,
}

impl OutcomeChange {
    /// The stable name used in CSV and markdown.
    pub fn name(&self) -> &'static str {
        match self {
            OutcomeChange::Held => "held",
            OutcomeChange::Changed => "changed",
            OutcomeChange::Unknown => "unknown",
        }
    }
}
