//! Reports: `runs.csv`, `summary.csv`, `summary.md`, `report.html`, `junit.xml`, transcripts,
//! trajectories and diffs under a report folder, the terminal summary, and comparisons of arms
//! and report folders ([`compare`]).
//!
//! Reports read run records only: the [`RunRecord`] of each run and, for everything per run, its
//! [`RunFile`] (the record plus messages, tool calls, system prompt and diff), never the agent or
//! the workspace. Nothing here feeds back into a run. Writing is plain synchronous file I/O. The
//! runner creates the folder (`reports/<timestamp>/`) and passes it in. Layout of a report folder:
//!
//! ```text
//! runs.csv                      one row per run (columns: COLUMNS.md)
//! summary.csv                   one row per provider and model
//! summary.md                    deterministic markdown summary (no timings, timestamps or paths)
//! report.html                   one self-contained page: summary, plots, runs, transcripts
//! junit.xml                     one test case per run (JUnit XML, as CI systems read it)
//! runs/<task>--<provider>--<model>--e<epoch>/
//!     run.json                  the run file: what every other file here is written from
//!     transcript.md             readable transcript: prompt, turns, tool calls and results, stop
//!     transcript.json           the messages and tool-call records as JSON
//!     trajectory.json           the run as an ATIF v1.4 trajectory (Harbor's format)
//!     diff.patch                unified diff of what the agent changed in its workspace
//!     run.html                  the run's own page, when report.html is too large to hold it
//! ```
//!
//! Writing the report folder holds the records and one run file at a time, never every run's
//! transcript: `report.html` is streamed to its file a part at a time.
//!
//! Every run has a folder with its `run.json` (a run that never started gets one holding its
//! record alone), so [`rewrite_report`] can write the whole folder again from the run folders,
//! and `harness compare` reads two folders back with [`read_run_files`]. [`read_runs_csv`] reads
//! the run keys of a previous report back. The runner adds `report.json` (the manifest) and
//! `journal.jsonl` (one line per finished run) beside these files; reports never read them.
//!
//! Depends on `conversation` and `scoring`; never on the runner.

pub mod cells;
pub mod csv;
pub mod event_log;
pub mod html;
pub mod junit;
pub mod markdown;
pub mod paired;
pub mod snapshot;
pub mod terminal;
pub mod trajectory;
pub mod transcript;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

pub use csv::{RunKey, error_runs, read_runs_csv};
pub use terminal::render_terminal_summary;

use crate::record::{Outcome, RUN_FILE_NAME, RunFile, RunRecord};
use crate::stats::{
    Interval, Z_95, clustered_standard_error, mean_pass_at_k, mean_pass_hat_k, wilson_interval,
};

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
    #[error("failed to read {path}: {source}")]
    ReadFile {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("failed to read {path}: {source}\nhint: is it a run file written by `harness run`?")]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
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
    /// `report.html`, unless turned off.
    pub report_html: Option<PathBuf>,
    /// `junit.xml`, unless turned off.
    pub junit_xml: Option<PathBuf>,
    /// The run folders written by this call for the run files passed in (the folders it had to
    /// complete for runs that had none are not listed).
    pub run_dirs: Vec<PathBuf>,
}

/// What a report folder holds besides the CSV and markdown files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportOptions {
    /// Write `report.html`.
    pub html: bool,
    /// Write `junit.xml`.
    pub junit: bool,
    /// Append `summary.md` to this file (the CLI passes `$GITHUB_STEP_SUMMARY`).
    pub step_summary: Option<PathBuf>,
    /// Past these, `report.html` links each run's own page instead of holding every panel.
    pub inline: html::InlineLimit,
    /// One line said first in `summary.md` (as a quote) and `report.html`: the report is
    /// partial (interrupted, or merged with shards missing).
    pub notice: Option<String>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            html: true,
            junit: true,
            step_summary: None,
            inline: html::InlineLimit::default(),
            notice: None,
        }
    }
}

