//! Scoring: run a task's checks after the agent stops ([`checks`]) and build the per-run record
//! ([`RunRecord`]) that the reports read, and the run file ([`RunFile`]: the record plus the
//! transcript and diff) that a run's folder keeps as `run.json`.
//!
//! The outcome rules live in one function, [`decide_outcome`]. Edit telemetry is counted from the
//! agent's [`ToolCallRecord`]s (see [`EditStats`] for what each count means). Depends on `agent`,
//! `tools`, `tasks`, `workspace` and the cassette format (a replay's recorded outcome); never on
//! the reports or the runner.

pub mod checks;
pub mod run_file;
pub mod stats;

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Prices in dollars per million tokens (the one type shared with the provider config).
pub use crate::providers::config::Price;
pub use checks::{CheckResult, run_check, run_check_in, run_checks, run_checks_in};
pub use run_file::{RUN_FILE_NAME, RunFile};

use crate::agent::{AgentRun, StopCause, ToolCallRecord};
use crate::cassettes::format::{RecordedCheck, RecordedEdits, RecordedOutcome};
use crate::conversation::Usage;
use crate::tasks::Task;
use crate::tools::MatchTier;
use crate::workspace::WorkspaceDiff;

/// The name of the edit tool, whose calls are counted apart.
pub const EDIT_TOOL: &str = "edit";

/// The failure kind counted for a failed edit call that carries no [`crate::tools::EditReport`].
pub const UNREPORTED_FAILURE: &str = "unreported";

/// Every edit failure kind counted in the reports, in column order: the names of
/// [`crate::tools::EditFailure`], then [`UNREPORTED_FAILURE`].
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
    /// `model_error`, which counts against the model). [`RunRecord::error_kind`] says which.
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

/// The cost in dollars of `usage` at `price`.
pub fn cost(price: &Price, usage: &Usage) -> f64 {
    price.cost(
        usage.input,
        usage.output,
        usage.cache_read,
        usage.cache_write,
    )
}

/// Error kinds that are the model's own doing (or the conversation it built): a run that ends in
/// `error` with one of these counts against the model like a failure. Every other kind (a
/// [`crate::providers::ProviderError::kind`] such as `rate_limited`, `server_error`,
/// `authentication`, `stream_cut`, or the runner's `cassette`, `setup`, ...) is an
/// infrastructure error, left out of pass rates.
pub const MODEL_ERROR_KINDS: [&str; 2] = [MODEL_ERROR, "context_too_long"];

/// The error kind of a reply whose stop reason was `error` or `aborted` (a refusal, an error
/// event in the stream).
pub const MODEL_ERROR: &str = "model_error";

/// The error kind given to a runner error that came without one.
pub const UNKNOWN_ERROR: &str = "unknown";

/// Whether an `error` run of this kind is an infrastructure failure (see [`MODEL_ERROR_KINDS`]).
pub fn is_infrastructure_kind(kind: &str) -> bool {
    !MODEL_ERROR_KINDS.contains(&kind)
}

