//! Edit telemetry of one run, counted from its tool calls.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::edit::{EDIT_TOOL, MatchTier, UNREPORTED_FAILURE};
use super::tool_call::ToolCallRecord;

/// Edit telemetry of one run.
///
/// *Calls* are counted by outcome: every call of the `edit` tool is exactly one of applied
/// exactly (no located edit needed the fuzzy tier), applied fuzzily (at least one did) or failed
/// (the result is an error). *Edits* are the `edits[]` entries of the applied calls, counted by
/// the tier that located each one; the located prefix of a failed call is not counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditStats {
    pub calls: u32,
    pub calls_exact: u32,
    pub calls_fuzzy: u32,
    pub calls_failed: u32,
    pub edits_exact: u32,
    pub edits_fuzzy: u32,
    /// Failed calls by [`super::EditFailure::name`] (or [`UNREPORTED_FAILURE`]).
    pub failures: BTreeMap<String, u32>,
}

impl EditStats {
    /// Counts the edit calls among `records`.
    pub fn count(records: &[ToolCallRecord]) -> EditStats {
        let mut stats = EditStats::default();
        for record in records.iter().filter(|r| r.call.name == EDIT_TOOL) {
            stats.calls += 1;
            let report = record.result.edit.as_ref();
            if record.result.is_error {
                stats.calls_failed += 1;
                let kind = report
                    .and_then(|r| r.failure.as_ref())
                    .map_or(UNREPORTED_FAILURE, |f| f.name());
                *stats.failures.entry(kind.to_owned()).or_default() += 1;
                continue;
            }
            let tiers = report.map(|r| r.tiers.as_slice()).unwrap_or_default();
            let fuzzy = tiers.iter().filter(|t| **t == MatchTier::Fuzzy).count() as u32;
            stats.edits_fuzzy += fuzzy;
            stats.edits_exact += tiers.len() as u32 - fuzzy;
            if fuzzy > 0 {
                stats.calls_fuzzy += 1;
            } else {
                stats.calls_exact += 1;
            }
        }
        stats
    }

    /// Failed edit calls over edit calls; `None` without edit calls.
    pub fn failure_rate(&self) -> Option<f64> {
        (self.calls > 0).then(|| f64::from(self.calls_failed) / f64::from(self.calls))
    }
}