/// Writes `runs.csv`, `summary.csv`, `summary.md`, `report.html` and `junit.xml` for `records`,
/// and a run folder for each of `runs` (the runner instead writes run folders as runs finish,
/// with [`write_run_artifacts`], and passes no run files here), with the default
/// [`ReportOptions`].
pub fn write_report(
    dir: &Path,
    records: &[RunRecord],
    runs: &[RunFile],
) -> Result<ReportPaths, ReportError> {
    write_report_with(dir, records, runs, &ReportOptions::default())
}

/// [`write_report`] with `options`.
///
/// The records passed in are the truth: a run folder whose `run.json` holds an older record (the
/// runner adds notes after writing it) is written again, and a run without a folder (skipped, or
/// ended before the agent started) gets one holding its record alone.
pub fn write_report_with(
    dir: &Path,
    records: &[RunRecord],
    runs: &[RunFile],
    options: &ReportOptions,
) -> Result<ReportPaths, ReportError> {
    create_dir(dir)?;
    let mut run_dirs = Vec::new();
    for file in runs {
        run_dirs.push(write_run_artifacts(dir, file)?);
    }
    let sorted = sorted(records);
    let runs_csv = dir.join("runs.csv");
    write_file(
        &runs_csv,
        csv::runs_csv(&sorted).map_err(|source| ReportError::Csv {
            path: runs_csv.clone(),
            source,
        })?,
    )?;
    let summary_csv = dir.join("summary.csv");
    write_file(
        &summary_csv,
        csv::summary_csv(&sorted).map_err(|source| ReportError::Csv {
            path: summary_csv.clone(),
            source,
        })?,
    )?;
    let summary_md = dir.join("summary.md");
    let markdown = match &options.notice {
        Some(notice) => format!("> **{notice}**\n\n{}", markdown::summary_md(&sorted)),
        None => markdown::summary_md(&sorted),
    };
    write_file(&summary_md, markdown.clone())?;
    // Every run file, one at a time: completed or refreshed, its record as stored and its edit
    // strategy kept, the rest (messages, tool calls, diff) dropped at once. A large report links
    // each run's own page instead of holding every panel, and those pages are written here.
    let name = folder_name(dir);
    let linked_by_count = options.html && sorted.len() > options.inline.runs;
    let mut stored: Vec<RunRecord> = Vec::with_capacity(sorted.len());
    let mut strategies: Vec<Option<String>> = Vec::with_capacity(sorted.len());
    let mut run_file_bytes = 0u64;
    for record in &sorted {
        let (file, bytes) = complete_run_file(dir, record)?;
        run_file_bytes += bytes;
        if linked_by_count {
            write_run_page(dir, &file, &name)?;
        }
        strategies.push(file.edit_strategy);
        stored.push(file.record);
    }
    let rows: Vec<html::RunRow<'_>> = stored
        .iter()
        .zip(&strategies)
        .map(|(record, strategy)| html::RunRow {
            record,
            strategy: strategy.as_deref(),
        })
        .collect();
    let report_html = if options.html {
        let linked = linked_by_count || run_file_bytes > options.inline.bytes;
        if linked && !linked_by_count {
            for row in &rows {
                let file = read_run_file(&dir.join(row.record.run_dir()).join(RUN_FILE_NAME))?;
                write_run_page(dir, &file, &name)?;
            }
        }
        let path = dir.join(html::REPORT_HTML);
        let io = |source| ReportError::Io {
            path: path.clone(),
            source,
        };
        let mut out = io::BufWriter::new(std::fs::File::create(&path).map_err(io)?);
        let mut load = |i: usize| -> Result<Cow<'_, RunFile>, ReportError> {
            let run = dir.join(rows[i].record.run_dir()).join(RUN_FILE_NAME);
            read_run_file(&run).map(Cow::Owned)
        };
        let panels = if linked {
            html::Panels::Linked
        } else {
            html::Panels::Inline(&mut load)
        };
        html::write_report_html(
            &mut out,
            &path,
            &rows,
            &name,
            panels,
            options.notice.as_deref(),
        )?;
        io::Write::flush(&mut out).map_err(io)?;
        Some(path)
    } else {
        None
    };
    let junit_xml = if options.junit {
        let path = dir.join(junit::JUNIT_XML);
        let records: Vec<&RunRecord> = stored.iter().collect();
        write_file(&path, junit::junit_xml(&records, &name))?;
        Some(path)
    } else {
        None
    };
    if let Some(path) = &options.step_summary {
        append_file(path, &markdown)?;
    }
    Ok(ReportPaths {
        dir: dir.to_path_buf(),
        runs_csv,
        summary_csv,
        summary_md,
        report_html,
        junit_xml,
        run_dirs,
    })
}

