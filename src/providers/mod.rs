//! Model providers: translate the [`crate::conversation`] model to and from each API's real wire
//! format, stream the reply over SSE, and turn HTTP failures into typed [`ProviderError`]s.
//!
//! Each API is one folder (`anthropic/`, `openai_chat/`, `openai_responses/`, `gemini/`) holding
//! its four directions: the request, the streamed response, a recorded request read back, a
//! reply rendered as the API's stream; each implements [`wire::Format`], and
//! [`ApiKind::wire`] is the one list of them. Every provider builds an
//! [`transport::HttpRequest`] and hands it to a [`transport::Transport`]; the live transport
//! (reqwest), the cassette recorder and the cassette player all sit under that one seam, so a
//! replay runs the same request-building and SSE-parsing code as a live call. Providers may
//! depend on `conversation` only; never on tools, the agent loop, the runner or the reports.

pub mod anthropic;
pub mod catalog;
pub mod config;
pub mod errors;
pub mod gemini;
pub mod limiter;
pub mod live;
pub mod openai_chat;
pub mod openai_responses;
pub mod oracle;
pub mod retry;
pub mod sse;
pub mod stream;
pub mod transform;
pub mod transport;
pub mod wire;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::conversation::{AssistantMessage, Context};
use crate::record::ErrorKind;
use transport::Transport;

/// Per-request settings that are not part of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestOptions {
    /// `max_tokens` / `max_completion_tokens` / `max_output_tokens` / `maxOutputTokens`.
    pub max_tokens: u32,
    pub temperature: Option<f64>,
    /// The reasoning level. `None` is Pi's behaviour for a model that is not a reasoning model:
    /// no reasoning setting is sent at all. `Some(level)` treats the model as a reasoning model
    /// and sends each API's setting (see [`ThinkingLevel`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<ThinkingLevel>,
    /// Pi's session id: OpenAI Responses sends it as `prompt_cache_key` and in the `session_id`
    /// and `x-client-request-id` headers. `None` sends neither.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

impl Default for RequestOptions {
    fn default() -> Self {
        RequestOptions {
            max_tokens: 16384,
            temperature: None,
            thinking: None,
            session_id: None,
        }
    }
}

/// Pi's thinking levels (`--thinking`), as each API receives them:
///
/// * Anthropic: `thinking: {type: "enabled", budget_tokens, display: "summarized"}` with Pi's
///   budgets (minimal 1024, low 2048, medium 8192, high 16384, cut to leave 1024 output tokens
///   under `max_tokens`); `off` sends `{type: "disabled"}`;
/// * OpenAI Chat Completions: `reasoning_effort` (`off` sends nothing);
/// * OpenAI Responses: `reasoning: {effort, summary: "auto"}` and
///   `include: ["reasoning.encrypted_content"]`; `off` sends `reasoning: {effort: "none"}`;
/// * Gemini: `generationConfig.thinkingConfig` (`includeThoughts` and a `thinkingBudget`, or
///   `thinkingLevel` for Gemini 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ThinkingLevel {
    Off,
    Minimal,
    Low,
    Medium,
    High,
}

impl ThinkingLevel {
    /// The level's name (`off`, `minimal`, ...), also the OpenAI effort value.
    pub fn as_str(&self) -> &'static str {
        match self {
            ThinkingLevel::Off => "off",
            ThinkingLevel::Minimal => "minimal",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
        }
    }

    /// Pi's default token budget of the level (`adjustMaxTokensForThinking`); 0 for `off`.
    pub fn default_budget(&self) -> u32 {
        match self {
            ThinkingLevel::Off => 0,
            ThinkingLevel::Minimal => 1024,
            ThinkingLevel::Low => 2048,
            ThinkingLevel::Medium => 8192,
            ThinkingLevel::High => 16384,
        }
    }
}

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

    /// The API's wire format, in all its directions: the one place an API is tied to its module.
    pub fn wire(self) -> &'static dyn wire::WireFormat {
        use wire::FormatOf;
        match self {
            ApiKind::AnthropicMessages => &FormatOf::<anthropic::AnthropicWire>::NEW,
            ApiKind::OpenaiCompletions => &FormatOf::<openai_chat::ChatWire>::NEW,
            ApiKind::OpenaiResponses => &FormatOf::<openai_responses::ResponsesWire>::NEW,
            ApiKind::GoogleGenerativeAi => &FormatOf::<gemini::GeminiWire>::NEW,
        }
    }

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

/// Everything needed to talk to one model of one provider.
#[derive(Debug, Clone)]
pub struct ModelSpec {
    /// Provider name as the user calls it (`anthropic`, `openai`, a configured name).
    pub provider: String,
    pub api: ApiKind,
    /// Model id sent on the wire.
    pub model: String,
    /// Base URL (`https://api.anthropic.com`, `https://api.openai.com/v1`, a local server).
    pub base_url: String,
    /// The key, if any. Never written anywhere: not to cassettes, reports or logs.
    pub api_key: Option<String>,
    /// Extra headers sent with every request.
    pub headers: Vec<(String, String)>,
}

/// A typed provider failure, kept apart from model failures in the reports.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    #[error("authentication failed ({status}): {message}")]
    Authentication { status: u16, message: String },
    #[error("rate limited ({status}): {message}")]
    RateLimited {
        status: u16,
        message: String,
        retry_after: Option<Duration>,
    },
    #[error("provider overloaded ({status}): {message}")]
    Overloaded { status: u16, message: String },
    #[error("server error ({status}): {message}")]
    Server { status: u16, message: String },
    #[error("context too long: {message}")]
    ContextTooLong { message: String },
    #[error("invalid request ({status}): {message}")]
    InvalidRequest { status: u16, message: String },
    #[error("failed to connect: {message}")]
    Connection { message: String },
    #[error("stream cut before its end: {message}")]
    StreamCut { message: String },
    #[error("stream stalled: no data for {idle:?}")]
    StreamStalled { idle: Duration },
    /// The provider sent an error event or a reply we cannot parse.
    #[error("{message}")]
    Protocol { message: String },
    /// A cassette could not serve this request (replay mode): the run diverged or the cassette
    /// has no more interactions.
    #[error("{0}")]
    Cassette(String),
    /// The recorded reply was interrupted by its user (an imported session's Escape): the
    /// agent stops as Pi does after an abort and the next prompt goes on.
    #[error("the reply was interrupted: {message}")]
    Interrupted { message: String },
}

