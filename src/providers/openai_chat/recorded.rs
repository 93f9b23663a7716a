//! The recorded direction of OpenAI Chat Completions: a request body read back into a
//! [`ParsedRequest`]. `system` and `developer` messages are the system prompt, `tool` messages
//! tool results, an assistant message's reasoning field, content and `tool_calls` its parts; the
//! user message that carries the images of a turn's tool results is marked as such.
//!
//! Depends on `conversation` (through [`ParsedRequest`]) only.

use serde_json::{Value, json};

use super::request::RESULT_IMAGES_TEXT;
use super::stream::REASONING_FIELDS;
use crate::providers::wire::parsed::{
    ParsedArguments, ParsedContent, ParsedMessage, ParsedMessageKind, ParsedPart, ParsedPartKind,
    ParsedRequest, ParsedTool, ParsedToolCall, ParsedToolResult, array, fields_except, str_at,
};

/// `body` in neutral terms.
pub fn parse_request(body: &Value) -> ParsedRequest {
    let Some(obj) = body.as_object() else {
        return ParsedRequest::default();
    };
    let params = fields_except(body, &["messages", "tools"]);
    let tools = array(obj.get("tools")).map(tool).collect();
    let mut messages = Vec::new();
    for m in array(obj.get("messages")) {
        let body = m.get("content").unwrap_or(&Value::Null);
        let role = str_at(m, "role");
        let kind = match role {
            Some("system" | "developer") => ParsedMessageKind::System {
                content: content(body),
                role: role.map(str::to_owned),
            },
            Some("assistant") => ParsedMessageKind::Assistant {
                parts: assistant_parts(m, body),
            },
            Some("tool") => ParsedMessageKind::ToolResult(ParsedToolResult {
                call_id: str_at(m, "tool_call_id").map(str::to_owned),
                tool_name: str_at(m, "name").map(str::to_owned),
                content: content(body),
                attachments: Vec::new(),
                is_error: false,
                call: None,
            }),
            _ => {
                let content = content(body);
                let result_images = matches!(
                    content.first(),
                    Some(ParsedContent::Text(t)) if t.starts_with(RESULT_IMAGES_TEXT)
                );
                ParsedMessageKind::User {
                    content,
                    result_images,
                }
            }
        };
        messages.push(ParsedMessage {
            raw: m.clone(),
            kind,
        });
    }
    ParsedRequest::new(params, tools, messages)
}

/// An `image_url` part.
fn image(block: &Value) -> Option<ParsedContent> {
    (str_at(block, "type") == Some("image_url")).then(|| {
        ParsedContent::ImageUrl(
            str_at(&block["image_url"], "url")
                .unwrap_or_default()
                .to_owned(),
        )
    })
}

fn content(v: &Value) -> Vec<ParsedContent> {
    ParsedContent::list(v, &image)
}

fn tool(t: &Value) -> ParsedTool {
    let f = t.get("function").unwrap_or(&Value::Null);
    let skip = ["name", "description", "parameters"];
    let mut tool = ParsedTool::read(f, str_at(f, "name"), &["parameters"], &skip, t);
    tool.extra.splice(0..0, fields_except(t, &["function"]));
    tool
}

/// The parts of an assistant message: its thinking (under the field it was sent in), its
/// content, its tool calls.
fn assistant_parts(m: &Value, body: &Value) -> Vec<ParsedPart> {
    let mut parts = Vec::new();
    for field in REASONING_FIELDS {
        if let Some(text) = str_at(m, field) {
            parts.push(ParsedPart {
                raw: json!({ field: text }),
                kind: ParsedPartKind::Thinking {
                    content: vec![ParsedContent::Text(text.to_owned())],
                    signature: Some(field.to_owned()),
                    redacted: false,
                },
            });
        }
    }
    if !body.is_null() {
        parts.push(ParsedPart {
            raw: body.clone(),
            kind: ParsedPartKind::Text {
                content: content(body),
                signature: None,
            },
        });
    }
    for call in array(m.get("tool_calls")) {
        let id = str_at(call, "id").map(str::to_owned);
        let f = call.get("function").unwrap_or(&Value::Null);
        parts.push(ParsedPart {
            raw: call.clone(),
            kind: ParsedPartKind::ToolCall(ParsedToolCall {
                id: id.clone().unwrap_or_default(),
                wire_id: id,
                name: str_at(f, "name").unwrap_or("?").to_owned(),
                arguments: ParsedArguments::from_wire(f.get("arguments").unwrap_or(&Value::Null)),
                thought_signature: None,
            }),
        });
    }
    parts
}
