//! Reports: `runs.csv`, `summary.csv`, `summary.md`, transcripts and diffs under a report folder,
//! and the terminal summary.
//!
//! Reports read [`RunRecord`]s (and, for transcripts, the agent's messages); nothing here feeds
//! back into a run. Writing is plain synchronous file I/O. The runner creates the folder
//! (`reports/<timestamp>/`) and passes it in. Layout of a report folder:
//!
//! ```text
//! runs.csv                      one row per run (columns: COLUMNS.md)
//! summary.csv                   one row per provider and model
//! summary.md                    deterministic markdown summary (no timings, timestamps or paths)
//! runs/<task>--<provider>--<model>--e<epoch>/
//!     transcript.md             readable transcript: prompt, turns, tool calls and results, stop
//!     transcript.json           the messages and tool-call records as JSON
//!     diff.patch                unified diff of what the agent changed in its workspace
//! ```
//!
//! [`read_runs_csv`] reads the run keys of a previous report back (for `--rerun-errors`).
//!
//! Every file is written through a [`Redactor`]: the values of the keys in use never reach a
//! report.
//!
//! Depends on `agent`, `conversation`, `scoring`, `workspace` and `sandbox` (the redactor); never
//! on the runner.

pub mod csv;
pub mod markdown;
pub mod snapshot;
pub mod terminal;
pub mod transcript;

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

pub use csv::{RunKey, error_runs, read_runs_csv};
pub use terminal::render_terminal_summary;

use crate::agent::AgentRun;
use crate::sandbox::secrets::Redactor;
use crate::scoring::stats::{Interval, Z_95, mean_pass_at_k, wilson_interval};
use crate::scoring::{Outcome, RunRecord};
use crate::workspace::WorkspaceDiff;

/// The column documentation of `runs.csv` and `summary.csv`.
pub const COLUMNS_DOC: &str = include_str!("COLUMNS.md");

/// A failure to write a report file.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("failed to write {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("failed to write {path}: {source}")]
    Csv {
        path: PathBuf,
        #[source]
        source: ::csv::Error,
    },
    #[error("failed to serialise {path}: {source}")]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("failed to read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: ::csv::Error,
    },
    #[error("failed to read {path}: line {line}: {message}")]
    Malformed {
        path: PathBuf,
        line: u64,
        message: String,
    },
}

/// Where a report went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportPaths {
    pub dir: PathBuf,
    pub runs_csv: PathBuf,
    pub summary_csv: PathBuf,
    pub summary_md: PathBuf,
    /// The run folders written by this call (one per [`RunArtifacts`]).
    pub run_dirs: Vec<PathBuf>,
}

/// What a run's folder is written from.
#[derive(Debug, Clone, Copy)]
pub struct RunArtifacts<'a> {
    pub record: &'a RunRecord,
    pub run: &'a AgentRun,
    pub diff: &'a WorkspaceDiff,
    /// The system prompt the run used (shown at the top of the transcript).
    pub system_prompt: Option<&'a str>,
}

