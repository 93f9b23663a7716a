//! `harness run` and `harness validate`: load and validate the suite, plan, execute, report.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;

use crate::cassettes::{self, CassetteMode};
use crate::providers::catalog::{Catalog, ModelSelector};
use crate::providers::config::HarnessConfig;
use crate::reports;
use crate::reports::snapshot::SnapshotVerdict;
use crate::runner::{self, Reporter, RunOptions};
use crate::sandbox::Sandbox;
use crate::sandbox::secrets::Vault;
use crate::scoring::{Outcome, OutcomeChange, RunRecord};
use crate::tasks;

use super::events::{EVENTS_JSONL, EventLog, Fanout};
use super::exit;
use super::progress::Progress;
use super::resume::{self, Given};
use crate::runner::CancellationToken;
use crate::runner::journal::{self, Journal};
use crate::runner::manifest::{Counts, MANIFEST_FORMAT, Manifest};
use crate::runner::resume::{Continuation, SuitePlan};

/// Arguments of `harness run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The tasks folder (one sub-folder per task, each with task.yaml and repo/).
    #[arg(default_value = "tasks")]
    pub tasks: PathBuf,

    /// Model to run, as PROVIDER/MODEL, or MODEL with `--provider` (repeatable). Without it,
    /// replay runs every cassette recorded for each task.
    #[arg(long = "model", value_name = "PROVIDER/MODEL")]
    pub models: Vec<String>,

    /// Provider of `--model NAME` when NAME has no `PROVIDER/` prefix.
    #[arg(long, value_name = "PROVIDER")]
    pub provider: Option<String>,

    /// Where cassettes are read and written.
    #[arg(long, default_value = "cassettes")]
    pub cassettes: PathBuf,

    /// replay (default; never touches the network), record (live, write cassettes),
    /// auto (replay what exists, record what is missing; replay under CI), live (no cassette).
    #[arg(long = "cassette-mode", value_enum)]
    pub cassette_mode: Option<CassetteMode>,

    /// What a replay does when a request differs from its recording: stop (default; the run is
    /// `diverged`) or continue (answer with the recorded responses anyway, run the recorded
    /// actions against today's tools, and report the real outcome with every difference).
    #[arg(long = "on-divergence", value_enum, default_value = "stop")]
    pub on_divergence: cassettes::OnDivergence,

    /// Compare the run's deterministic outcome table with this committed snapshot: equal is
    /// success; different prints a diff and, locally, writes FILE.new for `harness review`
    /// (under CI nothing is written). A missing snapshot is proposed the same way.
    #[arg(long, value_name = "FILE")]
    pub snapshot: Option<PathBuf>,

    /// Shorthand for `--cassette-mode record`.
    #[arg(long, conflicts_with = "cassette_mode")]
    pub record: bool,

    /// Base URL of the provider (an OpenAI-compatible server, a local test server).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// Runs at once (default: the number of cores).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,

    /// Only tasks whose id matches this glob (repeatable).
    #[arg(long = "task", value_name = "GLOB")]
    pub task_globs: Vec<String>,

    /// Only tasks with this tag (repeatable: any of them).
    #[arg(long = "tag")]
    pub tags: Vec<String>,

    /// Keep each run's workspace instead of deleting it.
    #[arg(long)]
    pub keep_workspaces: bool,

    /// Edit matching strategy (see `harness edits strategies`); repeat it to run each strategy
    /// as an arm of its own, compared in the summary paired by task and epoch.
    #[arg(long = "edit-strategy", value_name = "STRATEGY", default_value = "pi")]
    pub edit_strategies: Vec<String>,

    /// Run every task this many times per model.
    #[arg(long, default_value_t = 1)]
    pub epochs: u32,

    /// Where report folders are written.
    #[arg(long, default_value = "reports")]
    pub reports: PathBuf,

    /// Thinking / reasoning level sent to models that support it (default: none sent).
    #[arg(long, value_enum)]
    pub thinking: Option<crate::providers::ThinkingLevel>,

    /// Stop starting new runs once this many dollars are spent (priced models only).
    #[arg(long, value_name = "DOLLARS")]
    pub max_cost: Option<f64>,

    /// Run again the runs of this report folder that ended in an infrastructure error (a
    /// provider, cassette or setup failure; never the model's own errors), and complete the
    /// folder in place: runs that never finished (a killed or interrupted suite) run too, as
    /// with `--resume`, but the cassettes of the runs being run may have changed. The folder's
    /// options are used for every flag not given.
    #[arg(long, value_name = "REPORT_DIR", conflicts_with = "resume")]
    pub rerun_errors: Option<PathBuf>,

    /// Complete this report folder in place: run only what it is missing (runs that never
    /// finished, interrupted ones, infrastructure errors) with its plan and options, refusing
    /// if the suite (tasks, cassettes, harness version, options) changed since.
    #[arg(long, value_name = "REPORT_DIR")]
    pub resume: Option<PathBuf>,

    /// Run one shard of the plan: `hash:M/N` (every run of a task in shard M of N, by a fixed
    /// hash of the task id) or `count:M/N` (the sorted plan dealt out round-robin); M is
    /// 1-based. `harness merge` puts the shards' reports together.
    #[arg(long, value_name = "KIND:M/N")]
    pub partition: Option<String>,

    /// No progress on stderr but errors; the summary still goes to stdout.
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// How the agent's commands and tools are confined: isolated (bubblewrap: no network, own
    /// namespaces, only the workspace writable; the default where bubblewrap works), workspace
    /// (file tools kept inside the workspace) or none (Pi's behaviour).
    #[arg(long, value_enum, value_name = "TIER")]
    pub sandbox: Option<crate::sandbox::Tier>,
}

