//! The real providers over the live (reqwest) transport against the scripted model server on
//! 127.0.0.1, for all four wire formats; and the request bodies compared with Pi's captured ones.

use std::sync::Arc;
use std::time::Duration;

use harness::conversation::{
    AssistantBlock, AssistantMessage, Content, Context, Message, StopReason, ToolCall,
    ToolResultMessage, Usage, UserContent,
};
use harness::providers::live::{LiveTransport, LiveTransportConfig};
use harness::providers::{
    ApiKind, ModelSpec, Provider, ProviderError, ProviderSettings, RequestOptions, build_with,
};
use harness::testkit::{self, ScriptedServer, parse_script};
use harness::tools::definitions::pi_definition;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const ALL: [ApiKind; 4] = [
    ApiKind::AnthropicMessages,
    ApiKind::OpenaiCompletions,
    ApiKind::OpenaiResponses,
    ApiKind::GoogleGenerativeAi,
];

pub(super) fn spec(api: ApiKind, base_url: String) -> ModelSpec {
    let (provider, model) = match api {
        ApiKind::AnthropicMessages => ("anthropic", "claude-test"),
        ApiKind::OpenaiCompletions => ("openai", "gpt-test"),
        ApiKind::OpenaiResponses => ("openai", "gpt-resp-test"),
        ApiKind::GoogleGenerativeAi => ("google", "gemini-2.5-flash"),
    };
    ModelSpec {
        provider: provider.into(),
        api,
        model: model.into(),
        base_url,
        api_key: Some("test-key".into()),
        headers: vec![],
    }
}

pub(super) fn transport() -> Arc<LiveTransport> {
    Arc::new(
        LiveTransport::with_config(LiveTransportConfig {
            use_system_proxy: false,
            ..Default::default()
        })
        .expect("http client"),
    )
}

pub(super) async fn serve(api: ApiKind, yaml: &str) -> ScriptedServer {
    let script = parse_script(yaml, "inline.yaml").expect("valid script");
    testkit::start(script, api).await
}

pub(super) fn provider(api: ApiKind, server: &ScriptedServer, idle: Duration) -> Arc<dyn Provider> {
    build_with(
        spec(api, server.base_url()),
        transport(),
        ProviderSettings {
            idle_timeout: idle,
            ..Default::default()
        },
    )
}

pub(super) fn hello() -> Context {
    Context {
        system_prompt: Some("You are a test.".into()),
        messages: vec![Message::User {
            content: UserContent::Text("hello".into()),
        }],
        tools: vec![pi_definition("read"), pi_definition("bash")],
    }
}

/// Runs one request of `yaml`'s first turn and returns the result and the server.
pub(super) async fn one(
    api: ApiKind,
    yaml: &str,
) -> (Result<AssistantMessage, ProviderError>, ScriptedServer) {
    let server = serve(api, yaml).await;
    let p = provider(api, &server, Duration::from_secs(10));
    let result = p.complete(&hello(), &RequestOptions::default()).await;
    (result, server)
}

#[tokio::test]
async fn text_reply() {
    for api in ALL {
        let (r, server) = one(
            api,
            "turns:\n  - text: \"Hello there, this reply is streamed in several deltas.\"\n",
        )
        .await;
        let m = r.unwrap();
        assert_eq!(
            m.text(),
            "Hello there, this reply is streamed in several deltas."
        );
        assert_eq!(m.content.len(), 1, "{api:?}: one text block");
        assert_eq!(m.stop_reason, StopReason::Stop);
        assert_eq!(m.api, api.as_str());
        assert!(m.usage.output > 0 && m.usage.input > 0, "{:?}", m.usage);
        let reqs = server.requests();
        assert_eq!(reqs.len(), 1);
        match api {
            ApiKind::AnthropicMessages => {
                assert_eq!(reqs[0].path, "/v1/messages");
                assert_eq!(reqs[0].header("x-api-key"), Some("test-key"));
                assert_eq!(reqs[0].header("anthropic-version"), Some("2023-06-01"));
                assert_eq!(m.response_id.as_deref(), Some("msg_01"));
            }
            ApiKind::OpenaiCompletions => {
                assert_eq!(reqs[0].path, "/v1/chat/completions");
                assert_eq!(reqs[0].header("authorization"), Some("Bearer test-key"));
                assert_eq!(m.response_id.as_deref(), Some("chatcmpl-01"));
            }
            ApiKind::OpenaiResponses => {
                assert_eq!(reqs[0].path, "/v1/responses");
                assert_eq!(reqs[0].header("authorization"), Some("Bearer test-key"));
                assert_eq!(m.response_id.as_deref(), Some("resp_01"));
                assert_eq!(
                    m.content[0],
                    AssistantBlock::Text {
                        text: m.text(),
                        signature: Some("{\"v\":1,\"id\":\"msg_01\"}".into())
                    }
                );
            }
            ApiKind::GoogleGenerativeAi => {
                assert_eq!(
                    reqs[0].path,
                    "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
                );
                assert_eq!(reqs[0].header("x-goog-api-key"), Some("test-key"));
                assert_eq!(m.response_id.as_deref(), Some("gen_01"));
            }
        }
        if api != ApiKind::GoogleGenerativeAi {
            assert_eq!(reqs[0].body["model"], m.model);
        }
    }
}

