//! Google Generative AI (Gemini) over SSE (spec section 9, "Google Generative AI"), in its four
//! directions:
//!
//! * [`request`]: `POST {base_url}/models/{model}:streamGenerateContent?alt=sse`, the body as
//!   Pi's Google SDK writes it, function responses merged into one user turn;
//! * [`stream`]: the chunk reader, and Google's refinements of HTTP errors;
//! * [`recorded`]: a recorded body read back into a [`ParsedRequest`];
//! * [`render`]: a reply written as Gemini's chunk stream.
//!
//! A function call's `thoughtSignature` is kept on its [`crate::conversation::ToolCall`] and
//! replayed, as Pi does, when the call came from the same provider and model and the signature is
//! valid base64; a Gemini 3 model gets Pi's `skip_thought_signature_validator` sentinel for a
//! call without one.
//!
//! Deviations from Pi:
//! * Tool calls without an id (Gemini usually gives none) get `${name}_${n}`, `n` counting the
//!   calls of this provider from 1, instead of Pi's `${name}_${Date.now()}_${n}`: ids must be
//!   deterministic for cassette replay.
//! * An `error` chunk is a typed provider error (`INTERNAL` a server error, `UNAVAILABLE`
//!   overloaded, `RESOURCE_EXHAUSTED` rate limited with its `RetryInfo` delay), never an error
//!   reply counted against the model; a stream whose last chunk has no `finishReason` is a cut
//!   stream (Pi takes what arrived as the reply); a chunk with `promptFeedback.blockReason` ends
//!   the reply with stop reason `error` (Pi returns an empty reply).
//! * An HTTP 400 for a bad key (`API_KEY_INVALID`) is an authentication error, and a
//!   `RetryInfo.retryDelay` in an error body is the wait before retrying.
//! * The model is taken to accept images.
//!
//! Depends on `conversation` and the provider seams only.

pub mod recorded;
pub mod render;
pub mod request;
pub mod stream;

use std::future::Future;
use std::sync::atomic::AtomicU64;

use serde_json::Value;

use crate::conversation::{AssistantMessage, Context};
use crate::providers::sse::{SseEvent, SseStream};
use crate::providers::transport::HttpRequest;
use crate::providers::wire::{Format, ParsedRequest, RenderOptions};
use crate::providers::{ApiKind, ModelSpec, ProviderError, ProviderSettings, RequestOptions};

pub use request::{build_body, convert_messages, thinking_config};
pub use stream::{classify_http_error, map_finish_reason, parse_usage, read_stream, retry_delay};

/// Gemini's `streamGenerateContent` as a [`Format`]: the numbering of the tool calls that arrive
/// without an id, and Google's refinements of HTTP errors.
#[derive(Debug, Default)]
pub struct GeminiWire {
    /// Numbers the tool calls that arrive without an id.
    call_counter: AtomicU64,
}

impl Format for GeminiWire {
    const API: ApiKind = ApiKind::GoogleGenerativeAi;
    const BASE_PATH: &'static str = "/v1beta";

    fn new(_spec: &ModelSpec, _settings: &ProviderSettings) -> Self {
        GeminiWire::default()
    }

    fn build_request(
        &self,
        spec: &ModelSpec,
        context: &Context,
        options: &RequestOptions,
    ) -> HttpRequest {
        request::build_request(spec, context, options)
    }

    fn read_stream<'a>(
        &'a self,
        spec: &'a ModelSpec,
        stream: &'a mut SseStream,
    ) -> impl Future<Output = Result<AssistantMessage, ProviderError>> + Send + 'a {
        stream::read_stream(spec, stream, &self.call_counter)
    }

    fn classify_http_error(
        &self,
        status: u16,
        headers: &[(String, String)],
        body: &str,
    ) -> ProviderError {
        stream::classify_http_error(status, headers, body)
    }

    fn parse_request(body: &Value) -> ParsedRequest {
        recorded::parse_request(body)
    }

    /// `(model, path with {model})` of `/v1beta/models/{model}:streamGenerateContent?alt=sse`.
    fn model_in_path(path: &str) -> Option<(String, String)> {
        let start = path.find("models/")? + "models/".len();
        let end = start + path[start..].find(':')?;
        Some((
            path[start..end].to_owned(),
            format!("{}{{model}}{}", &path[..start], &path[end..]),
        ))
    }

    fn render_turn(turn: &AssistantMessage, options: &RenderOptions) -> Vec<SseEvent> {
        render::render_turn(turn, options)
    }

    fn render_error_body(status: u16, message: &str) -> String {
        render::error_body(status, message)
    }

    /// `/models/{model}:streamGenerateContent`, optionally under `/v1beta`.
    fn is_endpoint(method: &str, route: &str) -> bool {
        let model = route
            .strip_prefix("/v1beta/models/")
            .or_else(|| route.strip_prefix("/models/"))
            .and_then(|rest| rest.strip_suffix(":streamGenerateContent"));
        method == "POST" && model.is_some_and(|m| !m.is_empty() && !m.contains('/'))
    }
}
