//! Events: what the runner says while a suite runs ([`RunnerEvent`]: runs starting and
//! finishing, the agent's turns and tool calls, cassettes written), and the [`Reporter`]s that
//! hear them (the terminal's progress, the journal, `events.jsonl`). The runner only emits;
//! reporters only read, and never talk back. Depends on `agent` (its events) and `record`.

use std::path::PathBuf;
use std::sync::Arc;

use crate::agent::AgentEvent;
use crate::record::RunRecord;

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

/// Hears runner events.
pub trait Reporter: Send + Sync {
    fn event(&self, event: &RunnerEvent);
}

/// A reporter that ignores everything.
pub struct Silent;

impl Reporter for Silent {
    fn event(&self, _: &RunnerEvent) {}
}

/// Sends every event to each of its reporters, in order.
pub struct Fanout(pub Vec<Arc<dyn Reporter>>);

impl Reporter for Fanout {
    fn event(&self, event: &RunnerEvent) {
        for reporter in &self.0 {
            reporter.event(event);
        }
    }
}
