//! Cassettes end to end: record real HTTP on 127.0.0.1 through a reqwest transport, write the
//! file, read it back, replay it, diverge, refuse secrets, reject malformed files.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::StreamExt;
use harness::cassettes::normalize::PathMap;
use harness::cassettes::sse_capture::SseCapture;
use harness::cassettes::{CassetteError, CassetteHeader, Player, Recorder, cassette_path};
use harness::providers::ApiKind;
use harness::providers::transport::{HttpRequest, HttpResponse, Transport, TransportError};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const KEY: &str = "local-test-key-0123456789";

/// A minimal reqwest transport (the providers' live transport may replace it).
struct Reqwest(reqwest::Client);

#[async_trait]
impl Transport for Reqwest {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        let method = reqwest::Method::from_bytes(request.method.as_bytes()).unwrap();
        let mut b = self
            .0
            .request(method, &request.url)
            .body(serde_json::to_vec(&request.body).unwrap());
        for (k, v) in &request.headers {
            b = b.header(k, v);
        }
        let resp = b.send().await.map_err(|e| TransportError::Connect {
            url: request.url.clone(),
            message: e.to_string(),
        })?;
        let headers = resp
            .headers()
            .iter()
            .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
            .collect();
        Ok(HttpResponse {
            status: resp.status().as_u16(),
            headers,
            body: Box::pin(
                resp.bytes_stream()
                    .map(|c| c.map_err(|e| TransportError::Body(e.to_string()))),
            ),
        })
    }
}

/// What the server sends for each path: content type, body chunks, whether to cut the
/// connection after the chunks (chunked encoding, no terminator).
fn reply(path: &str, ws: &str) -> (&'static str, Vec<String>, bool) {
    let sse = vec![
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\"}}\n\n".to_owned(),
        // An event split across two chunks, and a multi-line string mentioning the workspace.
        format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"delta\":{{\"type\":\"text_delta\",\"text\":\"I will read {ws}/src/lib.rs"),
        "\\nand then\\nfix it\"}}\n\n: keep-alive\n\n".to_owned(),
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".to_owned(),
        "data: [DONE]\n\n".to_owned(),
    ];
    match path {
        "/v1/messages" => ("text/event-stream; charset=utf-8", sse, false),
        "/v1/cut" => ("text/event-stream", sse[..2].to_vec(), true),
        _ => (
            "application/json",
            vec![format!("{{\"ok\":true,\"cwd\":\"{ws}\"}}")],
            false,
        ),
    }
}

struct Server {
    base: String,
    requests: Arc<Mutex<Vec<(String, String)>>>,
    sent: Arc<Mutex<Vec<Vec<u8>>>>,
}

async fn server(ws: String) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let sent = Arc::new(Mutex::new(Vec::new()));
    let (rq, st) = (requests.clone(), sent.clone());
    tokio::spawn(async move {
        loop {
            let (mut sock, _) = listener.accept().await.unwrap();
            let (rq, st, ws) = (rq.clone(), st.clone(), ws.clone());
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut tmp = [0u8; 4096];
                let head_end = loop {
                    let n = sock.read(&mut tmp).await.unwrap();
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&tmp[..n]);
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break i + 4;
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                let len: usize = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse().unwrap())
                    })
                    .unwrap_or(0);
                while buf.len() < head_end + len {
                    let n = sock.read(&mut tmp).await.unwrap();
                    buf.extend_from_slice(&tmp[..n]);
                }
                let path = head.split_whitespace().nth(1).unwrap().to_owned();
                rq.lock().unwrap().push((
                    head.clone(),
                    String::from_utf8_lossy(&buf[head_end..]).to_string(),
                ));
                let (ctype, chunks, cut) = reply(&path, &ws);
                let mut all = Vec::new();
                let start = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: {ctype}\r\nrequest-id: req_fixed\r\nset-cookie: session=abc\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
                );
                sock.write_all(start.as_bytes()).await.unwrap();
                for c in &chunks {
                    all.extend_from_slice(c.as_bytes());
                    sock.write_all(format!("{:x}\r\n{c}\r\n", c.len()).as_bytes())
                        .await
                        .unwrap();
                    sock.flush().await.unwrap();
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
                if !cut {
                    sock.write_all(b"0\r\n\r\n").await.unwrap();
                }
                st.lock().unwrap().push(all);
                let _ = sock.shutdown().await;
            });
        }
    });
    Server {
        base,
        requests,
        sent,
    }
}

