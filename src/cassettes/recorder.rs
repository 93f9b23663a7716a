//! The recording transport: sends through the live transport, forwards every byte unchanged,
//! and keeps a structured copy (SSE parsed into events as it passes) to write as a cassette.
//!
//! Depends on the transport seam, the cassette format and the secret scan; never on a provider.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use async_trait::async_trait;
use bytes::Bytes;
use futures::Stream;
use serde_json::Value;

use super::format::{
    Cassette, CassetteHeader, Interaction, REQUEST_HEADERS, RESPONSE_HEADERS, RecordedEvent,
    RecordedRequest, RecordedResponse, ResponseBody, StreamEnd, filter_headers,
};
use super::normalize::{PathMap, map_strings};
use super::sse_capture::{RawEvent, SseCapture};
use super::{CassetteError, secrets};
use crate::providers::transport::{
    BodyStream, HttpRequest, HttpResponse, Transport, TransportError,
};

/// Records every interaction that passes through it. Cheap to clone: clones share the recording,
/// so keep one clone to call [`Recorder::finish`] while the provider holds another.
#[derive(Clone)]
pub struct Recorder {
    inner: Arc<dyn Transport>,
    shared: Arc<Shared>,
}

struct Shared {
    /// The host paths to replace by placeholders (the workspace, bash's output folder).
    paths: PathMap,
    placeholder: String,
    secrets: Vec<String>,
    slots: Mutex<Vec<Slot>>,
}

struct Slot {
    request: RecordedRequest,
    response: Option<PendingResponse>,
}