/// Writes `runs.csv`, `summary.csv` and `summary.md` for `records`, and a run folder for each of
/// `artifacts` (the runner may instead write run folders as runs finish, with
/// [`write_run_artifacts`], and pass no artifacts here).
pub fn write_report(
    dir: &Path,
    records: &[RunRecord],
    artifacts: &[RunArtifacts<'_>],
) -> Result<ReportPaths, ReportError> {
    write_report_redacted(dir, records, artifacts, &Redactor::default())
}

/// [`write_report`] with every secret `redactor` knows replaced in every file written.
pub fn write_report_redacted(
    dir: &Path,
    records: &[RunRecord],
    artifacts: &[RunArtifacts<'_>],
    redactor: &Redactor,
) -> Result<ReportPaths, ReportError> {
    create_dir(dir)?;
    let sorted = sorted(records);
    let runs_csv = dir.join("runs.csv");
    let redacted = |text: String| redactor.redact(&text).into_owned();
    write_file(
        &runs_csv,
        redacted(csv::runs_csv(&sorted).map_err(|source| ReportError::Csv {
            path: runs_csv.clone(),
            source,
        })?),
    )?;
    let summary_csv = dir.join("summary.csv");
    write_file(
        &summary_csv,
        redacted(
            csv::summary_csv(&sorted).map_err(|source| ReportError::Csv {
                path: summary_csv.clone(),
                source,
            })?,
        ),
    )?;
    let summary_md = dir.join("summary.md");
    write_file(&summary_md, redacted(markdown::summary_md(&sorted)))?;
    let mut run_dirs = Vec::new();
    for artifact in artifacts {
        run_dirs.push(write_run_artifacts(dir, artifact, redactor)?);
    }
    Ok(ReportPaths {
        dir: dir.to_path_buf(),
        runs_csv,
        summary_csv,
        summary_md,
        run_dirs,
    })
}

/// Writes one run's folder (`transcript.md`, `transcript.json`, `diff.patch`) under `dir`, at the
/// paths its record names, with every secret `redactor` knows replaced; returns the folder.
pub fn write_run_artifacts(
    dir: &Path,
    artifacts: &RunArtifacts<'_>,
    redactor: &Redactor,
) -> Result<PathBuf, ReportError> {
    let record = artifacts.record;
    let run_dir = dir.join(record.run_dir());
    create_dir(&run_dir)?;
    let redacted = |text: String| redactor.redact(&text).into_owned();
    write_file(
        &dir.join(&record.transcript_path),
        redacted(transcript::transcript_md(artifacts)),
    )?;
    let json_path = run_dir.join("transcript.json");
    let json = transcript::transcript_json(artifacts).map_err(|source| ReportError::Json {
        path: json_path.clone(),
        source,
    })?;
    write_file(&json_path, redacted(json))?;
    write_file(
        &dir.join(&record.diff_path),
        redacted(artifacts.diff.unified.clone()),
    )?;
    Ok(run_dir)
}

/// Writes one more file into a run's folder (`divergence.md`, ...); returns its path.
pub fn write_run_file(
    dir: &Path,
    record: &RunRecord,
    name: &str,
    text: String,
) -> Result<PathBuf, ReportError> {
    let path = dir.join(record.run_dir()).join(name);
    write_file(&path, text)?;
    Ok(path)
}

fn create_dir(dir: &Path) -> Result<(), ReportError> {
    std::fs::create_dir_all(dir).map_err(|source| ReportError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

fn write_file(path: &Path, text: String) -> Result<(), ReportError> {
    if let Some(parent) = path.parent() {
        create_dir(parent)?;
    }
    std::fs::write(path, text).map_err(|source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Records in report order: task, provider, model, epoch.
pub fn sorted(records: &[RunRecord]) -> Vec<&RunRecord> {
    let mut out: Vec<&RunRecord> = records.iter().collect();
    out.sort_by(|a, b| {
        (&a.task_id, &a.provider, &a.model, a.epoch).cmp(&(
            &b.task_id,
            &b.provider,
            &b.model,
            b.epoch,
        ))
    });
    out
}

/// Aggregates of the runs of one provider and model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelSummary {
    pub provider: String,
    pub model: String,
    /// Every run, skipped ones and infrastructure errors included.
    pub runs: u32,
    /// Runs per outcome.
    pub outcomes: BTreeMap<Outcome, u32>,
    /// `error` runs that failed for the infrastructure, not the model
    /// ([`RunRecord::is_infrastructure_error`]); also counted in `outcomes[Error]`.
    pub infra_errors: u32,
    /// Runs that count in pass rates ([`RunRecord::counts_for_pass_rate`]).
    pub counted: u32,
    /// Replays that reached a verdict although their conversation drifted from the cassette
    /// ([`RunRecord::is_drifted`]; `--on-divergence continue`), left out of pass rates.
    pub drifted: u32,
    /// Replays whose outcome is not the one their cassette recorded.
    pub outcomes_changed: u32,
    /// Per task: (runs that count, of which passed).
    pub tasks: BTreeMap<String, (u64, u64)>,
    /// The highest epoch seen: the `k` of pass@k.
    pub epochs: u32,
    /// Requests the retry layer sent again, all runs.
    pub retries: u64,
    /// Requests sent, retries included, all runs.
    pub attempts: u64,
    pub turns: u64,
    pub tool_calls: u64,
    pub edit_calls: u64,
    pub edit_calls_exact: u64,
    pub edit_calls_fuzzy: u64,
    pub edit_calls_failed: u64,
    pub edits_exact: u64,
    pub edits_fuzzy: u64,
    pub edit_failures: BTreeMap<String, u64>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub total_tokens: u64,
    /// Sum over the runs that have a cost; `None` when none has (unknown price).
    pub cost: Option<f64>,
    pub wall_seconds: f64,
}

impl ModelSummary {
    pub fn count(&self, outcome: Outcome) -> u32 {
        self.outcomes.get(&outcome).copied().unwrap_or(0)
    }

    /// Passed runs among the runs that count.
    pub fn counted_passed(&self) -> u64 {
        self.tasks.values().map(|(_, passed)| passed).sum()
    }

    /// Passed runs over the runs that count (infrastructure errors, skipped, diverged and
    /// drifted runs left out); `None` when no run counts.
    pub fn pass_rate(&self) -> Option<f64> {
        (self.counted > 0).then(|| self.counted_passed() as f64 / f64::from(self.counted))
    }

    /// The 95% Wilson score interval of [`ModelSummary::pass_rate`].
    pub fn pass_rate_interval(&self) -> Option<Interval> {
        wilson_interval(self.counted_passed(), u64::from(self.counted), Z_95)
    }

    /// pass@1 averaged over tasks (each task weighs the same, whatever its run count).
    pub fn pass_at_1(&self) -> Option<f64> {
        self.pass_at(1)
    }

    /// The `k` of [`ModelSummary::pass_at_k`]: the number of epochs, when more than one.
    pub fn k(&self) -> Option<u32> {
        (self.epochs > 1).then_some(self.epochs)
    }

    /// pass@k for k = the number of epochs, averaged over the tasks with at least k runs that
    /// count; `None` with a single epoch or when no task has k such runs.
    pub fn pass_at_k(&self) -> Option<f64> {
        self.k().and_then(|k| self.pass_at(k))
    }

    /// With more than one epoch: (tasks pass@k is averaged over, tasks with a run that counts).
    /// The first is smaller when infrastructure errors or skipped runs leave a task with fewer
    /// than k runs that count.
    pub fn pass_at_k_tasks(&self) -> Option<(usize, usize)> {
        let k = u64::from(self.k()?);
        let covered = self.tasks.values().filter(|(n, _)| *n >= k).count();
        Some((covered, self.tasks.len()))
    }

    /// pass@`k` by the unbiased estimator, averaged over the tasks with at least `k` runs that
    /// count.
    pub fn pass_at(&self, k: u32) -> Option<f64> {
        let tasks: Vec<(u64, u64)> = self.tasks.values().copied().collect();
        mean_pass_at_k(&tasks, u64::from(k))
    }

    /// Runs that were started: every run but the skipped ones.
    pub fn started(&self) -> u32 {
        self.runs - self.count(Outcome::Skipped)
    }

    /// Mean model replies per started run.
    pub fn mean_turns(&self) -> Option<f64> {
        (self.started() > 0).then(|| self.turns as f64 / f64::from(self.started()))
    }

    /// Failed edit calls over edit calls; `None` without edit calls.
    pub fn edit_failure_rate(&self) -> Option<f64> {
        (self.edit_calls > 0).then(|| self.edit_calls_failed as f64 / self.edit_calls as f64)
    }

    /// Mean wall time per started run.
    pub fn mean_wall_seconds(&self) -> Option<f64> {
        (self.started() > 0).then(|| self.wall_seconds / f64::from(self.started()))
    }

    fn add(&mut self, r: &RunRecord) {
        self.runs += 1;
        *self.outcomes.entry(r.outcome).or_default() += 1;
        if r.is_infrastructure_error() {
            self.infra_errors += 1;
        }
        if r.is_drifted() {
            self.drifted += 1;
        }
        if r.outcome_change == Some(crate::scoring::OutcomeChange::Changed) {
            self.outcomes_changed += 1;
        }
        if r.counts_for_pass_rate() {
            self.counted += 1;
            let task = self.tasks.entry(r.task_id.clone()).or_default();
            task.0 += 1;
            task.1 += u64::from(r.outcome == Outcome::Passed);
        }
        self.epochs = self.epochs.max(r.epoch);
        self.retries += u64::from(r.retries);
        self.attempts += u64::from(r.attempts);
        self.turns += u64::from(r.turns);
        self.tool_calls += u64::from(r.tool_call_count());
        self.edit_calls += u64::from(r.edits.calls);
        self.edit_calls_exact += u64::from(r.edits.calls_exact);
        self.edit_calls_fuzzy += u64::from(r.edits.calls_fuzzy);
        self.edit_calls_failed += u64::from(r.edits.calls_failed);
        self.edits_exact += u64::from(r.edits.edits_exact);
        self.edits_fuzzy += u64::from(r.edits.edits_fuzzy);
        for (kind, n) in &r.edits.failures {
            *self.edit_failures.entry(kind.clone()).or_default() += u64::from(*n);
        }
        self.input_tokens += r.tokens.input;
        self.output_tokens += r.tokens.output;
        self.cache_read_tokens += r.tokens.cache_read;
        self.cache_write_tokens += r.tokens.cache_write;
        self.total_tokens += r.tokens.total;
        if let Some(cost) = r.cost {
            self.cost = Some(self.cost.unwrap_or(0.0) + cost);
        }
        self.wall_seconds += r.wall_time.as_secs_f64();
    }
}

/// One summary per provider and model, sorted by provider then model.
pub fn summarise(records: &[&RunRecord]) -> Vec<ModelSummary> {
    let mut by: BTreeMap<(String, String), ModelSummary> = BTreeMap::new();
    for r in records {
        by.entry((r.provider.clone(), r.model.clone()))
            .or_insert_with(|| ModelSummary {
                provider: r.provider.clone(),
                model: r.model.clone(),
                ..ModelSummary::default()
            })
            .add(r);
    }
    by.into_values().collect()
}

/// The cost over every provider and model.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CostTotal {
    /// Summed over the pairs whose cost is known; `None` when none is.
    pub known: Option<f64>,
    /// Provider/model pairs without a price (their cost is not in `known`).
    pub unpriced: usize,
}

impl CostTotal {
    /// Totals the costs of `summaries`.
    pub fn of(summaries: &[ModelSummary]) -> CostTotal {
        let mut total = CostTotal::default();
        for s in summaries {
            match s.cost {
                Some(c) => total.known = Some(total.known.unwrap_or(0.0) + c),
                None => total.unpriced += 1,
            }
        }
        total
    }

    /// `$0.123456`, `$0.123456 (+ 1 pair without a price)`, or `-` when no cost is known;
    /// `decimals` digits after the point.
    pub fn display(&self, decimals: usize) -> String {
        let Some(known) = self.known else {
            return UNKNOWN.to_owned();
        };
        let mut out = format!("${known:.decimals$}");
        if self.unpriced > 0 {
            out.push_str(&format!(
                " (+ {} pair{} without a price)",
                self.unpriced,
                if self.unpriced == 1 { "" } else { "s" }
            ));
        }
        out
    }
}

/// What the summaries show for a value that is not known or not defined (a cost without a
/// price, a rate without runs).
pub const UNKNOWN: &str = "-";

/// The first cells of a model's row in `summary.csv` and `summary.md`: provider, model, runs,
/// then the passed, failed, diverged, error and limit-reached counts (every outcome, drifted
/// replays included under their verdict).
pub(crate) fn summary_counts(s: &ModelSummary) -> Vec<String> {
    vec![
        s.provider.clone(),
        s.model.clone(),
        s.runs.to_string(),
        s.count(Outcome::Passed).to_string(),
        s.count(Outcome::Failed).to_string(),
        s.count(Outcome::Diverged).to_string(),
        s.count(Outcome::Error).to_string(),
        s.count(Outcome::LimitReached).to_string(),
    ]
}

/// `100.0% (k=2)`, `100.0% (k=2, 1/2 tasks)` when some task has fewer than k runs that count,
/// [`UNKNOWN`] with a single epoch.
pub(crate) fn pass_at_k_label(s: &ModelSummary) -> String {
    let (Some(k), Some((covered, tasks))) = (s.k(), s.pass_at_k_tasks()) else {
        return UNKNOWN.to_owned();
    };
    let value = percent(s.pass_at_k());
    if covered < tasks {
        format!("{value} (k={k}, {covered}/{tasks} tasks)")
    } else {
        format!("{value} (k={k})")
    }
}

/// `66.7%`; [`UNKNOWN`] for `None`.
pub(crate) fn percent(x: Option<f64>) -> String {
    x.map(|x| format!("{:.1}%", x * 100.0))
        .unwrap_or_else(|| UNKNOWN.to_owned())
}

/// `[20.8%, 93.9%]`; [`UNKNOWN`] for `None`.
pub(crate) fn percent_interval(i: Option<Interval>) -> String {
    i.map(|i| format!("[{:.1}%, {:.1}%]", i.low * 100.0, i.high * 100.0))
        .unwrap_or_else(|| UNKNOWN.to_owned())
}

/// `$0.195300`; [`UNKNOWN`] for `None` (never `$0` for an unknown price).
pub(crate) fn dollars(x: Option<f64>, decimals: usize) -> String {
    x.map(|x| format!("${x:.decimals$}"))
        .unwrap_or_else(|| UNKNOWN.to_owned())
}

/// A rate or ratio with 4 decimals; empty for `None`.
pub(crate) fn fmt_ratio(x: Option<f64>) -> String {
    x.map(|x| format!("{x:.4}")).unwrap_or_default()
}

/// Dollars with 6 decimals; empty for `None`.
pub(crate) fn fmt_cost(x: Option<f64>) -> String {
    x.map(|x| format!("{x:.6}")).unwrap_or_default()
}

/// Seconds with 3 decimals.
pub(crate) fn fmt_secs(secs: f64) -> String {
    format!("{secs:.3}")
}

#[cfg(test)]
mod tests;
