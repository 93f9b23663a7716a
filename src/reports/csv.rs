//! `runs.csv` (one row per run) and `summary.csv` (one row per provider and model). The column
//! order is fixed and documented in `COLUMNS.md`; a test keeps the two in step. New columns are
//! appended at the end, so a column keeps its position across versions. [`read_runs_csv`] reads
//! the run keys back (`harness cassettes check` uses them).

use std::path::Path;

use crate::record::{DivergenceKind, ErrorKind, FAILURE_KINDS, Outcome, RunRecord};

use super::error::ReportError;
use super::summary::{
    ModelSummary, fmt_cost, fmt_ratio, fmt_secs, summarise, summarise_by_tag, summary_counts,
};

/// The tools that get a `calls_<tool>` column, in column order; any other tool counts in
/// `calls_other`.
pub const TOOL_COLUMNS: [&str; 7] = ["read", "write", "edit", "bash", "grep", "find", "ls"];

/// The columns of `runs.csv` that hold timings (nondeterministic; filter them in snapshots).
pub const TIMING_COLUMNS: [&str; 4] = [
    "wall_seconds",
    "model_seconds",
    "tool_seconds",
    "check_seconds",
];

/// The header of `runs.csv`, in order.
pub fn runs_columns() -> Vec<String> {
    let mut cols: Vec<String> = [
        "task",
        "provider",
        "model",
        "epoch",
        "outcome",
        "reason",
        "stop",
        "checks_passed",
        "checks_total",
        "turns",
        "tool_calls",
        "tool_errors",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    cols.extend(TOOL_COLUMNS.iter().map(|t| format!("calls_{t}")));
    cols.push("calls_other".into());
    cols.extend(
        [
            "edit_calls",
            "edit_calls_exact",
            "edit_calls_fuzzy",
            "edit_calls_failed",
            "edits_exact",
            "edits_fuzzy",
            "edit_failure_rate",
        ]
        .map(String::from),
    );
    cols.extend(FAILURE_KINDS.iter().map(|k| format!("fail_{k}")));
    cols.extend(
        [
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "total_tokens",
            "cost_usd",
        ]
        .map(String::from),
    );
    cols.extend(TIMING_COLUMNS.map(String::from));
    cols.extend(
        [
            "diff_files",
            "diff_lines_added",
            "diff_lines_removed",
            "transcript",
            "diff",
            "tags",
            "error_kind",
            "retries",
            "attempts",
            "counted",
            "divergence_kind",
            "divergence_turn",
            "divergences",
            "recorded_outcome",
            "outcome_change",
            "unused_interactions",
            "edit_strategy",
            "task_attempts",
            "attempts_made",
            "passed_at_attempt",
        ]
        .map(String::from),
    );
    cols
}

/// The header of `summary.csv`, in order.
pub const SUMMARY_COLUMNS: [&str; 42] = [
    "provider",
    "model",
    "runs",
    "passed",
    "failed",
    "diverged",
    "error",
    "limit_reached",
    "pass_rate",
    "mean_turns",
    "tool_calls",
    "edit_calls",
    "edit_calls_failed",
    "edit_failure_rate",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "total_tokens",
    "cost_usd",
    "mean_wall_seconds",
    "counted_runs",
    "infra_errors",
    "skipped",
    "pass_rate_low",
    "pass_rate_high",
    "pass_at_1",
    "k",
    "pass_at_k",
    "pass_at_k_tasks",
    "retries",
    "attempts",
    "drifted",
    "outcomes_changed",
    "pass_hat_k",
    "pass_rate_se",
    "edit_strategy",
    "tag",
    "task_attempts",
    "pass_rate_attempt_1",
    "pass_rate_attempt_1_low",
    "pass_rate_attempt_1_high",
];

/// One `runs.csv` row, in [`runs_columns`] order.
pub fn runs_row(r: &RunRecord) -> Vec<String> {
    let mut row = vec![
        r.task_id.clone(),
        r.provider.clone(),
        r.model.clone(),
        r.epoch.to_string(),
        r.outcome.name().to_owned(),
        r.reason.clone(),
        r.stop.clone(),
        r.checks_passed.to_string(),
        r.checks_total.to_string(),
        r.turns.to_string(),
        r.tool_call_count().to_string(),
        r.tool_errors.to_string(),
    ];
    let count = |t: &str| r.tool_calls.get(t).copied().unwrap_or(0);
    row.extend(TOOL_COLUMNS.iter().map(|t| count(t).to_string()));
    let other: u32 = r
        .tool_calls
        .iter()
        .filter(|(name, _)| !TOOL_COLUMNS.contains(&name.as_str()))
        .map(|(_, n)| n)
        .sum();
    row.push(other.to_string());
    let e = &r.edits;
    row.extend([
        e.calls.to_string(),
        e.calls_exact.to_string(),
        e.calls_fuzzy.to_string(),
        e.calls_failed.to_string(),
        e.edits_exact.to_string(),
        e.edits_fuzzy.to_string(),
        fmt_ratio(r.edit_failure_rate),
    ]);
    row.extend(
        FAILURE_KINDS
            .iter()
            .map(|k| e.failures.get(*k).copied().unwrap_or(0).to_string()),
    );
    row.extend([
        r.tokens.input.to_string(),
        r.tokens.output.to_string(),
        r.tokens.cache_read.to_string(),
        r.tokens.cache_write.to_string(),
        r.tokens.total.to_string(),
        fmt_cost(r.cost),
        fmt_secs(r.wall_time.as_secs_f64()),
        fmt_secs(r.model_time.as_secs_f64()),
        fmt_secs(r.tool_time.as_secs_f64()),
        fmt_secs(r.check_time.as_secs_f64()),
        r.diff_files.to_string(),
        r.diff_lines_added.to_string(),
        r.diff_lines_removed.to_string(),
        r.transcript_path.clone(),
        r.diff_path.clone(),
        r.tags.join(";"),
        r.error_kind
            .map(|k| k.name().to_owned())
            .unwrap_or_default(),
        r.retries.to_string(),
        r.attempts.to_string(),
        r.counts_for_pass_rate().to_string(),
        r.divergence_kind
            .map(|k| k.as_str().to_owned())
            .unwrap_or_default(),
        r.divergence_turn.map(|t| t.to_string()).unwrap_or_default(),
        r.divergences.to_string(),
        r.recorded_outcome
            .map(|o| o.name().to_owned())
            .unwrap_or_default(),
        r.outcome_change
            .map(|c| c.name().to_owned())
            .unwrap_or_default(),
        r.unused_interactions.to_string(),
        r.edit_strategy.clone(),
        r.task_attempts.to_string(),
        r.attempts_made().to_string(),
        r.passed_at_attempt()
            .map(|a| a.to_string())
            .unwrap_or_default(),
    ]);
    row
}

/// `runs.csv` for records already in report order.
pub fn runs_csv(records: &[&RunRecord]) -> Result<String, ::csv::Error> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(runs_columns())?;
    for r in records {
        w.write_record(runs_row(r))?;
    }
    finish(w)
}