fn request(base: &str, path: &str, ws: &Path, tool_output: &str) -> HttpRequest {
    HttpRequest {
        method: "POST".into(),
        url: format!("{base}{path}"),
        headers: vec![
            ("content-type".into(), "application/json".into()),
            ("anthropic-version".into(), "2023-06-01".into()),
            ("x-api-key".into(), KEY.into()),
            ("authorization".into(), format!("Bearer {KEY}")),
        ],
        body: json!({
            "model": "m",
            "system": format!("You are a coding agent.\nYour workspace is {}.\nBe brief.\n", ws.display()),
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "fix the bug"}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": tool_output}]}
            ],
            "stream": true
        }),
    }
}

async fn drain(resp: HttpResponse) -> (Vec<u8>, Option<TransportError>) {
    let mut body = resp.body;
    let mut out = Vec::new();
    while let Some(c) = body.next().await {
        match c {
            Ok(b) => out.extend_from_slice(&b),
            Err(e) => return (out, Some(e)),
        }
    }
    (out, None)
}

/// Events as (name, data parsed as JSON or kept as text).
fn events(bytes: &[u8]) -> Vec<(Option<String>, Value)> {
    let mut p = SseCapture::new();
    let mut ev = p.feed(bytes);
    ev.extend(p.finish());
    ev.into_iter()
        .map(|e| {
            (
                e.event,
                serde_json::from_str(&e.data).unwrap_or(Value::String(e.data)),
            )
        })
        .collect()
}

fn header() -> CassetteHeader {
    CassetteHeader {
        recorded_at: "2026-11-30T12:00:00Z".into(),
        harness_version: "0.0.0-test".into(),
        ..CassetteHeader::new(
            "fix-bug",
            "anthropic",
            "claude/test:1",
            ApiKind::AnthropicMessages,
            "pi",
            "replace",
        )
    }
}

struct Recorded {
    _dir: tempfile::TempDir,
    file: PathBuf,
    live_bytes: Vec<Vec<u8>>,
    record_ws: PathBuf,
}

/// Records a messages (SSE) call, a JSON call and a cut stream.
async fn record() -> Recorded {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws-record");
    std::fs::create_dir_all(&ws).unwrap();
    let srv = server(ws.display().to_string()).await;
    let inner: Arc<dyn Transport> = Arc::new(Reqwest(reqwest::Client::new()));
    let recorder = Recorder::new(inner, PathMap::workspace(&ws), vec![KEY.to_owned()]);
    let transport: Arc<dyn Transport> = Arc::new(recorder.clone());

    let mut live_bytes = Vec::new();
    let out = format!("$ ls {}\nsrc\nCargo.toml\n", ws.display());
    for path in ["/v1/messages", "/v1/json", "/v1/cut"] {
        let resp = transport
            .send(request(&srv.base, path, &ws, &out))
            .await
            .unwrap();
        let (bytes, err) = drain(resp).await;
        assert_eq!(err.is_some(), path == "/v1/cut", "{path}: {err:?}");
        live_bytes.push(bytes);
    }
    // The bytes reached the provider unchanged.
    let sent = srv.sent.lock().unwrap().clone();
    assert_eq!(live_bytes[..2], sent[..2]);
    // The server did get the key (the recorder forwards it; it just never writes it).
    assert!(srv.requests.lock().unwrap()[0].0.contains(KEY));

    let file = cassette_path(
        &dir.path().join("cassettes"),
        "fix-bug",
        "anthropic",
        "claude/test:1",
    );
    assert!(file.ends_with("cassettes/fix-bug/anthropic--claude_test_1.yaml"));
    assert_eq!(recorder.finish(header(), &file).unwrap(), file);
    Recorded {
        _dir: dir,
        file,
        live_bytes,
        record_ws: ws,
    }
}

