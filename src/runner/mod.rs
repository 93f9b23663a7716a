//! The runner: plans the runs of a suite (task x model x epoch), executes them in parallel, each
//! in its own workspace with its own transport (live, recording or replaying a cassette), scores
//! them, writes each run's transcript and diff as soon as it ends, and returns the records.
//!
//! One run never stops another: a missing or malformed cassette, a provider failure or a panic
//! becomes that run's `error` outcome. Progress goes out as [`RunnerEvent`]s to a [`Reporter`];
//! the runner itself never prints. Depends on everything below it; only the CLI depends on it.

mod plan;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::Semaphore;

use crate::agent::{Agent, AgentEvent, EventSink, StopCause};
use crate::cassettes::compare::NormalizeRule;
use crate::cassettes::{
    CassetteError, CassetteHeader, CassetteMode, CassettePlan, Player, Recorder,
};
use crate::providers::catalog::{Catalog, ModelSelector};
use crate::providers::limiter::Limiter;
use crate::providers::live::LiveTransport;
use crate::providers::retry::{RetryPolicy, RetryStats, Retrying};
use crate::providers::transport::Transport;
use crate::providers::{self, OpenAiCompat, Provider, ProviderSettings, RequestOptions};
use crate::reports;
use crate::scoring::{self, RunFile, RunRecord, ScoreInputs};
use crate::tasks::Task;
use crate::tools::{ToolContext, ToolSet, bash, edit};
use crate::workspace::Workspace;

pub use plan::{PlanError, PlannedRun, plan_runs, recorded_models};

/// Looks an environment variable up (API keys).
pub type KeyLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Everything `harness run` was asked to do.
#[derive(Clone)]
pub struct RunOptions {
    pub cassettes_dir: PathBuf,
    /// Where this invocation's report folder is; run folders are written as runs finish.
    pub report_dir: PathBuf,
    /// Explicit models; empty means every cassette recorded for each task (replay and auto).
    pub models: Vec<ModelSelector>,
    pub mode: CassetteMode,
    pub jobs: usize,
    pub keep_workspaces: bool,
    pub edit_strategy: String,
    pub base_url: Option<String>,
    pub epochs: u32,
    pub catalog: Arc<Catalog>,
    /// Looks up environment variables for API keys (the process environment in the CLI).
    pub key_env: KeyLookup,
    /// The environment agent commands and checks run with (already scrubbed of secrets).
    pub command_env: Arc<Vec<(String, String)>>,
    pub retry: RetryPolicy,
    pub request: RequestOptions,
    /// Stop starting runs once this many dollars are spent.
    pub max_cost: Option<f64>,
}

impl RunOptions {
    /// Options with the defaults of `harness run`: replay, one job per core, Pi's edit strategy,
    /// the process environment for keys, its scrubbed copy for commands.
    pub fn new(cassettes_dir: PathBuf, report_dir: PathBuf) -> Self {
        RunOptions {
            cassettes_dir,
            report_dir,
            models: Vec::new(),
            mode: CassetteMode::Replay,
            jobs: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2),
            keep_workspaces: false,
            edit_strategy: "pi".to_owned(),
            base_url: None,
            epochs: 1,
            catalog: Arc::new(Catalog::default()),
            key_env: Arc::new(|k| std::env::var(k).ok()),
            command_env: Arc::new(bash::scrubbed_env(std::env::vars())),
            retry: RetryPolicy::default(),
            request: RequestOptions::default(),
            max_cost: None,
        }
    }
}

/// What a reporter hears while the suite runs.
#[derive(Debug, Clone)]
pub enum RunnerEvent {
    SuiteStarted {
        runs: usize,
    },
    RunStarted {
        index: usize,
        label: String,
    },
    Agent {
        index: usize,
        event: AgentEvent,
    },
    RunFinished {
        index: usize,
        record: Box<RunRecord>,
    },
    /// A cassette was written (record mode).
    CassetteWritten {
        index: usize,
        path: PathBuf,
    },
    /// A recording run's cassette was not written, and why.
    CassetteNotWritten {
        index: usize,
        reason: String,
    },
}

/// Receives runner events (terminal progress now; JSON or JUnit later).
pub trait Reporter: Send + Sync {
    fn event(&self, event: &RunnerEvent);
}

/// A reporter that ignores everything.
pub struct Silent;

impl Reporter for Silent {
    fn event(&self, _: &RunnerEvent) {}
}

