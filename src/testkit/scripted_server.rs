//! A scripted model server: a real HTTP/1.1 server on 127.0.0.1 that answers
//! `POST /v1/messages` in Anthropic's SSE format, `POST /chat/completions` (or
//! `/v1/chat/completions`) in OpenAI Chat's, `POST /responses` (or `/v1/responses`) in OpenAI
//! Responses' and `POST /models/{model}:streamGenerateContent` (or under `/v1beta`) in Gemini's,
//! from a [`Script`] of assistant turns in order (request N gets turn N), and records every
//! request for assertions.
//!
//! Replies are deterministic: tool-call ids are numbered across the script (`toolu_01`,
//! `call_01`, `call_01|fc_01`; Gemini sends none, as the real API), response ids by turn
//! (`msg_01`, `chatcmpl-01`, `resp_01`, `gen_01`), and usage figures are
//! synthesised from the request and reply sizes (prompt tokens = body bytes / 4, with the previous
//! request's prompt counted as cache reads) unless a turn gives its own. A turn may instead be a
//! fault: an HTTP error status, a stream cut, stall or clean early end after some events, or an
//! error event. When a turn has thinking, Gemini's first function call part carries a
//! `thoughtSignature` (base64 of `fsig_NN`), as Gemini sends it.
//!
//! Script format (YAML, unknown fields are errors):
//!
//! ```yaml
//! turns:
//!   - thinking: "Let me look."                 # optional
//!     text: "I'll read the failing test first." # optional
//!     tool_calls:                              # optional
//!       - name: read
//!         arguments: {path: tests/test_calc.py}
//!     stop_reason: stop            # optional: stop | length | toolUse, or a raw wire value
//!                                  # (a Responses status such as `cancelled`; `failed` sends
//!                                  # `response.failed`; a Gemini finishReason such as `SAFETY`)
//!     usage: {input: 10, output: 5, cache_read: 0, cache_write: 0}   # optional
//!   - fault: {status: 429, retry_after: 1, body: "slow down", headers: {retry-after-ms: "5"}}
//!     # or one of: fault: {cut_after_events: 3} | {stall_after_events: 2} |
//!     # {end_after_events: 4} (the body then ends cleanly) |
//!     # {error_event: "Overloaded", error_type: overloaded_error} (error_type: the API's own
//!     # name of the error; default Anthropic overloaded_error, OpenAI server_error, Gemini
//!     # UNAVAILABLE)
//! ```
//!
//! The replies are each wire format's own rendering of a neutral reply
//! ([`crate::providers::wire::WireFormat::render_turn`]): this server knows no format, it turns a
//! script turn into an [`AssistantMessage`] and asks the format. Depends on `providers` and on
//! hyper; nothing depends on it but tests and cassette production.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::{BodyExt, Full, StreamBody, combinators::UnsyncBoxBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::conversation::{AssistantBlock, AssistantMessage, StopReason, ToolCall, Usage};
use crate::providers::ApiKind;
use crate::providers::sse::{SseEvent, encode_event};
use crate::providers::wire::{RenderOptions, StreamError};

/// A script: the assistant turns, served in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    pub turns: Vec<Turn>,
}

/// One scripted reply (or fault).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ScriptedToolCall>,
    /// `stop`, `length`, `toolUse` (mapped per API) or a raw wire value sent as is. Default:
    /// tool use when there are tool calls, else stop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Usage figures to report instead of the synthetic ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ScriptedUsage>,
    /// Answer with a failure instead of (or part of) the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
}

/// A tool call of a scripted turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedToolCall {
    pub name: String,
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    json!({})
}

/// Usage as Pi counts it; translated into each API's own fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScriptedUsage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

/// A programmed failure. Exactly one of `status`, `cut_after_events`, `stall_after_events`,
/// `error_event`; `body` and `retry_after` go with `status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fault {
    /// Answer with this HTTP status instead of a stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The error body (default: the API's JSON error shape).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// A `retry-after` header, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
    /// More headers of the error response, sent as given (`retry-after: 1e300`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub headers: std::collections::BTreeMap<String, String>,
    /// Send this many SSE events of the reply, then break the connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_after_events: Option<usize>,
    /// Send this many SSE events of the reply, then go silent (connection kept open).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall_after_events: Option<usize>,
    /// Send this many SSE events of the reply, then end the body cleanly (no closing event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_after_events: Option<usize>,
    /// Start the reply, then send an error event with this message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_event: Option<String>,
    /// The API's own name of the `error_event` (Anthropic's `error.type`, OpenAI's `type` or
    /// `code`, Gemini's `status`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
}

