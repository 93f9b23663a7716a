//! The provider-neutral conversation model: what the agent loop keeps as history and what every
//! provider translates to and from its wire format.
//!
//! It mirrors pi-ai's message types (user, assistant, toolResult; text, thinking, toolCall and image
//! blocks; usage; stop reasons), so that a transcript reads like Pi's and the translation rules of
//! `../shared/design/pi-tools.md` section 9 apply unchanged. Depends on nothing else in the crate.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A block of user or tool-result content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Content {
    Text {
        text: String,
    },
    Image {
        /// Base64 of the image bytes.
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// The text of a text block, `None` for an image.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text } => Some(text),
            Content::Image { .. } => None,
        }
    }
}

/// User message content: Pi keeps a plain string as a string (providers send it as one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserContent {
    Text(String),
    Blocks(Vec<Content>),
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The id as the producing API gave it (for OpenAI Responses: `call_id|item_id`).
    pub id: String,
    pub name: String,
    /// The parsed JSON arguments (an object, normally; whatever the model sent otherwise).
    pub arguments: Value,
    /// Gemini's `thoughtSignature` on the function call part, replayed to the same model as Pi
    /// replays it (Gemini 3 refuses a history whose calls lost theirs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
}

/// A block of assistant content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum AssistantBlock {
    Text {
        text: String,
        /// Provider-specific signature (OpenAI Responses message id), replayed to the same model.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            rename = "textSignature"
        )]
        signature: Option<String>,
    },
    Thinking {
        thinking: String,
        /// Anthropic signature, OpenAI Responses reasoning item JSON, or the Chat Completions
        /// field name (`reasoning_content`) the thinking arrived in.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            rename = "thinkingSignature"
        )]
        signature: Option<String>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        redacted: bool,
    },
    ToolCall(ToolCall),
}

/// Why the model stopped, in Pi's vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    Stop,
    Length,
    ToolUse,
    Error,
    Aborted,
}

/// Token usage of one model reply, as Pi computes it from the provider's figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub total_tokens: u64,
}

impl Usage {
    /// Adds another reply's usage to this one; a count a provider reports absurdly high saturates instead of overflowing.
    pub fn add(&mut self, other: &Usage) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
        self.total_tokens = self.total_tokens.saturating_add(other.total_tokens);
    }
}

/// One model reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    pub content: Vec<AssistantBlock>,
    /// The API that produced it (`anthropic-messages`, `openai-completions`, ...).
    pub api: String,
    /// The provider name (`anthropic`, `openai`, a configured name).
    pub provider: String,
    pub model: String,
    pub usage: Usage,
    pub stop_reason: StopReason,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
}

impl AssistantMessage {
    /// What Pi keeps of a reply its user interrupted: no content, stop reason `aborted`, the
    /// reason as its error message. Later requests leave it out.
    pub fn interrupted(api: &str, provider: &str, model: &str, reason: String) -> Self {
        AssistantMessage {
            content: Vec::new(),
            api: api.to_owned(),
            provider: provider.to_owned(),
            model: model.to_owned(),
            usage: Usage::default(),
            stop_reason: StopReason::Aborted,
            error_message: Some(reason),
            response_id: None,
        }
    }

    /// The tool calls of this reply, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|b| match b {
            AssistantBlock::ToolCall(call) => Some(call),
            _ => None,
        })
    }

    /// All text blocks joined, for reports.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                AssistantBlock::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("")
    }
}

/// The result of one tool call, as the model will see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    pub tool_call_id: String,
    pub tool_name: String,
    pub content: Vec<Content>,
    pub is_error: bool,
}

/// One message of the history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "camelCase")]
pub enum Message {
    User { content: UserContent },
    Assistant(AssistantMessage),
    ToolResult(ToolResultMessage),
}

/// A tool as the model is told about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    /// The JSON Schema of the parameters, key order as Pi serialises it.
    pub parameters: Value,
}

/// Everything a provider needs to build one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDefinition>,
}
