//! The render direction of OpenAI Chat Completions: a neutral reply as the `data:` chunks OpenAI
//! streams (a role chunk, reasoning and content deltas, each tool call's start and argument
//! deltas, the `finish_reason` chunk, a usage chunk, `[DONE]`), and OpenAI's error body.
//!
//! Minted when the reply lacks them: the completion id `chatcmpl-NN` (by turn) and tool-call ids
//! `call_NN` (by call in the conversation). Thinking is sent under the field its signature
//! names (`reasoning_content` when it names none); redacted thinking cannot be sent. A stop
//! reason `error` or `aborted` is sent as `content_filter`. Depends on `conversation` and the
//! SSE event type only.

use serde_json::{Value, json};

use super::stream::REASONING_FIELDS;
use crate::conversation::{AssistantBlock, AssistantMessage, StopReason};
use crate::providers::sse::SseEvent;
use crate::providers::wire::render::{RenderOptions, error_type, pieces};

/// `turn` as OpenAI's chunk stream.
pub fn render_turn(turn: &AssistantMessage, options: &RenderOptions) -> Vec<SseEvent> {
    let id = turn
        .response_id
        .clone()
        .unwrap_or_else(|| format!("chatcmpl-{:02}", options.turn_no));
    let chunk = |delta: Value, finish: Value| {
        SseEvent::data(
            json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000,
                   "model": turn.model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            .to_string(),
        )
    };
    let mut out = vec![chunk(json!({"role": "assistant"}), Value::Null)];
    if let Some(error) = &options.stream_error {
        let kind = error.kind.as_deref().unwrap_or("server_error");
        out.push(SseEvent::data(
            json!({"error": {"message": error.message, "type": kind, "param": null, "code": null}})
                .to_string(),
        ));
        return out;
    }
    let mut calls = 0;
    for block in &turn.content {
        match block {
            AssistantBlock::Thinking { redacted: true, .. } => {}
            AssistantBlock::Thinking {
                thinking,
                signature,
                ..
            } => {
                let field = REASONING_FIELDS
                    .into_iter()
                    .find(|f| signature.as_deref() == Some(*f))
                    .unwrap_or(REASONING_FIELDS[0]);
                for p in pieces(thinking) {
                    out.push(chunk(json!({ field: p }), Value::Null));
                }
            }
            AssistantBlock::Text { text, .. } => {
                for p in pieces(text) {
                    out.push(chunk(json!({"content": p}), Value::Null));
                }
            }
            AssistantBlock::ToolCall(call) => {
                let i = calls;
                calls += 1;
                let id = match call.id.as_str() {
                    "" => format!("call_{:02}", options.first_call_no + i),
                    id => id.to_owned(),
                };
                out.push(chunk(
                    json!({"tool_calls": [{"index": i, "id": id, "type": "function",
                                           "function": {"name": call.name, "arguments": ""}}]}),
                    Value::Null,
                ));
                for p in pieces(&call.arguments.to_string()) {
                    out.push(chunk(
                        json!({"tool_calls": [{"index": i, "function": {"arguments": p}}]}),
                        Value::Null,
                    ));
                }
            }
        }
    }
    let stop = options
        .wire_stop_reason
        .clone()
        .unwrap_or_else(|| finish_reason(turn.stop_reason).to_owned());
    out.push(chunk(json!({}), json!(stop)));
    let u = turn.usage;
    let prompt = u.input + u.cache_read + u.cache_write;
    let mut details = json!({"cached_tokens": u.cache_read + u.cache_write});
    if u.cache_write > 0 {
        details["cache_write_tokens"] = json!(u.cache_write);
    }
    out.push(SseEvent::data(
        json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000,
               "model": turn.model, "choices": [],
               "usage": {"prompt_tokens": prompt, "completion_tokens": u.output,
                         "total_tokens": prompt + u.output, "prompt_tokens_details": details}})
        .to_string(),
    ));
    out.push(SseEvent::data("[DONE]"));
    out
}

/// OpenAI's `finish_reason` for Pi's stop reason.
fn finish_reason(stop: StopReason) -> &'static str {
    match stop {
        StopReason::Stop => "stop",
        StopReason::Length => "length",
        StopReason::ToolUse => "tool_calls",
        StopReason::Error | StopReason::Aborted => "content_filter",
    }
}

/// OpenAI's error body: `{"error": {"message", "type", "param", "code"}}`.
pub fn error_body(status: u16, message: &str) -> String {
    json!({"error": {"message": message, "type": error_type(status), "param": null, "code": null}})
        .to_string()
}
