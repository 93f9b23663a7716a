//! The record of one run ([`RunRecord`]): everything the reports know about it, one row of
//! `runs.csv`, and the rules that say which runs count in pass rates and comparisons.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::attempt::AttemptOutcome;
use super::divergence_kind::DivergenceKind;
use super::edit_stats::EditStats;
use super::error_kind::ErrorKind;
use super::outcome::{Outcome, OutcomeChange};
use super::recorded::Recorded;
use crate::conversation::Usage;

/// The result of one check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    pub name: String,
    pub passed: bool,
    /// Why it failed (or what it saw): exit status, output tails, the missing text...
    pub detail: String,
    #[serde(with = "super::duration_ms")]
    pub duration: Duration,
}

/// Token counts of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub total: u64,
}

impl From<&Usage> for Tokens {
    fn from(u: &Usage) -> Self {
        Tokens {
            input: u.input,
            output: u.output,
            cache_read: u.cache_read,
            cache_write: u.cache_write,
            total: u.total_tokens,
        }
    }
}

/// The edit strategy a run uses unless told otherwise (Pi's own matching).
pub const DEFAULT_EDIT_STRATEGY: &str = "pi";

fn default_edit_strategy() -> String {
    DEFAULT_EDIT_STRATEGY.to_owned()
}

/// The stop label of a run that was never started.
pub const NOT_STARTED: &str = "not started";

/// Everything the reports know about one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub task_id: String,
    pub provider: String,
    pub model: String,
    pub epoch: u32,
    pub tags: Vec<String>,
    pub outcome: Outcome,
    /// One line: why the outcome is what it is.
    pub reason: String,
    /// The full divergence or error text when there is one (for the transcript).
    pub detail: Option<String>,
    /// How the agent loop stopped (`completed`, `limit: turns`, `model error: ...`, ...).
    pub stop: String,
    /// For an `error` run, what failed; `None` for every other outcome. See
    /// [`RunRecord::is_infrastructure_error`].
    #[serde(default)]
    pub error_kind: Option<ErrorKind>,
    /// Requests the retry layer sent again.
    #[serde(default)]
    pub retries: u32,
    /// Requests sent, retries included.
    #[serde(default)]
    pub attempts: u32,
    pub checks: Vec<CheckResult>,
    pub checks_passed: u32,
    pub checks_total: u32,
    pub turns: u32,
    /// Calls per tool name.
    pub tool_calls: BTreeMap<String, u32>,
    /// Tool calls whose result was an error.
    pub tool_errors: u32,
    pub edits: EditStats,
    /// Failed edit calls over edit calls; `None` without edit calls.
    pub edit_failure_rate: Option<f64>,
    pub tokens: Tokens,
    /// Dollars; `None` when no price was given.
    pub cost: Option<f64>,
    #[serde(with = "super::duration_ms")]
    pub wall_time: Duration,
    #[serde(with = "super::duration_ms")]
    pub model_time: Duration,
    #[serde(with = "super::duration_ms")]
    pub tool_time: Duration,
    #[serde(with = "super::duration_ms")]
    pub check_time: Duration,
    pub diff_files: u32,
    pub diff_lines_added: u32,
    pub diff_lines_removed: u32,
    /// `runs/<run>/transcript.md`, relative to the report folder.
    pub transcript_path: String,
    /// `runs/<run>/diff.patch`, relative to the report folder.
    pub diff_path: String,
    /// Replays: how many differences from the cassette the run found (each counted once).
    #[serde(default)]
    pub divergences: u32,
    /// Replays: the kind of the first difference.
    #[serde(default)]
    pub divergence_kind: Option<DivergenceKind>,
    /// Replays: the turn of the first difference.
    #[serde(default)]
    pub divergence_turn: Option<u32>,
    /// Replays: one line naming the differences (`turn 3: result of edit#2 changed; ...`).
    #[serde(default)]
    pub divergence_summary: Option<String>,
    /// Replays: the outcome the cassette recorded, `unknown` when it kept none.
    #[serde(default)]
    pub recorded_outcome: Option<Recorded>,
    /// Replays that reached a verdict: whether it is the recorded one.
    #[serde(default)]
    pub outcome_change: Option<OutcomeChange>,
    /// Replays whose outcome changed: the checks that pass or fail otherwise than recorded.
    #[serde(default)]
    pub changed_checks: Vec<String>,
    /// Replays: recorded interactions the run never asked for (`harness cassettes check` lists
    /// them).
    #[serde(default)]
    pub unused_interactions: u32,
    /// The edit strategy of the run (`--edit-strategy`): with provider and model, its arm.
    #[serde(default = "default_edit_strategy")]
    pub edit_strategy: String,
    /// Tasks with `attempts: N` above 1: each attempt the run made, in order (the last one's
    /// checks are the run's). Empty for a task of one attempt.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempt_outcomes: Vec<AttemptOutcome>,
    /// The attempts the task gives (`attempts:`): the N of "pass rate at attempt N". 1 for a
    /// task of one attempt, and then not written.
    #[serde(default = "one_attempt", skip_serializing_if = "is_one_attempt")]
    pub task_attempts: u32,
}

