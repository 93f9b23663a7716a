//! The stream direction of Anthropic Messages: `message_start` / `content_block_*` /
//! `message_delta` / `message_stop` events read into an [`AssistantMessage`], error events into
//! typed [`ProviderError`]s.
//!
//! Depends on `conversation` and the provider seams only.

use serde_json::{Value, json};

use crate::conversation::{AssistantBlock, AssistantMessage, StopReason, ToolCall, Usage};
use crate::providers::errors;
use crate::providers::sse::SseStream;
use crate::providers::stream::{empty_reply, finish_reply};
use crate::providers::transform::parse_streaming_json;
use crate::providers::{ModelSpec, ProviderError};

/// Pi's mapping of Anthropic stop reasons.
pub fn map_stop_reason(reason: &str) -> Result<StopReason, ProviderError> {
    match reason {
        "end_turn" | "pause_turn" | "stop_sequence" => Ok(StopReason::Stop),
        "max_tokens" => Ok(StopReason::Length),
        "tool_use" => Ok(StopReason::ToolUse),
        "refusal" | "sensitive" => Ok(StopReason::Error),
        other => Err(ProviderError::Protocol {
            message: format!("Unhandled stop reason: {other}"),
        }),
    }
}

fn apply_usage(usage: &mut Usage, u: &Value) {
    let set = |field: &mut u64, key: &str| {
        if let Some(n) = u.get(key).and_then(Value::as_u64) {
            *field = n;
        }
    };
    set(&mut usage.input, "input_tokens");
    set(&mut usage.output, "output_tokens");
    set(&mut usage.cache_read, "cache_read_input_tokens");
    set(&mut usage.cache_write, "cache_creation_input_tokens");
    usage.total_tokens = usage
        .input
        .saturating_add(usage.output)
        .saturating_add(usage.cache_read)
        .saturating_add(usage.cache_write);
}