#[tokio::test]
async fn several_tool_calls_in_one_reply_and_ids_numbered_across_the_script() {
    let yaml = r#"
turns:
  - text: "I'll look around."
    tool_calls:
      - name: read
        arguments: {path: tests/test_calc.py}
      - name: bash
        arguments: {command: "ls -la && echo \"done\""}
      - name: edit
        arguments: {path: a.txt, edits: [{oldText: "a", newText: "b\nc"}]}
  - tool_calls:
      - name: read
        arguments: {path: b.txt, offset: 3}
"#;
    for api in ALL {
        let server = serve(api, yaml).await;
        let p = provider(api, &server, Duration::from_secs(10));
        let first = p
            .complete(&hello(), &RequestOptions::default())
            .await
            .unwrap();
        let second = p
            .complete(&hello(), &RequestOptions::default())
            .await
            .unwrap();
        // The ids each API gives (Gemini gives none: ours are `${name}_${n}`).
        let id = |no: usize, name: &str| match api {
            ApiKind::AnthropicMessages => format!("toolu_{no:02}"),
            ApiKind::OpenaiCompletions => format!("call_{no:02}"),
            ApiKind::OpenaiResponses => format!("call_{no:02}|fc_{no:02}"),
            ApiKind::GoogleGenerativeAi => format!("{name}_{no}"),
        };
        let calls: Vec<ToolCall> = first.tool_calls().cloned().collect();
        assert_eq!(
            calls,
            vec![
                ToolCall {
                    id: id(1, "read"),
                    name: "read".into(),
                    arguments: json!({"path": "tests/test_calc.py"}),
                    thought_signature: None,
                },
                ToolCall {
                    id: id(2, "bash"),
                    name: "bash".into(),
                    arguments: json!({"command": "ls -la && echo \"done\""}),
                    thought_signature: None,
                },
                ToolCall {
                    id: id(3, "edit"),
                    name: "edit".into(),
                    arguments: json!({"path": "a.txt", "edits": [{"oldText": "a", "newText": "b\nc"}]}),
                    thought_signature: None,
                },
            ]
        );
        assert_eq!(first.text(), "I'll look around.");
        assert_eq!(first.stop_reason, StopReason::ToolUse);
        let second_calls: Vec<ToolCall> = second.tool_calls().cloned().collect();
        assert_eq!(second_calls[0].id, id(4, "read"));
        assert_eq!(
            second_calls[0].arguments,
            json!({"path": "b.txt", "offset": 3})
        );
        assert_eq!(server.turns_served(), 2);
    }
}

