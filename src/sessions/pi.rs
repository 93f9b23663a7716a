//! Pi session files (`~/.pi/agent/sessions/--<cwd>--/<timestamp>_<uuid>.jsonl`), every version:
//!
//! - version 1 (no `version` in the header): a linear list of entries without ids; each entry
//!   is the child of the one before, and a compaction names its first kept entry by index
//!   (`firstKeptEntryIndex`);
//! - version 2: a tree, every entry with an `id` and a `parentId` (`null` for the root);
//! - version 3: as version 2, with the `hookMessage` message role renamed `custom`.
//!
//! The file opens with a header (`{"type":"session","id",...,"cwd"}`); then `message`,
//! `model_change`, `thinking_level_change`, `compaction`, `branch_summary`, `custom`,
//! `custom_message`, `label` and `session_info` entries. As Pi does when it loads a session,
//! the leaf is the last entry of the file unless another is named, and the session is the
//! path from the root to it; entries on other branches are read but not on the path.
//! [`PiSession::context`] is what Pi would send the model from that path (Pi's
//! `buildSessionContext` then `convertToLlm`), and [`PiSession::tool_steps`] every tool call on
//! it with its result.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use super::{SessionError, SessionProblem, ToolStep, parse_line, read_lines};
use crate::conversation::{
    AssistantBlock, AssistantMessage, Content, Message, StopReason, ToolResultMessage, Usage,
    UserContent,
};

/// The text Pi puts around a compaction summary when it sends it to the model.
const COMPACTION_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
const COMPACTION_SUFFIX: &str = "\n</summary>";
/// The text Pi puts around a branch summary.
const BRANCH_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
const BRANCH_SUFFIX: &str = "</summary>";

/// The header line.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PiHeader {
    /// 1 when absent.
    #[serde(default)]
    pub version: Option<u32>,
    pub id: String,
    #[serde(default)]
    pub timestamp: String,
    #[serde(default)]
    pub cwd: String,
    /// The session this one was forked from (`parentSession`; version 1 said `branchedFrom`).
    #[serde(default, alias = "branchedFrom")]
    pub parent_session: Option<String>,
    /// Version 1 headers also held the model and thinking level the session started with.
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub model_id: Option<String>,
    #[serde(default)]
    pub thinking_level: Option<String>,
}

/// One entry of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct PiEntry {
    /// The line it was read from.
    pub line: usize,
    /// Its id (version 1 entries get `line-<n>`).
    pub id: String,
    pub parent_id: Option<String>,
    pub timestamp: String,
    pub kind: PiEntryKind,
}

/// What an entry holds.
#[derive(Debug, Clone, PartialEq)]
pub enum PiEntryKind {
    Message(PiMessage),
    ModelChange {
        provider: String,
        model_id: String,
    },
    ThinkingLevelChange {
        level: String,
    },
    Compaction {
        summary: String,
        /// The first entry kept in the context after the summary.
        first_kept_entry_id: Option<String>,
        tokens_before: u64,
    },
    BranchSummary {
        from_id: String,
        summary: String,
    },
    /// Extension state; not part of the context.
    Custom {
        custom_type: String,
        data: Option<Value>,
    },
    /// An extension's message; part of the context.
    CustomMessage {
        custom_type: String,
        content: UserContent,
        display: bool,
    },
    Label {
        target_id: String,
        label: Option<String>,
    },
    SessionInfo {
        name: Option<String>,
    },
    /// An entry that could not be read (an unknown type, a message that does not parse): kept
    /// so that the tree can be followed through it, reported as a problem, left out of the
    /// context.
    Unreadable,
}

/// A message entry's message (Pi's `AgentMessage`).
#[derive(Debug, Clone, PartialEq)]
pub enum PiMessage {
    User(UserContent),
    Assistant(AssistantMessage),
    ToolResult {
        result: ToolResultMessage,
        /// The tool's structured details (the edit's diff, the read's truncation, ...).
        details: Option<Value>,
    },
    /// A command the user ran with `!` (or `!!`, kept out of the context).
    BashExecution {
        command: String,
        output: String,
        exit_code: Option<i64>,
        cancelled: bool,
        truncated: bool,
        full_output_path: Option<String>,
        exclude_from_context: bool,
    },
    /// An extension's message (`hookMessage` before version 3).
    Custom {
        custom_type: String,
        content: UserContent,
        display: bool,
    },
    BranchSummary {
        summary: String,
        from_id: String,
    },
    CompactionSummary {
        summary: String,
        tokens_before: u64,
    },
}

