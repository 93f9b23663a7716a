//! The retry layer over the real providers and HTTP: 500 then success, 429 with `Retry-After`
//! then success, a cut stream then success, 401 not retried; and a recording that keeps every
//! attempt so a replay retries the same way without waiting.

use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::conversation::{Context, Message, UserContent};
use harness::providers::live::LiveTransport;
use harness::providers::retry::{RetryPolicy, Retrying};
use harness::providers::{self, ApiKind, ModelSpec, Provider, ProviderError, RequestOptions};
use harness::testkit::{self, parse_script};

fn spec(api: ApiKind, base_url: String) -> ModelSpec {
    ModelSpec {
        provider: match api {
            ApiKind::AnthropicMessages => "anthropic".into(),
            ApiKind::GoogleGenerativeAi => "google".into(),
            _ => "openai".into(),
        },
        api,
        model: "m".into(),
        base_url,
        api_key: Some("test-key".into()),
        headers: vec![],
    }
}

fn context() -> Context {
    Context {
        system_prompt: Some("sys".into()),
        messages: vec![Message::User {
            content: UserContent::Text("hi".into()),
        }],
        tools: vec![],
    }
}

/// Retries quickly: waits of a few milliseconds, three retries, `Retry-After` up to 5 s.
pub(super) fn fast() -> RetryPolicy {
    RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(5),
        max_retry_after: Duration::from_secs(5),
        no_wait: false,
    }
}

async fn retrying(script: &str, api: ApiKind) -> (Retrying, testkit::ScriptedServer) {
    let server = testkit::start(parse_script(script, "test.yaml").unwrap(), api).await;
    let provider = providers::build(
        spec(api, server.base_url()),
        Arc::new(LiveTransport::new().unwrap()),
    );
    (Retrying::new(provider, fast(), None), server)
}

const APIS: [ApiKind; 4] = [
    ApiKind::AnthropicMessages,
    ApiKind::OpenaiCompletions,
    ApiKind::OpenaiResponses,
    ApiKind::GoogleGenerativeAi,
];

#[tokio::test]
async fn server_error_then_success() {
    for api in APIS {
        let (provider, server) = retrying(
            "turns:\n  - fault: {status: 500}\n  - text: recovered\n",
            api,
        )
        .await;
        let reply = provider
            .complete(&context(), &RequestOptions::default())
            .await
            .unwrap_or_else(|e| panic!("{api:?}: {e}"));
        assert_eq!(reply.text(), "recovered");
        assert_eq!(provider.stats().retries(), 1);
        assert_eq!(
            provider
                .stats()
                .by_kind()
                .iter()
                .map(|(k, n)| (k.name(), *n))
                .collect::<Vec<_>>(),
            vec![("server_error", 1)]
        );
        assert_eq!(server.requests().len(), 2);
    }
}

#[tokio::test]
async fn rate_limited_waits_for_retry_after() {
    for api in APIS {
        let (provider, _server) = retrying(
            "turns:\n  - fault: {status: 429, retry_after: 1}\n  - text: ok\n",
            api,
        )
        .await;
        let started = Instant::now();
        let reply = provider
            .complete(&context(), &RequestOptions::default())
            .await
            .unwrap();
        assert_eq!(reply.text(), "ok");
        assert!(
            started.elapsed() >= Duration::from_millis(950),
            "{api:?}: Retry-After: 1 was honoured ({:?})",
            started.elapsed()
        );
        assert_eq!(
            provider
                .stats()
                .by_kind()
                .iter()
                .map(|(k, n)| (k.name(), *n))
                .collect::<Vec<_>>(),
            vec![("rate_limited", 1)]
        );
    }
}

#[tokio::test]
async fn a_retry_after_past_the_cap_is_not_waited_for_and_the_error_says_so() {
    for api in APIS {
        let (provider, server) = retrying(
            "turns:\n  - fault: {status: 429, retry_after: 600}\n  - text: never served\n",
            api,
        )
        .await;
        let started = Instant::now();
        let err = provider
            .complete(&context(), &RequestOptions::default())
            .await
            .unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{api:?}: not waited for"
        );
        assert!(
            matches!(err, ProviderError::RateLimited { status: 429, .. }),
            "{api:?}: {err:?}"
        );
        assert!(
            err.to_string().ends_with(
                "; not retried: the server asked to wait 600 s (Retry-After), more than the 5 s \
                 the harness waits at most"
            ),
            "{api:?}: {err}"
        );
        assert_eq!(server.requests().len(), 1, "{api:?}");
    }
}

#[tokio::test]
async fn a_cut_stream_is_retried() {
    for api in APIS {
        let (provider, _server) = retrying(
            "turns:\n  - text: this reply breaks off\n    fault: {cut_after_events: 2}\n  - text: whole\n",
            api,
        )
        .await;
        let reply = provider
            .complete(&context(), &RequestOptions::default())
            .await
            .unwrap();
        assert_eq!(reply.text(), "whole");
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
}

#[tokio::test]
async fn authentication_failures_are_not_retried() {
    for api in APIS {
        let (provider, server) = retrying(
            "turns:\n  - fault: {status: 401}\n  - text: never served\n",
            api,
        )
        .await;
        let err = provider
            .complete(&context(), &RequestOptions::default())
            .await
            .unwrap_err();
        assert!(
            matches!(err, ProviderError::Authentication { status: 401, .. }),
            "{err:?}"
        );
        assert_eq!(server.requests().len(), 1);
        assert_eq!(provider.stats().retries(), 0);
    }
}