#[tokio::test]
async fn record_write_read_and_replay() {
    let rec = record().await;
    let yaml = std::fs::read_to_string(&rec.file).unwrap();

    // Readable: block scalars for multi-line strings, structured events.
    assert!(yaml.contains("system: |\n"), "{yaml}");
    assert!(yaml.contains("content: |\n"), "{yaml}");
    assert!(yaml.contains("event: content_block_delta"), "{yaml}");
    assert!(yaml.contains("text: '[DONE]'"), "{yaml}");
    assert!(
        yaml.contains("end: completed") && yaml.contains("end: cut"),
        "{yaml}"
    );
    assert!(yaml.contains("kind: json"), "{yaml}");
    // No auth, no cookie, no key, no workspace path.
    for absent in [
        "x-api-key",
        "authorization",
        "set-cookie",
        KEY,
        rec.record_ws.to_str().unwrap(),
    ] {
        assert!(!yaml.contains(absent), "{absent} in\n{yaml}");
    }
    assert!(yaml.contains("Your workspace is /workspace."), "{yaml}");
    assert!(yaml.contains("anthropic-version: 2023-06-01"), "{yaml}");
    assert!(yaml.contains("request-id: req_fixed"), "{yaml}");
    // No temporary file left beside it.
    let siblings: Vec<_> = std::fs::read_dir(rec.file.parent().unwrap())
        .unwrap()
        .collect();
    assert_eq!(siblings.len(), 1);

    // Replay into a different workspace, with no server at all.
    let ws2 = rec
        .file
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("ws-replay-77");
    let player = Player::load(&rec.file, vec![], PathMap::workspace(&ws2)).unwrap();
    let transport: Arc<dyn Transport> = Arc::new(player.clone());
    let out = format!("$ ls {}\nsrc\nCargo.toml\n", ws2.display());
    let base = "https://unreachable.invalid";

    let (bytes, err) = drain(
        transport
            .send(request(base, "/v1/messages", &ws2, &out))
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(err, None);
    let live = String::from_utf8(rec.live_bytes[0].clone()).unwrap();
    let live = live.replace(rec.record_ws.to_str().unwrap(), ws2.to_str().unwrap());
    assert_eq!(events(&bytes), events(live.as_bytes()));
    assert_eq!(events(&bytes).len(), 4);

    let resp = transport
        .send(request(base, "/v1/json", &ws2, &out))
        .await
        .unwrap();
    assert_eq!(resp.header("content-type"), Some("application/json"));
    let (bytes, _) = drain(resp).await;
    assert_eq!(
        serde_json::from_slice::<Value>(&bytes).unwrap(),
        json!({"ok": true, "cwd": ws2.display().to_string()})
    );

    let (bytes, err) = drain(
        transport
            .send(request(base, "/v1/cut", &ws2, &out))
            .await
            .unwrap(),
    )
    .await;
    assert!(matches!(err, Some(TransportError::Body(_))), "{err:?}");
    assert_eq!(
        events(&bytes).len(),
        1,
        "the recorded complete event, then the cut"
    );

    assert_eq!(player.unused_interactions(), 0);
    assert_eq!(player.divergence(), None);
}

#[tokio::test]
async fn changed_request_diverges_with_index_path_and_diff() {
    let rec = record().await;
    let ws2 = rec.file.parent().unwrap().join("elsewhere");
    let player = Player::load(&rec.file, vec![], PathMap::workspace(&ws2)).unwrap();
    let transport: Arc<dyn Transport> = Arc::new(player.clone());
    let out = format!("$ ls {}\nsrc\nCargo.toml\n", ws2.display());
    let base = "http://127.0.0.1:9";
    transport
        .send(request(base, "/v1/messages", &ws2, &out))
        .await
        .unwrap();
    let changed = out.replace("Cargo.toml", "Cargo.lock");
    let err = transport
        .send(request(base, "/v1/json", &ws2, &changed))
        .await
        .err()
        .unwrap();
    let d = player.divergence().expect("a divergence");
    assert_eq!(d.interaction, 1);
    assert_eq!(d.total, 3);
    assert_eq!(d.what, "body.messages[1].content[0].content");
    // The changed tool output is diffed as text, line by line, with the workspace placeholder.
    assert!(
        d.diff
            .contains("--- recorded body.messages[1].content[0].content\n"),
        "{}",
        d.diff
    );
    assert!(d.diff.contains("\n $ ls /workspace\n"), "{}", d.diff);
    assert!(
        d.diff.contains("\n-Cargo.toml\n+Cargo.lock\n"),
        "{}",
        d.diff
    );
    let msg = err.to_string();
    assert!(
        msg.contains(
            "request 2 of 3 differs from the cassette at body.messages[1].content[0].content"
        ),
        "{msg}"
    );
    assert!(msg.contains(rec.file.to_str().unwrap()), "{msg}");
    assert_eq!(player.unused_interactions(), 2);
}

#[tokio::test]
async fn a_key_in_a_tool_output_refuses_the_write_and_keeps_the_old_file() {
    let rec = record().await;
    let before = std::fs::read(&rec.file).unwrap();

    let ws = rec.record_ws.clone();
    let srv = server(ws.display().to_string()).await;
    let inner: Arc<dyn Transport> = Arc::new(Reqwest(reqwest::Client::new()));
    let recorder = Recorder::new(inner, PathMap::workspace(&ws), vec![KEY.to_owned()]);
    let out = format!("$ env\nHOME=/root\nANTHROPIC_API_KEY={KEY}\n");
    drain(
        recorder
            .send(request(&srv.base, "/v1/json", &ws, "ok"))
            .await
            .unwrap(),
    )
    .await;
    drain(
        recorder
            .send(request(&srv.base, "/v1/messages", &ws, &out))
            .await
            .unwrap(),
    )
    .await;
    let err = recorder.finish(header(), &rec.file).unwrap_err();
    assert!(matches!(err, CassetteError::Secret { .. }));
    let msg = err.to_string();
    assert!(
        msg.contains("interaction 1 (request 2 of 2) request.body.messages[1].content[0].content"),
        "{msg}"
    );
    assert!(msg.contains("the value of an API key in use"), "{msg}");
    assert!(
        !msg.contains(KEY),
        "the message must not print the key: {msg}"
    );
    assert_eq!(
        std::fs::read(&rec.file).unwrap(),
        before,
        "existing file kept"
    );
    let siblings: Vec<_> = std::fs::read_dir(rec.file.parent().unwrap())
        .unwrap()
        .collect();
    assert_eq!(siblings.len(), 1, "no temporary file left");
}

#[test]
fn malformed_cassette_names_file_and_location() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.yaml");
    std::fs::write(
        &file,
        "format_version: 1\nharness_version: x\nrecorded_at: 2026-11-30T12:00:00Z\ntask: t\nprovider: p\nmodel: m\napi: anthropic-messages\ntool_profile: pi\nedit_strategy: e\nworkspace_placeholder: /workspace\ninteractions:\n- request:\n    method: POST\n    path: /v1/messages\n    body: {}\n  response:\n    status: 200\n    body:\n      kind: sse\n      events: []\n      end: finished\n",
    )
    .unwrap();
    let err = Player::load(&file, vec![], PathMap::workspace(dir.path()))
        .err()
        .unwrap();
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!(
            "failed to parse cassette `{}` at line ",
            file.display()
        )),
        "{msg}"
    );
    assert!(msg.contains("finished"), "{msg}");

    std::fs::write(&file, "format_version: 1\ninteractions: [\n").unwrap();
    let msg = Player::load(&file, vec![], PathMap::workspace(dir.path()))
        .err()
        .unwrap()
        .to_string();
    assert!(msg.contains("bad.yaml") && msg.contains("line "), "{msg}");
}

