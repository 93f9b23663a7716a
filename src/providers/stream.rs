//! The flow every SSE provider shares: hold the model, the transport and the idle timeout; build
//! the request; open its event stream through the transport (status and error mapping in
//! [`sse::open`]); read the stream to the finished reply, then to the end of the body (so that a
//! recording sees a complete stream end). Each wire format plugs in as a [`Format`] and keeps
//! only what is its own: headers, body, message conversion, events and error refinements. Here
//! too every format becomes a [`WireFormat`] ([`FormatOf`]), the provider being what it builds.
//!
//! Depends on the transport seam, [`sse`], [`super::wire`] and `conversation` only; knows nothing
//! of any API.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::sse::{self, SseEvent};
use super::transport::{HttpRequest, Transport};
use super::wire::{Format, FormatOf, ParsedRequest, RenderOptions, WireFormat};
use super::{ApiKind, ModelSpec, Provider, ProviderError, ProviderSettings, RequestOptions};
use crate::conversation::{AssistantMessage, Context, StopReason, Usage};

/// A provider speaking wire format `F` over SSE.
pub struct SseProvider<F> {
    spec: ModelSpec,
    transport: Arc<dyn Transport>,
    idle_timeout: Duration,
    /// The format's state for this provider.
    wire: F,
}

impl<F: Format> SseProvider<F> {
    /// A provider for `spec` over `transport` with `settings`.
    pub fn new(
        spec: ModelSpec,
        transport: Arc<dyn Transport>,
        settings: &ProviderSettings,
    ) -> Self {
        let wire = F::new(&spec, settings);
        SseProvider {
            spec,
            transport,
            idle_timeout: settings.idle_timeout,
            wire,
        }
    }

    /// The request Pi would send for `context`.
    pub fn build_request(&self, context: &Context, options: &RequestOptions) -> HttpRequest {
        self.wire.build_request(&self.spec, context, options)
    }
}

#[async_trait::async_trait]
impl<F: Format> Provider for SseProvider<F> {
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

impl<F: Format> WireFormat for FormatOf<F> {
    fn api(&self) -> ApiKind {
        F::API
    }

    fn build_request(
        &self,
        spec: &ModelSpec,
        context: &Context,
        options: &RequestOptions,
        settings: &ProviderSettings,
    ) -> HttpRequest {
        F::new(spec, settings).build_request(spec, context, options)
    }

    fn provider(
        &self,
        spec: ModelSpec,
        transport: Arc<dyn Transport>,
        settings: &ProviderSettings,
    ) -> Arc<dyn Provider> {
        Arc::new(SseProvider::<F>::new(spec, transport, settings))
    }

    fn parse_request(&self, body: &Value) -> ParsedRequest {
        F::parse_request(body)
    }

    fn model_in_path(&self, path: &str) -> Option<(String, String)> {
        F::model_in_path(path)
    }

    fn render_turn(&self, turn: &AssistantMessage, options: &RenderOptions) -> Vec<SseEvent> {
        F::render_turn(turn, options)
    }

    fn render_error_body(&self, status: u16, message: &str) -> String {
        F::render_error_body(status, message)
    }

    fn base_path(&self) -> &'static str {
        F::BASE_PATH
    }

    fn is_endpoint(&self, method: &str, route: &str) -> bool {
        F::is_endpoint(method, route)
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
        url: join_url(&spec.base_url, path),
        headers,
        body,
    }
}

/// `base` with `path` appended to its path: a query the base URL carries (Azure's
/// `?api-version=`, a gateway's `?key=`) goes after the path, after the path's own query.
fn join_url(base: &str, path: &str) -> String {
    let base = base.split_once('#').map_or(base, |(url, _)| url);
    let (base, base_query) = base.split_once('?').unwrap_or((base, ""));
    let (path, path_query) = path.split_once('?').unwrap_or((path, ""));
    let query: Vec<&str> = [path_query, base_query]
        .into_iter()
        .filter(|q| !q.is_empty())
        .collect();
    let mut url = format!("{}{path}", base.trim_end_matches('/'));
    if !query.is_empty() {
        url.push('?');
        url.push_str(&query.join("&"));
    }
    url
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
pub(crate) fn test_stream(events: &[sse::SseEvent]) -> sse::SseStream {
    sse::SseStream::new(
        Box::pin(futures::stream::iter(vec![Ok(sse::encode(events))])),
        Duration::from_secs(5),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_s_query_goes_after_the_path() {
        let join = |base, path| join_url(base, path);
        assert_eq!(
            join("http://127.0.0.1:8000/v1/", "/chat/completions"),
            "http://127.0.0.1:8000/v1/chat/completions"
        );
        assert_eq!(
            join(
                "https://x.openai.azure.com/openai/v1?api-version=2024-10-21",
                "/responses"
            ),
            "https://x.openai.azure.com/openai/v1/responses?api-version=2024-10-21"
        );
        assert_eq!(
            join(
                "https://gw.example/v1beta?key=k1#frag",
                "/models/m:streamGenerateContent?alt=sse"
            ),
            "https://gw.example/v1beta/models/m:streamGenerateContent?alt=sse&key=k1"
        );
        let request = HttpRequest {
            method: "POST".into(),
            url: join("http://u:p@h:1/v1?key=secret-in-query&v=2", "/messages"),
            headers: vec![],
            body: Value::Null,
        };
        assert_eq!(request.path(), "/v1/messages?key=[REDACTED]&v=2");
    }
}
