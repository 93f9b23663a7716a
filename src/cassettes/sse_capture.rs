//! A small incremental SSE parser and encoder used only to record and replay cassettes.
//!
//! The provider code has its own parser (`providers::sse`); this one exists so the cassette layer
//! sees the stream exactly as bytes pass through the transport, without depending on how the
//! providers consume it. It can be swapped for the providers' parser later: the only contract is
//! "feed bytes, get [`RawEvent`]s, then [`SseCapture::finish`]". Must not depend on providers
//! beyond the transport types.

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

/// Incremental line-based parser: bytes in, events out.
#[derive(Debug, Default)]
pub struct SseCapture {
    buf: Vec<u8>,
    /// The previous chunk ended with `\r`: a following `\n` belongs to the same line break.
    pending_cr: bool,
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
        for &b in chunk {
            if self.pending_cr {
                self.pending_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' => self.end_line(&mut out),
                b'\r' => {
                    self.pending_cr = true;
                    self.end_line(&mut out);
                }
                _ => self.buf.push(b),
            }
        }
        out
    }

    /// The stream ended: an event still being built (no blank line after it) is returned too.
    pub fn finish(&mut self) -> Option<RawEvent> {
        if !self.buf.is_empty() {
            let mut ignored = Vec::new();
            self.end_line(&mut ignored);
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

    fn end_line(&mut self, out: &mut Vec<RawEvent>) {
        let line = String::from_utf8_lossy(&self.buf).into_owned();
        self.buf.clear();
        if line.is_empty() {
            if self.has_fields {
                out.push(self.take());
            }
            return;
        }
        if line.starts_with(':') {
            return; // a comment (keep-alive)
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
        };
        match field {
            "event" => self.current.event = Some(value.to_owned()),
            "data" => {
                if self.has_data {
                    self.current.data.push('\n');
                }
                self.current.data.push_str(value);
                self.has_data = true;
            }
            "id" => self.current.id = Some(value.to_owned()),
            "retry" => self.current.retry = Some(value.to_owned()),
            _ => return,
        }
        self.has_fields = true;
    }
}

/// Encodes one event as wire bytes: `event: X\ndata: ...\n\n` (one `data:` line per line of data).
pub fn encode(event: &RawEvent) -> String {
    let mut s = String::new();
    if let Some(id) = &event.id {
        s.push_str("id: ");
        s.push_str(id);
        s.push('\n');
    }
    if let Some(name) = &event.event {
        s.push_str("event: ");
        s.push_str(name);
        s.push('\n');
    }
    if let Some(retry) = &event.retry {
        s.push_str("retry: ");
        s.push_str(retry);
        s.push('\n');
    }
    for line in event.data.split('\n') {
        s.push_str("data: ");
        s.push_str(line);
        s.push('\n');
    }
    s.push('\n');
    s
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