fn one_attempt() -> u32 {
    1
}

fn is_one_attempt(n: &u32) -> bool {
    *n == 1
}

impl RunRecord {
    /// The record of a run that was not started (the `--max-cost` budget was spent): outcome
    /// `skipped` with `reason`, no tags, no usage, no cost, zero times.
    pub fn skipped(task_id: &str, provider: &str, model: &str, epoch: u32, reason: &str) -> Self {
        let dir = run_dir(task_id, provider, model, epoch);
        RunRecord {
            task_id: task_id.to_owned(),
            provider: provider.to_owned(),
            model: model.to_owned(),
            epoch,
            tags: Vec::new(),
            outcome: Outcome::Skipped,
            reason: reason.to_owned(),
            detail: None,
            stop: NOT_STARTED.to_owned(),
            error_kind: None,
            retries: 0,
            attempts: 0,
            checks: Vec::new(),
            checks_passed: 0,
            checks_total: 0,
            turns: 0,
            tool_calls: BTreeMap::new(),
            tool_errors: 0,
            edits: EditStats::default(),
            edit_failure_rate: None,
            tokens: Tokens::default(),
            cost: None,
            wall_time: Duration::ZERO,
            model_time: Duration::ZERO,
            tool_time: Duration::ZERO,
            check_time: Duration::ZERO,
            diff_files: 0,
            diff_lines_added: 0,
            diff_lines_removed: 0,
            transcript_path: format!("{dir}/transcript.md"),
            diff_path: format!("{dir}/diff.patch"),
            divergences: 0,
            divergence_kind: None,
            divergence_turn: None,
            divergence_summary: None,
            recorded_outcome: None,
            outcome_change: None,
            changed_checks: Vec::new(),
            unused_interactions: 0,
            edit_strategy: default_edit_strategy(),
            attempt_outcomes: Vec::new(),
            task_attempts: 1,
        }
    }

    /// The attempt at which the run passed (1 for a task of one attempt that passed); `None`
    /// when it did not pass.
    pub fn passed_at_attempt(&self) -> Option<u32> {
        if self.outcome != Outcome::Passed {
            return None;
        }
        Some(
            self.attempt_outcomes
                .iter()
                .find(|a| a.passed)
                .map_or(1, |a| a.attempt),
        )
    }

    /// The attempts the run made (1 for a task of one attempt, or a run that never started).
    pub fn attempts_made(&self) -> u32 {
        (self.attempt_outcomes.len() as u32).max(1)
    }

    /// Whether the run passed at its first attempt: the pass rate at attempt 1 counts these.
    pub fn passed_first_attempt(&self) -> bool {
        self.passed_at_attempt() == Some(1)
    }