/// What a replay found, for the record (`None` in [`ScoreInputs`] for live and recording runs).
#[derive(Debug, Clone, Default)]
pub struct ReplayInputs {
    /// Differences between the requests built now and the recorded ones, each counted once.
    pub divergences: u32,
    /// The first difference's kind (`tool_result`, `tools`, ...).
    pub first_kind: Option<String>,
    /// The turn of the first difference.
    pub first_turn: Option<u32>,
    /// One line naming every difference (`turn 3: result of edit#2 changed; ...`).
    pub summary: Option<String>,
    /// What the recording run scored; `None` when the cassette kept no outcome.
    pub recorded: Option<RecordedOutcome>,
    /// Recorded interactions the run never asked for.
    pub unused_interactions: u32,
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

/// The recorded outcome of `record`'s run, as a cassette keeps it.
pub fn recorded_outcome(record: &RunRecord) -> RecordedOutcome {
    RecordedOutcome {
        outcome: record.outcome.name().to_owned(),
        checks: record
            .checks
            .iter()
            .map(|c| RecordedCheck {
                name: c.name.clone(),
                passed: c.passed,
            })
            .collect(),
        edits: RecordedEdits {
            calls: record.edits.calls,
            exact: record.edits.calls_exact,
            fuzzy: record.edits.calls_fuzzy,
            failed: record.edits.calls_failed,
        },
    }
}

/// Compares a run's verdict and checks with the recorded ones: whether the outcome held, and the
/// checks whose result changed (by name; a check that exists on one side only counts).
fn outcome_change(
    recorded: Option<&RecordedOutcome>,
    outcome: Outcome,
    checks: &[CheckResult],
) -> (OutcomeChange, Vec<String>) {
    let Some(recorded) = recorded else {
        return (OutcomeChange::Unknown, Vec::new());
    };
    let mut changed: Vec<String> = Vec::new();
    for check in checks {
        match recorded.checks.iter().find(|c| c.name == check.name) {
            Some(r) if r.passed == check.passed => {}
            _ => changed.push(check.name.clone()),
        }
    }
    for r in &recorded.checks {
        if !checks.iter().any(|c| c.name == r.name) {
            changed.push(r.name.clone());
        }
    }
    if recorded.outcome == outcome.name() && changed.is_empty() {
        (OutcomeChange::Held, changed)
    } else {
        (OutcomeChange::Changed, changed)
    }
}

/// What the runner knows about a run besides the agent's own record.
#[derive(Debug, Clone, Default)]
pub struct ScoreInputs {
    pub provider: String,
    pub model: String,
    /// 1-based repetition of the same task, provider and model.
    pub epoch: u32,
    /// `None` leaves the cost empty (unknown model price).
    pub price: Option<Price>,
    /// The whole run: workspace setup, agent loop and checks.
    pub wall_time: Duration,
    /// The cassette divergence message, if the run diverged.
    pub divergence: Option<String>,
    /// A provider, cassette or setup failure the runner saw, if any.
    pub error: Option<String>,
    /// What kind of failure `error` is (`rate_limited`, `server_error`, `authentication`,
    /// `stream_cut`, `cassette`, `setup`, ...). When the run ends in `error` without one, the
    /// kind comes from the loop's stop cause, else [`UNKNOWN_ERROR`].
    pub error_kind: Option<String>,
    /// Requests the retry layer sent again.
    pub retries: u32,
    /// Requests sent, retries included.
    pub attempts: u32,
    /// What the replay found (replays only).
    pub replay: Option<ReplayInputs>,
    /// The run's edit strategy; empty means [`DEFAULT_EDIT_STRATEGY`].
    pub edit_strategy: String,
}

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
    /// Failed calls by [`crate::tools::EditFailure::name`] (or [`UNREPORTED_FAILURE`]).
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
    /// For an `error` run, what failed (`rate_limited`, `setup`, `model_error`, ...); `None`
    /// for every other outcome. See [`RunRecord::is_infrastructure_error`].
    #[serde(default)]
    pub error_kind: Option<String>,
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
    #[serde(with = "crate::agent::duration_ms")]
    pub wall_time: Duration,
    #[serde(with = "crate::agent::duration_ms")]
    pub model_time: Duration,
    #[serde(with = "crate::agent::duration_ms")]
    pub tool_time: Duration,
    #[serde(with = "crate::agent::duration_ms")]
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
    /// Replays: the kind of the first difference (`tool_result`, `tools`, `extra_request`...).
    #[serde(default)]
    pub divergence_kind: Option<String>,
    /// Replays: the turn of the first difference.
    #[serde(default)]
    pub divergence_turn: Option<u32>,
    /// Replays: one line naming the differences (`turn 3: result of edit#2 changed; ...`).
    #[serde(default)]
    pub divergence_summary: Option<String>,
    /// Replays: the outcome the cassette recorded, `unknown` when it kept none.
    #[serde(default)]
    pub recorded_outcome: Option<String>,
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
}

