//! Server-sent events: an incremental parser of `event:`/`data:`/`id:` lines, as Pi's own parser
//! (`\r`, `\n` and `\r\n` line breaks, multi-line data joined with `\n`, `:` comments, dispatch on
//! a blank line), an idle timeout over a [`BodyStream`], and [`encode`] to write events back to
//! wire bytes (used by the cassette player and the scripted model server).
//!
//! Depends on the transport seam and [`ProviderError`] only; knows nothing of any API's events.

use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;

use super::ProviderError;
use super::transport::{BodyStream, HttpRequest, Transport, TransportError};

/// The default idle timeout of a stream: no bytes for this long means it stalled.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// After a reply's closing event, how long [`SseStream::finish`] waits for the body to end.
pub const FINISH_TIMEOUT: Duration = Duration::from_secs(2);

/// After a reply's closing event, how many more bytes [`SseStream::finish`] reads at most.
pub const FINISH_MAX_BYTES: usize = 1024 * 1024;

/// The most bytes one event may hold before it ends: far above any reply's (a tool call that
/// writes a large file is a few MiB in one event), and a bound on what a body that is not an
/// event stream (a file, a line that never ends) takes of the harness's memory.
pub const MAX_EVENT_BYTES: usize = 64 << 20;

/// The most bytes one reply's stream may send in all. The longest replies models give (their
/// whole output budget, thinking included, one small event per token) take tens of megabytes;
/// a server that never ends its stream (every event small, so [`MAX_EVENT_BYTES`] never trips)
/// would otherwise fill the harness's memory with the reply it accumulates, and the cassette's
/// recording with it, until the run's wall-time limit.
pub const MAX_STREAM_BYTES: usize = 256 << 20;

/// One dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SseEvent {
    /// The `event:` field, if the event had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

impl SseEvent {
    /// An event with a name.
    pub fn named(event: impl Into<String>, data: impl Into<String>) -> Self {
        SseEvent {
            event: Some(event.into()),
            data: data.into(),
        }
    }

    /// An event without a name (OpenAI's `data:`-only chunks).
    pub fn data(data: impl Into<String>) -> Self {
        SseEvent {
            event: None,
            data: data.into(),
        }
    }
}

/// One line of an event stream: a field and its value (one space after the `:` dropped; a line
/// without `:` is a field with an empty value), or the blank line that ends an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseLine {
    Field { name: String, value: String },
    Blank,
}

/// Splits bytes into [`SseLine`]s as they arrive: `\r`, `\n` and `\r\n` line breaks (also split
/// across chunks), `:` comment lines skipped. Shared by [`SseParser`] and the cassette capture.
#[derive(Debug, Default)]
pub struct SseLines {
    line: Vec<u8>,
    /// The previous chunk ended in `\r`: a `\n` starting the next one belongs to that line break.
    after_cr: bool,
}

impl SseLines {
    /// Feeds a chunk and returns the lines it completed, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseLine> {
        let mut out = Vec::new();
        for &b in chunk {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(&mut out);
                }
                b'\n' => self.end_line(&mut out),
                _ => self.line.push(b),
            }
        }
        out
    }

    /// Ends the input: the last line, if it had no line break (never [`SseLine::Blank`]).
    pub fn finish(&mut self) -> Option<SseLine> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            self.end_line(&mut out);
        }
        out.pop()
    }

    fn end_line(&mut self, out: &mut Vec<SseLine>) {
        let line = String::from_utf8_lossy(&std::mem::take(&mut self.line)).into_owned();
        if line.is_empty() {
            out.push(SseLine::Blank);
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (name, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
        };
        out.push(SseLine::Field {
            name: name.to_owned(),
            value: value.to_owned(),
        });
    }
}

/// The event-level parser, fed with chunks of bytes as they arrive.
#[derive(Debug, Default)]
pub struct SseParser {
    lines: SseLines,
    event: Option<String>,
    data: Vec<String>,
    /// The bytes of `data`.
    data_bytes: usize,
    saw_data: bool,
    last_id: Option<String>,
}

impl SseParser {
    /// A fresh parser.
    pub fn new() -> Self {
        SseParser::default()
    }

    /// The bytes held for the event being read (its data lines and the line not ended yet).
    pub fn buffered(&self) -> usize {
        self.data_bytes + self.lines.line.len()
    }

