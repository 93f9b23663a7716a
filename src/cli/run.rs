//! `harness run` and `harness validate`: load and validate the suite, plan, execute, report.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use clap::Args;

use crate::agent::AgentEvent;
use crate::cassettes::{self, CassetteMode};
use crate::providers::catalog::ModelSelector;
use crate::reports;
use crate::runner::{self, Reporter, RunOptions, RunnerEvent};
use crate::scoring::Outcome;
use crate::tasks;

use super::exit;

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

    /// Edit matching strategy: pi (exact, then Pi's fuzzy matching) or exact.
    #[arg(long, default_value = "pi")]
    pub edit_strategy: String,

    /// Run every task this many times per model.
    #[arg(long, default_value_t = 1)]
    pub epochs: u32,

    /// Where report folders are written.
    #[arg(long, default_value = "reports")]
    pub reports: PathBuf,

    /// No progress lines, only the summary.
    #[arg(long, short = 'q')]
    pub quiet: bool,
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
        println!("{}", tasks::task_schema());
        return ExitCode::SUCCESS;
    }
    match tasks::load_suite(&args.tasks) {
        Ok(suite) => {
            println!(
                "{} tasks in {} are valid",
                suite.tasks.len(),
                args.tasks.display()
            );
            ExitCode::SUCCESS
        }
        Err(errors) => {
            eprintln!("{errors}");
            ExitCode::from(exit::USAGE)
        }
    }
}

/// `harness run`.
pub fn run(args: RunArgs) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: could not start the async runtime: {e}");
            return ExitCode::from(exit::INTERNAL);
        }
    };
    runtime.block_on(run_async(args))
}

async fn run_async(args: RunArgs) -> ExitCode {
    let mode = cassettes::resolve_mode(
        if args.record {
            Some(CassetteMode::Record)
        } else {
            args.cassette_mode
        },
        |k| std::env::var(k).ok(),
    );
    let models = match model_selectors(&args.models, args.provider.as_deref()) {
        Ok(models) => models,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let (all_tasks, problems) = tasks::load_suite_lenient(&args.tasks);
    for problem in &problems {
        eprintln!("error: {problem}");
    }
    let selected: Vec<Arc<tasks::Task>> = tasks::filter(all_tasks, &args.task_globs, &args.tags)
        .into_iter()
        .map(Arc::new)
        .collect();
    let options = RunOptions {
        tasks_dir: args.tasks.clone(),
        cassettes_dir: args.cassettes.clone(),
        models,
        mode,
        jobs: args.jobs.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
        }),
        keep_workspaces: args.keep_workspaces,
        edit_strategy: args.edit_strategy.clone(),
        base_url: args.base_url.clone(),
        epochs: args.epochs,
    };
    let planned = match runner::plan_runs(&selected, &options) {
        Ok(planned) => planned,
        Err(e) => {
            eprintln!("error: {e}");
            if problems.is_empty() {
                eprintln!("hint: `harness validate {}` lists the tasks", args.tasks.display());
            }
            return ExitCode::from(exit::USAGE);
        }
    };
    let mut unplanned = Vec::new();
    for task in &selected {
        if !planned.iter().any(|p| p.task.id == task.id) {
            unplanned.push(task.id.clone());
        }
    }
    let reporter = Arc::new(TerminalProgress::new(!args.quiet && std::io::stderr().is_terminal()));
    let mut finished = runner::execute(planned, &options, reporter.clone()).await;
    for id in unplanned {
        finished.push(runner::missing_cassette(&id, &options));
    }

    let folder = args
        .reports
        .join(chrono::Utc::now().format("%Y%m%d-%H%M%S").to_string());
    let records: Vec<_> = finished.iter().map(|f| f.record.clone()).collect();
    let written = reports::write_report(&folder, &finished);
    let colour = std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal();
    println!("{}", reports::render_terminal_summary(&records, colour));
    match written {
        Ok(_) => eprintln!("reports written to {}", folder.display()),
        Err(e) => {
            eprintln!("error: could not write the reports: {e}");
            return ExitCode::from(exit::INTERNAL);
        }
    }
    if !problems.is_empty() {
        eprintln!(
            "error: {} task(s) could not be loaded (see above); the others ran",
            problems.len()
        );
        return ExitCode::from(exit::USAGE);
    }
    if records.iter().all(|r| r.outcome == Outcome::Passed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(exit::TASK_FAILED)
    }
}

/// Progress lines on stderr: one when a run starts (terminal only) and one when it ends.
struct TerminalProgress {
    verbose: bool,
    state: Mutex<(usize, usize)>,
}

impl TerminalProgress {
    fn new(verbose: bool) -> Self {
        TerminalProgress {
            verbose,
            state: Mutex::new((0, 0)),
        }
    }
}

impl Reporter for TerminalProgress {
    fn event(&self, event: &RunnerEvent) {
        let mut state = self.state.lock().expect("progress state");
        match event {
            RunnerEvent::SuiteStarted { runs } => state.1 = *runs,
            RunnerEvent::RunStarted { label, .. } if self.verbose => {
                eprintln!("  start {label}");
            }
            RunnerEvent::Agent {
                event: AgentEvent::ToolCallFinished { .. },
                ..
            } => {}
            RunnerEvent::RunFinished { record, .. } => {
                state.0 += 1;
                eprintln!(
                    "[{}/{}] {} {}/{} {} ({} turns, {}/{} checks)",
                    state.0,
                    state.1,
                    record.task,
                    record.provider,
                    record.model,
                    record.outcome,
                    record.turns,
                    record.checks_passed,
                    record.checks_total
                );
            }
            RunnerEvent::CassetteWritten { path, .. } => {
                eprintln!("  cassette written: {}", path.display());
            }
            RunnerEvent::CassetteNotWritten { reason, .. } => {
                eprintln!("  cassette not written: {reason}");
            }
            _ => {}
        }
    }
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
