//! A recorded request read back into neutral terms ([`ParsedRequest`]): what the recorded
//! direction of a [`super::WireFormat`] returns. Divergence compares two of them part by part;
//! [`ParsedRequest::context`] turns one back into the conversation the request was built from.
//!
//! Every message, part and tool keeps the JSON it was read from (`raw`), so that a comparison
//! sees any change, and shapes the conversation model has no place for (an unknown block, a
//! built-in tool, a structured tool response) are kept rather than dropped. Tool results are
//! linked to their calls here, once for every format: by id, or (for an API that sends none, as
//! Gemini) by their order among the calls of the turn.
//!
//! Depends on `conversation`, [`ApiKind`] and Pi's conversion rules in
//! [`crate::providers::transform`] only.

use serde_json::Value;

use crate::conversation::{
    AssistantBlock, AssistantMessage, Content, Context, Message, StopReason, ToolCall,
    ToolDefinition, ToolResultMessage, Usage, UserContent,
};
use crate::providers::ApiKind;
use crate::providers::transform::IMAGE_ONLY_RESULT;

/// One request body in neutral terms.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParsedRequest {
    /// Every body field that is neither the conversation nor the tools, by its wire name, in
    /// body order (`model`, `max_tokens`, `stream`, ...; Gemini's `generationConfig` fields as
    /// `generationConfig.maxOutputTokens`).
    pub params: Vec<(String, Value)>,
    /// The tool definitions, in order.
    pub tools: Vec<ParsedTool>,
    /// The conversation: system prompt, user messages, assistant turns, tool results.
    pub messages: Vec<ParsedMessage>,
}

/// One tool definition.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedTool {
    /// Its name (`?` when it has none; a built-in tool's key, as Gemini's `googleSearch`).
    pub name: String,
    pub description: Option<Value>,
    /// The JSON Schema of its parameters.
    pub parameters: Option<Value>,
    /// Its other fields, by wire name (`strict`, `type`, `eager_input_streaming`).
    pub extra: Vec<(String, Value)>,
    /// The definition as sent.
    pub raw: Value,
}

impl ParsedTool {
    /// The tool `def` defines: its `name` (`?` when none), its `description`, its parameters
    /// under the first of `schema_keys` it has, its other fields but `skip` as extra; `raw` is
    /// the definition as sent (`def` itself, or what holds it).
    pub fn read(
        def: &Value,
        name: Option<&str>,
        schema_keys: &[&str],
        skip: &[&str],
        raw: &Value,
    ) -> Self {
        ParsedTool {
            name: name.unwrap_or("?").to_owned(),
            description: def.get("description").cloned(),
            parameters: schema_keys.iter().find_map(|k| def.get(*k)).cloned(),
            extra: fields_except(def, skip),
            raw: raw.clone(),
        }
    }
}

/// One message of the conversation, as sent.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedMessage {
    /// The JSON it was read from: the message, or the part of it that made this message (a group
    /// of user blocks, one tool result block, the consecutive output items of a Responses turn).
    pub raw: Value,
    pub kind: ParsedMessageKind,
}

impl ParsedMessage {
    /// A system prompt of `content`, its role read from `raw`.
    pub fn system(raw: &Value, content: Vec<ParsedContent>) -> Self {
        ParsedMessage {
            kind: ParsedMessageKind::System {
                content,
                role: str_at(raw, "role").map(str::to_owned),
            },
            raw: raw.clone(),
        }
    }

    /// A user message of `content`.
    pub fn user(raw: Value, content: Vec<ParsedContent>, result_images: bool) -> Self {
        ParsedMessage {
            raw,
            kind: ParsedMessageKind::User {
                content,
                result_images,
            },
        }
    }
}

/// What a message is.
#[derive(Debug, Clone, PartialEq)]
pub enum ParsedMessageKind {
    /// The system (or developer) prompt. `role` is the wire role, when the message has one.
    System {
        content: Vec<ParsedContent>,
        role: Option<String>,
    },
    /// A user message. `result_images`: the images an API sends after the tool results of a
    /// turn, in a user message of their own (Chat Completions, Gemini before 3).
    User {
        content: Vec<ParsedContent>,
        result_images: bool,
    },
    /// A model turn as sent back in the history.
    Assistant { parts: Vec<ParsedPart> },
    /// The result of a tool call.
    ToolResult(ParsedToolResult),
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedToolResult {
    /// The id of the call it answers, as the wire names it (`None` when the API sends none).
    pub call_id: Option<String>,
    /// The tool's name, when the API sends it.
    pub tool_name: Option<String>,
    /// What the tool returned.
    pub content: Vec<ParsedContent>,
    /// Images sent inside the result besides its content (Gemini 3's `functionResponse.parts`).
    pub attachments: Vec<ParsedContent>,
    pub is_error: bool,
    /// The call it answers: its index in [`ParsedRequest::calls`] (linked by
    /// [`ParsedRequest::new`]).
    pub call: Option<usize>,
}

/// One part of an assistant turn, as sent.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedPart {
    pub raw: Value,
    pub kind: ParsedPartKind,
}

