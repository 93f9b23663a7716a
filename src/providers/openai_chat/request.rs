//! The request direction of OpenAI Chat Completions: `POST {base_url}/chat/completions` with
//! Bearer auth, the body in Pi's key order, and Pi's message conversion (tool results as `tool`
//! messages, their images gathered into one following user message, no error flag).
//!
//! A thinking level other than `off` is sent as `reasoning_effort` (after `tools`, as Pi).
//! Depends on `conversation` and the provider seams only.

use serde_json::{Map, Value, json};

use crate::conversation::{AssistantBlock, Content, Context, Message, UserContent};
use crate::providers::stream::post;
use crate::providers::transform::{
    IMAGE_ONLY_RESULT, normalize_id_openai_completions, transform_messages,
};
use crate::providers::transport::HttpRequest;
use crate::providers::wire::object;
use crate::providers::{MaxTokensField, ModelSpec, OpenAiCompat, RequestOptions, ThinkingLevel};

/// The text of the user message that carries the images of a turn's tool results.
pub const RESULT_IMAGES_TEXT: &str = "Attached image(s) from tool result:";

/// The request Pi would send: `POST {base_url}/chat/completions` with Bearer auth.
pub fn build_request(
    spec: &ModelSpec,
    compat: &OpenAiCompat,
    context: &Context,
    options: &RequestOptions,
) -> HttpRequest {
    let mut headers = vec![("accept".to_owned(), "application/json".to_owned())];
    if let Some(key) = &spec.api_key {
        headers.push(("authorization".into(), format!("Bearer {key}")));
    }
    headers.push(("content-type".into(), "application/json".into()));
    let body = build_body(spec, compat, context, options);
    post(spec, "/chat/completions", headers, body)
}

/// The request body, keys in Pi's order: `model, messages, stream, stream_options, store,
/// max_completion_tokens, [temperature], tools`.
pub fn build_body(
    spec: &ModelSpec,
    compat: &OpenAiCompat,
    context: &Context,
    options: &RequestOptions,
) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(spec.model));
    body.insert(
        "messages".into(),
        Value::Array(convert_messages(spec, context)),
    );
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    if compat.send_store {
        body.insert("store".into(), json!(false));
    }
    if options.max_tokens > 0 {
        let field = match compat.max_tokens_field {
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
            MaxTokensField::MaxTokens => "max_tokens",
        };
        body.insert(field.into(), json!(options.max_tokens));
    }
    if let Some(t) = options.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if !context.tools.is_empty() {
        let tools = context
            .tools
            .iter()
            .map(|t| {
                let mut function = Map::new();
                function.insert("name".into(), json!(t.name));
                function.insert("description".into(), json!(t.description));
                function.insert("parameters".into(), t.parameters.clone());
                if compat.supports_strict_mode {
                    function.insert("strict".into(), json!(false));
                }
                object([
                    ("type", json!("function")),
                    ("function", Value::Object(function)),
                ])
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    } else if context
        .messages
        .iter()
        .any(|m| matches!(m, Message::Assistant(a) if a.tool_calls().next().is_some()))
    {
        body.insert("tools".into(), json!([]));
    }
    if let Some(level) = options.thinking.filter(|l| *l != ThinkingLevel::Off) {
        body.insert("reasoning_effort".into(), json!(level.as_str()));
    }
    Value::Object(body)
}

fn image_part(data: &str, mime_type: &str) -> Value {
    json!({"type": "image_url", "image_url": {"url": format!("data:{mime_type};base64,{data}")}})
}

/// JavaScript's `JSON.stringify` of tool arguments; `serde_json` (order preserved) writes the
/// same bytes for the values JSON can carry.
fn stringify(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "{}".into())
}