#[tokio::test]
async fn thinking_is_kept_with_its_signature() {
    for api in ALL {
        let (r, _s) = one(api, "turns:\n  - thinking: \"The user greets me; I should answer briefly.\"\n    text: Hi.\n").await;
        let m = r.unwrap();
        let thinking = "The user greets me; I should answer briefly.";
        let (signature, text_signature) = match api {
            ApiKind::AnthropicMessages => ("sig_01".to_owned(), None),
            ApiKind::OpenaiCompletions => ("reasoning_content".to_owned(), None),
            // The reasoning item as the server sent it in `response.output_item.done`.
            ApiKind::OpenaiResponses => (
                json!({"type": "reasoning", "id": "rs_01",
                       "summary": [{"type": "summary_text", "text": thinking}],
                       "encrypted_content": "enc_01"})
                .to_string(),
                Some("{\"v\":1,\"id\":\"msg_01\"}".to_owned()),
            ),
            ApiKind::GoogleGenerativeAi => ("c2lnXzAx".to_owned(), None),
        };
        assert_eq!(
            m.content,
            vec![
                AssistantBlock::Thinking {
                    thinking: thinking.into(),
                    signature: Some(signature),
                    redacted: false,
                },
                AssistantBlock::Text {
                    text: "Hi.".into(),
                    signature: text_signature
                },
            ],
            "{api:?}"
        );
    }
}

#[tokio::test]
async fn usage_with_cache_figures() {
    for api in ALL {
        let (r, _s) = one(
            api,
            "turns:\n  - text: ok\n    usage: {input: 100, output: 42, cache_read: 20, cache_write: 5}\n",
        )
        .await;
        // Responses and Gemini know no cache writes: they arrive as plain input.
        let (input, cache_write) = match api {
            ApiKind::AnthropicMessages | ApiKind::OpenaiCompletions => (100, 5),
            ApiKind::OpenaiResponses | ApiKind::GoogleGenerativeAi => (105, 0),
        };
        assert_eq!(
            r.unwrap().usage,
            Usage {
                input,
                output: 42,
                cache_read: 20,
                cache_write,
                total_tokens: 167
            },
            "{api:?}"
        );
        // Synthetic figures: the second request reads the first one's prompt from the cache.
        let server = serve(api, "turns:\n  - text: one\n  - text: two\n").await;
        let p = provider(api, &server, Duration::from_secs(10));
        let a = p
            .complete(&hello(), &RequestOptions::default())
            .await
            .unwrap();
        let b = p
            .complete(&hello(), &RequestOptions::default())
            .await
            .unwrap();
        assert_eq!(a.usage.cache_read, 0, "{api:?}");
        let prompt = a.usage.input + a.usage.cache_read + a.usage.cache_write;
        assert_eq!(b.usage.cache_read, prompt, "{api:?} {a:?} {b:?}");
        assert_eq!(
            b.usage.total_tokens,
            b.usage.input + b.usage.output + b.usage.cache_read + b.usage.cache_write
        );
    }
}

#[tokio::test]
async fn stop_reasons() {
    for api in ALL {
        let (r, _s) = one(
            api,
            "turns:\n  - text: cut short\n    stop_reason: length\n",
        )
        .await;
        assert_eq!(r.unwrap().stop_reason, StopReason::Length);
    }
    let (r, _s) = one(
        ApiKind::AnthropicMessages,
        "turns:\n  - text: no\n    stop_reason: refusal\n",
    )
    .await;
    let m = r.unwrap();
    assert_eq!(m.stop_reason, StopReason::Error);
    assert_eq!(
        m.error_message.as_deref(),
        Some("An unknown error occurred")
    );
    let (r, _s) = one(
        ApiKind::AnthropicMessages,
        "turns:\n  - text: what\n    stop_reason: bogus_reason\n",
    )
    .await;
    assert_eq!(
        r.unwrap_err(),
        ProviderError::Protocol {
            message: "Unhandled stop reason: bogus_reason".into()
        }
    );
    let (r, _s) = one(
        ApiKind::OpenaiCompletions,
        "turns:\n  - text: no\n    stop_reason: content_filter\n",
    )
    .await;
    let m = r.unwrap();
    assert_eq!(m.stop_reason, StopReason::Error);
    assert_eq!(
        m.error_message.as_deref(),
        Some("Provider finish_reason: content_filter")
    );
}

#[tokio::test]
async fn a_cut_stream_is_a_stream_cut() {
    for api in ALL {
        let (r, _s) = one(
            api,
            "turns:\n  - text: \"a long reply that will never finish arriving\"\n    fault: {cut_after_events: 3}\n",
        )
        .await;
        let err = r.unwrap_err();
        assert!(
            matches!(err, ProviderError::StreamCut { .. }),
            "{api:?}: {err:?}"
        );
        assert!(err.is_retryable());
    }
}