/// Shared by all runs of one invocation.
struct SuiteState {
    limiters: Mutex<HashMap<String, Arc<Limiter>>>,
    spent: Mutex<f64>,
}

impl SuiteState {
    fn limiter(&self, provider: &str, max: usize) -> Arc<Limiter> {
        self.limiters
            .lock()
            .expect("limiters")
            .entry(provider.to_owned())
            .or_insert_with(|| Limiter::new(max))
            .clone()
    }
}

/// Runs every planned run, at most `options.jobs` at once; returns the records in plan order.
pub async fn execute(
    planned: Vec<PlannedRun>,
    options: &RunOptions,
    reporter: Arc<dyn Reporter>,
) -> Vec<RunRecord> {
    reporter.event(&RunnerEvent::SuiteStarted {
        runs: planned.len(),
    });
    let semaphore = Arc::new(Semaphore::new(options.jobs.max(1)));
    let options = Arc::new(options.clone());
    let state = Arc::new(SuiteState {
        limiters: Mutex::new(HashMap::new()),
        spent: Mutex::new(0.0),
    });
    let mut handles = Vec::with_capacity(planned.len());
    for (index, run) in planned.into_iter().enumerate() {
        let semaphore = semaphore.clone();
        let options = options.clone();
        let reporter = reporter.clone();
        let state = state.clone();
        let fallback = run.clone();
        // Taking the place here, before spawning, starts the runs in plan order.
        let permit = semaphore.acquire_owned().await.expect("semaphore closed");
        let handle = tokio::spawn(async move {
            let _permit = permit;
            if let Some(budget) = options.max_cost {
                let spent = *state.spent.lock().expect("spent");
                if spent >= budget {
                    return scoring::skipped_record(
                        &run.task.id,
                        &run.model.provider,
                        &run.model.model,
                        run.epoch,
                        &format!(
                            "not started: the --max-cost budget of ${budget:.2} is spent (${spent:.2})"
                        ),
                    );
                }
            }
            reporter.event(&RunnerEvent::RunStarted {
                index,
                label: run.label(),
            });
            let record = run_one(index, &run, &options, &state, reporter.clone()).await;
            if let Some(cost) = record.cost {
                *state.spent.lock().expect("spent") += cost;
            }
            record
        });
        handles.push((index, fallback, handle));
    }
    let mut records = Vec::with_capacity(handles.len());
    for (index, run, handle) in handles {
        let record = match handle.await {
            Ok(record) => record,
            // A panic in one run is that run's error, never the suite's.
            Err(join) => errored(
                &run,
                "setup",
                format!("internal error: the run panicked: {join}"),
            ),
        };
        reporter.event(&RunnerEvent::RunFinished {
            index,
            record: Box::new(record.clone()),
        });
        records.push(record);
    }
    records
}

/// The record of a run that could not start or crashed.
fn errored(run: &PlannedRun, kind: &str, reason: String) -> RunRecord {
    scoring::score_without_run(
        &run.task,
        ScoreInputs {
            provider: run.model.provider.clone(),
            model: run.model.model.clone(),
            epoch: run.epoch,
            error: Some(reason),
            error_kind: Some(kind.to_owned()),

            ..Default::default()
        },
    )
}

/// The record of a task that has no cassette to replay (no run was planned for it).
pub fn missing_cassette_record(task: &Task, cassettes_dir: &Path) -> RunRecord {
    let folder = cassettes_dir.join(crate::cassettes::sanitize_component(&task.id));
    scoring::score_without_run(
        task,
        ScoreInputs {
            provider: "-".into(),
            model: "-".into(),
            epoch: 1,
            error: Some(format!(
                "no cassette recorded for task `{}` in {}; record one with `{}`",
                task.id,
                folder.display(),
                crate::cassettes::record_hint(&task.id, "PROVIDER", "MODEL")
            )),
            error_kind: Some("cassette".to_owned()),

            ..Default::default()
        },
    )
}

/// The transport of one run, kept to ask it afterwards.
enum RunTransport {
    Live(Arc<dyn Transport>),
    Replay(Player),
    Record(Arc<Recorder>),
}

impl RunTransport {
    fn transport(&self) -> Arc<dyn Transport> {
        match self {
            RunTransport::Live(t) => t.clone(),
            RunTransport::Replay(p) => Arc::new(p.clone()),
            RunTransport::Record(r) => r.clone(),
        }
    }
}

