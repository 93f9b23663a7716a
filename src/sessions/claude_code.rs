//! Claude Code transcripts (`~/.claude/projects/<cwd with - for />/<session id>.jsonl`).
//!
//! Each line is a JSON object with a `type`. The ones read here: `assistant` lines hold the
//! model's reply in `message` (Anthropic Messages form: `content` blocks `text`, `thinking`,
//! `tool_use {id, name, input}`; one line per block, sharing `message.id`); `user` lines hold
//! the user's text or `tool_result {tool_use_id, content, is_error}` blocks, and for a tool
//! result the tool's structured outcome in `toolUseResult`. Lines of other known types
//! (`summary`, `system`, `file-history-snapshot`, `queue-operation`, ...) carry no tool
//! traffic and are passed over; lines of a sub-agent (`isSidechain: true`) too.
//!
//! Lines are taken in file order, which is the order things happened on disk (a rewound
//! branch's edits did happen), not along `parentUuid`.
//!
//! The shape of `toolUseResult` is not documented by Anthropic; what is used here was inferred
//! from public transcript viewers and notes (see the README, "Edit corpora from real
//! sessions"): for `Edit`, `{filePath, oldString, newString, originalFile, structuredPatch,
//! userModified, replaceAll}`; for `MultiEdit`, `{filePath, edits, originalFileContents,
//! structuredPatch}`; for `Write`, `{type: create|update, filePath, content, originalFile}`;
//! for `Read`, `{type: text, file: {filePath, content, startLine, numLines, totalLines}}`; for
//! a failed call, a string.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{SessionError, SessionProblem, ToolStep, parse_line, read_lines};

/// Line types that carry no tool traffic.
const PASSED_OVER: &[&str] = &[
    "summary",
    "system",
    "file-history-snapshot",
    "queue-operation",
    "progress",
    "custom-title",
    "agent-name",
    "tag",
    "last-prompt",
    "pr-link",
];

/// A Claude Code transcript's tool calls with their results.
#[derive(Debug, Clone)]
pub struct Transcript {
    pub file: PathBuf,
    /// The `sessionId` of its lines (the file stem when none has one).
    pub session_id: String,
    /// The `cwd` of its first line that has one.
    pub cwd: String,
    /// The `timestamp` of its first line that has one (when the session started).
    pub started: String,
    pub steps: Vec<ToolStep>,
    pub problems: Vec<SessionProblem>,
}

struct Call {
    line: usize,
    turn: u32,
    id: String,
    name: String,
    input: Value,
}

/// The text of a `tool_result`'s content: a string, or text blocks.
fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Reads the transcript at `path`.
pub fn read_transcript(path: &Path) -> Result<Transcript, SessionError> {
    let lines = read_lines(path)?;
    if lines.is_empty() {
        return Err(SessionError::NotASession {
            path: path.to_path_buf(),
            line: 1,
            message: "the file is empty".to_owned(),
        });
    }
    let mut problems = Vec::new();
    let mut problem = |line: usize, message: String| {
        problems.push(SessionProblem {
            file: path.to_path_buf(),
            line,
            message,
        })
    };
    let mut session_id = None;
    let mut cwd = None;
    let mut started = None;
    let mut calls: Vec<Call> = Vec::new();
    let mut open: HashMap<String, usize> = HashMap::new();
    let mut answered: HashSet<usize> = HashSet::new();
    let mut steps: Vec<ToolStep> = Vec::new();
    let mut replies: HashSet<String> = HashSet::new();
    let mut turn = 0u32;
    for (number, text) in &lines {
        let value = match parse_line(text) {
            Ok(value) => value,
            Err(message) => {
                problem(*number, message);
                continue;
            }
        };
        if started.is_none() {
            started = value
                .get("timestamp")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
        if kind != "user" && kind != "assistant" {
            if !PASSED_OVER.contains(&kind) {
                problem(
                    *number,
                    if kind.is_empty() {
                        "a line without a `type`; skipped".to_owned()
                    } else {
                        format!("unknown line type `{kind}`; skipped")
                    },
                );
            }
            continue;
        }
        if value.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        if session_id.is_none() {
            session_id = value
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_owned);
        }
        if cwd.is_none() {
            cwd = value.get("cwd").and_then(Value::as_str).map(str::to_owned);
        }
        let content = value.get("message").and_then(|m| m.get("content"));
        if kind == "assistant" {
            let id = value
                .get("message")
                .and_then(|m| m.get("id"))
                .and_then(Value::as_str)
                .map_or_else(|| format!("line-{number}"), str::to_owned);
            if replies.insert(id) {
                turn += 1;
            }
            for block in content.and_then(Value::as_array).into_iter().flatten() {
                if block.get("type").and_then(Value::as_str) != Some("tool_use") {
                    continue;
                }
                let (Some(id), Some(name)) = (
                    block.get("id").and_then(Value::as_str),
                    block.get("name").and_then(Value::as_str),
                ) else {
                    problem(
                        *number,
                        "a `tool_use` block without an id or name; skipped".to_owned(),
                    );
                    continue;
                };
                open.insert(id.to_owned(), calls.len());
                calls.push(Call {
                    line: *number,
                    turn,
                    id: id.to_owned(),
                    name: name.to_owned(),
                    input: block.get("input").cloned().unwrap_or(Value::Null),
                });
            }
            continue;
        }
        let results: Vec<&Value> = content
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .collect();
        for block in &results {
            let Some(id) = block.get("tool_use_id").and_then(Value::as_str) else {
                problem(
                    *number,
                    "a `tool_result` without a `tool_use_id`; skipped".to_owned(),
                );
                continue;
            };
            let Some(&index) = open.get(id) else {
                problem(
                    *number,
                    format!("a result for `{id}`, which no earlier `tool_use` asked for; skipped"),
                );
                continue;
            };
            if !answered.insert(index) {
                problem(*number, format!("a second result for `{id}`; skipped"));
                continue;
            }
            let call = &calls[index];
            // One result per line is how Claude Code writes them; `toolUseResult` belongs to
            // it (with several, it cannot be told whose it is).
            let details = (results.len() == 1)
                .then(|| value.get("toolUseResult").cloned())
                .flatten();
            steps.push(ToolStep {
                line: call.line,
                result_line: *number,
                turn: call.turn,
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.input.clone(),
                is_error: block
                    .get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                text: result_text(block.get("content")),
                details,
            });
        }
    }
    for (i, call) in calls.iter().enumerate() {
        if !answered.contains(&i) {
            problem(
                call.line,
                format!(
                    "the `{}` call `{}` has no result in the transcript; left out",
                    call.name, call.id
                ),
            );
        }
    }
    problems.sort_by_key(|p| p.line);
    Ok(Transcript {
        file: path.to_path_buf(),
        session_id: session_id.unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        }),
        cwd: cwd.unwrap_or_default(),
        started: started.unwrap_or_default(),
        steps,
        problems,
    })
}