#[tokio::test]
async fn a_stalled_stream_times_out() {
    for api in ALL {
        let server = serve(
            api,
            "turns:\n  - text: \"a reply that stops halfway\"\n    fault: {stall_after_events: 2}\n",
        )
        .await;
        let p = provider(api, &server, Duration::from_millis(300));
        let started = std::time::Instant::now();
        let err = p
            .complete(&hello(), &RequestOptions::default())
            .await
            .unwrap_err();
        assert_eq!(
            err,
            ProviderError::StreamStalled {
                idle: Duration::from_millis(300)
            },
            "{api:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}

#[tokio::test]
async fn http_errors_are_typed() {
    for api in ALL {
        let (r, _s) = one(
            api,
            "turns:\n  - fault: {status: 500, body: \"internal trouble\"}\n",
        )
        .await;
        assert_eq!(
            r.unwrap_err(),
            ProviderError::Server {
                status: 500,
                message: "internal trouble".into()
            }
        );
        let (r, _s) = one(api, "turns:\n  - fault: {status: 429, retry_after: 1}\n").await;
        match r.unwrap_err() {
            ProviderError::RateLimited {
                status,
                message,
                retry_after,
            } => {
                assert_eq!(status, 429);
                assert_eq!(retry_after, Some(Duration::from_secs(1)));
                let kind = match api {
                    ApiKind::GoogleGenerativeAi => "RESOURCE_EXHAUSTED",
                    _ => "rate_limit_error",
                };
                assert!(message.contains(kind), "{message}");
            }
            other => panic!("{api:?}: {other:?}"),
        }
        let (r, _s) = one(api, "turns:\n  - fault: {status: 401}\n").await;
        let err = r.unwrap_err();
        assert_eq!(err.kind(), "authentication", "{err:?}");
        assert!(!err.is_retryable());
        let (r, _s) = one(
            api,
            "turns:\n  - fault: {status: 400, body: \"prompt is too long: 250000 tokens > 200000 maximum\"}\n",
        )
        .await;
        assert_eq!(r.unwrap_err().kind(), "context_too_long");
    }
}

#[tokio::test]
async fn running_out_of_script_is_an_invalid_request_naming_the_turn() {
    let (_, server) = one(ApiKind::AnthropicMessages, "turns:\n  - text: only one\n").await;
    let p = provider(ApiKind::AnthropicMessages, &server, Duration::from_secs(5));
    let err = p
        .complete(&hello(), &RequestOptions::default())
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("request 2 has no turn left"),
        "{err}"
    );
}

#[tokio::test]
async fn a_closed_port_is_a_connection_error() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    for api in ALL {
        let err = hello_fails(api, format!("http://127.0.0.1:{port}")).await;
        assert_eq!(err.kind(), "connection_failed", "{err:?}");
    }
}

/// The error of a live provider of `api` at `base_url` asked to answer [`hello`].
async fn hello_fails(api: ApiKind, base_url: String) -> ProviderError {
    build_with(
        spec(api, base_url),
        transport(),
        ProviderSettings::default(),
    )
    .complete(&hello(), &RequestOptions::default())
    .await
    .unwrap_err()
}

// ---------------------------------------------------------------------------------------------
// Request bodies: the capture's history, rebuilt in Rust, must give Pi's captured bodies.

pub(super) const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==";

pub(super) fn capture() -> Value {
    serde_json::from_str(include_str!("fixtures/pi-provider-capture.json")).unwrap()
}

/// An assistant message from another model (OpenAI Responses), so ids get normalised.
pub(super) fn foreign_assistant(content: Vec<AssistantBlock>) -> Message {
    Message::Assistant(AssistantMessage {
        content,
        api: "openai-responses".into(),
        provider: "openai".into(),
        model: "gpt-resp-other".into(),
        usage: Usage::default(),
        stop_reason: StopReason::ToolUse,
        error_message: None,
        response_id: None,
    })
}

pub(super) fn call(id: &str, name: &str, arguments: Value) -> AssistantBlock {
    AssistantBlock::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
        thought_signature: None,
    })
}

