//! Which wire format a provider speaks: [`ApiKind`], named as Pi names it. A leaf: the formats
//! and everything above them name an API through it; [`ApiKind::wire`], which maps each to its
//! format, lives beside the formats ([`super::formats`]).

use serde::{Deserialize, Serialize};

/// Which wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ApiKind {
    /// Anthropic Messages (`POST /v1/messages`).
    #[value(name = "anthropic-messages")]
    AnthropicMessages,
    /// OpenAI Chat Completions (`POST /chat/completions`), also any OpenAI-compatible server.
    #[value(name = "openai-completions")]
    OpenaiCompletions,
    /// OpenAI Responses (`POST /responses`).
    #[value(name = "openai-responses")]
    OpenaiResponses,
    /// Google Generative AI (`POST /models/{model}:streamGenerateContent?alt=sse`).
    #[value(name = "google-generative-ai")]
    GoogleGenerativeAi,
}

impl ApiKind {
    /// Every API, in the order they are listed to users.
    pub const ALL: [ApiKind; 4] = [
        ApiKind::AnthropicMessages,
        ApiKind::OpenaiCompletions,
        ApiKind::OpenaiResponses,
        ApiKind::GoogleGenerativeAi,
    ];

    /// Pi's name of the API (`anthropic-messages`, `openai-completions`, `openai-responses`,
    /// `google-generative-ai`).
    pub fn as_str(&self) -> &'static str {
        match self {
            ApiKind::AnthropicMessages => "anthropic-messages",
            ApiKind::OpenaiCompletions => "openai-completions",
            ApiKind::OpenaiResponses => "openai-responses",
            ApiKind::GoogleGenerativeAi => "google-generative-ai",
        }
    }
}
