//! Gold answers: what a call should have done, because "applied" is not "right".
//!
//! - A record that carries its gold (generated corpora) keeps it.
//! - An edit the run kept whose every `oldText` matched exactly is its own gold: the file it
//!   wrote.
//! - A *recovered* call: a failed edit followed, later in the same run, by a successful edit of
//!   the same path starting from the same content; its gold is the file after the successful
//!   edit (the model's own correction).
//! - Anything else has no gold (a fuzzy apply may or may not have been right).

use std::collections::HashMap;

use super::corpus::{EditRecord, Gold};
use crate::tools::MatchTier;

/// Where a gold answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoldSource {
    /// Written in the record.
    Given,
    /// An exact edit the run kept.
    Kept,
    /// The later successful edit of a failed one.
    Recovered,
}

/// A record's gold answer and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoldAnswer {
    pub gold: Gold,
    pub source: GoldSource,
}

/// True if the record's call changed the file and every edit matched exactly.
fn kept_exact(record: &EditRecord) -> Option<&str> {
    let outcome = record.outcome.as_ref()?;
    if outcome.is_error {
        return None;
    }
    let after = outcome.after.as_deref()?;
    let report = outcome.report.as_ref()?;
    (!report.tiers.is_empty() && report.tiers.iter().all(|t| *t == MatchTier::Exact))
        .then_some(after)
}

/// The gold answer of every record (same order), `None` where there is none.
pub fn derive_gold(records: &[&EditRecord]) -> Vec<Option<GoldAnswer>> {
    let mut out: Vec<Option<GoldAnswer>> = records
        .iter()
        .map(|r| {
            if let Some(gold) = &r.gold {
                return Some(GoldAnswer {
                    gold: gold.clone(),
                    source: GoldSource::Given,
                });
            }
            kept_exact(r).map(|after| GoldAnswer {
                gold: Gold::Apply {
                    after: after.to_owned(),
                },
                source: GoldSource::Kept,
            })
        })
        .collect();
    // Records of one run and path, in order: a failure waits for the next success from the
    // same content.
    let mut by_file: HashMap<(&str, &str, &str), Vec<usize>> = HashMap::new();
    for (i, r) in records.iter().enumerate() {
        by_file
            .entry((r.task.as_str(), r.run.as_str(), r.path.as_str()))
            .or_default()
            .push(i);
    }
    for indices in by_file.values() {
        for (k, &i) in indices.iter().enumerate() {
            let failed = &records[i];
            let is_failure = failed.outcome.as_ref().is_some_and(|o| o.is_error);
            if out[i].is_some() || !is_failure || failed.before.is_none() {
                continue;
            }
            let recovery = indices[k + 1..].iter().map(|&j| records[j]).find(|r| {
                r.outcome
                    .as_ref()
                    .is_some_and(|o| !o.is_error && o.after.is_some())
            });
            if let Some(success) = recovery
                && success.before == failed.before
                && let Some(after) = success.outcome.as_ref().and_then(|o| o.after.clone())
            {
                out[i] = Some(GoldAnswer {
                    gold: Gold::Apply { after },
                    source: GoldSource::Recovered,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edits::corpus::RecordedEditOutcome;
    use crate::tools::{EditFailure, EditReport, LocatedEdit};
    use serde_json::json;

    fn call(
        path: &str,
        before: &str,
        outcome: Option<(bool, Option<&str>, MatchTier)>,
    ) -> EditRecord {
        EditRecord {
            task: "t".into(),
            run: "t#1".into(),
            turn: 1,
            call_id: "c".into(),
            path: path.into(),
            before: Some(before.into()),
            arguments: json!({}),
            outcome: outcome.map(|(is_error, after, tier)| RecordedEditOutcome {
                strategy: "pi".into(),
                is_error,
                message: String::new(),
                report: Some(EditReport::new(
                    "pi",
                    if is_error {
                        vec![]
                    } else if tier == MatchTier::Exact {
                        vec![LocatedEdit::exact("exact")]
                    } else {
                        vec![LocatedEdit::fuzzy("fuzzy", None)]
                    },
                    is_error.then_some(EditFailure::NotFound { index: 0 }),
                )),
                after: after.map(str::to_owned),
            }),
            kind: None,
            gold: None,
        }
    }

    #[test]
    fn exact_kept_edits_are_their_own_gold_and_failures_recover_from_the_same_content() {
        let records = [
            call("a.py", "b0", Some((true, None, MatchTier::Exact))),
            call("b.py", "x0", Some((false, Some("x1"), MatchTier::Exact))),
            call("a.py", "b0", Some((false, Some("b1"), MatchTier::Fuzzy))),
            call("c.py", "c0", Some((true, None, MatchTier::Exact))),
            call("c.py", "c1", Some((false, Some("c2"), MatchTier::Exact))),
        ];
        let refs: Vec<&EditRecord> = records.iter().collect();
        let gold = derive_gold(&refs);
        let apply = |after: &str, source| {
            Some(GoldAnswer {
                gold: Gold::Apply {
                    after: after.into(),
                },
                source,
            })
        };
        assert_eq!(
            gold,
            vec![
                apply("b1", GoldSource::Recovered),
                apply("x1", GoldSource::Kept),
                // A fuzzy apply is not its own gold.
                None,
                // The retry started from other content.
                None,
                apply("c2", GoldSource::Kept),
            ]
        );
    }
}