pub(super) fn result(id: &str, name: &str, content: Vec<Content>, is_error: bool) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: name.into(),
        content,
        is_error,
    })
}

/// The history of `pi-provider-capture.json`: tool calls, an image tool result, a tool error and
/// a foreign-provider tool id.
pub(super) fn capture_context() -> Context {
    Context {
        system_prompt: Some("You are a test.".into()),
        messages: vec![
            Message::User {
                content: UserContent::Text("Read a.txt please".into()),
            },
            foreign_assistant(vec![
                AssistantBlock::Text {
                    text: "I'll read two files.".into(),
                    signature: None,
                },
                call("call_A", "read", json!({"path": "a.txt"})),
                call("call_B", "read", json!({"path": "img.png"})),
            ]),
            result("call_A", "read", vec![Content::text("line1\nline2")], false),
            result(
                "call_B",
                "read",
                vec![
                    Content::text("Read image file [image/png]"),
                    Content::Image {
                        data: PNG.into(),
                        mime_type: "image/png".into(),
                    },
                ],
                false,
            ),
            foreign_assistant(vec![call(
                "call_Z9|fc_ABC+/=very/long==",
                "edit",
                json!({"path": "a.txt", "edits": [{"oldText": "a", "newText": "b"}]}),
            )]),
            result(
                "call_Z9|fc_ABC+/=very/long==",
                "edit",
                vec![Content::text("Could not find the exact text in a.txt.")],
                true,
            ),
            Message::User {
                content: UserContent::Blocks(vec![Content::text("now continue")]),
            },
        ],
        tools: vec![pi_definition("read"), pi_definition("edit")],
    }
}

/// Sends the capture's context through the real provider and returns what the server got.
async fn sent_for_capture(api: ApiKind) -> harness::testkit::ReceivedRequest {
    let server = serve(api, "turns:\n  - text: Reading.\n").await;
    let p = provider(api, &server, Duration::from_secs(10));
    let options = RequestOptions {
        max_tokens: 32000,
        ..RequestOptions::default()
    };
    p.complete(&capture_context(), &options).await.unwrap();
    server.requests().remove(0)
}

#[tokio::test]
async fn anthropic_body_equals_pis_captured_body() {
    let sent = sent_for_capture(ApiKind::AnthropicMessages).await;
    let cap = &capture()["anthropic-messages"]["request"];
    assert_eq!(sent.body, cap["body"]);
    // Same bytes, key order included.
    assert_eq!(
        serde_json::to_string(&sent.body).unwrap(),
        serde_json::to_string(&cap["body"]).unwrap()
    );
    for name in [
        "anthropic-version",
        "x-api-key",
        "accept",
        "anthropic-dangerous-direct-browser-access",
        "anthropic-beta",
        "content-type",
    ] {
        assert_eq!(
            sent.header(name),
            cap["headers"][name].as_str(),
            "header {name}"
        );
    }
    insta::assert_json_snapshot!("anthropic_request_body", sent.body);
}

#[tokio::test]
async fn openai_body_equals_pis_captured_body() {
    let sent = sent_for_capture(ApiKind::OpenaiCompletions).await;
    let cap = &capture()["openai-completions"]["request"];
    assert_eq!(sent.body, cap["body"]);
    assert_eq!(
        serde_json::to_string(&sent.body).unwrap(),
        serde_json::to_string(&cap["body"]).unwrap()
    );
    for name in ["accept", "authorization", "content-type"] {
        assert_eq!(
            sent.header(name),
            cap["headers"][name].as_str(),
            "header {name}"
        );
    }
    insta::assert_json_snapshot!("openai_request_body", sent.body);
}