/// One `summary.csv` row, in [`SUMMARY_COLUMNS`] order.
pub fn summary_row(s: &ModelSummary) -> Vec<String> {
    let interval = s.pass_rate_interval();
    let mut row = summary_counts(s);
    row.extend([
        fmt_ratio(s.pass_rate()),
        s.mean_turns()
            .map(|x| format!("{x:.2}"))
            .unwrap_or_default(),
        s.tool_calls.to_string(),
        s.edit_calls.to_string(),
        s.edit_calls_failed.to_string(),
        fmt_ratio(s.edit_failure_rate()),
        s.input_tokens.to_string(),
        s.output_tokens.to_string(),
        s.cache_read_tokens.to_string(),
        s.cache_write_tokens.to_string(),
        s.total_tokens.to_string(),
        fmt_cost(s.cost),
        s.mean_wall_seconds().map(fmt_secs).unwrap_or_default(),
        s.counted.to_string(),
        s.infra_errors.to_string(),
        s.count(Outcome::Skipped).to_string(),
        fmt_ratio(interval.map(|i| i.low)),
        fmt_ratio(interval.map(|i| i.high)),
        fmt_ratio(s.pass_at_1()),
        s.k().map(|k| k.to_string()).unwrap_or_default(),
        fmt_ratio(s.pass_at_k()),
        s.pass_at_k_tasks()
            .map(|(covered, _)| covered.to_string())
            .unwrap_or_default(),
        s.retries.to_string(),
        s.attempts.to_string(),
        s.drifted.to_string(),
        s.outcomes_changed.to_string(),
        fmt_ratio(s.pass_hat_k()),
        fmt_ratio(s.pass_rate_se()),
        s.strategy.clone(),
    ]);
    row
}

/// A `summary.csv` row for `s` under `tag` (empty: the arm over every run), with the pass rate
/// at attempt 1 and its interval.
fn tagged_summary_row(s: &ModelSummary, tag: &str) -> Vec<String> {
    let first = s.first_attempt_interval();
    let mut row = summary_row(s);
    row.extend([
        tag.to_owned(),
        s.task_attempts.to_string(),
        fmt_ratio(s.first_attempt_pass_rate()),
        fmt_ratio(first.map(|i| i.low)),
        fmt_ratio(first.map(|i| i.high)),
    ]);
    row
}

/// `summary.csv` for records already in report order.
pub fn summary_csv(records: &[&RunRecord]) -> Result<String, ::csv::Error> {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(SUMMARY_COLUMNS)?;
    for s in summarise(records) {
        w.write_record(tagged_summary_row(&s, ""))?;
    }
    for (tag, summaries) in summarise_by_tag(records) {
        for s in summaries {
            w.write_record(tagged_summary_row(&s, &tag))?;
        }
    }
    finish(w)
}

