//! Anthropic Messages over SSE (spec section 9, "Anthropic Messages"): the request body in Pi's
//! exact key order and message conversion, Pi's headers, and the stream reader that turns
//! `message_start` / `content_block_*` / `message_delta` / `message_stop` into an
//! [`AssistantMessage`].
//!
//! Thinking follows [`RequestOptions::thinking`] ([`thinking_param`]); with thinking on,
//! `temperature` is not sent, as Pi. Not reproduced (yet): OAuth keys (`sk-ant-oat…`: Bearer
//! auth, Claude Code names), adaptive thinking (`{type: "adaptive"}` for opus-4-6), long cache
//! retention, and costs. Depends on `conversation` and the provider seams only.

use std::future::Future;

use serde_json::{Map, Value, json};

use super::errors;
use super::sse::SseStream;
use super::stream::{SseProvider, WireFormat, empty_reply, finish_reply, post};
use super::transform::{normalize_id_anthropic, parse_streaming_json, transform_messages};
use super::transport::HttpRequest;
use super::{ModelSpec, ProviderError, RequestOptions, ThinkingLevel};
use crate::conversation::{
    AssistantBlock, AssistantMessage, Content, Context, Message, StopReason, ToolCall, Usage,
    UserContent,
};

/// The Anthropic Messages provider.
pub type Anthropic = SseProvider<AnthropicWire>;

/// Anthropic Messages as a [`WireFormat`].
#[derive(Debug, Default)]
pub struct AnthropicWire;

impl WireFormat for AnthropicWire {
    fn for_spec(_spec: &ModelSpec) -> Self {
        AnthropicWire
    }

    /// The request Pi would send for `context`: `POST {base_url}/v1/messages` with its headers.
    fn build_request(
        &self,
        spec: &ModelSpec,
        context: &Context,
        options: &RequestOptions,
    ) -> HttpRequest {
        let mut headers = vec![("anthropic-version".to_owned(), "2023-06-01".to_owned())];
        if let Some(key) = &spec.api_key {
            headers.push(("x-api-key".into(), key.clone()));
        }
        headers.push(("accept".into(), "application/json".into()));
        headers.push((
            "anthropic-dangerous-direct-browser-access".into(),
            "true".into(),
        ));
        if !is_adaptive_model(&spec.model) {
            headers.push((
                "anthropic-beta".into(),
                "interleaved-thinking-2025-05-14".into(),
            ));
        }
        headers.push(("content-type".into(), "application/json".into()));
        post(
            spec,
            "/v1/messages",
            headers,
            build_body(spec, context, options),
        )
    }

    fn read_stream<'a>(
        &'a self,
        spec: &'a ModelSpec,
        stream: &'a mut SseStream,
    ) -> impl Future<Output = Result<AssistantMessage, ProviderError>> + Send + 'a {
        read_stream(spec, stream)
    }
}

/// Adaptive-thinking models, which Pi sends without the interleaved-thinking beta.
fn is_adaptive_model(model: &str) -> bool {
    ["opus-4-6", "opus-4-7", "sonnet-4-6"]
        .iter()
        .any(|m| model.contains(m))
}

fn cache_control() -> Value {
    json!({"type": "ephemeral"})
}

