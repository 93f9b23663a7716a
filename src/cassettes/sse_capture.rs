//! The SSE event capture used to record and replay cassettes.
//!
//! Lines are split by the providers' own splitter ([`sse::SseLines`]) and events written by
//! [`sse::encode_fields`]; unlike the providers' [`sse::SseParser`], this keeps every event as
//! received (its `id:` and `retry:` fields, and events without data), so a cassette holds the
//! stream exactly as bytes passed through the transport. The contract: "feed bytes, get
//! [`RawEvent`]s, then [`SseCapture::finish`]". Depends on `providers::sse` only.

use crate::providers::sse::{self, SseLine, SseLines};

/// One dispatched server-sent event, fields as received.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawEvent {
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The `id:` field, if any.
    pub id: Option<String>,
    /// The `retry:` field, if any.
    pub retry: Option<String>,
}

/// Incremental parser: bytes in, events out (every field kept, as received).
#[derive(Debug, Default)]
pub struct SseCapture {
    lines: SseLines,
    current: RawEvent,
    has_data: bool,
    has_fields: bool,
}

impl SseCapture {
    /// A parser with nothing buffered.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds a chunk; returns the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<RawEvent> {
        let mut out = Vec::new();
        for line in self.lines.feed(chunk) {
            self.apply(line, &mut out);
        }
        out
    }

    /// The stream ended: an event still being built (no blank line after it) is returned too.
    pub fn finish(&mut self) -> Option<RawEvent> {
        if let Some(line) = self.lines.finish() {
            let mut ignored = Vec::new();
            self.apply(line, &mut ignored);
        }
        if self.has_fields {
            Some(self.take())
        } else {
            None
        }
    }

    fn take(&mut self) -> RawEvent {
        self.has_data = false;
        self.has_fields = false;
        std::mem::take(&mut self.current)
    }

    fn apply(&mut self, line: SseLine, out: &mut Vec<RawEvent>) {
        let (field, value) = match line {
            SseLine::Blank => {
                if self.has_fields {
                    out.push(self.take());
                }
                return;
            }
            SseLine::Field { name, value } => (name, value),
        };
        match field.as_str() {
            "event" => self.current.event = Some(value),
            "data" => {
                if self.has_data {
                    self.current.data.push('\n');
                }
                self.current.data.push_str(&value);
                self.has_data = true;
            }
            "id" => self.current.id = Some(value),
            "retry" => self.current.retry = Some(value),
            _ => return,
        }
        self.has_fields = true;
    }
}

/// Encodes one event as wire bytes: `id:`, `event:` and `retry:` lines for the fields present,
/// then one `data:` line per line of data and a blank line.
pub fn encode(event: &RawEvent) -> String {
    sse::encode_fields(
        &[
            ("id", event.id.as_deref()),
            ("event", event.event.as_deref()),
            ("retry", event.retry.as_deref()),
        ],
        &event.data,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: Option<&str>, data: &str) -> RawEvent {
        RawEvent {
            event: event.map(str::to_owned),
            data: data.to_owned(),
            ..RawEvent::default()
        }
    }

    #[test]
    fn parses_across_arbitrary_chunk_boundaries() {
        let wire = "event: a\ndata: {\"x\":1}\n\n: ping\n\ndata: l1\r\ndata: l2\r\n\r\nevent: b\ndata: é\n\n";
        let expected = vec![
            ev(Some("a"), "{\"x\":1}"),
            ev(None, "l1\nl2"),
            ev(Some("b"), "é"),
        ];
        for split in 1..wire.len() {
            let mut p = SseCapture::new();
            let bytes = wire.as_bytes();
            let mut got = p.feed(&bytes[..split]);
            got.extend(p.feed(&bytes[split..]));
            assert_eq!(got, expected, "split at {split}");
            assert_eq!(p.finish(), None);
        }
    }

    #[test]
    fn unterminated_event_is_returned_by_finish() {
        let mut p = SseCapture::new();
        assert!(p.feed(b"event: x\ndata: partial").is_empty());
        assert_eq!(p.finish(), Some(ev(Some("x"), "partial")));
    }

    #[test]
    fn encode_then_parse_round_trips() {
        let events = vec![
            ev(Some("message_start"), "{\"a\":[1,2]}"),
            ev(None, "[DONE]"),
            ev(None, "two\nlines"),
            RawEvent {
                id: Some("7".into()),
                ..ev(Some("e"), "")
            },
        ];
        let wire: String = events.iter().map(encode).collect();
        let mut p = SseCapture::new();
        assert_eq!(p.feed(wire.as_bytes()), events);
    }
}
