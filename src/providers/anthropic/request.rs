//! The request direction of Anthropic Messages: `POST {base_url}/v1/messages` with Pi's
//! headers, the body in Pi's exact key order, and Pi's message conversion.
//!
//! Thinking follows [`RequestOptions::thinking`] ([`thinking_param`]); with thinking on,
//! `temperature` is not sent, as Pi. Depends on `conversation` and the provider seams only.

use serde_json::{Map, Value, json};

use crate::conversation::{AssistantBlock, Content, Context, Message, UserContent};
use crate::providers::stream::post;
use crate::providers::transform::{IMAGE_ONLY_RESULT, normalize_id_anthropic, transform_messages};
use crate::providers::transport::HttpRequest;
use crate::providers::wire::object;
use crate::providers::{ModelSpec, RequestOptions, ThinkingLevel};

/// The request Pi would send for `context`: `POST {base_url}/v1/messages` with its headers.
pub fn build_request(spec: &ModelSpec, context: &Context, options: &RequestOptions) -> HttpRequest {
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
                object([
                    ("name", json!(t.name)),
                    ("description", json!(t.description)),
                    ("eager_input_streaming", json!(true)),
                    (
                        "input_schema",
                        object([
                            ("type", json!("object")),
                            ("properties", properties),
                            ("required", required),
                        ]),
                    ),
                ])
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
        blocks.insert(0, json!({"type": "text", "text": IMAGE_ONLY_RESULT}));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::ToolResultMessage;
    use crate::providers::ApiKind;
    use crate::providers::stream::test_spec;

    fn spec() -> ModelSpec {
        let api = ApiKind::AnthropicMessages;
        test_spec("anthropic", api, "claude-test", "http://127.0.0.1:1")
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
        let req = build_request(
            &spec(),
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
        let req = build_request(&adaptive, &ctx, &RequestOptions::default());
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
