//! OpenAI Responses and Gemini against Pi's captured requests, their stop reasons end to end over
//! the live transport, and the thinking settings of all four wire formats.

use std::time::Duration;

use harness::conversation::{AssistantBlock, Context, Message, StopReason, UserContent};
use harness::providers::{ApiKind, ProviderError, RequestOptions, ThinkingLevel};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::providers::{capture, capture_context, one, provider, serve};

/// Sends the capture's context with Pi's options of the capture (32000 tokens, session `sess-1`)
/// and returns what the server got.
async fn sent_for_capture(api: ApiKind) -> harness::testkit::ReceivedRequest {
    let server = serve(api, "turns:\n  - text: Reading.\n").await;
    let p = provider(api, &server, Duration::from_secs(10));
    let options = RequestOptions {
        max_tokens: 32000,
        session_id: Some("sess-1".into()),
        ..RequestOptions::default()
    };
    p.complete(&capture_context(), &options).await.unwrap();
    server.requests().remove(0)
}

fn assert_same_bytes(sent: &Value, captured: &Value) {
    assert_eq!(sent, captured);
    // Same bytes, key order included.
    assert_eq!(
        serde_json::to_string(sent).unwrap(),
        serde_json::to_string(captured).unwrap()
    );
}

#[tokio::test]
async fn responses_body_equals_pis_captured_body() {
    let sent = sent_for_capture(ApiKind::OpenaiResponses).await;
    let cap = &capture()["openai-responses"]["request"];
    assert_same_bytes(&sent.body, &cap["body"]);
    assert_eq!(sent.path, "/v1/responses");
    for name in [
        "accept",
        "authorization",
        "session_id",
        "x-client-request-id",
        "content-type",
    ] {
        assert_eq!(
            sent.header(name),
            cap["headers"][name].as_str(),
            "header {name}"
        );
    }
    insta::assert_json_snapshot!("responses_request_body", sent.body);
}

#[tokio::test]
async fn gemini_body_equals_pis_captured_body() {
    let sent = sent_for_capture(ApiKind::GoogleGenerativeAi).await;
    let cap = &capture()["google-generative-ai"]["request"];
    assert_same_bytes(&sent.body, &cap["body"]);
    assert_eq!(
        sent.path,
        format!("/v1beta{}", cap["url"].as_str().unwrap()),
        "the capture's base URL had no version prefix; ours is /v1beta"
    );
    for name in ["x-goog-api-key", "content-type"] {
        assert_eq!(
            sent.header(name),
            cap["headers"][name].as_str(),
            "header {name}"
        );
    }
    insta::assert_json_snapshot!("gemini_request_body", sent.body);
}

#[tokio::test]
async fn the_captured_final_messages_are_reproduced() {
    let yaml = "turns:\n  - text: Reading.\n    tool_calls:\n      - name: read\n        arguments: {path: a.txt}\n    usage: {input: 80, output: 42, cache_read: 20}\n";
    for (api, key) in [
        (ApiKind::OpenaiResponses, "openai-responses"),
        (ApiKind::GoogleGenerativeAi, "google-generative-ai"),
    ] {
        let server = serve(api, yaml).await;
        let p = provider(api, &server, Duration::from_secs(5));
        let m = p
            .complete(&capture_context(), &RequestOptions::default())
            .await
            .unwrap();
        let fin = &capture()[key]["final"];
        let usage = &fin["usage"];
        assert_eq!(m.usage.input, usage["input"].as_u64().unwrap(), "{api:?}");
        assert_eq!(m.usage.output, usage["output"].as_u64().unwrap());
        assert_eq!(m.usage.cache_read, usage["cacheRead"].as_u64().unwrap());
        assert_eq!(m.usage.cache_write, usage["cacheWrite"].as_u64().unwrap());
        assert_eq!(m.usage.total_tokens, usage["totalTokens"].as_u64().unwrap());
        assert_eq!(m.text(), fin["content"][0]["text"].as_str().unwrap());
        let call = m.tool_calls().next().unwrap();
        assert_eq!(call.arguments, fin["content"][1]["arguments"]);
        assert_eq!(m.stop_reason, StopReason::ToolUse);
        assert_eq!(m.api, fin["api"].as_str().unwrap());
        // Pi's shapes of the ids, with our scripted numbers (and no clock for Gemini).
        match api {
            ApiKind::OpenaiResponses => {
                assert_eq!(call.id, "call_01|fc_01");
                assert!(fin["content"][1]["id"].as_str().unwrap().contains('|'));
                assert!(matches!(
                    &m.content[0],
                    AssistantBlock::Text { signature: Some(s), .. } if s == "{\"v\":1,\"id\":\"msg_01\"}"
                ));
            }
            _ => assert_eq!(call.id, "read_1"),
        }
    }
}