    /// The last `id:` field seen, if any.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// Feeds a chunk and returns the events it completed, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        for line in self.lines.feed(chunk) {
            self.apply(line, &mut out);
        }
        out
    }

    /// Ends the input: a pending event with data (no closing blank line) is dispatched.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let mut out = Vec::new();
        if let Some(line) = self.lines.finish() {
            self.apply(line, &mut out);
        }
        self.dispatch(&mut out);
        out.pop()
    }

    fn apply(&mut self, line: SseLine, out: &mut Vec<SseEvent>) {
        let (field, value) = match line {
            SseLine::Blank => return self.dispatch(out),
            SseLine::Field { name, value } => (name, value),
        };
        match field.as_str() {
            "event" => self.event = Some(value),
            "data" => {
                self.saw_data = true;
                self.data_bytes += value.len();
                self.data.push(value);
            }
            "id" => self.last_id = Some(value),
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if !self.saw_data {
            self.data.clear();
            self.data_bytes = 0;
            return;
        }
        self.saw_data = false;
        self.data_bytes = 0;
        out.push(SseEvent {
            event,
            data: std::mem::take(&mut self.data).join("\n"),
        });
    }
}

/// Server-sent events read from a response body, with an idle timeout.
pub struct SseStream {
    body: BodyStream,
    parser: SseParser,
    pending: std::collections::VecDeque<SseEvent>,
    idle_timeout: Duration,
    ended: bool,
    /// The body broke or stalled: nothing more will be read from it.
    failed: bool,
    /// The bytes read so far, and the most that may be ([`MAX_STREAM_BYTES`]).
    read: usize,
    max_bytes: usize,
}

impl SseStream {
    /// Reads events from `body`; no bytes for `idle_timeout` is a [`ProviderError::StreamStalled`].
    pub fn new(body: BodyStream, idle_timeout: Duration) -> Self {
        SseStream {
            body,
            parser: SseParser::new(),
            pending: Default::default(),
            idle_timeout,
            ended: false,
            failed: false,
            read: 0,
            max_bytes: MAX_STREAM_BYTES,
        }
    }

    /// Whether the body has been read to its end.
    pub fn at_end(&self) -> bool {
        self.ended && self.pending.is_empty()
    }

    /// Reads what is left of the body after the reply's closing event, so that the transport
    /// sees the body end (a recording then marks the stream `completed`, not `abandoned`).
    /// Bounded by [`FINISH_TIMEOUT`] (or the idle timeout, if shorter) and [`FINISH_MAX_BYTES`];
    /// whatever is still unread then is dropped. Errors are ignored: the reply is complete.
    pub async fn finish(&mut self) {
        if self.ended || self.failed {
            return;
        }
        let deadline = tokio::time::Instant::now() + self.idle_timeout.min(FINISH_TIMEOUT);
        let mut read = 0usize;
        loop {
            match tokio::time::timeout_at(deadline, self.body.next()).await {
                Ok(None) => {
                    self.ended = true;
                    return;
                }
                Ok(Some(Ok(chunk))) => {
                    read = read.saturating_add(chunk.len());
                    if read > FINISH_MAX_BYTES {
                        return;
                    }
                }
                Ok(Some(Err(_))) | Err(_) => {
                    self.failed = true;
                    return;
                }
            }
        }
    }

    /// The next event; `Ok(None)` at the end of the body. A broken body is
    /// [`ProviderError::StreamCut`].
    pub async fn next_event(&mut self) -> Result<Option<SseEvent>, ProviderError> {
        loop {
            if let Some(ev) = self.pending.pop_front() {
                return Ok(Some(ev));
            }
            if self.ended {
                return Ok(None);
            }
            if self.failed {
                return Err(ProviderError::StreamCut {
                    message: "the stream was read after it failed".into(),
                });
            }
            match tokio::time::timeout(self.idle_timeout, self.body.next()).await {
                Err(_) => {
                    self.failed = true;
                    return Err(ProviderError::StreamStalled {
                        idle: self.idle_timeout,
                    });
                }
                Ok(None) => {
                    self.ended = true;
                    if let Some(ev) = self.parser.finish() {
                        self.pending.push_back(ev);
                    }
                }
                Ok(Some(Err(e))) => {
                    self.failed = true;
                    return Err(body_error(e));
                }
                Ok(Some(Ok(chunk))) => {
                    self.read = self.read.saturating_add(chunk.len());
                    if self.read > self.max_bytes {
                        self.failed = true;
                        return Err(ProviderError::Protocol {
                            message: format!(
                                "the reply's stream passed {} MiB without ending: no model's \
                                 reply is that long (a server that never ends its stream?)",
                                self.max_bytes >> 20
                            ),
                        });
                    }
                    self.pending.extend(self.parser.feed(&chunk));
                    if self.parser.buffered() > MAX_EVENT_BYTES {
                        self.failed = true;
                        return Err(ProviderError::Protocol {
                            message: format!(
                                "the stream sent more than {} MiB without ending an event: it is \
                                 not server-sent events (is the base URL the provider's?)",
                                MAX_EVENT_BYTES >> 20
                            ),
                        });
                    }
                }
            }
        }
    }
}