/// The request body, keys in Pi's order: `model, messages, max_tokens, stream, system,
/// [temperature], tools`.
pub fn build_body(spec: &ModelSpec, context: &Context, options: &RequestOptions) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(spec.model));
    body.insert(
        "messages".into(),
        Value::Array(convert_messages(spec, &context.messages)),
    );
    body.insert("max_tokens".into(), json!(options.max_tokens));
    body.insert("stream".into(), json!(true));
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": system, "cache_control": cache_control()}]),
        );
    }
    let thinking_on = options
        .thinking
        .is_some_and(|level| level != ThinkingLevel::Off);
    if let Some(t) = options.temperature.filter(|_| !thinking_on) {
        body.insert("temperature".into(), json!(t));
    }
    if !context.tools.is_empty() {
        let mut tools: Vec<Value> = context
            .tools
            .iter()
            .map(|t| {
                let properties = t
                    .parameters
                    .get("properties")
                    .cloned()
                    .unwrap_or_else(|| json!({}));
                let required = t
                    .parameters
                    .get("required")
                    .cloned()
                    .unwrap_or_else(|| json!([]));
                json!({
                    "name": t.name,
                    "description": t.description,
                    "eager_input_streaming": true,
                    "input_schema": {"type": "object", "properties": properties, "required": required},
                })
            })
            .collect();
        if let Some(Value::Object(last)) = tools.last_mut() {
            last.insert("cache_control".into(), cache_control());
        }
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(level) = options.thinking {
        body.insert("thinking".into(), thinking_param(level, options.max_tokens));
    }
    Value::Object(body)
}

/// Pi's `thinking` parameter for a level: the level's budget, cut to leave 1024 output tokens
/// when `max_tokens` cannot hold it (`adjustMaxTokensForThinking`). Pi also raises `max_tokens`
/// by the budget up to the model's limit; we know no model limits, so `max_tokens` is taken as
/// the whole allowance.
pub fn thinking_param(level: ThinkingLevel, max_tokens: u32) -> Value {
    if level == ThinkingLevel::Off {
        return json!({"type": "disabled"});
    }
    let mut budget = level.default_budget();
    if max_tokens <= budget {
        budget = max_tokens.saturating_sub(1024);
    }
    json!({"type": "enabled", "budget_tokens": budget, "display": "summarized"})
}

fn image_block(data: &str, mime_type: &str) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": mime_type, "data": data}})
}

fn tool_result_content(content: &[Content]) -> Value {
    let has_images = content.iter().any(|c| matches!(c, Content::Image { .. }));
    if !has_images {
        let texts: Vec<&str> = content.iter().filter_map(Content::as_text).collect();
        return json!(texts.join("\n"));
    }
    let mut blocks: Vec<Value> = content
        .iter()
        .map(|c| match c {
            Content::Text { text } => json!({"type": "text", "text": text}),
            Content::Image { data, mime_type } => image_block(data, mime_type),
        })
        .collect();
    if !content.iter().any(|c| matches!(c, Content::Text { .. })) {
        blocks.insert(0, json!({"type": "text", "text": "(see attached image)"}));
    }
    Value::Array(blocks)
}

