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

    /// Re-run only the runs whose outcome was `error` in this previous report folder.
    #[arg(long, value_name = "REPORT_DIR")]
    pub rerun_errors: Option<PathBuf>,

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

/// `harness run`; `vault` holds the keys sealed away at start.
pub fn run(args: RunArgs, vault: Arc<Vault>) -> ExitCode {
    let runtime = match super::runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let sandbox = Sandbox::detect(args.sandbox);
    if let Some(notice) = sandbox.notice() {
        super::warn(notice);
    }
    let code = runtime.block_on(run_async(args, vault, sandbox.clone()));
    // Whatever a command of this invocation left running ends with the harness.
    sandbox.kill_all();
    code
}

async fn run_async(args: RunArgs, vault: Arc<Vault>, sandbox: Sandbox) -> ExitCode {
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
    let bad_flags = super::preflight::check_flags(&args, &catalog, &models, config_path.as_deref());
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
    let report_dir = fresh_report_dir(&args.reports);
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
    let planned = match &args.rerun_errors {
        Some(previous) => select_errors(&selected, &options, previous),
        None => runner::plan_runs(&selected, &options).map_err(|e| e.to_string()),
    };
    let planned = match planned {
        Ok(planned) => planned,
        Err(e) => {
            let hint = if args.rerun_errors.is_some() {
                "pass a report folder written by `harness run`".to_owned()
            } else if selected.is_empty() {
                format!(
                    "`harness validate {}` lists the problems",
                    args.tasks.display()
                )
            } else {
                "for example `--model anthropic/claude-sonnet-4-5`".to_owned()
            };
            return super::usage_error(&e, &hint);
        }
    };
    let missing_keys = super::preflight::check_keys(&options, &planned);
    if !missing_keys.is_empty() {
        return super::preflight::report(&missing_keys);
    }
    let unplanned: Vec<&Arc<tasks::Task>> = if args.rerun_errors.is_some() {
        Vec::new()
    } else {
        selected
            .iter()
            .filter(|t| !planned.iter().any(|p| p.task.id == t.id))
            .collect()
    };
    let progress = Arc::new(Progress::for_stderr(
        args.quiet,
        std::env::var_os("NO_COLOR").as_deref(),
    ));
    let mut reporters: Vec<Arc<dyn Reporter>> = vec![progress.clone()];
    match EventLog::create(&report_dir.join(EVENTS_JSONL)) {
        Ok(log) => reporters.push(Arc::new(log)),
        Err(e) => stderr!(
            "error: failed to write {}: {e}",
            report_dir.join(EVENTS_JSONL).display()
        ),
    }
    let mut records = runner::execute(planned, &options, Arc::new(Fanout(reporters))).await;
    progress.finish();
    for task in unplanned {
        let record =
            runner::missing_cassette_record(task, &options.tasks_dir, &options.cassettes_dir);
        stderr!(
            "error: {}",
            record.detail.as_deref().unwrap_or(&record.reason)
        );
        records.push(record);
    }

    let report_options = reports::ReportOptions {
        // GitHub Actions' job summary: summary.md is appended to it.
        step_summary: std::env::var_os("GITHUB_STEP_SUMMARY")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
        ..reports::ReportOptions::default()
    };
    let written = reports::write_report_with(&report_dir, &records, &[], &report_options);
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

/// Says how the run's outcome table compares with the committed snapshot.
fn report_snapshot(file: &std::path::Path, verdict: &SnapshotVerdict) {
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
fn run_status(records: &[RunRecord], snapshot: Option<&SnapshotVerdict>) -> u8 {
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

/// The runs whose outcome was `error` in the previous report at `folder`, for the tasks still
/// selected, with the same provider, model and epoch.
fn select_errors(
    tasks: &[Arc<tasks::Task>],
    options: &RunOptions,
    folder: &std::path::Path,
) -> Result<Vec<runner::PlannedRun>, String> {
    let errors = reports::error_runs(folder).map_err(|e| e.to_string())?;
    Ok(errors
        .into_iter()
        .filter_map(|key| {
            let task = tasks.iter().find(|t| t.id == key.task_id)?.clone();
            let model = ModelSelector {
                provider: key.provider,
                model: key.model,
            };
            Some(runner::PlannedRun {
                cassette: cassettes::cassette_path(
                    &options.cassettes_dir,
                    &task.id,
                    &model.provider,
                    &model.model,
                ),
                task,
                model,
                epoch: key.epoch,
                edit_strategy: key.edit_strategy,
            })
        })
        .collect())
}

/// Turns `--model` values into selectors: `PROVIDER/MODEL`, or `MODEL` with `--provider`.
fn model_selectors(
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
