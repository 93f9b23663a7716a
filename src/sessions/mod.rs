//! Real agent sessions read back: Pi session files ([`pi`]) and Claude Code transcripts
//! ([`claude_code`]), so that what an agent really did can become tasks, cassettes and edit
//! corpora.
//!
//! Both readers are lenient the way the agents themselves are (a line that does not parse is
//! skipped) but never silent: every skipped line, unknown entry type and tool call without a
//! result becomes a [`SessionProblem`] naming the file and line, and reading goes on. A file
//! that cannot be used at all (unreadable, no header, a branch that cannot be followed) is a
//! [`SessionError`].
//!
//! Both formats belong to other programs and grow fields between versions, so their types do
//! not deny unknown fields (unlike our own input formats).
//!
//! Depends on `conversation` only; `edits` builds corpora from what it reads.

pub mod claude_code;
pub mod pi;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// A line of a session that was skipped or is incomplete, and why. Reading went on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionProblem {
    pub file: PathBuf,
    /// 1-based.
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for SessionProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
    }
}

/// A session file that cannot be used at all.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("failed to read the session `{path}`: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is not a session of the expected kind (no header, empty, ...).
    #[error("{}:{line}: {message}", path.display())]
    NotASession {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// The path from the leaf to the root cannot be followed (a missing parent, a cycle, an
    /// unknown `--leaf`).
    #[error("{}:{line}: the session's branch cannot be followed: {message}", path.display())]
    Branch {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// One tool call of a session with its result, in the order the agent made them: what an edit
/// corpus replays.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolStep {
    /// The line of the call.
    pub line: usize,
    /// The line of its result.
    pub result_line: usize,
    /// 1-based count of model replies up to and including the call's.
    pub turn: u32,
    pub id: String,
    pub name: String,
    pub arguments: Value,
    pub is_error: bool,
    /// The result's text blocks, joined.
    pub text: String,
    /// Structured data the agent kept beside the result: Pi's `details`, Claude Code's
    /// `toolUseResult`.
    pub details: Option<Value>,
}

/// The lines of a JSONL file with their 1-based numbers, blank lines left out; a byte-order
/// mark at its start (as Windows editors save files) is not part of the first line.
pub(crate) fn read_lines(path: &Path) -> Result<Vec<(usize, String)>, SessionError> {
    let bytes = std::fs::read(path).map_err(|source| SessionError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&bytes);
    let text = String::from_utf8_lossy(bytes);
    Ok(text
        .split('\n')
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| (i + 1, l.trim_end_matches('\r').to_owned()))
        .collect())
}

/// A line that must be a JSON object; `Err` with what to report (the line is skipped).
pub(crate) fn parse_line(text: &str) -> Result<Value, String> {
    match serde_json::from_str(text) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err("not a JSON object; skipped".to_owned()),
        Err(e) => Err(format!("not valid JSON ({e}), a truncated line?; skipped")),
    }
}

/// Which agent wrote a session file, judged by its first non-blank line: Pi's files open with
/// a `{"type":"session", ...}` header; anything else that is a JSON object is taken for a
/// Claude Code transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionKind {
    Pi,
    ClaudeCode,
}

/// Sniffs `path` (see [`SessionKind`]); `None` if its first line is not a JSON object.
pub fn detect(path: &Path) -> Result<Option<SessionKind>, SessionError> {
    let lines = read_lines(path)?;
    let Some((_, first)) = lines.first() else {
        return Ok(None);
    };
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(first) else {
        return Ok(None);
    };
    Ok(Some(
        if map.get("type").and_then(Value::as_str) == Some("session") {
            SessionKind::Pi
        } else {
            SessionKind::ClaudeCode
        },
    ))
}

#[cfg(test)]
mod tests;
