//! OpenAI Chat Completions over SSE (spec section 9), also for OpenAI-compatible servers, in its
//! four directions:
//!
//! * [`request`]: `POST {base_url}/chat/completions`, the body in Pi's key order, Pi's message
//!   conversion;
//! * [`stream`]: the chunk reader;
//! * [`recorded`]: a recorded body read back into a [`ParsedRequest`];
//! * [`render`]: a reply written as OpenAI's chunk stream.
//!
//! Not reproduced (yet): `prompt_cache_key` (only for api.openai.com), the `developer` role for
//! reasoning models (the system prompt stays `system`), `reasoning_details`, `responseModel`, and
//! the compat switches beyond [`OpenAiCompat`]. Depends on `conversation` and the provider seams
//! only.

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
    ApiKind, ModelSpec, OpenAiCompat, ProviderError, ProviderSettings, RequestOptions,
};

pub use request::{build_body, convert_messages};
pub use stream::{map_finish_reason, parse_usage, read_stream};

/// OpenAI Chat Completions as a [`Format`]: its compatibility switches, from the provider's
/// settings or Pi's detection from the spec.
#[derive(Debug, Clone)]
pub struct ChatWire {
    compat: OpenAiCompat,
}

impl Format for ChatWire {
    const API: ApiKind = ApiKind::OpenaiCompletions;
    const BASE_PATH: &'static str = "/v1";

    fn new(spec: &ModelSpec, settings: &ProviderSettings) -> Self {
        let compat = settings.openai_compat.clone();
        ChatWire {
            compat: compat.unwrap_or_else(|| OpenAiCompat::detect(spec)),
        }
    }

    fn build_request(
        &self,
        spec: &ModelSpec,
        context: &Context,
        options: &RequestOptions,
    ) -> HttpRequest {
        request::build_request(spec, &self.compat, context, options)
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
        method == "POST" && matches!(route, "/chat/completions" | "/v1/chat/completions")
    }
}
