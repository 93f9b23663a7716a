//! The model server of the overhead benchmarks: OpenAI Chat Completions over HTTP/1.1 on
//! 127.0.0.1, the reply streamed as SSE in chunked transfer encoding, as the load server sends
//! it, but at as little CPU as a server on this machine can take.
//!
//! A provider the harness talks to in earnest runs on another machine; in a benchmark, the
//! stand-in for it shares the cores whose time is measured, so every microsecond it spends is
//! counted against the harness. So: one blocking thread per connection (a request wakes the one
//! thread that answers it, no async runtime handing it between workers), the request read as
//! bytes and never parsed as JSON, and the conversation's turns counted from those bytes.
//!
//! What it answers depends only on the request: a conversation with fewer than `turns - 1`
//! assistant messages gets a call of `tool` with `arguments`, the others the final text. The
//! assistant messages are counted as occurrences of `"role":"assistant"` in the body, which is
//! exact for a compact JSON body (the harness's): a string value that holds the same text holds
//! it with its quotes escaped. The replies are rendered by the wire format's own renderer, as the
//! scripted and load servers render theirs.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::load_server::next_turn;
use super::scripted_server::ScriptedToolCall;
use crate::providers::ApiKind;
use crate::providers::sse::encode_event;

/// The longest request head (request line and headers) read, in bytes.
const MAX_HEAD: usize = 64 * 1024;

/// What the instant server answers.
#[derive(Debug, Clone)]
pub struct InstantConfig {
    /// Model turns per conversation: the last is the final text, the others call `tool`.
    pub turns: usize,
    /// The tool call of the turns before the last.
    pub tool_call: ScriptedToolCall,
    /// The final text.
    pub text: String,
}

/// A running instant server: it serves until the process ends.
#[derive(Debug)]
pub struct InstantServer {
    addr: SocketAddr,
    served: Arc<AtomicU64>,
}

impl InstantServer {
    /// Its address on 127.0.0.1.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL of an OpenAI-compatible model on it: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Chat requests answered so far.
    pub fn served(&self) -> u64 {
        self.served.load(Ordering::SeqCst)
    }
}

/// Starts an instant server on a free port of 127.0.0.1.
pub fn start_instant(config: InstantConfig) -> io::Result<InstantServer> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let served = Arc::new(AtomicU64::new(0));
    let config = Arc::new(config);
    let counter = served.clone();
    std::thread::Builder::new()
        .name("instant-accept".to_owned())
        .spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (config, counter) = (config.clone(), counter.clone());
                let _detached = std::thread::Builder::new()
                    .name("instant-conn".to_owned())
                    .spawn(move || {
                        // A connection ends when the client closes it or sends what this
                        // server cannot read; either way nothing is left to answer.
                        let _ended = serve_connection(stream, &config, &counter);
                    });
            }
        })?;
    Ok(InstantServer { addr, served })
}

/// Answers the requests of one keep-alive connection in turn until the client closes it.
fn serve_connection(
    stream: TcpStream,
    config: &InstantConfig,
    served: &AtomicU64,
) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::with_capacity(64 * 1024, stream);
    let mut head = Vec::new();
    let mut body = Vec::new();
    while let Some(request) = read_request(&mut reader, &mut head, &mut body)? {
        match request {
            Request::Chat => {
                let reply = chat_reply(config, &body);
                // Counted before it is written: a client that has read it sees it counted.
                served.fetch_add(1, Ordering::SeqCst);
                writer.write_all(&reply)?;
            }
            Request::Other(line) => {
                writer.write_all(&not_found(&format!("no route for {line}")))?
            }
        }
    }
    Ok(())
}

enum Request {
    /// `POST .../chat/completions`.
    Chat,
    /// Anything else: its request line.
    Other(String),
}

/// Reads one request's head into `head` and its body into `body`; `None` at a clean end of the
/// connection.
fn read_request(
    reader: &mut BufReader<TcpStream>,
    head: &mut Vec<u8>,
    body: &mut Vec<u8>,
) -> io::Result<Option<Request>> {
    head.clear();
    body.clear();
    loop {
        let before = head.len();
        if reader.read_until(b'\n', head)? == 0 {
            return if head.is_empty() {
                Ok(None)
            } else {
                Err(io::ErrorKind::UnexpectedEof.into())
            };
        }
        if head.len() > MAX_HEAD {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "head too long"));
        }
        if head[before..] == *b"\r\n" || head[before..] == *b"\n" {
            break;
        }
    }
    let text = String::from_utf8_lossy(head);
    let mut lines = text.lines();
    let request_line = lines.next().unwrap_or_default().to_owned();
    let (mut length, mut chunked) = (0usize, false);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = value
                .parse()
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad content-length"))?;
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.eq_ignore_ascii_case("chunked");
        }
    }
    if chunked {
        read_chunked(reader, body)?;
    } else {
        body.resize(length, 0);
        reader.read_exact(body)?;
    }
    let mut parts = request_line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = path.split('?').next().unwrap_or("");
    Ok(Some(
        if method == "POST" && path.ends_with("/chat/completions") {
            Request::Chat
        } else {
            Request::Other(request_line)
        },
    ))
}