/// A body that broke mid-stream: a cut connection, or a cassette that could not go on.
fn body_error(err: TransportError) -> ProviderError {
    match err {
        TransportError::Cassette(message) => ProviderError::Cassette(message),
        TransportError::Interrupted(message) => ProviderError::Interrupted { message },
        TransportError::Body(message) => ProviderError::StreamCut { message },
        other => ProviderError::StreamCut {
            message: other.to_string(),
        },
    }
}

/// Turns an error status, its headers (lower-case names) and its body text into a typed error
/// ([`super::errors::from_http_status`], or a wire format's refinement of it).
pub type ClassifyHttpError<'a> =
    dyn Fn(u16, &[(String, String)], &str) -> ProviderError + Send + Sync + 'a;

/// Sends `request` and opens its event stream: a transport failure or an error status becomes
/// the typed [`ProviderError`] (`classify` maps the status and the first
/// [`super::errors::MAX_ERROR_BODY_BYTES`] of the body), a success status an [`SseStream`].
pub async fn open(
    transport: &dyn Transport,
    request: HttpRequest,
    idle_timeout: Duration,
    classify: &ClassifyHttpError<'_>,
) -> Result<SseStream, ProviderError> {
    let mut response = transport
        .send(request)
        .await
        .map_err(super::errors::from_transport)?;
    if !(200..300).contains(&response.status) {
        let text = read_body_text(
            &mut response.body,
            idle_timeout,
            super::errors::MAX_ERROR_BODY_BYTES,
        )
        .await?;
        return Err(classify(response.status, &response.headers, &text));
    }
    if let Some(media) = not_an_event_stream(&response.headers) {
        let text = read_body_text(
            &mut response.body,
            idle_timeout,
            super::errors::MAX_ERROR_BODY_BYTES,
        )
        .await
        .unwrap_or_default();
        let text = super::errors::trim_message(&text);
        return Err(ProviderError::Protocol {
            message: format!(
                "the server answered {} with `{media}`, not an event stream \
                 (`text/event-stream`): it does not stream replies, or the base URL leads to \
                 another service; it said: {text}",
                response.status
            ),
        });
    }
    Ok(SseStream::new(response.body, idle_timeout))
}

/// The media type of a success response that is certainly not server-sent events (a whole JSON
/// reply from a server that ignores `stream: true`, a web page, a file), from its
/// `content-type`; `None` for an event stream, and for a missing or unusual type, which the
/// parser is left to judge.
fn not_an_event_stream(headers: &[(String, String)]) -> Option<String> {
    let (_, value) = headers.iter().find(|(name, _)| name == "content-type")?;
    let media = value
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    const NOT_SSE: [&str; 6] = [
        "application/json",
        "text/html",
        "application/xhtml+xml",
        "application/xml",
        "text/xml",
        "application/octet-stream",
    ];
    NOT_SSE.contains(&media.as_str()).then_some(media)
}

