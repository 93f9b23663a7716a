//! What a provider is asked for and with: the model ([`ModelSpec`]), the per-request options
//! ([`RequestOptions`], [`ThinkingLevel`]), the provider's settings ([`ProviderSettings`],
//! [`OpenAiCompat`]), and the [`Provider`] trait every wire format's provider implements.

use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::api::ApiKind;
use super::config::{self, MaxTokensField};
use super::errors::ProviderError;
use super::sse;
use crate::conversation::{AssistantMessage, Context};

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
