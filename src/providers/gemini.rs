//! Google Generative AI (Gemini) over SSE (spec section 9, "Google Generative AI"): the request
//! body as Pi's Google SDK writes it (`contents` with roles `user`/`model`, `systemInstruction`,
//! `tools[].functionDeclarations` with `parametersJsonSchema`, `generationConfig`), function
//! responses merged into one user turn, and the chunk reader.
//!
//! Key order inside objects follows the SDK's converters (the capture confirms `parts` before
//! `role`, `args` before `name`, `data` before `mimeType`, `temperature` comes before
//! `maxOutputTokens`). Not captured, taken from the SDK's field order: a part's `thought` and
//! `thoughtSignature` after its `text`/`functionCall`, `id` first in `functionCall` and `parts`,
//! `id` before `name` in `functionResponse` (ids are only sent for `claude-`/`gpt-oss-` models).
//!
//! A function call's `thoughtSignature` is kept on its [`ToolCall`] and replayed, as Pi does,
//! when the call came from the same provider and model and the signature is valid base64; a
//! Gemini 3 model gets Pi's `skip_thought_signature_validator` sentinel for a call without one.
//!
//! Deviations from Pi:
//! * Tool calls without an id (Gemini usually gives none) get `${name}_${n}`, `n` counting the
//!   calls of this provider from 1, instead of Pi's `${name}_${Date.now()}_${n}`: ids must be
//!   deterministic for cassette replay.
//! * An `error` chunk is a typed provider error (`INTERNAL` a server error, `UNAVAILABLE`
//!   overloaded, `RESOURCE_EXHAUSTED` rate limited with its `RetryInfo` delay), never an error
//!   reply counted against the model; a stream whose last chunk has no `finishReason` is a cut
//!   stream (Pi takes what arrived as the reply); a chunk with `promptFeedback.blockReason` ends
//!   the reply with stop reason `error` (Pi returns an empty reply).
//! * An HTTP 400 for a bad key (`API_KEY_INVALID`) is an authentication error, and a
//!   `RetryInfo.retryDelay` in an error body is the wait before retrying.
//! * The model is taken to accept images.
//!
//! Depends on `conversation` and the provider seams only.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value, json};

use super::errors;
use super::sse::SseStream;
use super::stream::{SseProvider, WireFormat, empty_reply, finish_reply, post};
use super::transform::{google_requires_tool_call_id, normalize_id_google, transform_messages};
use super::transport::HttpRequest;
use super::{ModelSpec, ProviderError, RequestOptions, ThinkingLevel};
use crate::conversation::{
    AssistantBlock, AssistantMessage, Content, Context, Message, StopReason, ToolCall, Usage,
    UserContent,
};

/// The Gemini provider.
pub type Gemini = SseProvider<GeminiWire>;

/// Google Generative AI as a [`WireFormat`].
#[derive(Debug, Default)]
pub struct GeminiWire {
    /// Numbers the tool calls that arrive without an id.
    call_counter: AtomicU64,
}

impl WireFormat for GeminiWire {
    fn for_spec(_spec: &ModelSpec) -> Self {
        GeminiWire::default()
    }

    /// The request Pi would send:
    /// `POST {base_url}/models/{model}:streamGenerateContent?alt=sse` with `x-goog-api-key`.
    fn build_request(
        &self,
        spec: &ModelSpec,
        context: &Context,
        options: &RequestOptions,
    ) -> HttpRequest {
        let mut headers = vec![("content-type".to_owned(), "application/json".to_owned())];
        if let Some(key) = &spec.api_key {
            headers.push(("x-goog-api-key".into(), key.clone()));
        }
        headers.push(("accept".into(), "*/*".into()));
        let path = format!("/models/{}:streamGenerateContent?alt=sse", spec.model);
        post(spec, &path, headers, build_body(spec, context, options))
    }

    fn read_stream<'a>(
        &'a self,
        spec: &'a ModelSpec,
        stream: &'a mut SseStream,
    ) -> impl Future<Output = Result<AssistantMessage, ProviderError>> + Send + 'a {
        read_stream(spec, stream, &self.call_counter)
    }

    fn classify_http_error(
        &self,
        status: u16,
        headers: &[(String, String)],
        body: &str,
    ) -> ProviderError {
        classify_http_error(status, headers, body)
    }
}