/// Reads a (non-SSE) body as text, with the same idle timeout, keeping at most `max_bytes` of it
/// (a longer body ends with `… (cut at N bytes)` and the rest is never read); used for error
/// bodies. A body that breaks after some bytes gives what arrived.
pub async fn read_body_text(
    body: &mut BodyStream,
    idle_timeout: Duration,
    max_bytes: usize,
) -> Result<String, ProviderError> {
    let mut bytes = Vec::new();
    let mut cut = false;
    loop {
        match tokio::time::timeout(idle_timeout, body.next()).await {
            Err(_) if bytes.is_empty() => {
                return Err(ProviderError::StreamStalled { idle: idle_timeout });
            }
            Ok(Some(Err(e))) if bytes.is_empty() => return Err(body_error(e)),
            Err(_) | Ok(None) | Ok(Some(Err(_))) => break,
            Ok(Some(Ok(chunk))) => {
                let room = max_bytes - bytes.len();
                if chunk.len() > room {
                    bytes.extend_from_slice(&chunk[..room]);
                    cut = true;
                    break;
                }
                bytes.extend_from_slice(&chunk);
            }
        }
    }
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if cut {
        text.push_str(&format!("… (cut at {max_bytes} bytes)"));
    }
    Ok(text)
}

/// Writes one event in wire form (`event:` line if named, one `data:` line per data line, a
/// blank line).
pub fn encode_event(event: &SseEvent) -> String {
    encode_fields(&[("event", event.event.as_deref())], &event.data)
}

/// Writes one event in wire form: a `name: value` line for each field that is present, in the
/// order given, then one `data:` line per line of `data`, then a blank line.
pub fn encode_fields(fields: &[(&str, Option<&str>)], data: &str) -> String {
    let mut s = String::new();
    for (name, value) in fields {
        if let Some(value) = value {
            s.push_str(name);
            s.push_str(": ");
            s.push_str(value);
            s.push('\n');
        }
    }
    for line in data.split('\n') {
        s.push_str("data: ");
        s.push_str(line);
        s.push('\n');
    }
    s.push('\n');
    s
}