#[tokio::test]
async fn the_captured_final_messages_are_reproduced() {
    // Pi's replies to the capture (text + one read call, usage 100/42/20/5 or 100 with 20 cached).
    let yaml = "turns:\n  - text: Reading.\n    tool_calls:\n      - name: read\n        arguments: {path: a.txt}\n    usage: {input: 100, output: 42, cache_read: 20, cache_write: 5}\n";
    let server = serve(ApiKind::AnthropicMessages, yaml).await;
    let p = provider(ApiKind::AnthropicMessages, &server, Duration::from_secs(5));
    let m = p
        .complete(&capture_context(), &RequestOptions::default())
        .await
        .unwrap();
    let fin = &capture()["anthropic-messages"]["final"];
    assert_eq!(
        m.usage.total_tokens,
        fin["usage"]["totalTokens"].as_u64().unwrap()
    );
    assert_eq!(m.text(), fin["content"][0]["text"].as_str().unwrap());
    assert_eq!(
        m.tool_calls().next().unwrap().arguments,
        fin["content"][1]["arguments"]
    );
    assert_eq!(m.stop_reason, StopReason::ToolUse);

    let yaml = "turns:\n  - text: Reading.\n    tool_calls:\n      - name: read\n        arguments: {path: a.txt}\n    usage: {input: 80, output: 42, cache_read: 20}\n";
    let server = serve(ApiKind::OpenaiCompletions, yaml).await;
    let p = provider(ApiKind::OpenaiCompletions, &server, Duration::from_secs(5));
    let m = p
        .complete(&capture_context(), &RequestOptions::default())
        .await
        .unwrap();
    let fin = &capture()["openai-completions"]["final"];
    assert_eq!(m.usage.input, fin["usage"]["input"].as_u64().unwrap());
    assert_eq!(
        m.usage.cache_read,
        fin["usage"]["cacheRead"].as_u64().unwrap()
    );
    assert_eq!(
        m.usage.total_tokens,
        fin["usage"]["totalTokens"].as_u64().unwrap()
    );
    assert_eq!(m.stop_reason, StopReason::ToolUse);
}

#[test]
fn every_shipped_script_loads() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let script = harness::testkit::load_script(&path).unwrap_or_else(|e| panic!("{e}"));
            assert!(!script.turns.is_empty(), "{}", path.display());
            count += 1;
        }
    }
    assert!(count > 0, "no scripts in {}", dir.display());
}

#[tokio::test]
async fn a_reply_is_replayed_to_the_same_model_with_its_thinking_and_ids() {
    let yaml = "turns:\n  - thinking: Check the file.\n    text: Reading.\n    tool_calls:\n      - name: read\n        arguments: {path: a.txt}\n  - text: Done.\n";
    for api in ALL {
        let server = serve(api, yaml).await;
        let p = provider(api, &server, Duration::from_secs(10));
        let mut ctx = hello();
        let first = p.complete(&ctx, &RequestOptions::default()).await.unwrap();
        let id = first.tool_calls().next().unwrap().id.clone();
        ctx.messages.push(Message::Assistant(first));
        ctx.messages
            .push(result(&id, "read", vec![Content::text("x")], false));
        let second = p.complete(&ctx, &RequestOptions::default()).await.unwrap();
        assert_eq!(second.text(), "Done.");
        let body = &server.requests()[1].body;
        match api {
            ApiKind::AnthropicMessages => {
                assert_eq!(
                    body["messages"][1],
                    json!({"role": "assistant", "content": [
                        {"type": "thinking", "thinking": "Check the file.", "signature": "sig_01"},
                        {"type": "text", "text": "Reading."},
                        {"type": "tool_use", "id": "toolu_01", "name": "read", "input": {"path": "a.txt"}},
                    ]})
                );
                assert_eq!(
                    body["messages"][2],
                    json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01",
                        "content": "x", "is_error": false, "cache_control": {"type": "ephemeral"}}]})
                );
            }
            ApiKind::OpenaiCompletions => {
                assert_eq!(
                    body["messages"][2],
                    json!({"role": "assistant", "content": "Reading.",
                        "reasoning_content": "Check the file.",
                        "tool_calls": [{"id": "call_01", "type": "function",
                            "function": {"name": "read", "arguments": "{\"path\":\"a.txt\"}"}}]})
                );
                assert_eq!(
                    body["messages"][3],
                    json!({"role": "tool", "content": "x", "tool_call_id": "call_01"})
                );
            }
            ApiKind::OpenaiResponses => {
                let input = body["input"].as_array().unwrap();
                assert_eq!(
                    input[2..].to_vec(),
                    vec![
                        json!({"type": "reasoning", "id": "rs_01",
                            "summary": [{"type": "summary_text", "text": "Check the file."}],
                            "encrypted_content": "enc_01"}),
                        json!({"type": "message", "role": "assistant",
                            "content": [{"type": "output_text", "text": "Reading.", "annotations": []}],
                            "status": "completed", "id": "msg_01"}),
                        json!({"type": "function_call", "id": "fc_01", "call_id": "call_01",
                            "name": "read", "arguments": "{\"path\":\"a.txt\"}"}),
                        json!({"type": "function_call_output", "call_id": "call_01", "output": "x"}),
                    ]
                );
            }
            ApiKind::GoogleGenerativeAi => {
                assert_eq!(
                    body["contents"],
                    json!([
                        {"parts": [{"text": "hello"}], "role": "user"},
                        {"parts": [
                            {"thought": true, "thoughtSignature": "c2lnXzAx", "text": "Check the file."},
                            {"text": "Reading."},
                            // The call's own signature (base64 of `fsig_01`), echoed as Pi does.
                            {"functionCall": {"args": {"path": "a.txt"}, "name": "read"},
                             "thoughtSignature": "ZnNpZ18wMQ=="},
                        ], "role": "model"},
                        {"parts": [{"functionResponse": {"name": "read", "response": {"output": "x"}}}],
                         "role": "user"},
                    ])
                );
            }
        }
    }
}

