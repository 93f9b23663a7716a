//! What the runs of one suite share while they run: the providers' request limiters, the money
//! spent, the edit corpus writer, the interrupt, the HTTP client and each task's compiled
//! compare rules.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use crate::cassettes::normalize::{NormalizeRule, Rules};
use crate::edits::CorpusWriter;
use crate::providers::limiter::Limiter;
use crate::tasks::Task;

/// Shared by all runs of one invocation.
pub(crate) struct SuiteState {
    pub(crate) limiters: Mutex<HashMap<String, Arc<Limiter>>>,
    pub(crate) spent: Mutex<f64>,
    /// The report folder's edit corpus (`edits.jsonl`), one for all runs; `None` when it could
    /// not be created (each run then notes that its edits were not kept).
    pub(crate) corpus: Mutex<Option<CorpusWriter>>,
    /// Cancelled when the harness is interrupted; each run's tools get a child of it.
    pub(crate) interrupt: CancellationToken,
    /// The suite's HTTP client for live providers, made by the first run that needs it.
    pub(crate) live: std::sync::OnceLock<Arc<crate::providers::live::LiveTransport>>,
    /// Each task's compare rules, compiled by its first run.
    pub(crate) rules: Mutex<HashMap<String, Rules>>,
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