    /// A replay that ran to its verdict although some requests differed from the cassette
    /// (`--on-divergence continue`): its outcome is real, but its conversation drifted from the
    /// recording, so it is not a verdict on the model.
    pub fn is_drifted(&self) -> bool {
        self.divergences > 0 && self.outcome != Outcome::Diverged
    }

    /// One line on a replay's drift: `outcome held: passed → passed; turn 3: result of edit#2
    /// changed` or `outcome changed: passed → failed (check `unit tests`); ...`. `None` for a
    /// run without differences.
    pub fn drift_line(&self) -> Option<String> {
        if !self.is_drifted() {
            return None;
        }
        let what = self
            .divergence_summary
            .clone()
            .unwrap_or_else(|| format!("{} difference(s) from the cassette", self.divergences));
        let recorded = self.recorded_outcome.unwrap_or(Recorded::Unknown).name();
        let verdict = match self.outcome_change {
            Some(OutcomeChange::Held) => {
                format!("outcome held: {recorded} → {}", self.outcome.name())
            }
            Some(OutcomeChange::Changed) => {
                let checks = if self.changed_checks.is_empty() {
                    String::new()
                } else {
                    let names: Vec<String> = self
                        .changed_checks
                        .iter()
                        .map(|c| format!("`{c}`"))
                        .collect();
                    format!(
                        " (check{} {})",
                        if names.len() == 1 { "" } else { "s" },
                        names.join(", ")
                    )
                };
                format!(
                    "outcome changed: {recorded} → {}{checks}",
                    self.outcome.name()
                )
            }
            Some(OutcomeChange::Unknown) => format!(
                "recorded outcome unknown (cassette kept none) → {}",
                self.outcome.name()
            ),
            None => "outcome not compared".to_owned(),
        };
        Some(format!("{verdict}; {what}"))
    }

    /// The run's folder under the report folder: `runs/<task>--<provider>--<model>--e<epoch>`
    /// ([`run_dir_for`]: with the edit strategy when it is not the default).
    pub fn run_dir(&self) -> String {
        run_dir_for(
            &self.task_id,
            &self.provider,
            &self.model,
            &self.edit_strategy,
            self.epoch,
        )
    }

    /// `provider/model`, with ` [strategy]` when the edit strategy is not the default: the run's
    /// arm as the reports show it.
    pub fn arm_label(&self) -> String {
        if self.edit_strategy == DEFAULT_EDIT_STRATEGY {
            format!("{}/{}", self.provider, self.model)
        } else {
            format!("{}/{} [{}]", self.provider, self.model, self.edit_strategy)
        }
    }

    /// Sets the run's edit strategy, and the paths of its folder that depend on it.
    pub fn set_edit_strategy(&mut self, strategy: &str) {
        self.edit_strategy = strategy.to_owned();
        let dir = self.run_dir();
        self.transcript_path = format!("{dir}/transcript.md");
        self.diff_path = format!("{dir}/diff.patch");
    }

    /// Total tool calls.
    pub fn tool_call_count(&self) -> u32 {
        self.tool_calls.values().sum()
    }

    /// An `error` run whose failure was not the model's (provider, cassette, setup): see
    /// [`ErrorKind::is_infrastructure`]. An `error` run without a kind counts as one.
    pub fn is_infrastructure_error(&self) -> bool {
        self.outcome == Outcome::Error && self.error_kind.is_none_or(ErrorKind::is_infrastructure)
    }

    /// Whether the run counts when two runs of the same task are compared (`harness compare`):
    /// every run but infrastructure errors and skipped runs. Unlike pass rates, a replay that
    /// diverged or drifted from its cassette counts under its outcome: comparing a tool change is
    /// exactly asking which replays it changed.
    pub fn counts_for_comparison(&self) -> bool {
        self.outcome != Outcome::Skipped && !self.is_infrastructure_error()
    }

