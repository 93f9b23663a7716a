//! The request direction of OpenAI Responses: `POST {base_url}/responses` with Bearer auth
//! (and the session headers when there is a session id), the body in Pi's key order, and Pi's
//! input items (system or developer message, user `input_text`/`input_image`, assistant
//! `message` items with ids, `function_call` items split from our `call|item` ids,
//! `function_call_output`, replayed reasoning items).
//!
//! A model counts as a reasoning model when [`RequestOptions::thinking`] is set: the system prompt
//! is then a `developer` message and `reasoning` (plus `include`) is sent. Depends on
//! `conversation` and the provider seams only.

use serde_json::{Map, Value, json};

use super::stream::read_text_signature;
use crate::conversation::{
    AssistantBlock, AssistantMessage, Content, Context, Message, UserContent,
};
use crate::providers::stream::post;
use crate::providers::transform::{
    IMAGE_ONLY_RESULT, normalize_id_openai_responses, short_hash, transform_messages_from,
};
use crate::providers::transport::HttpRequest;
use crate::providers::wire::object;
use crate::providers::{ModelSpec, RequestOptions, ThinkingLevel};

/// The request Pi would send: `POST {base_url}/responses` with Bearer auth, and the session
/// headers when there is a session id.
pub fn build_request(spec: &ModelSpec, context: &Context, options: &RequestOptions) -> HttpRequest {
    let mut headers = vec![("accept".to_owned(), "application/json".to_owned())];
    if let Some(key) = &spec.api_key {
        headers.push(("authorization".into(), format!("Bearer {key}")));
    }
    if let Some(session) = &options.session_id {
        headers.push(("session_id".into(), session.clone()));
        headers.push(("x-client-request-id".into(), session.clone()));
    }
    headers.push(("content-type".into(), "application/json".into()));
    post(
        spec,
        "/responses",
        headers,
        build_body(spec, context, options),
    )
}