/// Rules every replay applies on top of the task's: bash's full-output file name is random and
/// lives outside the workspace, so it is compared as a placeholder.
fn builtin_rules() -> Vec<NormalizeRule> {
    vec![
        NormalizeRule::new(
            r"[^\s\]]*pi-bash-[0-9a-f]{16}\.log",
            "<bash-output>/pi-bash.log",
        )
        .expect("valid built-in rule"),
    ]
}

/// The transport of one run: a cassette player, a recorder over the live transport, or the live
/// transport alone. An error comes with its error kind for the record.
fn open_transport(
    plan: CassettePlan,
    run: &PlannedRun,
    workspace: &Path,
    api_key: &Option<String>,
) -> Result<RunTransport, (&'static str, String)> {
    if plan == CassettePlan::Replay {
        let mut rules = builtin_rules();
        for rule in &run.task.normalize {
            let rule = NormalizeRule::new(&rule.pattern, rule.replacement.clone())
                .map_err(|e| ("setup", format!("bad normalize rule: {e}")))?;
            rules.push(rule);
        }
        let player = Player::load(&run.cassette, rules, workspace).map_err(|e| {
            // The player can only guess the ids back from the (sanitised) file name; the
            // hint to record the cassette should name the real ones.
            let e = match e {
                CassetteError::Missing { .. } => CassetteError::missing(
                    &run.cassette,
                    &run.task.id,
                    &run.model.provider,
                    &run.model.model,
                ),
                other => other,
            };
            ("cassette", e.to_string())
        })?;
        return Ok(RunTransport::Replay(player));
    }
    let live: Arc<dyn Transport> =
        Arc::new(LiveTransport::new().map_err(|e| ("setup", e.to_string()))?);
    Ok(if plan == CassettePlan::Record {
        RunTransport::Record(Arc::new(Recorder::new(
            live,
            workspace.to_path_buf(),
            api_key.iter().cloned().collect(),
        )))
    } else {
        RunTransport::Live(live)
    })
}