/// What a part of an assistant turn is.
#[derive(Debug, Clone, PartialEq)]
pub enum ParsedPartKind {
    Text {
        content: Vec<ParsedContent>,
        /// The signature the conversation keeps for it (OpenAI Responses' `{"v":1,"id":…}`,
        /// Gemini's `thoughtSignature`).
        signature: Option<String>,
    },
    Thinking {
        content: Vec<ParsedContent>,
        /// Anthropic's signature (the data of redacted thinking), the Responses reasoning item,
        /// the Chat Completions field it was sent in, Gemini's `thoughtSignature`.
        signature: Option<String>,
        redacted: bool,
    },
    ToolCall(ParsedToolCall),
    /// A part the conversation model has no place for, named by its type (or `part`).
    Other {
        label: String,
    },
}

/// One tool call of an assistant turn.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedToolCall {
    /// The id results refer to, as the wire names it (`None` when the API sends none).
    pub wire_id: Option<String>,
    /// The id the conversation keeps (OpenAI Responses: `call_id|item_id`; Gemini without ids:
    /// `{name}_{n}`, numbered in the request as the stream reader numbers them).
    pub id: String,
    pub name: String,
    pub arguments: ParsedArguments,
    /// Gemini's `thoughtSignature` on the call.
    pub thought_signature: Option<String>,
}

/// Tool-call arguments as sent.
#[derive(Debug, Clone, PartialEq)]
pub enum ParsedArguments {
    /// JSON: the value sent, or the JSON a string held (OpenAI sends arguments as a string).
    Json(Value),
    /// A string that is not JSON.
    Unparsed(String),
}

impl ParsedArguments {
    /// Arguments as the wire holds them: a string is read as JSON when it is JSON.
    pub fn from_wire(value: &Value) -> Self {
        match value {
            Value::String(s) => match serde_json::from_str(s) {
                Ok(parsed) => ParsedArguments::Json(parsed),
                Err(_) => ParsedArguments::Unparsed(s.clone()),
            },
            other => ParsedArguments::Json(other.clone()),
        }
    }
}

/// One block of content.
#[derive(Debug, Clone, PartialEq)]
pub enum ParsedContent {
    Text(String),
    /// An image given inline: its media type (when named) and base64 data.
    Image {
        mime_type: Option<String>,
        data: String,
    },
    /// An image given as a URL (OpenAI's `image_url`; Pi sends a `data:` URL).
    ImageUrl(String),
    /// A structured value where the conversation has text (a Gemini `functionResponse` without
    /// `output` or `error`).
    Structured(Value),
    /// A block the format does not know.
    Other(Value),
}

impl ParsedContent {
    /// The content of a wire value: a string is one text block, `null` none, an array its
    /// blocks; each block read by `block` (which knows the format's image blocks and returns
    /// `None` for anything else). A bare string or a block with a `text` string is text, in
    /// every format.
    pub fn list(value: &Value, block: &dyn Fn(&Value) -> Option<ParsedContent>) -> Vec<Self> {
        let one = |b: &Value| {
            if let Some(s) = b.as_str() {
                return ParsedContent::Text(s.to_owned());
            }
            if let Some(t) = b.get("text").and_then(Value::as_str) {
                return ParsedContent::Text(t.to_owned());
            }
            block(b).unwrap_or_else(|| ParsedContent::Other(b.clone()))
        };
        match value {
            Value::Null => Vec::new(),
            Value::Array(blocks) => blocks.iter().map(one).collect(),
            other => vec![one(other)],
        }
    }

