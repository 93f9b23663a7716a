//! What a suite's runs are asked to do ([`RunOptions`]): where the cassettes and the report go,
//! the models, the cassette mode, the edit strategies, the sandbox, the keys and the budget.

use std::path::PathBuf;
use std::sync::Arc;

use crate::cassettes::{CassetteMode, OnDivergence};
use crate::providers::RequestOptions;
use crate::providers::catalog::{Catalog, ModelSelector};
use crate::providers::retry::RetryPolicy;
use crate::sandbox::Sandbox;
use crate::sandbox::secrets::Redactor;

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
    /// Whose words the tools answer in (today's Pi by default).
    pub tool_profile: crate::tools::profile::ToolProfile,
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
            tool_profile: Default::default(),
        }
    }
}