async fn run_one(
    index: usize,
    run: &PlannedRun,
    options: &RunOptions,
    state: &SuiteState,
    reporter: Arc<dyn Reporter>,
) -> RunRecord {
    let started = Instant::now();
    let task = run.task.clone();
    let Some(strategy) = edit::strategy_by_name(&options.edit_strategy) else {
        return errored(
            run,
            "setup",
            format!(
                "unknown edit strategy `{}`; known: {}",
                options.edit_strategy,
                edit::strategy_names().join(", ")
            ),
        );
    };
    let plan = options.mode.plan(run.cassette.exists());
    let entry = match options.catalog.provider(&run.model.provider) {
        Ok(entry) => entry.clone(),
        Err(e) => return errored(run, "setup", e.to_string()),
    };
    let spec = match options.catalog.resolve(
        &run.model,
        options.base_url.as_deref(),
        plan != CassettePlan::Replay,
        &*options.key_env,
    ) {
        Ok(spec) => spec,
        Err(e) => return errored(run, "authentication", e.to_string()),
    };
    let workspace = match Workspace::create(&task, options.keep_workspaces) {
        Ok(ws) => ws,
        Err(e) => return errored(run, "setup", format!("could not create the workspace: {e}")),
    };
    let transport = match open_transport(plan, run, workspace.path(), &spec.api_key) {
        Ok(transport) => transport,
        Err((kind, reason)) => return errored(run, kind, reason),
    };
    let api = spec.api;
    let settings = ProviderSettings {
        openai_compat: Some(OpenAiCompat::from_config(&spec, &entry.compat)),
        ..Default::default()
    };
    let inner: Arc<dyn Provider> = providers::build_with(spec, transport.transport(), settings);
    let retry = if plan == CassettePlan::Replay {
        // A replay retries exactly as the recording did, without waiting.
        options.retry.clone().without_waiting()
    } else {
        options.retry.clone()
    };
    let retrying = Retrying::new(
        inner,
        retry,
        Some(state.limiter(&entry.name, entry.max_in_flight)),
    );
    let retry_stats: Arc<RetryStats> = retrying.stats();
    let provider: Arc<dyn Provider> = Arc::new(retrying);

    let tool_set = match ToolSet::new(&task.tools) {
        Ok(set) => Arc::new(set),
        Err(e) => return errored(run, "setup", e.to_string()),
    };
    let bash_logs = match tempfile::Builder::new().prefix("harness-bash-").tempdir() {
        Ok(dir) => dir,
        Err(e) => return errored(run, "setup", format!("could not create a temp dir: {e}")),
    };
    let mut ctx = ToolContext::new(workspace.path());
    ctx.temp_dir = bash_logs.path().to_path_buf();
    ctx.edit_strategy = strategy.clone();
    ctx.env = options.command_env.clone();

    let system_prompt = task
        .system_prompt
        .clone()
        .unwrap_or_else(|| crate::agent::system_prompt::default_system_prompt(&tool_set.names()));
    let agent = Agent {
        provider,
        tools: tool_set.clone(),
        system_prompt: Some(system_prompt.clone()),
        options: options.request.clone(),
        limits: task.limits.clone(),
        execution: Default::default(),
    };
    let sink: EventSink = {
        let reporter = reporter.clone();
        Arc::new(move |event| reporter.event(&RunnerEvent::Agent { index, event }))
    };
    let agent_run = agent.run(&task.prompt, &ctx, &sink).await;
    // The provider holds the transport; let it go before finishing a recording.
    drop(agent);

    let checks = scoring::run_checks(&task, workspace.path(), &options.command_env).await;
    let diff = match workspace.diff() {
        Ok(diff) => diff,
        Err(e) => crate::workspace::WorkspaceDiff {
            unified: format!("(the diff could not be computed: {e})\n"),
            ..Default::default()
        },
    };
    let divergence = match &transport {
        RunTransport::Replay(player) => player.divergence().map(|d| d.to_string()).or_else(|| {
            let unused = player.unused_interactions();
            (unused > 0 && matches!(agent_run.stop, StopCause::Completed)).then(|| {
                format!(
                    "the run ended after {} requests but the cassette has {} more; the recorded conversation went on",
                    player.served(),
                    unused
                )
            })
        }),
        _ => None,
    };
    let (error, error_kind) = match &agent_run.stop {
        StopCause::Provider(e) if divergence.is_none() => (
            Some(format!("provider error ({}): {e}", e.kind())),
            Some(e.kind().to_owned()),
        ),
        _ => (None, None),
    };
    let mut record = scoring::score(
        &task,
        &agent_run,
        checks,
        &diff,
        ScoreInputs {
            provider: run.model.provider.clone(),
            model: run.model.model.clone(),
            epoch: run.epoch,
            price: options.catalog.price(&run.model),
            wall_time: started.elapsed(),
            divergence,
            error,
            error_kind,
            retries: u32::try_from(retry_stats.retries()).unwrap_or(u32::MAX),
            attempts: u32::try_from(retry_stats.attempts()).unwrap_or(u32::MAX),
        },
    );
    if let Err(e) = reports::write_run_artifacts(
        &options.report_dir,
        &RunFile::new(
            record.clone(),
            &agent_run,
            &diff,
            Some(system_prompt.clone()),
            Some(strategy.name().to_owned()),
        ),
    ) {
        add_note(
            &mut record,
            format!("the run's transcript could not be written: {e}"),
        );
    }
    if let RunTransport::Record(recorder) = &transport {
        let header = CassetteHeader::new(
            task.id.clone(),
            run.model.provider.clone(),
            run.model.model.clone(),
            api,
            "pi",
            strategy.name(),
        );
        let written = match &agent_run.stop {
            StopCause::Completed | StopCause::Limit(_) => recorder
                .finish(header, &run.cassette)
                .map_err(|e| e.to_string()),
            stop => Err(format!(
                "the run ended with {}, so its cassette was not written",
                scoring::stop_label(stop)
            )),
        };
        match written {
            Ok(path) => reporter.event(&RunnerEvent::CassetteWritten { index, path }),
            Err(reason) => {
                add_note(&mut record, format!("cassette not written: {reason}"));
                reporter.event(&RunnerEvent::CassetteNotWritten { index, reason });
            }
        }
    }
    if options.keep_workspaces {
        let kept = workspace.into_kept_path();
        add_note(&mut record, format!("workspace kept at {}", kept.display()));
    }
    drop(bash_logs);
    record
}

/// Appends a line to the record's detail text.
fn add_note(record: &mut RunRecord, note: String) {
    match &mut record.detail {
        Some(detail) => {
            detail.push('\n');
            detail.push_str(&note);
        }
        None => record.detail = Some(note),
    }
}