/// The `messages` array: the system prompt, then Pi's transforms and conversion.
pub fn convert_messages(spec: &ModelSpec, context: &Context) -> Vec<Value> {
    let provider = spec.provider.clone();
    let normalize = move |id: &str| normalize_id_openai_completions(id, &provider);
    let messages = transform_messages(&context.messages, spec, &normalize);
    let mut out = Vec::new();
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        out.push(json!({"role": "system", "content": system}));
    }
    let mut i = 0;
    while i < messages.len() {
        match &messages[i] {
            Message::User { content } => match content {
                UserContent::Text(text) => out.push(json!({"role": "user", "content": text})),
                UserContent::Blocks(blocks) => {
                    let parts: Vec<Value> = blocks
                        .iter()
                        .map(|c| match c {
                            Content::Text { text } => json!({"type": "text", "text": text}),
                            Content::Image { data, mime_type } => image_part(data, mime_type),
                        })
                        .collect();
                    if !parts.is_empty() {
                        out.push(json!({"role": "user", "content": parts}));
                    }
                }
            },
            Message::Assistant(am) => {
                let mut msg = Map::new();
                msg.insert("role".into(), json!("assistant"));
                let texts: Vec<&str> = am
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        AssistantBlock::Text { text, .. } if !text.trim().is_empty() => {
                            Some(text.as_str())
                        }
                        _ => None,
                    })
                    .collect();
                let has_text = !texts.is_empty();
                msg.insert(
                    "content".into(),
                    if has_text {
                        json!(texts.concat())
                    } else {
                        Value::Null
                    },
                );
                // Thinking replays under the field it arrived in (`reasoning_content`, ...).
                let thinking: Vec<(&str, &str)> = am
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        AssistantBlock::Thinking {
                            thinking,
                            signature: Some(sig),
                            redacted: false,
                        } if !thinking.trim().is_empty() && !sig.is_empty() => {
                            Some((sig.as_str(), thinking.as_str()))
                        }
                        _ => None,
                    })
                    .collect();
                if let Some((field, _)) = thinking.first() {
                    let joined: Vec<&str> = thinking.iter().map(|(_, t)| *t).collect();
                    msg.insert((*field).to_owned(), json!(joined.join("\n")));
                }
                let calls: Vec<Value> = am
                    .tool_calls()
                    .map(|c| {
                        json!({
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": stringify(&c.arguments)},
                        })
                    })
                    .collect();
                let has_calls = !calls.is_empty();
                if has_calls {
                    msg.insert("tool_calls".into(), Value::Array(calls));
                }
                if has_text || has_calls {
                    out.push(Value::Object(msg));
                }
            }
            Message::ToolResult(_) => {
                let mut images = Vec::new();
                while let Some(Message::ToolResult(tr)) = messages.get(i) {
                    let text: Vec<&str> = tr.content.iter().filter_map(Content::as_text).collect();
                    let text = text.join("\n");
                    out.push(json!({
                        "role": "tool",
                        "content": if text.is_empty() { IMAGE_ONLY_RESULT.to_owned() } else { text },
                        "tool_call_id": tr.tool_call_id,
                    }));
                    for c in &tr.content {
                        if let Content::Image { data, mime_type } = c {
                            images.push(image_part(data, mime_type));
                        }
                    }
                    i += 1;
                }
                if !images.is_empty() {
                    let mut parts = vec![json!({"type": "text", "text": RESULT_IMAGES_TEXT})];
                    parts.extend(images);
                    out.push(json!({"role": "user", "content": parts}));
                }
                continue;
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{AssistantMessage, StopReason, ToolCall, Usage};
    use crate::providers::ApiKind;
    use crate::providers::stream::test_spec;

    fn spec() -> ModelSpec {
        let api = ApiKind::OpenaiCompletions;
        test_spec("openai", api, "gpt-test", "http://127.0.0.1:1/v1")
    }

    #[test]
    fn no_tools_but_tool_history_sends_an_empty_tool_list() {
        let ctx = Context {
            system_prompt: None,
            messages: vec![Message::Assistant(AssistantMessage {
                content: vec![AssistantBlock::ToolCall(ToolCall {
                    id: "x".into(),
                    name: "ls".into(),
                    arguments: json!({}),
                    thought_signature: None,
                })],
                api: "openai-completions".into(),
                provider: "openai".into(),
                model: "gpt-test".into(),
                usage: Usage::default(),
                stop_reason: StopReason::ToolUse,
                error_message: None,
                response_id: None,
            })],
            tools: vec![],
        };
        let compat = OpenAiCompat {
            max_tokens_field: MaxTokensField::MaxTokens,
            send_store: false,
            supports_strict_mode: false,
        };
        let body = build_body(&spec(), &compat, &ctx, &RequestOptions::default());
        let keys: Vec<&str> = body
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "model",
                "messages",
                "stream",
                "stream_options",
                "max_tokens",
                "tools"
            ]
        );
        assert_eq!(body["tools"], json!([]));
        // The orphaned call got Pi's synthetic error result.
        assert_eq!(
            body["messages"][1],
            json!({"role": "tool", "content": "No result provided", "tool_call_id": "x"})
        );
    }
}
