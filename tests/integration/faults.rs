//! Provider faults over real HTTP against the scripted server, per wire format: error events in
//! the middle of a stream typed by kind and retried as infrastructure (only refusals count
//! against the model), streams that end cleanly but early detected and retried, complete streams
//! recorded as `completed`, Gemini's function-call signatures echoed, its key errors and
//! `RetryInfo`, `GOOGLE_API_KEY`, and absurd `Retry-After` values from a server or a cassette.

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::cassettes::format::{ResponseBody, StreamEnd};
use harness::cassettes::{CassetteHeader, CassetteMode, Player, Recorder};
use harness::conversation::{AssistantMessage, Content, Message, StopReason, ToolResultMessage};
use harness::providers::retry::{RetryPolicy, Retrying};
use harness::providers::transport::Transport;
use harness::providers::{self, ApiKind, Provider, ProviderError, RequestOptions};
use harness::record::Outcome;
use harness::runner::{self, RunOptions, Silent};
use harness::tasks;
use harness::testkit::{self, ScriptedServer};
use pretty_assertions::assert_eq;

use super::providers::{hello, one, serve, spec, transport};
use super::retry::fast;

const ALL: [ApiKind; 4] = [
    ApiKind::AnthropicMessages,
    ApiKind::OpenaiCompletions,
    ApiKind::OpenaiResponses,
    ApiKind::GoogleGenerativeAi,
];

/// The provider for `api` against `server` over the live transport, retrying with `policy`.
fn retrying(api: ApiKind, server: &ScriptedServer, policy: RetryPolicy) -> Retrying {
    let provider = providers::build(spec(api, server.base_url()), transport());
    Retrying::new(provider, policy, None)
}

async fn ask(provider: &dyn Provider) -> Result<AssistantMessage, ProviderError> {
    provider
        .complete(&hello(), &RequestOptions::default())
        .await
}

#[tokio::test]
async fn mid_stream_error_events_are_typed_and_retried_as_infrastructure() {
    let cases = [
        (ApiKind::AnthropicMessages, "overloaded_error", "overloaded"),
        (ApiKind::AnthropicMessages, "api_error", "server_error"),
        (ApiKind::OpenaiCompletions, "server_error", "server_error"),
        (ApiKind::OpenaiResponses, "server_error", "server_error"),
        (ApiKind::GoogleGenerativeAi, "INTERNAL", "server_error"),
        (ApiKind::GoogleGenerativeAi, "UNAVAILABLE", "overloaded"),
        (
            ApiKind::GoogleGenerativeAi,
            "RESOURCE_EXHAUSTED",
            "rate_limited",
        ),
    ];
    for (api, error_type, kind) in cases {
        let yaml = format!(
            "turns:\n  - fault: {{error_event: \"try later\", error_type: {error_type}}}\n  - text: recovered\n"
        );
        let server = serve(api, &yaml).await;
        let provider = retrying(api, &server, fast());
        let reply = ask(&provider)
            .await
            .unwrap_or_else(|e| panic!("{api:?} {error_type}: {e}"));
        assert_eq!(reply.text(), "recovered", "{api:?} {error_type}");
        assert_eq!(
            provider
                .stats()
                .by_kind()
                .iter()
                .map(|(k, n)| (k.name(), *n))
                .collect::<Vec<_>>(),
            vec![(kind, 1)],
            "{api:?}"
        );
        assert_eq!(server.requests().len(), 2);
        // Without retries, the error itself: typed, and naming the provider's own error.
        let err = one(api, &yaml).await.0.unwrap_err();
        assert_eq!(err.kind(), kind, "{api:?}: {err}");
        assert!(err.to_string().contains(error_type), "{err}");
        assert!(err.to_string().contains("try later"), "{err}");
    }
    // A Responses stream that ends in `response.failed` with a server error, too.
    let api = ApiKind::OpenaiResponses;
    let server = serve(
        api,
        "turns:\n  - text: x\n    stop_reason: failed\n  - text: recovered\n",
    )
    .await;
    let provider = retrying(api, &server, fast());
    assert_eq!(ask(&provider).await.unwrap().text(), "recovered");
    assert_eq!(
        provider
            .stats()
            .by_kind()
            .iter()
            .map(|(k, n)| (k.name(), *n))
            .collect::<Vec<_>>(),
        vec![("server_error", 1)]
    );
}