struct PendingResponse {
    status: u16,
    headers: BTreeMap<String, String>,
    /// `Some` once the body has ended (or been dropped).
    body: Option<ResponseBody>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Vec<Slot>> {
        // A panic while holding the lock leaves the data usable for our purposes.
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn scrub_str(&self, s: &str) -> String {
        self.paths.to_placeholders(s)
    }

    fn scrub(&self, v: &mut Value) {
        map_strings(v, &|s| self.scrub_str(s));
    }
}

impl Recorder {
    /// Records through `inner`. `paths` maps this run's host paths to the placeholders written
    /// instead (the workspace to [`super::WORKSPACE_PLACEHOLDER`], bash's output folder to
    /// [`super::format::BASH_OUTPUT_DIR_PLACEHOLDER`]); `secrets` are the key values in use, refused
    /// by [`Recorder::finish`].
    pub fn new(inner: Arc<dyn Transport>, paths: PathMap, secrets: Vec<String>) -> Self {
        Recorder {
            inner,
            shared: Arc::new(Shared {
                paths,
                placeholder: super::WORKSPACE_PLACEHOLDER.to_owned(),
                secrets,
                slots: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Adds an interaction that was not sent through this recorder (already in placeholder form:
    /// the replayed prefix of a re-recording).
    pub fn push_existing(&self, interaction: Interaction) {
        let Interaction { request, response } = interaction;
        self.shared.lock().push(Slot {
            request,
            response: Some(PendingResponse {
                status: response.status,
                headers: response.headers,
                body: Some(response.body),
            }),
        });
    }

    /// The key values this recorder refuses to write.
    pub fn secrets(&self) -> Vec<String> {
        self.shared.secrets.clone()
    }

    /// How many requests have been recorded so far.
    pub fn len(&self) -> usize {
        self.shared.lock().len()
    }

    /// Whether nothing has been recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The cassette recorded so far (bodies still streaming count as abandoned).
    pub fn cassette(&self, mut header: CassetteHeader) -> Cassette {
        header.workspace_placeholder = self.shared.placeholder.clone();
        let slots = self.shared.lock();
        let interactions = slots
            .iter()
            .filter_map(|slot| {
                let resp = slot.response.as_ref()?;
                let body = resp.body.clone().unwrap_or(ResponseBody::Sse {
                    events: Vec::new(),
                    end: StreamEnd::Abandoned,
                    error: None,
                });
                Some(Interaction {
                    request: slot.request.clone(),
                    response: RecordedResponse {
                        status: resp.status,
                        headers: resp.headers.clone(),
                        body,
                    },
                })
            })
            .collect();
        Cassette {
            header,
            interactions,
        }
    }

    /// Scans the recording for secrets and writes it to `path` atomically (a temporary file in
    /// the same directory, then a rename). On a secret, nothing is written and any existing
    /// file is kept. Requests that got no response (connection failures) are not written.
    pub fn finish(&self, header: CassetteHeader, path: &Path) -> Result<PathBuf, CassetteError> {
        let cassette = self.cassette(header);
        write_cassette(&cassette, path, &self.shared.secrets)?;
        Ok(path.to_owned())
    }
}

/// Serialises, scans for secrets and writes atomically. Public for tools that rewrite cassettes.
pub fn write_cassette(
    cassette: &Cassette,
    path: &Path,
    secrets: &[String],
) -> Result<(), CassetteError> {
    let yaml = cassette.to_yaml().map_err(|e| CassetteError::Serialize {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    let findings = secrets::scan_cassette(cassette, &yaml, secrets);
    if !findings.is_empty() {
        return Err(CassetteError::Secret {
            path: path.to_owned(),
            findings,
        });
    }
    let io = |action, source| CassetteError::Io {
        action,
        path: path.to_owned(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|e| io("create the directory of", e))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".cassette-")
        .suffix(".yaml.tmp")
        .tempfile_in(&dir)
        .map_err(|e| io("create a temporary file for", e))?;
    std::io::Write::write_all(&mut tmp, yaml.as_bytes()).map_err(|e| io("write", e))?;
    tmp.as_file().sync_all().map_err(|e| io("sync", e))?;
    tmp.persist(path)
        .map_err(|e| io("rename into place", e.error))?;
    Ok(())
}

#[async_trait]
impl Transport for Recorder {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        let mut body = request.body.clone();
        self.shared.scrub(&mut body);
        let recorded = RecordedRequest {
            method: request.method.clone(),
            path: self.shared.scrub_str(&request.path()),
            headers: filter_headers(&request.headers, REQUEST_HEADERS),
            body,
        };
        let index = {
            let mut slots = self.shared.lock();
            slots.push(Slot {
                request: recorded,
                response: None,
            });
            slots.len() - 1
        };
        let response = self.inner.send(request).await?;
        let is_sse = response
            .header("content-type")
            .is_some_and(|c| c.trim_start().starts_with("text/event-stream"));
        self.shared.lock()[index].response = Some(PendingResponse {
            status: response.status,
            headers: filter_headers(&response.headers, RESPONSE_HEADERS),
            body: None,
        });
        let tee = Tee {
            inner: response.body,
            shared: self.shared.clone(),
            index,
            capture: if is_sse {
                Capture::Sse(SseCapture::new(), Vec::new())
            } else {
                Capture::Raw(Vec::new())
            },
            done: false,
        };
        Ok(HttpResponse {
            status: response.status,
            headers: response.headers,
            body: Box::pin(tee) as BodyStream,
        })
    }
}

enum Capture {
    Sse(SseCapture, Vec<RawEvent>),
    Raw(Vec<u8>),
}

/// Forwards the body unchanged and captures it; stores the result when the body ends, breaks
/// or is dropped.
struct Tee {
    inner: BodyStream,
    shared: Arc<Shared>,
    index: usize,
    capture: Capture,
    done: bool,
}

impl Tee {
    fn finalize(&mut self, end: StreamEnd, error: Option<String>) {
        if self.done {
            return;
        }
        self.done = true;
        let capture = std::mem::replace(&mut self.capture, Capture::Raw(Vec::new()));
        let error = error.map(|e| self.shared.scrub_str(&e));
        let body = match capture {
            Capture::Sse(mut parser, mut events) => {
                // An event without its closing blank line is kept only if the stream completed.
                if end == StreamEnd::Completed {
                    events.extend(parser.finish());
                }
                ResponseBody::Sse {
                    events: events.into_iter().map(|e| self.to_event(e)).collect(),
                    end,
                    error,
                }
            }
            Capture::Raw(bytes) => {
                let text = String::from_utf8_lossy(&bytes).into_owned();
                match (serde_json::from_str::<Value>(&text), &error) {
                    (Ok(mut json), None) if end == StreamEnd::Completed => {
                        self.shared.scrub(&mut json);
                        ResponseBody::Json { json }
                    }
                    _ => ResponseBody::Text {
                        text: self.shared.scrub_str(&text),
                        error,
                    },
                }
            }
        };
        if let Some(Some(resp)) = self
            .shared
            .lock()
            .get_mut(self.index)
            .map(|s| s.response.as_mut())
        {
            resp.body = Some(body);
        }
    }

    fn to_event(&self, e: RawEvent) -> RecordedEvent {
        let mut event = RecordedEvent::new(e.event, &e.data, e.id, e.retry);
        if let Some(v) = &mut event.data {
            self.shared.scrub(v);
        }
        if let Some(t) = &mut event.text {
            *t = self.shared.scrub_str(t);
        }
        event
    }
}

impl Stream for Tee {
    type Item = Result<Bytes, TransportError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let item = match this.inner.as_mut().poll_next(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(item) => item,
        };
        match &item {
            Some(Ok(chunk)) => match &mut this.capture {
                Capture::Sse(parser, events) => events.extend(parser.feed(chunk)),
                Capture::Raw(bytes) => bytes.extend_from_slice(chunk),
            },
            Some(Err(e)) => {
                let message = match e {
                    TransportError::Body(m) => m.clone(),
                    other => other.to_string(),
                };
                this.finalize(StreamEnd::Cut, Some(message))
            }
            None => this.finalize(StreamEnd::Completed, None),
        }
        Poll::Ready(item)
    }
}

impl Drop for Tee {
    fn drop(&mut self) {
        self.finalize(StreamEnd::Abandoned, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::ApiKind;
    use futures::StreamExt;
    use serde_json::json;

    /// Answers every request with the given content type and chunks.
    struct Canned(&'static str, Vec<Result<&'static str, &'static str>>);

    #[async_trait]
    impl Transport for Canned {
        async fn send(&self, _request: HttpRequest) -> Result<HttpResponse, TransportError> {
            let chunks: Vec<Result<Bytes, TransportError>> = self
                .1
                .iter()
                .map(|c| match c {
                    Ok(s) => Ok(Bytes::from_static(s.as_bytes())),
                    Err(e) => Err(TransportError::Body((*e).to_owned())),
                })
                .collect();
            Ok(HttpResponse {
                status: 200,
                headers: vec![
                    ("content-type".into(), self.0.into()),
                    ("set-cookie".into(), "a=b".into()),
                ],
                body: Box::pin(futures::stream::iter(chunks)),
            })
        }
    }

    fn request() -> HttpRequest {
        HttpRequest {
            method: "POST".into(),
            url: "http://127.0.0.1:1/v1/messages".into(),
            headers: vec![
                ("x-goog-api-key".into(), "k".into()),
                ("cookie".into(), "c".into()),
                ("accept".into(), "text/event-stream".into()),
            ],
            body: json!({"cwd": "/tmp/ws-9", "files": ["/tmp/ws-9/a", "/tmp/ws-90/b"]}),
        }
    }

    fn header() -> CassetteHeader {
        CassetteHeader::new("t", "p", "m", ApiKind::AnthropicMessages, "pi", "replace")
    }

    async fn record_one(inner: Canned, read_chunks: usize) -> (Cassette, Vec<Bytes>) {
        let paths = PathMap::new().with(Path::new("/tmp/ws-9"), "/workspace");
        let rec = Recorder::new(Arc::new(inner), paths, vec![]);
        let resp = rec.send(request()).await.unwrap();
        let mut body = resp.body;
        let mut got = Vec::new();
        for _ in 0..read_chunks {
            match body.next().await {
                Some(Ok(b)) => got.push(b),
                _ => break,
            }
        }
        drop(body);
        (rec.cassette(header()), got)
    }

    #[tokio::test]
    async fn request_is_scrubbed_and_headers_filtered() {
        let (c, _) = record_one(
            Canned("application/json", vec![Ok("{\"a\":\"/tmp/ws-9/x\"}")]),
            9,
        )
        .await;
        let it = &c.interactions[0];
        assert_eq!(
            it.request.body,
            json!({"cwd": "/workspace", "files": ["/workspace/a", "/tmp/ws-90/b"]})
        );
        assert_eq!(
            it.request.headers,
            BTreeMap::from([("accept".to_owned(), "text/event-stream".to_owned())])
        );
        assert_eq!(
            it.response.headers.keys().collect::<Vec<_>>(),
            vec!["content-type"]
        );
        assert_eq!(
            it.response.body,
            ResponseBody::Json {
                json: json!({"a": "/workspace/x"})
            }
        );
    }

    #[tokio::test]
    async fn abandoned_and_cut_streams_are_marked() {
        let sse = "event: a\ndata: {\"n\":1}\n\n";
        let (c, got) = record_one(
            Canned("text/event-stream", vec![Ok(sse), Ok(sse), Ok(sse)]),
            2,
        )
        .await;
        assert_eq!(got.len(), 2, "bytes forwarded as they came");
        assert_eq!(got[0], Bytes::from_static(sse.as_bytes()));
        let ResponseBody::Sse { events, end, error } = &c.interactions[0].response.body else {
            panic!("not sse: {c:?}");
        };
        assert_eq!(
            (events.len(), *end, error),
            (2, StreamEnd::Abandoned, &None)
        );

        let (c, _) = record_one(
            Canned(
                "text/event-stream",
                vec![Ok(sse), Ok("event: b\ndata: {\"half"), Err("reset")],
            ),
            9,
        )
        .await;
        let ResponseBody::Sse { events, end, error } = &c.interactions[0].response.body else {
            panic!("not sse: {c:?}");
        };
        assert_eq!(events.len(), 1, "the half event is not kept");
        assert_eq!((*end, error.as_deref()), (StreamEnd::Cut, Some("reset")));
    }

    #[tokio::test]
    async fn non_json_body_is_text() {
        let (c, _) = record_one(Canned("text/plain", vec![Ok("Bad gateway\n")]), 9).await;
        assert_eq!(
            c.interactions[0].response.body,
            ResponseBody::Text {
                text: "Bad gateway\n".into(),
                error: None
            }
        );
    }

    #[test]
    fn refused_write_keeps_the_existing_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/c.yaml");
        let mut c = Cassette {
            header: header(),
            interactions: vec![],
        };
        write_cassette(&c, &path, &[]).unwrap();
        let before = std::fs::read_to_string(&path).unwrap();
        c.interactions.push(Interaction {
            request: RecordedRequest {
                method: "POST".into(),
                path: "/".into(),
                headers: BTreeMap::new(),
                body: json!({"x": "AKIAABCDEFGHIJKLMNOP"}),
            },
            response: RecordedResponse {
                status: 200,
                headers: BTreeMap::new(),
                body: ResponseBody::Json { json: json!({}) },
            },
        });
        let err = write_cassette(&c, &path, &[]).unwrap_err().to_string();
        assert!(
            err.contains("interaction 0 (request 1 of 1) request.body.x: an AWS access key id"),
            "{err}"
        );
        assert!(!err.contains("AKIAABCDEFGHIJKLMNOP"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
        assert_eq!(
            std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
            1
        );
    }
}
