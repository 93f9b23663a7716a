//! The runner: plans the runs of a suite (task x model x epoch), executes them in parallel, each
//! in its own workspace with its own transport (live, recording or replaying a cassette), scores
//! them, writes each run's transcript and diff as soon as it ends, and returns the records.
//!
//! One run never stops another: a missing or malformed cassette, a provider failure or a panic
//! becomes that run's `error` outcome. Progress goes out as [`RunnerEvent`]s to a [`Reporter`];
//! the runner itself never prints. Depends on everything below it; only the CLI depends on it.

pub mod fingerprint;
pub mod journal;
pub mod manifest;
pub mod merge;
pub mod partition;
mod plan;
pub mod resume;
mod run;
mod session;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;
use tokio::task::{JoinError, JoinSet};
pub use tokio_util::sync::CancellationToken;

use crate::agent::AgentEvent;
use crate::cassettes::compare::{NormalizeRule, Rules};
use crate::cassettes::{CassetteMode, OnDivergence};
use crate::edits::CorpusWriter;
use crate::providers::RequestOptions;
use crate::providers::catalog::{Catalog, ModelSelector};
use crate::providers::limiter::Limiter;
use crate::providers::retry::RetryPolicy;
use crate::record::{ErrorKind, RunRecord};
use crate::sandbox::Sandbox;
use crate::sandbox::secrets::Redactor;
use crate::scoring::{self, ScoreInputs};
use crate::tasks::Task;

pub use plan::{PlanError, PlannedRun, plan_runs, recorded_models};
pub use session::pending_path;

/// Looks an environment variable up (API keys).
pub type KeyLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Everything `harness run` was asked to do.
#[derive(Clone)]
pub struct RunOptions {
    /// The tasks folder the user named (for hints).
    pub tasks_dir: PathBuf,
    pub cassettes_dir: PathBuf,
    /// Where this invocation's report folder is; run folders are written as runs finish.
    pub report_dir: PathBuf,
    /// Explicit models; empty means every cassette recorded for each task (replay and auto).
    pub models: Vec<ModelSelector>,
    pub mode: CassetteMode,
    /// What a replay does when a request differs from its recording.
    pub on_divergence: OnDivergence,
    /// Whether `CI` is set: a re-recording then writes nothing and says what it would write.
    pub ci: bool,
    pub jobs: usize,
    pub keep_workspaces: bool,
    /// The edit strategies, each an arm of its own (`--edit-strategy`, repeatable); empty
    /// means [`crate::record::DEFAULT_EDIT_STRATEGY`].
    pub edit_strategies: Vec<String>,
    pub base_url: Option<String>,
    pub epochs: u32,
    pub catalog: Arc<Catalog>,
    /// Looks up environment variables for API keys (the CLI: the sealed keys, then the
    /// environment).
    pub key_env: KeyLookup,
    /// The allow-listed environment agent commands and checks start from; each run adds its
    /// `HOME`, `TMPDIR` and the task's declared variables ([`crate::sandbox::env`]).
    pub command_env: Arc<Vec<(String, String)>>,
    /// The sandbox tier the agent's commands and tools run under.
    pub sandbox: Sandbox,
    /// Removes secret values from transcripts and diffs (the run's key is added per run).
    pub redactor: Redactor,
    pub retry: RetryPolicy,
    pub request: RequestOptions,
    /// Stop starting runs once this many dollars are spent.
    pub max_cost: Option<f64>,
}

impl RunOptions {
    /// The edit strategies of the arms, in the order given, each once; the default when none.
    pub fn strategies(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in &self.edit_strategies {
            if !out.contains(s) {
                out.push(s.clone());
            }
        }
        if out.is_empty() {
            out.push(crate::record::DEFAULT_EDIT_STRATEGY.to_owned());
        }
        out
    }

