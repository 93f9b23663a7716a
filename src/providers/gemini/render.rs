//! The render direction of Gemini: a neutral reply as the `data:` chunks Gemini streams (one
//! chunk per thought or text piece, a reply's consecutive function calls whole in one chunk, a
//! last chunk with the `finishReason` and `usageMetadata`), and Google's error body.
//!
//! Minted when the reply lacks them: the response id `gen_NN` (by turn), thought signatures
//! (base64 of `sig_NN`) and, when the reply thinks, the first function call's signature (base64
//! of `fsig_NN`), as Gemini sends them. A call without an id is sent without one, as Gemini
//! sends them (the stream reader numbers it). A stop reason `error` or `aborted` is sent as
//! `OTHER`. Depends on `conversation` and the SSE event type only.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::conversation::{AssistantBlock, AssistantMessage, StopReason};
use crate::providers::sse::SseEvent;
use crate::providers::wire::render::{RenderOptions, pieces};

/// `turn` as Gemini's chunk stream.
pub fn render_turn(turn: &AssistantMessage, options: &RenderOptions) -> Vec<SseEvent> {
    let response_id = turn
        .response_id
        .clone()
        .unwrap_or_else(|| format!("gen_{:02}", options.turn_no));
    let chunk = |parts: Value, finish: Option<String>, usage: Option<Value>| {
        let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
        if let Some(f) = finish {
            candidate["finishReason"] = json!(f);
        }
        let mut c = json!({"candidates": [candidate]});
        if let Some(u) = usage {
            c["usageMetadata"] = u;
        }
        c["modelVersion"] = json!(turn.model);
        c["responseId"] = json!(response_id);
        SseEvent::data(c.to_string())
    };
    let mut out = Vec::new();
    if let Some(error) = &options.stream_error {
        let status = error.kind.as_deref().unwrap_or("UNAVAILABLE");
        let code = match status {
            "UNAVAILABLE" => 503,
            "RESOURCE_EXHAUSTED" => 429,
            _ => 500,
        };
        out.push(chunk(json!([{"text": ""}]), None, None));
        out.push(SseEvent::data(
            json!({"error": {"code": code, "message": error.message, "status": status}})
                .to_string(),
        ));
        return out;
    }
    let minted = |what: &str| base64(&format!("{what}_{:02}", options.turn_no));
    let thinks = turn
        .content
        .iter()
        .any(|b| matches!(b, AssistantBlock::Thinking { .. }));
    let mut calls: Vec<Value> = Vec::new();
    let mut first_call = true;
    for block in &turn.content {
        if !matches!(block, AssistantBlock::ToolCall(_)) && !calls.is_empty() {
            out.push(chunk(Value::Array(std::mem::take(&mut calls)), None, None));
        }
        match block {
            AssistantBlock::Thinking {
                thinking,
                signature,
                ..
            } => {
                let signature = signature.clone().unwrap_or_else(|| minted("sig"));
                for (i, p) in pieces(thinking).into_iter().enumerate() {
                    let mut part = json!({"text": p, "thought": true});
                    if i == 0 {
                        part["thoughtSignature"] = json!(signature);
                    }
                    out.push(chunk(json!([part]), None, None));
                }
            }
            AssistantBlock::Text { text, signature } => {
                for (i, p) in pieces(text).into_iter().enumerate() {
                    let mut part = json!({"text": p});
                    if let Some(signature) = signature.as_ref().filter(|_| i == 0) {
                        part["thoughtSignature"] = json!(signature);
                    }
                    out.push(chunk(json!([part]), None, None));
                }
            }
            AssistantBlock::ToolCall(call) => {
                let function_call = if call.id.is_empty() {
                    json!({"name": call.name, "args": call.arguments})
                } else {
                    json!({"id": call.id, "name": call.name, "args": call.arguments})
                };
                let mut part = json!({"functionCall": function_call});
                let signature = match &call.thought_signature {
                    Some(signature) => Some(signature.clone()),
                    None if first_call && thinks => Some(minted("fsig")),
                    None => None,
                };
                if let Some(signature) = signature {
                    part["thoughtSignature"] = json!(signature);
                }
                first_call = false;
                calls.push(part);
            }
        }
    }
    if !calls.is_empty() {
        out.push(chunk(Value::Array(calls), None, None));
    }
    let u = turn.usage;
    let prompt = u.input + u.cache_read + u.cache_write;
    let thoughts = if thinks { u.output / 2 } else { 0 };
    let mut usage = json!({"promptTokenCount": prompt,
                           "candidatesTokenCount": u.output - thoughts,
                           "totalTokenCount": prompt + u.output});
    if u.cache_read > 0 {
        usage["cachedContentTokenCount"] = json!(u.cache_read);
    }
    if thoughts > 0 {
        usage["thoughtsTokenCount"] = json!(thoughts);
    }
    let stop = options
        .wire_stop_reason
        .clone()
        .unwrap_or_else(|| finish_reason(turn.stop_reason).to_owned());
    out.push(chunk(json!([{"text": ""}]), Some(stop), Some(usage)));
    out
}

/// Standard base64, as Gemini's signatures are.
fn base64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// Gemini's `finishReason` for Pi's stop reason.
fn finish_reason(stop: StopReason) -> &'static str {
    match stop {
        StopReason::Stop | StopReason::ToolUse => "STOP",
        StopReason::Length => "MAX_TOKENS",
        StopReason::Error | StopReason::Aborted => "OTHER",
    }
}

/// Google's error body: `{"error": {"code", "message", "status"}}`.
pub fn error_body(status: u16, message: &str) -> String {
    json!({"error": {"code": status, "message": message, "status": google_status(status)}})
        .to_string()
}

/// Google's status name for an HTTP status.
fn google_status(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        _ => "INTERNAL",
    }
}
