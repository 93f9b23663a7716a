//! The wire-format seam: [`Format`], the one trait each API's module implements, in four
//! directions between the provider-neutral [`crate::conversation`] and the API's bytes:
//!
//! * **request**: the request Pi would send for a conversation ([`Format::build_request`]);
//! * **stream**: the streamed response read into a neutral reply ([`Format::read_stream`]),
//!   behind the live [`Provider`] of [`super::stream`];
//! * **recorded**: a recorded request body read back into neutral terms, what divergence compares
//!   ([`Format::parse_request`], [`ParsedRequest`]);
//! * **render**: a neutral reply written as the API's response stream, what the scripted server
//!   serves and what a cassette of an imported session holds ([`Format::render_turn`]);
//!
//! plus what a local server needs to pose as the API: its endpoint, the path of its base URL and
//! its error body. Callers hold a format as a `&dyn` [`WireFormat`] from [`ApiKind::wire`] and
//! never match on the API: adding a provider is a folder under `src/providers/` implementing
//! [`Format`], and a variant of [`ApiKind`] naming it.
//!
//! Depends on `conversation`, the transport seam, [`super::sse`] and [`super::errors`]; never on
//! a format module.

pub mod parsed;
pub mod render;
#[cfg(test)]
mod tests;

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use serde_json::Value;

use super::sse::{SseEvent, SseStream};
use super::transport::{HttpRequest, Transport};
use super::{ApiKind, ModelSpec, Provider, ProviderError, ProviderSettings, RequestOptions};
use crate::conversation::{AssistantMessage, Context};

pub use parsed::{
    ParsedArguments, ParsedContent, ParsedMessage, ParsedMessageKind, ParsedPart, ParsedPartKind,
    ParsedRequest, ParsedTool, ParsedToolCall, ParsedToolResult,
};
pub use render::{RenderOptions, StreamError};

/// One API's wire format, in all its directions: what the API's module implements. A value of
/// it is the format's state for one provider (settings detected from the spec, counters), used
/// by the request and stream directions; the other directions need none.
pub trait Format: Send + Sync + Sized + 'static {
    /// The API this format is.
    const API: ApiKind;

    /// The path of the API's base URL on its host: `` for Anthropic, `/v1` for OpenAI, `/v1beta`
    /// for Gemini (a local server's base URL is `http://ADDR` followed by it).
    const BASE_PATH: &'static str;

    /// The format's state for one provider of `spec`, with `settings`.
    fn new(spec: &ModelSpec, settings: &ProviderSettings) -> Self;

    /// The request Pi would send for `context` to `spec`'s model: method, URL, headers (the key
    /// included) and body, key order as Pi writes it.
    fn build_request(
        &self,
        spec: &ModelSpec,
        context: &Context,
        options: &RequestOptions,
    ) -> HttpRequest;

    /// Reads the event stream to the finished reply: its closing event, an error event (a typed
    /// [`ProviderError`]), or [`ProviderError::StreamCut`] when it ends before either.
    fn read_stream<'a>(
        &'a self,
        spec: &'a ModelSpec,
        stream: &'a mut SseStream,
    ) -> impl Future<Output = Result<AssistantMessage, ProviderError>> + Send + 'a;

    /// The typed error of an HTTP error status (lower-case header names, the body's first
    /// [`super::errors::MAX_ERROR_BODY_BYTES`]); a format may refine the shared mapping.
    fn classify_http_error(
        &self,
        status: u16,
        headers: &[(String, String)],
        body: &str,
    ) -> ProviderError {
        super::errors::from_http_status(status, headers, body)
    }

    /// A recorded request body read back into neutral terms: parameters, tool definitions and
    /// the conversation, each part with the JSON it was read from. Never fails: what the format
    /// does not know is kept as it is ([`ParsedContent::Other`], [`ParsedPartKind::Other`]).
    fn parse_request(body: &Value) -> ParsedRequest;

    /// The model a request path names, with the path with `{model}` in its place (Gemini's
    /// `/models/{model}:streamGenerateContent`); `None` for APIs that name it in the body.
    fn model_in_path(_path: &str) -> Option<(String, String)> {
        None
    }

    /// `turn` as the SSE events of the API's streamed response; [`Format::read_stream`] reads
    /// them back to `turn` (see [`render`] for what is minted when `turn` lacks an id or a
    /// signature, and what an API cannot carry).
    fn render_turn(turn: &AssistantMessage, options: &RenderOptions) -> Vec<SseEvent>;

    /// The API's JSON error body for an HTTP error `status`.
    fn render_error_body(status: u16, message: &str) -> String;

    /// Whether `method` and `route` (a request path without its query) are this API's endpoint,
    /// under [`Format::BASE_PATH`] or at the root.
    fn is_endpoint(method: &str, route: &str) -> bool;
}

/// A [`Format`] behind a `dyn`, as [`ApiKind::wire`] hands it out: the same directions, with the
/// per-provider state made on the way ([`WireFormat::build_request`]) or kept by the provider.
pub trait WireFormat: Send + Sync {
    /// The API this format is.
    fn api(&self) -> ApiKind;

    /// [`Format::build_request`] with a fresh state for `spec` and `settings`.
    fn build_request(
        &self,
        spec: &ModelSpec,
        context: &Context,
        options: &RequestOptions,
        settings: &ProviderSettings,
    ) -> HttpRequest;

    /// The provider for `spec` over `transport`: it builds each request and reads the streamed
    /// reply ([`super::stream::SseProvider`]).
    fn provider(
        &self,
        spec: ModelSpec,
        transport: Arc<dyn Transport>,
        settings: &ProviderSettings,
    ) -> Arc<dyn Provider>;

    /// [`Format::parse_request`].
    fn parse_request(&self, body: &Value) -> ParsedRequest;

    /// [`Format::model_in_path`].
    fn model_in_path(&self, path: &str) -> Option<(String, String)>;

    /// [`Format::render_turn`].
    fn render_turn(&self, turn: &AssistantMessage, options: &RenderOptions) -> Vec<SseEvent>;

    /// [`Format::render_error_body`].
    fn render_error_body(&self, status: u16, message: &str) -> String;

    /// [`Format::BASE_PATH`].
    fn base_path(&self) -> &'static str;

    /// [`Format::is_endpoint`].
    fn is_endpoint(&self, method: &str, route: &str) -> bool;
}

/// Format `F` as a [`WireFormat`] (implemented in [`super::stream`], beside the provider it
/// builds).
pub struct FormatOf<F>(PhantomData<fn() -> F>);

impl<F: Format> FormatOf<F> {
    /// The one value of the type, for `&'static dyn WireFormat`.
    pub const NEW: Self = FormatOf(PhantomData);
}

/// A JSON object of owned values, keys in the given order: what `json!({...})` builds, without
/// `json!` copying each value once more through the serializer. The request builders use it
/// for what they send every turn and would otherwise copy twice, each tool's schema first.
pub fn object<'a>(entries: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value))
            .collect(),
    )
}