/// The shared mapping of an error status, refined with what Google's error body says: a
/// rejected key (`API_KEY_INVALID`, `API_KEY_EXPIRED`, "API key not valid", which Google sends
/// as 400 `INVALID_ARGUMENT`) is an authentication error; a rate limit without `Retry-After`
/// waits for the body's `RetryInfo.retryDelay`.
pub fn classify_http_error(status: u16, headers: &[(String, String)], body: &str) -> ProviderError {
    let error = errors::from_http_status(status, headers, body);
    let json: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    if let ProviderError::InvalidRequest { status, message } = &error {
        if is_key_error(&json["error"]) {
            return ProviderError::Authentication {
                status: *status,
                message: message.clone(),
            };
        }
    }
    with_retry_info(error, &json["error"])
}

/// Whether a Google error object says the key itself was refused.
fn is_key_error(error: &Value) -> bool {
    let reasons = error["details"].as_array().into_iter().flatten();
    reasons
        .filter_map(|d| d["reason"].as_str())
        .any(|r| r.starts_with("API_KEY_"))
        || error["message"]
            .as_str()
            .is_some_and(|m| m.to_ascii_lowercase().contains("api key not valid"))
}

/// `error` with the wait of a Google error object's `RetryInfo` detail, when it is a rate limit
/// that gave no wait of its own.
fn with_retry_info(error: ProviderError, google: &Value) -> ProviderError {
    match error {
        ProviderError::RateLimited {
            status,
            message,
            retry_after: None,
        } => ProviderError::RateLimited {
            status,
            message,
            retry_after: retry_delay(google),
        },
        other => other,
    }
}

/// The `retryDelay` of a `google.rpc.RetryInfo` detail (`"30s"`, `"1.5s"`), clamped.
pub fn retry_delay(error: &Value) -> Option<std::time::Duration> {
    error["details"]
        .as_array()?
        .iter()
        .filter(|d| {
            d["@type"]
                .as_str()
                .is_some_and(|t| t.ends_with("google.rpc.RetryInfo"))
        })
        .find_map(|d| {
            let delay = d["retryDelay"].as_str()?.trim();
            let secs: f64 = delay.strip_suffix('s')?.parse().ok()?;
            errors::clamp_secs(secs)
        })
}

