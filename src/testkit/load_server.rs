//! A model server for load tests and throughput benchmarks: a real HTTP/1.1 server on
//! 127.0.0.1 that answers every `POST /v1/messages` (Anthropic SSE), `POST /chat/completions` or
//! `/v1/chat/completions` (OpenAI Chat SSE), `/responses` or `/v1/responses` (OpenAI Responses)
//! and `/v1beta/models/M:streamGenerateContent` (Gemini) with a complete, valid streamed reply,
//! in any number of conversations at once, and counts what it sees.
//!
//! Unlike the scripted server it keeps no script position: what it answers depends only on the
//! request itself. A conversation with fewer than `turns_per_run - 1` assistant messages gets a
//! tool call ([`LoadConfig::tool_call`]); otherwise it gets the final text-only reply, with
//! usage. So with the default `turns_per_run: 1` every run is exactly one model turn.
//!
//! A deterministic share of requests (by arrival number, see [`RateLimit`]) is answered `429`
//! with `retry-after` and/or `retry-after-ms` headers instead. The server counts requests, the
//! 429s it sent, the requests in flight now and the most ever in flight at once: a request is in
//! flight from when its headers arrive until the last chunk of its response body has been handed
//! to the connection (so the count never includes a request the client could already have
//! finished reading).
//!
//! Shares the replies with [`super::scripted_server`] (each wire format's own rendering); depends
//! on `providers` and on hyper. Nothing depends on it but tests and benchmarks.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Request, Response};
use serde_json::{Value, json};

use super::scripted_server::{
    Body, ScriptedToolCall, ScriptedUsage, Turn, base_url_for, full, reply_events, request_model,
    route, serve,
};
use crate::providers::ApiKind;
use crate::providers::sse::{SseEvent, encode_event};
use crate::providers::wire::{ParsedMessage, ParsedMessageKind};

/// Which requests are answered `429`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateLimit {
    /// None.
    Never,
    /// Every `k`th request (the `k`th, `2k`th, ... by arrival; `k = 0` means never).
    EveryNth(u64),
    /// A pseudo-random `share` (0.0 to 1.0) of requests: request number `n` is limited when a
    /// hash of `(seed, n)` falls below `share`, so the same arrivals always get the same answers.
    Share { share: f64, seed: u64 },
}

impl RateLimit {
    /// Whether request number `n` (1-based, by arrival) is answered `429`.
    pub fn limits(&self, n: u64) -> bool {
        match *self {
            RateLimit::Never => false,
            RateLimit::EveryNth(k) => k > 0 && n % k == 0,
            RateLimit::Share { share, seed } => {
                let unit = (splitmix64(seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15)) >> 11) as f64
                    / (1u64 << 53) as f64;
                unit < share
            }
        }
    }
}

/// One step of SplitMix64: a well-mixed 64-bit hash of `x`.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// How the load server answers.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadConfig {
    /// Wait this long (after reading the request) before answering, 429s included.
    pub delay: Duration,
    /// Which requests get `429`.
    pub rate_limit: RateLimit,
    /// `retry-after` (seconds) sent with each 429.
    pub retry_after_secs: Option<u64>,
    /// `retry-after-ms` sent with each 429.
    pub retry_after_ms: Option<u64>,
    /// Model turns per conversation: the last is the final text reply, the others call
    /// [`LoadConfig::tool_call`].
    pub turns_per_run: usize,
    /// The tool call of the turns before the last.
    pub tool_call: ScriptedToolCall,
    /// The text of the final reply.
    pub text: String,
}

impl Default for LoadConfig {
    fn default() -> Self {
        LoadConfig {
            delay: Duration::ZERO,
            rate_limit: RateLimit::Never,
            retry_after_secs: None,
            retry_after_ms: None,
            turns_per_run: 1,
            tool_call: ScriptedToolCall {
                name: "read".to_owned(),
                arguments: json!({"path": "README.md"}),
            },
            text: "Done.".to_owned(),
        }
    }
}

/// What the server has seen so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadStats {
    /// Requests received on any path.
    pub requests: u64,
    /// Requests answered `429`.
    pub rate_limited: u64,
    /// Replies streamed to the end (tool calls and final replies).
    pub completed: u64,
    /// Requests in flight now.
    pub in_flight: u64,
    /// The most requests ever in flight at once.
    pub max_in_flight: u64,
}