#[tokio::test]
async fn a_refusal_still_counts_against_the_model_and_is_not_retried() {
    for (api, reason) in [
        (ApiKind::AnthropicMessages, "refusal"),
        (ApiKind::OpenaiCompletions, "content_filter"),
        (ApiKind::GoogleGenerativeAi, "SAFETY"),
    ] {
        let yaml = format!("turns:\n  - text: no\n    stop_reason: {reason}\n  - text: unused\n");
        let server = serve(api, &yaml).await;
        let provider = retrying(api, &server, fast());
        let reply = ask(&provider).await.unwrap();
        assert_eq!(reply.stop_reason, StopReason::Error, "{api:?}");
        assert_eq!(provider.stats().retries(), 0, "{api:?}");
        assert_eq!(server.requests().len(), 1);
    }
}

/// Records the trivial task against `yaml` served in `api`'s format, retrying fast; returns the
/// record and the cassette written, if any.
async fn run_trivial(api: ApiKind, yaml: &str) -> (harness::record::RunRecord, Option<String>) {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tasks");
    testkit::write_trivial_task(&suite).unwrap();
    let task = Arc::new(tasks::load_suite(&suite).unwrap().tasks.remove(0));
    let server = serve(api, yaml).await;
    let mut options = RunOptions::new(dir.path().join("cassettes"), dir.path().join("reports"));
    options.mode = CassetteMode::Record;
    let model: harness::providers::catalog::ModelSelector = match api {
        ApiKind::AnthropicMessages => "anthropic/scripted-claude",
        ApiKind::OpenaiCompletions => "openai/scripted-gpt",
        ApiKind::OpenaiResponses => "openai-responses/scripted-gpt",
        ApiKind::GoogleGenerativeAi => "google/scripted-gemini",
    }
    .parse()
    .unwrap();
    options.models = vec![model.clone()];
    options.base_url = Some(server.base_url());
    options.key_env = Arc::new(|_| Some("test-key-not-secret".to_owned()));
    options.retry = fast();
    let planned = runner::plan_runs(&[task], &options).unwrap();
    let cassette = planned[0].cassette.clone();
    let record = runner::execute(planned, &options, Arc::new(Silent))
        .await
        .remove(0);
    (record, std::fs::read_to_string(cassette).ok())
}

#[tokio::test]
async fn a_recorded_run_marks_every_stream_completed() {
    let yaml = "turns:\n  - tool_calls:\n      - name: ls\n  - text: done\n";
    for api in ALL {
        let (record, cassette) = run_trivial(api, yaml).await;
        assert_eq!(
            record.outcome,
            Outcome::Passed,
            "{api:?}: {}",
            record.reason
        );
        let cassette = cassette.expect("written");
        assert_eq!(cassette.matches("end: completed").count(), 2, "{api:?}");
        assert!(!cassette.contains("abandoned"), "{api:?}");
    }
}

#[tokio::test]
async fn an_error_event_that_persists_is_an_infrastructure_error_of_its_kind() {
    let busy = "  - fault: {error_event: busy}\n".repeat(4);
    let (record, _) = run_trivial(ApiKind::AnthropicMessages, &format!("turns:\n{busy}")).await;
    assert_eq!(record.outcome, Outcome::Error, "{}", record.reason);
    assert_eq!(record.error_kind.map(|k| k.name()), Some("overloaded"));
    assert!(harness::record::ErrorKind::from_name("overloaded").is_infrastructure());
    assert_eq!(record.retries, 3);
    // A refusal is the model's: `model_error`, against it.
    let (record, _) = run_trivial(
        ApiKind::GoogleGenerativeAi,
        "turns:\n  - text: no\n    stop_reason: SAFETY\n",
    )
    .await;
    assert_eq!(record.outcome, Outcome::Error);
    assert_eq!(record.error_kind.map(|k| k.name()), Some("model_error"));
    assert!(!harness::record::ErrorKind::from_name("model_error").is_infrastructure());
}