/// The request body, keys in Pi's order: `model, input, stream, [prompt_cache_key], store,
/// max_output_tokens, [temperature], [tools], [reasoning, include]`.
pub fn build_body(spec: &ModelSpec, context: &Context, options: &RequestOptions) -> Value {
    let reasoning = options.thinking.is_some();
    let mut body = Map::new();
    body.insert("model".into(), json!(spec.model));
    body.insert(
        "input".into(),
        Value::Array(convert_input(spec, context, reasoning)),
    );
    body.insert("stream".into(), json!(true));
    if let Some(session) = &options.session_id {
        body.insert("prompt_cache_key".into(), json!(session));
    }
    body.insert("store".into(), json!(false));
    if options.max_tokens > 0 {
        body.insert("max_output_tokens".into(), json!(options.max_tokens));
    }
    if let Some(t) = options.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if !context.tools.is_empty() {
        let tools = context
            .tools
            .iter()
            .map(|t| {
                object([
                    ("type", json!("function")),
                    ("name", json!(t.name)),
                    ("description", json!(t.description)),
                    ("parameters", t.parameters.clone()),
                    ("strict", json!(false)),
                ])
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    match options.thinking {
        None => {}
        Some(ThinkingLevel::Off) => {
            body.insert("reasoning".into(), json!({"effort": "none"}));
        }
        Some(level) => {
            body.insert(
                "reasoning".into(),
                json!({"effort": level.as_str(), "summary": "auto"}),
            );
            body.insert("include".into(), json!(["reasoning.encrypted_content"]));
        }
    }
    Value::Object(body)
}

fn image_part(data: &str, mime_type: &str) -> Value {
    json!({"type": "input_image", "detail": "auto", "image_url": format!("data:{mime_type};base64,{data}")})
}

/// The id of an assistant text block: from its `{"v":1,"id":…,"phase"?}` signature (or a legacy
/// plain-string signature), hashed when longer than 64; without one, `msg_<index>`.
fn text_item_id(signature: Option<&str>, msg_index: usize) -> (String, Option<String>) {
    let parsed = signature.filter(|s| !s.is_empty()).map(|sig| {
        let (id, phase) = read_text_signature(sig);
        let phase = phase.filter(|p| matches!(p.as_str(), "commentary" | "final_answer"));
        (id, phase)
    });
    match parsed {
        None => (format!("msg_{msg_index}"), None),
        Some((id, phase)) if id.chars().count() > 64 => (format!("msg_{}", short_hash(&id)), phase),
        Some(found) => found,
    }
}

/// The `input` array: the system prompt, then Pi's transforms and conversion.
pub fn convert_input(spec: &ModelSpec, context: &Context, reasoning: bool) -> Vec<Value> {
    let normalize =
        |id: &str, source: &AssistantMessage| normalize_id_openai_responses(id, spec, source);
    let messages = transform_messages_from(&context.messages, spec, &normalize);
    let mut out = Vec::new();
    if let Some(system) = context.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        let role = if reasoning { "developer" } else { "system" };
        out.push(json!({"role": role, "content": system}));
    }
    // Pi counts the messages it converts; a skipped message does not count.
    let mut msg_index = 0;
    for msg in &messages {
        match msg {
            Message::User { content } => {
                let parts: Vec<Value> = match content {
                    UserContent::Text(text) => vec![json!({"type": "input_text", "text": text})],
                    UserContent::Blocks(blocks) => blocks
                        .iter()
                        .map(|c| match c {
                            Content::Text { text } => json!({"type": "input_text", "text": text}),
                            Content::Image { data, mime_type } => image_part(data, mime_type),
                        })
                        .collect(),
                };
                if parts.is_empty() {
                    continue;
                }
                out.push(json!({"role": "user", "content": parts}));
            }
            Message::Assistant(am) => {
                let different_model = am.model != spec.model
                    && am.provider == spec.provider
                    && am.api == spec.api.as_str();
                let mut skipped_thinking = false;
                let mut items = Vec::new();
                for block in &am.content {
                    match block {
                        AssistantBlock::Thinking { signature, .. } => {
                            match signature.as_deref().filter(|s| !s.is_empty()) {
                                Some(sig) => match serde_json::from_str::<Value>(sig) {
                                    Ok(item) => items.push(item),
                                    Err(_) => skipped_thinking = true,
                                },
                                None => skipped_thinking = true,
                            }
                        }
                        AssistantBlock::Text { text, signature } => {
                            let (id, phase) = text_item_id(signature.as_deref(), msg_index);
                            let mut item = Map::new();
                            item.insert("type".into(), json!("message"));
                            item.insert("role".into(), json!("assistant"));
                            item.insert(
                                "content".into(),
                                json!([{"type": "output_text", "text": text, "annotations": []}]),
                            );
                            item.insert("status".into(), json!("completed"));
                            item.insert("id".into(), json!(id));
                            if let Some(phase) = phase {
                                item.insert("phase".into(), json!(phase));
                            }
                            items.push(Value::Object(item));
                        }
                        AssistantBlock::ToolCall(call) => {
                            let (call_id, item_id) = match call.id.split_once('|') {
                                Some((c, rest)) => (c, rest.split('|').next()),
                                None => (call.id.as_str(), None),
                            };
                            let item_id = item_id.filter(|item| {
                                !((different_model || skipped_thinking) && item.starts_with("fc_"))
                            });
                            let mut item = Map::new();
                            item.insert("type".into(), json!("function_call"));
                            if let Some(item_id) = item_id {
                                item.insert("id".into(), json!(item_id));
                            }
                            item.insert("call_id".into(), json!(call_id));
                            item.insert("name".into(), json!(call.name));
                            item.insert(
                                "arguments".into(),
                                json!(serde_json::to_string(&call.arguments).unwrap_or_default()),
                            );
                            items.push(Value::Object(item));
                        }
                    }
                }
                if items.is_empty() {
                    continue;
                }
                out.extend(items);
            }
            Message::ToolResult(tr) => {
                let text: Vec<&str> = tr.content.iter().filter_map(Content::as_text).collect();
                let text = text.join("\n");
                let has_images = tr
                    .content
                    .iter()
                    .any(|c| matches!(c, Content::Image { .. }));
                let output = if has_images {
                    let mut parts = Vec::new();
                    if !text.is_empty() {
                        parts.push(json!({"type": "input_text", "text": text}));
                    }
                    for c in &tr.content {
                        if let Content::Image { data, mime_type } = c {
                            parts.push(image_part(data, mime_type));
                        }
                    }
                    Value::Array(parts)
                } else if text.is_empty() {
                    json!(IMAGE_ONLY_RESULT)
                } else {
                    json!(text)
                };
                let call_id = tr.tool_call_id.split('|').next().unwrap_or("");
                out.push(
                    json!({"type": "function_call_output", "call_id": call_id, "output": output}),
                );
            }
        }
        msg_index += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{StopReason, ToolCall, ToolResultMessage, Usage};
    use crate::providers::ApiKind;
    use crate::providers::stream::test_spec;

    fn spec() -> ModelSpec {
        let api = ApiKind::OpenaiResponses;
        test_spec("openai", api, "gpt-resp-test", "http://127.0.0.1:1/v1")
    }

    #[test]
    fn replays_ids_signatures_and_reasoning_items() {
        let reasoning = json!({"type":"reasoning","id":"rs_1","summary":[]});
        let am = AssistantMessage {
            content: vec![
                AssistantBlock::Thinking {
                    thinking: "t".into(),
                    signature: Some(reasoning.to_string()),
                    redacted: false,
                },
                AssistantBlock::Text {
                    text: "x".into(),
                    signature: Some(format!("{{\"v\":1,\"id\":\"{}\"}}", "m".repeat(70))),
                },
                AssistantBlock::ToolCall(ToolCall {
                    id: "call_1|fc_1".into(),
                    name: "ls".into(),
                    arguments: json!({}),
                    thought_signature: None,
                }),
            ],
            api: "openai-responses".into(),
            provider: "openai".into(),
            model: "gpt-resp-test".into(),
            usage: Usage::default(),
            stop_reason: StopReason::ToolUse,
            error_message: None,
            response_id: None,
        };
        let ctx = Context {
            system_prompt: Some("sys".into()),
            messages: vec![
                Message::Assistant(am),
                Message::ToolResult(ToolResultMessage {
                    tool_call_id: "call_1|fc_1".into(),
                    tool_name: "ls".into(),
                    content: vec![],
                    is_error: true,
                }),
            ],
            tools: vec![],
        };
        let input = convert_input(&spec(), &ctx, true);
        assert_eq!(
            Value::Array(input),
            json!([
                {"role": "developer", "content": "sys"},
                reasoning,
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x", "annotations": []}],
                 "status": "completed", "id": format!("msg_{}", short_hash(&"m".repeat(70)))},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "ls", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "(see attached image)"},
            ])
        );
    }

    #[test]
    fn reasoning_settings_follow_the_level() {
        let ctx = Context {
            system_prompt: None,
            messages: vec![],
            tools: vec![],
        };
        let mut options = RequestOptions::default();
        let body = build_body(&spec(), &ctx, &options);
        assert!(body.get("reasoning").is_none() && body.get("include").is_none());
        options.thinking = Some(ThinkingLevel::High);
        let body = build_body(&spec(), &ctx, &options);
        assert_eq!(
            body["reasoning"],
            json!({"effort": "high", "summary": "auto"})
        );
        assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
        options.thinking = Some(ThinkingLevel::Off);
        let body = build_body(&spec(), &ctx, &options);
        assert_eq!(body["reasoning"], json!({"effort": "none"}));
        assert!(body.get("include").is_none());
    }
}
