//! The render direction of Anthropic Messages: a neutral reply as the events Anthropic streams
//! (`message_start`, `ping`, one `content_block_start` / `_delta` / `_stop` run per block,
//! `message_delta` with the stop reason and output tokens, `message_stop`), and Anthropic's
//! error body.
//!
//! Minted when the reply lacks them: the message id `msg_NN` (by turn), tool-use ids `toolu_NN`
//! (by call in the conversation), thinking signatures `sig_NN`. A stop reason `error` or
//! `aborted` is sent as `refusal`. Depends on `conversation` and the SSE event type only.

use serde_json::{Value, json};

use crate::conversation::{AssistantBlock, AssistantMessage, StopReason};
use crate::providers::sse::SseEvent;
use crate::providers::wire::render::{RenderOptions, error_type, pieces};

/// `turn` as Anthropic's event stream.
pub fn render_turn(turn: &AssistantMessage, options: &RenderOptions) -> Vec<SseEvent> {
    let ev = |name: &str, data: Value| SseEvent::named(name, data.to_string());
    let u = turn.usage;
    let id = turn
        .response_id
        .clone()
        .unwrap_or_else(|| format!("msg_{:02}", options.turn_no));
    let mut out = vec![
        ev(
            "message_start",
            json!({"type": "message_start", "message": {
                "id": id, "type": "message", "role": "assistant",
                "model": turn.model, "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": u.input, "cache_creation_input_tokens": u.cache_write,
                          "cache_read_input_tokens": u.cache_read, "output_tokens": 1}}}),
        ),
        ev("ping", json!({"type": "ping"})),
    ];
    if let Some(error) = &options.stream_error {
        let kind = error.kind.as_deref().unwrap_or("overloaded_error");
        out.push(ev(
            "error",
            json!({"type": "error", "error": {"type": kind, "message": error.message}}),
        ));
        return out;
    }
    let mut index = 0;
    let mut block = |out: &mut Vec<SseEvent>, start: Value, deltas: Vec<Value>| {
        out.push(ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for d in deltas {
            out.push(ev(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": d}),
            ));
        }
        out.push(ev(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    };
    let minted_signature = format!("sig_{:02}", options.turn_no);
    let mut call_no = options.first_call_no;
    for content in &turn.content {
        match content {
            AssistantBlock::Thinking {
                signature,
                redacted: true,
                ..
            } => {
                let data = signature.as_deref().unwrap_or(&minted_signature);
                block(
                    &mut out,
                    json!({"type": "redacted_thinking", "data": data}),
                    Vec::new(),
                );
            }
            AssistantBlock::Thinking {
                thinking,
                signature,
                ..
            } => {
                let mut deltas: Vec<Value> = pieces(thinking)
                    .into_iter()
                    .map(|p| json!({"type": "thinking_delta", "thinking": p}))
                    .collect();
                let signature = signature.as_deref().unwrap_or(&minted_signature);
                deltas.push(json!({"type": "signature_delta", "signature": signature}));
                block(
                    &mut out,
                    json!({"type": "thinking", "thinking": "", "signature": ""}),
                    deltas,
                );
            }
            AssistantBlock::Text { text, .. } => {
                let deltas = pieces(text)
                    .into_iter()
                    .map(|p| json!({"type": "text_delta", "text": p}))
                    .collect();
                block(&mut out, json!({"type": "text", "text": ""}), deltas);
            }
            AssistantBlock::ToolCall(call) => {
                let id = match call.id.as_str() {
                    "" => format!("toolu_{call_no:02}"),
                    id => id.to_owned(),
                };
                call_no += 1;
                let deltas = pieces(&call.arguments.to_string())
                    .into_iter()
                    .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                    .collect();
                block(
                    &mut out,
                    json!({"type": "tool_use", "id": id, "name": call.name, "input": {}}),
                    deltas,
                );
            }
        }
    }
    let stop = options
        .wire_stop_reason
        .clone()
        .unwrap_or_else(|| wire_stop_reason(turn.stop_reason).to_owned());
    out.push(ev(
        "message_delta",
        json!({"type": "message_delta",
               "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": u.output}}),
    ));
    out.push(ev("message_stop", json!({"type": "message_stop"})));
    out
}

/// Anthropic's stop reason for Pi's.
fn wire_stop_reason(stop: StopReason) -> &'static str {
    match stop {
        StopReason::Stop => "end_turn",
        StopReason::Length => "max_tokens",
        StopReason::ToolUse => "tool_use",
        StopReason::Error | StopReason::Aborted => "refusal",
    }
}

/// Anthropic's error body: `{"type": "error", "error": {"type", "message"}}`.
pub fn error_body(status: u16, message: &str) -> String {
    json!({"type": "error", "error": {"type": error_type(status), "message": message}}).to_string()
}