impl RunRecord {
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
        let recorded = self.recorded_outcome.as_deref().unwrap_or("unknown");
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
    /// [`is_infrastructure_kind`]. An `error` run without a kind counts as one.
    pub fn is_infrastructure_error(&self) -> bool {
        self.outcome == Outcome::Error
            && self
                .error_kind
                .as_deref()
                .is_none_or(is_infrastructure_kind)
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

/// The edit strategy a run uses unless told otherwise (Pi's own matching).
pub const DEFAULT_EDIT_STRATEGY: &str = "pi";

fn default_edit_strategy() -> String {
    DEFAULT_EDIT_STRATEGY.to_owned()
}

/// `runs/<task>--<provider>--<model>--e<epoch>` for the default edit strategy, with the
/// strategy before the epoch for any other (`runs/t--p--m--exact--e1`), so the arms of one
/// report never share a folder; every character outside `[A-Za-z0-9._-]` replaced by `_`
/// (model ids such as `org/model:tag`, strategies such as `chain:a,b` stay one folder).
pub fn run_dir_for(task: &str, provider: &str, model: &str, strategy: &str, epoch: u32) -> String {
    if strategy == DEFAULT_EDIT_STRATEGY {
        return run_dir(task, provider, model, epoch);
    }
    format!(
        "runs/{}--{}--{}--{}--e{epoch}",
        clean_component(task),
        clean_component(provider),
        clean_component(model),
        clean_component(strategy)
    )
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
    format!(
        "runs/{}--{}--{}--e{epoch}",
        clean_component(task),
        clean_component(provider),
        clean_component(model)
    )
}

/// How the agent loop stopped, in words.
pub fn stop_label(stop: &StopCause) -> String {
    match stop {
        StopCause::Completed => "completed".to_owned(),
        StopCause::Limit(kind) => format!("limit: {}", kind.name()),
        StopCause::ModelError(message) => format!("model error: {}", first_line(message)),
        StopCause::Provider(err) => format!(
            "provider error ({}): {}",
            err.kind(),
            first_line(&err.to_string())
        ),
    }
}

fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .trim();
    if line.chars().count() > 200 {
        format!("{}…", line.chars().take(200).collect::<String>())
    } else {
        line.to_owned()
    }
}

/// One line for a check's detail: its first line, and for a command with output, the last
/// non-blank output line (where test runners put their verdict: `FAILED (failures=1)`).
fn check_summary(detail: &str) -> String {
    let head = first_line(detail);
    if !detail.contains("\n--- stdout ---\n") && !detail.contains("\n--- stderr ---\n") {
        return head;
    }
    let last = detail
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("--- std"))
        .unwrap_or_default();
    if last.is_empty() || last == head {
        head
    } else {
        format!("{head}: {}", first_line(last))
    }
}

/// The outcome rules, in priority order:
/// 1. a divergence → `diverged`;
/// 2. a runner error (provider, cassette, setup), a provider failure that stopped the loop, or a
///    reply with stop reason `error`/`aborted` → `error`;
/// 3. a limit → `limit_reached` (the checks still ran and are shown);
/// 4. otherwise `passed` iff there are checks and all of them passed, else `failed`.
///
/// Returns the outcome and a one-line reason.
pub fn decide_outcome(
    divergence: Option<&str>,
    error: Option<&str>,
    stop: &StopCause,
    checks: &[CheckResult],
) -> (Outcome, String) {
    let passed = checks.iter().filter(|c| c.passed).count();
    let total = checks.len();
    if let Some(divergence) = divergence {
        return (
            Outcome::Diverged,
            format!("diverged: {}", first_line(divergence)),
        );
    }
    if let Some(error) = error {
        return (Outcome::Error, format!("error: {}", first_line(error)));
    }
    match stop {
        StopCause::Provider(_) | StopCause::ModelError(_) => {
            return (Outcome::Error, stop_label(stop));
        }
        StopCause::Limit(kind) => {
            return (
                Outcome::LimitReached,
                format!(
                    "{} limit reached; {passed}/{total} checks passed",
                    kind.name()
                ),
            );
        }
        StopCause::Completed => {}
    }
    if total == 0 {
        return (Outcome::Failed, "no checks ran".to_owned());
    }
    if passed == total {
        return (Outcome::Passed, format!("all {total} checks passed"));
    }
    let failed: Vec<&CheckResult> = checks.iter().filter(|c| !c.passed).collect();
    let first = failed[0];
    let why = check_summary(&first.detail);
    let reason = if failed.len() == 1 {
        format!("check '{}' failed: {why}", first.name)
    } else {
        format!(
            "{} of {total} checks failed; first '{}': {why}",
            failed.len(),
            first.name
        )
    };
    (Outcome::Failed, reason)
}

