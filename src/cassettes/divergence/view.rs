//! The neutral view of one request that divergence compares: request line and headers, and the
//! body as its wire format reads it back ([`crate::providers::wire::ParsedRequest`]), laid out
//! as items (system prompt, user messages, assistant turns with their parts, tool results), each
//! with its turn, its alignment key and the text a difference shows. Tool calls are labelled
//! `tool#n`: the `n`-th call of that tool in the conversation.
//!
//! Knows no wire format: it asks the format of the cassette's API. Depends on
//! [`crate::providers::wire`] and the helpers of [`crate::cassettes::normalize`] only.

use serde_json::{Map, Value};

use crate::cassettes::normalize::sort_keys;
use crate::providers::ApiKind;
use crate::providers::wire::{
    ParsedArguments, ParsedContent, ParsedMessageKind, ParsedPartKind, ParsedTool, ParsedToolResult,
};

/// One request, read into wire-format-neutral parts.
pub(super) struct View {
    pub(super) method: Option<Value>,
    pub(super) path: Option<Value>,
    /// The model named in a Gemini path, and the path without it.
    pub(super) path_model: Option<(String, String)>,
    pub(super) headers: Map<String, Value>,
    /// Top-level fields that are neither conversation nor tools (Gemini's `generationConfig`
    /// flattened to `generationConfig.maxOutputTokens`).
    pub(super) params: Vec<(String, Value)>,
    pub(super) tools: Vec<ToolDef>,
    pub(super) items: Vec<Item>,
    /// The body with `cache_control` markers removed, for the safety net.
    pub(super) body: Value,
    /// Whether the body is an object at all.
    pub(super) body_ok: bool,
}

pub(super) struct ToolDef {
    pub(super) name: String,
    pub(super) description: Option<Value>,
    pub(super) schema: Option<Value>,
    pub(super) other: Vec<(String, Value)>,
    pub(super) raw: Value,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum ItemKind {
    System,
    User,
    Assistant,
    ToolResult,
    /// Images a provider attaches after the tool results of a turn (a user message in Chat
    /// Completions and Gemini).
    ResultImages,
}

pub(super) struct Item {
    pub(super) kind: ItemKind,
    pub(super) turn: u32,
    /// How many items of this kind came before it in its turn (0-based).
    pub(super) nth_in_turn: usize,
    /// The alignment key: the kind, and the call id of a tool result.
    pub(super) key: String,
    /// The item as sent, `cache_control` removed.
    pub(super) raw: Value,
    /// Human-readable content (tool results, user and system text).
    pub(super) text: String,
    /// Assistant parts.
    pub(super) parts: Vec<Part>,
    /// Tool results: call id, tool name, `tool#n` label, error flag.
    pub(super) call_id: Option<String>,
    pub(super) tool: Option<String>,
    pub(super) label: Option<String>,
    pub(super) error: bool,
    /// The wire role of a system item (`system`, `developer`), when it has one.
    pub(super) role: Option<String>,
}

pub(super) struct Part {
    /// `text`, `thinking`, `call bash#2`, or the block's type.
    pub(super) label: String,
    /// `(call toolu_02, bash)` for a call.
    pub(super) call: Option<String>,
    pub(super) raw: Value,
    pub(super) text: String,
}

fn strip_cache_control(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| k.as_str() != "cache_control")
                .map(|(k, v)| (k.clone(), strip_cache_control(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_cache_control).collect()),
        other => other.clone(),
    }
}

pub(super) fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(&sort_keys(v)).unwrap_or_default()
}

pub(super) fn compact(v: &Value) -> String {
    serde_json::to_string(&sort_keys(v)).unwrap_or_default()
}

