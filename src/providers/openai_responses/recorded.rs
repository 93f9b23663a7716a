//! The recorded direction of OpenAI Responses: a request body read back into a
//! [`ParsedRequest`]. `instructions` and `system`/`developer` items are the system prompt,
//! `function_call_output` items tool results; the consecutive `reasoning`, assistant `message`
//! and `function_call` items of a model turn are one assistant message, one part each.
//!
//! Depends on `conversation` (through [`ParsedRequest`]) only.

use serde_json::{Value, json};

use super::stream::text_signature;

use crate::providers::wire::parsed::{
    ParsedArguments, ParsedContent, ParsedMessage, ParsedMessageKind, ParsedPart, ParsedPartKind,
    ParsedRequest, ParsedTool, ParsedToolCall, ParsedToolResult, array, fields_except, str_at,
};

/// `body` in neutral terms.
pub fn parse_request(body: &Value) -> ParsedRequest {
    let Some(obj) = body.as_object() else {
        return ParsedRequest::default();
    };
    let params = fields_except(body, &["input", "instructions", "tools"]);
    let mut messages = Vec::new();
    if let Some(instructions) = obj.get("instructions") {
        messages.push(ParsedMessage::system(instructions, content(instructions)));
    }
    let tool = |t| {
        let name = str_at(t, "name").or_else(|| str_at(t, "type"));
        ParsedTool::read(
            t,
            name,
            &["parameters"],
            &["name", "description", "parameters"],
            t,
        )
    };
    let tools = array(obj.get("tools")).map(tool).collect();
    let input = match obj.get("input") {
        Some(Value::Array(items)) => items.clone(),
        Some(Value::String(s)) => vec![json!({"role": "user", "content": s})],
        _ => Vec::new(),
    };
    let mut in_assistant = false;
    for item in input {
        let kind = str_at(&item, "type");
        let role = str_at(&item, "role");
        let assistant_side = matches!(kind, Some("reasoning" | "function_call"))
            || (matches!(kind, Some("message") | None) && role == Some("assistant"));
        if assistant_side {
            if !in_assistant {
                messages.push(ParsedMessage {
                    raw: Value::Array(Vec::new()),
                    kind: ParsedMessageKind::Assistant { parts: Vec::new() },
                });
            }
            in_assistant = true;
            if let Some(ParsedMessage {
                raw: Value::Array(items),
                kind: ParsedMessageKind::Assistant { parts },
            }) = messages.last_mut()
            {
                items.push(item.clone());
                parts.push(part(item));
            }
            continue;
        }
        in_assistant = false;
        let kind = match (kind, role) {
            (Some("function_call_output"), _) => ParsedMessageKind::ToolResult(ParsedToolResult {
                call_id: str_at(&item, "call_id").map(str::to_owned),
                tool_name: None,
                content: content(item.get("output").unwrap_or(&Value::Null)),
                attachments: Vec::new(),
                is_error: false,
                call: None,
            }),
            (_, Some("system" | "developer")) => ParsedMessageKind::System {
                content: content(item.get("content").unwrap_or(&Value::Null)),
                role: role.map(str::to_owned),
            },
            _ => ParsedMessageKind::User {
                content: match item.get("content") {
                    Some(c) => content(c),
                    None => vec![ParsedContent::Other(item.clone())],
                },
                result_images: false,
            },
        };
        messages.push(ParsedMessage { raw: item, kind });
    }
    ParsedRequest::new(params, tools, messages)
}

/// An `input_image` part.
fn image(block: &Value) -> Option<ParsedContent> {
    (str_at(block, "type") == Some("input_image"))
        .then(|| ParsedContent::ImageUrl(str_at(block, "image_url").unwrap_or_default().to_owned()))
}

fn content(v: &Value) -> Vec<ParsedContent> {
    ParsedContent::list(v, &image)
}

/// One output item of a model turn as a part: a function call (its id `call_id|item_id`, as the
/// stream reader keeps it), a reasoning item (the item itself is its signature) or a message
/// (its id, and phase, the signature of its text).
fn part(item: Value) -> ParsedPart {
    let kind = match str_at(&item, "type") {
        Some("function_call") => {
            let call_id = str_at(&item, "call_id").map(str::to_owned);
            let id = match (&call_id, str_at(&item, "id")) {
                (Some(call), Some(item_id)) => format!("{call}|{item_id}"),
                (call, _) => call.clone().unwrap_or_default(),
            };
            ParsedPartKind::ToolCall(ParsedToolCall {
                wire_id: call_id,
                id,
                name: str_at(&item, "name").unwrap_or("?").to_owned(),
                arguments: ParsedArguments::from_wire(
                    item.get("arguments").unwrap_or(&Value::Null),
                ),
                thought_signature: None,
            })
        }
        Some("reasoning") => ParsedPartKind::Thinking {
            content: content(item.get("summary").unwrap_or(&Value::Null)),
            signature: Some(item.to_string()),
            redacted: false,
        },
        _ => ParsedPartKind::Text {
            content: content(item.get("content").unwrap_or(&Value::Null)),
            signature: str_at(&item, "id").map(|id| text_signature(id, str_at(&item, "phase"))),
        },
    };
    ParsedPart { raw: item, kind }
}
