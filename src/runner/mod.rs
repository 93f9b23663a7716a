//! The runner: plans the runs of a suite (task x model x epoch), executes them in parallel, each
//! in its own workspace with its own transport (live, recording or replaying a cassette), scores
//! them, and hands the records to the reports.
//!
//! One run never stops another: a malformed cassette, a provider failure or a panic becomes that
//! run's `error` outcome. Progress goes out as [`RunnerEvent`]s to a [`Reporter`]; the runner
//! itself never prints. Depends on everything below it; nothing depends on it but the CLI.

mod plan;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use crate::agent::{Agent, AgentEvent, AgentRun, EventSink, Limits, StopCause};
use crate::cassettes::{self, CassetteHeader, CassetteMode, Player, Recorder};
use crate::conversation::Message;
use crate::providers::catalog::{self, ModelSelector};
use crate::providers::live::LiveTransport;
use crate::providers::transport::Transport;
use crate::providers::{self, ProviderError, RequestOptions};
use crate::scoring::{self, RunRecord, ScoreInputs};
use crate::tasks::Task;
use crate::tools::{ToolContext, ToolSet, edit};
use crate::workspace::{Workspace, WorkspaceDiff};

pub use plan::{PlanError, PlannedRun, plan_runs};

/// Everything `harness run` was asked to do.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub tasks_dir: PathBuf,
    pub cassettes_dir: PathBuf,
    /// Explicit models; empty means every cassette found for each task (replay and auto).
    pub models: Vec<ModelSelector>,
    pub mode: CassetteMode,
    pub jobs: usize,
    pub keep_workspaces: bool,
    pub edit_strategy: String,
    pub base_url: Option<String>,
    pub epochs: u32,
}

/// What a reporter hears while the suite runs.
#[derive(Debug, Clone)]
pub enum RunnerEvent {
    SuiteStarted { runs: usize },
    RunStarted { index: usize, label: String },
    Agent { index: usize, event: AgentEvent },
    RunFinished { index: usize, record: Box<RunRecord> },
    /// A cassette was written (record mode), or could not be.
    CassetteWritten { index: usize, path: PathBuf },
    CassetteNotWritten { index: usize, reason: String },
}

/// Receives runner events (terminal progress, later JSON or JUnit).
pub trait Reporter: Send + Sync {
    fn event(&self, event: &RunnerEvent);
}

/// The outputs of one finished run, for the reports.
#[derive(Debug, Clone)]
pub struct FinishedRun {
    pub record: RunRecord,
    pub messages: Vec<Message>,
    pub diff: Option<WorkspaceDiff>,
}

/// Runs every planned run, at most `options.jobs` at once, and returns them in plan order.
pub async fn execute(
    planned: Vec<PlannedRun>,
    options: &RunOptions,
    reporter: Arc<dyn Reporter>,
) -> Vec<FinishedRun> {
    reporter.event(&RunnerEvent::SuiteStarted {
        runs: planned.len(),
    });
    let semaphore = Arc::new(Semaphore::new(options.jobs.max(1)));
    let options = Arc::new(options.clone());
    let mut handles = Vec::with_capacity(planned.len());
    for (index, run) in planned.into_iter().enumerate() {
        let semaphore = semaphore.clone();
        let options = options.clone();
        let reporter = reporter.clone();
        let fallback = run.clone();
        let handle = tokio::spawn(async move {
            let _permit = semaphore.acquire_owned().await.expect("semaphore closed");
            reporter.event(&RunnerEvent::RunStarted {
                index,
                label: run.label(),
            });
            run_one(index, run, &options, reporter).await
        });
        handles.push((index, fallback, handle));
    }
    let mut finished = Vec::with_capacity(handles.len());
    for (index, run, handle) in handles {
        let done = match handle.await {
            Ok(done) => done,
            // A panic in one run is that run's error, never the suite's.
            Err(join) => errored(&run, format!("internal error: the run panicked: {join}")),
        };
        reporter.event(&RunnerEvent::RunFinished {
            index,
            record: Box::new(done.record.clone()),
        });
        finished.push(done);
    }
    finished
}

/// A run that could not start or crashed: an `error` outcome with `reason`.
fn errored(run: &PlannedRun, reason: String) -> FinishedRun {
    FinishedRun {
        record: scoring::error_record(
            &run.task.id,
            &run.model.provider,
            &run.model.model,
            run.epoch,
            reason,
        ),
        messages: Vec::new(),
        diff: None,
    }
}

/// The transport of one run, and what to do with it afterwards.
enum RunTransport {
    Live(Arc<dyn Transport>),
    Replay(Arc<Player>),
    Record(Arc<Recorder>),
}

impl RunTransport {
    fn transport(&self) -> Arc<dyn Transport> {
        match self {
            RunTransport::Live(t) => t.clone(),
            RunTransport::Replay(p) => p.clone(),
            RunTransport::Record(r) => r.clone(),
        }
    }
}

