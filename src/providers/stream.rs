//! The flow every SSE provider shares: hold the model, the transport and the idle timeout; build
//! the request; open its event stream through the transport (status and error mapping in
//! [`sse::open`]); read the stream to the finished reply, then to the end of the body (so that a
//! recording sees a complete stream end). Each wire format plugs in through [`WireFormat`] and
//! keeps only what is its own: headers, body, message conversion, events and error refinements.
//!
//! Depends on the transport seam, [`sse`] and `conversation` only; knows nothing of any API.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::sse::{self, SseStream};
use super::transport::{HttpRequest, Transport};
use super::{ModelSpec, Provider, ProviderError, RequestOptions};
use crate::conversation::{AssistantMessage, Context, StopReason, Usage};

/// What one API's wire format adds to the shared flow.
pub trait WireFormat: Send + Sync + 'static {
    /// The format's state for `spec` (settings detected from it, counters).
    fn for_spec(spec: &ModelSpec) -> Self;

    /// The request Pi would send for `context`.
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
}

/// A provider speaking wire format `W` over SSE.
pub struct SseProvider<W> {
    spec: ModelSpec,
    transport: Arc<dyn Transport>,
    idle_timeout: Duration,
    /// The wire format's own state; its module may adjust it (`with_compat`).
    pub(super) wire: W,
}

impl<W: WireFormat> SseProvider<W> {
    /// A provider for `spec` over `transport`, with the default idle timeout.
    pub fn new(spec: ModelSpec, transport: Arc<dyn Transport>) -> Self {
        let wire = W::for_spec(&spec);
        SseProvider {
            spec,
            transport,
            idle_timeout: sse::DEFAULT_IDLE_TIMEOUT,
            wire,
        }
    }

    /// Sets the stream idle timeout.
    pub fn with_idle_timeout(mut self, idle_timeout: Duration) -> Self {
        self.idle_timeout = idle_timeout;
        self
    }

    /// The request Pi would send for `context`.
    pub fn build_request(&self, context: &Context, options: &RequestOptions) -> HttpRequest {
        self.wire.build_request(&self.spec, context, options)
    }
}

#[async_trait::async_trait]
impl<W: WireFormat> Provider for SseProvider<W> {
    fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    async fn complete(
        &self,
        context: &Context,
        options: &RequestOptions,
    ) -> Result<AssistantMessage, ProviderError> {
        let request = self.build_request(context, options);
        let classify = |status: u16, headers: &[(String, String)], body: &str| {
            self.wire.classify_http_error(status, headers, body)
        };
        let mut stream = sse::open(
            self.transport.as_ref(),
            request,
            self.idle_timeout,
            &classify,
        )
        .await?;
        let reply = self.wire.read_stream(&self.spec, &mut stream).await;
        stream.finish().await;
        reply
    }
}

/// A `POST` to `{base_url}{path}` with `headers`, then the spec's extra headers, each replacing
/// any header of the same name (compared without case) and sent in lower case.
pub fn post(
    spec: &ModelSpec,
    path: &str,
    mut headers: Vec<(String, String)>,
    body: Value,
) -> HttpRequest {
    for (k, v) in &spec.headers {
        headers.retain(|(name, _)| !name.eq_ignore_ascii_case(k));
        headers.push((k.to_lowercase(), v.clone()));
    }
    HttpRequest {
        method: "POST".into(),
        url: format!("{}{path}", spec.base_url.trim_end_matches('/')),
        headers,
        body,
    }
}

/// The end of a stream read: [`ProviderError::StreamCut`] with `cut` when the stream ended
/// before the API's closing event, else the reply, a stop reason `error` given Pi's
/// `"An unknown error occurred"`.
pub fn finish_reply(
    mut msg: AssistantMessage,
    cut: Option<&str>,
) -> Result<AssistantMessage, ProviderError> {
    if let Some(message) = cut {
        return Err(ProviderError::StreamCut {
            message: message.to_owned(),
        });
    }
    if msg.stop_reason == StopReason::Error {
        msg.error_message = Some("An unknown error occurred".into());
    }
    Ok(msg)
}

/// The reply before any event: no content, zero usage, stop reason `stop`.
pub fn empty_reply(spec: &ModelSpec) -> AssistantMessage {
    AssistantMessage {
        content: Vec::new(),
        api: spec.api.as_str().to_owned(),
        provider: spec.provider.clone(),
        model: spec.model.clone(),
        usage: Usage::default(),
        stop_reason: StopReason::Stop,
        error_message: None,
        response_id: None,
    }
}

/// A spec for the providers' unit tests: key `k`, no extra headers.
#[cfg(test)]
pub(crate) fn test_spec(
    provider: &str,
    api: super::ApiKind,
    model: &str,
    base_url: &str,
) -> ModelSpec {
    ModelSpec {
        provider: provider.into(),
        api,
        model: model.into(),
        base_url: base_url.into(),
        api_key: Some("k".into()),
        headers: vec![],
    }
}

/// `events` as one body chunk read with a 5 s idle timeout, for the providers' unit tests.
#[cfg(test)]
pub(crate) fn test_stream(events: &[sse::SseEvent]) -> SseStream {
    SseStream::new(
        Box::pin(futures::stream::iter(vec![Ok(sse::encode(events))])),
        Duration::from_secs(5),
    )
}