/// A local HTTP/1.1 server that answers every request with status 200, `content_type` and
/// `body_chunk` repeated `repeats` times (chunked), then closes the connection.
async fn raw_server(content_type: &'static str, body_chunk: Vec<u8>, repeats: usize) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let chunk = body_chunk.clone();
            tokio::spawn(async move {
                // The request: headers, then the body its content-length gives.
                let mut got = Vec::new();
                let mut buf = [0u8; 8192];
                loop {
                    let n = conn.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    got.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&got).to_ascii_lowercase();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        if got.len() >= end + 4 + length {
                            break;
                        }
                    }
                }
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
                );
                if conn.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for _ in 0..repeats {
                    let frame = [
                        format!("{:x}\r\n", chunk.len()).into_bytes(),
                        chunk.clone(),
                        b"\r\n".to_vec(),
                    ]
                    .concat();
                    if conn.write_all(&frame).await.is_err() {
                        return;
                    }
                }
                let _ = conn.write_all(b"0\r\n\r\n").await;
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn a_success_that_is_not_an_event_stream_is_a_protocol_error_that_says_what_came() {
    // A server that ignores `stream: true` and answers one JSON reply, or a base URL that leads
    // to a web page: said at once, not retried as a cut stream.
    for (content_type, body, says) in [
        (
            "application/json",
            br#"{"choices":[{"message":{"content":"hi"}}]}"#.to_vec(),
            r#"`application/json`, not an event stream"#,
        ),
        (
            "text/html; charset=utf-8",
            b"<html>Sign in</html>".to_vec(),
            "`text/html`, not an event stream",
        ),
    ] {
        let base = raw_server(content_type, body, 1).await;
        for api in ALL {
            let err = hello_fails(api, base.clone()).await;
            assert_eq!(err.kind(), "protocol", "{api:?}: {err}");
            let message = err.to_string();
            assert!(message.contains(says), "{api:?}: {message}");
            assert!(
                message.contains("Sign in") || message.contains(r#""content":"hi""#),
                "{api:?}: the body's start is shown: {message}"
            );
        }
    }
}

#[tokio::test]
async fn an_event_that_never_ends_is_cut_at_a_bound_not_held_whole() {
    // 1 MiB chunks of one line without an end, typed as an event stream: read to the bound of
    // one event (64 MiB), then a protocol error; without it the harness held all of it.
    let base = raw_server("text/event-stream", vec![b'a'; 1 << 20], 200).await;
    let err = hello_fails(ApiKind::OpenaiCompletions, base).await;
    assert_eq!(err.kind(), "protocol", "{err}");
    assert!(
        err.to_string()
            .contains("more than 64 MiB without ending an event"),
        "{err}"
    );
}