/// The text of content: each block one line; text as it is, an image as its media type and
/// size, a structured value as pretty JSON, any other block as compact JSON.
fn content_text(content: &[ParsedContent]) -> String {
    let image = |mime: &str, chars: usize| format!("[image {mime}, {chars} base64 characters]");
    content
        .iter()
        .map(|c| match c {
            ParsedContent::Text(t) => t.clone(),
            ParsedContent::Image { mime_type, data } => {
                image(mime_type.as_deref().unwrap_or("?"), data.len())
            }
            ParsedContent::ImageUrl(url) => image("url", url.len()),
            ParsedContent::Structured(v) => pretty(v),
            ParsedContent::Other(v) => compact(v),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Call arguments as text: pretty JSON, or the string sent when it is not JSON.
fn arguments_text(arguments: &ParsedArguments) -> String {
    match arguments {
        ParsedArguments::Json(v) => pretty(v),
        ParsedArguments::Unparsed(s) => s.clone(),
    }
}

/// Builds the items of one request in order, assigning turns and call labels.
struct ItemsBuilder {
    items: Vec<Item>,
    turn: u32,
    /// Every call so far, in order: its tool and its `tool#n` label.
    calls: Vec<(String, String)>,
    counts: std::collections::HashMap<String, u32>,
}

impl ItemsBuilder {
    fn new() -> Self {
        ItemsBuilder {
            items: Vec::new(),
            turn: 0,
            calls: Vec::new(),
            counts: std::collections::HashMap::new(),
        }
    }

    fn nth(&self, kind: ItemKind) -> usize {
        self.items
            .iter()
            .filter(|i| i.turn == self.turn && i.kind == kind)
            .count()
    }

    fn push(&mut self, kind: ItemKind, raw: &Value, text: String) -> &mut Item {
        let nth_in_turn = self.nth(kind);
        let key = match kind {
            ItemKind::System => "system",
            ItemKind::User => "user",
            ItemKind::Assistant => "assistant",
            ItemKind::ToolResult => "result",
            ItemKind::ResultImages => "images",
        }
        .to_owned();
        self.items.push(Item {
            kind,
            turn: self.turn,
            nth_in_turn,
            key,
            raw: strip_cache_control(raw),
            text,
            parts: Vec::new(),
            call_id: None,
            tool: None,
            label: None,
            error: false,
            role: None,
        });
        self.items.last_mut().expect("just pushed")
    }

    /// Starts a new model turn.
    fn assistant(&mut self, raw: &Value) {
        self.turn += 1;
        self.push(ItemKind::Assistant, raw, String::new());
    }

    /// Adds a part to the current assistant item.
    fn part(&mut self, raw: &Value, label: &str, text: String) -> &mut Part {
        let item = self.items.last_mut().expect("an assistant item");
        item.parts.push(Part {
            label: label.to_owned(),
            call: None,
            raw: strip_cache_control(raw),
            text,
        });
        item.parts.last_mut().expect("just pushed")
    }

    /// Adds a tool call part, numbering it `name#n`.
    fn call(&mut self, raw: &Value, id: Option<&str>, name: &str, arguments: &ParsedArguments) {
        let n = {
            let c = self.counts.entry(name.to_owned()).or_insert(0);
            *c += 1;
            *c
        };
        let label = format!("{name}#{n}");
        let part = self.part(raw, &format!("call {label}"), arguments_text(arguments));
        part.call = Some(match id {
            Some(id) => format!("call {id}, {name}"),
            None => name.to_owned(),
        });
        self.calls.push((name.to_owned(), label));
    }

    /// Adds a tool result, named after the call it answers.
    fn result(&mut self, raw: &Value, result: &ParsedToolResult) {
        let call = result.call.and_then(|i| self.calls.get(i)).cloned();
        let name = result.tool_name.as_deref();
        let (tool, label) = match call {
            Some((tool, label)) => (Some(tool), Some(label)),
            None => (name.map(str::to_owned), None),
        };
        let text = content_text(&result.content);
        let rendered = if result.is_error {
            format!("[error]\n{text}")
        } else {
            text
        };
        let item = self.push(ItemKind::ToolResult, raw, rendered);
        item.key = match &result.call_id {
            Some(id) => format!("result:{id}"),
            None => format!(
                "result:{}:{}",
                tool.as_deref().or(name).unwrap_or("?"),
                label.as_deref().unwrap_or("?")
            ),
        };
        item.call_id = result.call_id.clone();
        item.tool = tool.or_else(|| name.map(str::to_owned));
        item.label = label;
        item.error = result.is_error;
    }
}

/// Reads `value` (`{"method", "path", "headers", "body"}`, or a bare body) into a [`View`], the
/// body in `api`'s wire format.
pub(super) fn view(api: ApiKind, value: &Value) -> View {
    let (method, path, headers, body) = match value.get("body") {
        Some(body) if value.get("method").is_some() || value.get("path").is_some() => (
            value.get("method").cloned(),
            value.get("path").cloned(),
            value
                .get("headers")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            body,
        ),
        _ => (None, None, Map::new(), value),
    };
    let format = api.wire();
    let path_model = path
        .as_ref()
        .and_then(Value::as_str)
        .and_then(|p| format.model_in_path(p));
    let mut v = View {
        method,
        path,
        path_model,
        headers,
        params: Vec::new(),
        tools: Vec::new(),
        items: Vec::new(),
        body: strip_cache_control(body),
        body_ok: body.is_object(),
    };
    if !v.body_ok {
        return v;
    }
    let request = format.parse_request(body);
    v.params = request.params;
    v.tools = request.tools.iter().map(tool_def).collect();
    let mut b = ItemsBuilder::new();
    for message in &request.messages {
        let raw = &message.raw;
        match &message.kind {
            ParsedMessageKind::System { content, role } => {
                b.push(ItemKind::System, raw, content_text(content)).role = role.clone();
            }
            ParsedMessageKind::User {
                content,
                result_images,
            } => {
                let kind = if *result_images {
                    ItemKind::ResultImages
                } else {
                    ItemKind::User
                };
                b.push(kind, raw, content_text(content));
            }
            ParsedMessageKind::Assistant { parts } => {
                b.assistant(raw);
                for part in parts {
                    match &part.kind {
                        ParsedPartKind::Text { content, .. } => {
                            b.part(&part.raw, "text", content_text(content));
                        }
                        ParsedPartKind::Thinking {
                            content, redacted, ..
                        } => {
                            let label = if *redacted {
                                "redacted thinking"
                            } else {
                                "thinking"
                            };
                            b.part(&part.raw, label, content_text(content));
                        }
                        ParsedPartKind::ToolCall(call) => {
                            let id = call.wire_id.as_deref();
                            b.call(&part.raw, id, &call.name, &call.arguments);
                        }
                        ParsedPartKind::Other { label } => {
                            b.part(&part.raw, label, compact(&part.raw));
                        }
                    }
                }
            }
            ParsedMessageKind::ToolResult(result) => b.result(raw, result),
        }
    }
    v.items = b.items;
    v
}

fn tool_def(t: &ParsedTool) -> ToolDef {
    ToolDef {
        name: t.name.clone(),
        description: t.description.clone(),
        schema: t.parameters.as_ref().map(strip_cache_control),
        other: t.extra.clone(),
        raw: strip_cache_control(&t.raw),
    }
}