async fn run_one(
    index: usize,
    run: PlannedRun,
    options: &RunOptions,
    reporter: Arc<dyn Reporter>,
) -> FinishedRun {
    let started = Instant::now();
    let task = run.task.clone();
    let workspace = match Workspace::create(&task, options.keep_workspaces) {
        Ok(ws) => ws,
        Err(e) => return errored(&run, format!("could not create the workspace: {e}")),
    };
    let Some(strategy) = edit::strategy_by_name(&options.edit_strategy) else {
        return errored(
            &run,
            format!("unknown edit strategy `{}`", options.edit_strategy),
        );
    };
    let mode = effective_mode(options.mode, &run.cassette);
    let spec = match catalog::resolve(
        &run.model,
        options.base_url.as_deref(),
        mode != CassetteMode::Replay,
        |k| std::env::var(k).ok(),
    ) {
        Ok(spec) => spec,
        Err(e) => return errored(&run, e.to_string()),
    };
    let transport = match mode {
        CassetteMode::Replay => {
            match Player::load(&run.cassette, &task.normalize_rules(), workspace.path()) {
                Ok(player) => RunTransport::Replay(Arc::new(player)),
                Err(e) => return errored(&run, e.to_string()),
            }
        }
        CassetteMode::Record | CassetteMode::Auto => {
            let live: Arc<dyn Transport> = Arc::new(LiveTransport::new());
            RunTransport::Record(Arc::new(Recorder::new(
                live,
                workspace.path().to_path_buf(),
                spec.api_key.iter().cloned().collect(),
            )))
        }
        CassetteMode::Live => RunTransport::Live(Arc::new(LiveTransport::new())),
    };
    let api = spec.api;
    let provider = providers::build(spec, transport.transport());

    let tool_set = match ToolSet::new(&task.tools) {
        Ok(set) => Arc::new(set),
        Err(e) => return errored(&run, e.to_string()),
    };
    let bash_logs = match tempfile::Builder::new().prefix("harness-bash-").tempdir() {
        Ok(dir) => dir,
        Err(e) => return errored(&run, format!("could not create a temp dir: {e}")),
    };
    let mut ctx = ToolContext::new(workspace.path());
    ctx.temp_dir = bash_logs.path().to_path_buf();
    ctx.edit_strategy = strategy.clone();

    let names: Vec<&str> = tool_set.names();
    let system_prompt = task
        .system_prompt
        .clone()
        .unwrap_or_else(|| crate::agent::system_prompt::default_system_prompt(&names));
    let agent = Agent {
        provider,
        tools: tool_set.clone(),
        system_prompt: Some(system_prompt),
        options: RequestOptions::default(),
        limits: Limits {
            max_turns: task.limits.turns,
            max_wall: task.limits.wall_seconds.map(Duration::from_secs_f64),
            max_tokens: task.limits.tokens,
        },
        execution: Default::default(),
    };
    let sink: EventSink = {
        let reporter = reporter.clone();
        Arc::new(move |event| reporter.event(&RunnerEvent::Agent { index, event }))
    };
    let agent_run: AgentRun = agent.run(&task.prompt, &ctx, &sink).await;
    // The provider holds the transport; drop it so a recorder can be finished.
    drop(agent);

    let checks = scoring::run_checks(&task, workspace.path(), &ctx.env).await;
    let diff = workspace.diff();
    let divergence = match &transport {
        RunTransport::Replay(player) => player.divergence().map(|d| d.to_string()),
        _ => None,
    };
    let error = match &agent_run.stop {
        StopCause::Provider(e) if divergence.is_none() => Some(provider_error_text(e)),
        _ => None,
    };
    let mut record = scoring::score(
        &task,
        &agent_run,
        &checks,
        diff.as_ref().ok(),
        ScoreInputs {
            provider: run.model.provider.clone(),
            model: run.model.model.clone(),
            epoch: run.epoch,
            price: None,
            wall_time: started.elapsed(),
            divergence,
            error,
        },
    );
    if let RunTransport::Record(recorder) = transport {
        let header = CassetteHeader::new(
            &task.id,
            &run.model.provider,
            &run.model.model,
            api.as_str(),
            &task.tools.to_string(),
            strategy.name(),
        );
        let recorder = Arc::try_unwrap(recorder).ok();
        match (recorder, &agent_run.stop) {
            (Some(recorder), StopCause::Completed | StopCause::Limit(_)) => {
                match recorder.finish(header, &run.cassette) {
                    Ok(path) => reporter.event(&RunnerEvent::CassetteWritten { index, path }),
                    Err(e) => {
                        record.note(format!("cassette not written: {e}"));
                        reporter.event(&RunnerEvent::CassetteNotWritten {
                            index,
                            reason: e.to_string(),
                        })
                    }
                }
            }
            _ => reporter.event(&RunnerEvent::CassetteNotWritten {
                index,
                reason: "the run did not finish cleanly, so its cassette was not written".into(),
            }),
        }
    }
    drop(bash_logs);
    FinishedRun {
        record,
        messages: agent_run.messages,
        diff: diff.ok(),
    }
}

/// In `auto` mode a run replays when its cassette exists and records otherwise.
fn effective_mode(mode: CassetteMode, cassette: &Path) -> CassetteMode {
    match mode {
        CassetteMode::Auto if cassette.exists() => CassetteMode::Replay,
        CassetteMode::Auto => CassetteMode::Record,
        other => other,
    }
}

fn provider_error_text(e: &ProviderError) -> String {
    format!("provider error ({}): {e}", e.kind())
}