/// The `messages` array: Pi's transforms, then Anthropic's conversion and cache marker.
pub fn convert_messages(spec: &ModelSpec, messages: &[Message]) -> Vec<Value> {
    let messages = transform_messages(messages, spec, &normalize_id_anthropic);
    let mut out: Vec<Value> = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        match &messages[i] {
            Message::User { content } => match content {
                UserContent::Text(text) => {
                    if !text.trim().is_empty() {
                        out.push(json!({"role": "user", "content": text}));
                    }
                }
                UserContent::Blocks(blocks) => {
                    let blocks: Vec<Value> = blocks
                        .iter()
                        .filter_map(|c| match c {
                            Content::Text { text } if text.trim().is_empty() => None,
                            Content::Text { text } => Some(json!({"type": "text", "text": text})),
                            Content::Image { data, mime_type } => {
                                Some(image_block(data, mime_type))
                            }
                        })
                        .collect();
                    if !blocks.is_empty() {
                        out.push(json!({"role": "user", "content": blocks}));
                    }
                }
            },
            Message::Assistant(am) => {
                let blocks: Vec<Value> = am
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        AssistantBlock::Text { text, .. } => (!text.trim().is_empty())
                            .then(|| json!({"type": "text", "text": text})),
                        AssistantBlock::Thinking {
                            thinking,
                            signature,
                            redacted,
                        } => {
                            if *redacted {
                                return Some(json!({
                                    "type": "redacted_thinking",
                                    "data": signature.clone().unwrap_or_default(),
                                }));
                            }
                            if thinking.trim().is_empty() {
                                return None;
                            }
                            match signature.as_deref().filter(|s| !s.trim().is_empty()) {
                                None => Some(json!({"type": "text", "text": thinking})),
                                Some(sig) => Some(json!({
                                    "type": "thinking", "thinking": thinking, "signature": sig,
                                })),
                            }
                        }
                        AssistantBlock::ToolCall(call) => Some(json!({
                            "type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments,
                        })),
                    })
                    .collect();
                if !blocks.is_empty() {
                    out.push(json!({"role": "assistant", "content": blocks}));
                }
            }
            Message::ToolResult(_) => {
                let mut results = Vec::new();
                while let Some(Message::ToolResult(tr)) = messages.get(i) {
                    results.push(json!({
                        "type": "tool_result",
                        "tool_use_id": tr.tool_call_id,
                        "content": tool_result_content(&tr.content),
                        "is_error": tr.is_error,
                    }));
                    i += 1;
                }
                out.push(json!({"role": "user", "content": results}));
                continue;
            }
        }
        i += 1;
    }
    if let Some(last) = out.last_mut() {
        if last["role"] == "user" {
            let content = &mut last["content"];
            if let Value::String(text) = content {
                *content =
                    json!([{"type": "text", "text": text, "cache_control": cache_control()}]);
            } else if let Some(Value::Object(block)) =
                content.as_array_mut().and_then(|a| a.last_mut())
            {
                if matches!(
                    block.get("type").and_then(Value::as_str),
                    Some("text" | "image" | "tool_result")
                ) {
                    block.insert("cache_control".into(), cache_control());
                }
            }
        }
    }
    out
}

/// Pi's mapping of Anthropic stop reasons.
pub fn map_stop_reason(reason: &str) -> Result<StopReason, ProviderError> {
    match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => Ok(StopReason::Stop),
        "max_tokens" => Ok(StopReason::Length),
        "tool_use" => Ok(StopReason::ToolUse),
        "refusal" | "sensitive" => Ok(StopReason::Error),
        other => Err(ProviderError::Protocol {
            message: format!("Unhandled stop reason: {other}"),
        }),
    }
}

fn apply_usage(usage: &mut Usage, u: &Value) {
    let set = |field: &mut u64, key: &str| {
        if let Some(n) = u.get(key).and_then(Value::as_u64) {
            *field = n;
        }
    };
    set(&mut usage.input, "input_tokens");
    set(&mut usage.output, "output_tokens");
    set(&mut usage.cache_read, "cache_read_input_tokens");
    set(&mut usage.cache_write, "cache_creation_input_tokens");
    usage.total_tokens = usage
        .input
        .saturating_add(usage.output)
        .saturating_add(usage.cache_read)
        .saturating_add(usage.cache_write);
}