/// Writes the report folder `dir` again from its run folders alone (every `runs/*/run.json`).
pub fn rewrite_report(dir: &Path, options: &ReportOptions) -> Result<ReportPaths, ReportError> {
    let records = read_run_records(dir)?;
    write_report_with(dir, &records, &[], options)
}

/// The run file of `record`, and the size of its `run.json`: read from its folder (and written
/// again when its record is not the one passed in), or written from the record alone when the run
/// has no folder.
fn complete_run_file(dir: &Path, record: &RunRecord) -> Result<(RunFile, u64), ReportError> {
    let path = dir.join(record.run_dir()).join(RUN_FILE_NAME);
    // The record as its run file holds it (times to the millisecond), so that a folder written
    // again from its run files is the same as the one written now.
    let record = as_stored(record).map_err(|source| ReportError::Json {
        path: path.clone(),
        source,
    })?;
    match read_run_file_sized(&path) {
        Ok((mut file, bytes)) => {
            if file.record != record {
                file.record = record;
                write_run_artifacts(dir, &file)?;
            }
            Ok((file, bytes))
        }
        Err(ReportError::ReadFile { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
            let file = RunFile::record_only(record);
            write_run_artifacts(dir, &file)?;
            Ok((file, 0))
        }
        Err(e) => Err(e),
    }
}

/// Writes `runs/<run>/run.html`, the run's own page.
fn write_run_page(dir: &Path, file: &RunFile, name: &str) -> Result<(), ReportError> {
    let path = dir.join(file.record.run_dir()).join(html::RUN_HTML);
    write_file(&path, html::run_page(file, name))
}

/// `record` after a round trip through its JSON form.
fn as_stored(record: &RunRecord) -> Result<RunRecord, serde_json::Error> {
    serde_json::from_value(serde_json::to_value(record)?)
}

/// Reads one `run.json`.
pub fn read_run_file(path: &Path) -> Result<RunFile, ReportError> {
    read_run_file_sized(path).map(|(file, _)| file)
}

/// Reads one `run.json`, and says how many bytes it has.
fn read_run_file_sized(path: &Path) -> Result<(RunFile, u64), ReportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ReportError::ReadFile {
        path: path.to_path_buf(),
        source,
    })?;
    let file = serde_json::from_str(&text).map_err(|source| ReportError::Parse {
        path: path.to_path_buf(),
        source,
    })?;
    Ok((file, text.len() as u64))
}

/// The record of every run file of the report folder `dir` (`runs/*/run.json`), in report
/// order, without the rest of each file (messages, tool calls, diff): what a whole report is
/// written from, in memory that grows with the records alone.
pub fn read_run_records(dir: &Path) -> Result<Vec<RunRecord>, ReportError> {
    /// A run file's record; serde skips the other fields.
    #[derive(serde::Deserialize)]
    struct RecordOnly {
        record: RunRecord,
    }
    let mut records = Vec::new();
    for path in run_file_paths(dir)? {
        let text = std::fs::read_to_string(&path).map_err(|source| ReportError::ReadFile {
            path: path.clone(),
            source,
        })?;
        let only: RecordOnly =
            serde_json::from_str(&text).map_err(|source| ReportError::Parse { path, source })?;
        records.push(only.record);
    }
    records.sort_by(|a, b| run_order(a).cmp(&run_order(b)));
    Ok(records)
}

