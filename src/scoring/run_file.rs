//! The run file: everything one run leaves behind for the reports, as `runs/<run>/run.json`
//! holds it. The runner builds it when a run ends and hands it to the report writers; `harness
//! compare` (and later `harness merge`) read it back from disk, so a report folder can be written
//! again from its run folders alone.
//!
//! It is the [`RunRecord`] (the row of `runs.csv`, with the checks and their output) plus what a
//! transcript needs: the system prompt, the messages, the tool-call records and the workspace
//! diff. Reading is lenient (missing fields take their defaults, unknown ones are ignored), so a
//! newer harness reads an older file and the other way round. Depends on `agent`, `conversation`
//! and `workspace` only for the types it copies; never on the reports or the runner.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::agent::AgentRun;
pub use crate::agent::ToolCallRecord;
use crate::conversation::Message;
pub use crate::tools::{EditReport, MatchTier};
use crate::workspace::WorkspaceDiff;

use super::RunRecord;

/// The version of the `run.json` layout; bumped only when a field changes meaning.
pub const RUN_FILE_FORMAT: u32 = 1;

/// The name of the run file in a run's folder.
pub const RUN_FILE_NAME: &str = "run.json";

/// Everything a run leaves behind, as `runs/<run>/run.json` holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFile {
    /// [`RUN_FILE_FORMAT`] of the harness that wrote it.
    #[serde(default = "default_format")]
    pub format: u32,
    pub record: RunRecord,
    /// The edit strategy the run used (`pi`, `exact`, ...); `None` when not known (a run that
    /// never started, a file written before strategies were recorded).
    #[serde(default)]
    pub edit_strategy: Option<String>,
    /// The system prompt the run used.
    #[serde(default)]
    pub system_prompt: Option<String>,
    /// The whole history, starting with the task prompt; empty for a run that never started.
    #[serde(default)]
    pub messages: Vec<Message>,
    /// Every executed tool call with its result, telemetry and duration.
    #[serde(default)]
    pub tool_calls: Vec<ToolCallRecord>,
    /// The unified diff of what the agent changed in its workspace.
    #[serde(default)]
    pub diff: String,
}

fn default_format() -> u32 {
    RUN_FILE_FORMAT
}

impl RunFile {
    /// The file of a run that went through the agent loop.
    pub fn new(
        record: RunRecord,
        run: &AgentRun,
        diff: &WorkspaceDiff,
        system_prompt: Option<String>,
        edit_strategy: Option<String>,
    ) -> RunFile {
        RunFile {
            format: RUN_FILE_FORMAT,
            record,
            edit_strategy,
            system_prompt,
            messages: run.messages.clone(),
            tool_calls: run.tool_calls.clone(),
            diff: diff.unified.clone(),
        }
    }

    /// The file of a run that has nothing but its record (skipped, or ended before the agent
    /// started).
    pub fn record_only(record: RunRecord) -> RunFile {
        RunFile {
            format: RUN_FILE_FORMAT,
            record,
            edit_strategy: None,
            system_prompt: None,
            messages: Vec::new(),
            tool_calls: Vec::new(),
            diff: String::new(),
        }
    }

    /// `runs/<run>/run.json`, relative to the report folder.
    pub fn relative_path(&self) -> PathBuf {
        Path::new(&self.record.run_dir()).join(RUN_FILE_NAME)
    }

    /// The tool-call record of the call with `id`, if it ran.
    pub fn tool_call(&self, id: &str) -> Option<&ToolCallRecord> {
        self.tool_calls.iter().find(|t| t.call.id == id)
    }
}

/// `exact` or `fuzzy`: the name a report shows for a match tier.
pub fn tier_name(tier: MatchTier) -> &'static str {
    match tier {
        MatchTier::Exact => "exact",
        MatchTier::Fuzzy => "fuzzy",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoring::skipped_record;

    #[test]
    fn a_run_file_round_trips_and_reads_leniently() {
        let file = RunFile::record_only(skipped_record("t", "p", "m", 2, "budget spent"));
        let json = serde_json::to_string(&file).unwrap();
        let back: RunFile = serde_json::from_str(&json).unwrap();
        assert_eq!(back, file);
        assert_eq!(
            file.relative_path(),
            PathBuf::from("runs/t--p--m--e2/run.json")
        );
        // A file from another version: no `format`, an unknown field, no transcript.
        let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
        let object = value.as_object_mut().unwrap();
        object.remove("format");
        object.remove("messages");
        object.insert("written_by_a_later_harness".into(), serde_json::json!(1));
        let lenient: RunFile = serde_json::from_value(value).unwrap();
        assert_eq!(lenient, file);
    }
}