/// Arguments of `harness validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The tasks folder.
    #[arg(default_value = "tasks")]
    pub tasks: PathBuf,

    /// Print the task format's JSON Schema instead.
    #[arg(long)]
    pub schema: bool,
}

/// `harness validate`: check every task, report every problem, run nothing.
pub fn validate(args: ValidateArgs) -> ExitCode {
    if args.schema {
        super::print_data(tasks::task_schema());
        return ExitCode::SUCCESS;
    }
    match tasks::load_suite(&args.tasks) {
        Ok(suite) => {
            super::print_data(&format!(
                "{} tasks in {} are valid",
                suite.tasks.len(),
                args.tasks.display()
            ));
            ExitCode::SUCCESS
        }
        Err(errors) => {
            stderr!("{errors}");
            ExitCode::from(exit::USAGE)
        }
    }
}

/// `harness run`; `vault` holds the keys sealed away at start, `given` names the flags given
/// on the command line (`--resume` takes the report's for the others).
pub fn run(args: RunArgs, given: Given, vault: Arc<Vault>) -> ExitCode {
    let runtime = match super::runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let sandbox = Sandbox::detect(args.sandbox);
    if let Some(notice) = sandbox.notice() {
        super::warn(notice);
    }
    let stop = CancellationToken::new();
    let code = runtime.block_on(async {
        resume::watch_signals(stop.clone(), sandbox.clone());
        run_async(args, given, vault, sandbox.clone(), stop.clone()).await
    });
    // Whatever a command of this invocation left running ends with the harness.
    sandbox.kill_all();
    if stop.is_cancelled() {
        // A cancelled tool may still be in a blocking thread (a grep of a huge tree): no waiting.
        runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    }
    code
}