/// Reads an Anthropic event stream to the finished reply.
///
/// An `event: error` is the provider's failure, typed by its `error.type`
/// ([`errors::from_stream_error`]: `overloaded_error` is overloaded, `api_error` a server error,
/// both retried). Pi makes it an error reply and leaves retrying to its session's regex; we
/// never count it against the model. A refusal (`stop_reason: refusal`) ends the reply with stop
/// reason `error` and `"An unknown error occurred"`, as Pi. A stream that ends before
/// `message_stop` is [`ProviderError::StreamCut`]; an unknown stop reason or unparsable data is
/// [`ProviderError::Protocol`].
pub async fn read_stream(
    spec: &ModelSpec,
    stream: &mut SseStream,
) -> Result<AssistantMessage, ProviderError> {
    let mut msg = empty_reply(spec);
    // Anthropic's block index -> (position in msg.content, partial tool JSON once a delta came).
    let mut blocks: Vec<(u64, usize, Option<String>)> = Vec::new();
    let mut stopped = false;
    while let Some(ev) = stream.next_event().await? {
        let name = ev.event.as_deref().unwrap_or("");
        if name == "error" {
            let data: Value = serde_json::from_str(&ev.data).unwrap_or(Value::Null);
            let error = &data["error"];
            return Err(match (error["type"].as_str(), error["message"].as_str()) {
                (Some(kind), message) => errors::from_stream_error(kind, message.unwrap_or("")),
                (None, _) => errors::from_stream_error("", &ev.data),
            });
        }
        if !matches!(
            name,
            "message_start"
                | "message_delta"
                | "message_stop"
                | "content_block_start"
                | "content_block_delta"
                | "content_block_stop"
        ) {
            continue;
        }
        let data: Value = serde_json::from_str(&ev.data)
            .ok()
            .or_else(|| {
                let repaired = parse_streaming_json(&ev.data);
                (repaired != json!({})).then_some(repaired)
            })
            .ok_or_else(|| ProviderError::Protocol {
                message: format!("Anthropic sent unparsable {name} data: {}", ev.data),
            })?;
        match name {
            "message_start" => {
                let m = &data["message"];
                if let Some(id) = m.get("id").and_then(Value::as_str) {
                    msg.response_id = Some(id.to_owned());
                }
                apply_usage(&mut msg.usage, &m["usage"]);
            }
            "content_block_start" => {
                let index = data["index"].as_u64().unwrap_or(0);
                let cb = &data["content_block"];
                let block = match cb["type"].as_str().unwrap_or("") {
                    "text" => AssistantBlock::Text {
                        text: cb["text"].as_str().unwrap_or("").to_owned(),
                        signature: None,
                    },
                    "thinking" => AssistantBlock::Thinking {
                        thinking: cb["thinking"].as_str().unwrap_or("").to_owned(),
                        signature: Some(cb["signature"].as_str().unwrap_or("").to_owned()),
                        redacted: false,
                    },
                    "redacted_thinking" => AssistantBlock::Thinking {
                        thinking: "[Reasoning redacted]".to_owned(),
                        signature: Some(cb["data"].as_str().unwrap_or("").to_owned()),
                        redacted: true,
                    },
                    "tool_use" => AssistantBlock::ToolCall(ToolCall {
                        id: cb["id"].as_str().unwrap_or("").to_owned(),
                        name: cb["name"].as_str().unwrap_or("").to_owned(),
                        arguments: match &cb["input"] {
                            Value::Object(o) => Value::Object(o.clone()),
                            _ => json!({}),
                        },
                        thought_signature: None,
                    }),
                    _ => continue,
                };
                msg.content.push(block);
                blocks.push((index, msg.content.len() - 1, None));
            }
            "content_block_delta" => {
                let index = data["index"].as_u64().unwrap_or(0);
                let Some((_, pos, partial)) = blocks.iter_mut().find(|(i, _, _)| *i == index)
                else {
                    continue;
                };
                let delta = &data["delta"];
                let s = |k: &str| delta[k].as_str().unwrap_or("");
                match (delta["type"].as_str().unwrap_or(""), &mut msg.content[*pos]) {
                    ("text_delta", AssistantBlock::Text { text, .. }) => text.push_str(s("text")),
                    ("thinking_delta", AssistantBlock::Thinking { thinking, .. }) => {
                        thinking.push_str(s("thinking"))
                    }
                    ("signature_delta", AssistantBlock::Thinking { signature, .. }) => signature
                        .get_or_insert_with(String::new)
                        .push_str(s("signature")),
                    // The arguments are parsed from the whole partial JSON when the block
                    // stops (or the reply ends): parsing it again at every delta, as Pi does
                    // to show a call as it streams, costs time quadratic in its length, and
                    // nothing reads the arguments before then.
                    ("input_json_delta", AssistantBlock::ToolCall(_)) => {
                        partial
                            .get_or_insert_with(String::new)
                            .push_str(s("partial_json"));
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {}
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    msg.stop_reason = map_stop_reason(reason)?;
                }
                apply_usage(&mut msg.usage, &data["usage"]);
            }
            "message_stop" => {
                stopped = true;
                break;
            }
            _ => {}
        }
    }
    // A tool call's arguments: its partial JSON parsed as a whole, once it had a delta.
    for (_, pos, partial) in &blocks {
        if let (Some(partial), AssistantBlock::ToolCall(call)) = (partial, &mut msg.content[*pos]) {
            call.arguments = parse_streaming_json(partial);
        }
    }
    let cut = (!stopped).then_some("Anthropic stream ended before message_stop");
    finish_reply(msg, cut)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::ApiKind;
    use crate::providers::sse::SseEvent;
    use crate::providers::stream::{test_spec, test_stream};

    fn spec() -> ModelSpec {
        let api = ApiKind::AnthropicMessages;
        test_spec("anthropic", api, "claude-test", "http://127.0.0.1:1")
    }

    fn stream(events: &[(&str, Value)]) -> SseStream {
        let evs: Vec<SseEvent> = events
            .iter()
            .map(|(n, d)| SseEvent::named(*n, d.to_string()))
            .collect();
        test_stream(&evs)
    }

    #[tokio::test]
    async fn reads_text_tool_use_and_usage() {
        let mut s = stream(&[
            (
                "message_start",
                json!({"type":"message_start","message":{"id":"msg_01","usage":{"input_tokens":100,"output_tokens":1,"cache_read_input_tokens":20,"cache_creation_input_tokens":5}}}),
            ),
            ("ping", json!({"type":"ping"})),
            (
                "content_block_start",
                json!({"index":0,"content_block":{"type":"text","text":""}}),
            ),
            (
                "content_block_delta",
                json!({"index":0,"delta":{"type":"text_delta","text":"Read"}}),
            ),
            (
                "content_block_delta",
                json!({"index":0,"delta":{"type":"text_delta","text":"ing."}}),
            ),
            ("content_block_stop", json!({"index":0})),
            (
                "content_block_start",
                json!({"index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"read","input":{}}}),
            ),
            (
                "content_block_delta",
                json!({"index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}),
            ),
            (
                "content_block_delta",
                json!({"index":1,"delta":{"type":"input_json_delta","partial_json":"\"a.txt\"}"}}),
            ),
            ("content_block_stop", json!({"index":1})),
            (
                "content_block_start",
                json!({"index":2,"content_block":{"type":"tool_use","id":"toolu_02","name":"ls","input":{}}}),
            ),
            ("content_block_stop", json!({"index":2})),
            (
                "message_delta",
                json!({"delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":42,"input_tokens":null}}),
            ),
            ("message_stop", json!({})),
        ]);
        let m = read_stream(&spec(), &mut s).await.unwrap();
        assert_eq!(m.text(), "Reading.");
        let calls: Vec<_> = m.tool_calls().cloned().collect();
        assert_eq!(calls[0].arguments, json!({"path":"a.txt"}));
        assert_eq!(calls[1].arguments, json!({}));
        assert_eq!(m.stop_reason, StopReason::ToolUse);
        assert_eq!(m.response_id.as_deref(), Some("msg_01"));
        assert_eq!(
            m.usage,
            Usage {
                input: 100,
                output: 42,
                cache_read: 20,
                cache_write: 5,
                total_tokens: 167
            }
        );
    }

    #[tokio::test]
    async fn a_calls_arguments_are_its_partial_json_even_without_its_block_stop() {
        // Parsed once at the end: a call whose block never stops still has its arguments,
        // repaired as Pi repairs a partial call; a call with an empty delta has `{}`, one
        // without any delta keeps its `input`.
        let delta = |index: u64, json: &str| {
            let delta = json!({"type":"input_json_delta","partial_json":json});
            ("content_block_delta", json!({"index":index,"delta":delta}))
        };
        let start = |index: u64, input: Value| {
            let block = json!({"type":"tool_use","id":"t","name":"read","input":input});
            (
                "content_block_start",
                json!({"index":index,"content_block":block}),
            )
        };
        let mut s = stream(&[
            ("message_start", json!({"message":{"id":"m"}})),
            start(0, json!({})),
            delta(0, "{\"path\":\"a"),
            delta(0, ".txt\",\"limit\":"),
            start(1, json!({"path":"kept"})),
            delta(1, ""),
            start(2, json!({"path":"kept"})),
            ("message_stop", json!({})),
        ]);
        let m = read_stream(&spec(), &mut s).await.unwrap();
        let arguments: Vec<Value> = m.tool_calls().map(|c| c.arguments.clone()).collect();
        assert_eq!(
            arguments,
            [json!({"path":"a.txt"}), json!({}), json!({"path":"kept"})]
        );
    }

    #[tokio::test]
    async fn unknown_stop_reason_and_early_end_are_errors() {
        let mut s = stream(&[
            ("message_start", json!({"message":{"id":"m"}})),
            ("message_delta", json!({"delta":{"stop_reason":"weird"}})),
        ]);
        assert_eq!(
            read_stream(&spec(), &mut s).await.unwrap_err(),
            ProviderError::Protocol {
                message: "Unhandled stop reason: weird".into()
            }
        );
        let mut s = stream(&[("message_start", json!({"message":{"id":"m"}}))]);
        assert_eq!(
            read_stream(&spec(), &mut s).await.unwrap_err(),
            ProviderError::StreamCut {
                message: "Anthropic stream ended before message_stop".into()
            }
        );
    }

    #[tokio::test]
    async fn error_events_are_typed_provider_errors() {
        let start = ("message_start", json!({"message":{"id":"m"}}));
        for (kind, expected) in [
            ("overloaded_error", "overloaded"),
            ("api_error", "server_error"),
            ("rate_limit_error", "rate_limited"),
            ("invalid_request_error", "invalid_request"),
        ] {
            let mut s = stream(&[
                start.clone(),
                (
                    "error",
                    json!({"type":"error","error":{"type":kind,"message":"try again"}}),
                ),
            ]);
            let err = read_stream(&spec(), &mut s).await.unwrap_err();
            assert_eq!(err.kind(), expected, "{err}");
            assert_eq!(
                err.is_retryable(),
                expected != "invalid_request",
                "{kind} retried"
            );
        }
        // Data that is not Anthropic's error shape is a server error, not a model error.
        let mut s = test_stream(&[SseEvent::named("error", "upstream connect error")]);
        assert_eq!(
            read_stream(&spec(), &mut s).await.unwrap_err(),
            ProviderError::Server {
                status: 500,
                message: "error event in the stream: upstream connect error".into()
            }
        );
    }
}
