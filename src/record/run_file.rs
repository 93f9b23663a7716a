//! The run file: everything one run leaves behind for the reports, as `runs/<run>/run.json`
//! holds it. The runner builds it when a run ends and hands it to the report writers; `harness
//! compare` and `harness merge` read it back from disk, so a report folder can be written again
//! from its run folders alone.
//!
//! It is the [`RunRecord`] (the row of `runs.csv`, with the checks and their output) plus what a
//! transcript needs: the system prompt, the messages, the tool-call records and the workspace
//! diff. Reading is lenient (missing fields take their defaults, unknown ones are ignored), so a
//! newer harness reads an older file and the other way round.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::run_record::RunRecord;
use super::tool_call::ToolCallRecord;
use crate::conversation::Message;

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
        messages: Vec<Message>,
        tool_calls: Vec<ToolCallRecord>,
        diff: String,
        system_prompt: Option<String>,
        edit_strategy: Option<String>,
    ) -> RunFile {
        RunFile {
            format: RUN_FILE_FORMAT,
            record,
            edit_strategy,
            system_prompt,
            messages,
            tool_calls,
            diff,
        }
    }

    /// The file of a run that has nothing but its record (skipped, or ended before the agent
    /// started).
    pub fn record_only(record: RunRecord) -> RunFile {
        RunFile::new(record, Vec::new(), Vec::new(), String::new(), None, None)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_file_round_trips_and_reads_leniently() {
        let file = RunFile::record_only(RunRecord::skipped("t", "p", "m", 2, "budget spent"));
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