/// Reads a chunked body (its chunks, then the trailer section) into `body`.
fn read_chunked(reader: &mut BufReader<TcpStream>, body: &mut Vec<u8>) -> io::Result<()> {
    let bad = || io::Error::new(io::ErrorKind::InvalidData, "bad chunk");
    let mut line = String::new();
    loop {
        line.clear();
        reader.read_line(&mut line)?;
        let size = line.trim().split(';').next().unwrap_or("");
        let size = usize::from_str_radix(size, 16).map_err(|_| bad())?;
        if size == 0 {
            // Trailers, up to the blank line.
            loop {
                line.clear();
                if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
                    return Ok(());
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        line.clear();
        reader.read_line(&mut line)?;
        if !line.trim().is_empty() {
            return Err(bad());
        }
    }
}

/// The whole HTTP response to a chat request: the next turn of its conversation, as SSE events
/// in one chunk, then the last chunk.
fn chat_reply(config: &InstantConfig, body: &[u8]) -> Vec<u8> {
    let events: String = next_turn(
        ApiKind::OpenaiCompletions,
        count(body, br#""role":"assistant""#),
        config.turns,
        (&config.tool_call, &config.text),
        body.len(),
        model_of(body),
    )
    .iter()
    .map(encode_event)
    .collect();
    let mut response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
         transfer-encoding: chunked\r\n\r\n{:x}\r\n",
        events.len()
    )
    .into_bytes();
    response.extend_from_slice(events.as_bytes());
    response.extend_from_slice(b"\r\n0\r\n\r\n");
    response
}

/// The request's `model`, read from the top of the body without parsing the rest.
fn model_of(body: &[u8]) -> String {
    let Some(at) = find(body, br#""model":""#) else {
        return "instant".to_owned();
    };
    let rest = &body[at + br#""model":"#.len()..];
    serde_json::Deserializer::from_slice(rest)
        .into_iter::<Value>()
        .next()
        .and_then(Result::ok)
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "instant".to_owned())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn count(haystack: &[u8], needle: &[u8]) -> usize {
    let mut n = 0;
    let mut rest = haystack;
    while let Some(at) = find(rest, needle) {
        n += 1;
        rest = &rest[at + needle.len()..];
    }
    n
}

fn not_found(text: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 404 Not Found\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\r\n{text}",
        text.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn server(turns: usize) -> InstantServer {
        start_instant(InstantConfig {
            turns,
            tool_call: ScriptedToolCall {
                name: "bash".to_owned(),
                arguments: json!({"command": "ls"}),
            },
            text: "Done.".to_owned(),
        })
        .unwrap()
    }

    #[test]
    fn counts_the_assistant_messages_of_a_compact_body_only() {
        let body = serde_json::to_vec(&json!({
            "model": "m",
            "messages": [
                {"role": "user", "content": "say \"role\":\"assistant\""},
                {"role": "assistant", "content": "ok"},
                {"role": "tool", "content": "{\"role\":\"assistant\"}"},
                {"role": "assistant", "content": "ok"},
            ]
        }))
        .unwrap();
        assert_eq!(count(&body, br#""role":"assistant""#), 2);
        assert_eq!(model_of(&body), "m");
        assert_eq!(model_of(b"{}"), "instant");
    }

    #[tokio::test]
    async fn answers_tool_calls_then_the_text_on_one_connection_in_both_body_encodings() {
        let server = server(2);
        let client = reqwest::Client::new();
        let url = format!("{}/chat/completions", server.base_url());
        let first = json!({"model": "load-gpt", "messages": [{"role": "user", "content": "hi"}]});
        let reply = client.post(&url).json(&first).send().await.unwrap();
        assert_eq!(reply.status(), 200);
        assert_eq!(
            reply.headers()["content-type"],
            "text/event-stream",
            "an SSE stream"
        );
        let text = reply.text().await.unwrap();
        assert!(text.contains(r#""name":"bash""#), "{text}");
        assert!(text.contains(r#""model":"load-gpt""#), "{text}");
        assert!(text.trim_end().ends_with("data: [DONE]"), "{text}");

        // The same connection, a body sent in chunks this time.
        let second = serde_json::to_vec(&json!({"model": "load-gpt", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": []},
            {"role": "tool", "content": "x"},
        ]}))
        .unwrap();
        let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
            second.chunks(7).map(|c| Ok(c.to_vec())).collect();
        let reply = client
            .post(&url)
            .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
            .send()
            .await
            .unwrap();
        let text = reply.text().await.unwrap();
        assert!(text.contains(r#""content":"Done.""#), "{text}");
        assert!(!text.contains(r#""name":"bash""#), "{text}");
        assert_eq!(server.served(), 2);

        let missing = client
            .post(format!("http://{}/v1/messages", server.addr()))
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_eq!(missing.status(), 404);
    }
}