/// Why a script could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("failed to read script {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("failed to parse script {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("invalid script {path}: turn {turn}: {message}")]
    Invalid {
        path: PathBuf,
        turn: usize,
        message: String,
    },
}

/// Reads and validates a script file.
pub fn load_script(path: impl AsRef<Path>) -> Result<Script, ScriptError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
        path: path.to_owned(),
        source,
    })?;
    parse_script(&text, path)
}

/// Parses and validates script text; `origin` names it in errors.
pub fn parse_script(text: &str, origin: impl AsRef<Path>) -> Result<Script, ScriptError> {
    let path = origin.as_ref().to_owned();
    let script: Script = serde_yaml_ng::from_str(text).map_err(|e| ScriptError::Parse {
        path: path.clone(),
        message: e.to_string(),
    })?;
    for (i, turn) in script.turns.iter().enumerate() {
        let invalid = |message: &str| ScriptError::Invalid {
            path: path.clone(),
            turn: i + 1,
            message: message.to_owned(),
        };
        if let Some(f) = &turn.fault {
            let kinds = [
                f.status.is_some(),
                f.cut_after_events.is_some(),
                f.stall_after_events.is_some(),
                f.end_after_events.is_some(),
                f.error_event.is_some(),
            ];
            if kinds.iter().filter(|k| **k).count() != 1 {
                return Err(invalid(
                    "a fault needs exactly one of status, cut_after_events, stall_after_events, end_after_events, error_event",
                ));
            }
            if f.status.is_none()
                && (f.body.is_some() || f.retry_after.is_some() || !f.headers.is_empty())
            {
                return Err(invalid("body, retry_after and headers go with status only"));
            }
            if f.error_event.is_none() && f.error_type.is_some() {
                return Err(invalid("error_type goes with error_event only"));
            }
        } else if turn.text.is_none() && turn.thinking.is_none() && turn.tool_calls.is_empty() {
            return Err(invalid(
                "a turn needs text, thinking, tool_calls or a fault",
            ));
        }
        for call in &turn.tool_calls {
            if !call.arguments.is_object() {
                return Err(invalid(&format!(
                    "the arguments of tool call {} must be a mapping",
                    call.name
                )));
            }
        }
    }
    Ok(script)
}

/// One request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedRequest {
    pub method: String,
    /// Path and query.
    pub path: String,
    /// Header names in lower case, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (order kept), or a JSON string of the raw text if it was not JSON.
    pub body: Value,
}

