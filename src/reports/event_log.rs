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

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::agent::AgentEvent;
use crate::events::{Reporter, RunnerEvent};
use crate::sandbox::secrets::Redactor;

/// The file name in a report folder.
pub const EVENTS_JSONL: &str = "events.jsonl";

/// Writes every event to a JSON-lines file, every secret its redactor knows replaced (a
/// provider's error can quote its URL; a model can echo what it read).
pub struct EventLog {
    path: PathBuf,
    out: Mutex<BufWriter<File>>,
    redactor: Redactor,
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
            redactor: Redactor::default(),
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
            redactor: Redactor::default(),
        })
    }

    /// The log with `redactor` applied to every line.
    pub fn redacting(self, redactor: Redactor) -> EventLog {
        EventLog { redactor, ..self }
    }

    /// Where the log goes.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Reporter for EventLog {
    fn event(&self, event: &RunnerEvent) {
        let at = chrono::Utc::now()
            .format("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string();
        let Ok(line) = serde_json::to_string(&Line { event, at: &at }) else {
            return;
        };
        let mut line = match self.redactor.redact_json(&line) {
            std::borrow::Cow::Borrowed(_) => line,
            std::borrow::Cow::Owned(redacted) => redacted,
        }
        .into_bytes();
        line.push(b'\n');
        let mut out = self.out.lock().expect("event log");
        // A full disk must not stop the run; the report says what it can.
        let _ = out.write_all(&line);
        let _ = out.flush();
    }
}

/// One event's line: `event`, the event's fields, then `at`; an agent event nested under
/// `agent`. Serialised straight from the event, without a JSON tree of it first.
struct Line<'a> {
    event: &'a RunnerEvent,
    at: &'a str,
}

impl Serialize for Line<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_map(None)?;
        match self.event {
            RunnerEvent::SuiteStarted { runs } => {
                m.serialize_entry("event", "suite_started")?;
                m.serialize_entry("runs", runs)?;
            }
            RunnerEvent::RunStarted { index, label } => {
                m.serialize_entry("event", "run_started")?;
                m.serialize_entry("index", index)?;
                m.serialize_entry("label", label)?;
            }
            RunnerEvent::Agent { index, event } => {
                m.serialize_entry("event", "agent")?;
                m.serialize_entry("index", index)?;
                m.serialize_entry("agent", &AgentLine(event))?;
            }
            RunnerEvent::RunFinished { index, record } => {
                m.serialize_entry("event", "run_finished")?;
                m.serialize_entry("index", index)?;
                m.serialize_entry("record", record)?;
            }
            RunnerEvent::CassetteWritten { index, path } => {
                m.serialize_entry("event", "cassette_written")?;
                m.serialize_entry("index", index)?;
                m.serialize_entry("path", &path.to_string_lossy())?;
            }
            RunnerEvent::CassetteNotWritten { index, reason } => {
                m.serialize_entry("event", "cassette_not_written")?;
                m.serialize_entry("index", index)?;
                m.serialize_entry("reason", reason)?;
            }
            RunnerEvent::CassetteProposed { index, path } => {
                m.serialize_entry("event", "cassette_proposed")?;
                m.serialize_entry("index", index)?;
                m.serialize_entry("path", &path.to_string_lossy())?;
            }
            RunnerEvent::Notice { index, message } => {
                m.serialize_entry("event", "notice")?;
                m.serialize_entry("index", index)?;
                m.serialize_entry("message", message)?;
            }
        }
        m.serialize_entry("at", self.at)?;
        m.end()
    }
}

/// An agent event, under `agent` in its line.
struct AgentLine<'a>(&'a AgentEvent);