/// Reads an Anthropic event stream to the finished reply.
///
/// An `event: error` is the provider's failure, typed by its `error.type`
/// ([`errors::from_stream_error`]: `overloaded_error` is overloaded, `api_error` a server error,
/// both retried). Pi makes it an error reply and leaves retrying to its session's regex; we
/// never count it against the model. A refusal (`stop_reason: refusal`) ends the reply with stop
/// reason `error` and `"An unknown error occurred"`, as Pi. A stream that ends before
/// `message_stop` is [`ProviderError::StreamCut`]; an unknown stop reason or unparsable data is
/// [`ProviderError::Protocol`].
pub async fn read_stream(
    spec: &ModelSpec,
    stream: &mut SseStream,
) -> Result<AssistantMessage, ProviderError> {
    let mut msg = empty_reply(spec);
    // Anthropic's block index -> (position in msg.content, partial tool JSON).
    let mut blocks: Vec<(u64, usize, String)> = Vec::new();
    let mut stopped = false;
    while let Some(ev) = stream.next_event().await? {
        let name = ev.event.as_deref().unwrap_or("");
        if name == "error" {
            let data: Value = serde_json::from_str(&ev.data).unwrap_or(Value::Null);
            let error = &data["error"];
            return Err(match (error["type"].as_str(), error["message"].as_str()) {
                (Some(kind), message) => errors::from_stream_error(kind, message.unwrap_or("")),
                (None, _) => errors::from_stream_error("", &ev.data),
            });
        }
        if !matches!(
            name,
            "message_start"
                | "message_delta"
                | "message_stop"
                | "content_block_start"
                | "content_block_delta"
                | "content_block_stop"
        ) {
            continue;
        }
        let data: Value = serde_json::from_str(&ev.data)
            .ok()
            .or_else(|| {
                let repaired = parse_streaming_json(&ev.data);
                (repaired != json!({})).then_some(repaired)
            })
            .ok_or_else(|| ProviderError::Protocol {
                message: format!("Anthropic sent unparsable {name} data: {}", ev.data),
            })?;
        match name {
            "message_start" => {
                let m = &data["message"];
                if let Some(id) = m.get("id").and_then(Value::as_str) {
                    msg.response_id = Some(id.to_owned());
                }
                apply_usage(&mut msg.usage, &m["usage"]);
            }
            "content_block_start" => {
                let index = data["index"].as_u64().unwrap_or(0);
                let cb = &data["content_block"];
                let block = match cb["type"].as_str().unwrap_or("") {
                    "text" => AssistantBlock::Text {
                        text: cb["text"].as_str().unwrap_or("").to_owned(),
                        signature: None,
                    },
                    "thinking" => AssistantBlock::Thinking {
                        thinking: cb["thinking"].as_str().unwrap_or("").to_owned(),
                        signature: Some(cb["signature"].as_str().unwrap_or("").to_owned()),
                        redacted: false,
                    },
                    "redacted_thinking" => AssistantBlock::Thinking {
                        thinking: "[Reasoning redacted]".to_owned(),
                        signature: Some(cb["data"].as_str().unwrap_or("").to_owned()),
                        redacted: true,
                    },
                    "tool_use" => AssistantBlock::ToolCall(ToolCall {
                        id: cb["id"].as_str().unwrap_or("").to_owned(),
                        name: cb["name"].as_str().unwrap_or("").to_owned(),
                        arguments: match &cb["input"] {
                            Value::Object(o) => Value::Object(o.clone()),
                            _ => json!({}),
                        },
                        thought_signature: None,
                    }),
                    _ => continue,
                };
                msg.content.push(block);
                blocks.push((index, msg.content.len() - 1, String::new()));
            }
            "content_block_delta" => {
                let index = data["index"].as_u64().unwrap_or(0);
                let Some((_, pos, partial)) = blocks.iter_mut().find(|(i, _, _)| *i == index)
                else {
                    continue;
                };
                let delta = &data["delta"];
                let s = |k: &str| delta[k].as_str().unwrap_or("");
                match (delta["type"].as_str().unwrap_or(""), &mut msg.content[*pos]) {
                    ("text_delta", AssistantBlock::Text { text, .. }) => text.push_str(s("text")),
                    ("thinking_delta", AssistantBlock::Thinking { thinking, .. }) => {
                        thinking.push_str(s("thinking"))
                    }
                    ("signature_delta", AssistantBlock::Thinking { signature, .. }) => signature
                        .get_or_insert_with(String::new)
                        .push_str(s("signature")),
                    ("input_json_delta", AssistantBlock::ToolCall(call)) => {
                        partial.push_str(s("partial_json"));
                        call.arguments = parse_streaming_json(partial);
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let index = data["index"].as_u64().unwrap_or(0);
                if let Some((_, pos, partial)) = blocks.iter().find(|(i, _, _)| *i == index) {
                    if let AssistantBlock::ToolCall(call) = &mut msg.content[*pos] {
                        if !partial.is_empty() {
                            call.arguments = parse_streaming_json(partial);
                        }
                    }
                }
            }
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    msg.stop_reason = map_stop_reason(reason)?;
                }
                apply_usage(&mut msg.usage, &data["usage"]);
            }
            "message_stop" => {
                stopped = true;
                break;
            }
            _ => {}
        }
    }
    let cut = (!stopped).then_some("Anthropic stream ended before message_stop");
    finish_reply(msg, cut)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::ToolResultMessage;
    use crate::providers::ApiKind;
    use crate::providers::sse::SseEvent;
    use crate::providers::stream::{test_spec, test_stream};
    use std::sync::Arc;

    fn spec() -> ModelSpec {
        let api = ApiKind::AnthropicMessages;
        test_spec("anthropic", api, "claude-test", "http://127.0.0.1:1")
    }

    fn stream(events: &[(&str, Value)]) -> SseStream {
        let evs: Vec<SseEvent> = events
            .iter()
            .map(|(n, d)| SseEvent::named(*n, d.to_string()))
            .collect();
        test_stream(&evs)
    }

    #[tokio::test]
    async fn reads_text_tool_use_and_usage() {
        let mut s = stream(&[
            (
                "message_start",
                json!({"type":"message_start","message":{"id":"msg_01","usage":{"input_tokens":100,"output_tokens":1,"cache_read_input_tokens":20,"cache_creation_input_tokens":5}}}),
            ),
            ("ping", json!({"type":"ping"})),
            (
                "content_block_start",
                json!({"index":0,"content_block":{"type":"text","text":""}}),
            ),
            (
                "content_block_delta",
                json!({"index":0,"delta":{"type":"text_delta","text":"Read"}}),
            ),
            (
                "content_block_delta",
                json!({"index":0,"delta":{"type":"text_delta","text":"ing."}}),
            ),
            ("content_block_stop", json!({"index":0})),
            (
                "content_block_start",
                json!({"index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"read","input":{}}}),
            ),
            (
                "content_block_delta",
                json!({"index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}),
            ),
            (
                "content_block_delta",
                json!({"index":1,"delta":{"type":"input_json_delta","partial_json":"\"a.txt\"}"}}),
            ),
            ("content_block_stop", json!({"index":1})),
            (
                "content_block_start",
                json!({"index":2,"content_block":{"type":"tool_use","id":"toolu_02","name":"ls","input":{}}}),
            ),
            ("content_block_stop", json!({"index":2})),
            (
                "message_delta",
                json!({"delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":42,"input_tokens":null}}),
            ),
            ("message_stop", json!({})),
        ]);
        let m = read_stream(&spec(), &mut s).await.unwrap();
        assert_eq!(m.text(), "Reading.");
        let calls: Vec<_> = m.tool_calls().cloned().collect();
        assert_eq!(calls[0].arguments, json!({"path":"a.txt"}));
        assert_eq!(calls[1].arguments, json!({}));
        assert_eq!(m.stop_reason, StopReason::ToolUse);
        assert_eq!(m.response_id.as_deref(), Some("msg_01"));
        assert_eq!(
            m.usage,
            Usage {
                input: 100,
                output: 42,
                cache_read: 20,
                cache_write: 5,
                total_tokens: 167
            }
        );
    }

    #[tokio::test]
    async fn unknown_stop_reason_and_early_end_are_errors() {
        let mut s = stream(&[
            ("message_start", json!({"message":{"id":"m"}})),
            ("message_delta", json!({"delta":{"stop_reason":"weird"}})),
        ]);
        assert_eq!(
            read_stream(&spec(), &mut s).await.unwrap_err(),
            ProviderError::Protocol {
                message: "Unhandled stop reason: weird".into()
            }
        );
        let mut s = stream(&[("message_start", json!({"message":{"id":"m"}}))]);
        assert_eq!(
            read_stream(&spec(), &mut s).await.unwrap_err(),
            ProviderError::StreamCut {
                message: "Anthropic stream ended before message_stop".into()
            }
        );
    }

    #[tokio::test]
    async fn error_events_are_typed_provider_errors() {
        let start = ("message_start", json!({"message":{"id":"m"}}));
        for (kind, expected) in [
            ("overloaded_error", "overloaded"),
            ("api_error", "server_error"),
            ("rate_limit_error", "rate_limited"),
            ("invalid_request_error", "invalid_request"),
        ] {
            let mut s = stream(&[
                start.clone(),
                (
                    "error",
                    json!({"type":"error","error":{"type":kind,"message":"try again"}}),
                ),
            ]);
            let err = read_stream(&spec(), &mut s).await.unwrap_err();
            assert_eq!(err.kind(), expected, "{err}");
            assert_eq!(
                err.is_retryable(),
                expected != "invalid_request",
                "{kind} retried"
            );
        }
        // Data that is not Anthropic's error shape is a server error, not a model error.
        let mut s = test_stream(&[SseEvent::named("error", "upstream connect error")]);
        assert_eq!(
            read_stream(&spec(), &mut s).await.unwrap_err(),
            ProviderError::Server {
                status: 500,
                message: "error event in the stream: upstream connect error".into()
            }
        );
    }

    #[test]
    fn a_string_prompt_becomes_a_cached_block_and_headers_follow_the_model() {
        let ctx = Context {
            system_prompt: None,
            messages: vec![Message::User {
                content: UserContent::Text("hi".into()),
            }],
            tools: vec![],
        };
        let a = Anthropic::new(
            spec(),
            Arc::new(crate::providers::live::LiveTransport::new().unwrap()),
        );
        let req = a.build_request(
            &ctx,
            &RequestOptions {
                max_tokens: 100,
                temperature: Some(0.5),
                ..RequestOptions::default()
            },
        );
        assert_eq!(req.url, "http://127.0.0.1:1/v1/messages");
        assert_eq!(
            req.body,
            json!({"model":"claude-test","messages":[{"role":"user","content":[
                {"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}],
                "max_tokens":100,"stream":true,"temperature":0.5})
        );
        let keys: Vec<&str> = req
            .body
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            ["model", "messages", "max_tokens", "stream", "temperature"]
        );
        assert!(req.headers.iter().any(|(k, _)| k == "anthropic-beta"));
        let mut adaptive = spec();
        adaptive.model = "claude-sonnet-4-6".into();
        let a = Anthropic::new(
            adaptive,
            Arc::new(crate::providers::live::LiveTransport::new().unwrap()),
        );
        let req = a.build_request(&ctx, &RequestOptions::default());
        assert!(!req.headers.iter().any(|(k, _)| k == "anthropic-beta"));
    }

    #[test]
    fn tool_results_merge_and_last_user_block_is_cached() {
        let tr = |id: &str, content: Vec<Content>, is_error| {
            Message::ToolResult(ToolResultMessage {
                tool_call_id: id.into(),
                tool_name: "read".into(),
                content,
                is_error,
            })
        };
        let msgs = vec![
            Message::User {
                content: UserContent::Text("  ".into()),
            },
            tr("a", vec![Content::text("x"), Content::text("y")], false),
            tr(
                "b",
                vec![Content::Image {
                    data: "AA".into(),
                    mime_type: "image/png".into(),
                }],
                true,
            ),
        ];
        let out = convert_messages(&spec(), &msgs);
        assert_eq!(
            Value::Array(out),
            json!([{"role":"user","content":[
                {"type":"tool_result","tool_use_id":"a","content":"x\ny","is_error":false},
                {"type":"tool_result","tool_use_id":"b","content":[
                    {"type":"text","text":"(see attached image)"},
                    {"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA"}}
                ],"is_error":true,"cache_control":{"type":"ephemeral"}}
            ]}])
        );
    }
}
