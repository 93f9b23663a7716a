//! The replaying transport: serves interaction N for request N from a cassette, after checking
//! that the request the harness builds now matches the recorded one. A mismatch is a structured
//! [`Divergence`] (which request, the first differing path, a short diff), never a bare miss.
//!
//! Depends on the transport seam, the cassette format and the comparison helpers.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use bytes::Bytes;
use serde_json::{Value, json};

use super::CassetteError;
use super::format::{
    Cassette, Interaction, REQUEST_HEADERS, ResponseBody, StreamEnd, filter_headers,
};
use super::normalize::{
    PathMap, Rules, apply_rules, divergence_diff, first_difference, map_strings,
};
use super::sse_capture::{RawEvent, encode};
use crate::providers::transport::{
    BodyStream, HttpRequest, HttpResponse, Transport, TransportError,
};

/// Where a replayed run stopped matching its cassette.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// 0-based index of the request that differed (or the first request past the end).
    pub interaction: usize,
    /// How many interactions the cassette has.
    pub total: usize,
    /// The first differing part: `body.messages[4].content[0].content`, `method`, `path`,
    /// `headers.anthropic-beta`, or `request count`.
    pub what: String,
    /// A short unified diff of the two normalised requests (empty for an extra request).
    pub diff: String,
}

impl Divergence {
    /// One line: `request 3 of 7 differs from the cassette at body.messages[4]...`.
    pub fn summary(&self) -> String {
        if self.interaction >= self.total {
            format!(
                "the run made more requests than the cassette has ({}): request {} has no recording",
                self.total,
                self.interaction + 1
            )
        } else {
            format!(
                "request {} of {} differs from the cassette at {}",
                self.interaction + 1,
                self.total,
                self.what
            )
        }
    }
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.summary())?;
        if !self.diff.is_empty() {
            write!(f, "\n{}", self.diff.trim_end())?;
        }
        Ok(())
    }
}

/// What a replay does when a request differs from the recorded one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum OnDivergence {
    /// Stop the run at the first request that differs (strict; the run is `diverged`).
    #[default]
    Stop,
    /// Answer every request with its recorded response even when the request differs, as long
    /// as the conversation lines up (a request past the end of the cassette still stops it):
    /// the model's recorded actions run against today's tools, and the run gets its real
    /// outcome together with its divergences.
    Continue,
}

/// A request that differed from its recording: both sides normalised (placeholders and rules
/// applied), as `{method, path, headers, body}`, for classifying what changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// 0-based request index.
    pub interaction: usize,
    pub recorded: Value,
    pub now: Value,
}

/// Answers requests from a cassette. Cheap to clone: clones share the position and the
/// divergence, so keep one clone to ask [`Player::divergence`] while the provider holds another.
#[derive(Clone)]
pub struct Player {
    shared: Arc<Shared>,
}

struct Shared {
    path: PathBuf,
    cassette: Cassette,
    rules: Rules,
    paths: PathMap,
    policy: OnDivergence,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    next: usize,
    /// The first divergence (the one a `stop` replay stopped at).
    divergence: Option<Divergence>,
    /// Every request that differed, in order.
    mismatches: Vec<Mismatch>,
    /// The index of a request made past the end of the cassette, if any.
    extra_request: Option<usize>,
}

impl Player {
    /// Loads `path`. `rules` are the normalisation rules applied to both sides; `paths` maps
    /// this run's host paths (the workspace, bash's output folder) to the cassette's
    /// placeholders, compared as the placeholder and substituted back in served responses.
    pub fn load(
        path: &Path,
        rules: impl Into<Rules>,
        paths: PathMap,
    ) -> Result<Player, CassetteError> {
        let cassette = Cassette::load(path)?;
        Ok(Player::from_cassette(cassette, path, rules, paths))
    }

    /// A player over an in-memory cassette (`path` names it in messages).
    pub fn from_cassette(
        cassette: Cassette,
        path: &Path,
        rules: impl Into<Rules>,
        paths: PathMap,
    ) -> Player {
        Player {
            shared: Arc::new(Shared {
                path: path.to_owned(),
                cassette,
                rules: rules.into(),
                paths,
                policy: OnDivergence::Stop,
                state: Mutex::new(State::default()),
            }),
        }
    }

