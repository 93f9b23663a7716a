//! Scoring: run a task's checks after the agent stops ([`checks`]) and build the per-run
//! [`RunRecord`] from the agent's run, the checks, the workspace diff and what the runner saw.
//!
//! The outcome rules live in one function, [`decide_outcome`]. Edit telemetry is counted from the
//! agent's tool-call records ([`EditStats::count`]). The record types themselves are
//! [`crate::record`]'s; scoring only builds them. Depends on `record`, `agent`, `tasks`,
//! `sandbox` (the checks run under it) and `workspace`; never on the reports or the runner.

pub mod checks;

use std::collections::BTreeMap;
use std::time::Duration;

/// Prices in dollars per million tokens (the one type shared with the provider config).
pub use crate::providers::config::Price;
pub use checks::{CheckNotStarted, run_check, run_check_in, run_checks, run_checks_in};

use crate::agent::{AgentRun, StopCause};
use crate::conversation::Usage;
use crate::markdown::first_line;
use crate::record::{
    AttemptOutcome, CheckResult, DEFAULT_EDIT_STRATEGY, DivergenceKind, EditStats, ErrorKind,
    NOT_STARTED, Outcome, OutcomeChange, Recorded, RecordedCheck, RecordedEdits, RecordedOutcome,
    RunRecord, Tokens, run_dir_for,
};
use crate::tasks::Task;
use crate::workspace::WorkspaceDiff;

/// The cost in dollars of `usage` at `price`.
pub fn cost(price: &Price, usage: &Usage) -> f64 {
    price.cost(
        usage.input,
        usage.output,
        usage.cache_read,
        usage.cache_write,
    )
}

/// What a replay found, for the record (`None` in [`ScoreInputs`] for live and recording runs).
#[derive(Debug, Clone, Default)]
pub struct ReplayInputs {
    /// Differences between the requests built now and the recorded ones, each counted once.
    pub divergences: u32,
    /// The first difference's kind (`tool_result`, `tools`, ...).
    pub first_kind: Option<DivergenceKind>,
    /// The turn of the first difference.
    pub first_turn: Option<u32>,
    /// One line naming every difference (`turn 3: result of edit#2 changed; ...`).
    pub summary: Option<String>,
    /// What the recording run scored; `None` when the cassette kept no outcome.
    pub recorded: Option<RecordedOutcome>,
    /// Recorded interactions the run never asked for.
    pub unused_interactions: u32,
}

/// The recorded outcome of `record`'s run, as a cassette keeps it.
pub fn recorded_outcome(record: &RunRecord) -> RecordedOutcome {
    RecordedOutcome {
        outcome: record.outcome,
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
    if recorded.outcome == outcome && changed.is_empty() {
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
    /// kind comes from the loop's stop cause, else [`ErrorKind::Unknown`].
    pub error_kind: Option<ErrorKind>,
    /// Requests the retry layer sent again.
    pub retries: u32,
    /// Requests sent, retries included.
    pub attempts: u32,
    /// What the replay found (replays only).
    pub replay: Option<ReplayInputs>,
    /// The run's edit strategy; empty means [`DEFAULT_EDIT_STRATEGY`].
    pub edit_strategy: String,
    /// A task of several attempts: each attempt's outcome, the last one's checks being the
    /// run's (empty for a task of one).
    pub attempt_outcomes: Vec<AttemptOutcome>,
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
            return (Outcome::Error, stop.label());
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
        StopCause::Completed | StopCause::Interrupted => {}
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

/// The outcome of attempt `attempt` whose checks are `checks`, `turns` replies into the run.
pub fn attempt_outcome(attempt: u32, checks: &[CheckResult], turns: u32) -> AttemptOutcome {
    let checks_passed = checks.iter().filter(|c| c.passed).count() as u32;
    AttemptOutcome {
        attempt,
        passed: !checks.is_empty() && checks_passed as usize == checks.len(),
        checks_passed,
        checks_total: checks.len() as u32,
        turns,
    }
}

/// The user message that starts the next attempt after `checks` failed: each failed check's
/// name and output (its tail, cut as the bash tool cuts a command's output: at most 2000
/// lines or 50 KiB in all), then what to do.
pub fn attempt_feedback(checks: &[CheckResult]) -> String {
    use crate::tools::truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, truncate_tail};
    let mut text = String::from("The checks failed after your changes:\n");
    for check in checks.iter().filter(|c| !c.passed) {
        text.push_str(&format!(
            "\n## {}\n\n{}\n",
            check.name,
            check.detail.trim_end()
        ));
    }
    let cut = truncate_tail(&text, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    let mut out = if cut.truncated {
        format!(
            "[The output is cut: its last {} of {} lines follow.]\n{}",
            cut.output_lines, cut.total_lines, cut.content
        )
    } else {
        cut.content
    };
    out.push_str(
        "\nFix the code so that every check passes. The tests are right: change the code, not \
         the tests.",
    );
    out
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
            (None, StopCause::ModelError(_)) => ErrorKind::ModelError,
            _ => ErrorKind::Unknown,
        };
        ctx.error_kind.unwrap_or(from_stop)
    });
    let mut tool_calls = BTreeMap::new();
    for record in &run.tool_calls {
        *tool_calls.entry(record.call.name.clone()).or_insert(0u32) += 1;
    }
    let edits = EditStats::count(&run.tool_calls);
    let edit_strategy = if ctx.edit_strategy.is_empty() {
        DEFAULT_EDIT_STRATEGY.to_owned()
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
        stop: run.stop.label(),
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
                .map_or(Recorded::Unknown, |o| Recorded::Known(o.outcome))
        }),
        outcome_change: change,
        changed_checks,
        unused_interactions: replay.unused_interactions,
        edit_strategy,
        attempt_outcomes: ctx.attempt_outcomes.clone(),
        task_attempts: task.attempts,
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

#[cfg(test)]
mod tests;
