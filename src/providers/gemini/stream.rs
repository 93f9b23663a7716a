//! The stream direction of Gemini: `data:` chunks (thought, text and function-call parts, the
//! `finishReason`, `usageMetadata`) read into an [`AssistantMessage`], error chunks and error
//! bodies into typed [`ProviderError`]s refined with what Google's error says (a rejected key,
//! `RetryInfo`).
//!
//! Depends on `conversation` and the provider seams only.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use crate::conversation::{AssistantBlock, AssistantMessage, StopReason, ToolCall, Usage};
use crate::providers::errors;
use crate::providers::sse::SseStream;
use crate::providers::stream::{empty_reply, finish_reply};
use crate::providers::{ModelSpec, ProviderError};

/// The shared mapping of an error status, refined with what Google's error body says: a
/// rejected key (`API_KEY_INVALID`, `API_KEY_EXPIRED`, "API key not valid", which Google sends
/// as 400 `INVALID_ARGUMENT`) is an authentication error; a rate limit without `Retry-After`
/// waits for the body's `RetryInfo.retryDelay`.
pub fn classify_http_error(status: u16, headers: &[(String, String)], body: &str) -> ProviderError {
    let error = errors::from_http_status(status, headers, body);
    let json: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    if let ProviderError::InvalidRequest { status, message } = &error {
        if is_key_error(&json["error"]) {
            return ProviderError::Authentication {
                status: *status,
                message: message.clone(),
            };
        }
    }
    with_retry_info(error, &json["error"])
}

/// Whether a Google error object says the key itself was refused.
fn is_key_error(error: &Value) -> bool {
    let reasons = error["details"].as_array().into_iter().flatten();
    reasons
        .filter_map(|d| d["reason"].as_str())
        .any(|r| r.starts_with("API_KEY_"))
        || error["message"]
            .as_str()
            .is_some_and(|m| m.to_ascii_lowercase().contains("api key not valid"))
}

/// `error` with the wait of a Google error object's `RetryInfo` detail, when it is a rate limit
/// that gave no wait of its own.
fn with_retry_info(error: ProviderError, google: &Value) -> ProviderError {
    match error {
        ProviderError::RateLimited {
            status,
            message,
            retry_after: None,
        } => ProviderError::RateLimited {
            status,
            message,
            retry_after: retry_delay(google),
        },
        other => other,
    }
}

/// The `retryDelay` of a `google.rpc.RetryInfo` detail (`"30s"`, `"1.5s"`), clamped.
pub fn retry_delay(error: &Value) -> Option<std::time::Duration> {
    error["details"]
        .as_array()?
        .iter()
        .filter(|d| {
            d["@type"]
                .as_str()
                .is_some_and(|t| t.ends_with("google.rpc.RetryInfo"))
        })
        .find_map(|d| {
            let delay = d["retryDelay"].as_str()?.trim();
            let secs: f64 = delay.strip_suffix('s')?.parse().ok()?;
            errors::clamp_secs(secs)
        })
}

/// Pi's mapping of `finishReason`: `STOP` is stop, `MAX_TOKENS` length, anything else error.
pub fn map_finish_reason(reason: &str) -> StopReason {
    match reason {
        "STOP" => StopReason::Stop,
        "MAX_TOKENS" => StopReason::Length,
        _ => StopReason::Error,
    }
}

/// Pi's usage rule: cached tokens are taken out of the prompt, thoughts count as output, the total
/// is the API's `totalTokenCount`.
pub fn parse_usage(u: &Value) -> Usage {
    let n = |k: &str| u[k].as_u64().unwrap_or(0);
    let cached = n("cachedContentTokenCount");
    Usage {
        input: n("promptTokenCount").saturating_sub(cached),
        output: n("candidatesTokenCount").saturating_add(n("thoughtsTokenCount")),
        cache_read: cached,
        cache_write: 0,
        total_tokens: n("totalTokenCount"),
    }
}

