//! The exit codes of the `harness` binary (the README's table), and the status of a suite's
//! records, shared by `harness run` and `harness merge`.

use crate::record::{Outcome, OutcomeChange, RunRecord};
use crate::reports::snapshot::SnapshotVerdict;

/// Everything ran; for `harness tool`, also when the tool reported an error result.
pub const SUCCESS: u8 = 0;
/// An internal error (a bug, or an I/O failure of the harness itself).
pub const INTERNAL: u8 = 1;
/// A usage or input error: unknown flag, invalid JSON, missing directory, unknown tool.
pub const USAGE: u8 = 2;
/// `harness validate --oracle`: some task has no reference solution, or its reference fails
/// its checks, or its checks pass on the untouched fixture. The same value as [`INTERNAL`]:
/// `validate` runs no model, so 1 means "the suite is not sound" there, as scripts expect of
/// a checker.
pub const ORACLE_FINDINGS: u8 = 1;
/// A cassette had no recorded response for a request (replay mode).
pub const CASSETTE_MISS: u8 = 3;
/// At least one run did not pass (failed, errored, reached a limit, or diverged from its
/// cassette under `--on-divergence stop`, where its outcome is unknown).
pub const TASK_FAILED: u8 = 100;
/// Drift only: some replays differed from their cassettes (`--on-divergence continue`), but
/// every outcome held and every run passed.
pub const DRIFT: u8 = 101;
/// Some replayed run's outcome is not the one its cassette recorded (it checks, fails or
/// passes otherwise): the tool change altered a result.
pub const OUTCOME_CHANGED: u8 = 102;
/// `--snapshot FILE`: the run's outcome table differs from the committed snapshot (or there
/// is none yet).
pub const SNAPSHOT_CHANGED: u8 = 103;
/// `harness compare --fail-on flip` (or `any-flip`): a run flipped (with `flip`, passed on
/// the base side and not on the new one; with `any-flip`, either way).
pub const COMPARE_FLIPPED: u8 = 110;
/// `harness compare`: the pass rate dropped significantly (more runs passed → not than not →
/// passed, exact McNemar p below `--alpha`), in some pair of arms or all pooled; with every
/// `--fail-on` but `never`.
pub const COMPARE_REGRESSED: u8 = 111;
/// `harness run` was interrupted (Ctrl-C or SIGTERM): the running runs were stopped and the
/// partial report written; `harness run --resume DIR` completes it. 128 + SIGINT, as shells
/// report it.
pub const INTERRUPTED: u8 = 130;

/// The exit status of `harness run` for `records` (the README's exit-code table): an outcome
/// that changed against its cassette first; then, with a snapshot, whether the table changed
/// (a run that did not pass is expected when the snapshot says so), without one whether every
/// run passed; then drift with every outcome held.
pub fn of_suite(records: &[RunRecord], snapshot: Option<&SnapshotVerdict>) -> u8 {
    if records
        .iter()
        .any(|r| r.outcome_change == Some(OutcomeChange::Changed))
    {
        return OUTCOME_CHANGED;
    }
    match snapshot {
        Some(SnapshotVerdict::Changed { .. }) => return SNAPSHOT_CHANGED,
        Some(SnapshotVerdict::Equal) => {}
        None => {
            if records.iter().any(|r| r.outcome != Outcome::Passed) {
                return TASK_FAILED;
            }
        }
    }
    if records.iter().any(|r| r.divergences > 0) {
        return DRIFT;
    }
    SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::reports::fixtures::{Scenario, rec};

    #[test]
    fn exit_statuses_tell_drift_from_changed_outcomes() {
        let passed = rec("t", "p", "m", 1, Outcome::Passed);
        let failed = rec("t", "p", "m", 1, Outcome::Failed);
        // Replays run on after a difference: the outcome held, or it changed.
        let drift_held = Scenario::new("t", "p", "m", 1, Outcome::Passed)
            .drifted(2, Outcome::Passed)
            .record();
        let drift_changed = Scenario::new("t", "p", "m", 1, Outcome::Failed)
            .drifted(1, Outcome::Passed)
            .record();
        assert_eq!(drift_held.outcome_change, Some(OutcomeChange::Held));
        assert_eq!(drift_changed.outcome_change, Some(OutcomeChange::Changed));
        let diverged = rec("t", "p", "m", 1, Outcome::Diverged);
        let equal = SnapshotVerdict::Equal;
        let changed = SnapshotVerdict::Changed {
            diff: String::new(),
            proposed: None,
            missing: false,
        };
        let table: Vec<(Vec<&RunRecord>, Option<&SnapshotVerdict>, u8)> = vec![
            (vec![&passed], None, SUCCESS),
            (vec![&passed, &failed], None, TASK_FAILED),
            (vec![&passed, &drift_held], None, DRIFT),
            (vec![&drift_held, &drift_changed], None, OUTCOME_CHANGED),
            (vec![&failed, &drift_changed], None, OUTCOME_CHANGED),
            // Under `stop` a diverged run's outcome is unknown: it did not pass.
            (vec![&passed, &diverged], None, TASK_FAILED),
            (vec![&failed, &drift_held], None, TASK_FAILED),
            // A snapshot decides instead of "every run passed".
            (vec![&passed, &failed], Some(&equal), SUCCESS),
            (vec![&passed], Some(&changed), SNAPSHOT_CHANGED),
            (vec![&failed, &drift_held], Some(&equal), DRIFT),
            (vec![&drift_changed], Some(&equal), OUTCOME_CHANGED),
        ];
        for (records, snapshot, want) in table {
            let records: Vec<RunRecord> = records.into_iter().cloned().collect();
            assert_eq!(
                of_suite(&records, snapshot),
                want,
                "{:?} {snapshot:?}",
                records
                    .iter()
                    .map(|r| (r.outcome, r.divergences, r.outcome_change))
                    .collect::<Vec<_>>()
            );
        }
    }
}