#[tokio::test]
async fn snapshot_of_a_small_cassette() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let srv = server(ws.display().to_string()).await;
    let inner: Arc<dyn Transport> = Arc::new(Reqwest(reqwest::Client::new()));
    let recorder = Recorder::new(inner, PathMap::workspace(&ws), vec![KEY.to_owned()]);
    let out = format!("$ cat {}/NOTES\nfirst line\nsecond line\n", ws.display());
    drain(
        recorder
            .send(request(&srv.base, "/v1/messages", &ws, &out))
            .await
            .unwrap(),
    )
    .await;
    let file = dir.path().join("c.yaml");
    recorder.finish(header(), &file).unwrap();
    insta::assert_snapshot!(std::fs::read_to_string(&file).unwrap());
}

mod through_providers {
    //! The real providers over Recorder(LiveTransport) against the scripted model server, then
    //! over Player with no server: the same replies, the same failure, and a divergence.

    use std::path::Path;
    use std::sync::Arc;

    use harness::cassettes::{CassetteHeader, Player, Recorder};
    use harness::conversation::{
        AssistantMessage, Content, Context, Message, ToolResultMessage, UserContent,
    };
    use harness::providers::live::{LiveTransport, LiveTransportConfig};
    use harness::providers::transport::Transport;
    use harness::providers::{ApiKind, ModelSpec, Provider, ProviderError, RequestOptions, build};
    use harness::testkit::{self, parse_script};
    use harness::tools::definitions::pi_definition;

    const SCRIPT: &str = r#"
turns:
  - text: "Let me look at the file."
    tool_calls:
      - name: read
        arguments: {path: src/lib.rs}
  - text: "The bug is on line 2.\nI will fix it."
  - text: "a reply that never finishes arriving"
    fault: {cut_after_events: 3}
"#;

    fn spec(api: ApiKind, base_url: String) -> ModelSpec {
        ModelSpec {
            provider: "p".into(),
            api,
            model: "m-1".into(),
            base_url,
            api_key: Some("sk-test-not-a-real-key-0123456789".into()),
            headers: vec![],
        }
    }