    /// Whether the run counts in pass rates: every run but infrastructure errors, skipped
    /// runs, and replays whose conversation no longer matched the cassette (diverged or
    /// drifted: a verdict on the tools, not on the model).
    pub fn counts_for_pass_rate(&self) -> bool {
        self.outcome != Outcome::Skipped
            && self.outcome != Outcome::Diverged
            && !self.is_drifted()
            && !self.is_infrastructure_error()
    }
}

/// `runs/<task>--<provider>--<model>--e<epoch>` for the default edit strategy, with the
/// strategy before the epoch for any other (`runs/t--p--m--exact--e1`), so the arms of one
/// report never share a folder; every character outside `[A-Za-z0-9._-]` replaced by `_`
/// (model ids such as `org/model:tag`, strategies such as `chain:a,b` stay one folder), and a
/// name longer than [`MAX_RUN_DIR_NAME`] shortened with a hash ([`fitted`]).
pub fn run_dir_for(task: &str, provider: &str, model: &str, strategy: &str, epoch: u32) -> String {
    if strategy == DEFAULT_EDIT_STRATEGY {
        return run_dir(task, provider, model, epoch);
    }
    fitted(
        format!(
            "{}--{}--{}--{}",
            clean_component(task),
            clean_component(provider),
            clean_component(model),
            clean_component(strategy)
        ),
        epoch,
    )
}

/// The longest name a run folder gets: file systems take names of up to 255 bytes, and a long
/// model id (a Bedrock ARN, say) with a long task id would pass that.
const MAX_RUN_DIR_NAME: usize = 200;

/// `runs/<arm>--e<epoch>`, fitted to [`MAX_RUN_DIR_NAME`] ([`crate::cassettes::fit_name`]).
fn fitted(arm: String, epoch: u32) -> String {
    let name = crate::cassettes::fit_name(&arm, &format!("--e{epoch}"), MAX_RUN_DIR_NAME);
    format!("runs/{name}")
}

fn clean_component(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `runs/<task>--<provider>--<model>--e<epoch>` (the folder of a run with the default edit
/// strategy; see [`run_dir_for`]), every character outside `[A-Za-z0-9._-]` replaced by `_`
/// (model ids such as `org/model:tag` stay one folder).
pub fn run_dir(task: &str, provider: &str, model: &str, epoch: u32) -> String {
    fitted(
        format!(
            "{}--{}--{}",
            clean_component(task),
            clean_component(provider),
            clean_component(model)
        ),
        epoch,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_folder_s_name_fits_a_file_name_and_stays_apart_from_its_neighbours() {
        assert_eq!(
            run_dir("py-median", "openai", "org/model:tag", 2),
            "runs/py-median--openai--org_model_tag--e2"
        );
        assert_eq!(
            run_dir_for("t", "p", "m", "chain:a,b", 1),
            "runs/t--p--m--chain_a_b--e1"
        );
        // A 100-character task id and a Bedrock-style model id: past 255 bytes unshortened.
        let task = "t".repeat(100);
        let model = format!(
            "arn:aws:bedrock:us-east-1:123456789012:inference-profile/{}",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
        );
        let names: Vec<String> = [(1, "pi"), (2, "pi"), (1, "exact")]
            .iter()
            .map(|(epoch, strategy)| run_dir_for(&task, "bedrock", &model, strategy, *epoch))
            .collect();
        let other_model = run_dir_for(&task, "bedrock", &format!("{model}x"), "pi", 1);
        for name in names.iter().chain([&other_model]) {
            let folder = name.strip_prefix("runs/").unwrap();
            assert_eq!(folder.len(), MAX_RUN_DIR_NAME, "{folder}");
            assert!(
                folder.starts_with(&format!("{task}--bedrock--arn_aws")),
                "{folder}"
            );
        }
        assert!(names[0].ends_with("--e1") && names[1].ends_with("--e2"));
        assert_ne!(names[0], names[2]);
        assert_ne!(names[0], other_model);
        // The same arm, the same folder.
        assert_eq!(names[0], run_dir(&task, "bedrock", &model, 1));
    }
}