async fn run_async(
    mut args: RunArgs,
    given: Given,
    vault: Arc<Vault>,
    sandbox: Sandbox,
    stop: CancellationToken,
) -> ExitCode {
    // What a harness killed earlier left in the temp folder, provably dead, goes first.
    resume::clean_stale_temp(args.quiet);
    // `--resume DIR` / `--rerun-errors DIR`: that folder's options, unless given.
    let continuing = match resume::continuing(&mut args, &given) {
        Ok(continuing) => continuing,
        Err(problems) => return super::preflight::report(&problems),
    };
    let flag = if args.record {
        Some(CassetteMode::Record)
    } else {
        args.cassette_mode
    };
    let mode = match cassettes::resolve_mode(flag, |k| std::env::var(k).ok()) {
        Ok(mode) => mode,
        Err(e) => return super::usage_error(&e.to_string(), "use replay, record, auto or live"),
    };
    let models = match model_selectors(&args.models, args.provider.as_deref()) {
        Ok(models) => models,
        Err(e) => {
            return super::usage_error(&e, "for example `--model anthropic/claude-sonnet-4-5`");
        }
    };
    let (config, config_path) = match HarnessConfig::load_first(&config_candidates(&args.tasks)) {
        Ok(found) => found,
        Err(e) => return super::usage_error(&e.to_string(), "fix or remove the file"),
    };
    let catalog = match Catalog::with_config(&config) {
        Ok(catalog) => catalog,
        Err(e) => return super::usage_error(&e.to_string(), "see the README's provider section"),
    };
    let mut bad_flags =
        super::preflight::check_flags(&args, &catalog, &models, config_path.as_deref());
    let partition = match resume::partition(args.partition.as_deref(), continuing.as_ref()) {
        Ok(partition) => partition,
        Err(p) => {
            // A malformed `--partition` is already among the flags' problems.
            if !bad_flags.contains(&p) {
                bad_flags.push(p);
            }
            None
        }
    };
    if !bad_flags.is_empty() {
        return super::preflight::report(&bad_flags);
    }
    let (all_tasks, problems) = tasks::load_suite_lenient(&args.tasks);
    for problem in &problems {
        stderr!("error: {problem}");
    }
    let selected = match tasks::filter(all_tasks, &args.task_globs, &args.tags) {
        Ok(selected) => selected,
        Err(e) => {
            return super::usage_error(&e.to_string(), "`--task` takes a glob such as `py-*`");
        }
    };
    let selected: Vec<Arc<tasks::Task>> = selected.into_iter().map(Arc::new).collect();
    let report_dir = match &continuing {
        Some(c) => c.dir.clone(),
        None => fresh_report_dir(&args.reports),
    };
    let mut options = RunOptions::new(args.cassettes.clone(), report_dir.clone());
    options.tasks_dir = args.tasks.clone();
    options.models = models;
    options.mode = mode;
    options.on_divergence = args.on_divergence;
    options.ci = cassettes::ci_set(std::env::var("CI").ok().as_deref());
    if let Some(jobs) = args.jobs {
        options.jobs = jobs.max(1);
    }
    options.keep_workspaces = args.keep_workspaces;
    options.edit_strategies = args.edit_strategies.clone();
    options.base_url = args.base_url.clone();
    options.epochs = args.epochs.max(1);
    options.catalog = Arc::new(catalog);
    options.max_cost = args.max_cost;
    options.request.thinking = args.thinking;
    options.sandbox = sandbox;
    options.redactor = vault.redactor();
    options.key_env = Arc::new(move |k| vault.lookup(k));
    let planned = match runner::plan_runs(&selected, &options) {
        Ok(planned) => planned,
        Err(e) => {
            let hint = if selected.is_empty() {
                format!(
                    "`harness validate {}` lists the problems",
                    args.tasks.display()
                )
            } else {
                "for example `--model anthropic/claude-sonnet-4-5`".to_owned()
            };
            return super::usage_error(&e.to_string(), &hint);
        }
    };
    // The whole plan, this folder's part of it, and what of that part is still to run.
    let plan = SuitePlan::new(&selected, planned);
    let suite = resume::suite_options(&args, &options.models, mode);
    let config_bytes = config_path.as_deref().and_then(|p| std::fs::read(p).ok());
    let fingerprint = runner::fingerprint::fingerprint(
        &selected,
        &plan.runs(),
        &suite,
        mode,
        &args.cassettes,
        config_bytes.as_deref(),
    );
    let part = plan.part(partition.as_ref());
    let previous = match &continuing {
        Some(_) => match journal::read_journal(&report_dir) {
            Ok(previous) => previous,
            Err(e) => return super::internal_error(&e.to_string()),
        },
        None => journal::JournalContents::default(),
    };
    for (line, why) in &previous.skipped {
        super::warn(&format!(
            "{}: line {line} skipped: {why}",
            report_dir.join(journal::JOURNAL_FILE).display()
        ));
    }
    let latest = previous.latest();
    let todo = match &continuing {
        Some(_) => part.remaining(&latest),
        None => part.clone(),
    };
    if let Some(c) = &continuing {
        if let Err(p) =
            resume::check_same_suite(c, &fingerprint, &plan, &todo.runs(), &args.cassettes)
        {
            return super::preflight::report(&[p]);
        }
    }
    let to_run = todo.runs();
    let missing_keys = super::preflight::check_keys(&options, &to_run);
    if !missing_keys.is_empty() {
        return super::preflight::report(&missing_keys);
    }
    if let Some(c) = &continuing {
        let never_finished = todo.never_finished(&latest);
        if !args.quiet {
            let why = match to_run.len() - never_finished {
                _ if to_run.is_empty() => String::new(),
                0 => format!(" ({never_finished} never finished)"),
                errors if never_finished == 0 => {
                    format!(" ({errors} ended in an infrastructure error)")
                }
                errors => format!(
                    " ({errors} ended in an infrastructure error, {never_finished} never finished)"
                ),
            };
            stderr!(
                "{}: {} of its {} run(s) finished; running {}{why}",
                c.dir.display(),
                part.items.len() - todo.items.len(),
                part.items.len(),
                to_run.len()
            );
        }
        if c.how == Continuation::RerunErrors && never_finished > 0 {
            super::warn(&format!(
                "{never_finished} run(s) of {} never finished (the harness was stopped before \
                 them); `--rerun-errors` runs them too, as `--resume` would",
                c.dir.display()
            ));
        }
    }

    let started_at = continuing
        .as_ref()
        .map_or_else(journal::now_stamp, |c| c.manifest.started_at.clone());
    let mut manifest = Manifest {
        format: MANIFEST_FORMAT,
        harness_version: env!("CARGO_PKG_VERSION").to_owned(),
        started_at,
        updated_at: journal::now_stamp(),
        interrupted: false,
        complete: false,
        sandbox: options.sandbox.name().to_owned(),
        partition: partition.map(|p| p.to_string()),
        options: suite,
        fingerprint,
        plan: plan.keys(),
        counts: Counts {
            planned: part.items.len(),
            ..Counts::default()
        },
        merged_from: continuing
            .as_ref()
            .map(|c| c.manifest.merged_from.clone())
            .unwrap_or_default(),
    };
    if let Err(e) = manifest.write(&report_dir) {
        return super::internal_error(&e.to_string());
    }
    let journal = match Journal::open(&report_dir) {
        Ok(journal) => Arc::new(journal),
        Err(e) => return super::internal_error(&e.to_string()),
    };
    let progress = Arc::new(Progress::for_stderr(
        args.quiet,
        std::env::var_os("NO_COLOR").as_deref(),
    ));
    // The journal first: a run the progress line says finished is already on disk, so a kill
    // right after the line loses nothing.
    let mut reporters: Vec<Arc<dyn Reporter>> = vec![journal.clone(), progress.clone()];
    match EventLog::open(&report_dir.join(EVENTS_JSONL), continuing.is_some()) {
        Ok(log) => reporters.push(Arc::new(log)),
        Err(e) => stderr!(
            "error: failed to write {}: {e}",
            report_dir.join(EVENTS_JSONL).display()
        ),
    }
    let execution =
        runner::execute_until(to_run, &options, Arc::new(Fanout(reporters)), stop.clone()).await;
    progress.finish();
    let interrupted = stop.is_cancelled();
    let mut new = execution.records;
    for task in todo.unplanned() {
        let record =
            runner::missing_cassette_record(&task, &options.tasks_dir, &options.cassettes_dir);
        stderr!(
            "error: {}",
            record.detail.as_deref().unwrap_or(&record.reason)
        );
        let _ = journal.append(&journal::JournalEntry::now(record.clone()));
        new.push(record);
    }
    if let Some(e) = journal.failure() {
        super::warn(&format!(
            "the journal is incomplete ({e}); `--resume` may run some finished runs again"
        ));
    }
    let records = runner::resume::final_records(&part, &latest, new);

    // The manifest says how far the folder got; a partial report says so first.
    let finished: Vec<&RunRecord> = records
        .iter()
        .filter(|r| r.outcome != Outcome::Skipped)
        .collect();
    manifest.counts.finished = finished.len();
    manifest.counts.interrupted = execution.interrupted;
    manifest.counts.not_started = part
        .items
        .len()
        .saturating_sub(finished.len() + execution.interrupted);
    manifest.counts.outcomes = Default::default();
    for r in &finished {
        *manifest
            .counts
            .outcomes
            .entry(r.outcome.name().to_owned())
            .or_default() += 1;
    }
    manifest.interrupted = interrupted;
    manifest.complete = !interrupted && manifest.counts.finished == part.items.len();
    manifest.updated_at = journal::now_stamp();
    let notice = partial_notice(&manifest, &report_dir);
    let report_options = reports::ReportOptions {
        // GitHub Actions' job summary: summary.md is appended to it.
        step_summary: std::env::var_os("GITHUB_STEP_SUMMARY")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
        notice: notice.clone(),
        ..reports::ReportOptions::default()
    };
    let written = reports::write_report_with(&report_dir, &records, &[], &report_options);
    let sorted_dirs: Vec<String> = reports::sorted(&records)
        .iter()
        .map(|r| r.run_dir())
        .collect();
    if let Err(e) = crate::edits::corpus::rebuild_corpus(
        &report_dir,
        sorted_dirs.iter().map(String::as_str),
        &[],
    ) {
        super::warn(&format!("edits.jsonl could not be written again: {e}"));
    }
    if let Err(e) = manifest.write(&report_dir) {
        return super::internal_error(&e.to_string());
    }
    let colour = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::io::stdout().is_terminal();
    super::print_data(&reports::render_terminal_summary(&records, colour));
    match written {
        Ok(paths) if !args.quiet => stderr!(
            "reports written to {} (open {})",
            paths.dir.display(),
            paths
                .report_html
                .unwrap_or_else(|| paths.dir.join("summary.md"))
                .display()
        ),
        Ok(_) => {}
        Err(e) => return super::internal_error(&format!("could not write the reports: {e}")),
    }
    if interrupted {
        if let Some(notice) = &notice {
            stderr!("{notice}");
        }
        return ExitCode::from(exit::INTERRUPTED);
    }
    let snapshot = match &args.snapshot {
        None => None,
        Some(file) => match reports::snapshot::check_snapshot(file, &records, options.ci) {
            Ok(verdict) => {
                report_snapshot(file, &verdict);
                Some(verdict)
            }
            Err(e) => return super::internal_error(&e.to_string()),
        },
    };
    if !problems.is_empty() {
        stderr!(
            "error: {} problem(s) in the task suite (see above); the valid tasks ran",
            problems.len()
        );
        return ExitCode::from(exit::USAGE);
    }
    ExitCode::from(run_status(&records, snapshot.as_ref()))
}

