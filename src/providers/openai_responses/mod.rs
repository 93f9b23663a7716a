//! OpenAI Responses over SSE (spec section 9, "OpenAI Responses"), in its four directions:
//!
//! * [`request`]: `POST {base_url}/responses`, the body in Pi's key order, Pi's input items;
//! * [`stream`]: the `response.*` event reader;
//! * [`recorded`]: a recorded body read back into a [`ParsedRequest`];
//! * [`render`]: a reply written as the Responses event stream.
//!
//! Tool-call ids are `${call_id}|${item.id}`; text blocks carry `{"v":1,"id":…}` as their
//! signature and reasoning blocks the reasoning item's JSON, so a reply replays to the same model
//! as Pi replays it. Not reproduced (yet): `prompt_cache_retention` (long retention),
//! `service_tier`, and costs. Depends on `conversation` and the provider seams only.

pub mod recorded;
pub mod render;
pub mod request;
pub mod stream;

use std::future::Future;

use serde_json::Value;

use crate::conversation::{AssistantMessage, Context};
use crate::providers::sse::{SseEvent, SseStream};
use crate::providers::transport::HttpRequest;
use crate::providers::wire::{Format, ParsedRequest, RenderOptions};
use crate::providers::{
    ApiKind, ModelSpec, ProviderError, ProviderSettings, RequestOptions, openai_chat,
};

pub use request::{build_body, convert_input};
pub use stream::{map_status, parse_usage, read_stream};

/// OpenAI Responses as a [`Format`] (no state of its own).
#[derive(Debug, Default)]
pub struct ResponsesWire;

impl Format for ResponsesWire {
    const API: ApiKind = ApiKind::OpenaiResponses;
    const BASE_PATH: &'static str = "/v1";

    fn new(_spec: &ModelSpec, _settings: &ProviderSettings) -> Self {
        ResponsesWire
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
        stream::read_stream(spec, stream)
    }

    fn parse_request(body: &Value) -> ParsedRequest {
        recorded::parse_request(body)
    }

    fn render_turn(turn: &AssistantMessage, options: &RenderOptions) -> Vec<SseEvent> {
        render::render_turn(turn, options)
    }

    /// OpenAI's error body, the same for both its APIs.
    fn render_error_body(status: u16, message: &str) -> String {
        openai_chat::render::error_body(status, message)
    }

    fn is_endpoint(method: &str, route: &str) -> bool {
        method == "POST" && matches!(route, "/responses" | "/v1/responses")
    }
}
