//! The recorded direction of Anthropic Messages: a request body read back into a
//! [`ParsedRequest`]. The `system` blocks are the system prompt; a user message's
//! `tool_result` blocks are tool results, each on its own, and its other blocks user messages;
//! an assistant message's `text`, `thinking`, `redacted_thinking` and `tool_use` blocks are its
//! parts (a plain-string assistant content is one text part, an object one block).
//!
//! Depends on `conversation` (through [`ParsedRequest`]) only.

use serde_json::{Value, json};

use crate::providers::wire::parsed::{
    ParsedArguments, ParsedContent, ParsedMessage, ParsedMessageKind, ParsedPart, ParsedPartKind,
    ParsedRequest, ParsedTool, ParsedToolCall, ParsedToolResult, array, fields_except, str_at,
};

/// `body` in neutral terms.
pub fn parse_request(body: &Value) -> ParsedRequest {
    let Some(obj) = body.as_object() else {
        return ParsedRequest::default();
    };
    let params = fields_except(body, &["messages", "system", "tools"]);
    let mut messages = Vec::new();
    if let Some(system) = obj.get("system") {
        messages.push(ParsedMessage::system(system, content(system)));
    }
    let skip = ["name", "description", "input_schema", "cache_control"];
    let tool = |t| ParsedTool::read(t, str_at(t, "name"), &["input_schema"], &skip, t);
    let tools = array(obj.get("tools")).map(tool).collect();
    for m in array(obj.get("messages")) {
        let body = m.get("content").cloned().unwrap_or(Value::Null);
        if str_at(m, "role") == Some("assistant") {
            let blocks = match &body {
                Value::Array(blocks) => blocks.clone(),
                Value::Object(_) => vec![body.clone()],
                Value::String(s) => vec![json!({"type": "text", "text": s})],
                Value::Null => vec![json!({"type": "text", "text": ""})],
                other => vec![json!({"type": "text", "text": other.to_string()})],
            };
            let parts = blocks.into_iter().map(part).collect();
            messages.push(ParsedMessage {
                raw: m.clone(),
                kind: ParsedMessageKind::Assistant { parts },
            });
            continue;
        }
        let Value::Array(blocks) = &body else {
            messages.push(ParsedMessage::user(m.clone(), content(&body), false));
            continue;
        };
        // Tool results each on their own; the other blocks grouped as user messages.
        let mut group: Vec<Value> = Vec::new();
        let flush = |group: &mut Vec<Value>, messages: &mut Vec<ParsedMessage>| {
            if !group.is_empty() {
                let raw = Value::Array(std::mem::take(group));
                let content = content(&raw);
                messages.push(ParsedMessage::user(raw, content, false));
            }
        };
        for block in blocks {
            if str_at(block, "type") != Some("tool_result") {
                group.push(block.clone());
                continue;
            }
            flush(&mut group, &mut messages);
            messages.push(ParsedMessage {
                raw: block.clone(),
                kind: ParsedMessageKind::ToolResult(ParsedToolResult {
                    call_id: str_at(block, "tool_use_id").map(str::to_owned),
                    tool_name: None,
                    content: content(block.get("content").unwrap_or(&Value::Null)),
                    attachments: Vec::new(),
                    is_error: block
                        .get("is_error")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                    call: None,
                }),
            });
        }
        flush(&mut group, &mut messages);
    }
    ParsedRequest::new(params, tools, messages)
}

/// An `image` block (`source.media_type`, `source.data`).
fn image(block: &Value) -> Option<ParsedContent> {
    (str_at(block, "type") == Some("image")).then(|| {
        let source = &block["source"];
        ParsedContent::Image {
            mime_type: str_at(source, "media_type").map(str::to_owned),
            data: str_at(source, "data").unwrap_or_default().to_owned(),
        }
    })
}

fn content(v: &Value) -> Vec<ParsedContent> {
    ParsedContent::list(v, &image)
}

fn part(block: Value) -> ParsedPart {
    let text = |key: &str| {
        vec![ParsedContent::Text(
            str_at(&block, key).unwrap_or_default().to_owned(),
        )]
    };
    let kind = match str_at(&block, "type") {
        Some("tool_use") => {
            let id = str_at(&block, "id").map(str::to_owned);
            ParsedPartKind::ToolCall(ParsedToolCall {
                id: id.clone().unwrap_or_default(),
                wire_id: id,
                name: str_at(&block, "name").unwrap_or("?").to_owned(),
                arguments: ParsedArguments::from_wire(block.get("input").unwrap_or(&Value::Null)),
                thought_signature: None,
            })
        }
        Some("thinking") => ParsedPartKind::Thinking {
            content: text("thinking"),
            signature: str_at(&block, "signature").map(str::to_owned),
            redacted: false,
        },
        Some("redacted_thinking") => ParsedPartKind::Thinking {
            content: Vec::new(),
            signature: str_at(&block, "data").map(str::to_owned),
            redacted: true,
        },
        Some("text") => ParsedPartKind::Text {
            content: text("text"),
            signature: None,
        },
        other => ParsedPartKind::Other {
            label: other.unwrap_or("block").to_owned(),
        },
    };
    ParsedPart { raw: block, kind }
}