/// Serialises events back to wire bytes; [`SseParser`] reads them back unchanged.
pub fn encode<'a>(events: impl IntoIterator<Item = &'a SseEvent>) -> Bytes {
    let mut s = String::new();
    for ev in events {
        s.push_str(&encode_event(ev));
    }
    Bytes::from(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(p.feed(c));
        }
        out.extend(p.finish());
        out
    }

    #[test]
    fn parses_named_events_and_multi_line_data() {
        let evs = parse_all(&[b"event: a\ndata: one\ndata: two\n\ndata:x\n\n"]);
        assert_eq!(
            evs,
            vec![SseEvent::named("a", "one\ntwo"), SseEvent::data("x")]
        );
    }

    #[test]
    fn handles_every_line_break_even_split_across_chunks() {
        let evs = parse_all(&[
            b"event: a\r",
            b"\ndata: 1\r",
            b"\r",
            b"data: 2\rdata: 3\n\r\n",
        ]);
        assert_eq!(evs, vec![SseEvent::named("a", "1"), SseEvent::data("2\n3")]);
    }

    #[test]
    fn skips_comments_ids_and_events_without_data() {
        let mut p = SseParser::new();
        let evs = p.feed(b": keepalive\n\nevent: ping\n\nid: 7\ndata: {}\n\n");
        assert_eq!(evs, vec![SseEvent::data("{}")]);
        assert_eq!(p.last_event_id(), Some("7"));
    }

    #[test]
    fn splits_a_multibyte_character_across_chunks() {
        let evs = parse_all(&[
            "data: h\u{e9}llo\n\n".as_bytes()[..8].as_ref(),
            &"data: h\u{e9}llo\n\n".as_bytes()[8..],
        ]);
        assert_eq!(evs, vec![SseEvent::data("h\u{e9}llo")]);
    }

    #[test]
    fn encode_round_trips() {
        let evs = vec![
            SseEvent::named("message_start", "{\"a\":1}"),
            SseEvent::data("line1\nline2"),
            SseEvent::data(""),
        ];
        assert_eq!(parse_all(&[&encode(&evs)]), evs);
    }

    fn body(items: Vec<Result<Bytes, TransportError>>, then_pending: bool) -> BodyStream {
        let s = futures::stream::iter(items);
        if then_pending {
            Box::pin(s.chain(futures::stream::pending()))
        } else {
            Box::pin(s)
        }
    }

    #[test]
    fn only_a_type_that_is_certainly_not_an_event_stream_is_refused() {
        let with = |value: &str| vec![("content-type".to_owned(), value.to_owned())];
        assert_eq!(not_an_event_stream(&with("text/event-stream")), None);
        assert_eq!(
            not_an_event_stream(&with("Text/Event-Stream; charset=utf-8")),
            None
        );
        // Left to the parser: no type, or one a sloppy server might put on its events.
        assert_eq!(not_an_event_stream(&[]), None);
        assert_eq!(not_an_event_stream(&with("text/plain")), None);
        assert_eq!(
            not_an_event_stream(&with("application/JSON; charset=utf-8")).as_deref(),
            Some("application/json")
        );
        assert_eq!(
            not_an_event_stream(&with("text/html")).as_deref(),
            Some("text/html")
        );
    }

    #[tokio::test]
    async fn a_stream_that_never_ends_stops_at_its_bound_in_all() {
        // Small events without end: no one passes the per-event bound.
        let event = Bytes::from(format!("data: {}\n\n", "y".repeat(1000)));
        let endless: BodyStream = Box::pin(futures::stream::repeat_with(move || Ok(event.clone())));
        let s = SseStream::new(endless, Duration::from_secs(5));
        assert_eq!(s.max_bytes, MAX_STREAM_BYTES);
        let mut s = SseStream {
            max_bytes: 100_000,
            ..s
        };
        let mut events = 0;
        let read = async {
            loop {
                match s.next_event().await {
                    Ok(Some(_)) => events += 1,
                    Ok(None) => panic!("the body never ends"),
                    Err(e) => break e,
                }
            }
        };
        let err = tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .expect("the stream stops at its bound");
        assert_eq!(events, 99, "every event up to the bound");
        assert!(
            matches!(&err, ProviderError::Protocol { message } if message.contains("without ending")),
            "{err:?}"
        );
        assert!(s.next_event().await.is_err(), "nothing is read after it");
    }

    #[tokio::test]
    async fn a_broken_body_is_a_stream_cut() {
        let mut s = SseStream::new(
            body(
                vec![
                    Ok(Bytes::from("data: 1\n\n")),
                    Err(TransportError::Body("reset".into())),
                ],
                false,
            ),
            Duration::from_secs(5),
        );
        assert_eq!(s.next_event().await.unwrap(), Some(SseEvent::data("1")));
        let err = s.next_event().await.unwrap_err();
        assert!(matches!(err, ProviderError::StreamCut { .. }), "{err:?}");
    }

    #[tokio::test]
    async fn finish_reads_to_the_end_within_its_bounds() {
        let rest = Ok(Bytes::from("data: after the end\n\n"));
        let mut s = SseStream::new(
            body(vec![Ok(Bytes::from("data: 1\n\n")), rest], false),
            Duration::from_secs(5),
        );
        assert!(s.next_event().await.unwrap().is_some());
        assert!(!s.at_end());
        s.finish().await;
        assert!(s.at_end(), "read to the end of the body");
        // A body that never ends is left after the bound, without an error.
        let mut s = SseStream::new(
            body(vec![Ok(Bytes::from("data: 1\n\n"))], true),
            Duration::from_millis(100),
        );
        assert!(s.next_event().await.unwrap().is_some());
        let started = std::time::Instant::now();
        s.finish().await;
        assert!(started.elapsed() < Duration::from_secs(2));
        assert!(!s.at_end());
    }

    #[tokio::test]
    async fn error_bodies_are_read_up_to_a_bound() {
        let chunks = (0..10).map(|_| Ok(Bytes::from(vec![b'x'; 1000]))).collect();
        let mut b = body(chunks, true);
        let text = read_body_text(&mut b, Duration::from_secs(5), 2500)
            .await
            .unwrap();
        assert_eq!(text, format!("{}… (cut at 2500 bytes)", "x".repeat(2500)));
        // A body that breaks after some bytes gives what arrived.
        let mut b = body(
            vec![
                Ok(Bytes::from("partial")),
                Err(TransportError::Body("reset".into())),
            ],
            false,
        );
        let text = read_body_text(&mut b, Duration::from_secs(5), 2500)
            .await
            .unwrap();
        assert_eq!(text, "partial");
    }

    #[tokio::test]
    async fn silence_is_a_stall() {
        let mut s = SseStream::new(
            body(vec![Ok(Bytes::from("data: 1\n\n"))], true),
            Duration::from_millis(50),
        );
        assert!(s.next_event().await.unwrap().is_some());
        assert_eq!(
            s.next_event().await.unwrap_err(),
            ProviderError::StreamStalled {
                idle: Duration::from_millis(50)
            }
        );
    }
}