/// The `run.json` of every run folder of the report folder `dir`.
fn run_file_paths(dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
    let runs = dir.join("runs");
    let entries = std::fs::read_dir(&runs).map_err(|source| ReportError::ReadFile {
        path: runs.clone(),
        source,
    })?;
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| ReportError::ReadFile {
            path: runs.clone(),
            source,
        })?;
        let path = entry.path().join(RUN_FILE_NAME);
        if path.is_file() {
            paths.push(path);
        }
    }
    Ok(paths)
}

/// Every run file of the report folder `dir` (`runs/*/run.json`), in report order.
pub fn read_run_files(dir: &Path) -> Result<Vec<RunFile>, ReportError> {
    let mut files = run_file_paths(dir)?
        .iter()
        .map(|path| read_run_file(path))
        .collect::<Result<Vec<_>, _>>()?;
    files.sort_by(|a, b| run_order(&a.record).cmp(&run_order(&b.record)));
    Ok(files)
}

/// Writes one run's folder under `dir`, at the paths its record names: `run.json`,
/// `transcript.md`, `transcript.json`, `diff.patch`, and `trajectory.json` when the run has
/// messages; returns the folder.
pub fn write_run_artifacts(dir: &Path, file: &RunFile) -> Result<PathBuf, ReportError> {
    let record = &file.record;
    let run_dir = dir.join(record.run_dir());
    create_dir(&run_dir)?;
    let json =
        |path: PathBuf, value: Result<String, serde_json::Error>| -> Result<(), ReportError> {
            let text = value.map_err(|source| ReportError::Json {
                path: path.clone(),
                source,
            })?;
            write_file(&path, text)
        };
    json(run_dir.join(RUN_FILE_NAME), serde_json::to_string(file))?;
    write_file(
        &dir.join(&record.transcript_path),
        transcript::transcript_md(file),
    )?;
    json(
        run_dir.join("transcript.json"),
        transcript::transcript_json(file),
    )?;
    if !file.messages.is_empty() {
        json(
            run_dir.join(trajectory::TRAJECTORY_JSON),
            serde_json::to_string_pretty(&trajectory::trajectory(file)),
        )?;
    }
    write_file(&dir.join(&record.diff_path), file.diff.clone())?;
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

/// The last component of the report folder (its timestamp), for titles.
fn folder_name(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn create_dir(dir: &Path) -> Result<(), ReportError> {
    std::fs::create_dir_all(dir).map_err(|source| ReportError::Io {
        path: dir.to_path_buf(),
        source,
    })
}

/// Appends `text` and a newline to the file at `path` (created if missing): how summaries go to
/// `$GITHUB_STEP_SUMMARY`.
pub fn append_file(path: &Path, text: &str) -> Result<(), ReportError> {
    use std::io::Write;
    let io = |source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io)?;
    file.write_all(text.as_bytes()).map_err(io)?;
    file.write_all(b"\n").map_err(io)
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

/// Records in report order: task, provider, model, edit strategy (the default first), epoch.
pub fn sorted(records: &[RunRecord]) -> Vec<&RunRecord> {
    let mut out: Vec<&RunRecord> = records.iter().collect();
    out.sort_by(|a, b| run_order(a).cmp(&run_order(b)));
    out
}

/// The sort key of report order.
fn run_order(r: &RunRecord) -> (&str, &str, &str, bool, &str, u32) {
    (
        &r.task_id,
        &r.provider,
        &r.model,
        r.edit_strategy != crate::record::DEFAULT_EDIT_STRATEGY,
        &r.edit_strategy,
        r.epoch,
    )
}

/// Aggregates of the runs of one arm: provider, model and edit strategy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelSummary {
    pub provider: String,
    pub model: String,
    /// The edit strategy of the arm.
    pub strategy: String,
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
    /// The model, with the edit strategy in brackets when it is not the default
    /// (`claude-sonnet-4-5 [exact]`): the arm as the summaries show it.
    pub fn model_label(&self) -> String {
        if self.strategy.is_empty() || self.strategy == crate::record::DEFAULT_EDIT_STRATEGY {
            self.model.clone()
        } else {
            format!("{} [{}]", self.model, self.strategy)
        }
    }

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

    /// pass^k for k = the number of epochs (every one of k runs of a task passes), averaged over
    /// the tasks with at least k runs that count; `None` with a single epoch.
    pub fn pass_hat_k(&self) -> Option<f64> {
        let k = self.k()?;
        let tasks: Vec<(u64, u64)> = self.tasks.values().copied().collect();
        mean_pass_hat_k(&tasks, u64::from(k))
    }

    /// The standard error of [`ModelSummary::pass_rate`], clustered by task (the epochs of a
    /// task are not independent); with one run per task it is the plain one.
    pub fn pass_rate_se(&self) -> Option<f64> {
        let tasks: Vec<(u64, u64)> = self.tasks.values().copied().collect();
        clustered_standard_error(&tasks)
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
        if r.outcome_change == Some(crate::record::OutcomeChange::Changed) {
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
    let mut by: BTreeMap<(String, String, bool, String), ModelSummary> = BTreeMap::new();
    for r in records {
        // The default strategy's arm first, then the others by name.
        by.entry((
            r.provider.clone(),
            r.model.clone(),
            r.edit_strategy != crate::record::DEFAULT_EDIT_STRATEGY,
            r.edit_strategy.clone(),
        ))
        .or_insert_with(|| ModelSummary {
            provider: r.provider.clone(),
            model: r.model.clone(),
            strategy: r.edit_strategy.clone(),
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
        s.model_label(),
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
    k_label(s, s.pass_at_k())
}

/// The same as [`pass_at_k_label`] for pass^k.
pub(crate) fn pass_hat_k_label(s: &ModelSummary) -> String {
    k_label(s, s.pass_hat_k())
}

/// `66.7% (2/3)`: the pass rate with its n: the passed runs among the runs that count, over
/// the runs that count (a drifted replay that passed is in neither); [`UNKNOWN`] without one.
pub(crate) fn pass_rate_label(s: &ModelSummary) -> String {
    match s.pass_rate() {
        Some(_) => format!(
            "{} ({}/{})",
            percent(s.pass_rate()),
            s.counted_passed(),
            s.counted
        ),
        None => UNKNOWN.to_owned(),
    }
}

/// `33.3% (4/12)`: the edit-failure rate with its n (edit calls); [`UNKNOWN`] without calls.
pub(crate) fn edit_failure_label(s: &ModelSummary) -> String {
    match s.edit_failure_rate() {
        Some(_) => format!(
            "{} ({}/{})",
            percent(s.edit_failure_rate()),
            s.edit_calls_failed,
            s.edit_calls
        ),
        None => UNKNOWN.to_owned(),
    }
}

/// Whether any summary has more than one epoch (then the tables show the clustered SE).
pub(crate) fn any_epochs(summaries: &[ModelSummary]) -> bool {
    summaries.iter().any(|s| s.k().is_some())
}

fn k_label(s: &ModelSummary, value: Option<f64>) -> String {
    let (Some(k), Some((covered, tasks))) = (s.k(), s.pass_at_k_tasks()) else {
        return UNKNOWN.to_owned();
    };
    let value = percent(value);
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
pub(crate) mod fixtures;
#[cfg(test)]
mod tests;
