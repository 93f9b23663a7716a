//! The recorded direction of Gemini: a request body read back into a [`ParsedRequest`].
//! `systemInstruction` is the system prompt, `generationConfig`'s fields are parameters of their
//! own (`generationConfig.maxOutputTokens`), a `model` content is an assistant turn (its thought,
//! text and `functionCall` parts), and a user content's `functionResponse` parts are tool
//! results, each on its own, its other parts user messages.
//!
//! Function calls usually come without ids: they get `{name}_{n}`, numbered through the request
//! as the stream reader numbers them, and their results are linked to them by order.
//! Depends on `conversation` (through [`ParsedRequest`]) only.

use serde_json::{Value, json};

use super::request::RESULT_IMAGES_TEXT;
use crate::providers::wire::parsed::{
    ParsedArguments, ParsedContent, ParsedMessage, ParsedMessageKind, ParsedPart, ParsedPartKind,
    ParsedRequest, ParsedTool, ParsedToolCall, ParsedToolResult, array, str_at,
};

/// `body` in neutral terms.
pub fn parse_request(body: &Value) -> ParsedRequest {
    let Some(obj) = body.as_object() else {
        return ParsedRequest::default();
    };
    let mut params = Vec::new();
    for (k, val) in obj {
        match (k.as_str(), val.as_object()) {
            ("contents" | "systemInstruction" | "tools", _) => {}
            ("generationConfig", Some(config)) => {
                for (ck, cv) in config {
                    params.push((format!("generationConfig.{ck}"), cv.clone()));
                }
            }
            _ => params.push((k.clone(), val.clone())),
        }
    }
    let mut messages = Vec::new();
    if let Some(system) = obj.get("systemInstruction") {
        let parts = system.get("parts").unwrap_or(system);
        messages.push(ParsedMessage::system(system, content(parts)));
    }
    let tools = array(obj.get("tools")).flat_map(tools).collect();
    let mut unnamed_calls = 0;
    for c in array(obj.get("contents")) {
        let parts = c
            .get("parts")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if str_at(c, "role") == Some("model") {
            let mut ids: Vec<String> = Vec::new();
            let parts = parts
                .into_iter()
                .map(|p| part(p, &mut ids, &mut unnamed_calls))
                .collect();
            messages.push(ParsedMessage {
                raw: c.clone(),
                kind: ParsedMessageKind::Assistant { parts },
            });
            continue;
        }
        // Function responses each on their own; the other parts grouped as user messages.
        let mut group: Vec<Value> = Vec::new();
        let flush = |group: &mut Vec<Value>, messages: &mut Vec<ParsedMessage>| {
            if group.is_empty() {
                return;
            }
            let raw = json!({"role": "user", "parts": std::mem::take(group)});
            let content = content(&raw["parts"]);
            let result_images = matches!(
                content.first(),
                Some(ParsedContent::Text(t)) if t.starts_with(RESULT_IMAGES_TEXT)
            );
            messages.push(ParsedMessage::user(raw, content, result_images));
        };
        for p in parts {
            let Some(r) = p.get("functionResponse") else {
                group.push(p);
                continue;
            };
            flush(&mut group, &mut messages);
            let response = r.get("response").unwrap_or(&Value::Null);
            let (content, is_error) = match (response.get("output"), response.get("error")) {
                (_, Some(e)) => (content(e), true),
                (Some(o), None) => (content(o), false),
                (None, None) => (vec![ParsedContent::Structured(response.clone())], false),
            };
            let result = ParsedToolResult {
                call_id: str_at(r, "id").map(str::to_owned),
                tool_name: str_at(r, "name").map(str::to_owned),
                content,
                attachments: r.get("parts").map(self::content).unwrap_or_default(),
                is_error,
                call: None,
            };
            messages.push(ParsedMessage {
                raw: p.clone(),
                kind: ParsedMessageKind::ToolResult(result),
            });
        }
        flush(&mut group, &mut messages);
    }
    ParsedRequest::new(params, tools, messages)
}

/// An `inlineData` part.
fn image(block: &Value) -> Option<ParsedContent> {
    block.get("inlineData").map(|d| ParsedContent::Image {
        mime_type: str_at(d, "mimeType").map(str::to_owned),
        data: str_at(d, "data").unwrap_or_default().to_owned(),
    })
}

fn content(v: &Value) -> Vec<ParsedContent> {
    ParsedContent::list(v, &image)
}

/// The tools of one `tools` entry: its function declarations, or a built-in tool
/// (`googleSearch`, `codeExecution`) named by its key.
fn tools(t: &Value) -> Vec<ParsedTool> {
    let Some(declarations) = t.get("functionDeclarations").and_then(Value::as_array) else {
        let name = t.as_object().and_then(|o| o.keys().next().cloned());
        return vec![ParsedTool {
            name: name.unwrap_or_else(|| "?".to_owned()),
            description: None,
            parameters: None,
            extra: Vec::new(),
            raw: t.clone(),
        }];
    };
    let skip = ["name", "description", "parameters", "parametersJsonSchema"];
    let schema = ["parametersJsonSchema", "parameters"];
    declarations
        .iter()
        .map(|d| ParsedTool::read(d, str_at(d, "name"), &schema, &skip, d))
        .collect()
}

/// One part of a model content. `ids` are the call ids of this content so far; `unnamed` counts
/// the calls of the request that got a minted id.
fn part(p: Value, ids: &mut Vec<String>, unnamed: &mut u64) -> ParsedPart {
    let signature = str_at(&p, "thoughtSignature")
        .filter(|s| !s.is_empty())
        .map(str::to_owned);
    let text = || {
        vec![ParsedContent::Text(
            str_at(&p, "text").unwrap_or_default().to_owned(),
        )]
    };
    let kind = if let Some(call) = p.get("functionCall") {
        let name = str_at(call, "name").unwrap_or("?").to_owned();
        let wire_id = str_at(call, "id").map(str::to_owned);
        let id = match wire_id.as_deref().filter(|id| !id.is_empty()) {
            Some(id) if !ids.iter().any(|seen| seen == id) => id.to_owned(),
            _ => {
                *unnamed += 1;
                format!("{name}_{unnamed}")
            }
        };
        ids.push(id.clone());
        ParsedPartKind::ToolCall(ParsedToolCall {
            wire_id,
            id,
            name,
            arguments: ParsedArguments::from_wire(call.get("args").unwrap_or(&Value::Null)),
            thought_signature: signature,
        })
    } else if p.get("thought").and_then(Value::as_bool) == Some(true) {
        ParsedPartKind::Thinking {
            content: text(),
            signature,
            redacted: false,
        }
    } else if p.get("text").is_some_and(Value::is_string) {
        ParsedPartKind::Text {
            content: text(),
            signature,
        }
    } else {
        ParsedPartKind::Other {
            label: "part".to_owned(),
        }
    };
    ParsedPart { raw: p, kind }
}