#[tokio::test]
async fn responses_stop_reasons() {
    let api = ApiKind::OpenaiResponses;
    let (r, _s) = one(api, "turns:\n  - text: all done\n").await;
    assert_eq!(r.unwrap().stop_reason, StopReason::Stop);
    let (r, _s) = one(api, "turns:\n  - text: cut\n    stop_reason: length\n").await;
    assert_eq!(r.unwrap().stop_reason, StopReason::Length);
    // Tool calls with a completed status are tool use, whatever the script says.
    let (r, _s) = one(
        api,
        "turns:\n  - tool_calls:\n      - name: ls\n    stop_reason: stop\n",
    )
    .await;
    assert_eq!(r.unwrap().stop_reason, StopReason::ToolUse);
    let (r, _s) = one(api, "turns:\n  - text: x\n    stop_reason: cancelled\n").await;
    let m = r.unwrap();
    assert_eq!(m.stop_reason, StopReason::Error);
    assert_eq!(
        m.error_message.as_deref(),
        Some("An unknown error occurred")
    );
    // A failed response with an error is the provider's failure (retried), not the model's.
    let (r, _s) = one(api, "turns:\n  - text: x\n    stop_reason: failed\n").await;
    assert_eq!(
        r.unwrap_err(),
        ProviderError::Server {
            status: 500,
            message: "server_error in the stream: scripted failure".into()
        }
    );
    let (r, _s) = one(api, "turns:\n  - text: x\n    stop_reason: weird\n").await;
    assert_eq!(
        r.unwrap_err(),
        ProviderError::Protocol {
            message: "Unhandled stop reason: weird".into()
        }
    );
}

#[tokio::test]
async fn gemini_stop_reasons() {
    let api = ApiKind::GoogleGenerativeAi;
    let (r, _s) = one(api, "turns:\n  - text: all done\n").await;
    assert_eq!(r.unwrap().stop_reason, StopReason::Stop);
    let (r, _s) = one(api, "turns:\n  - text: cut\n    stop_reason: length\n").await;
    assert_eq!(r.unwrap().stop_reason, StopReason::Length);
    let (r, _s) = one(
        api,
        "turns:\n  - tool_calls:\n      - name: ls\n    stop_reason: stop\n",
    )
    .await;
    assert_eq!(r.unwrap().stop_reason, StopReason::ToolUse);
    for raw in ["SAFETY", "RECITATION", "MALFORMED_FUNCTION_CALL"] {
        let (r, _s) = one(
            api,
            &format!("turns:\n  - text: x\n    stop_reason: {raw}\n"),
        )
        .await;
        let m = r.unwrap();
        assert_eq!(m.stop_reason, StopReason::Error, "{raw}");
        assert_eq!(
            m.error_message.as_deref(),
            Some("An unknown error occurred")
        );
    }
}

#[tokio::test]
async fn gemini_counts_thoughts_as_output() {
    let (r, _s) = one(
        ApiKind::GoogleGenerativeAi,
        "turns:\n  - thinking: hmm\n    text: ok\n    usage: {input: 10, output: 9, cache_read: 4}\n",
    )
    .await;
    let m = r.unwrap();
    assert_eq!(m.usage.output, 9);
    assert_eq!(m.usage.input, 10);
    assert_eq!(m.usage.cache_read, 4);
    assert_eq!(m.usage.total_tokens, 23);
}

fn small() -> Context {
    Context {
        system_prompt: Some("Be brief.".into()),
        messages: vec![Message::User {
            content: UserContent::Text("hi".into()),
        }],
        tools: vec![],
    }
}

/// The body each API gets for [`small`] with `options`.
async fn body_with(api: ApiKind, options: &RequestOptions) -> Value {
    let server = serve(api, "turns:\n  - text: ok\n").await;
    let p = provider(api, &server, Duration::from_secs(5));
    p.complete(&small(), options).await.unwrap();
    server.requests().remove(0).body
}

const ALL: [ApiKind; 4] = [
    ApiKind::AnthropicMessages,
    ApiKind::OpenaiCompletions,
    ApiKind::OpenaiResponses,
    ApiKind::GoogleGenerativeAi,
];

#[tokio::test]
async fn no_thinking_level_sends_no_reasoning_setting() {
    for api in ALL {
        let body = body_with(api, &RequestOptions::default()).await;
        let text = body.to_string();
        for key in [
            "thinking",
            "reasoning",
            "reasoning_effort",
            "include",
            "thinkingConfig",
        ] {
            assert!(
                body.get(key).is_none() && !text.contains(&format!("\"{key}\"")),
                "{api:?}: {key}"
            );
        }
    }
    let body = body_with(ApiKind::OpenaiResponses, &RequestOptions::default()).await;
    assert_eq!(body["input"][0]["role"], "system");
}