impl ProviderError {
    /// Whether retrying the same request may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ProviderError::RateLimited { .. }
                | ProviderError::Overloaded { .. }
                | ProviderError::Server { .. }
                | ProviderError::Connection { .. }
                | ProviderError::StreamCut { .. }
                | ProviderError::StreamStalled { .. }
        )
    }

    /// What kind of failure this is, as the reports name it.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ProviderError::Authentication { .. } => ErrorKind::Authentication,
            ProviderError::RateLimited { .. } => ErrorKind::RateLimited,
            ProviderError::Overloaded { .. } => ErrorKind::Overloaded,
            ProviderError::Server { .. } => ErrorKind::ServerError,
            ProviderError::ContextTooLong { .. } => ErrorKind::ContextTooLong,
            ProviderError::InvalidRequest { .. } => ErrorKind::InvalidRequest,
            ProviderError::Connection { .. } => ErrorKind::ConnectionFailed,
            ProviderError::StreamCut { .. } => ErrorKind::StreamCut,
            ProviderError::StreamStalled { .. } => ErrorKind::StreamStalled,
            ProviderError::Protocol { .. } => ErrorKind::Protocol,
            ProviderError::Cassette(_) => ErrorKind::Cassette,
            // Never an error of a run: the agent stops as after an abort.
            ProviderError::Interrupted { .. } => ErrorKind::StreamCut,
        }
    }
}

/// A model behind some wire format. Streams internally; returns the finished reply.
#[async_trait]
pub trait Provider: Send + Sync {
    /// The model this provider talks to.
    fn spec(&self) -> &ModelSpec;

    /// Sends one request built from `context` and returns the assistant's reply.
    ///
    /// A reply whose stop reason is `error` (a refusal, an error event in the stream) is returned
    /// as `Ok` with `stop_reason: Error` and `error_message`, as Pi does; transport and HTTP
    /// failures are `Err`.
    async fn complete(
        &self,
        context: &Context,
        options: &RequestOptions,
    ) -> Result<AssistantMessage, ProviderError>;
}

/// Builds the provider for `spec` over `transport`, with default [`ProviderSettings`].
pub fn build(spec: ModelSpec, transport: Arc<dyn Transport>) -> Arc<dyn Provider> {
    build_with(spec, transport, ProviderSettings::default())
}

/// Builds the provider for `spec` over `transport` with explicit settings.
pub fn build_with(
    spec: ModelSpec,
    transport: Arc<dyn Transport>,
    settings: ProviderSettings,
) -> Arc<dyn Provider> {
    spec.api.wire().provider(spec, transport, &settings)
}

/// Settings of a provider that are neither the model nor one request.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderSettings {
    /// No stream bytes for this long is [`ProviderError::StreamStalled`] (default 120 s).
    pub idle_timeout: Duration,
    /// OpenAI Chat Completions quirks; `None` detects them from the spec as Pi does.
    pub openai_compat: Option<OpenAiCompat>,
}

impl Default for ProviderSettings {
    fn default() -> Self {
        ProviderSettings {
            idle_timeout: sse::DEFAULT_IDLE_TIMEOUT,
            openai_compat: None,
        }
    }
}

pub use config::MaxTokensField;

/// The OpenAI Chat Completions compatibility switches (Pi's `compat`), defaulting to Pi's
/// standard OpenAI behaviour.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OpenAiCompat {
    /// The token-limit field name.
    pub max_tokens_field: MaxTokensField,
    /// Send `store: false` (Pi omits it for non-standard providers).
    pub send_store: bool,
    /// Send `strict: false` on tool definitions.
    pub supports_strict_mode: bool,
}

impl Default for OpenAiCompat {
    fn default() -> Self {
        OpenAiCompat {
            max_tokens_field: MaxTokensField::MaxCompletionTokens,
            send_store: true,
            supports_strict_mode: true,
        }
    }
}

impl OpenAiCompat {
    /// Pi's auto-detection, reduced to the switches we have: a local or OpenAI base URL gets the
    /// standard behaviour; the providers Pi knows to want `max_tokens` get it.
    pub fn detect(spec: &ModelSpec) -> Self {
        let url = spec.base_url.to_lowercase();
        let wants_max_tokens = ["chutes", "moonshot"]
            .iter()
            .any(|p| spec.provider.contains(p) || url.contains(p))
            || url.contains("gateway.ai.cloudflare.com");
        OpenAiCompat {
            max_tokens_field: if wants_max_tokens {
                MaxTokensField::MaxTokens
            } else {
                MaxTokensField::MaxCompletionTokens
            },
            ..OpenAiCompat::default()
        }
    }

    /// Pi's detection for `spec`, overridden by whatever `config` sets (`harness.yaml` or the
    /// built-in catalog entry).
    pub fn from_config(spec: &ModelSpec, config: &config::CompatConfig) -> Self {
        let mut compat = OpenAiCompat::detect(spec);
        if let Some(field) = config.max_tokens_field {
            compat.max_tokens_field = field;
        }
        if let Some(store) = config.store {
            compat.send_store = store;
        }
        compat
    }
}