impl Serialize for AgentLine<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_map(None)?;
        match self.0 {
            AgentEvent::TurnStarted { turn } => {
                m.serialize_entry("event", "turn_started")?;
                m.serialize_entry("turn", turn)?;
            }
            AgentEvent::ModelReply {
                turn,
                message,
                elapsed,
            } => {
                m.serialize_entry("event", "model_reply")?;
                m.serialize_entry("turn", turn)?;
                m.serialize_entry("elapsed_ms", &millis(elapsed))?;
                m.serialize_entry("message", message)?;
            }
            AgentEvent::ToolCallStarted { turn, call } => {
                m.serialize_entry("event", "tool_call_started")?;
                m.serialize_entry("turn", turn)?;
                m.serialize_entry("call", call)?;
            }
            AgentEvent::ToolCallFinished {
                turn,
                call_id,
                tool_name,
                is_error,
                elapsed,
            } => {
                m.serialize_entry("event", "tool_call_finished")?;
                m.serialize_entry("turn", turn)?;
                m.serialize_entry("call_id", call_id)?;
                m.serialize_entry("tool_name", tool_name)?;
                m.serialize_entry("is_error", is_error)?;
                m.serialize_entry("elapsed_ms", &millis(elapsed))?;
            }
            AgentEvent::RunFinished { stop } => {
                m.serialize_entry("event", "run_finished")?;
                m.serialize_entry("stop", &stop.label())?;
            }
        }
        m.end()
    }
}

fn millis(elapsed: &std::time::Duration) -> u64 {
    u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use std::sync::Arc;

    use serde_json::{Value, json};

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

    #[test]
    fn a_line_holds_the_event_s_fields_in_order_then_its_time() {
        use crate::conversation::AssistantMessage;
        let line = |event: &RunnerEvent| {
            serde_json::to_string(&Line {
                event,
                at: "2026-12-04T06:00:00.123Z",
            })
            .unwrap()
        };
        let reply = RunnerEvent::Agent {
            index: 3,
            event: AgentEvent::ModelReply {
                turn: 2,
                message: Box::new(AssistantMessage::interrupted(
                    "openai-completions",
                    "openai",
                    "m",
                    "stopped \u{1F600} \"quoted\"".into(),
                )),
                elapsed: Duration::from_micros(41_900),
            },
        };
        let text = line(&reply);
        assert!(
            text.starts_with(
                r#"{"event":"agent","index":3,"agent":{"event":"model_reply","turn":2,"elapsed_ms":41,"message":{"#
            ),
            "{text}"
        );
        assert!(
            text.ends_with(r#"},"at":"2026-12-04T06:00:00.123Z"}"#),
            "{text}"
        );
        // The message as the transcripts show it.
        let parsed: Value = serde_json::from_str(&text).unwrap();
        let RunnerEvent::Agent {
            event: AgentEvent::ModelReply { message, .. },
            ..
        } = &reply
        else {
            unreachable!()
        };
        assert_eq!(
            parsed["agent"]["message"],
            serde_json::to_value(message).unwrap()
        );
        assert_eq!(
            line(&RunnerEvent::CassetteWritten {
                index: 0,
                path: "cassettes/t/p--m.yaml".into(),
            }),
            r#"{"event":"cassette_written","index":0,"path":"cassettes/t/p--m.yaml","at":"2026-12-04T06:00:00.123Z"}"#
        );
        assert_eq!(
            line(&RunnerEvent::Agent {
                index: 1,
                event: AgentEvent::ToolCallFinished {
                    turn: 4,
                    call_id: "c9".into(),
                    tool_name: "edit".into(),
                    is_error: true,
                    elapsed: Duration::from_millis(7),
                },
            }),
            r#"{"event":"agent","index":1,"agent":{"event":"tool_call_finished","turn":4,"call_id":"c9","tool_name":"edit","is_error":true,"elapsed_ms":7},"at":"2026-12-04T06:00:00.123Z"}"#
        );
        // A path that is not UTF-8 is written lossily, not dropped.
        let odd = std::path::PathBuf::from(
            <std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(
                b"c/\xff.yaml".to_vec(),
            ),
        );
        assert!(
            line(&RunnerEvent::CassetteProposed {
                index: 2,
                path: odd
            })
            .contains("\"path\":\"c/\u{FFFD}.yaml\""),
        );
    }
}
