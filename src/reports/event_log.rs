//! `events.jsonl`: the runner's event stream, one JSON object per line, written and flushed as
//! each event happens (a crashed or killed run still leaves every event up to that point).
//!
//! Every line has `event` (its kind, snake_case), `at` (UTC, RFC 3339 with milliseconds) and the
//! event's fields; agent events nest the agent's event under `agent`. Model replies and tool
//! calls appear as the transcripts show them.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Map, Value, json};

use crate::agent::AgentEvent;
use crate::events::{Reporter, RunnerEvent};

/// The file name in a report folder.
pub const EVENTS_JSONL: &str = "events.jsonl";

/// Writes every event to a JSON-lines file.
pub struct EventLog {
    path: PathBuf,
    out: Mutex<BufWriter<File>>,
}

impl EventLog {
    /// Creates (or truncates) `path`, and its folder.
    pub fn create(path: &Path) -> std::io::Result<EventLog> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        Ok(EventLog {
            path: path.to_path_buf(),
            out: Mutex::new(BufWriter::new(File::create(path)?)),
        })
    }

    /// Opens `path` for appending when `append` (a resumed report keeps its events), else
    /// creates or truncates it.
    pub fn open(path: &Path, append: bool) -> std::io::Result<EventLog> {
        if !append {
            return EventLog::create(path);
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(EventLog {
            path: path.to_path_buf(),
            out: Mutex::new(BufWriter::new(file)),
        })
    }

    /// Where the log goes.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Reporter for EventLog {
    fn event(&self, event: &RunnerEvent) {
        let mut line = event_json(event);
        line["at"] = json!(
            chrono::Utc::now()
                .format("%Y-%m-%dT%H:%M:%S%.3fZ")
                .to_string()
        );
        let mut out = self.out.lock().expect("event log");
        // A full disk must not stop the run; the report says what it can.
        let _ = serde_json::to_writer(&mut *out, &line);
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }
}

/// One event as JSON (without its time).
pub fn event_json(event: &RunnerEvent) -> Value {
    match event {
        RunnerEvent::SuiteStarted { runs } => json!({"event": "suite_started", "runs": runs}),
        RunnerEvent::RunStarted { index, label } => {
            json!({"event": "run_started", "index": index, "label": label})
        }
        // Not `json!`, which would copy the agent's event once more through the serializer.
        RunnerEvent::Agent { index, event } => Value::Object(Map::from_iter([
            ("event".to_owned(), json!("agent")),
            ("index".to_owned(), json!(index)),
            ("agent".to_owned(), agent_json(event)),
        ])),
        RunnerEvent::RunFinished { index, record } => {
            json!({"event": "run_finished", "index": index, "record": record})
        }
        RunnerEvent::CassetteWritten { index, path } => {
            json!({"event": "cassette_written", "index": index, "path": path})
        }
        RunnerEvent::CassetteNotWritten { index, reason } => {
            json!({"event": "cassette_not_written", "index": index, "reason": reason})
        }
        RunnerEvent::CassetteProposed { index, path } => {
            json!({"event": "cassette_proposed", "index": index, "path": path})
        }
        RunnerEvent::Notice { index, message } => {
            json!({"event": "notice", "index": index, "message": message})
        }
    }
}

fn agent_json(event: &AgentEvent) -> Value {
    match event {
        AgentEvent::TurnStarted { turn } => json!({"event": "turn_started", "turn": turn}),
        AgentEvent::ModelReply {
            turn,
            message,
            elapsed,
        } => json!({
            "event": "model_reply",
            "turn": turn,
            "elapsed_ms": elapsed.as_millis() as u64,
            "message": message,
        }),
        AgentEvent::ToolCallStarted { turn, call } => {
            json!({"event": "tool_call_started", "turn": turn, "call": call})
        }
        AgentEvent::ToolCallFinished {
            turn,
            call_id,
            tool_name,
            is_error,
            elapsed,
        } => json!({
            "event": "tool_call_finished",
            "turn": turn,
            "call_id": call_id,
            "tool_name": tool_name,
            "is_error": is_error,
            "elapsed_ms": elapsed.as_millis() as u64,
        }),
        AgentEvent::RunFinished { stop } => {
            json!({"event": "run_finished", "stop": stop.label()})
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use std::sync::Arc;

    use super::*;
    use crate::agent::StopCause;
    use crate::conversation::ToolCall;
    use crate::events::Fanout;

    #[test]
    fn every_event_is_one_flushed_json_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report/events.jsonl");
        let log = EventLog::create(&path).unwrap();
        let events = [
            RunnerEvent::SuiteStarted { runs: 1 },
            RunnerEvent::RunStarted {
                index: 0,
                label: "t p/m #1".into(),
            },
            RunnerEvent::Agent {
                index: 0,
                event: AgentEvent::ToolCallStarted {
                    turn: 1,
                    call: ToolCall {
                        id: "c1".into(),
                        name: "bash".into(),
                        arguments: json!({"command": "echo '</script>'"}),
                        thought_signature: None,
                    },
                },
            },
            RunnerEvent::Agent {
                index: 0,
                event: AgentEvent::ToolCallFinished {
                    turn: 1,
                    call_id: "c1".into(),
                    tool_name: "bash".into(),
                    is_error: false,
                    elapsed: Duration::from_millis(12),
                },
            },
            RunnerEvent::Agent {
                index: 0,
                event: AgentEvent::RunFinished {
                    stop: StopCause::Completed,
                },
            },
            RunnerEvent::RunFinished {
                index: 0,
                record: Box::new(crate::record::RunRecord::skipped("t", "p", "m", 1, "why")),
            },
        ];
        let fan = Fanout(vec![Arc::new(log)]);
        for (i, event) in events.iter().enumerate() {
            fan.event(event);
            // Flushed as it happens: the file has every line so far.
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(text.lines().count(), i + 1);
        }
        let lines: Vec<Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let kinds: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "suite_started",
                "run_started",
                "agent",
                "agent",
                "agent",
                "run_finished"
            ]
        );
        assert_eq!(
            lines[2]["agent"]["call"]["arguments"]["command"],
            "echo '</script>'"
        );
        assert_eq!(lines[3]["agent"]["elapsed_ms"], 12);
        assert_eq!(lines[4]["agent"]["stop"], "completed");
        assert_eq!(lines[5]["record"]["outcome"], "skipped");
        assert!(lines[0]["at"].as_str().unwrap().ends_with('Z'));
    }
}
