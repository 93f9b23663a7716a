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
    /// The tool profiles, each an arm of its own with each edit strategy (`--tool-profile`,
    /// repeatable); empty means today's tools.
    pub tool_profiles: Vec<crate::tools::profile::ToolProfile>,
}

impl RunOptions {
    /// The arms, in the order given, each once: every edit strategy (the default when none)
    /// under every tool profile (today's when none), named by the strategy, with `@<profile>`
    /// for a profile other than today's (`pi`, `exact@pi-0.14`). Reports, run folders and the
    /// paired comparison treat each as an edit strategy arm.
    pub fn strategies(&self) -> Vec<String> {
        let mut strategies: Vec<String> = Vec::new();
        for s in &self.edit_strategies {
            if !strategies.contains(s) {
                strategies.push(s.clone());
            }
        }
        if strategies.is_empty() {
            strategies.push(crate::record::DEFAULT_EDIT_STRATEGY.to_owned());
        }
        let mut profiles = self.tool_profiles.clone();
        profiles.dedup();
        if profiles.is_empty() {
            profiles.push(Default::default());
        }
        let mut out = Vec::new();
        for profile in &profiles {
            for s in &strategies {
                let arm = arm_label(s, *profile);
                if !out.contains(&arm) {
                    out.push(arm);
                }
            }
        }
        out
    }
}

/// The arm of edit strategy `strategy` under `profile`: the strategy's name, with
/// `@<profile>` when the profile is not today's.
pub fn arm_label(strategy: &str, profile: crate::tools::profile::ToolProfile) -> String {
    if profile == Default::default() {
        strategy.to_owned()
    } else {
        format!("{strategy}@{profile}")
    }
}

/// The edit strategy and tool profile an arm label names ([`arm_label`]'s inverse); a label
/// whose profile part is not a profile is taken whole as a strategy.
pub fn split_arm(label: &str) -> (&str, crate::tools::profile::ToolProfile) {
    match label.rsplit_once('@') {
        Some((strategy, profile)) => match crate::tools::profile::ToolProfile::parse(profile) {
            Ok(profile) => (strategy, profile),
            Err(_) => (label, Default::default()),
        },
        None => (label, Default::default()),
    }
}

/// Runs in flight when `--jobs` is not given: one per core.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
}

impl RunOptions {
    /// Options with the defaults of `harness run`: replay, one job per core, Pi's edit strategy,
    /// the process environment for keys, its allow-listed part for commands, the default sandbox
    /// (`isolated` where namespaces can be made, else `workspace`).
    pub fn new(cassettes_dir: PathBuf, report_dir: PathBuf) -> Self {
        RunOptions::with_sandbox(cassettes_dir, report_dir, Sandbox::detect(None))
    }

    /// [`RunOptions::new`] under `sandbox` (the command line's, detected once: detecting the
    /// default as well would start and probe a sandbox maker for nothing).
    pub fn with_sandbox(cassettes_dir: PathBuf, report_dir: PathBuf, sandbox: Sandbox) -> Self {
        RunOptions {
            tasks_dir: PathBuf::from("tasks/"),
            cassettes_dir,
            report_dir,
            models: Vec::new(),
            mode: CassetteMode::Replay,
            on_divergence: OnDivergence::Stop,
            ci: false,
            jobs: default_jobs(),
            keep_workspaces: false,
            edit_strategies: Vec::new(),
            base_url: None,
            epochs: 1,
            catalog: Arc::new(Catalog::default()),
            key_env: Arc::new(|k| std::env::var(k).ok()),
            command_env: Arc::new(crate::sandbox::env::base_env(std::env::vars())),
            sandbox,
            redactor: Redactor::default(),
            retry: RetryPolicy::default(),
            request: RequestOptions::default(),
            max_cost: None,
            tool_profiles: Vec::new(),
        }
    }
}

#[cfg(test)]
mod arm_tests {
    use super::*;
    use crate::tools::profile::ToolProfile;

    #[test]
    fn each_strategy_runs_under_each_profile_and_the_label_says_which() {
        let mut options = RunOptions::new("c".into(), "r".into());
        assert_eq!(options.strategies(), ["pi"]);
        options.edit_strategies = vec!["pi".into(), "exact".into()];
        options.tool_profiles = vec![ToolProfile::Pi014, ToolProfile::Pi073];
        assert_eq!(
            options.strategies(),
            ["pi@pi-0.14", "exact@pi-0.14", "pi", "exact"]
        );
        assert_eq!(split_arm("exact@pi-0.14"), ("exact", ToolProfile::Pi014));
        assert_eq!(split_arm("pi"), ("pi", ToolProfile::Pi073));
        // A strategy spelled with an @ that names no profile is a strategy.
        assert_eq!(split_arm("chain:a@b"), ("chain:a@b", ToolProfile::Pi073));
    }
}