/// Builds the record of one run.
pub fn score(
    task: &Task,
    run: &AgentRun,
    checks: Vec<CheckResult>,
    diff: &WorkspaceDiff,
    ctx: ScoreInputs,
) -> RunRecord {
    let (outcome, reason) = decide_outcome(
        ctx.divergence.as_deref(),
        ctx.error.as_deref(),
        &run.stop,
        &checks,
    );
    let detail = ctx
        .divergence
        .clone()
        .or_else(|| ctx.error.clone())
        .or_else(|| match &run.stop {
            StopCause::ModelError(m) => Some(m.clone()),
            StopCause::Provider(e) => Some(e.to_string()),
            _ => None,
        });
    // The runner's kind first; else the stop cause's, unless the runner's error (which decided
    // the outcome) came without a kind.
    let error_kind = (outcome == Outcome::Error).then(|| {
        let from_stop = match (&ctx.error, &run.stop) {
            (None, StopCause::Provider(e)) => e.kind(),
            (None, StopCause::ModelError(_)) => MODEL_ERROR,
            _ => UNKNOWN_ERROR,
        };
        ctx.error_kind
            .clone()
            .unwrap_or_else(|| from_stop.to_owned())
    });
    let mut tool_calls = BTreeMap::new();
    for record in &run.tool_calls {
        *tool_calls.entry(record.call.name.clone()).or_insert(0u32) += 1;
    }
    let edits = EditStats::count(&run.tool_calls);
    let edit_strategy = if ctx.edit_strategy.is_empty() {
        default_edit_strategy()
    } else {
        ctx.edit_strategy.clone()
    };
    let dir = run_dir_for(
        &task.id,
        &ctx.provider,
        &ctx.model,
        &edit_strategy,
        ctx.epoch,
    );
    let replay = ctx.replay.clone().unwrap_or_default();
    let (change, changed_checks) = match (&ctx.replay, outcome) {
        (None, _) | (Some(_), Outcome::Diverged) => (None, Vec::new()),
        (Some(r), _) => {
            let (change, checks) = outcome_change(r.recorded.as_ref(), outcome, &checks);
            (Some(change), checks)
        }
    };
    RunRecord {
        task_id: task.id.clone(),
        provider: ctx.provider,
        model: ctx.model,
        epoch: ctx.epoch,
        tags: task.tags.clone(),
        outcome,
        reason,
        detail,
        stop: stop_label(&run.stop),
        error_kind,
        retries: ctx.retries,
        attempts: ctx.attempts,
        checks_passed: checks.iter().filter(|c| c.passed).count() as u32,
        checks_total: checks.len() as u32,
        check_time: checks.iter().map(|c| c.duration).sum(),
        checks,
        turns: run.turns,
        tool_calls,
        tool_errors: run.tool_calls.iter().filter(|r| r.result.is_error).count() as u32,
        edit_failure_rate: edits.failure_rate(),
        edits,
        tokens: Tokens::from(&run.usage),
        cost: ctx.price.map(|p| cost(&p, &run.usage)),
        wall_time: ctx.wall_time,
        model_time: run.model_time,
        tool_time: run.tool_time,
        diff_files: diff.files_changed,
        diff_lines_added: diff.lines_added,
        diff_lines_removed: diff.lines_removed,
        transcript_path: format!("{dir}/transcript.md"),
        diff_path: format!("{dir}/diff.patch"),
        divergences: replay.divergences,
        divergence_kind: replay.first_kind,
        divergence_turn: replay.first_turn,
        divergence_summary: replay.summary,
        recorded_outcome: ctx.replay.as_ref().map(|r| {
            r.recorded
                .as_ref()
                .map_or_else(|| "unknown".to_owned(), |o| o.outcome.clone())
        }),
        outcome_change: change,
        changed_checks,
        unused_interactions: replay.unused_interactions,
        edit_strategy,
    }
}

/// The record of a run that ended before the agent started (the workspace could not be created,
/// the cassette is missing, ...): no turns, no checks, outcome from `ctx` (`error` when
/// `ctx.error` is set, `diverged` for a divergence, else `failed` with "no checks ran").
pub fn score_without_run(task: &Task, ctx: ScoreInputs) -> RunRecord {
    let run = AgentRun::new(Vec::new());
    let mut record = score(task, &run, Vec::new(), &WorkspaceDiff::default(), ctx);
    record.stop = NOT_STARTED.to_owned();
    record
}

/// The stop label of a run that was never started.
pub const NOT_STARTED: &str = "not started";

/// The record of a run that was not started (the `--max-cost` budget was spent): outcome
/// `skipped` with `reason`, no tags, no usage, no cost, zero times.
pub fn skipped_record(
    task_id: &str,
    provider: &str,
    model: &str,
    epoch: u32,
    reason: &str,
) -> RunRecord {
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
    }
}

#[cfg(test)]
mod tests;