#[tokio::test]
async fn thinking_levels_reach_every_api() {
    let options = |level| RequestOptions {
        max_tokens: 4096,
        temperature: Some(0.2),
        thinking: Some(level),
        session_id: None,
    };
    let mut bodies = serde_json::Map::new();
    for api in ALL {
        let body = body_with(api, &options(ThinkingLevel::Medium)).await;
        match api {
            ApiKind::AnthropicMessages => {
                // The medium budget (8192) does not fit under 4096: 1024 output tokens are kept.
                assert_eq!(
                    body["thinking"],
                    json!({"type": "enabled", "budget_tokens": 3072, "display": "summarized"})
                );
                assert!(
                    body.get("temperature").is_none(),
                    "no temperature with thinking"
                );
            }
            ApiKind::OpenaiCompletions => assert_eq!(body["reasoning_effort"], "medium"),
            ApiKind::OpenaiResponses => {
                assert_eq!(
                    body["reasoning"],
                    json!({"effort": "medium", "summary": "auto"})
                );
                assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
                assert_eq!(body["input"][0]["role"], "developer");
            }
            ApiKind::GoogleGenerativeAi => assert_eq!(
                body["generationConfig"]["thinkingConfig"],
                json!({"includeThoughts": true, "thinkingBudget": 8192})
            ),
        }
        bodies.insert(api.as_str().to_owned(), body);
    }
    insta::assert_json_snapshot!("thinking_medium_request_bodies", bodies);

    let low = body_with(
        ApiKind::AnthropicMessages,
        &RequestOptions {
            max_tokens: 32000,
            ..options(ThinkingLevel::Low)
        },
    )
    .await;
    assert_eq!(low["thinking"]["budget_tokens"], 2048);
    let off_options = options(ThinkingLevel::Off);
    let off = |api| body_with(api, &off_options);
    assert_eq!(
        off(ApiKind::AnthropicMessages).await["thinking"],
        json!({"type": "disabled"})
    );
    let chat = off(ApiKind::OpenaiCompletions).await;
    assert!(chat.get("reasoning_effort").is_none());
    assert_eq!(chat["temperature"], 0.2);
    let responses = off(ApiKind::OpenaiResponses).await;
    assert_eq!(responses["reasoning"], json!({"effort": "none"}));
    assert!(responses.get("include").is_none());
    assert_eq!(
        off(ApiKind::GoogleGenerativeAi).await["generationConfig"],
        json!({"temperature": 0.2, "maxOutputTokens": 4096, "thinkingConfig": {"thinkingBudget": 0}})
    );
}

/// Records a two-request exchange (a tool call, then text) with the scripted server through the
/// cassette recorder, writes the file, then replays it without the server: the same replies come
/// back, byte for byte the same request bodies are expected, and the key is not in the file.
#[tokio::test]
async fn responses_and_gemini_record_and_replay_through_cassettes() {
    use harness::cassettes::normalize::PathMap;
    use harness::cassettes::{CassetteHeader, Player, Recorder};
    use harness::conversation::{Content, ToolResultMessage};
    use harness::providers::{ProviderSettings, build_with};
    use std::sync::Arc;

    let yaml = "turns:\n  - thinking: Look first.\n    text: Reading.\n    tool_calls:\n      - name: read\n        arguments: {path: a.txt}\n  - text: Done.\n";
    for api in [ApiKind::OpenaiResponses, ApiKind::GoogleGenerativeAi] {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().join("ws");
        std::fs::create_dir_all(&workspace).unwrap();
        let path = dir.path().join("cassette.yaml");
        let options = RequestOptions {
            thinking: Some(ThinkingLevel::Low),
            ..RequestOptions::default()
        };
        let run = |p: Arc<dyn harness::providers::Provider>| {
            let options = options.clone();
            async move {
                let mut ctx = super::providers::hello();
                let first = p.complete(&ctx, &options).await.unwrap();
                let id = first.tool_calls().next().unwrap().id.clone();
                ctx.messages.push(Message::Assistant(first.clone()));
                ctx.messages.push(Message::ToolResult(ToolResultMessage {
                    tool_call_id: id,
                    tool_name: "read".into(),
                    content: vec![Content::text("x")],
                    is_error: false,
                }));
                let second = p.complete(&ctx, &options).await.unwrap();
                (first, second)
            }
        };

        let server = serve(api, yaml).await;
        let spec = super::providers::spec(api, server.base_url());
        let recorder = Recorder::new(
            super::providers::transport(),
            PathMap::workspace(&workspace),
            vec!["test-key".into()],
        );
        let live = run(build_with(
            spec.clone(),
            Arc::new(recorder.clone()),
            ProviderSettings::default(),
        ))
        .await;
        let header = CassetteHeader::new("t", &spec.provider, &spec.model, api, "pi", "pi");
        recorder.finish(header, &path).unwrap();
        drop(server);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("test-key"), "{api:?}: the key was recorded");

        let player = Player::load(&path, vec![], PathMap::workspace(&workspace)).unwrap();
        let replayed = run(build_with(
            spec,
            Arc::new(player.clone()),
            ProviderSettings::default(),
        ))
        .await;
        assert_eq!(replayed, live, "{api:?}");
        assert_eq!(player.divergence(), None);
        assert_eq!(player.unused_interactions(), 0);
        assert_eq!(live.1.text(), "Done.");
    }
}