/// A Pi session read from its file, with the path to its leaf.
#[derive(Debug, Clone)]
pub struct PiSession {
    pub file: PathBuf,
    pub header: PiHeader,
    /// The version the file was written in (1, 2, 3, ...).
    pub version: u32,
    /// Every entry read, in file order.
    pub entries: Vec<PiEntry>,
    /// Indices into `entries`, from the root to the leaf.
    pub path: Vec<usize>,
    /// Lines skipped or incomplete.
    pub problems: Vec<SessionProblem>,
}

/// What Pi would send the model from a session's path.
#[derive(Debug, Clone, PartialEq)]
pub struct PiContext {
    pub messages: Vec<Message>,
    /// The last model on the path: a model change or the model of a reply.
    pub model: Option<(String, String)>,
    /// The last thinking level on the path (`off` when none).
    pub thinking_level: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawAssistant {
    content: Vec<AssistantBlock>,
    #[serde(default)]
    api: String,
    #[serde(default)]
    provider: String,
    #[serde(default)]
    model: String,
    /// Read field by field: older files lack `totalTokens`.
    #[serde(default)]
    usage: Option<Value>,
    /// A stop reason Pi did not have is read as `stop`.
    #[serde(default)]
    stop_reason: Option<Value>,
    #[serde(default)]
    error_message: Option<String>,
    #[serde(default)]
    response_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawToolResult {
    tool_call_id: String,
    #[serde(default)]
    tool_name: String,
    #[serde(default)]
    content: Vec<Content>,
    #[serde(default)]
    details: Option<Value>,
    #[serde(default)]
    is_error: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawBash {
    command: String,
    #[serde(default)]
    output: String,
    #[serde(default)]
    exit_code: Option<i64>,
    #[serde(default)]
    cancelled: bool,
    #[serde(default)]
    truncated: bool,
    #[serde(default)]
    full_output_path: Option<String>,
    #[serde(default)]
    exclude_from_context: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawCustom {
    custom_type: String,
    content: UserContent,
    #[serde(default)]
    display: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawBranchSummary {
    summary: String,
    #[serde(default)]
    from_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawCompactionSummary {
    summary: String,
    #[serde(default)]
    tokens_before: u64,
}

/// Pi's usage, with `totalTokens` summed from the others when a file lacks it.
fn usage(value: &Value) -> Usage {
    let n = |k: &str| value.get(k).and_then(Value::as_u64).unwrap_or(0);
    let (input, output, cache_read, cache_write) =
        (n("input"), n("output"), n("cacheRead"), n("cacheWrite"));
    Usage {
        input,
        output,
        cache_read,
        cache_write,
        total_tokens: value
            .get("totalTokens")
            .and_then(Value::as_u64)
            .unwrap_or(input + output + cache_read + cache_write),
    }
}

fn field<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, String> {
    serde_json::from_value(value.clone()).map_err(|e| e.to_string())
}

fn parse_message(value: &Value, version: u32) -> Result<PiMessage, String> {
    let role = value
        .get("role")
        .and_then(Value::as_str)
        .ok_or("the message has no `role`")?;
    let bad = |e: String| format!("a `{role}` message that cannot be read: {e}");
    Ok(match role {
        "user" => {
            PiMessage::User(field(value.get("content").unwrap_or(&Value::Null)).map_err(bad)?)
        }
        "assistant" => {
            let raw: RawAssistant = field(value).map_err(bad)?;
            PiMessage::Assistant(AssistantMessage {
                content: raw.content,
                api: raw.api,
                provider: raw.provider,
                model: raw.model,
                usage: raw.usage.as_ref().map(usage).unwrap_or_default(),
                stop_reason: raw
                    .stop_reason
                    .and_then(|s| serde_json::from_value::<StopReason>(s).ok())
                    .unwrap_or(StopReason::Stop),
                error_message: raw.error_message,
                response_id: raw.response_id,
            })
        }
        "toolResult" => {
            let raw: RawToolResult = field(value).map_err(bad)?;
            PiMessage::ToolResult {
                result: ToolResultMessage {
                    tool_call_id: raw.tool_call_id,
                    tool_name: raw.tool_name,
                    content: raw.content,
                    is_error: raw.is_error,
                },
                details: raw.details,
            }
        }
        "bashExecution" => {
            let raw: RawBash = field(value).map_err(bad)?;
            PiMessage::BashExecution {
                command: raw.command,
                output: raw.output,
                exit_code: raw.exit_code,
                cancelled: raw.cancelled,
                truncated: raw.truncated,
                full_output_path: raw.full_output_path,
                exclude_from_context: raw.exclude_from_context,
            }
        }
        // Version 3 renamed the role; a version 3 file with the old name is still read.
        "custom" | "hookMessage" => {
            let _ = version;
            let raw: RawCustom = field(value).map_err(bad)?;
            PiMessage::Custom {
                custom_type: raw.custom_type,
                content: raw.content,
                display: raw.display,
            }
        }
        "branchSummary" => {
            let raw: RawBranchSummary = field(value).map_err(bad)?;
            PiMessage::BranchSummary {
                summary: raw.summary,
                from_id: raw.from_id,
            }
        }
        "compactionSummary" => {
            let raw: RawCompactionSummary = field(value).map_err(bad)?;
            PiMessage::CompactionSummary {
                summary: raw.summary,
                tokens_before: raw.tokens_before,
            }
        }
        other => return Err(format!("unknown message role `{other}`")),
    })
}

fn text_of(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

fn opt_text(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// An entry's kind; `Err` for an entry that cannot be read (the message says why).
fn parse_kind(value: &Value, version: u32) -> Result<PiEntryKind, String> {
    let kind = value.get("type").and_then(Value::as_str).unwrap_or("");
    Ok(match kind {
        "message" => PiEntryKind::Message(parse_message(
            value
                .get("message")
                .ok_or("a message entry without `message`")?,
            version,
        )?),
        "model_change" => PiEntryKind::ModelChange {
            provider: text_of(value, "provider"),
            model_id: text_of(value, "modelId"),
        },
        "thinking_level_change" => PiEntryKind::ThinkingLevelChange {
            level: text_of(value, "thinkingLevel"),
        },
        "compaction" => PiEntryKind::Compaction {
            summary: text_of(value, "summary"),
            first_kept_entry_id: opt_text(value, "firstKeptEntryId"),
            tokens_before: value
                .get("tokensBefore")
                .and_then(Value::as_u64)
                .unwrap_or(0),
        },
        "branch_summary" => PiEntryKind::BranchSummary {
            from_id: text_of(value, "fromId"),
            summary: text_of(value, "summary"),
        },
        "custom" => PiEntryKind::Custom {
            custom_type: text_of(value, "customType"),
            data: value.get("data").cloned(),
        },
        "custom_message" => PiEntryKind::CustomMessage {
            custom_type: text_of(value, "customType"),
            content: field(value.get("content").unwrap_or(&Value::Null))
                .map_err(|e| format!("a custom_message whose content cannot be read: {e}"))?,
            display: value
                .get("display")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        },
        "label" => PiEntryKind::Label {
            target_id: text_of(value, "targetId"),
            label: opt_text(value, "label"),
        },
        "session_info" => PiEntryKind::SessionInfo {
            name: opt_text(value, "name"),
        },
        "" => return Err("an entry without a `type`".to_owned()),
        other => return Err(format!("unknown entry type `{other}`")),
    })
}

/// Reads the Pi session at `path`; its path ends at the entry `leaf` if given, else at the
/// last entry of the file (as Pi resumes it).
pub fn read_session(path: &Path, leaf: Option<&str>) -> Result<PiSession, SessionError> {
    let lines = read_lines(path)?;
    let not_a_session = |line: usize, message: String| SessionError::NotASession {
        path: path.to_path_buf(),
        line,
        message,
    };
    let Some((header_line, first)) = lines.first() else {
        return Err(not_a_session(
            1,
            "the file is empty; a Pi session opens with a `session` header".to_owned(),
        ));
    };
    let header_value: Value = serde_json::from_str(first).map_err(|e| {
        not_a_session(
            *header_line,
            format!("the header is not JSON ({e}); a Pi session opens with a `session` header"),
        )
    })?;
    if header_value.get("type").and_then(Value::as_str) != Some("session") {
        return Err(not_a_session(
            *header_line,
            "the first line is not a `session` header, which a Pi session opens with (a Claude \
             Code transcript? `harness edits extract --from claude-code` reads those)"
                .to_owned(),
        ));
    }
    let header: PiHeader = serde_json::from_value(header_value)
        .map_err(|e| not_a_session(*header_line, format!("the header cannot be read: {e}")))?;
    let version = header.version.unwrap_or(1);

    let mut problems = Vec::new();
    let mut problem = |line: usize, message: String| {
        problems.push(SessionProblem {
            file: path.to_path_buf(),
            line,
            message,
        })
    };
    let mut entries: Vec<PiEntry> = Vec::new();
    // Version 1 compactions name their first kept entry by its index among the parsed lines
    // (the header is index 0), resolved once every entry has its id.
    let mut parsed_ids: Vec<Option<String>> = vec![None];
    let mut pending_first_kept: Vec<(usize, usize)> = Vec::new();
    let mut previous: Option<String> = None;
    for (number, text) in &lines[1..] {
        let value = match parse_line(text) {
            Ok(value) => value,
            Err(message) => {
                problem(*number, message);
                continue;
            }
        };
        let (id, parent_id) = if version < 2 {
            let id = format!("line-{number}");
            (id, previous.clone())
        } else {
            let Some(id) = value.get("id").and_then(Value::as_str) else {
                problem(
                    *number,
                    format!("a version {version} entry without an `id`; skipped"),
                );
                continue;
            };
            (id.to_owned(), opt_text(&value, "parentId"))
        };
        let kind = match parse_kind(&value, version) {
            Ok(kind) => kind,
            Err(message) => {
                problem(*number, format!("{message}; left out"));
                PiEntryKind::Unreadable
            }
        };
        if version < 2
            && let PiEntryKind::Compaction { .. } = kind
            && let Some(index) = value.get("firstKeptEntryIndex").and_then(Value::as_u64)
        {
            pending_first_kept.push((entries.len(), index as usize));
        }
        parsed_ids.push(Some(id.clone()));
        previous = Some(id.clone());
        entries.push(PiEntry {
            line: *number,
            id,
            parent_id,
            timestamp: text_of(&value, "timestamp"),
            kind,
        });
    }
    for (entry, index) in pending_first_kept {
        let target = parsed_ids.get(index).cloned().flatten();
        if let PiEntryKind::Compaction {
            first_kept_entry_id,
            ..
        } = &mut entries[entry].kind
        {
            *first_kept_entry_id = target;
        }
    }
    let path_indices = follow(path, &entries, leaf)?;
    Ok(PiSession {
        file: path.to_path_buf(),
        header,
        version,
        entries,
        path: path_indices,
        problems,
    })
}

/// The indices of the entries from the root to `leaf` (default: the last entry).
fn follow(
    file: &Path,
    entries: &[PiEntry],
    leaf: Option<&str>,
) -> Result<Vec<usize>, SessionError> {
    let branch = |line: usize, message: String| SessionError::Branch {
        path: file.to_path_buf(),
        line,
        message,
    };
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    for (i, e) in entries.iter().enumerate() {
        if let Some(&first) = by_id.get(e.id.as_str()) {
            return Err(branch(
                e.line,
                format!(
                    "the id `{}` is used twice (first on line {})",
                    e.id, entries[first].line
                ),
            ));
        }
        by_id.insert(&e.id, i);
    }
    let start = match leaf {
        Some(id) => *by_id.get(id).ok_or_else(|| {
            branch(
                0,
                format!("no entry has the id `{id}` given as the leaf; the ids are in the `id` field of each line"),
            )
        })?,
        None => match entries.len() {
            0 => return Ok(Vec::new()),
            n => n - 1,
        },
    };
    let mut path = vec![start];
    let mut seen: HashSet<usize> = HashSet::from([start]);
    let mut current = start;
    while let Some(parent) = entries[current].parent_id.as_deref() {
        let Some(&next) = by_id.get(parent) else {
            return Err(branch(
                entries[current].line,
                format!(
                    "entry `{}` names the parent `{parent}`, which is not in the file (a skipped line?)",
                    entries[current].id
                ),
            ));
        };
        if !seen.insert(next) {
            return Err(branch(
                entries[next].line,
                format!("the parents of entry `{}` form a cycle", entries[next].id),
            ));
        }
        path.push(next);
        current = next;
    }
    path.reverse();
    Ok(path)
}

fn user_text(text: String) -> Message {
    Message::User {
        content: UserContent::Blocks(vec![Content::text(text)]),
    }
}

fn blocks(content: &UserContent) -> Vec<Content> {
    match content {
        UserContent::Text(text) => vec![Content::text(text.clone())],
        UserContent::Blocks(blocks) => blocks.clone(),
    }
}

/// Pi's text for a `!` command (`bashExecutionToText`).
fn bash_text(
    command: &str,
    output: &str,
    exit_code: Option<i64>,
    cancelled: bool,
    truncated: bool,
    full_output_path: Option<&str>,
) -> String {
    let mut text = format!("Ran `{command}`\n");
    if output.is_empty() {
        text.push_str("(no output)");
    } else {
        text.push_str(&format!("```\n{output}\n```"));
    }
    if cancelled {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = exit_code.filter(|c| *c != 0) {
        text.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    if truncated && let Some(full) = full_output_path {
        text.push_str(&format!("\n\n[Output truncated. Full output: {full}]"));
    }
    text
}

impl PiMessage {
    /// The message as the model sees it (Pi's `convertToLlm`); `None` for one kept out.
    pub fn to_llm(&self) -> Option<Message> {
        Some(match self {
            PiMessage::User(content) => Message::User {
                content: content.clone(),
            },
            PiMessage::Assistant(message) => Message::Assistant(message.clone()),
            PiMessage::ToolResult { result, .. } => Message::ToolResult(result.clone()),
            PiMessage::BashExecution {
                exclude_from_context: true,
                ..
            } => return None,
            PiMessage::BashExecution {
                command,
                output,
                exit_code,
                cancelled,
                truncated,
                full_output_path,
                ..
            } => user_text(bash_text(
                command,
                output,
                *exit_code,
                *cancelled,
                *truncated,
                full_output_path.as_deref(),
            )),
            PiMessage::Custom { content, .. } => Message::User {
                content: UserContent::Blocks(blocks(content)),
            },
            PiMessage::BranchSummary { summary, .. } => {
                user_text(format!("{BRANCH_PREFIX}{summary}{BRANCH_SUFFIX}"))
            }
            PiMessage::CompactionSummary { summary, .. } => {
                user_text(format!("{COMPACTION_PREFIX}{summary}{COMPACTION_SUFFIX}"))
            }
        })
    }
}

impl PiSession {
    /// When the session began: the earliest timestamp of its header and entries (a session
    /// branched from another keeps the other's older entries, and its header is newer).
    pub fn started(&self) -> String {
        let parse = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
        std::iter::once(self.header.timestamp.as_str())
            .chain(self.entries.iter().map(|e| e.timestamp.as_str()))
            .filter_map(|t| parse(t).map(|d| (d, t)))
            .min_by_key(|(d, _)| *d)
            .map_or_else(|| self.header.timestamp.clone(), |(_, t)| t.to_owned())
    }

    /// The entries from the root to the leaf.
    pub fn path_entries(&self) -> impl Iterator<Item = &PiEntry> {
        self.path.iter().map(|&i| &self.entries[i])
    }

    /// What Pi would send the model from the path: with a compaction on it, the summary, the
    /// entries from its first kept entry up to it, then those after; branch summaries and
    /// extension messages as user messages.
    pub fn context(&self) -> PiContext {
        let path: Vec<&PiEntry> = self.path_entries().collect();
        let mut model = self
            .header
            .provider
            .clone()
            .zip(self.header.model_id.clone());
        let mut thinking_level = self
            .header
            .thinking_level
            .clone()
            .unwrap_or_else(|| "off".to_owned());
        let mut compaction = None;
        for (i, e) in path.iter().enumerate() {
            match &e.kind {
                PiEntryKind::ThinkingLevelChange { level } => thinking_level = level.clone(),
                PiEntryKind::ModelChange { provider, model_id } => {
                    model = Some((provider.clone(), model_id.clone()))
                }
                PiEntryKind::Message(PiMessage::Assistant(a)) => {
                    model = Some((a.provider.clone(), a.model.clone()))
                }
                PiEntryKind::Compaction { .. } => compaction = Some(i),
                _ => {}
            }
        }
        let as_message = |e: &PiEntry| -> Option<Message> {
            match &e.kind {
                PiEntryKind::Message(m) => m.to_llm(),
                PiEntryKind::CustomMessage { content, .. } => Some(Message::User {
                    content: UserContent::Blocks(blocks(content)),
                }),
                PiEntryKind::BranchSummary { summary, .. } if !summary.is_empty() => Some(
                    user_text(format!("{BRANCH_PREFIX}{summary}{BRANCH_SUFFIX}")),
                ),
                _ => None,
            }
        };
        let mut messages = Vec::new();
        match compaction {
            Some(at) => {
                let PiEntryKind::Compaction {
                    summary,
                    first_kept_entry_id,
                    ..
                } = &path[at].kind
                else {
                    unreachable!("the index of a compaction");
                };
                messages.push(user_text(format!(
                    "{COMPACTION_PREFIX}{summary}{COMPACTION_SUFFIX}"
                )));
                let mut kept = false;
                for e in &path[..at] {
                    kept |= first_kept_entry_id.as_deref() == Some(e.id.as_str());
                    if kept {
                        messages.extend(as_message(e));
                    }
                }
                messages.extend(path[at + 1..].iter().filter_map(|e| as_message(e)));
            }
            None => messages.extend(path.iter().filter_map(|e| as_message(e))),
        }
        PiContext {
            messages,
            model,
            thinking_level,
        }
    }

    /// Every tool call on the path with its result (the first result on the path after it
    /// with its id), in order. A call without a result (Pi was stopped, or the line was lost)
    /// is a problem and left out.
    pub fn tool_steps(&self) -> (Vec<ToolStep>, Vec<SessionProblem>) {
        let path: Vec<&PiEntry> = self.path_entries().collect();
        let mut results: HashMap<&str, Vec<(usize, &PiEntry)>> = HashMap::new();
        for (i, e) in path.iter().enumerate() {
            if let PiEntryKind::Message(PiMessage::ToolResult { result, .. }) = &e.kind {
                results
                    .entry(result.tool_call_id.as_str())
                    .or_default()
                    .push((i, e));
            }
        }
        let mut steps = Vec::new();
        let mut problems = Vec::new();
        let mut turn = 0u32;
        for (i, e) in path.iter().enumerate() {
            let PiEntryKind::Message(PiMessage::Assistant(reply)) = &e.kind else {
                continue;
            };
            turn += 1;
            for call in reply.tool_calls() {
                let found = results
                    .get(call.id.as_str())
                    .and_then(|rs| rs.iter().find(|(j, _)| *j > i));
                let Some((_, result_entry)) = found else {
                    problems.push(SessionProblem {
                        file: self.file.clone(),
                        line: e.line,
                        message: format!(
                            "the `{}` call `{}` has no result on the session's path; left out",
                            call.name, call.id
                        ),
                    });
                    continue;
                };
                let PiEntryKind::Message(PiMessage::ToolResult { result, details }) =
                    &result_entry.kind
                else {
                    continue;
                };
                steps.push(ToolStep {
                    line: e.line,
                    result_line: result_entry.line,
                    turn,
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    is_error: result.is_error,
                    text: result
                        .content
                        .iter()
                        .filter_map(Content::as_text)
                        .collect::<Vec<_>>()
                        .join("\n"),
                    details: details.clone(),
                });
            }
        }
        (steps, problems)
    }
}