#[tokio::test]
async fn a_stream_that_ends_cleanly_but_early_is_cut_and_retried() {
    // A reply whose tool call is half sent when the body ends without an error.
    for api in ALL {
        // Gemini sends whole calls: the body ends after the calls, before the finish chunk.
        let events = if api == ApiKind::GoogleGenerativeAi {
            1
        } else {
            3
        };
        let yaml = format!(
            "turns:\n  - tool_calls:\n      - name: bash\n        arguments: {{command: \"rm -rf build && make all\"}}\n    fault: {{end_after_events: {events}}}\n  - text: whole\n"
        );
        let err = one(api, &yaml).await.0.unwrap_err();
        assert!(
            matches!(err, ProviderError::StreamCut { .. }),
            "{api:?}: the cut tool call is not taken as the reply: {err:?}"
        );
        let server = serve(api, &yaml).await;
        let provider = retrying(api, &server, fast());
        let reply = ask(&provider).await.unwrap();
        assert_eq!(reply.text(), "whole", "{api:?}");
        assert_eq!(reply.tool_calls().count(), 0);
        assert_eq!(
            provider
                .stats()
                .by_kind()
                .iter()
                .map(|(k, n)| (k.name(), *n))
                .collect::<Vec<_>>(),
            vec![("stream_cut", 1)]
        );
    }
    // Only the closing event missing: still a cut, except for Chat, where a finish_reason
    // without `[DONE]` is a whole reply.
    for api in ALL {
        let full = reply_events(api).await;
        let yaml = format!(
            "turns:\n  - text: all of it\n    fault: {{end_after_events: {}}}\n",
            full - 1
        );
        let (result, _server) = one(api, &yaml).await;
        match api {
            ApiKind::OpenaiCompletions => assert_eq!(result.unwrap().text(), "all of it"),
            _ => assert!(
                matches!(result, Err(ProviderError::StreamCut { .. })),
                "{api:?}: {result:?}"
            ),
        }
    }
}

/// How many SSE events the scripted server sends for the reply `all of it`, counted from a
/// recording of it.
async fn reply_events(api: ApiKind) -> usize {
    let (recorded, _) = record_one(api, "turns:\n  - text: all of it\n").await;
    match &recorded[0] {
        ResponseBody::Sse { events, .. } => events.len(),
        other => panic!("{other:?}"),
    }
}

/// Sends one request of `yaml` through a recorder over the live transport, lets the provider
/// go, and returns the recorded response bodies and the reply.
async fn record_one(
    api: ApiKind,
    yaml: &str,
) -> (Vec<ResponseBody>, Result<AssistantMessage, ProviderError>) {
    let server = serve(api, yaml).await;
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::new(
        transport(),
        harness::cassettes::normalize::PathMap::workspace(dir.path()),
        vec![],
    );
    let provider = providers::build(spec(api, server.base_url()), Arc::new(recorder.clone()));
    let reply = ask(&*provider).await;
    drop(provider);
    let cassette = recorder.cassette(CassetteHeader::new("t", "p", "m", api, "pi", "replace"));
    let bodies = cassette
        .interactions
        .into_iter()
        .map(|i| i.response.body)
        .collect();
    (bodies, reply)
}

#[tokio::test]
async fn complete_streams_are_recorded_as_completed() {
    for api in ALL {
        for yaml in [
            "turns:\n  - text: Hello there.\n",
            "turns:\n  - thinking: Hmm.\n    tool_calls:\n      - name: ls\n",
            "turns:\n  - fault: {error_event: busy}\n",
        ] {
            let (bodies, _) = record_one(api, yaml).await;
            match &bodies[..] {
                [ResponseBody::Sse { end, error, .. }] => {
                    assert_eq!(
                        (*end, error),
                        (StreamEnd::Completed, &None),
                        "{api:?} {yaml}"
                    )
                }
                other => panic!("{api:?}: {other:?}"),
            }
        }
        // A cut stream is still a cut one.
        let (bodies, _) = record_one(
            api,
            "turns:\n  - text: never ends\n    fault: {cut_after_events: 1}\n",
        )
        .await;
        assert!(
            matches!(
                &bodies[..],
                [ResponseBody::Sse {
                    end: StreamEnd::Cut,
                    ..
                }]
            ),
            "{api:?}: {bodies:?}"
        );
    }
}

