//! A suite from plan to report, as one engine: [`prepare`] plans the runs of the selected tasks,
//! fingerprints the suite, reads what a continued folder already holds and checks everything
//! that can be checked before a run starts; [`Prepared::execute`] writes the manifest, runs
//! what is left (journalling each run as it ends), and writes every report file, the edit
//! corpus and the final manifest. It returns the suite's outcome as data ([`SuiteOutcome`]);
//! the CLI prints it and maps it to an exit status.
//!
//! A fresh report, `--resume` and `--rerun-errors` go through the same two calls; `harness
//! merge` ends with the same [`finish`]. Prints nothing.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::events::{Fanout, Reporter};
use crate::record::RunRecord;
use crate::reports::event_log::{EVENTS_JSONL, EventLog};
use crate::reports::snapshot::SnapshotVerdict;
use crate::reports::{self, ReportOptions, ReportPaths};
use crate::tasks::Task;

use super::fingerprint;
use super::journal::{self, Journal, JournalContents, JournalEntry};
use super::manifest::{Counts, Fingerprint, MANIFEST_FORMAT, Manifest, SuiteOptions};
use super::options::RunOptions;
use super::partition::Partition;
use super::plan::{PlannedRun, plan_runs};
use super::preflight;
use super::problem::Problem;
use super::resume::{Continuation, Continuing, SuitePlan, check_same_suite, final_records};
use super::run::missing_cassette_record;
use super::schedule::execute_until;

/// Everything a suite needs besides its options: the tasks, how the manifest keeps the options,
/// the shard, the folder being continued, and what to do at the end.
pub struct SuiteRequest {
    /// The selected tasks, in suite order.
    pub tasks: Vec<Arc<Task>>,
    pub options: RunOptions,
    /// The options as the manifest keeps them (and fingerprints them).
    pub suite_options: SuiteOptions,
    /// This folder's shard of the plan, if any.
    pub partition: Option<Partition>,
    /// The report folder being completed (`--resume`, `--rerun-errors`), if any.
    pub continuing: Option<Continuing>,
    /// The bytes of `harness.yaml`, when one was read (fingerprinted).
    pub config: Option<Vec<u8>>,
    pub finish: FinishOptions,
}

/// What the end of a suite writes besides the reports' defaults.
#[derive(Debug, Clone, Default)]
pub struct FinishOptions {
    /// `summary.md` is appended to this file (`$GITHUB_STEP_SUMMARY`).
    pub step_summary: Option<PathBuf>,
    /// Compare the outcome table with this committed snapshot.
    pub snapshot: Option<PathBuf>,
    /// Under CI a changed snapshot is not written beside the old one.
    pub ci: bool,
}

/// Why a suite did not start.
#[derive(Debug)]
pub enum SuiteError {
    /// Something the user can fix: each problem with its hint. Nothing was written.
    Refused(Vec<Problem>),
    /// The harness could not read or write what it needs (the journal, the manifest).
    Failed(String),
}

/// How far a continued folder already got, as said before its runs start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Continued {
    pub dir: PathBuf,
    pub how: Continuation,
    /// Runs of this folder's part of the plan.
    pub planned: usize,
    /// Of them, finished and kept.
    pub finished: usize,
    /// Runs that run now.
    pub running: usize,
    /// Of those, runs that never finished (the rest ended in an infrastructure error).
    pub never_finished: usize,
}

/// A suite planned and checked, ready to run.
pub struct Prepared {
    options: RunOptions,
    suite_options: SuiteOptions,
    partition: Option<Partition>,
    continuing: Option<Continuing>,
    finish: FinishOptions,
    plan: SuitePlan,
    part: SuitePlan,
    todo: SuitePlan,
    fingerprint: Fingerprint,
    previous: JournalContents,
    /// Tasks whose `requires:` the machine does not meet: their runs are skipped.
    unmet: preflight::UnmetRequirements,
}