/// Reads a Gemini chunk stream to the finished reply. `counter` numbers the tool calls that come
/// without an id (or with an id already used in this reply).
///
/// A chunk carrying an `error` is the provider's failure, typed by its `status`
/// ([`errors::from_stream_error`], with the `RetryInfo` delay of a rate limit) and carrying the
/// SDK's message (`got status: {status}. {chunk}`). A finish reason other than
/// `STOP`/`MAX_TOKENS` ends the reply with `"An unknown error occurred"`, as Pi; a blocked
/// prompt (`promptFeedback.blockReason`) with `"The prompt was blocked: {reason}"`. A stream
/// that ends before a chunk with a `finishReason` (or a block reason) is
/// [`ProviderError::StreamCut`].
pub async fn read_stream(
    spec: &ModelSpec,
    stream: &mut SseStream,
    counter: &AtomicU64,
) -> Result<AssistantMessage, ProviderError> {
    let mut msg = empty_reply(spec);
    // Whether the last block is still open to text deltas (a tool call closes it).
    let mut open = false;
    let mut finished = false;
    while let Some(ev) = stream.next_event().await? {
        if ev.data.trim().is_empty() {
            continue;
        }
        let chunk: Value = serde_json::from_str(&ev.data).map_err(|e| ProviderError::Protocol {
            message: format!("Gemini sent an unparsable chunk ({e}): {}", ev.data),
        })?;
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            let status = match &error["status"] {
                Value::String(s) => s.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            let message = format!("got status: {status}. {chunk}");
            let typed = errors::from_stream_error(&status, &message);
            return Err(with_retry_info(typed, error));
        }
        if let Some(reason) = chunk["promptFeedback"]["blockReason"].as_str() {
            msg.stop_reason = StopReason::Error;
            msg.error_message = Some(format!("The prompt was blocked: {reason}"));
            return Ok(msg);
        }
        if let Some(id) = chunk["responseId"].as_str() {
            msg.response_id = Some(id.to_owned());
        }
        let candidate = &chunk["candidates"][0];
        for part in candidate["content"]["parts"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let sig = part["thoughtSignature"].as_str().filter(|s| !s.is_empty());
            if let Some(text) = part["text"].as_str() {
                let thought = part["thought"] == json!(true);
                let continues = open
                    && matches!(
                        (msg.content.last(), thought),
                        (Some(AssistantBlock::Thinking { .. }), true)
                            | (Some(AssistantBlock::Text { .. }), false)
                    );
                if !continues {
                    msg.content.push(if thought {
                        AssistantBlock::Thinking {
                            thinking: String::new(),
                            signature: None,
                            redacted: false,
                        }
                    } else {
                        AssistantBlock::Text {
                            text: String::new(),
                            signature: None,
                        }
                    });
                    open = true;
                }
                match msg.content.last_mut() {
                    Some(AssistantBlock::Thinking {
                        thinking,
                        signature,
                        ..
                    }) => {
                        thinking.push_str(text);
                        if let Some(sig) = sig {
                            *signature = Some(sig.to_owned());
                        }
                    }
                    Some(AssistantBlock::Text { text: t, signature }) => {
                        t.push_str(text);
                        if let Some(sig) = sig {
                            *signature = Some(sig.to_owned());
                        }
                    }
                    _ => {}
                }
            }
            if let Some(fc) = part.get("functionCall").filter(|f| f.is_object()) {
                open = false;
                let name = fc["name"].as_str().unwrap_or("").to_owned();
                let given = fc["id"].as_str().filter(|s| !s.is_empty());
                let id = match given {
                    Some(id) if !msg.tool_calls().any(|c| c.id == id) => id.to_owned(),
                    _ => format!("{name}_{}", counter.fetch_add(1, Ordering::Relaxed) + 1),
                };
                let arguments = match &fc["args"] {
                    Value::Null => json!({}),
                    other => other.clone(),
                };
                msg.content.push(AssistantBlock::ToolCall(ToolCall {
                    id,
                    name,
                    arguments,
                    thought_signature: sig.map(str::to_owned),
                }));
            }
        }
        if let Some(reason) = candidate["finishReason"].as_str() {
            finished = true;
            msg.stop_reason = map_finish_reason(reason);
            if msg.tool_calls().next().is_some() {
                msg.stop_reason = StopReason::ToolUse;
            }
        }
        if chunk["usageMetadata"].is_object() {
            msg.usage = parse_usage(&chunk["usageMetadata"]);
        }
    }
    let cut = (!finished).then_some("Gemini stream ended before a chunk with a finishReason");
    finish_reply(msg, cut)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::ApiKind;
    use crate::providers::sse::SseEvent;
    use crate::providers::stream::{test_spec, test_stream};

    fn spec(model: &str) -> ModelSpec {
        let api = ApiKind::GoogleGenerativeAi;
        test_spec("google", api, model, "http://127.0.0.1:1/v1beta")
    }

    fn stream(chunks: &[Value]) -> SseStream {
        let evs: Vec<SseEvent> = chunks
            .iter()
            .map(|c| SseEvent::data(c.to_string()))
            .collect();
        test_stream(&evs)
    }

    fn parts(parts: Value) -> Value {
        json!({"candidates": [{"content": {"parts": parts, "role": "model"}, "index": 0}], "responseId": "g1"})
    }

    #[tokio::test]
    async fn reads_thoughts_text_calls_and_usage() {
        let counter = AtomicU64::new(0);
        let mut s = stream(&[
            parts(json!([{"text": "Hmm", "thought": true, "thoughtSignature": "c2ln"}])),
            parts(json!([{"text": ".", "thought": true}])),
            parts(json!([{"text": "Read"}])),
            parts(json!([{"text": "ing."}])),
            parts(
                json!([{"functionCall": {"name": "read", "args": {"path": "a.txt"}}, "thoughtSignature": "ZmNzaWc="},
                         {"functionCall": {"name": "ls", "args": {}, "id": "x"}},
                         {"functionCall": {"name": "ls", "id": "x"}}]),
            ),
            json!({"candidates": [{"content": {"parts": [{"text": ""}], "role": "model"}, "finishReason": "STOP"}],
                   "usageMetadata": {"promptTokenCount": 100, "cachedContentTokenCount": 20,
                                     "candidatesTokenCount": 30, "thoughtsTokenCount": 12, "totalTokenCount": 142}}),
        ]);
        let m = read_stream(&spec("gemini-2.5-flash"), &mut s, &counter)
            .await
            .unwrap();
        assert_eq!(
            m.content[0],
            AssistantBlock::Thinking {
                thinking: "Hmm.".into(),
                signature: Some("c2ln".into()),
                redacted: false
            }
        );
        assert_eq!(m.text(), "Reading.");
        let ids: Vec<&str> = m.tool_calls().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["read_1", "x", "ls_2"]);
        assert_eq!(m.tool_calls().nth(2).unwrap().arguments, json!({}));
        let signatures: Vec<Option<&str>> = m
            .tool_calls()
            .map(|c| c.thought_signature.as_deref())
            .collect();
        assert_eq!(signatures, [Some("ZmNzaWc="), None, None]);
        assert_eq!(m.stop_reason, StopReason::ToolUse);
        assert_eq!(m.response_id.as_deref(), Some("g1"));
        assert_eq!(
            m.usage,
            Usage {
                input: 80,
                output: 42,
                cache_read: 20,
                cache_write: 0,
                total_tokens: 142
            }
        );
        // The counter goes on across replies of the same provider.
        let mut s = stream(&[
            parts(json!([{"functionCall": {"name": "read", "args": {}}}])),
            json!({"candidates": [{"finishReason": "STOP"}]}),
        ]);
        let m = read_stream(&spec("gemini-2.5-flash"), &mut s, &counter)
            .await
            .unwrap();
        assert_eq!(m.tool_calls().next().unwrap().id, "read_3");
    }

    #[tokio::test]
    async fn finish_reasons_and_error_chunks() {
        let counter = AtomicU64::new(0);
        for (reason, stop, error) in [
            ("STOP", StopReason::Stop, None),
            ("MAX_TOKENS", StopReason::Length, None),
            (
                "SAFETY",
                StopReason::Error,
                Some("An unknown error occurred"),
            ),
        ] {
            let mut s = stream(&[
                parts(json!([{"text": "x"}])),
                json!({"candidates": [{"finishReason": reason}]}),
            ]);
            let m = read_stream(&spec("gemini-2.5-flash"), &mut s, &counter)
                .await
                .unwrap();
            assert_eq!(m.stop_reason, stop, "{reason}");
            assert_eq!(m.error_message.as_deref(), error);
        }
        let mut s =
            stream(&[json!({"error": {"code": 503, "message": "busy", "status": "UNAVAILABLE"}})]);
        let err = read_stream(&spec("gemini-2.5-flash"), &mut s, &counter)
            .await
            .unwrap_err();
        assert_eq!(
            err,
            ProviderError::Overloaded {
                status: 503,
                message: "UNAVAILABLE in the stream: got status: UNAVAILABLE. {\"error\":{\"code\":503,\"message\":\"busy\",\"status\":\"UNAVAILABLE\"}}".into()
            }
        );
        for (status, kind) in [
            ("INTERNAL", "server_error"),
            ("RESOURCE_EXHAUSTED", "rate_limited"),
        ] {
            let mut s = stream(&[
                parts(json!([{"text": "x"}])),
                json!({"error": {"code": 500, "message": "m", "status": status, "details": [
                    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}]}}),
            ]);
            let err = read_stream(&spec("gemini-2.5-flash"), &mut s, &counter)
                .await
                .unwrap_err();
            assert_eq!(err.kind(), kind, "{err}");
            if let ProviderError::RateLimited { retry_after, .. } = err {
                assert_eq!(retry_after, Some(std::time::Duration::from_secs(7)));
            }
        }
        // No finishReason in the last chunk: the stream was cut, even if it closed cleanly.
        let mut s = stream(&[parts(
            json!([{"functionCall": {"name": "bash", "args": {"command": "ls"}}}]),
        )]);
        let err = read_stream(&spec("gemini-2.5-flash"), &mut s, &counter)
            .await
            .unwrap_err();
        assert!(matches!(err, ProviderError::StreamCut { .. }), "{err:?}");
        // A blocked prompt is the reply, an error one.
        let mut s = stream(&[json!({"promptFeedback": {"blockReason": "SAFETY"}})]);
        let m = read_stream(&spec("gemini-2.5-flash"), &mut s, &counter)
            .await
            .unwrap();
        assert_eq!(m.stop_reason, StopReason::Error);
        assert_eq!(
            m.error_message.as_deref(),
            Some("The prompt was blocked: SAFETY")
        );
    }

    #[test]
    fn key_errors_are_authentication_and_retry_info_is_the_wait() {
        let bad_key = json!({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
            "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}});
        let err = classify_http_error(400, &[], &bad_key.to_string());
        assert!(
            matches!(err, ProviderError::Authentication { status: 400, .. }),
            "{err:?}"
        );
        let other =
            json!({"error": {"code": 400, "message": "bad field", "status": "INVALID_ARGUMENT"}});
        assert_eq!(
            classify_http_error(400, &[], &other.to_string()).kind(),
            "invalid_request"
        );
        let limited = json!({"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure"},
                        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.5s"}]}});
        let wait = |headers: &[(String, String)], body: &Value| match classify_http_error(
            429,
            headers,
            &body.to_string(),
        ) {
            ProviderError::RateLimited { retry_after, .. } => retry_after,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            wait(&[], &limited),
            Some(std::time::Duration::from_millis(1500))
        );
        // A Retry-After header wins; an absurd delay is clamped.
        let header = [("retry-after".to_owned(), "3".to_owned())];
        assert_eq!(
            wait(&header, &limited),
            Some(std::time::Duration::from_secs(3))
        );
        let mut absurd = limited.clone();
        absurd["error"]["details"][1]["retryDelay"] = json!("1e300s");
        assert_eq!(wait(&[], &absurd), Some(errors::MAX_SERVER_WAIT));
        absurd["error"]["details"][1]["retryDelay"] = json!("-5s");
        assert_eq!(wait(&[], &absurd), None);
    }
}
