//! Per-run transcripts: `transcript.md` (readable: the prompt, every assistant turn's thinking,
//! text and tool calls, every tool result with errors flagged, the stop cause and the checks) and
//! `transcript.json` (the messages and tool-call records as JSON).

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::conversation::{AssistantBlock, Content, Message, UserContent};
use crate::record::ToolCallRecord;
use crate::record::{Outcome, RunFile};

use super::cells::{UserTurn, user_turns};

pub use crate::markdown::fenced;

/// Content blocks as text: text as it is, an image named with its type and size.
pub(crate) fn contents_text(content: &[Content]) -> String {
    content
        .iter()
        .map(|c| match c {
            Content::Text { text } => text.clone(),
            Content::Image { mime_type, data } => {
                format!("[image {mime_type}, {} base64 bytes]", data.len())
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The markdown transcript of one run.
pub fn transcript_md(a: &RunFile) -> String {
    let r = &a.record;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# {} — {}/{} (epoch {})\n",
        r.task_id, r.provider, r.model, r.epoch
    );
    let _ = writeln!(out, "- outcome: **{}** — {}", r.outcome.name(), r.reason);
    let _ = writeln!(out, "- stop: {}", r.stop);
    let _ = writeln!(
        out,
        "- turns: {}, tool calls: {}, checks: {}/{}",
        r.turns,
        r.tool_call_count(),
        r.checks_passed,
        r.checks_total
    );
    if !r.attempt_outcomes.is_empty() {
        let attempts: Vec<String> = r
            .attempt_outcomes
            .iter()
            .map(|a| {
                format!(
                    "{} {} ({}/{} checks, turn {})",
                    a.attempt,
                    if a.passed { "passed" } else { "failed" },
                    a.checks_passed,
                    a.checks_total,
                    a.turns
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "- attempts (of {}): {}",
            r.task_attempts,
            attempts.join("; ")
        );
    }
    let _ = writeln!(
        out,
        "- tokens: {} input, {} output, {} cache read, {} cache write\n",
        r.tokens.input, r.tokens.output, r.tokens.cache_read, r.tokens.cache_write
    );
    if let Some(system) = &a.system_prompt {
        let _ = writeln!(out, "## System prompt\n\n{}", fenced("text", system));
    }
    let records: HashMap<&str, &ToolCallRecord> = a
        .tool_calls
        .iter()
        .map(|t| (t.call.id.as_str(), t))
        .collect();
    let mut turn = 0;
    let mut users = user_turns(r, &a.messages).into_iter();
    for message in &a.messages {
        match message {
            Message::User { content } => {
                let text = match content {
                    UserContent::Text(text) => text.clone(),
                    UserContent::Blocks(blocks) => contents_text(blocks),
                };
                let role = users
                    .next()
                    .map_or_else(|| "User".to_owned(), UserTurn::label);
                let _ = writeln!(out, "## {role}\n\n{}", fenced("text", &text));
            }
            Message::Assistant(reply) => {
                turn += 1;
                let _ = writeln!(out, "## Assistant (turn {turn})\n");
                for block in &reply.content {
                    match block {
                        AssistantBlock::Thinking {
                            thinking, redacted, ..
                        } => {
                            if *redacted {
                                let _ = writeln!(out, "**Thinking** (redacted)\n");
                            } else {
                                let _ =
                                    writeln!(out, "**Thinking**\n\n{}", fenced("text", thinking));
                            }
                        }
                        AssistantBlock::Text { text, .. } => {
                            let _ = writeln!(out, "{}", fenced("text", text));
                        }
                        AssistantBlock::ToolCall(call) => {
                            let args =
                                serde_json::to_string_pretty(&call.arguments).unwrap_or_default();
                            let _ = writeln!(
                                out,
                                "**Tool call** `{}` (`{}`)\n\n{}",
                                call.name,
                                call.id,
                                fenced("json", &args)
                            );
                        }
                    }
                }
                if let Some(error) = &reply.error_message {
                    let _ = writeln!(out, "**Error**: {error}\n");
                }
                let _ = writeln!(
                    out,
                    "_stop reason: {}; tokens: {} in, {} out_\n",
                    serde_json::to_value(reply.stop_reason)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                    reply.usage.input,
                    reply.usage.output
                );
            }
            Message::ToolResult(result) => {
                let flag = if result.is_error {
                    " — **error**"
                } else {
                    ""
                };
                let _ = writeln!(
                    out,
                    "### Tool result `{}` (`{}`){flag}\n",
                    result.tool_name, result.tool_call_id
                );
                let _ = writeln!(out, "{}", fenced("text", &contents_text(&result.content)));
                if let Some(edit) = records
                    .get(result.tool_call_id.as_str())
                    .and_then(|t| t.result.edit.as_ref())
                {
                    let tiers: Vec<&str> = edit.tiers.iter().map(|t| t.name()).collect();
                    let failure = edit
                        .failure
                        .map(|f| format!("; failure: {}", f.name()))
                        .unwrap_or_default();
                    let _ = writeln!(
                        out,
                        "_edit: strategy {}; located: [{}]{failure}_\n",
                        edit.strategy,
                        tiers.join(", ")
                    );
                }
            }
        }
    }
    let _ = writeln!(out, "## Stop\n\n{}\n", r.stop);
    if let Some(detail) = &r.detail {
        let _ = writeln!(out, "## Detail\n\n{}", fenced("text", detail));
    }
    let _ = writeln!(out, "## Checks\n");
    for check in &r.checks {
        let mark = if check.passed { "pass" } else { "FAIL" };
        let _ = writeln!(
            out,
            "- **{mark}** {}\n\n{}",
            check.name,
            fenced("text", &check.detail)
        );
    }
    let _ = writeln!(
        out,
        "## Diff\n\n{} file(s) changed, +{} −{} (`diff.patch`)",
        r.diff_files, r.diff_lines_added, r.diff_lines_removed
    );
    out
}

/// The JSON transcript of one run: identification, system prompt, messages, tool-call records.
pub fn transcript_json(a: &RunFile) -> Result<String, serde_json::Error> {
    /// The file's fields in order, borrowed: written in one pass, without first building the
    /// whole conversation as a JSON tree.
    #[derive(serde::Serialize)]
    struct Transcript<'a> {
        task: &'a str,
        provider: &'a str,
        model: &'a str,
        epoch: u32,
        outcome: &'a Outcome,
        stop: &'a str,
        system_prompt: &'a Option<String>,
        messages: &'a [Message],
        tool_calls: &'a [ToolCallRecord],
    }
    let r = &a.record;
    serde_json::to_string_pretty(&Transcript {
        task: &r.task_id,
        provider: &r.provider,
        model: &r.model,
        epoch: r.epoch,
        outcome: &r.outcome,
        stop: &r.stop,
        system_prompt: &a.system_prompt,
        messages: &a.messages,
        tool_calls: &a.tool_calls,
    })
}