    /// Three requests: a tool call, a text reply after the tool result, then a cut stream.
    async fn conversation(
        p: &dyn Provider,
        ws: &Path,
        tool_output: &str,
    ) -> Vec<Result<AssistantMessage, ProviderError>> {
        let mut ctx = Context {
            system_prompt: Some(format!("You work in {}.\nBe brief.", ws.display())),
            messages: vec![Message::User {
                content: UserContent::Text("fix the bug".into()),
            }],
            tools: vec![pi_definition("read")],
        };
        let opts = RequestOptions::default();
        let mut out = Vec::new();
        let first = p.complete(&ctx, &opts).await;
        let Ok(first_msg) = first.clone() else {
            return vec![first];
        };
        out.push(first);
        let call = first_msg.tool_calls().next().expect("a tool call").clone();
        ctx.messages.push(Message::Assistant(first_msg));
        ctx.messages.push(Message::ToolResult(ToolResultMessage {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            content: vec![Content::Text {
                text: format!("{}/src/lib.rs:\n{tool_output}", ws.display()),
            }],
            is_error: false,
        }));
        let second = p.complete(&ctx, &opts).await;
        let Ok(second_msg) = second.clone() else {
            out.push(second);
            return out;
        };
        out.push(second);
        ctx.messages.push(Message::Assistant(second_msg));
        ctx.messages.push(Message::User {
            content: UserContent::Text("go on".into()),
        });
        out.push(p.complete(&ctx, &opts).await);
        out
    }

    #[tokio::test]
    async fn record_then_replay_both_apis() {
        for api in [ApiKind::AnthropicMessages, ApiKind::OpenaiCompletions] {
            let dir = tempfile::tempdir().unwrap();
            let ws = dir.path().join("ws-live");
            std::fs::create_dir_all(&ws).unwrap();
            let server = testkit::start(parse_script(SCRIPT, "inline.yaml").unwrap(), api).await;
            let live: Arc<dyn Transport> = Arc::new(
                LiveTransport::with_config(LiveTransportConfig {
                    use_system_proxy: false,
                    ..Default::default()
                })
                .unwrap(),
            );
            let base_url = server.base_url();
            let s = spec(api, base_url.clone());
            let key = s.api_key.clone().unwrap();
            let recorder = Recorder::new(
                live,
                harness::cassettes::normalize::PathMap::workspace(&ws),
                vec![key.clone()],
            );
            let p = build(s, Arc::new(recorder.clone()));
            let recorded = conversation(p.as_ref(), &ws, "fn add() {}").await;
            assert_eq!(recorded.len(), 3, "{api:?}: {recorded:?}");
            assert!(
                matches!(recorded[2], Err(ProviderError::StreamCut { .. })),
                "{api:?}: {:?}",
                recorded[2]
            );

            let file = dir.path().join("c.yaml");
            let header = CassetteHeader::new("t", "p", "m-1", api, "pi", "replace");
            recorder.finish(header, &file).unwrap();
            let yaml = std::fs::read_to_string(&file).unwrap();
            assert!(
                !yaml.contains(&key) && !yaml.contains(ws.to_str().unwrap()),
                "{yaml}"
            );
            assert!(yaml.contains("end: cut"), "{yaml}");

            // Replay in another workspace, the server gone (same base URL: its path is compared).
            drop(server);
            let ws2 = dir.path().join("ws-replay");
            let player = Player::load(
                &file,
                vec![],
                harness::cassettes::normalize::PathMap::workspace(&ws2),
            )
            .unwrap();
            let p = build(spec(api, base_url.clone()), Arc::new(player.clone()));
            let replayed = conversation(p.as_ref(), &ws2, "fn add() {}").await;
            assert_eq!(
                format!("{replayed:?}"),
                format!("{recorded:?}"),
                "{api:?}: replay gives the same replies and the same cut"
            );
            assert_eq!(
                (player.divergence(), player.unused_interactions()),
                (None, 0)
            );

            // A changed tool output diverges at the second request.
            let player = Player::load(
                &file,
                vec![],
                harness::cassettes::normalize::PathMap::workspace(&ws2),
            )
            .unwrap();
            let p = build(spec(api, base_url.clone()), Arc::new(player.clone()));
            let diverged = conversation(p.as_ref(), &ws2, "fn add() { 1 }").await;
            assert!(
                matches!(diverged[1], Err(ProviderError::Cassette(_))),
                "{api:?}: {diverged:?}"
            );
            let d = player.divergence().unwrap();
            assert_eq!((d.interaction, d.total), (1, 3));
            assert!(d.what.starts_with("body.messages["), "{api:?}: {}", d.what);
            assert!(d.diff.contains("fn add() { 1 }"), "{}", d.diff);
            assert_eq!(player.unused_interactions(), 2);
        }
    }
}