#[derive(Debug, Default)]
struct Counters {
    requests: AtomicU64,
    rate_limited: AtomicU64,
    completed: AtomicU64,
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
}

/// A request's place in flight; given back once (at the last chunk, or when dropped).
struct InFlight {
    counters: Arc<Counters>,
    released: AtomicBool,
}

impl InFlight {
    fn enter(counters: &Arc<Counters>) -> Self {
        let now = counters.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        counters.max_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight {
            counters: counters.clone(),
            released: AtomicBool::new(false),
        }
    }

    fn release(&self) {
        if !self.released.swap(true, Ordering::SeqCst) {
            self.counters.in_flight.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.release();
    }
}

/// A running load server; shut down when dropped.
pub struct LoadServer {
    addr: SocketAddr,
    counters: Arc<Counters>,
    task: tokio::task::JoinHandle<()>,
}

impl LoadServer {
    /// The base URL for a model of `api`: `http://127.0.0.1:PORT` for Anthropic,
    /// `http://127.0.0.1:PORT/v1` for both OpenAI APIs, `http://127.0.0.1:PORT/v1beta` for Gemini.
    pub fn base_url(&self, api: ApiKind) -> String {
        base_url_for(self.addr, api)
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The counts so far.
    pub fn stats(&self) -> LoadStats {
        let c = &self.counters;
        LoadStats {
            requests: c.requests.load(Ordering::SeqCst),
            rate_limited: c.rate_limited.load(Ordering::SeqCst),
            completed: c.completed.load(Ordering::SeqCst),
            in_flight: c.in_flight.load(Ordering::SeqCst),
            max_in_flight: c.max_in_flight.load(Ordering::SeqCst),
        }
    }
}

impl Drop for LoadServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The id of the task [`write_trivial_task`] writes.
pub const TRIVIAL_TASK_ID: &str = "load-trivial";

/// Writes a trivial task folder into `suite` (`load-trivial/task.yaml` and a `repo/` holding only
/// `README.md`, the file the default [`LoadConfig::tool_call`] reads): any answer passes, its
/// only check is the command `true`. Returns the task's folder.
pub fn write_trivial_task(suite: &Path) -> std::io::Result<PathBuf> {
    let dir = suite.join(TRIVIAL_TASK_ID);
    std::fs::create_dir_all(dir.join("repo"))?;
    std::fs::write(dir.join("repo/README.md"), "A tiny fixture.\n")?;
    std::fs::write(
        dir.join("task.yaml"),
        format!(
            "id: {TRIVIAL_TASK_ID}\nprompt: Say that you are done.\nchecks:\n  - name: always\n    run: \"true\"\n    expect_exit: 0\nlimits: {{turns: 50, wall_seconds: 300}}\n"
        ),
    )?;
    Ok(dir)
}

/// Starts a load server on a free port of 127.0.0.1.
///
/// # Panics
/// If no port on 127.0.0.1 can be bound (the tests cannot run then).
pub async fn start_load(config: LoadConfig) -> LoadServer {
    let counters = Arc::new(Counters::default());
    let config = Arc::new(config);
    let (addr, task) = {
        let counters = counters.clone();
        serve("the load server", move |req| {
            handle(req, counters.clone(), config.clone())
        })
        .await
    };
    LoadServer {
        addr,
        counters,
        task,
    }
}

async fn handle(
    req: Request<Incoming>,
    counters: Arc<Counters>,
    config: Arc<LoadConfig>,
) -> Result<Response<Body>, Infallible> {
    let guard = InFlight::enter(&counters);
    let n = counters.requests.fetch_add(1, Ordering::SeqCst) + 1;
    let method = req.method().as_str().to_owned();
    let path = req.uri().path().to_owned();
    let bytes = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return Ok(full(400, "text/plain", format!("unreadable body: {e}"))),
    };
    let Some(api) = route(&method, &path) else {
        return Ok(full(
            404,
            "text/plain",
            format!("no route for {method} {path}"),
        ));
    };
    if !config.delay.is_zero() {
        tokio::time::sleep(config.delay).await;
    }
    if config.rate_limit.limits(n) {
        counters.rate_limited.fetch_add(1, Ordering::SeqCst);
        let mut builder = Response::builder()
            .status(429)
            .header("content-type", "application/json");
        if let Some(secs) = config.retry_after_secs {
            builder = builder.header("retry-after", secs.to_string());
        }
        if let Some(ms) = config.retry_after_ms {
            builder = builder.header("retry-after-ms", ms.to_string());
        }
        let chunk = Bytes::from(
            api.wire()
                .render_error_body(429, "load server: rate limited"),
        );
        return Ok(builder
            .body(guarded(vec![chunk], guard, None))
            .expect("valid response"));
    }
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let model = request_model(api, &path, &body, "load");
    let earlier_turns = earlier_turns(api, &body);
    let chunks = next_turn(
        api,
        earlier_turns,
        config.turns_per_run,
        (&config.tool_call, &config.text),
        bytes.len(),
        model,
    )
    .iter()
    .map(|e| Bytes::from(encode_event(e)))
    .collect();
    Ok(Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(guarded(chunks, guard, Some(counters)))
        .expect("valid response"))
}

/// The reply of a conversation that has had `earlier` model turns of `turns` in all, in `api`'s
/// SSE events: a call of the tool call `answers.0` before the last turn, the text `answers.1` at
/// the last; the usage's input is a quarter of the request body's `body_len` bytes.
pub(super) fn next_turn(
    api: ApiKind,
    earlier: usize,
    turns: usize,
    answers: (&ScriptedToolCall, &str),
    body_len: usize,
    model: String,
) -> Vec<SseEvent> {
    let turn = if earlier + 1 < turns {
        Turn {
            tool_calls: vec![answers.0.clone()],
            ..Turn::default()
        }
    } else {
        Turn {
            text: Some(answers.1.to_owned()),
            ..Turn::default()
        }
    };
    let usage = ScriptedUsage {
        input: (body_len as u64 / 4).max(1),
        output: 2,
        cache_read: 0,
        cache_write: 0,
    };
    reply_events(api, &turn, earlier + 1, earlier + 1, model, usage)
}

/// How many model turns the conversation in `body` already has: its assistant messages, as the
/// API's format reads the request.
fn earlier_turns(api: ApiKind, body: &Value) -> usize {
    let request = api.wire().parse_request(body);
    let assistant = |m: &&ParsedMessage| matches!(m.kind, ParsedMessageKind::Assistant { .. });
    request.messages.iter().filter(assistant).count()
}

/// A body streaming `chunks` that leaves flight as its last chunk is handed over (counting a
/// completed reply in `completed`, if given), or when dropped early.
fn guarded(chunks: Vec<Bytes>, guard: InFlight, completed: Option<Arc<Counters>>) -> Body {
    let last = chunks.len().saturating_sub(1);
    if chunks.is_empty() {
        guard.release();
    }
    let frames = futures::stream::iter(chunks.into_iter().enumerate()).map(move |(i, chunk)| {
        if i == last {
            if let Some(counters) = &completed {
                counters.completed.fetch_add(1, Ordering::SeqCst);
            }
            guard.release();
        }
        Ok::<_, std::io::Error>(Frame::data(chunk))
    });
    BodyExt::boxed_unsync(StreamBody::new(frames))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limit_rules_are_deterministic() {
        let every = RateLimit::EveryNth(4);
        let hits: Vec<u64> = (1..=12).filter(|n| every.limits(*n)).collect();
        assert_eq!(hits, vec![4, 8, 12]);
        assert!(!(1..100).any(|n| RateLimit::EveryNth(0).limits(n)));
        assert!(!(1..100).any(|n| RateLimit::Never.limits(n)));
        let share = RateLimit::Share {
            share: 0.15,
            seed: 7,
        };
        let a: Vec<bool> = (1..=10_000).map(|n| share.limits(n)).collect();
        let b: Vec<bool> = (1..=10_000).map(|n| share.limits(n)).collect();
        assert_eq!(a, b, "same seed, same answers");
        let count = a.iter().filter(|x| **x).count();
        assert!((1300..1700).contains(&count), "about 15%: {count}");
        let other = RateLimit::Share {
            share: 0.15,
            seed: 8,
        };
        assert_ne!(a, (1..=10_000).map(|n| other.limits(n)).collect::<Vec<_>>());
    }

    async fn post(url: &str, body: Value) -> reqwest::Response {
        reqwest::Client::new()
            .post(url)
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn answers_both_formats_limits_every_fifth_and_counts() {
        let server = start_load(LoadConfig {
            rate_limit: RateLimit::EveryNth(5),
            retry_after_ms: Some(20),
            retry_after_secs: Some(0),
            ..LoadConfig::default()
        })
        .await;
        let anthropic = format!(
            "{}/v1/messages",
            server.base_url(ApiKind::AnthropicMessages)
        );
        let openai = format!(
            "{}/chat/completions",
            server.base_url(ApiKind::OpenaiCompletions)
        );
        let request = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});

        for (url, wants, last) in [
            (
                &anthropic,
                [
                    "\"text\":\"Done.\"",
                    "\"stop_reason\":\"end_turn\"",
                    "event: message_start\n",
                ],
                "data: {\"type\":\"message_stop\"}",
            ),
            (
                &openai,
                [
                    "\"content\":\"Done.\"",
                    "\"finish_reason\":\"stop\"",
                    "\"usage\":{\"prompt_tokens\"",
                ],
                "data: [DONE]",
            ),
            (
                &format!("{}/responses", server.base_url(ApiKind::OpenaiResponses)),
                [
                    "event: response.created\n",
                    "\"delta\":\"Done.\"",
                    "event: response.completed\n",
                ],
                "}",
            ),
            (
                &format!(
                    "{}/models/gem:streamGenerateContent?alt=sse",
                    server.base_url(ApiKind::GoogleGenerativeAi)
                ),
                [
                    "\"text\":\"Done.\"",
                    "\"finishReason\":\"STOP\"",
                    "\"usageMetadata\":",
                ],
                "}",
            ),
        ] {
            let r = post(url, request.clone()).await;
            assert_eq!(r.status(), 200);
            let text = r.text().await.unwrap();
            for want in wants {
                assert!(text.contains(want), "{want} in {text}");
            }
            assert!(text.trim_end().ends_with(last), "{text}");
        }

        let r = post(&openai, request).await;
        assert_eq!(r.status(), 429);
        assert_eq!(r.headers()["retry-after-ms"], "20");
        assert_eq!(r.headers()["retry-after"], "0");
        assert!(r.text().await.unwrap().contains("rate_limit_error"));

        let r = reqwest::get(format!("http://{}/nowhere", server.addr()))
            .await
            .unwrap();
        assert_eq!(r.status(), 404);
        assert_eq!(
            server.stats(),
            LoadStats {
                requests: 6,
                rate_limited: 1,
                completed: 4,
                in_flight: 0,
                max_in_flight: 1,
            }
        );
    }