    /// The texts of `content`, one block a line (other blocks left out).
    pub fn text_of(content: &[ParsedContent]) -> String {
        content
            .iter()
            .filter_map(|c| match c {
                ParsedContent::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// As conversation content: text, an inline image, or the image of a `data:` URL; `None`
    /// for what the conversation cannot hold.
    pub fn to_content(&self) -> Option<Content> {
        match self {
            ParsedContent::Text(text) => Some(Content::text(text.clone())),
            ParsedContent::Image { mime_type, data } => Some(Content::Image {
                data: data.clone(),
                mime_type: mime_type.clone().unwrap_or_default(),
            }),
            ParsedContent::ImageUrl(url) => {
                let (mime_type, data) = url.strip_prefix("data:")?.split_once(";base64,")?;
                Some(Content::Image {
                    data: data.to_owned(),
                    mime_type: mime_type.to_owned(),
                })
            }
            ParsedContent::Structured(v) => Some(Content::text(v.to_string())),
            ParsedContent::Other(_) => None,
        }
    }

    fn is_image(&self) -> bool {
        matches!(
            self,
            ParsedContent::Image { .. } | ParsedContent::ImageUrl(_)
        )
    }
}

impl ParsedRequest {
    /// A request of `messages`, its tool results linked to their calls, and `result_images`
    /// kept only on user messages that come right after the tool results of a model turn.
    pub fn new(
        params: Vec<(String, Value)>,
        tools: Vec<ParsedTool>,
        mut messages: Vec<ParsedMessage>,
    ) -> Self {
        // Each call so far: its wire id and the model turn it belongs to (1-based).
        let mut calls: Vec<(Option<String>, u32)> = Vec::new();
        let mut turn = 0u32;
        let mut results_in_turn = 0usize;
        let mut after_results = false;
        for message in &mut messages {
            let follows_results = after_results;
            after_results = false;
            match &mut message.kind {
                ParsedMessageKind::Assistant { parts } => {
                    turn += 1;
                    results_in_turn = 0;
                    for part in parts.iter() {
                        if let ParsedPartKind::ToolCall(call) = &part.kind {
                            calls.push((call.wire_id.clone(), turn));
                        }
                    }
                }
                ParsedMessageKind::ToolResult(result) => {
                    let position = results_in_turn;
                    results_in_turn += 1;
                    result.call = match &result.call_id {
                        Some(id) => calls.iter().position(|(c, _)| c.as_ref() == Some(id)),
                        None => calls
                            .iter()
                            .enumerate()
                            .filter(|(_, (_, t))| *t == turn)
                            .nth(position)
                            .map(|(i, _)| i),
                    };
                    after_results = turn > 0;
                }
                ParsedMessageKind::User { result_images, .. } => {
                    *result_images &= follows_results;
                }
                ParsedMessageKind::System { .. } => {}
            }
        }
        ParsedRequest {
            params,
            tools,
            messages,
        }
    }

    /// Every tool call of the conversation, in order.
    pub fn calls(&self) -> impl Iterator<Item = &ParsedToolCall> {
        self.messages
            .iter()
            .filter_map(|m| match &m.kind {
                ParsedMessageKind::Assistant { parts } => Some(parts),
                _ => None,
            })
            .flatten()
            .filter_map(|p| match &p.kind {
                ParsedPartKind::ToolCall(call) => Some(call),
                _ => None,
            })
    }

    /// The parameter named `name`.
    pub fn param(&self, name: &str) -> Option<&Value> {
        self.params.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// The conversation the request was built from, as far as the wire carries it. Assistant
    /// messages get `api`, `provider` and `model` (the wire does not name them), no usage, and
    /// stop reason `toolUse` when they call tools, else `stop`. What the wire loses stays lost:
    /// a tool result's error flag in the OpenAI formats, the images' place among several tool
    /// results where an API sends them after the results (they go to the last result that is
    /// only Pi's placeholder for them, else to the last result), thinking Anthropic was sent as
    /// text, and a user prompt's plain-string form (one text block reads back as a plain
    /// string).
    pub fn context(&self, api: ApiKind, provider: &str, model: &str) -> Context {
        let calls: Vec<&ParsedToolCall> = self.calls().collect();
        let system: Vec<String> = self
            .messages
            .iter()
            .filter_map(|m| match &m.kind {
                ParsedMessageKind::System { content, .. } => Some(ParsedContent::text_of(content)),
                _ => None,
            })
            .collect();
        let mut messages: Vec<Message> = Vec::new();
        for message in &self.messages {
            match &message.kind {
                ParsedMessageKind::System { .. } => {}
                ParsedMessageKind::User {
                    content,
                    result_images: true,
                } => {
                    let images = content.iter().filter(|c| c.is_image());
                    let images: Vec<Content> = images.filter_map(|c| c.to_content()).collect();
                    if let Some(result) = image_owner(&mut messages) {
                        result.content.extend(images);
                        drop_placeholder(&mut result.content);
                    }
                }
                ParsedMessageKind::User { content, .. } => {
                    let content = match content.as_slice() {
                        [ParsedContent::Text(text)] => UserContent::Text(text.clone()),
                        blocks => UserContent::Blocks(
                            blocks.iter().filter_map(|c| c.to_content()).collect(),
                        ),
                    };
                    messages.push(Message::User { content });
                }
                ParsedMessageKind::Assistant { parts } => {
                    let content: Vec<AssistantBlock> = parts.iter().filter_map(block_of).collect();
                    let calls_tools = content
                        .iter()
                        .any(|b| matches!(b, AssistantBlock::ToolCall(_)));
                    messages.push(Message::Assistant(AssistantMessage {
                        content,
                        api: api.as_str().to_owned(),
                        provider: provider.to_owned(),
                        model: model.to_owned(),
                        usage: Usage::default(),
                        stop_reason: if calls_tools {
                            StopReason::ToolUse
                        } else {
                            StopReason::Stop
                        },
                        error_message: None,
                        response_id: None,
                    }));
                }
                ParsedMessageKind::ToolResult(result) => {
                    let call = result.call.and_then(|i| calls.get(i));
                    let mut tool_result = ToolResultMessage {
                        tool_call_id: call
                            .map(|c| c.id.clone())
                            .or_else(|| result.call_id.clone())
                            .unwrap_or_default(),
                        tool_name: call
                            .map(|c| c.name.clone())
                            .or_else(|| result.tool_name.clone())
                            .unwrap_or_default(),
                        content: result
                            .content
                            .iter()
                            .filter_map(ParsedContent::to_content)
                            .collect(),
                        is_error: result.is_error,
                    };
                    let attachments = result.attachments.iter();
                    (tool_result.content).extend(attachments.filter_map(ParsedContent::to_content));
                    drop_placeholder(&mut tool_result.content);
                    messages.push(Message::ToolResult(tool_result));
                }
            }
        }
        Context {
            system_prompt: (!system.is_empty()).then(|| system.join("\n\n")),
            messages,
            tools: self
                .tools
                .iter()
                .map(|t| ToolDefinition {
                    name: t.name.clone(),
                    description: t
                        .description
                        .as_ref()
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    parameters: t
                        .parameters
                        .clone()
                        .unwrap_or_else(|| Value::Object(Default::default())),
                })
                .collect(),
        }
    }
}

/// The string field `key` of `v`.
pub fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The items of an array (none when it is missing or not an array).
pub fn array(v: Option<&Value>) -> impl Iterator<Item = &Value> {
    v.and_then(Value::as_array).into_iter().flatten()
}

/// The fields of an object except `skip`, in order.
pub fn fields_except(v: &Value, skip: &[&str]) -> Vec<(String, Value)> {
    v.as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| !skip.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The tool result that images sent after a turn's results belong to: among the results just
/// before them, the last one that is only Pi's placeholder for images, else the last one.
fn image_owner(messages: &mut [Message]) -> Option<&mut ToolResultMessage> {
    let results = messages
        .iter()
        .rev()
        .take_while(|m| matches!(m, Message::ToolResult(_)))
        .count();
    let start = messages.len() - results;
    let placeholder = |m: &Message| {
        matches!(m, Message::ToolResult(r)
            if matches!(r.content.as_slice(), [Content::Text { text }] if text == IMAGE_ONLY_RESULT))
    };
    let owner = (start..messages.len())
        .rev()
        .find(|&i| placeholder(&messages[i]))
        .or_else(|| messages.len().checked_sub(1).filter(|&i| i >= start))?;
    match &mut messages[owner] {
        Message::ToolResult(r) => Some(r),
        _ => None,
    }
}

/// Drops Pi's placeholder text from the content of a tool result that has images.
fn drop_placeholder(content: &mut Vec<Content>) {
    let has_image = content.iter().any(|c| matches!(c, Content::Image { .. }));
    let placeholder = |c: &Content| c.as_text() == Some(IMAGE_ONLY_RESULT);
    if has_image && content.first().is_some_and(placeholder) {
        content.remove(0);
    }
}

/// A part as an assistant block; `None` for a part the conversation has no place for.
fn block_of(part: &ParsedPart) -> Option<AssistantBlock> {
    Some(match &part.kind {
        ParsedPartKind::Text { content, signature } => AssistantBlock::Text {
            text: ParsedContent::text_of(content),
            signature: signature.clone(),
        },
        ParsedPartKind::Thinking {
            content,
            signature,
            redacted,
        } => AssistantBlock::Thinking {
            thinking: ParsedContent::text_of(content),
            signature: signature.clone(),
            redacted: *redacted,
        },
        ParsedPartKind::ToolCall(call) => AssistantBlock::ToolCall(ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: match &call.arguments {
                ParsedArguments::Json(v) => v.clone(),
                ParsedArguments::Unparsed(s) => Value::String(s.clone()),
            },
            thought_signature: call.thought_signature.clone(),
        }),
        ParsedPartKind::Other { .. } => return None,
    })
}