/// The request body, keys as the SDK writes them: `contents, [systemInstruction], [tools],
/// generationConfig: {[temperature], maxOutputTokens, [thinkingConfig]}`.
pub fn build_body(spec: &ModelSpec, context: &Context, options: &RequestOptions) -> Value {
    let mut body = Map::new();
    body.insert(
        "contents".into(),
        Value::Array(convert_messages(spec, &context.messages)),
    );
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": system}], "role": "user"}),
        );
    }
    if !context.tools.is_empty() {
        let declarations: Vec<Value> = context
            .tools
            .iter()
            .map(|t| {
                json!({"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters})
            })
            .collect();
        body.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
    }
    let mut config = Map::new();
    if let Some(t) = options.temperature {
        config.insert("temperature".into(), json!(t));
    }
    if options.max_tokens > 0 {
        config.insert("maxOutputTokens".into(), json!(options.max_tokens));
    }
    if let Some(level) = options.thinking {
        config.insert("thinkingConfig".into(), thinking_config(&spec.model, level));
    }
    body.insert("generationConfig".into(), Value::Object(config));
    Value::Object(body)
}

/// Pi's `thinkingConfig` for a level: Gemini 3 models get a `thinkingLevel`, Gemini 2.5 models a
/// `thinkingBudget` (pro 128/2048/8192/32768, flash 128/2048/8192/24576, others dynamic, -1);
/// `off` is the lowest level Gemini 3 allows, or a budget of 0.
pub fn thinking_config(model: &str, level: ThinkingLevel) -> Value {
    let model = model.to_lowercase();
    if model.contains("gemini-3") {
        let pro = model.contains("-pro");
        let name = match (level, pro) {
            (ThinkingLevel::Off | ThinkingLevel::Minimal | ThinkingLevel::Low, true) => "LOW",
            (_, true) => "HIGH",
            (ThinkingLevel::Off | ThinkingLevel::Minimal, false) => "MINIMAL",
            (ThinkingLevel::Low, false) => "LOW",
            (ThinkingLevel::Medium, false) => "MEDIUM",
            (ThinkingLevel::High, false) => "HIGH",
        };
        if level == ThinkingLevel::Off {
            return json!({"thinkingLevel": name});
        }
        return json!({"includeThoughts": true, "thinkingLevel": name});
    }
    if level == ThinkingLevel::Off {
        return json!({"thinkingBudget": 0});
    }
    let budgets: Option<[i64; 4]> = if model.contains("2.5-pro") {
        Some([128, 2048, 8192, 32768])
    } else if model.contains("2.5-flash") {
        Some([128, 2048, 8192, 24576])
    } else {
        None
    };
    let budget = budgets.map_or(-1, |b| match level {
        ThinkingLevel::Minimal => b[0],
        ThinkingLevel::Low => b[1],
        ThinkingLevel::Medium => b[2],
        _ => b[3],
    });
    json!({"includeThoughts": true, "thinkingBudget": budget})
}

/// Whether a signature is valid base64 (Google's TYPE_BYTES), as Pi checks before replaying it.
fn valid_signature(sig: &str) -> bool {
    let body = sig.trim_end_matches('=');
    !sig.is_empty()
        && sig.len() % 4 == 0
        && sig.len() - body.len() <= 2
        && !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

fn inline_data(data: &str, mime_type: &str) -> Value {
    json!({"inlineData": {"data": data, "mimeType": mime_type}})
}

/// The `contents` array: Pi's transforms, then Gemini's conversion.
pub fn convert_messages(spec: &ModelSpec, messages: &[Message]) -> Vec<Value> {
    let model = spec.model.clone();
    let normalize = move |id: &str| normalize_id_google(id, &model);
    let messages = transform_messages(messages, spec, &normalize);
    let include_id = google_requires_tool_call_id(&spec.model);
    let gemini3 = spec.model.to_lowercase().contains("gemini-3");
    let mut out: Vec<Value> = Vec::new();
    for msg in &messages {
        match msg {
            Message::User { content } => {
                let parts: Vec<Value> = match content {
                    UserContent::Text(text) => vec![json!({"text": text})],
                    UserContent::Blocks(blocks) => blocks
                        .iter()
                        .map(|c| match c {
                            Content::Text { text } => json!({"text": text}),
                            Content::Image { data, mime_type } => inline_data(data, mime_type),
                        })
                        .collect(),
                };
                if !parts.is_empty() {
                    out.push(json!({"parts": parts, "role": "user"}));
                }
            }
            Message::Assistant(am) => {
                let same = am.provider == spec.provider && am.model == spec.model;
                let signature = |sig: &Option<String>| {
                    sig.as_deref()
                        .filter(|s| same && valid_signature(s))
                        .map(str::to_owned)
                };
                let mut parts = Vec::new();
                for block in &am.content {
                    match block {
                        AssistantBlock::Text {
                            text,
                            signature: sig,
                        } => {
                            if text.trim().is_empty() {
                                continue;
                            }
                            let mut part = Map::new();
                            part.insert("text".into(), json!(text));
                            if let Some(sig) = signature(sig) {
                                part.insert("thoughtSignature".into(), json!(sig));
                            }
                            parts.push(Value::Object(part));
                        }
                        AssistantBlock::Thinking {
                            thinking,
                            signature: sig,
                            ..
                        } => {
                            if thinking.trim().is_empty() {
                                continue;
                            }
                            let mut part = Map::new();
                            part.insert("text".into(), json!(thinking));
                            if same {
                                part.insert("thought".into(), json!(true));
                                if let Some(sig) = signature(sig) {
                                    part.insert("thoughtSignature".into(), json!(sig));
                                }
                            }
                            parts.push(Value::Object(part));
                        }
                        AssistantBlock::ToolCall(call) => {
                            let mut fc = Map::new();
                            if include_id {
                                fc.insert("id".into(), json!(call.id));
                            }
                            fc.insert("args".into(), call.arguments.clone());
                            fc.insert("name".into(), json!(call.name));
                            let mut part = Map::new();
                            part.insert("functionCall".into(), Value::Object(fc));
                            match signature(&call.thought_signature) {
                                Some(sig) => {
                                    part.insert("thoughtSignature".into(), json!(sig));
                                }
                                None if gemini3 => {
                                    part.insert(
                                        "thoughtSignature".into(),
                                        json!("skip_thought_signature_validator"),
                                    );
                                }
                                None => {}
                            }
                            parts.push(Value::Object(part));
                        }
                    }
                }
                if !parts.is_empty() {
                    out.push(json!({"parts": parts, "role": "model"}));
                }
            }
            Message::ToolResult(tr) => {
                let text: Vec<&str> = tr.content.iter().filter_map(Content::as_text).collect();
                let text = text.join("\n");
                let images: Vec<Value> = tr
                    .content
                    .iter()
                    .filter_map(|c| match c {
                        Content::Image { data, mime_type } => Some(inline_data(data, mime_type)),
                        Content::Text { .. } => None,
                    })
                    .collect();
                let value = if !text.is_empty() {
                    text
                } else if !images.is_empty() {
                    "(see attached image)".to_owned()
                } else {
                    String::new()
                };
                let mut response = Map::new();
                if !images.is_empty() && gemini3 {
                    response.insert("parts".into(), Value::Array(images.clone()));
                }
                if include_id {
                    response.insert("id".into(), json!(tr.tool_call_id));
                }
                response.insert("name".into(), json!(tr.tool_name));
                let key = if tr.is_error { "error" } else { "output" };
                response.insert("response".into(), json!({key: value}));
                let part = json!({"functionResponse": response});
                let merge = out.last().is_some_and(|last| {
                    last["role"] == "user"
                        && last["parts"]
                            .as_array()
                            .is_some_and(|p| p.iter().any(|p| p.get("functionResponse").is_some()))
                });
                if merge {
                    if let Some(parts) =
                        out.last_mut().and_then(|last| last["parts"].as_array_mut())
                    {
                        parts.push(part);
                    }
                } else {
                    out.push(json!({"parts": [part], "role": "user"}));
                }
                if !images.is_empty() && !gemini3 {
                    let mut parts = vec![json!({"text": "Tool result image:"})];
                    parts.extend(images);
                    out.push(json!({"parts": parts, "role": "user"}));
                }
            }
        }
    }
    out
}

/// Pi's mapping of `finishReason`: `STOP` is stop, `MAX_TOKENS` length, anything else error.
pub fn map_finish_reason(reason: &str) -> StopReason {
    match reason {
        "STOP" => StopReason::Stop,
        "MAX_TOKENS" => StopReason::Length,
        _ => StopReason::Error,
    }
}

/// Pi's usage rule: cached tokens are taken out of the prompt, thoughts count as output, the total
/// is the API's `totalTokenCount`.
pub fn parse_usage(u: &Value) -> Usage {
    let n = |k: &str| u[k].as_u64().unwrap_or(0);
    let cached = n("cachedContentTokenCount");
    Usage {
        input: n("promptTokenCount").saturating_sub(cached),
        output: n("candidatesTokenCount").saturating_add(n("thoughtsTokenCount")),
        cache_read: cached,
        cache_write: 0,
        total_tokens: n("totalTokenCount"),
    }
}

/// Reads a Gemini chunk stream to the finished reply. `counter` numbers the tool calls that come
/// without an id (or with an id already used in this reply).
///
/// A chunk carrying an `error` is the provider's failure, typed by its `status`
/// ([`errors::from_stream_error`], with the `RetryInfo` delay of a rate limit) and carrying the
/// SDK's message (`got status: {status}. {chunk}`). A finish reason other than
/// `STOP`/`MAX_TOKENS` ends the reply with `"An unknown error occurred"`, as Pi; a blocked
/// prompt (`promptFeedback.blockReason`) with `"The prompt was blocked: {reason}"`. A stream
/// that ends before a chunk with a `finishReason` (or a block reason) is
/// [`ProviderError::StreamCut`].
pub async fn read_stream(
    spec: &ModelSpec,
    stream: &mut SseStream,
    counter: &AtomicU64,
) -> Result<AssistantMessage, ProviderError> {
    let mut msg = empty_reply(spec);
    // Whether the last block is still open to text deltas (a tool call closes it).
    let mut open = false;
    let mut finished = false;
    while let Some(ev) = stream.next_event().await? {
        if ev.data.trim().is_empty() {
            continue;
        }
        let chunk: Value = serde_json::from_str(&ev.data).map_err(|e| ProviderError::Protocol {
            message: format!("Gemini sent an unparsable chunk ({e}): {}", ev.data),
        })?;
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            let status = match &error["status"] {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            let message = format!("got status: {status}. {chunk}");
            let typed = errors::from_stream_error(&status, &message);
            return Err(with_retry_info(typed, error));
        }
        if let Some(reason) = chunk["promptFeedback"]["blockReason"].as_str() {
            msg.stop_reason = StopReason::Error;
            msg.error_message = Some(format!("The prompt was blocked: {reason}"));
            return Ok(msg);
        }
        if let Some(id) = chunk["responseId"].as_str() {
            msg.response_id = Some(id.to_owned());
        }
        let candidate = &chunk["candidates"][0];
        for part in candidate["content"]["parts"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let sig = part["thoughtSignature"].as_str().filter(|s| !s.is_empty());
            if let Some(text) = part["text"].as_str() {
                let thought = part["thought"] == json!(true);
                let continues = open
                    && matches!(
                        (msg.content.last(), thought),
                        (Some(AssistantBlock::Thinking { .. }), true)
                            | (Some(AssistantBlock::Text { .. }), false)
                    );
                if !continues {
                    msg.content.push(if thought {
                        AssistantBlock::Thinking {
                            thinking: String::new(),
                            signature: None,
                            redacted: false,
                        }
                    } else {
                        AssistantBlock::Text {
                            text: String::new(),
                            signature: None,
                        }
                    });
                    open = true;
                }
                match msg.content.last_mut() {
                    Some(AssistantBlock::Thinking {
                        thinking,
                        signature,
                        ..
                    }) => {
                        thinking.push_str(text);
                        if let Some(sig) = sig {
                            *signature = Some(sig.to_owned());
                        }
                    }
                    Some(AssistantBlock::Text { text: t, signature }) => {
                        t.push_str(text);
                        if let Some(sig) = sig {
                            *signature = Some(sig.to_owned());
                        }
                    }
                    _ => {}
                }
            }
            if let Some(fc) = part.get("functionCall").filter(|f| f.is_object()) {
                open = false;
                let name = fc["name"].as_str().unwrap_or("").to_owned();
                let given = fc["id"].as_str().filter(|s| !s.is_empty());
                let id = match given {
                    Some(id) if !msg.tool_calls().any(|c| c.id == id) => id.to_owned(),
                    _ => format!("{name}_{}", counter.fetch_add(1, Ordering::Relaxed) + 1),
                };
                let arguments = match &fc["args"] {
                    Value::Null => json!({}),
                    other => other.clone(),
                };
                msg.content.push(AssistantBlock::ToolCall(ToolCall {
                    id,
                    name,
                    arguments,
                    thought_signature: sig.map(str::to_owned),
                }));
            }
        }
        if let Some(reason) = candidate["finishReason"].as_str() {
            finished = true;
            msg.stop_reason = map_finish_reason(reason);
            if msg.tool_calls().next().is_some() {
                msg.stop_reason = StopReason::ToolUse;
            }
        }
        if chunk["usageMetadata"].is_object() {
            msg.usage = parse_usage(&chunk["usageMetadata"]);
        }
    }
    let cut = (!finished).then_some("Gemini stream ended before a chunk with a finishReason");
    finish_reply(msg, cut)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::ToolResultMessage;
    use crate::providers::ApiKind;
    use crate::providers::sse::SseEvent;
    use crate::providers::stream::{test_spec, test_stream};

    fn spec(model: &str) -> ModelSpec {
        let api = ApiKind::GoogleGenerativeAi;
        test_spec("google", api, model, "http://127.0.0.1:1/v1beta")
    }

    fn stream(chunks: &[Value]) -> SseStream {
        let evs: Vec<SseEvent> = chunks
            .iter()
            .map(|c| SseEvent::data(c.to_string()))
            .collect();
        test_stream(&evs)
    }

    fn parts(parts: Value) -> Value {
        json!({"candidates": [{"content": {"parts": parts, "role": "model"}, "index": 0}], "responseId": "g1"})
    }

    #[tokio::test]
    async fn reads_thoughts_text_calls_and_usage() {
        let counter = AtomicU64::new(0);
        let mut s = stream(&[
            parts(json!([{"text": "Hmm", "thought": true, "thoughtSignature": "c2ln"}])),
            parts(json!([{"text": ".", "thought": true}])),
            parts(json!([{"text": "Read"}])),
            parts(json!([{"text": "ing."}])),
            parts(
                json!([{"functionCall": {"name": "read", "args": {"path": "a.txt"}}, "thoughtSignature": "ZmNzaWc="},
                         {"functionCall": {"name": "ls", "args": {}, "id": "x"}},
                         {"functionCall": {"name": "ls", "id": "x"}}]),
            ),
            json!({"candidates": [{"content": {"parts": [{"text": ""}], "role": "model"}, "finishReason": "STOP"}],
                   "usageMetadata": {"promptTokenCount": 100, "cachedContentTokenCount": 20,
                                     "candidatesTokenCount": 30, "thoughtsTokenCount": 12, "totalTokenCount": 142}}),
        ]);
        let m = read_stream(&spec("gemini-2.5-flash"), &mut s, &counter)
            .await
            .unwrap();
        assert_eq!(
            m.content[0],
            AssistantBlock::Thinking {
                thinking: "Hmm.".into(),
                signature: Some("c2ln".into()),
                redacted: false
            }
        );
        assert_eq!(m.text(), "Reading.");
        let ids: Vec<&str> = m.tool_calls().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["read_1", "x", "ls_2"]);
        assert_eq!(m.tool_calls().nth(2).unwrap().arguments, json!({}));
        let signatures: Vec<Option<&str>> = m
            .tool_calls()
            .map(|c| c.thought_signature.as_deref())
            .collect();
        assert_eq!(signatures, [Some("ZmNzaWc="), None, None]);
        assert_eq!(m.stop_reason, StopReason::ToolUse);
        assert_eq!(m.response_id.as_deref(), Some("g1"));
        assert_eq!(
            m.usage,
            Usage {
                input: 80,
                output: 42,
                cache_read: 20,
                cache_write: 0,
                total_tokens: 142
            }
        );
        // The counter goes on across replies of the same provider.
        let mut s = stream(&[
            parts(json!([{"functionCall": {"name": "read", "args": {}}}])),
            json!({"candidates": [{"finishReason": "STOP"}]}),
        ]);
        let m = read_stream(&spec("gemini-2.5-flash"), &mut s, &counter)
            .await
            .unwrap();
        assert_eq!(m.tool_calls().next().unwrap().id, "read_3");
    }

    #[tokio::test]
    async fn finish_reasons_and_error_chunks() {
        let counter = AtomicU64::new(0);
        for (reason, stop, error) in [
            ("STOP", StopReason::Stop, None),
            ("MAX_TOKENS", StopReason::Length, None),
            (
                "SAFETY",
                StopReason::Error,
                Some("An unknown error occurred"),
            ),
        ] {
            let mut s = stream(&[
                parts(json!([{"text": "x"}])),
                json!({"candidates": [{"finishReason": reason}]}),
            ]);
            let m = read_stream(&spec("gemini-2.5-flash"), &mut s, &counter)
                .await
                .unwrap();
            assert_eq!(m.stop_reason, stop, "{reason}");
            assert_eq!(m.error_message.as_deref(), error);
        }
        let mut s =
            stream(&[json!({"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}})]);
        let err = read_stream(&spec("gemini-2.5-flash"), &mut s, &counter)
            .await
            .unwrap_err();
        assert_eq!(
            err,
            ProviderError::Overloaded {
                status: 503,
                message: "UNAVAILABLE in the stream: got status: UNAVAILABLE. {\"error\":{\"code\":503,\"message\":\"busy\",\"status\":\"UNAVAILABLE\"}}".into()
            }
        );
        for (status, kind) in [
            ("INTERNAL", "server_error"),
            ("RESOURCE_EXHAUSTED", "rate_limited"),
        ] {
            let mut s = stream(&[
                parts(json!([{"text": "x"}])),
                json!({"error": {"code": 500, "message": "m", "status": status, "details": [
                    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}]}}),
            ]);
            let err = read_stream(&spec("gemini-2.5-flash"), &mut s, &counter)
                .await
                .unwrap_err();
            assert_eq!(err.kind(), kind, "{err}");
            if let ProviderError::RateLimited { retry_after, .. } = err {
                assert_eq!(retry_after, Some(std::time::Duration::from_secs(7)));
            }
        }
        // No finishReason in the last chunk: the stream was cut, even if it closed cleanly.
        let mut s = stream(&[parts(
            json!([{"functionCall": {"name": "bash", "args": {"command": "ls"}}}]),
        )]);
        let err = read_stream(&spec("gemini-2.5-flash"), &mut s, &counter)
            .await
            .unwrap_err();
        assert!(matches!(err, ProviderError::StreamCut { .. }), "{err:?}");
        // A blocked prompt is the reply, an error one.
        let mut s = stream(&[json!({"promptFeedback": {"blockReason": "SAFETY"}})]);
        let m = read_stream(&spec("gemini-2.5-flash"), &mut s, &counter)
            .await
            .unwrap();
        assert_eq!(m.stop_reason, StopReason::Error);
        assert_eq!(
            m.error_message.as_deref(),
            Some("The prompt was blocked: SAFETY")
        );
    }

    #[test]
    fn key_errors_are_authentication_and_retry_info_is_the_wait() {
        let bad_key = json!({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
            "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}});
        let err = classify_http_error(400, &[], &bad_key.to_string());
        assert!(
            matches!(err, ProviderError::Authentication { status: 400, .. }),
            "{err:?}"
        );
        let other =
            json!({"error": {"code": 400, "message": "bad field", "status": "INVALID_ARGUMENT"}});
        assert_eq!(
            classify_http_error(400, &[], &other.to_string()).kind(),
            "invalid_request"
        );
        let limited = json!({"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure"},
                        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.5s"}]}});
        let wait = |headers: &[(String, String)], body: &Value| match classify_http_error(
            429,
            headers,
            &body.to_string(),
        ) {
            ProviderError::RateLimited { retry_after, .. } => retry_after,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            wait(&[], &limited),
            Some(std::time::Duration::from_millis(1500))
        );
        // A Retry-After header wins; an absurd delay is clamped.
        let header = [("retry-after".to_owned(), "3".to_owned())];
        assert_eq!(
            wait(&header, &limited),
            Some(std::time::Duration::from_secs(3))
        );
        let mut absurd = limited.clone();
        absurd["error"]["details"][1]["retryDelay"] = json!("1e300s");
        assert_eq!(wait(&[], &absurd), Some(errors::MAX_SERVER_WAIT));
        absurd["error"]["details"][1]["retryDelay"] = json!("-5s");
        assert_eq!(wait(&[], &absurd), None);
    }

    #[test]
    fn same_model_replay_ids_for_claude_and_gemini3_images() {
        let am = AssistantMessage {
            content: vec![
                AssistantBlock::Thinking {
                    thinking: "t".into(),
                    signature: Some("c2ln".into()),
                    redacted: false,
                },
                AssistantBlock::Text {
                    text: "x".into(),
                    signature: Some("not base64!".into()),
                },
                AssistantBlock::ToolCall(ToolCall {
                    id: "a|b".into(),
                    name: "read".into(),
                    arguments: json!({"path": "p"}),
                    thought_signature: None,
                }),
            ],
            api: "google-generative-ai".into(),
            provider: "google".into(),
            model: "gemini-3-pro-preview".into(),
            usage: Usage::default(),
            stop_reason: StopReason::ToolUse,
            error_message: None,
            response_id: None,
        };
        let result = Message::ToolResult(ToolResultMessage {
            tool_call_id: "a|b".into(),
            tool_name: "read".into(),
            content: vec![Content::Image {
                data: "AA".into(),
                mime_type: "image/png".into(),
            }],
            is_error: false,
        });
        let msgs = vec![Message::Assistant(am.clone()), result.clone()];
        let out = convert_messages(&spec("gemini-3-pro-preview"), &msgs);
        let expected = json!([
            {"parts": [
                {"text": "t", "thought": true, "thoughtSignature": "c2ln"},
                {"text": "x"},
                {"functionCall": {"args": {"path": "p"}, "name": "read"}, "thoughtSignature": "skip_thought_signature_validator"},
            ], "role": "model"},
            {"parts": [{"functionResponse": {
                "parts": [{"inlineData": {"data": "AA", "mimeType": "image/png"}}],
                "name": "read", "response": {"output": "(see attached image)"}}}], "role": "user"},
        ]);
        // Byte for byte: key order included.
        assert_eq!(
            serde_json::to_string(&out).unwrap(),
            serde_json::to_string(&expected).unwrap()
        );
        // A claude model behind the Gemini API gets normalised ids; other-model thinking is text.
        let out = convert_messages(&spec("claude-x"), &msgs);
        assert_eq!(
            out[0]["parts"][2],
            json!({"functionCall": {"id": "a_b", "args": {"path": "p"}, "name": "read"}})
        );
        assert_eq!(out[0]["parts"][0], json!({"text": "t"}));
        assert_eq!(out[1]["parts"][0]["functionResponse"]["id"], "a_b");
    }

    #[test]
    fn function_call_signatures_are_kept_and_replayed_to_the_same_model_only() {
        let call = |sig: Option<&str>| {
            AssistantBlock::ToolCall(ToolCall {
                id: "bash_1".into(),
                name: "bash".into(),
                arguments: json!({"command": "ls"}),
                thought_signature: sig.map(str::to_owned),
            })
        };
        let from = |model: &str, block: AssistantBlock| {
            vec![Message::Assistant(AssistantMessage {
                content: vec![block],
                api: "google-generative-ai".into(),
                provider: "google".into(),
                model: model.into(),
                usage: Usage::default(),
                stop_reason: StopReason::ToolUse,
                error_message: None,
                response_id: None,
            })]
        };
        let part = |target: &str, msgs: Vec<Message>| {
            convert_messages(&spec(target), &msgs)[0]["parts"][0].clone()
        };
        let g3 = "gemini-3-pro-preview";
        assert_eq!(
            part(g3, from(g3, call(Some("c2lnX2Zj"))))["thoughtSignature"],
            "c2lnX2Zj"
        );
        assert_eq!(
            part(
                "gemini-2.5-flash",
                from("gemini-2.5-flash", call(Some("c2lnX2Zj")))
            ),
            json!({"functionCall": {"args": {"command": "ls"}, "name": "bash"}, "thoughtSignature": "c2lnX2Zj"})
        );
        // Another model's signature, or one that is not base64, is not sent: Gemini 3 gets the
        // sentinel instead, older models nothing.
        assert_eq!(
            part(g3, from("gemini-2.5-pro", call(Some("c2lnX2Zj"))))["thoughtSignature"],
            "skip_thought_signature_validator"
        );
        assert_eq!(
            part(g3, from(g3, call(Some("not base64!"))))["thoughtSignature"],
            "skip_thought_signature_validator"
        );
        assert_eq!(
            part(
                "gemini-2.5-flash",
                from("gemini-2.5-pro", call(Some("c2lnX2Zj")))
            )
            .get("thoughtSignature"),
            None
        );
    }

    #[test]
    fn thinking_configs() {
        assert_eq!(
            thinking_config("gemini-2.5-pro", ThinkingLevel::High),
            json!({"includeThoughts": true, "thinkingBudget": 32768})
        );
        assert_eq!(
            thinking_config("gemini-2.5-flash", ThinkingLevel::Minimal),
            json!({"includeThoughts": true, "thinkingBudget": 128})
        );
        assert_eq!(
            thinking_config("gemini-2.5-flash", ThinkingLevel::Off),
            json!({"thinkingBudget": 0})
        );
        assert_eq!(
            thinking_config("gemini-3-flash-preview", ThinkingLevel::Medium),
            json!({"includeThoughts": true, "thinkingLevel": "MEDIUM"})
        );
        assert_eq!(
            thinking_config("gemini-3-pro-preview", ThinkingLevel::Minimal),
            json!({"includeThoughts": true, "thinkingLevel": "LOW"})
        );
        let body = build_body(
            &spec("gemini-2.5-flash"),
            &Context {
                system_prompt: None,
                messages: vec![],
                tools: vec![],
            },
            &RequestOptions {
                max_tokens: 10,
                temperature: Some(0.5),
                thinking: Some(ThinkingLevel::Low),
                session_id: None,
            },
        );
        assert_eq!(
            serde_json::to_string(&body).unwrap(),
            r#"{"contents":[],"generationConfig":{"temperature":0.5,"maxOutputTokens":10,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":2048}}}"#
        );
    }
}