/// A Gemini 3 spec against `server`.
fn gemini3(server: &ScriptedServer) -> Arc<dyn Provider> {
    let mut spec = spec(ApiKind::GoogleGenerativeAi, server.base_url());
    spec.model = "gemini-3-pro-preview".into();
    providers::build(spec, transport())
}

#[tokio::test]
async fn gemini_function_call_signatures_are_echoed_in_the_next_request() {
    let yaml = "turns:\n  - thinking: Look first.\n    tool_calls:\n      - name: ls\n      - name: read\n        arguments: {path: a.txt}\n  - text: Done.\n";
    let server = serve(ApiKind::GoogleGenerativeAi, yaml).await;
    let provider = gemini3(&server);
    let mut ctx = hello();
    let first = ask(&*provider).await.unwrap();
    let signatures: Vec<Option<&str>> = first
        .tool_calls()
        .map(|c| c.thought_signature.as_deref())
        .collect();
    assert_eq!(signatures, [Some("ZnNpZ18wMQ=="), None]);
    let calls: Vec<_> = first.tool_calls().cloned().collect();
    ctx.messages.push(Message::Assistant(first));
    for call in calls {
        ctx.messages.push(Message::ToolResult(ToolResultMessage {
            tool_call_id: call.id,
            tool_name: call.name,
            content: vec![Content::text("ok")],
            is_error: false,
        }));
    }
    let second = provider
        .complete(&ctx, &RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(second.text(), "Done.");
    // The first call's own signature goes back; the second (none from Gemini) gets Pi's
    // sentinel, as every unsigned call to a Gemini 3 model does.
    insta::assert_json_snapshot!(
        "gemini3_signatures_echoed",
        server.requests()[1].body["contents"]
    );
}

#[tokio::test]
async fn a_wrong_gemini_key_is_an_authentication_error() {
    let body = serde_json::json!({"error": {"code": 400,
        "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT",
        "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                     "domain": "googleapis.com"}]}});
    let yaml = format!(
        "turns:\n  - fault: {{status: 400, body: {}}}\n  - text: never served\n",
        serde_json::to_string(&body.to_string()).unwrap()
    );
    let server = serve(ApiKind::GoogleGenerativeAi, &yaml).await;
    let provider = retrying(ApiKind::GoogleGenerativeAi, &server, fast());
    let err = ask(&provider).await.unwrap_err();
    assert!(
        matches!(&err, ProviderError::Authentication { status: 400, message } if message.contains("API key not valid")),
        "{err:?}"
    );
    assert_eq!(server.requests().len(), 1, "not retried");
}

#[tokio::test]
async fn gemini_retry_info_is_the_wait_before_retrying() {
    let body = |delay: &str| {
        serde_json::json!({"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}]}})
        .to_string()
    };
    let fault = |delay: &str| {
        format!(
            "  - fault: {{status: 429, body: {}}}\n",
            serde_json::to_string(&body(delay)).unwrap()
        )
    };
    let server = serve(
        ApiKind::GoogleGenerativeAi,
        &format!("turns:\n{}  - text: ok\n", fault("0.3s")),
    )
    .await;
    let provider = retrying(ApiKind::GoogleGenerativeAi, &server, fast());
    let started = Instant::now();
    assert_eq!(ask(&provider).await.unwrap().text(), "ok");
    // The fast policy alone waits milliseconds: the 300 ms are Google's.
    assert_eq!(provider.stats().delays(), vec![Duration::from_millis(300)]);
    assert!(started.elapsed() >= Duration::from_millis(300));
    // A delay beyond the policy's limit is not waited for: the error comes back at once.
    let server = serve(
        ApiKind::GoogleGenerativeAi,
        &format!("turns:\n{}  - text: ok\n", fault("3600s")),
    )
    .await;
    let provider = retrying(ApiKind::GoogleGenerativeAi, &server, fast());
    let started = Instant::now();
    let err = ask(&provider).await.unwrap_err();
    assert!(
        matches!(err, ProviderError::RateLimited { retry_after: Some(d), .. } if d == Duration::from_secs(3600)),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn google_api_key_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    testkit::write_trivial_task(&dir.path().join("tasks")).unwrap();
    let server = serve(ApiKind::GoogleGenerativeAi, "turns:\n  - text: done\n").await;
    let root = dir.path().to_path_buf();
    let base_url = server.base_url();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_harness"))
            .args(["run", "tasks", "--cassette-mode", "live"])
            .args(["--model", "google/scripted-gemini", "--base-url", &base_url])
            .current_dir(&root)
            .env_remove("GEMINI_API_KEY")
            .env("GOOGLE_API_KEY", "google-key-for-the-test")
            .env_remove("CI")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        server.requests()[0].header("x-goog-api-key"),
        Some("google-key-for-the-test")
    );
}

#[tokio::test]
async fn absurd_retry_after_values_never_panic() {
    for (header, value) in [
        ("retry-after", "1e300"),
        ("retry-after", "-7"),
        ("retry-after", "NaN"),
        ("retry-after-ms", "1e300"),
        ("retry-after", "Fri, 31 Dec 9999 23:59:59 GMT"),
    ] {
        for api in [ApiKind::AnthropicMessages, ApiKind::GoogleGenerativeAi] {
            let yaml = format!(
                "turns:\n  - fault: {{status: 429, headers: {{{header}: \"{value}\"}}}}\n  - text: ok\n"
            );
            // Live: a wait that long is not waited for, the rate limit is the error.
            let server = serve(api, &yaml).await;
            let provider = retrying(api, &server, fast());
            match ask(&provider).await {
                Err(ProviderError::RateLimited { retry_after, .. }) => {
                    assert!(retry_after.is_some(), "{header}: {value}");
                }
                // A negative or NaN value is no wait at all: the policy's own backoff.
                Ok(reply) => {
                    assert!(matches!(value, "-7" | "NaN"), "{header}: {value}");
                    assert_eq!(reply.text(), "ok");
                }
                Err(other) => panic!("{header}: {value}: {other:?}"),
            }
        }
    }
    // Recorded into a cassette and replayed (retrying without waiting, as replays do).
    let api = ApiKind::AnthropicMessages;
    let server = serve(
        api,
        "turns:\n  - fault: {status: 429, headers: {retry-after: \"1e300\"}}\n  - text: ok\n",
    )
    .await;
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::new(
        transport(),
        harness::cassettes::normalize::PathMap::workspace(dir.path()),
        vec![],
    );
    let no_wait = fast().without_waiting();
    let recording = Retrying::new(
        providers::build(spec(api, server.base_url()), Arc::new(recorder.clone())),
        no_wait.clone(),
        None,
    );
    assert_eq!(ask(&recording).await.unwrap().text(), "ok");
    drop(recording);
    let path = dir.path().join("c.yaml");
    recorder
        .finish(
            CassetteHeader::new("t", "anthropic", "claude-test", api, "pi", "replace"),
            &path,
        )
        .unwrap();
    assert!(std::fs::read_to_string(&path).unwrap().contains("1e300"));
    let player = Player::load(
        &path,
        vec![],
        harness::cassettes::normalize::PathMap::workspace(dir.path()),
    )
    .unwrap();
    let replaying = Retrying::new(
        providers::build(
            spec(api, "http://127.0.0.1:9".into()),
            Arc::new(player.clone()) as Arc<dyn Transport>,
        ),
        no_wait,
        None,
    );
    assert_eq!(ask(&replaying).await.unwrap().text(), "ok");
    assert_eq!(
        replaying
            .stats()
            .by_kind()
            .iter()
            .map(|(k, n)| (k.name(), *n))
            .collect::<Vec<_>>(),
        vec![("rate_limited", 1)]
    );
    assert_eq!(player.divergence(), None);
}
