//! The render direction of OpenAI Responses: a neutral reply as the events OpenAI streams
//! (`response.created`; per output item `response.output_item.added`, its summary, text or
//! argument deltas and `response.output_item.done`; `response.completed`, or
//! `response.incomplete` for a reply cut by the token limit), and OpenAI's error body. Every
//! event carries its type as the SSE event name and a `sequence_number`, as OpenAI sends them.
//!
//! A thinking block's signature is its reasoning item, sent as it is; a text block's signature
//! names its message item. Minted when the reply lacks them: the response id `resp_NN` and item
//! ids `rs_NN` (with `enc_NN` as encrypted content) and `msg_NN` by turn, tool calls
//! `call_NN|fc_NN` by call in the conversation. A stop reason `error` is sent as the status
//! `failed`, `aborted` as `cancelled`; the wire stop value `failed` ends the stream with
//! `response.failed` instead. Depends on `conversation` and the SSE event type only.

use serde_json::{Value, json};

use super::stream::read_text_signature;
use crate::conversation::{AssistantBlock, AssistantMessage, StopReason};
use crate::providers::sse::SseEvent;
use crate::providers::wire::render::{RenderOptions, pieces};

/// `turn` as the Responses event stream.
pub fn render_turn(turn: &AssistantMessage, options: &RenderOptions) -> Vec<SseEvent> {
    let mut seq = 0u64;
    let mut out = Vec::new();
    let mut ev = |out: &mut Vec<SseEvent>, mut data: Value| {
        data["sequence_number"] = json!(seq);
        seq += 1;
        let name = data["type"].as_str().unwrap_or("").to_owned();
        out.push(SseEvent::named(name, data.to_string()));
    };
    let turn_no = options.turn_no;
    let id = turn
        .response_id
        .clone()
        .unwrap_or_else(|| format!("resp_{turn_no:02}"));
    let response = |status: &str, output: Value| {
        json!({"id": id, "object": "response", "created_at": 1_700_000_000, "status": status,
               "model": turn.model, "output": output})
    };
    ev(
        &mut out,
        json!({"type": "response.created", "response": response("in_progress", json!([]))}),
    );
    if let Some(error) = &options.stream_error {
        let kind = error.kind.as_deref().unwrap_or("server_error");
        ev(
            &mut out,
            json!({"type": "error", "code": kind, "message": error.message, "param": null}),
        );
        return out;
    }
    // A minted id: by turn, with the block's rank among its kind after the first.
    let minted = |prefix: &str, rank: usize| match rank {
        0 => format!("{prefix}_{turn_no:02}"),
        n => format!("{prefix}_{turn_no:02}_{}", n + 1),
    };
    let (mut reasonings, mut texts, mut calls) = (0, 0, 0);
    let mut output = Vec::new();
    for (index, block) in turn.content.iter().enumerate() {
        let item = match block {
            AssistantBlock::Thinking {
                thinking,
                signature,
                ..
            } => {
                let given = signature
                    .as_deref()
                    .and_then(|s| serde_json::from_str::<Value>(s).ok())
                    .filter(|item| item["type"] == "reasoning");
                let item = given.unwrap_or_else(|| {
                    json!({"type": "reasoning", "id": minted("rs", reasonings),
                           "summary": [{"type": "summary_text", "text": thinking}],
                           "encrypted_content": minted("enc", reasonings)})
                });
                reasonings += 1;
                let item_id = item["id"].clone();
                ev(
                    &mut out,
                    json!({"type": "response.output_item.added", "output_index": index,
                           "item": {"type": "reasoning", "id": item_id, "summary": []}}),
                );
                let summary = item["summary"].as_array().cloned().unwrap_or_default();
                for (summary_index, part) in summary.iter().enumerate() {
                    let text = part["text"].as_str().unwrap_or_default();
                    let at = json!({"item_id": item_id, "output_index": index,
                                    "summary_index": summary_index});
                    let event = |kind: &str, field: &str, value: Value| {
                        let mut data = json!({"type": kind});
                        for (k, v) in at.as_object().into_iter().flatten() {
                            data[k] = v.clone();
                        }
                        data[field] = value;
                        data
                    };
                    ev(
                        &mut out,
                        event(
                            "response.reasoning_summary_part.added",
                            "part",
                            json!({"type": "summary_text", "text": ""}),
                        ),
                    );
                    for p in pieces(text) {
                        ev(
                            &mut out,
                            event("response.reasoning_summary_text.delta", "delta", json!(p)),
                        );
                    }
                    ev(
                        &mut out,
                        event("response.reasoning_summary_text.done", "text", json!(text)),
                    );
                    ev(
                        &mut out,
                        event(
                            "response.reasoning_summary_part.done",
                            "part",
                            json!({"type": "summary_text", "text": text}),
                        ),
                    );
                }
                item
            }
            AssistantBlock::Text { text, signature } => {
                let (item_id, phase) = match signature.as_deref().filter(|s| !s.is_empty()) {
                    Some(sig) => read_text_signature(sig),
                    None => (minted("msg", texts), None),
                };
                texts += 1;
                let item = |status: &str, content: Value| {
                    let mut item = json!({"type": "message", "id": item_id, "status": status,
                                          "role": "assistant", "content": content});
                    if let Some(phase) = &phase {
                        item["phase"] = json!(phase);
                    }
                    item
                };
                ev(
                    &mut out,
                    json!({"type": "response.output_item.added", "output_index": index,
                           "item": item("in_progress", json!([]))}),
                );
                ev(
                    &mut out,
                    json!({"type": "response.content_part.added", "item_id": item_id, "output_index": index,
                           "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
                );
                for p in pieces(text) {
                    ev(
                        &mut out,
                        json!({"type": "response.output_text.delta", "item_id": item_id,
                               "output_index": index, "content_index": 0, "delta": p}),
                    );
                }
                ev(
                    &mut out,
                    json!({"type": "response.output_text.done", "item_id": item_id, "output_index": index,
                           "content_index": 0, "text": text}),
                );
                let part = json!({"type": "output_text", "text": text, "annotations": []});
                ev(
                    &mut out,
                    json!({"type": "response.content_part.done", "item_id": item_id, "output_index": index,
                           "content_index": 0, "part": part}),
                );
                item("completed", json!([part]))
            }
            AssistantBlock::ToolCall(call) => {
                let no = options.first_call_no + calls;
                calls += 1;
                let (call_id, item_id) = match call.id.split_once('|') {
                    Some((c, i)) => (c.to_owned(), i.to_owned()),
                    None if call.id.is_empty() => (format!("call_{no:02}"), format!("fc_{no:02}")),
                    None => (call.id.clone(), format!("fc_{no:02}")),
                };
                let args = call.arguments.to_string();
                ev(
                    &mut out,
                    json!({"type": "response.output_item.added", "output_index": index,
                           "item": {"type": "function_call", "id": item_id, "call_id": call_id,
                                    "name": call.name, "arguments": "", "status": "in_progress"}}),
                );
                for p in pieces(&args) {
                    ev(
                        &mut out,
                        json!({"type": "response.function_call_arguments.delta", "item_id": item_id,
                               "output_index": index, "delta": p}),
                    );
                }
                ev(
                    &mut out,
                    json!({"type": "response.function_call_arguments.done", "item_id": item_id,
                           "output_index": index, "arguments": args}),
                );
                json!({"type": "function_call", "id": item_id, "call_id": call_id,
                       "name": call.name, "arguments": args, "status": "completed"})
            }
        };
        ev(
            &mut out,
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        );
        output.push(item);
    }
    let status = options
        .wire_stop_reason
        .clone()
        .unwrap_or_else(|| status_of(turn.stop_reason).to_owned());
    if options.wire_stop_reason.as_deref() == Some("failed") {
        let mut failed = response("failed", Value::Array(output));
        failed["error"] = json!({"code": "server_error", "message": "scripted failure"});
        ev(
            &mut out,
            json!({"type": "response.failed", "response": failed}),
        );
        return out;
    }
    let u = turn.usage;
    // Responses has no cache writes: they count as plain input.
    let input = u.input + u.cache_read + u.cache_write;
    let mut done = response(&status, Value::Array(output));
    if status == "incomplete" {
        done["incomplete_details"] = json!({"reason": "max_output_tokens"});
    }
    done["usage"] = json!({"input_tokens": input,
                           "input_tokens_details": {"cached_tokens": u.cache_read},
                           "output_tokens": u.output,
                           "output_tokens_details": {"reasoning_tokens": 0},
                           "total_tokens": input + u.output});
    // A reply cut by the token limit ends with `response.incomplete`, as OpenAI sends it.
    let kind = if status == "incomplete" {
        "response.incomplete"
    } else {
        "response.completed"
    };
    ev(&mut out, json!({"type": kind, "response": done}));
    out
}

/// The response status for Pi's stop reason.
fn status_of(stop: StopReason) -> &'static str {
    match stop {
        StopReason::Stop | StopReason::ToolUse => "completed",
        StopReason::Length => "incomplete",
        StopReason::Error => "failed",
        StopReason::Aborted => "cancelled",
    }
}
