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
pub mod api;
pub mod catalog;
pub mod config;
pub mod errors;
pub mod formats;
pub mod gemini;
pub mod limiter;
pub mod live;
pub mod openai_chat;
pub mod openai_responses;
pub mod oracle;
pub mod retry;
pub mod spec;
pub mod sse;
pub mod stream;
pub mod transform;
pub mod transport;
pub mod wire;

use std::sync::Arc;

pub use api::ApiKind;
pub use config::MaxTokensField;
pub use errors::ProviderError;
pub use spec::{
    ModelSpec, OpenAiCompat, Provider, ProviderSettings, RequestOptions, ThinkingLevel,
};
use transport::Transport;

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
