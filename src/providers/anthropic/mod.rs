//! Anthropic Messages over SSE (spec section 9, "Anthropic Messages"), in its four directions:
//!
//! * [`request`]: `POST {base_url}/v1/messages`, Pi's headers, the body in Pi's exact key order
//!   and Pi's message conversion;
//! * [`stream`]: `message_start` / `content_block_*` / `message_delta` / `message_stop` read into
//!   an [`crate::conversation::AssistantMessage`];
//! * [`recorded`]: a recorded body read back into a [`ParsedRequest`];
//! * [`render`]: a reply written as Anthropic's event stream.
//!
//! Not reproduced (yet): OAuth keys (`sk-ant-oat…`: Bearer auth, Claude Code names), adaptive
//! thinking (`{type: "adaptive"}` for opus-4-6), long cache retention, and costs. Depends on
//! `conversation` and the provider seams only.

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
use crate::providers::{ApiKind, ModelSpec, ProviderError, ProviderSettings, RequestOptions};

pub use request::{build_body, convert_messages, thinking_param};
pub use stream::{map_stop_reason, read_stream};

/// Anthropic Messages as a [`Format`] (no state of its own).
#[derive(Debug, Default)]
pub struct AnthropicWire;

impl Format for AnthropicWire {
    const API: ApiKind = ApiKind::AnthropicMessages;
    const BASE_PATH: &'static str = "";

    fn new(_spec: &ModelSpec, _settings: &ProviderSettings) -> Self {
        AnthropicWire
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

    fn render_error_body(status: u16, message: &str) -> String {
        render::error_body(status, message)
    }

    fn is_endpoint(method: &str, route: &str) -> bool {
        method == "POST" && route == "/v1/messages"
    }
}