    /// The same player with another divergence policy (call before the first request).
    pub fn with_policy(self, policy: OnDivergence) -> Player {
        let shared = Arc::try_unwrap(self.shared).unwrap_or_else(|shared| Shared {
            path: shared.path.clone(),
            cassette: shared.cassette.clone(),
            rules: shared.rules.clone(),
            paths: shared.paths.clone(),
            policy: shared.policy,
            state: Mutex::new(State::default()),
        });
        Player {
            shared: Arc::new(Shared { policy, ..shared }),
        }
    }

    /// What the player does when a request differs.
    pub fn policy(&self) -> OnDivergence {
        self.shared.policy
    }

    /// The cassette being replayed.
    pub fn cassette(&self) -> &Cassette {
        &self.shared.cassette
    }

    /// The file being replayed.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// The first divergence, if the run stopped matching.
    pub fn divergence(&self) -> Option<Divergence> {
        self.lock().divergence.clone()
    }

    /// Every request that differed from its recording, in order.
    pub fn mismatches(&self) -> Vec<Mismatch> {
        self.lock().mismatches.clone()
    }

    /// The index of the request made past the end of the cassette, if the run made one.
    pub fn extra_request(&self) -> Option<usize> {
        self.lock().extra_request
    }

    /// Recorded interactions not (yet) served: more than zero after a finished run means the
    /// run made fewer requests than recorded.
    pub fn unused_interactions(&self) -> usize {
        let s = self.lock();
        self.shared
            .cassette
            .interactions
            .len()
            .saturating_sub(s.next)
    }