    /// Options with the defaults of `harness run`: replay, one job per core, Pi's edit strategy,
    /// the process environment for keys, its allow-listed part for commands, the default sandbox
    /// (`isolated` where bubblewrap works, else `workspace`).
    pub fn new(cassettes_dir: PathBuf, report_dir: PathBuf) -> Self {
        RunOptions {
            tasks_dir: PathBuf::from("tasks/"),
            cassettes_dir,
            report_dir,
            models: Vec::new(),
            mode: CassetteMode::Replay,
            on_divergence: OnDivergence::Stop,
            ci: false,
            jobs: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2),
            keep_workspaces: false,
            edit_strategies: Vec::new(),
            base_url: None,
            epochs: 1,
            catalog: Arc::new(Catalog::default()),
            key_env: Arc::new(|k| std::env::var(k).ok()),
            command_env: Arc::new(crate::sandbox::env::base_env(std::env::vars())),
            sandbox: Sandbox::detect(None),
            redactor: Redactor::default(),
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
    /// A re-recorded cassette was written beside the old one (`NAME.yaml.new`) for review.
    CassetteProposed {
        index: usize,
        path: PathBuf,
    },
    /// A recording run's cassette was not written, and why.
    CassetteNotWritten {
        index: usize,
        reason: String,
    },
    /// Something the user should know about a run, said once (a replay under other settings
    /// than its recording, what a re-recording would have written under `CI`).
    Notice {
        index: usize,
        message: String,
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
pub(crate) struct SuiteState {
    limiters: Mutex<HashMap<String, Arc<Limiter>>>,
    spent: Mutex<f64>,
    /// The report folder's edit corpus (`edits.jsonl`), one for all runs; `None` when it could
    /// not be created (each run then notes that its edits were not kept).
    pub(crate) corpus: Mutex<Option<CorpusWriter>>,
    /// Cancelled when the harness is interrupted; each run's tools get a child of it.
    pub(crate) interrupt: CancellationToken,
    /// The suite's HTTP client for live providers, made by the first run that needs it.
    pub(crate) live: std::sync::OnceLock<Arc<crate::providers::live::LiveTransport>>,
    /// Each task's compare rules, compiled by its first run.
    rules: Mutex<HashMap<String, Rules>>,
}

impl SuiteState {
    pub(crate) fn limiter(&self, provider: &str, max: usize) -> Arc<Limiter> {
        self.limiters
            .lock()
            .expect("limiters")
            .entry(provider.to_owned())
            .or_insert_with(|| Limiter::new(max))
            .clone()
    }

    /// The rules a replay of `task` compares with: its own after the built-in ones, compiled
    /// once for all of its runs.
    pub(crate) fn compare_rules(&self, task: &Task) -> Result<Rules, String> {
        let builtin = crate::cassettes::noise::rules(task.normalize_defaults);
        if task.normalize.is_empty() {
            return Ok(builtin);
        }
        let mut cache = self.rules.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(rules) = cache.get(&task.id) {
            return Ok(rules.clone());
        }
        let mut rules = builtin.to_vec();
        for rule in &task.normalize {
            rules.push(
                NormalizeRule::new(&rule.pattern, rule.replacement.clone())
                    .map_err(|e| format!("bad normalize rule: {e}"))?,
            );
        }
        let rules: Rules = rules.into();
        cache.insert(task.id.clone(), rules.clone());
        Ok(rules)
    }
}

/// Runs every planned run, at most `options.jobs` at once; returns the records in plan order.
pub async fn execute(
    planned: Vec<PlannedRun>,
    options: &RunOptions,
    reporter: Arc<dyn Reporter>,
) -> Vec<RunRecord> {
    execute_until(planned, options, reporter, CancellationToken::new())
        .await
        .records
}

/// What [`execute_until`] got done.
#[derive(Debug, Default)]
pub struct Execution {
    /// The records of the runs that finished (or were skipped for the budget), in plan order.
    pub records: Vec<RunRecord>,
    /// Runs that had started when the stop came: cancelled, their processes killed, their
    /// workspaces removed, nothing of them kept.
    pub interrupted: usize,
    /// Runs the stop came before.
    pub not_started: usize,
}

/// How one run's task ended.
enum Ended {
    Finished(Box<RunRecord>),
    Interrupted,
    NotStarted,
}

/// [`execute`] until `stop` is cancelled (Ctrl-C, SIGTERM): from then on no run starts, and
/// every running one is cancelled at once (its tools' cancellation fires, the agent loop and
/// the checks are dropped, which kills every process they started through the sandbox and
/// removes the workspace and scratch folders) and reported as neither finished nor recorded.
pub async fn execute_until(
    planned: Vec<PlannedRun>,
    options: &RunOptions,
    reporter: Arc<dyn Reporter>,
    stop: CancellationToken,
) -> Execution {
    reporter.event(&RunnerEvent::SuiteStarted {
        runs: planned.len(),
    });
    let semaphore = Arc::new(Semaphore::new(options.jobs.max(1)));
    let options = Arc::new(options.clone());
    let state = Arc::new(SuiteState {
        limiters: Mutex::new(HashMap::new()),
        spent: Mutex::new(0.0),
        corpus: Mutex::new(CorpusWriter::append(&options.report_dir).ok()),
        interrupt: stop.clone(),
        live: std::sync::OnceLock::new(),
        rules: Mutex::new(HashMap::new()),
    });
    // Each run's outcome is put in its place as soon as its task ends, so that a finished run
    // holds only its record: a task's cell (sized for the whole run's future) is freed when it
    // is joined, and at most `jobs` tasks are alive at once, however many runs are planned.
    let mut ended: Vec<Option<Ended>> = Vec::new();
    ended.resize_with(planned.len(), || None);
    let mut running = JoinSet::new();
    let mut started: HashMap<tokio::task::Id, (usize, PlannedRun)> = HashMap::new();
    let settle = |done: Result<(tokio::task::Id, Ended), JoinError>,
                  started: &mut HashMap<tokio::task::Id, (usize, PlannedRun)>,
                  ended: &mut Vec<Option<Ended>>| {
        let (index, outcome) = match done {
            Ok((id, outcome)) => (started.remove(&id).expect("a started run").0, outcome),
            // A panic in one run is that run's error, never the suite's.
            Err(join) => {
                let (index, run) = started.remove(&join.id()).expect("a started run");
                let record = errored(
                    &run,
                    ErrorKind::Setup,
                    format!("internal error: the run panicked: {join}"),
                );
                reporter.event(&RunnerEvent::RunFinished {
                    index,
                    record: Box::new(record.clone()),
                });
                (index, Ended::Finished(Box::new(record)))
            }
        };
        ended[index] = Some(outcome);
    };
    for (index, run) in planned.into_iter().enumerate() {
        // Taking the place here, before spawning, starts the runs in plan order; runs that end
        // while this one waits for its place are settled meanwhile. A stop starts nothing more.
        let permit = loop {
            tokio::select! {
                biased;
                () = stop.cancelled() => break None,
                permit = semaphore.clone().acquire_owned() => break Some(permit.expect("semaphore closed")),
                Some(done) = running.join_next_with_id() => settle(done, &mut started, &mut ended),
            }
        };
        let Some(permit) = permit else { break };
        let options = options.clone();
        let reporter = reporter.clone();
        let state = state.clone();
        let fallback = run.clone();
        let stop = stop.clone();
        let handle = running.spawn(async move {
            let _permit = permit;
            if stop.is_cancelled() {
                return Ended::NotStarted;
            }
            if let Some(budget) = options.max_cost {
                let spent = *state.spent.lock().expect("spent");
                if spent >= budget {
                    let mut record = crate::record::RunRecord::skipped(
                        &run.task.id,
                        &run.model.provider,
                        &run.model.model,
                        run.epoch,
                        &format!(
                            "not started: the --max-cost budget of ${budget:.2} is spent (${spent:.2})"
                        ),
                    );
                    record.set_edit_strategy(&run.edit_strategy);
                    return Ended::Finished(Box::new(record));
                }
            }
            reporter.event(&RunnerEvent::RunStarted {
                index,
                label: run.label(),
            });
            // A run starts from nothing: an earlier attempt's folder (a resumed report) goes.
            let _fresh = std::fs::remove_dir_all(options.report_dir.join(run.run_dir()));
            let record = tokio::select! {
                biased;
                () = stop.cancelled() => return Ended::Interrupted,
                record = run::run_one(index, &run, &options, &state, reporter.clone()) => record,
            };
            if let Some(cost) = record.cost {
                *state.spent.lock().expect("spent") += cost;
            }
            // Said as each run ends, not in plan order: progress must not wait for slow runs.
            reporter.event(&RunnerEvent::RunFinished {
                index,
                record: Box::new(record.clone()),
            });
            Ended::Finished(Box::new(record))
        });
        started.insert(handle.id(), (index, fallback));
    }
    while let Some(done) = running.join_next_with_id().await {
        settle(done, &mut started, &mut ended);
    }
    let mut out = Execution::default();
    for outcome in ended {
        match outcome {
            Some(Ended::Finished(record)) => out.records.push(*record),
            Some(Ended::Interrupted) => out.interrupted += 1,
            Some(Ended::NotStarted) | None => out.not_started += 1,
        }
    }
    out
}

/// The record of a run that could not start or crashed.
pub(crate) fn errored(run: &PlannedRun, kind: ErrorKind, reason: String) -> RunRecord {
    scoring::score_without_run(
        &run.task,
        ScoreInputs {
            provider: run.model.provider.clone(),
            model: run.model.model.clone(),
            epoch: run.epoch,
            edit_strategy: run.edit_strategy.clone(),
            error: Some(reason),
            error_kind: Some(kind),

            ..Default::default()
        },
    )
}

/// The record of a task that has no cassette to replay (no run was planned for it).
pub fn missing_cassette_record(task: &Task, tasks_dir: &Path, cassettes_dir: &Path) -> RunRecord {
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
                crate::cassettes::record_hint_in(
                    tasks_dir,
                    cassettes_dir,
                    &task.id,
                    "PROVIDER",
                    "MODEL"
                )
            )),
            error_kind: Some(ErrorKind::Cassette),

            ..Default::default()
        },
    )
}
