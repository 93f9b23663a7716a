//! The stream direction of OpenAI Chat Completions: `data:` chunks (content, reasoning and
//! tool-call deltas, `finish_reason`, usage, `[DONE]`) read into an [`AssistantMessage`], error
//! chunks into typed [`ProviderError`]s.
//!
//! Depends on `conversation` and the provider seams only.

use serde_json::{Value, json};

use crate::conversation::{AssistantBlock, AssistantMessage, StopReason, ToolCall, Usage};
use crate::providers::errors;
use crate::providers::sse::SseStream;
use crate::providers::stream::empty_reply;
use crate::providers::transform::parse_streaming_json;
use crate::providers::{ModelSpec, ProviderError};

/// Pi's mapping of `finish_reason`: the stop reason and, for errors, the message.
pub fn map_finish_reason(reason: Option<&str>) -> (StopReason, Option<String>) {
    match reason {
        None | Some("stop" | "end") => (StopReason::Stop, None),
        Some("length") => (StopReason::Length, None),
        Some("tool_calls" | "function_call") => (StopReason::ToolUse, None),
        Some(other) => (
            StopReason::Error,
            Some(format!("Provider finish_reason: {other}")),
        ),
    }
}

/// Pi's usage rule: cached tokens are read from the cache, `cache_write_tokens` written to it,
/// and both are taken out of `prompt_tokens`.
pub fn parse_usage(u: &Value) -> Usage {
    let n = |v: &Value| v.as_u64();
    let prompt = n(&u["prompt_tokens"]).unwrap_or(0);
    let details = &u["prompt_tokens_details"];
    let reported_cached = n(&details["cached_tokens"])
        .or_else(|| n(&u["prompt_cache_hit_tokens"]))
        .unwrap_or(0);
    let cache_write = n(&details["cache_write_tokens"]).unwrap_or(0);
    let cache_read = if cache_write > 0 {
        reported_cached.saturating_sub(cache_write)
    } else {
        reported_cached
    };
    let input = prompt.saturating_sub(cache_read.saturating_add(cache_write));
    let output = n(&u["completion_tokens"]).unwrap_or(0);
    Usage {
        input,
        output,
        cache_read,
        cache_write,
        total_tokens: input
            .saturating_add(output)
            .saturating_add(cache_read)
            .saturating_add(cache_write),
    }
}

/// The fields a reasoning delta may arrive in (and the thinking is sent back under).
pub const REASONING_FIELDS: [&str; 3] = ["reasoning_content", "reasoning", "reasoning_text"];

