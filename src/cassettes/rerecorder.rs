//! The re-recording transport (`--cassette-mode rerecord`): replays the matched prefix of a
//! cassette, goes live at the first request that differs from the recording, and records the
//! whole resulting conversation (the replayed prefix as recorded, then the live part) for a new
//! cassette that is written beside the old one for review.
//!
//! Built from a [`Player`] (strict: it stops matching at the first divergence) and a
//! [`Recorder`] over the live transport. Depends on those two and the transport seam only.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::player::{Divergence, Player};
use super::recorder::Recorder;
use crate::providers::transport::{HttpRequest, HttpResponse, Transport, TransportError};

/// Replays while the requests match, then records live. Cheap to clone (clones share state).
#[derive(Clone)]
pub struct Rerecorder {
    player: Player,
    recorder: Recorder,
    /// The 0-based index of the first request sent live, once the run has gone live.
    live_from: Arc<Mutex<Option<usize>>>,
}

impl Rerecorder {
    /// Replays from `player` (its policy must be the default, stop) and records everything,
    /// live or replayed, into `recorder`.
    pub fn new(player: Player, recorder: Recorder) -> Self {
        Rerecorder {
            player,
            recorder,
            live_from: Arc::new(Mutex::new(None)),
        }
    }

    /// The player of the recorded prefix.
    pub fn player(&self) -> &Player {
        &self.player
    }

    /// The recorder holding the new conversation.
    pub fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    /// Where the run went live: the first divergent request, if any.
    pub fn live_from(&self) -> Option<usize> {
        *self.live_from.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The divergence that sent the run live.
    pub fn divergence(&self) -> Option<Divergence> {
        self.player.divergence()
    }

    /// Whether the new conversation differs from the recorded one: it went live, or it ended
    /// before using every recorded interaction.
    pub fn changed(&self) -> bool {
        self.live_from().is_some() || self.player.unused_interactions() > 0
    }
}

#[async_trait]
impl Transport for Rerecorder {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        if self.live_from().is_none() {
            let index = self.player.served();
            match self.player.send(request.clone()).await {
                Ok(response) => {
                    let recorded = self.player.cassette().interactions[index].clone();
                    self.recorder.push_existing(recorded);
                    return Ok(response);
                }
                Err(e) if self.player.divergence().is_none() => return Err(e),
                Err(_) => {
                    *self.live_from.lock().unwrap_or_else(|e| e.into_inner()) = Some(index);
                }
            }
        }
        self.recorder.send(request).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassettes::format::{
        Cassette, CassetteHeader, Interaction, RecordedRequest, RecordedResponse, ResponseBody,
    };
    use crate::cassettes::normalize::PathMap;
    use crate::providers::ApiKind;
    use bytes::Bytes;
    use futures::StreamExt;
    use serde_json::{Value, json};
    use std::collections::BTreeMap;
    use std::path::Path;

    /// A live transport that answers `{"live": <n>}` to the n-th request it gets.
    #[derive(Default)]
    struct Live(Mutex<u32>);

    #[async_trait]
    impl Transport for Live {
        async fn send(&self, _request: HttpRequest) -> Result<HttpResponse, TransportError> {
            let mut n = self.0.lock().unwrap();
            *n += 1;
            let body = Bytes::from(json!({"live": *n}).to_string());
            Ok(HttpResponse {
                status: 200,
                headers: vec![("content-type".into(), "application/json".into())],
                body: Box::pin(futures::stream::iter(vec![Ok(body)])),
            })
        }
    }

    fn cassette() -> Cassette {
        let it = |text: &str, answer: u32| Interaction {
            request: RecordedRequest {
                method: "POST".into(),
                path: "/v1/messages".into(),
                headers: BTreeMap::new(),
                body: json!({"messages": [text]}),
            },
            response: RecordedResponse {
                status: 200,
                headers: BTreeMap::new(),
                body: ResponseBody::Json {
                    json: json!({"recorded": answer}),
                },
            },
        };
        Cassette {
            header: CassetteHeader::new(
                "t",
                "anthropic",
                "m",
                ApiKind::AnthropicMessages,
                "pi",
                "pi",
            ),
            interactions: vec![it("one", 1), it("two", 2), it("three", 3)],
        }
    }

    fn request(text: &str) -> HttpRequest {
        HttpRequest {
            method: "POST".into(),
            url: "http://127.0.0.1:1/v1/messages".into(),
            headers: vec![],
            body: json!({"messages": [text]}),
        }
    }

    async fn answer(t: &Rerecorder, text: &str) -> Value {
        let mut body = t.send(request(text)).await.unwrap().body;
        let mut out = Vec::new();
        while let Some(chunk) = body.next().await {
            out.extend_from_slice(&chunk.unwrap());
        }
        serde_json::from_slice(&out).unwrap()
    }

    fn rerecorder() -> Rerecorder {
        let paths = PathMap::new().with(Path::new("/tmp/ws"), "/workspace");
        let player = Player::from_cassette(cassette(), Path::new("c.yaml"), vec![], paths.clone());
        let recorder = Recorder::new(Arc::new(Live::default()), paths, vec![]);
        Rerecorder::new(player, recorder)
    }

    #[tokio::test]
    async fn replays_the_matched_prefix_then_goes_live_and_records_everything() {
        let t = rerecorder();
        assert_eq!(answer(&t, "one").await, json!({"recorded": 1}));
        assert_eq!(t.live_from(), None);
        assert_eq!(answer(&t, "TWO").await, json!({"live": 1}));
        assert_eq!(t.live_from(), Some(1));
        // Once live, it stays live even when a request matches the recording again.
        assert_eq!(answer(&t, "three").await, json!({"live": 2}));
        assert!(t.changed());
        let new = t.recorder().cassette(cassette().header);
        let bodies: Vec<&Value> = new.interactions.iter().map(|i| &i.request.body).collect();
        assert_eq!(
            bodies,
            vec![
                &json!({"messages": ["one"]}),
                &json!({"messages": ["TWO"]}),
                &json!({"messages": ["three"]})
            ]
        );
        assert_eq!(
            new.interactions[0].response.body,
            ResponseBody::Json {
                json: json!({"recorded": 1})
            }
        );
        assert_eq!(
            new.interactions[2].response.body,
            ResponseBody::Json {
                json: json!({"live": 2})
            }
        );
    }

    #[tokio::test]
    async fn a_clean_replay_changes_nothing() {
        let t = rerecorder();
        for text in ["one", "two", "three"] {
            answer(&t, text).await;
        }
        assert!(!t.changed());
        assert_eq!(t.recorder().len(), 3);
    }

    #[tokio::test]
    async fn a_shorter_run_is_a_change() {
        let t = rerecorder();
        answer(&t, "one").await;
        assert!(t.changed(), "two recorded interactions were never used");
    }
}