/// Plans the runs of `request`, and refuses what cannot work before anything starts: a plan
/// that cannot be made (no tasks, no models), a continued folder whose suite changed, a provider
/// a run will call without its key.
pub fn prepare(request: SuiteRequest) -> Result<Prepared, SuiteError> {
    let SuiteRequest {
        tasks,
        options,
        suite_options,
        partition,
        continuing,
        config,
        finish,
    } = request;
    let planned = plan_runs(&tasks, &options).map_err(|e| {
        let hint = if tasks.is_empty() {
            format!(
                "`harness validate {}` lists the problems",
                options.tasks_dir.display()
            )
        } else {
            "for example `--model anthropic/claude-sonnet-4-5`".to_owned()
        };
        SuiteError::Refused(vec![Problem::new(e.to_string(), hint)])
    })?;
    // The whole plan, this folder's part of it, and what of that part is still to run.
    let plan = SuitePlan::new(&tasks, planned);
    let fingerprint = fingerprint::fingerprint(
        &tasks,
        &plan.runs(),
        &suite_options,
        options.mode,
        &options.cassettes_dir,
        config.as_deref(),
    );
    let part = plan.part(partition.as_ref());
    let previous = match &continuing {
        Some(_) => journal::read_journal(&options.report_dir)
            .map_err(|e| SuiteError::Failed(e.to_string()))?,
        None => JournalContents::default(),
    };
    let todo = match &continuing {
        Some(_) => part.remaining(&previous.latest()),
        None => part.clone(),
    };
    if let Some(c) = &continuing {
        check_same_suite(c, &fingerprint, &plan, &todo.runs(), &options.cassettes_dir)
            .map_err(|p| SuiteError::Refused(vec![p]))?;
    }
    let missing_keys = preflight::check_keys(&options, &todo.runs());
    if !missing_keys.is_empty() {
        return Err(SuiteError::Refused(missing_keys));
    }
    let todo_tasks: Vec<Arc<Task>> = todo.runs().into_iter().map(|r| r.task).collect();
    let unmet = preflight::check_requirements(&todo_tasks, std::env::var_os("PATH"));
    Ok(Prepared {
        options,
        suite_options,
        partition,
        continuing,
        finish,
        plan,
        part,
        todo,
        fingerprint,
        previous,
        unmet,
    })
}

/// The outcome table compared with a committed snapshot.
#[derive(Debug)]
pub struct SnapshotCheck {
    /// The snapshot file.
    pub file: PathBuf,
    /// The verdict, or why the snapshot could not be read or proposed.
    pub verdict: Result<SnapshotVerdict, String>,
}

/// What a suite did, as data: the records, the manifest it left, and what the user should hear.
#[derive(Debug)]
pub struct SuiteOutcome {
    /// Every run of the folder's part, in report order (a continued folder's earlier runs too).
    pub records: Vec<RunRecord>,
    pub manifest: Manifest,
    /// Ctrl-C or SIGTERM stopped it.
    pub interrupted: bool,
    /// The line a partial report starts with (`None` for a complete one).
    pub notice: Option<String>,
    /// The report files written, or why they could not be.
    pub written: Result<ReportPaths, String>,
    /// The snapshot compared, when one was asked for.
    pub snapshot: Option<SnapshotCheck>,
    /// Runs that ended before they started, said as errors (a task without a cassette).
    pub errors: Vec<String>,
    /// What went wrong around the runs without failing the suite (the journal or the event log
    /// could not be written, `edits.jsonl` could not be rebuilt).
    pub warnings: Vec<String>,
    /// The manifest could not be written at the end: the folder cannot be resumed reliably.
    pub manifest_error: Option<String>,
}

impl Prepared {
    /// Journal lines of the continued folder that were not entries (1-based line, why).
    pub fn skipped_journal_lines(&self) -> Vec<String> {
        self.previous
            .skipped
            .iter()
            .map(|(line, why)| {
                format!(
                    "{}: line {line} skipped: {why}",
                    self.options
                        .report_dir
                        .join(journal::JOURNAL_FILE)
                        .display()
                )
            })
            .collect()
    }

    /// How far the continued folder got, for a folder being continued.
    pub fn continued(&self) -> Option<Continued> {
        let c = self.continuing.as_ref()?;
        let latest = self.previous.latest();
        Some(Continued {
            dir: c.dir.clone(),
            how: c.how,
            planned: self.part.items.len(),
            finished: self.part.items.len() - self.todo.items.len(),
            running: self.todo.runs().len(),
            never_finished: self.todo.never_finished(&latest),
        })
    }

