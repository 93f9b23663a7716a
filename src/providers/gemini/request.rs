//! The request direction of Gemini: `POST {base_url}/models/{model}:streamGenerateContent?alt=sse`
//! with `x-goog-api-key`, the body as Pi's Google SDK writes it (`contents` with roles
//! `user`/`model`, `systemInstruction`, `tools[].functionDeclarations` with
//! `parametersJsonSchema`, `generationConfig`), function responses merged into one user turn.
//!
//! Key order inside objects follows the SDK's converters (the capture confirms `parts` before
//! `role`, `args` before `name`, `data` before `mimeType`, `temperature` comes before
//! `maxOutputTokens`). Not captured, taken from the SDK's field order: a part's `thought` and
//! `thoughtSignature` after its `text`/`functionCall`, `id` first in `functionCall` and `parts`,
//! `id` before `name` in `functionResponse` (ids are only sent for `claude-`/`gpt-oss-` models).
//!
//! Depends on `conversation` and the provider seams only.

use serde_json::{Map, Value, json};

use crate::conversation::{AssistantBlock, Content, Context, Message, UserContent};
use crate::providers::stream::post;
use crate::providers::transform::{
    IMAGE_ONLY_RESULT, google_requires_tool_call_id, normalize_id_google, transform_messages,
};
use crate::providers::transport::HttpRequest;
use crate::providers::wire::object;
use crate::providers::{ModelSpec, RequestOptions, ThinkingLevel};

/// The text of the user message that carries the images of a turn's tool results (models before
/// Gemini 3, which take them inside the function response).
pub const RESULT_IMAGES_TEXT: &str = "Tool result image:";

/// The request Pi would send:
/// `POST {base_url}/models/{model}:streamGenerateContent?alt=sse` with `x-goog-api-key`.
pub fn build_request(spec: &ModelSpec, context: &Context, options: &RequestOptions) -> HttpRequest {
    let mut headers = vec![("content-type".to_owned(), "application/json".to_owned())];
    if let Some(key) = &spec.api_key {
        headers.push(("x-goog-api-key".into(), key.clone()));
    }
    headers.push(("accept".into(), "*/*".into()));
    let path = format!("/models/{}:streamGenerateContent?alt=sse", spec.model);
    post(spec, &path, headers, build_body(spec, context, options))
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
                object([
                    ("name", json!(t.name)),
                    ("description", json!(t.description)),
                    ("parametersJsonSchema", t.parameters.clone()),
                ])
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
                    IMAGE_ONLY_RESULT.to_owned()
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
                    let mut parts = vec![json!({"text": RESULT_IMAGES_TEXT})];
                    parts.extend(images);
                    out.push(json!({"parts": parts, "role": "user"}));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{AssistantMessage, StopReason, ToolCall, ToolResultMessage, Usage};
    use crate::providers::ApiKind;
    use crate::providers::stream::test_spec;

    fn spec(model: &str) -> ModelSpec {
        let api = ApiKind::GoogleGenerativeAi;
        test_spec("google", api, model, "http://127.0.0.1:1/v1beta")
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