impl ReceivedRequest {
    /// The first header named `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, Default)]
struct State {
    requests: Vec<ReceivedRequest>,
    served: usize,
    prev_prompt_tokens: u64,
}

/// A running scripted server; shut down when dropped.
pub struct ScriptedServer {
    addr: SocketAddr,
    api: ApiKind,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl ScriptedServer {
    /// The base URL to put in a [`crate::providers::ModelSpec`]: `http://127.0.0.1:PORT` for
    /// Anthropic, `http://127.0.0.1:PORT/v1` for both OpenAI APIs,
    /// `http://127.0.0.1:PORT/v1beta` for Gemini.
    pub fn base_url(&self) -> String {
        base_url_for(self.addr, self.api)
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<ReceivedRequest> {
        self.state.lock().expect("state lock").requests.clone()
    }

    /// How many turns of the script have been served.
    pub fn turns_served(&self) -> usize {
        self.state.lock().expect("state lock").served
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts a server for `script` on a free port of 127.0.0.1.
///
/// # Panics
/// If no port on 127.0.0.1 can be bound (the tests cannot run then).
pub async fn start(script: Script, api: ApiKind) -> ScriptedServer {
    start_from(script, api, 0).await
}

/// Starts a server whose first request gets turn `first_turn` of `script` (0-based), as if the
/// turns before had already been served: the live part of a re-recording, which replays the
/// first requests from a cassette and reaches the server mid-conversation. Tool-call ids stay
/// numbered across the whole script.
pub async fn start_from(script: Script, api: ApiKind, first_turn: usize) -> ScriptedServer {
    let state = Arc::new(Mutex::new(State {
        served: first_turn,
        ..State::default()
    }));
    let script = Arc::new(script);
    let (addr, task) = {
        let state = state.clone();
        serve("the scripted server", move |req| {
            handle(req, state.clone(), script.clone())
        })
        .await
    };
    ScriptedServer {
        addr,
        api,
        state,
        task,
    }
}

/// `http://ADDR` followed by the API's base path: nothing for Anthropic (whose paths start with
/// `/v1`), `/v1` for both OpenAI APIs, `/v1beta` for Gemini.
pub(super) fn base_url_for(addr: SocketAddr, api: ApiKind) -> String {
    format!("http://{addr}{}", api.wire().base_path())
}

/// Binds a free port of 127.0.0.1 and serves HTTP/1.1 there with `handler`, one task per
/// connection, until the returned task is aborted (which aborts every connection too).
///
/// # Panics
/// If no port can be bound; `server` names the server in the message.
pub(super) async fn serve<H, F>(
    server: &str,
    handler: H,
) -> (SocketAddr, tokio::task::JoinHandle<()>)
where
    H: Fn(Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: std::future::Future<Output = Result<Response<Body>, Infallible>> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("failed to bind a port on 127.0.0.1 for {server}: {e}"));
    let addr = listener.local_addr().expect("local address");
    let task = tokio::spawn(async move {
        // Dropping the set (when this task is aborted) aborts every connection.
        let mut connections = tokio::task::JoinSet::new();
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let handler = handler.clone();
            connections.spawn(async move {
                let service = hyper::service::service_fn(handler);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
            while connections.try_join_next().is_some() {}
        }
    });
    (addr, task)
}

/// Which API a request is for, by method and path (query ignored); `None` for anything else.
pub(super) fn route(method: &str, path: &str) -> Option<ApiKind> {
    let route = path.split('?').next().unwrap_or("");
    ApiKind::ALL
        .into_iter()
        .find(|api| api.wire().is_endpoint(method, route))
}

/// The model a request names: in the path for Gemini, else the body's `model`, else `default`.
pub(super) fn request_model(api: ApiKind, path: &str, body: &Value, default: &str) -> String {
    api.wire()
        .model_in_path(path.split('?').next().unwrap_or(""))
        .map(|(model, _)| model)
        .or_else(|| body["model"].as_str().map(str::to_owned))
        .unwrap_or_else(|| default.to_owned())
}

/// The SSE events of a complete reply to `turn` (the `turn_no`th of its conversation, its first
/// tool call numbered `first_call_no`) in `api`'s wire format: the turn as a neutral reply
/// (thinking, text, tool calls, in that order, without ids), rendered by the format, which mints
/// the ids. A raw stop reason is sent as it is; an `error_event` fault ends the stream with it.
pub(super) fn reply_events(
    api: ApiKind,
    turn: &Turn,
    turn_no: usize,
    first_call_no: usize,
    model: String,
    usage: ScriptedUsage,
) -> Vec<SseEvent> {
    let mut content = Vec::new();
    if let Some(thinking) = &turn.thinking {
        content.push(AssistantBlock::Thinking {
            thinking: thinking.clone(),
            signature: None,
            redacted: false,
        });
    }
    if let Some(text) = &turn.text {
        content.push(AssistantBlock::Text {
            text: text.clone(),
            signature: None,
        });
    }
    for call in &turn.tool_calls {
        content.push(AssistantBlock::ToolCall(ToolCall {
            id: String::new(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            thought_signature: None,
        }));
    }
    let (stop_reason, wire_stop_reason) = match turn.stop_reason.as_deref() {
        None if turn.tool_calls.is_empty() => (StopReason::Stop, None),
        None | Some("toolUse") => (StopReason::ToolUse, None),
        Some("stop") => (StopReason::Stop, None),
        Some("length") => (StopReason::Length, None),
        Some(raw) => (StopReason::Stop, Some(raw.to_owned())),
    };
    let reply = AssistantMessage {
        content,
        api: api.as_str().to_owned(),
        provider: "scripted".to_owned(),
        model,
        usage: Usage {
            input: usage.input,
            output: usage.output,
            cache_read: usage.cache_read,
            cache_write: usage.cache_write,
            total_tokens: usage.input + usage.output + usage.cache_read + usage.cache_write,
        },
        stop_reason,
        error_message: None,
        response_id: None,
    };
    let fault = turn.fault.as_ref();
    let options = RenderOptions {
        wire_stop_reason,
        stream_error: fault.and_then(|f| {
            Some(StreamError {
                message: f.error_event.clone()?,
                kind: f.error_type.clone(),
            })
        }),
        ..RenderOptions::new(turn_no, first_call_no)
    };
    api.wire().render_turn(&reply, &options)
}

pub(super) type Body = UnsyncBoxBody<Bytes, std::io::Error>;

pub(super) fn full(status: u16, content_type: &str, text: String) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(
            Full::new(Bytes::from(text))
                .map_err(|e| match e {})
                .boxed_unsync(),
        )
        .expect("valid response")
}

async fn handle(
    req: Request<Incoming>,
    state: Arc<Mutex<State>>,
    script: Arc<Script>,
) -> Result<Response<Body>, Infallible> {
    let method = req.method().as_str().to_owned();
    let path = req
        .uri()
        .path_and_query()
        .map_or("/".to_owned(), |p| p.as_str().to_owned());
    let headers: Vec<(String, String)> = req
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_lowercase(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let bytes = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return Ok(full(400, "text/plain", format!("unreadable body: {e}"))),
    };
    let body = serde_json::from_slice::<Value>(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    let routed =
        route(&method, &path).map(|api| (api, request_model(api, &path, &body, "scripted")));
    let (api, model, turn_no, prev_prompt) = {
        let mut st = state.lock().expect("state lock");
        st.requests.push(ReceivedRequest {
            method: method.clone(),
            path: path.clone(),
            headers,
            body,
        });
        let Some((api, model)) = routed else {
            return Ok(full(
                404,
                "text/plain",
                format!("no route for {method} {path}"),
            ));
        };
        let n = st.served;
        st.served += 1;
        let prev = st.prev_prompt_tokens;
        st.prev_prompt_tokens = bytes.len() as u64 / 4;
        (api, model, n, prev)
    };
    let Some(turn) = script.turns.get(turn_no) else {
        let message = format!(
            "scripted server: request {} has no turn left (the script has {} turns)",
            turn_no + 1,
            script.turns.len()
        );
        return Ok(full(
            400,
            "application/json",
            api.wire().render_error_body(400, &message),
        ));
    };
    let first_call_no = script.turns[..turn_no]
        .iter()
        .map(|t| t.tool_calls.len())
        .sum::<usize>()
        + 1;
    if let Some(fault) = &turn.fault {
        if let Some(status) = fault.status {
            let mut resp = full(
                status,
                "application/json",
                fault
                    .body
                    .clone()
                    .unwrap_or_else(|| api.wire().render_error_body(status, "scripted fault")),
            );
            if let Some(secs) = fault.retry_after {
                resp.headers_mut().insert(
                    "retry-after",
                    secs.to_string().parse().expect("valid header"),
                );
            }
            for (name, value) in &fault.headers {
                let name = hyper::header::HeaderName::from_bytes(name.as_bytes());
                let value = hyper::header::HeaderValue::from_str(value);
                if let (Ok(name), Ok(value)) = (name, value) {
                    resp.headers_mut().insert(name, value);
                }
            }
            return Ok(resp);
        }
    }
    let mut events = reply_events(
        api,
        turn,
        turn_no + 1,
        first_call_no,
        model,
        usage_for(turn, bytes.len() as u64 / 4, prev_prompt),
    );
    let mut ending = Ending::Complete;
    if let Some(fault) = &turn.fault {
        if let Some(n) = fault.cut_after_events {
            events.truncate(n);
            ending = Ending::Cut;
        } else if let Some(n) = fault.stall_after_events {
            events.truncate(n);
            ending = Ending::Stall;
        } else if let Some(n) = fault.end_after_events {
            events.truncate(n);
        }
    }
    Ok(sse_response(events, ending))
}

enum Ending {
    Complete,
    Cut,
    Stall,
}

fn sse_response(events: Vec<SseEvent>, ending: Ending) -> Response<Body> {
    let frames = futures::stream::iter(
        events
            .into_iter()
            .map(|e| Ok::<_, std::io::Error>(Frame::data(Bytes::from(encode_event(&e))))),
    );
    let body: futures::stream::BoxStream<'static, Result<Frame<Bytes>, std::io::Error>> =
        match ending {
            Ending::Complete => frames.boxed(),
            Ending::Cut => frames
                .chain(futures::stream::once(async {
                    // Let the events reach the client before the connection breaks.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    Err(std::io::Error::other("scripted stream cut"))
                }))
                .boxed(),
            Ending::Stall => frames.chain(futures::stream::pending()).boxed(),
        };
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(BodyExt::boxed_unsync(StreamBody::new(body)))
        .expect("valid response")
}

/// Deterministic usage: prompt = body bytes / 4; the previous request's prompt (capped) counts as
/// cache reads, a quarter of the rest as uncached input and the remainder as cache writes; output
/// = reply characters / 4 (at least 1).
fn usage_for(turn: &Turn, prompt: u64, prev_prompt: u64) -> ScriptedUsage {
    if let Some(u) = turn.usage {
        return u;
    }
    let reply_chars = turn.text.as_deref().map_or(0, |t| t.chars().count())
        + turn.thinking.as_deref().map_or(0, |t| t.chars().count())
        + turn
            .tool_calls
            .iter()
            .map(|c| c.name.len() + c.arguments.to_string().len())
            .sum::<usize>();
    let cache_read = prev_prompt.min(prompt);
    let fresh = prompt - cache_read;
    let input = (fresh / 4).max(1);
    ScriptedUsage {
        input,
        output: (reply_chars as u64 / 4).max(1),
        cache_read,
        cache_write: fresh.saturating_sub(input),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_every_api_and_reads_gemini_models_from_the_path() {
        let gemini = ApiKind::GoogleGenerativeAi;
        for (method, path, api) in [
            ("POST", "/v1/messages", Some(ApiKind::AnthropicMessages)),
            (
                "POST",
                "/chat/completions",
                Some(ApiKind::OpenaiCompletions),
            ),
            (
                "POST",
                "/v1/chat/completions",
                Some(ApiKind::OpenaiCompletions),
            ),
            ("POST", "/v1/responses?x=1", Some(ApiKind::OpenaiResponses)),
            (
                "POST",
                "/v1beta/models/g-2:streamGenerateContent?alt=sse",
                Some(gemini),
            ),
            ("POST", "/models/m:streamGenerateContent", Some(gemini)),
            ("POST", "/models/m:generateContent", None),
            ("POST", "/models/:streamGenerateContent", None),
            ("GET", "/v1/messages", None),
        ] {
            assert_eq!(route(method, path), api, "{method} {path}");
        }
        let body = json!({"model": "in-body"});
        let path = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse";
        assert_eq!(request_model(gemini, path, &body, "d"), "gemini-2.5-flash");
        let anthropic = ApiKind::AnthropicMessages;
        assert_eq!(
            request_model(anthropic, "/v1/messages", &body, "d"),
            "in-body"
        );
        assert_eq!(
            request_model(anthropic, "/v1/messages", &json!({}), "d"),
            "d"
        );
    }

    #[test]
    fn parses_the_documented_format() {
        let s = parse_script(
            "turns:\n  - text: hi\n    tool_calls:\n      - name: read\n        arguments: {path: a.txt}\n  - fault: {status: 429, retry_after: 1}\n",
            "t.yaml",
        )
        .unwrap();
        assert_eq!(s.turns.len(), 2);
        assert_eq!(s.turns[0].tool_calls[0].arguments, json!({"path": "a.txt"}));
        assert_eq!(s.turns[1].fault.as_ref().unwrap().retry_after, Some(1));
    }

    #[test]
    fn errors_name_the_file_and_turn() {
        let e = parse_script("turns:\n  - txt: hi\n", "tasks/x.yaml").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("failed to parse script tasks/x.yaml"),
            "{e}"
        );
        let e = parse_script(
            "turns:\n  - fault: {cut_after_events: 1, status: 500}\n",
            "s.yaml",
        )
        .unwrap_err();
        assert!(
            e.to_string().starts_with("invalid script s.yaml: turn 1"),
            "{e}"
        );
        let e = parse_script("turns:\n  - {}\n", "s.yaml").unwrap_err();
        assert!(e.to_string().contains("turn 1"), "{e}");
        let e = load_script("/nonexistent/script.yaml").unwrap_err();
        assert!(e.to_string().contains("/nonexistent/script.yaml"), "{e}");
    }

    #[test]
    fn loads_a_script_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("task.yaml");
        std::fs::write(&path, "turns:\n  - text: done\n    stop_reason: stop\n").unwrap();
        let s = load_script(&path).unwrap();
        assert_eq!(s.turns[0].text.as_deref(), Some("done"));
        std::fs::write(&path, "turns: [").unwrap();
        let e = load_script(&path).unwrap_err();
        assert!(e.to_string().contains(&path.display().to_string()), "{e}");
    }

    #[test]
    fn synthetic_usage_counts_the_previous_prompt_as_cached() {
        let t = Turn {
            text: Some("abcdefgh".into()),
            ..Turn::default()
        };
        let u = usage_for(&t, 100, 60);
        assert_eq!(u.cache_read, 60);
        assert_eq!(u.input + u.cache_write, 40);
        assert_eq!(u.output, 2);
    }
}