    /// The runs that will run, in plan order (runs of tasks whose requirements are missing
    /// are skipped instead).
    pub fn runs(&self) -> Vec<PlannedRun> {
        self.todo
            .runs()
            .into_iter()
            .filter(|r| !self.unmet.skipped.contains_key(&r.task.id))
            .collect()
    }

    /// What the machine lacks for some tasks (`requires:`), one line per missing thing with
    /// what to install; those tasks' runs are skipped.
    pub fn missing_requirements(&self) -> &[Problem] {
        &self.unmet.missing
    }

    /// The report folder.
    pub fn report_dir(&self) -> &Path {
        &self.options.report_dir
    }

    /// Runs every run still to run, `progress` hearing the runner's events after the journal
    /// (a run the progress says finished is on disk already), until `stop` is cancelled; then
    /// writes every report file, the edit corpus and the manifest.
    pub async fn execute(
        self,
        progress: Arc<dyn Reporter>,
        stop: CancellationToken,
    ) -> Result<SuiteOutcome, SuiteError> {
        let report_dir = self.options.report_dir.clone();
        let started_at = self
            .continuing
            .as_ref()
            .map_or_else(journal::now_stamp, |c| c.manifest.started_at.clone());
        let mut manifest = Manifest {
            format: MANIFEST_FORMAT,
            harness_version: env!("CARGO_PKG_VERSION").to_owned(),
            started_at,
            updated_at: journal::now_stamp(),
            interrupted: false,
            complete: false,
            sandbox: self.options.sandbox.name().to_owned(),
            partition: self.partition.map(|p| p.to_string()),
            options: self.suite_options.clone(),
            fingerprint: self.fingerprint.clone(),
            plan: self.plan.keys(),
            counts: Counts {
                planned: self.part.items.len(),
                ..Counts::default()
            },
            merged_from: self
                .continuing
                .as_ref()
                .map(|c| c.manifest.merged_from.clone())
                .unwrap_or_default(),
        };
        manifest
            .write(&report_dir)
            .map_err(|e| SuiteError::Failed(e.to_string()))?;
        let journal =
            Arc::new(Journal::open(&report_dir).map_err(|e| SuiteError::Failed(e.to_string()))?);
        let mut warnings = Vec::new();
        // The journal first: a run the progress line says finished is already on disk, so a
        // kill right after the line loses nothing.
        let mut reporters: Vec<Arc<dyn Reporter>> = vec![journal.clone(), progress];
        let events = report_dir.join(EVENTS_JSONL);
        match EventLog::open(&events, self.continuing.is_some()) {
            Ok(log) => reporters.push(Arc::new(log.redacting(self.options.redactor.clone()))),
            Err(e) => warnings.push(format!("failed to write {}: {e}", events.display())),
        }
        let (skipped, runnable): (Vec<PlannedRun>, Vec<PlannedRun>) = self
            .todo
            .runs()
            .into_iter()
            .partition(|r| self.unmet.skipped.contains_key(&r.task.id));
        let mut execution = execute_until(
            runnable,
            &self.options,
            Arc::new(Fanout(reporters)),
            stop.clone(),
        )
        .await;
        let interrupted = stop.is_cancelled();
        let cleanup = std::mem::take(&mut execution.cleanup);
        let mut new = execution.records;
        // A task the machine cannot check is skipped with what to install, never run into a
        // check failure.
        for run in skipped {
            let mut record = RunRecord::skipped(
                &run.task.id,
                &run.model.provider,
                &run.model.model,
                run.epoch,
                &self.unmet.skipped[&run.task.id],
            );
            record.set_edit_strategy(&run.edit_strategy);
            if let Err(e) = journal.append(&JournalEntry::now(record.clone())) {
                warnings.push(e.to_string());
            }
            new.push(record);
        }
        let mut errors = Vec::new();
        for task in self.todo.unplanned() {
            let record = missing_cassette_record(
                &task,
                &self.options.tasks_dir,
                &self.options.cassettes_dir,
            );
            errors.push(
                record
                    .detail
                    .clone()
                    .unwrap_or_else(|| record.reason.clone()),
            );
            if let Err(e) = journal.append(&JournalEntry::now(record.clone())) {
                warnings.push(e.to_string());
            }
            new.push(record);
        }
        if let Some(e) = journal.failure() {
            warnings.push(format!(
                "the journal is incomplete ({e}); `--resume` may run some finished runs again"
            ));
        }
        let records = final_records(&self.part, &self.previous.latest(), new);
        manifest.counts = Counts::tally(self.part.items.len(), &records, execution.interrupted);
        manifest.interrupted = interrupted;
        manifest.complete = !interrupted && manifest.counts.finished == self.part.items.len();
        let notice = partial_notice(&manifest, &report_dir);
        let mut outcome = finish(
            &report_dir,
            records,
            manifest,
            notice,
            &self.finish,
            &[],
            warnings,
        )
        .await;
        cleanup.done().await;
        outcome.interrupted = interrupted;
        outcome.errors = errors;
        Ok(outcome)
    }
}