/// `runs.csv` text without its [`TIMING_COLUMNS`]: what two reports of the same runs share (a
/// merged report and an unsharded one, a resumed report and a straight run), whatever the
/// machine's speed.
pub fn without_timings(runs_csv: &str) -> Result<String, ::csv::Error> {
    let mut reader = ::csv::Reader::from_reader(runs_csv.as_bytes());
    let header = reader.headers()?.clone();
    let keep: Vec<usize> = (0..header.len())
        .filter(|i| !TIMING_COLUMNS.contains(&&header[*i]))
        .collect();
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(keep.iter().map(|i| &header[*i]))?;
    for row in reader.records() {
        let row = row?;
        w.write_record(keep.iter().map(|i| &row[*i]))?;
    }
    finish(w)
}

/// The text of a CSV writer that wrote to memory.
pub(crate) fn finish(w: ::csv::Writer<Vec<u8>>) -> Result<String, ::csv::Error> {
    let bytes = w
        .into_inner()
        .map_err(|e| ::csv::Error::from(e.into_error()))?;
    Ok(String::from_utf8(bytes).expect("CSV of UTF-8 strings is UTF-8"))
}

/// The identity and outcome of one run, as `runs.csv` holds it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunKey {
    pub task_id: String,
    pub provider: String,
    pub model: String,
    pub epoch: u32,
    pub outcome: Outcome,
    /// The `error_kind` cell (`None` when empty, or in a report written before the column
    /// existed).
    pub error_kind: Option<ErrorKind>,
    /// The `unused_interactions` cell (0 when empty or absent).
    pub unused_interactions: u32,
    /// The `edit_strategy` cell (the default strategy when empty or absent).
    pub edit_strategy: String,
    /// The `divergence_kind` cell, the first divergence's kind (`None` when empty or absent).
    pub divergence_kind: Option<DivergenceKind>,
}

/// Reads the run keys of a previous report's `runs.csv` at `path`, in file order. Columns are
/// found by name, so reports with more or fewer trailing columns read the same.
///
/// [`error_runs`] keeps the keys whose outcome is [`Outcome::Error`] (`--rerun-errors` reads
/// the report folder's journal instead, which also knows the runs that never finished).
pub fn read_runs_csv(path: &Path) -> Result<Vec<RunKey>, ReportError> {
    let read_err = |source: ::csv::Error| ReportError::Read {
        path: path.to_path_buf(),
        source,
    };
    let malformed = |line: u64, message: String| ReportError::Malformed {
        path: path.to_path_buf(),
        line,
        message,
    };
    let mut reader = ::csv::Reader::from_path(path).map_err(read_err)?;
    let header = reader.headers().map_err(read_err)?.clone();
    let column = |name: &str| header.iter().position(|h| h == name);
    let required = |name: &str| {
        column(name).ok_or_else(|| malformed(1, format!("no `{name}` column in the header")))
    };
    let (task, provider, model, epoch, outcome) = (
        required("task")?,
        required("provider")?,
        required("model")?,
        required("epoch")?,
        required("outcome")?,
    );
    let error_kind = column("error_kind");
    let unused = column("unused_interactions");
    let strategy = column("edit_strategy");
    let divergence_kind = column("divergence_kind");
    let mut keys = Vec::new();
    for row in reader.records() {
        let row = row.map_err(read_err)?;
        let line = row.position().map_or(0, |p| p.line());
        let cell = |i: usize| row.get(i).unwrap_or_default();
        let epoch_cell = cell(epoch);
        let outcome_cell = cell(outcome);
        keys.push(RunKey {
            task_id: cell(task).to_owned(),
            provider: cell(provider).to_owned(),
            model: cell(model).to_owned(),
            epoch: epoch_cell
                .parse()
                .map_err(|_| malformed(line, format!("epoch `{epoch_cell}` is not a number")))?,
            outcome: Outcome::from_name(outcome_cell)
                .ok_or_else(|| malformed(line, format!("unknown outcome `{outcome_cell}`")))?,
            error_kind: error_kind
                .map(cell)
                .filter(|k| !k.is_empty())
                .map(ErrorKind::from_name),
            unused_interactions: unused.map(cell).and_then(|c| c.parse().ok()).unwrap_or(0),
            edit_strategy: strategy
                .map(cell)
                .filter(|c| !c.is_empty())
                .unwrap_or(crate::record::DEFAULT_EDIT_STRATEGY)
                .to_owned(),
            divergence_kind: divergence_kind
                .map(cell)
                .filter(|k| !k.is_empty())
                .and_then(DivergenceKind::from_name),
        });
    }
    Ok(keys)
}

/// The runs of the report in `report_dir` whose outcome was `error` (infrastructure and model
/// errors alike; filter on [`RunKey::error_kind`] with
/// [`ErrorKind::is_infrastructure`] to keep one of them), read from its `runs.csv`.
pub fn error_runs(report_dir: &Path) -> Result<Vec<RunKey>, ReportError> {
    let mut keys = read_runs_csv(&report_dir.join("runs.csv"))?;
    keys.retain(|k| k.outcome == Outcome::Error);
    Ok(keys)
}