/// The line a partial report starts with (`None` for a complete one): how many runs finished,
/// and how to finish the rest.
fn partial_notice(manifest: &Manifest, dir: &std::path::Path) -> Option<String> {
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

/// Says how the run's outcome table compares with the committed snapshot.
pub(crate) fn report_snapshot(file: &std::path::Path, verdict: &SnapshotVerdict) {
    match verdict {
        SnapshotVerdict::Equal => stderr!("snapshot {} matches", file.display()),
        SnapshotVerdict::Changed {
            diff,
            proposed,
            missing,
        } => {
            if *missing {
                stderr!("snapshot {} does not exist yet", file.display());
            } else {
                stderr!("snapshot {} differs from this run:", file.display());
                stderr!("{}", diff.trim_end_matches('\n'));
            }
            match proposed {
                Some(p) => stderr!(
                    "hint: the new table is in {}; `harness review --accept` keeps it, `--reject` drops it",
                    p.display()
                ),
                None => stderr!(
                    "hint: under CI nothing is written; run it locally and `harness review` the result"
                ),
            }
        }
    }
}

/// The exit status of `harness run` for `records` (the README's exit-code table): an outcome
/// that changed against its cassette first; then, with a snapshot, whether the table changed
/// (a run that did not pass is expected when the snapshot says so), without one whether every
/// run passed; then drift with every outcome held.
pub(crate) fn run_status(records: &[RunRecord], snapshot: Option<&SnapshotVerdict>) -> u8 {
    if records
        .iter()
        .any(|r| r.outcome_change == Some(OutcomeChange::Changed))
    {
        return exit::OUTCOME_CHANGED;
    }
    match snapshot {
        Some(SnapshotVerdict::Changed { .. }) => return exit::SNAPSHOT_CHANGED,
        Some(SnapshotVerdict::Equal) => {}
        None => {
            if records.iter().any(|r| r.outcome != Outcome::Passed) {
                return exit::TASK_FAILED;
            }
        }
    }
    if records.iter().any(|r| r.divergences > 0) {
        return exit::DRIFT;
    }
    exit::SUCCESS
}

/// `<reports>/<UTC timestamp>`, with a suffix if two runs start in the same millisecond.
fn fresh_report_dir(reports: &std::path::Path) -> PathBuf {
    let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S-%3f").to_string();
    let mut dir = reports.join(&stamp);
    let mut n = 2;
    while dir.exists() {
        dir = reports.join(format!("{stamp}-{n}"));
        n += 1;
    }
    dir
}

/// Where `harness.yaml` is looked for: the tasks folder, then the current folder.
pub(crate) fn config_candidates(tasks: &std::path::Path) -> Vec<PathBuf> {
    vec![tasks.join("harness.yaml"), PathBuf::from("harness.yaml")]
}

/// Turns `--model` values into selectors: `PROVIDER/MODEL`, or `MODEL` with `--provider`.
pub(crate) fn model_selectors(
    models: &[String],
    provider: Option<&str>,
) -> Result<Vec<ModelSelector>, String> {
    models
        .iter()
        .map(|m| match provider {
            Some(p) if !m.contains('/') => format!("{p}/{m}").parse(),
            _ => m.parse(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::skipped_record;

    fn run(outcome: Outcome, divergences: u32, change: Option<OutcomeChange>) -> RunRecord {
        let mut r = skipped_record("t", "p", "m", 1, "");
        r.outcome = outcome;
        r.divergences = divergences;
        r.outcome_change = change;
        r
    }

    #[test]
    fn exit_statuses_tell_drift_from_changed_outcomes() {
        use OutcomeChange::*;
        let passed = run(Outcome::Passed, 0, None);
        let failed = run(Outcome::Failed, 0, None);
        let drift_held = run(Outcome::Passed, 2, Some(Held));
        let drift_changed = run(Outcome::Failed, 1, Some(Changed));
        let diverged = run(Outcome::Diverged, 1, None);
        let equal = SnapshotVerdict::Equal;
        let changed = SnapshotVerdict::Changed {
            diff: String::new(),
            proposed: None,
            missing: false,
        };
        let table: Vec<(Vec<&RunRecord>, Option<&SnapshotVerdict>, u8)> = vec![
            (vec![&passed], None, exit::SUCCESS),
            (vec![&passed, &failed], None, exit::TASK_FAILED),
            (vec![&passed, &drift_held], None, exit::DRIFT),
            (
                vec![&drift_held, &drift_changed],
                None,
                exit::OUTCOME_CHANGED,
            ),
            (vec![&failed, &drift_changed], None, exit::OUTCOME_CHANGED),
            // Under `stop` a diverged run's outcome is unknown: it did not pass.
            (vec![&passed, &diverged], None, exit::TASK_FAILED),
            (vec![&failed, &drift_held], None, exit::TASK_FAILED),
            // A snapshot decides instead of "every run passed".
            (vec![&passed, &failed], Some(&equal), exit::SUCCESS),
            (vec![&passed], Some(&changed), exit::SNAPSHOT_CHANGED),
            (vec![&failed, &drift_held], Some(&equal), exit::DRIFT),
            (vec![&drift_changed], Some(&equal), exit::OUTCOME_CHANGED),
        ];
        for (records, snapshot, want) in table {
            let records: Vec<RunRecord> = records.into_iter().cloned().collect();
            assert_eq!(
                run_status(&records, snapshot),
                want,
                "{:?} {snapshot:?}",
                records
                    .iter()
                    .map(|r| (r.outcome, r.divergences, r.outcome_change))
                    .collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn model_selectors_accept_both_spellings() {
        let sel = model_selectors(&["claude-x".into()], Some("anthropic")).unwrap();
        assert_eq!(sel[0].to_string(), "anthropic/claude-x");
        let sel = model_selectors(&["openai/gpt-x".into()], Some("anthropic")).unwrap();
        assert_eq!(sel[0].to_string(), "openai/gpt-x");
        let err = model_selectors(&["claude-x".into()], None).unwrap_err();
        assert!(err.contains("PROVIDER/MODEL"), "{err}");
    }
}