/// The end of a suite or a merge, on a blocking thread (off the async workers): see
/// [`finish_blocking`].
pub async fn finish(
    dir: &Path,
    records: Vec<RunRecord>,
    manifest: Manifest,
    notice: Option<String>,
    options: &FinishOptions,
    corpus_sources: &[PathBuf],
    warnings: Vec<String>,
) -> SuiteOutcome {
    let dir = dir.to_path_buf();
    let options = options.clone();
    let sources = corpus_sources.to_vec();
    let work = move || {
        finish_blocking(
            &dir, records, manifest, notice, &options, &sources, warnings,
        )
    };
    match tokio::task::spawn_blocking(work).await {
        Ok(outcome) => outcome,
        Err(join) => std::panic::resume_unwind(join.into_panic()),
    }
}

/// The end of a suite or a merge: writes every report file of `records` (`notice` first in a
/// partial one), rebuilds `edits.jsonl` from the run folders (blobs found in `dir` or in
/// `corpus_sources`), writes `manifest` and compares the snapshot.
pub fn finish_blocking(
    dir: &Path,
    records: Vec<RunRecord>,
    mut manifest: Manifest,
    notice: Option<String>,
    options: &FinishOptions,
    corpus_sources: &[PathBuf],
    mut warnings: Vec<String>,
) -> SuiteOutcome {
    manifest.updated_at = journal::now_stamp();
    let report_options = ReportOptions {
        step_summary: options.step_summary.clone(),
        notice: notice.clone(),
        ..ReportOptions::default()
    };
    let written = reports::write_report_with(dir, &records, &[], &report_options)
        .map_err(|e| format!("failed to write the reports: {e}"));
    let sorted_dirs: Vec<String> = reports::sorted(&records)
        .iter()
        .map(|r| r.run_dir())
        .collect();
    let sources: Vec<&Path> = corpus_sources.iter().map(PathBuf::as_path).collect();
    if let Err(e) =
        crate::edits::corpus::rebuild_corpus(dir, sorted_dirs.iter().map(String::as_str), &sources)
    {
        warnings.push(format!("edits.jsonl could not be written again: {e}"));
    }
    let manifest_error = manifest.write(dir).err().map(|e| e.to_string());
    let snapshot = options.snapshot.as_ref().map(|file| SnapshotCheck {
        file: file.clone(),
        verdict: reports::snapshot::check_snapshot(file, &records, options.ci)
            .map_err(|e| e.to_string()),
    });
    SuiteOutcome {
        records,
        manifest,
        interrupted: false,
        notice,
        written,
        snapshot,
        errors: Vec::new(),
        warnings,
        manifest_error,
    }
}

/// The line a partial report starts with (`None` for a complete one): how many runs finished,
/// and how to finish the rest.
fn partial_notice(manifest: &Manifest, dir: &Path) -> Option<String> {
    if manifest.complete {
        return None;
    }
    let c = &manifest.counts;
    let what = if manifest.interrupted {
        "Interrupted"
    } else {
        "Incomplete"
    };
    let mut parts = Vec::new();
    if c.interrupted > 0 {
        parts.push(format!("{} stopped mid-run", c.interrupted));
    }
    if c.not_started > 0 {
        parts.push(format!("{} not started", c.not_started));
    }
    let detail = if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    };
    Some(format!(
        "{what}: {} of {} runs finished{detail}; `harness run --resume {}` runs the rest",
        c.finished,
        c.planned,
        dir.display()
    ))
}