    /// How many requests have been served.
    pub fn served(&self) -> usize {
        self.lock().next
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Shared {
    fn normalise(&self, v: &mut Value, from_live: bool) {
        map_strings(v, &|s| {
            if from_live {
                apply_rules(&self.paths.to_placeholders(s), &self.rules)
            } else {
                apply_rules(s, &self.rules)
            }
        });
    }

    fn request_value(
        &self,
        method: &str,
        path: &str,
        headers: &Value,
        body: &Value,
        from_live: bool,
    ) -> Value {
        let mut v = json!({"method": method, "path": path, "headers": headers, "body": body});
        self.normalise(&mut v, from_live);
        v
    }

    /// `None` if `request` matches interaction `index`, else the divergence and, for a recorded
    /// interaction, both normalised sides.
    fn compare(
        &self,
        index: usize,
        request: &HttpRequest,
    ) -> Option<(Divergence, Option<Mismatch>)> {
        let total = self.cassette.interactions.len();
        let Some(recorded) = self.cassette.interactions.get(index) else {
            return Some((
                Divergence {
                    interaction: index,
                    total,
                    what: "request count".to_owned(),
                    diff: String::new(),
                },
                None,
            ));
        };
        let r = &recorded.request;
        let old = self.request_value(&r.method, &r.path, &json!(r.headers), &r.body, false);
        let headers = filter_headers(&request.headers, REQUEST_HEADERS);
        let new = self.request_value(
            &request.method,
            &request.path(),
            &json!(headers),
            &request.body,
            true,
        );
        let what = first_difference(&old, &new, "")?;
        let what = what.trim_start_matches('.').to_owned();
        let divergence = Divergence {
            interaction: index,
            total,
            diff: divergence_diff(&old, &new, &what),
            what,
        };
        Some((
            divergence,
            Some(Mismatch {
                interaction: index,
                recorded: old,
                now: new,
            }),
        ))
    }

    /// The recorded response with the placeholder turned back into this run's workspace path,
    /// so recorded tool calls name real files.
    fn restore(&self, s: &str) -> String {
        self.paths.to_host(s)
    }

    fn restore_value(&self, v: &Value) -> Value {
        let mut v = v.clone();
        map_strings(&mut v, &|s| self.restore(s));
        v
    }

    fn response(&self, it: &Interaction) -> HttpResponse {
        let resp = &it.response;
        let mut headers: Vec<(String, String)> = resp
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut chunks: Vec<Result<Bytes, TransportError>> = Vec::new();
        match &resp.body {
            ResponseBody::Json { json } => {
                if !resp.headers.contains_key("content-type") {
                    headers.push(("content-type".into(), "application/json".into()));
                }
                let text = serde_json::to_string(&self.restore_value(json)).unwrap_or_default();
                chunks.push(Ok(Bytes::from(text)));
            }
            ResponseBody::Text { text, error } => {
                if !text.is_empty() {
                    chunks.push(Ok(Bytes::from(self.restore(text))));
                }
                if let Some(e) = error {
                    chunks.push(Err(TransportError::Body(e.clone())));
                }
            }
            ResponseBody::Sse { events, end, error } => {
                if !resp.headers.contains_key("content-type") {
                    headers.push(("content-type".into(), "text/event-stream".into()));
                }
                for e in events {
                    let data = match (&e.data, &e.text) {
                        (Some(v), _) => {
                            serde_json::to_string(&self.restore_value(v)).unwrap_or_default()
                        }
                        (None, Some(t)) => self.restore(t),
                        (None, None) => String::new(),
                    };
                    let raw = RawEvent {
                        event: e.event.clone(),
                        data,
                        id: e.id.clone(),
                        retry: e.retry.clone(),
                    };
                    chunks.push(Ok(Bytes::from(encode(&raw))));
                }
                match end {
                    StreamEnd::Cut => {
                        let e = error
                            .clone()
                            .unwrap_or_else(|| "stream cut (recorded)".to_owned());
                        chunks.push(Err(TransportError::Body(e)));
                    }
                    // The recording's client stopped reading here: its user interrupted.
                    StreamEnd::Abandoned => chunks.push(Err(TransportError::Interrupted(
                        "the recording stopped reading the reply here".to_owned(),
                    ))),
                    _ => {}
                }
            }
        }
        HttpResponse {
            status: resp.status,
            headers,
            body: Box::pin(futures::stream::iter(chunks)) as BodyStream,
        }
    }
}

#[async_trait]
impl Transport for Player {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        let shared = &self.shared;
        let mut state = self.lock();
        if shared.policy == OnDivergence::Stop
            && let Some(d) = &state.divergence
        {
            return Err(TransportError::Cassette(format!(
                "cassette `{}` already diverged: {}",
                shared.path.display(),
                d.summary()
            )));
        }
        let index = state.next;
        if let Some((d, mismatch)) = shared.compare(index, &request) {
            let msg = format!("cassette `{}`: {d}", shared.path.display());
            let past_the_end = mismatch.is_none();
            if past_the_end {
                state.extra_request = Some(index);
            }
            state.mismatches.extend(mismatch);
            state.divergence.get_or_insert(d);
            if shared.policy == OnDivergence::Stop || past_the_end {
                return Err(TransportError::Cassette(msg));
            }
        }
        state.next += 1;
        drop(state);
        Ok(shared.response(&shared.cassette.interactions[index]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassettes::format::{
        CassetteHeader, REQUEST_HEADERS, RecordedEvent, RecordedRequest, RecordedResponse,
        filter_headers,
    };
    use crate::cassettes::normalize::NormalizeRule;
    use crate::providers::ApiKind;
    use futures::StreamExt;
    use std::collections::BTreeMap;

    fn cassette() -> Cassette {
        let req = |text: &str| RecordedRequest {
            method: "POST".into(),
            path: "/v1/messages".into(),
            headers: BTreeMap::from([("content-type".into(), "application/json".into())]),
            body: json!({"model": "m", "messages": [{"role": "user", "content": text}]}),
        };
        Cassette {
            header: CassetteHeader::new(
                "t",
                "anthropic",
                "m",
                ApiKind::AnthropicMessages,
                "pi",
                "replace",
            ),
            interactions: vec![
                Interaction {
                    request: req("read /workspace/a.txt at 2026-01-01"),
                    response: RecordedResponse {
                        status: 200,
                        headers: BTreeMap::new(),
                        body: ResponseBody::Sse {
                            events: vec![RecordedEvent {
                                event: Some("x".into()),
                                data: Some(json!({"path": "/workspace/a.txt"})),
                                text: None,
                                id: None,
                                retry: None,
                            }],
                            end: StreamEnd::Cut,
                            error: Some("reset by peer".into()),
                        },
                    },
                },
                Interaction {
                    request: req("second"),
                    response: RecordedResponse {
                        status: 200,
                        headers: BTreeMap::new(),
                        body: ResponseBody::Json {
                            json: json!({"ok": true}),
                        },
                    },
                },
            ],
        }
    }

    fn request(text: &str) -> HttpRequest {
        HttpRequest {
            method: "POST".into(),
            url: "https://api.example.com/v1/messages".into(),
            headers: vec![
                ("content-type".into(), "application/json".into()),
                ("x-api-key".into(), "k".into()),
            ],
            body: json!({"messages": [{"content": text, "role": "user"}], "model": "m"}),
        }
    }

    fn ws(path: &str) -> PathMap {
        PathMap::new().with(Path::new(path), "/workspace")
    }

    async fn collect(resp: HttpResponse) -> (String, Option<TransportError>) {
        let mut s = resp.body;
        let mut out = Vec::new();
        while let Some(c) = s.next().await {
            match c {
                Ok(b) => out.extend_from_slice(&b),
                Err(e) => return (String::from_utf8(out).unwrap(), Some(e)),
            }
        }
        (String::from_utf8(out).unwrap(), None)
    }

    #[tokio::test]
    async fn serves_in_order_with_workspace_and_rules_normalised() {
        let rules = vec![NormalizeRule::new(r"\d{4}-\d{2}-\d{2}", "<date>").unwrap()];
        let p = Player::from_cassette(cassette(), Path::new("c.yaml"), rules, ws("/tmp/run-42"));
        let resp = p
            .send(request("read /tmp/run-42/a.txt at 2026-11-30"))
            .await
            .unwrap();
        let (body, err) = collect(resp).await;
        assert_eq!(body, "event: x\ndata: {\"path\":\"/tmp/run-42/a.txt\"}\n\n");
        assert_eq!(err, Some(TransportError::Body("reset by peer".into())));
        assert_eq!(p.unused_interactions(), 1);
        let (body, err) = collect(p.send(request("second")).await.unwrap()).await;
        assert_eq!((body.as_str(), err), ("{\"ok\":true}", None));
        assert_eq!(p.unused_interactions(), 0);
        assert_eq!(p.divergence(), None);

        let err = p.send(request("third")).await.err().unwrap();
        let d = p.divergence().unwrap();
        assert_eq!((d.interaction, d.what.as_str()), (2, "request count"));
        assert!(
            err.to_string()
                .contains("more requests than the cassette has (2)"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn divergence_names_the_request_path_and_diff() {
        let p = Player::from_cassette(cassette(), Path::new("c.yaml"), vec![], ws("/tmp/run-42"));
        let err = p
            .send(request("read /tmp/run-42/a.txt at 2026-11-30"))
            .await
            .err()
            .unwrap();
        let d = p.divergence().unwrap();
        assert_eq!(d.interaction, 0);
        assert_eq!(d.what, "body.messages[0].content");
        assert!(
            d.diff
                .contains("-        \"content\": \"read /workspace/a.txt at 2026-01-01\","),
            "{}",
            d.diff
        );
        assert!(
            d.diff
                .contains("+        \"content\": \"read /workspace/a.txt at 2026-11-30\","),
            "{}",
            d.diff
        );
        let msg = err.to_string();
        assert!(
            msg.contains("request 1 of 2 differs from the cassette at body.messages[0].content"),
            "{msg}"
        );
        // Later requests fail too, and the first divergence is kept.
        assert!(p.send(request("second")).await.is_err());
        assert_eq!(p.divergence().unwrap().interaction, 0);
    }

    #[tokio::test]
    async fn method_and_path_must_match() {
        let p = Player::from_cassette(cassette(), Path::new("c.yaml"), vec![], ws("/w2"));
        let mut r = request("x");
        r.url = "https://api.example.com/v1/other".into();
        p.send(r).await.err().unwrap();
        assert_eq!(p.divergence().unwrap().what, "path");
    }

    #[test]
    fn missing_file_hint_comes_from_the_path() {
        let err = Player::load(
            Path::new("/nonexistent/fix-bug/anthropic--claude-x.yaml"),
            vec![],
            ws("/w"),
        )
        .err()
        .unwrap();
        assert!(
            err.to_string()
                .contains("--task fix-bug --cassette-mode record --model anthropic/claude-x"),
            "{err}"
        );
    }

    /// A reply rendered by each wire format, kept as a cassette would be written from it (a YAML
    /// file, read back), replays byte for byte through the player and reads back to the reply.
    #[tokio::test]
    async fn a_rendered_reply_replays_through_the_player_in_every_format() {
        use crate::conversation::{
            AssistantBlock, AssistantMessage, Context, Message, StopReason, ToolCall, Usage,
            UserContent,
        };
        use crate::providers::wire::RenderOptions;
        use crate::providers::{ModelSpec, ProviderSettings, RequestOptions, sse};

        for api in ApiKind::ALL {
            let spec = ModelSpec {
                provider: "p".into(),
                api,
                model: "m".into(),
                base_url: format!("https://api.example.com{}", api.wire().base_path()),
                api_key: Some("k".into()),
                headers: Vec::new(),
            };
            let context = Context {
                system_prompt: Some("Be brief.".into()),
                messages: vec![Message::User {
                    content: UserContent::Text("List the files.".into()),
                }],
                tools: Vec::new(),
            };
            let turn = AssistantMessage {
                content: vec![
                    AssistantBlock::Text {
                        text: "Listing the files of the workspace now.".into(),
                        signature: None,
                    },
                    AssistantBlock::ToolCall(ToolCall {
                        id: String::new(),
                        name: "ls".into(),
                        arguments: json!({"path": "src", "limit": 50}),
                        thought_signature: None,
                    }),
                ],
                api: api.as_str().into(),
                provider: "p".into(),
                model: "m".into(),
                usage: Usage {
                    input: 90,
                    output: 12,
                    cache_read: 30,
                    cache_write: 0,
                    total_tokens: 132,
                },
                stop_reason: StopReason::ToolUse,
                error_message: None,
                response_id: None,
            };
            let events = api.wire().render_turn(&turn, &RenderOptions::new(1, 1));
            let settings = ProviderSettings::default();
            let request =
                api.wire()
                    .build_request(&spec, &context, &RequestOptions::default(), &settings);
            let mut cassette = cassette();
            cassette.header = CassetteHeader::new("t", "p", "m", api, "pi", "replace");
            cassette.interactions = vec![Interaction {
                request: RecordedRequest {
                    method: request.method.clone(),
                    path: request.path(),
                    headers: filter_headers(&request.headers, REQUEST_HEADERS),
                    body: request.body.clone(),
                },
                response: RecordedResponse::event_stream(&events),
            }];
            let yaml = cassette.to_yaml().unwrap();
            let cassette = Cassette::from_yaml(&yaml, Path::new("c.yaml")).unwrap();

            let player =
                Player::from_cassette(cassette.clone(), Path::new("c.yaml"), vec![], ws("/w"));
            let (body, err) = collect(player.send(request).await.unwrap()).await;
            assert_eq!(
                (body.as_bytes(), err),
                (&sse::encode(&events)[..], None),
                "{api:?}"
            );

            let player = Player::from_cassette(cassette, Path::new("c.yaml"), vec![], ws("/w"));
            let provider = api
                .wire()
                .provider(spec, Arc::new(player.clone()), &settings);
            let reply = provider
                .complete(&context, &RequestOptions::default())
                .await
                .unwrap();
            assert_eq!(player.divergence(), None, "{api:?}");
            assert_eq!(reply.text(), turn.text(), "{api:?}");
            let calls: Vec<_> = reply
                .tool_calls()
                .map(|c| (&c.name, &c.arguments))
                .collect();
            let given: Vec<_> = turn.tool_calls().map(|c| (&c.name, &c.arguments)).collect();
            assert_eq!(calls, given, "{api:?}");
            assert!(reply.tool_calls().all(|c| !c.id.is_empty()), "{api:?}");
            assert_eq!(
                (reply.usage, reply.stop_reason),
                (turn.usage, turn.stop_reason),
                "{api:?}"
            );
        }
    }
}