    #[tokio::test]
    async fn calls_a_tool_until_the_last_turn_and_tracks_concurrency() {
        let server = start_load(LoadConfig {
            turns_per_run: 2,
            delay: Duration::from_millis(200),
            ..LoadConfig::default()
        })
        .await;
        let url = format!(
            "{}/v1/messages",
            server.base_url(ApiKind::AnthropicMessages)
        );
        let first = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
        let text = post(&url, first.clone()).await.text().await.unwrap();
        assert!(text.contains("\"type\":\"tool_use\""), "{text}");
        assert!(text.contains("\"stop_reason\":\"tool_use\""), "{text}");
        let second = json!({"model": "m", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": []},
            {"role": "user", "content": []}]});
        let text = post(&url, second).await.text().await.unwrap();
        assert!(text.contains("\"stop_reason\":\"end_turn\""), "{text}");

        // Five at once, each held 200 ms by the delay: all five are in flight together.
        let all = (0..5).map(|_| {
            let (url, body) = (url.clone(), first.clone());
            tokio::spawn(async move { post(&url, body).await.text().await.unwrap() })
        });
        for h in all.collect::<Vec<_>>() {
            h.await.unwrap();
        }
        let stats = server.stats();
        assert_eq!(stats.max_in_flight, 5, "{stats:?}");
        assert_eq!(stats.in_flight, 0, "{stats:?}");
        assert_eq!(stats.completed, 7, "{stats:?}");
    }
}