/// Reads a Chat Completions chunk stream to the finished reply.
///
/// A chunk (or `event: error`) carrying an `error` object is the provider's failure, typed by
/// its `type` or `code` ([`errors::from_stream_error`]: `server_error` is a server error,
/// retried), never an error reply counted against the model (the OpenAI SDK throws it for Pi,
/// whose session retries by regex). A stream that ends with neither a `finish_reason` nor
/// `[DONE]` is [`ProviderError::StreamCut`]: a reply cut after a clean connection close (a tool
/// call half sent) is never taken as the model's answer.
pub async fn read_stream(
    spec: &ModelSpec,
    stream: &mut SseStream,
) -> Result<AssistantMessage, ProviderError> {
    let mut msg = empty_reply(spec);
    // Tool calls by stream index (or id): position in msg.content and the argument text so far.
    let mut calls: Vec<(Option<u64>, usize, String)> = Vec::new();
    let mut finished = false;
    while let Some(ev) = stream.next_event().await? {
        if ev.data.trim() == "[DONE]" {
            finished = true;
            break;
        }
        if ev.event.as_deref() == Some("error") && serde_json::from_str::<Value>(&ev.data).is_err()
        {
            return Err(errors::from_stream_error("", &ev.data));
        }
        let chunk: Value = serde_json::from_str(&ev.data).map_err(|e| ProviderError::Protocol {
            message: format!("OpenAI sent an unparsable chunk ({e}): {}", ev.data),
        })?;
        if ev.event.as_deref() == Some("error") || chunk.get("error").is_some_and(|e| !e.is_null())
        {
            let err = chunk.get("error").unwrap_or(&chunk);
            let text = |v: &Value| match v {
                Value::String(s) => Some(s.clone()),
                Value::Null => None,
                other => Some(other.to_string()),
            };
            let code = text(&err["type"]).or_else(|| text(&err["code"]));
            let message = text(&err["message"]).unwrap_or_else(|| err.to_string());
            return Err(errors::from_stream_error(
                code.as_deref().unwrap_or(""),
                &message,
            ));
        }
        if msg.response_id.is_none() {
            if let Some(id) = chunk["id"].as_str() {
                msg.response_id = Some(id.to_owned());
            }
        }
        let choice = chunk["choices"].get(0);
        if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
            msg.usage = parse_usage(u);
        } else if let Some(u) = choice
            .and_then(|c| c.get("usage"))
            .filter(|u| u.is_object())
        {
            msg.usage = parse_usage(u);
        }
        let Some(choice) = choice else { continue };
        if let Some(reason) = choice["finish_reason"].as_str() {
            finished = true;
            let (stop, error) = map_finish_reason(Some(reason));
            msg.stop_reason = stop;
            msg.error_message = error;
        }
        let delta = &choice["delta"];
        if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
            match msg.content.last_mut() {
                Some(AssistantBlock::Text { text: t, .. }) => t.push_str(text),
                _ => msg.content.push(AssistantBlock::Text {
                    text: text.to_owned(),
                    signature: None,
                }),
            }
        }
        if let Some((field, text)) = REASONING_FIELDS.iter().find_map(|f| {
            delta[*f]
                .as_str()
                .filter(|t| !t.is_empty())
                .map(|t| (*f, t))
        }) {
            match msg.content.last_mut() {
                Some(AssistantBlock::Thinking {
                    thinking,
                    signature,
                    ..
                }) if signature.as_deref() == Some(field) => thinking.push_str(text),
                _ => msg.content.push(AssistantBlock::Thinking {
                    thinking: text.to_owned(),
                    signature: Some(field.to_owned()),
                    redacted: false,
                }),
            }
        }
        for tc in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = tc["index"].as_u64();
            let id = tc["id"].as_str().filter(|s| !s.is_empty());
            let found = calls.iter().position(|(i, pos, _)| match (index, i) {
                (Some(a), Some(b)) => a == *b,
                _ => id.is_some_and(
                    |id| matches!(&msg.content[*pos], AssistantBlock::ToolCall(c) if c.id == id),
                ),
            });
            let slot = match found {
                Some(slot) => slot,
                None if index.is_none() && id.is_none() && !calls.is_empty() => calls.len() - 1,
                None => {
                    msg.content.push(AssistantBlock::ToolCall(ToolCall {
                        id: String::new(),
                        name: String::new(),
                        arguments: json!({}),
                        thought_signature: None,
                    }));
                    calls.push((index, msg.content.len() - 1, String::new()));
                    calls.len() - 1
                }
            };
            let (_, pos, args) = &mut calls[slot];
            if let AssistantBlock::ToolCall(call) = &mut msg.content[*pos] {
                if let Some(id) = id {
                    call.id = id.to_owned();
                }
                if let Some(name) = tc["function"]["name"].as_str().filter(|s| !s.is_empty()) {
                    call.name = name.to_owned();
                }
                if let Some(a) = tc["function"]["arguments"].as_str() {
                    args.push_str(a);
                }
            }
        }
    }
    if !finished {
        return Err(ProviderError::StreamCut {
            message: "OpenAI Chat stream ended before a finish_reason or [DONE]".into(),
        });
    }
    for (_, pos, args) in &calls {
        if let AssistantBlock::ToolCall(call) = &mut msg.content[*pos] {
            call.arguments = parse_streaming_json(args);
        }
    }
    Ok(msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::ApiKind;
    use crate::providers::sse::SseEvent;
    use crate::providers::stream::{test_spec, test_stream};

    fn spec() -> ModelSpec {
        let api = ApiKind::OpenaiCompletions;
        test_spec("openai", api, "gpt-test", "http://127.0.0.1:1/v1")
    }

    fn stream(chunks: &[Value]) -> SseStream {
        let mut evs: Vec<SseEvent> = chunks
            .iter()
            .map(|c| SseEvent::data(c.to_string()))
            .collect();
        evs.push(SseEvent::data("[DONE]"));
        test_stream(&evs)
    }

    #[test]
    fn usage_follows_pi() {
        let u = parse_usage(
            &json!({"prompt_tokens":100,"completion_tokens":42,"prompt_tokens_details":{"cached_tokens":20}}),
        );
        assert_eq!(
            u,
            Usage {
                input: 80,
                output: 42,
                cache_read: 20,
                cache_write: 0,
                total_tokens: 142
            }
        );
        let u = parse_usage(
            &json!({"prompt_tokens":100,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":30,"cache_write_tokens":10}}),
        );
        assert_eq!((u.input, u.cache_read, u.cache_write), (70, 20, 10));
    }

    #[tokio::test]
    async fn reads_text_reasoning_and_interleaved_tool_calls() {
        let mut s = stream(&[
            json!({"id":"chatcmpl-1","choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":"think"}}]}),
            json!({"id":"chatcmpl-1","choices":[{"index":0,"delta":{"reasoning_content":"ing"}}]}),
            json!({"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"Read"}}]}),
            json!({"id":"chatcmpl-1","choices":[{"index":0,"delta":{"content":"ing."}}]}),
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":""}}]}}]}),
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"ls","arguments":"{}"}}]}}]}),
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"a.txt\"}"}}]}}]}),
            json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}),
            json!({"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3}}),
        ]);
        let m = read_stream(&spec(), &mut s).await.unwrap();
        assert_eq!(
            m.content,
            vec![
                AssistantBlock::Thinking {
                    thinking: "thinking".into(),
                    signature: Some("reasoning_content".into()),
                    redacted: false
                },
                AssistantBlock::Text {
                    text: "Reading.".into(),
                    signature: None
                },
                AssistantBlock::ToolCall(ToolCall {
                    id: "call_1".into(),
                    name: "read".into(),
                    arguments: json!({"path":"a.txt"}),
                    thought_signature: None,
                }),
                AssistantBlock::ToolCall(ToolCall {
                    id: "call_2".into(),
                    name: "ls".into(),
                    arguments: json!({}),
                    thought_signature: None,
                }),
            ]
        );
        assert_eq!(m.stop_reason, StopReason::ToolUse);
        assert_eq!(m.usage.total_tokens, 13);
        assert_eq!(m.response_id.as_deref(), Some("chatcmpl-1"));
    }

    #[tokio::test]
    async fn error_events_are_typed_provider_errors() {
        let hi = SseEvent::data(
            json!({"id":"c","choices":[{"index":0,"delta":{"content":"Hi"}}]}).to_string(),
        );
        let evs = [hi.clone(), SseEvent::named("error", "upstream went away")];
        let err = read_stream(&spec(), &mut test_stream(&evs))
            .await
            .unwrap_err();
        assert_eq!(
            err,
            ProviderError::Server {
                status: 500,
                message: "error event in the stream: upstream went away".into()
            }
        );
        let chunk = |error: Value| SseEvent::data(json!({ "error": error }).to_string());
        for (error, kind) in [
            (
                json!({"message": "boom", "type": "server_error", "code": null}),
                "server_error",
            ),
            (
                json!({"message": "slow", "type": null, "code": "rate_limit_exceeded"}),
                "rate_limited",
            ),
            (
                json!({"message": "busy", "type": "overloaded"}),
                "overloaded",
            ),
        ] {
            let evs = [hi.clone(), chunk(error)];
            let err = read_stream(&spec(), &mut test_stream(&evs))
                .await
                .unwrap_err();
            assert_eq!(err.kind(), kind, "{err}");
        }
    }

    #[tokio::test]
    async fn a_stream_ending_without_finish_reason_or_done_is_cut() {
        let call = SseEvent::data(
            json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\": \"rm -"}}]}}]})
                .to_string(),
        );
        let err = read_stream(&spec(), &mut test_stream(std::slice::from_ref(&call)))
            .await
            .unwrap_err();
        assert!(matches!(err, ProviderError::StreamCut { .. }), "{err:?}");
        // A finish_reason without [DONE], or [DONE] without a finish_reason, is a whole reply.
        let finish = SseEvent::data(
            json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}).to_string(),
        );
        let m = read_stream(&spec(), &mut test_stream(&[call, finish]))
            .await
            .unwrap();
        assert_eq!(m.stop_reason, StopReason::ToolUse);
        let text =
            SseEvent::data(json!({"choices":[{"index":0,"delta":{"content":"ok"}}]}).to_string());
        let m = read_stream(&spec(), &mut test_stream(&[text, SseEvent::data("[DONE]")]))
            .await
            .unwrap();
        assert_eq!(m.text(), "ok");
    }

    #[test]
    fn finish_reasons() {
        assert_eq!(map_finish_reason(None).0, StopReason::Stop);
        assert_eq!(map_finish_reason(Some("length")).0, StopReason::Length);
        assert_eq!(
            map_finish_reason(Some("content_filter")),
            (
                StopReason::Error,
                Some("Provider finish_reason: content_filter".into())
            )
        );
    }
}
