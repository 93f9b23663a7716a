//! The stream direction of OpenAI Responses: `response.*` events (output items added and done,
//! reasoning summary, text and argument deltas, `response.completed`) read into an
//! [`AssistantMessage`], error events and failed responses into typed [`ProviderError`]s.
//!
//! Depends on `conversation` and the provider seams only.

use serde_json::{Map, Value, json};

use crate::conversation::{AssistantBlock, AssistantMessage, StopReason, ToolCall, Usage};
use crate::providers::errors;
use crate::providers::sse::SseStream;
use crate::providers::stream::{empty_reply, finish_reply};
use crate::providers::transform::parse_streaming_json;
use crate::providers::{ModelSpec, ProviderError};

/// The signature a text block keeps of its `message` item: `{"v":1,"id":…,"phase"?}`, so that
/// it replays to the same model with the item's id.
pub fn text_signature(item_id: &str, phase: Option<&str>) -> String {
    let mut sig = Map::new();
    sig.insert("v".into(), json!(1));
    sig.insert("id".into(), json!(item_id));
    if let Some(phase) = phase {
        sig.insert("phase".into(), json!(phase));
    }
    Value::Object(sig).to_string()
}

/// The item id and phase of a text signature ([`text_signature`]; a legacy signature is the id
/// itself).
pub fn read_text_signature(signature: &str) -> (String, Option<String>) {
    if signature.starts_with('{') {
        if let Ok(v) = serde_json::from_str::<Value>(signature) {
            if let (true, Some(id)) = (v["v"] == json!(1), v["id"].as_str()) {
                return (id.to_owned(), v["phase"].as_str().map(str::to_owned));
            }
        }
    }
    (signature.to_owned(), None)
}

/// Pi's mapping of a response `status`; an unknown status is a protocol error.
pub fn map_status(status: Option<&str>) -> Result<StopReason, ProviderError> {
    match status {
        None | Some("completed" | "in_progress" | "queued") => Ok(StopReason::Stop),
        Some("incomplete") => Ok(StopReason::Length),
        Some("failed" | "cancelled") => Ok(StopReason::Error),
        Some(other) => Err(ProviderError::Protocol {
            message: format!("Unhandled stop reason: {other}"),
        }),
    }
}

/// Pi's usage rule: `input_tokens` includes the cached tokens, which are taken out and counted
/// as cache reads; the total is the API's own `total_tokens`.
pub fn parse_usage(u: &Value) -> Usage {
    let cached = u["input_tokens_details"]["cached_tokens"]
        .as_u64()
        .unwrap_or(0);
    Usage {
        input: u["input_tokens"]
            .as_u64()
            .unwrap_or(0)
            .saturating_sub(cached),
        output: u["output_tokens"].as_u64().unwrap_or(0),
        cache_read: cached,
        cache_write: 0,
        total_tokens: u["total_tokens"].as_u64().unwrap_or(0),
    }
}

/// The typed error of an `error` event or a failed response's `error` object, by its `code`
/// (or `type`), with Pi's `{code}: {message}` as the message.
fn typed_error(error: &Value) -> ProviderError {
    let text = |k: &str| match &error[k] {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Null | Value::String(_) => None,
        other => Some(other.to_string()),
    };
    let code = text("code").or_else(|| text("type")).unwrap_or_default();
    let message = text("message").unwrap_or_else(|| "no message".to_owned());
    errors::from_stream_error(&code, &message)
}

/// The item being streamed: its JSON (summary parts and content parts kept up to date, as Pi
/// keeps them) and the position of its block in the reply.
struct Current {
    item: Value,
    pos: usize,
    partial_json: String,
    /// Arguments came (a delta or `arguments.done`) that are not parsed into the call yet.
    unparsed: bool,
}

impl Current {
    /// Parses the arguments that came into the call, once: parsing the partial JSON at every
    /// delta, as Pi does to show a call as it streams, costs time quadratic in its length, and
    /// nothing reads the arguments until the item is done, replaced or the reply ends.
    fn settle(&mut self, msg: &mut AssistantMessage) {
        if std::mem::take(&mut self.unparsed) {
            if let AssistantBlock::ToolCall(call) = &mut msg.content[self.pos] {
                call.arguments = parse_streaming_json(&self.partial_json);
            }
        }
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or("")
}

/// Reads a Responses event stream to the finished reply.
///
/// An `error` event, and a `response.failed` that carries an `error`, are the provider's
/// failures, typed by their `code` ([`errors::from_stream_error`]: `server_error` is a server
/// error, retried; Pi throws `"Error Code {code}: {message}"` / `"{code}: {message}"` and leaves
/// retrying to its session). A `response.failed` without an error but with
/// `incomplete_details` ends the reply with stop reason `error` and `"incomplete: {reason}"`
/// (what the model produced was refused), one with neither is a server error; a
/// `failed`/`cancelled` status in `response.completed` ends it with `"An unknown error
/// occurred"`. A stream that ends before `response.completed` (or `response.incomplete`, which
/// Pi does not read and we take as the `incomplete` status: stop reason `length`) is
/// [`ProviderError::StreamCut`].
pub async fn read_stream(
    spec: &ModelSpec,
    stream: &mut SseStream,
) -> Result<AssistantMessage, ProviderError> {
    let mut msg = empty_reply(spec);
    let fail = |mut msg: AssistantMessage, text: String| {
        msg.stop_reason = StopReason::Error;
        msg.error_message = Some(text);
        Ok(msg)
    };
    let mut current: Option<Current> = None;
    let mut completed = false;
    while let Some(ev) = stream.next_event().await? {
        if ev.data.trim() == "[DONE]" {
            break;
        }
        let data: Value = match serde_json::from_str(&ev.data) {
            Ok(v) => v,
            Err(_) if ev.event.as_deref() == Some("error") => {
                return Err(errors::from_stream_error("", &ev.data));
            }
            Err(e) => {
                return Err(ProviderError::Protocol {
                    message: format!("OpenAI sent an unparsable event ({e}): {}", ev.data),
                });
            }
        };
        let kind = data["type"]
            .as_str()
            .or(ev.event.as_deref())
            .unwrap_or("")
            .to_owned();
        match kind.as_str() {
            "response.created" => {
                if let Some(id) = data["response"]["id"].as_str() {
                    msg.response_id = Some(id.to_owned());
                }
            }
            "response.output_item.added" => {
                let item = data["item"].clone();
                let block = match str_of(&item, "type") {
                    "reasoning" => AssistantBlock::Thinking {
                        thinking: String::new(),
                        signature: None,
                        redacted: false,
                    },
                    "message" => AssistantBlock::Text {
                        text: String::new(),
                        signature: None,
                    },
                    "function_call" => AssistantBlock::ToolCall(ToolCall {
                        id: format!("{}|{}", str_of(&item, "call_id"), str_of(&item, "id")),
                        name: str_of(&item, "name").to_owned(),
                        arguments: json!({}),
                        thought_signature: None,
                    }),
                    _ => continue,
                };
                if let Some(mut previous) = current.take() {
                    previous.settle(&mut msg);
                }
                msg.content.push(block);
                current = Some(Current {
                    partial_json: str_of(&item, "arguments").to_owned(),
                    item,
                    pos: msg.content.len() - 1,
                    unparsed: false,
                });
            }
            "response.reasoning_summary_part.added" => {
                if let Some(cur) = current.as_mut().filter(|c| c.item["type"] == "reasoning") {
                    if !cur.item["summary"].is_array() {
                        cur.item["summary"] = json!([]);
                    }
                    if let Some(parts) = cur.item["summary"].as_array_mut() {
                        parts.push(data["part"].clone());
                    }
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_summary_part.done" => {
                let delta = if kind == "response.reasoning_summary_part.done" {
                    "\n\n"
                } else {
                    str_of(&data, "delta")
                };
                if let Some(cur) = current.as_mut().filter(|c| c.item["type"] == "reasoning") {
                    let Some(last) = cur.item["summary"]
                        .as_array_mut()
                        .and_then(|p| p.last_mut())
                    else {
                        continue;
                    };
                    let text = format!("{}{delta}", str_of(last, "text"));
                    last["text"] = json!(text);
                    if let AssistantBlock::Thinking { thinking, .. } = &mut msg.content[cur.pos] {
                        thinking.push_str(delta);
                    }
                }
            }
            "response.reasoning_text.delta" => {
                if let Some(cur) = current.as_ref().filter(|c| c.item["type"] == "reasoning") {
                    if let AssistantBlock::Thinking { thinking, .. } = &mut msg.content[cur.pos] {
                        thinking.push_str(str_of(&data, "delta"));
                    }
                }
            }
            "response.content_part.added" => {
                if let Some(cur) = current.as_mut().filter(|c| c.item["type"] == "message") {
                    if matches!(str_of(&data["part"], "type"), "output_text" | "refusal") {
                        if !cur.item["content"].is_array() {
                            cur.item["content"] = json!([]);
                        }
                        if let Some(parts) = cur.item["content"].as_array_mut() {
                            parts.push(data["part"].clone());
                        }
                    }
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                let (part_type, field) = if kind == "response.output_text.delta" {
                    ("output_text", "text")
                } else {
                    ("refusal", "refusal")
                };
                if let Some(cur) = current.as_mut().filter(|c| c.item["type"] == "message") {
                    let Some(last) = cur.item["content"]
                        .as_array_mut()
                        .and_then(|p| p.last_mut())
                        .filter(|p| p["type"] == part_type)
                    else {
                        continue;
                    };
                    let delta = str_of(&data, "delta");
                    let text = format!("{}{delta}", str_of(last, field));
                    last[field] = json!(text);
                    if let AssistantBlock::Text { text, .. } = &mut msg.content[cur.pos] {
                        text.push_str(delta);
                    }
                }
            }
            "response.function_call_arguments.delta" | "response.function_call_arguments.done" => {
                if let Some(cur) = current
                    .as_mut()
                    .filter(|c| c.item["type"] == "function_call")
                {
                    if kind.ends_with(".delta") {
                        cur.partial_json.push_str(str_of(&data, "delta"));
                    } else {
                        cur.partial_json = str_of(&data, "arguments").to_owned();
                    }
                    cur.unparsed = true;
                }
            }
            "response.output_item.done" => {
                let item = &data["item"];
                let Some(mut cur) = current.take() else {
                    continue;
                };
                if str_of(item, "type") != "function_call" {
                    cur.settle(&mut msg);
                }
                match (str_of(item, "type"), &mut msg.content[cur.pos]) {
                    (
                        "reasoning",
                        AssistantBlock::Thinking {
                            thinking,
                            signature,
                            ..
                        },
                    ) => {
                        let parts = item["summary"].as_array().cloned().unwrap_or_default();
                        let texts: Vec<&str> = parts.iter().map(|p| str_of(p, "text")).collect();
                        *thinking = texts.join("\n\n");
                        if !parts.is_empty() {
                            *signature = Some(item.to_string());
                        }
                    }
                    ("message", AssistantBlock::Text { text, signature }) => {
                        let parts = item["content"].as_array().cloned().unwrap_or_default();
                        *text = parts
                            .iter()
                            .map(|p| {
                                if p["type"] == "output_text" {
                                    str_of(p, "text")
                                } else {
                                    str_of(p, "refusal")
                                }
                            })
                            .collect();
                        *signature =
                            Some(text_signature(str_of(item, "id"), item["phase"].as_str()));
                    }
                    ("function_call", AssistantBlock::ToolCall(call)) => {
                        call.arguments = if cur.partial_json.is_empty() {
                            let args = item["arguments"].as_str().filter(|a| !a.is_empty());
                            parse_streaming_json(args.unwrap_or("{}"))
                        } else {
                            parse_streaming_json(&cur.partial_json)
                        };
                        call.id = format!("{}|{}", str_of(item, "call_id"), str_of(item, "id"));
                        call.name = str_of(item, "name").to_owned();
                    }
                    _ => {}
                }
            }
            // OpenAI ends a reply cut by `max_output_tokens` with `response.incomplete`; Pi
            // reads only `response.completed` (and would call such a reply a stop), we read both.
            "response.completed" | "response.incomplete" => {
                let response = &data["response"];
                if response["usage"].is_object() {
                    msg.usage = parse_usage(&response["usage"]);
                }
                msg.stop_reason = map_status(response["status"].as_str())?;
                if msg.stop_reason == StopReason::Stop && msg.tool_calls().next().is_some() {
                    msg.stop_reason = StopReason::ToolUse;
                }
                completed = true;
                break;
            }
            "error" => {
                // The event's fields, or (as some servers send it) an `error` object inside.
                let error = if data["error"].is_object() {
                    &data["error"]
                } else {
                    &data
                };
                return Err(typed_error(error));
            }
            "response.failed" => {
                let response = &data["response"];
                let error = &response["error"];
                let reason = response["incomplete_details"]["reason"].as_str();
                if error.is_object() {
                    return Err(typed_error(error));
                }
                if let Some(reason) = reason.filter(|r| !r.is_empty()) {
                    if let Some(cur) = current.as_mut() {
                        cur.settle(&mut msg);
                    }
                    return fail(msg, format!("incomplete: {reason}"));
                }
                return Err(errors::from_stream_error(
                    "",
                    "Unknown error (no error details in response)",
                ));
            }
            _ => {}
        }
    }
    if let Some(cur) = current.as_mut() {
        cur.settle(&mut msg);
    }
    let cut = (!completed).then_some("OpenAI Responses stream ended before response.completed");
    finish_reply(msg, cut)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::ApiKind;
    use crate::providers::sse::SseEvent;
    use crate::providers::stream::{test_spec, test_stream};

    fn spec() -> ModelSpec {
        let api = ApiKind::OpenaiResponses;
        test_spec("openai", api, "gpt-resp-test", "http://127.0.0.1:1/v1")
    }

    fn stream(events: &[Value]) -> SseStream {
        let evs: Vec<SseEvent> = events
            .iter()
            .map(|d| SseEvent::named(d["type"].as_str().unwrap(), d.to_string()))
            .collect();
        test_stream(&evs)
    }

    #[tokio::test]
    async fn reads_reasoning_text_and_calls() {
        let reasoning = json!({"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Think."}],"encrypted_content":"enc"});
        let mut s = stream(&[
            json!({"type":"response.created","response":{"id":"resp_1","status":"in_progress"}}),
            json!({"type":"response.output_item.added","item":{"type":"reasoning","id":"rs_1","summary":[]}}),
            json!({"type":"response.reasoning_summary_part.added","part":{"type":"summary_text","text":""}}),
            json!({"type":"response.reasoning_summary_text.delta","delta":"Thi"}),
            json!({"type":"response.reasoning_summary_text.delta","delta":"nk."}),
            json!({"type":"response.reasoning_summary_part.done","part":{"type":"summary_text","text":"Think."}}),
            json!({"type":"response.output_item.done","item":reasoning}),
            json!({"type":"response.output_item.added","item":{"type":"message","id":"msg_1","role":"assistant","content":[]}}),
            json!({"type":"response.content_part.added","part":{"type":"output_text","text":""}}),
            json!({"type":"response.output_text.delta","delta":"Read"}),
            json!({"type":"response.output_text.delta","delta":"ing."}),
            json!({"type":"response.output_item.done","item":{"type":"message","id":"msg_1","content":[{"type":"output_text","text":"Reading."}]}}),
            json!({"type":"response.output_item.added","item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":""}}),
            json!({"type":"response.function_call_arguments.delta","delta":"{\"path\":"}),
            json!({"type":"response.function_call_arguments.delta","delta":"\"a.txt\"}"}),
            json!({"type":"response.output_item.done","item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read","arguments":"{\"path\":\"a.txt\"}"}}),
            json!({"type":"response.completed","response":{"id":"resp_1","status":"completed","usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":20},"output_tokens":42,"total_tokens":142}}}),
        ]);
        let m = read_stream(&spec(), &mut s).await.unwrap();
        assert_eq!(
            m.content,
            vec![
                AssistantBlock::Thinking {
                    thinking: "Think.".into(),
                    signature: Some(reasoning.to_string()),
                    redacted: false
                },
                AssistantBlock::Text {
                    text: "Reading.".into(),
                    signature: Some("{\"v\":1,\"id\":\"msg_1\"}".into())
                },
                AssistantBlock::ToolCall(ToolCall {
                    id: "call_1|fc_1".into(),
                    name: "read".into(),
                    arguments: json!({"path":"a.txt"}),
                    thought_signature: None,
                }),
            ]
        );
        assert_eq!(m.stop_reason, StopReason::ToolUse);
        assert_eq!(m.response_id.as_deref(), Some("resp_1"));
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
    }

    #[tokio::test]
    async fn a_calls_arguments_are_parsed_when_it_is_replaced_or_the_reply_ends() {
        // A call whose item is never done: its arguments are its partial JSON parsed when the
        // next item starts, when the reply completes, and when it fails as incomplete.
        let added = |id: &str| {
            let item =
                json!({"type":"function_call","id":id,"call_id":"c","name":"read","arguments":""});
            json!({"type":"response.output_item.added","item":item})
        };
        let delta = |d: &str| json!({"type":"response.function_call_arguments.delta","delta":d});
        let completed = json!({"type":"response.completed","response":{"status":"completed"}});
        let mut s = stream(&[
            added("fc_1"),
            delta("{\"path\":\"a.txt\"}"),
            added("fc_2"),
            delta("{\"path\":\"b"),
            completed,
        ]);
        let m = read_stream(&spec(), &mut s).await.unwrap();
        let arguments: Vec<Value> = m.tool_calls().map(|c| c.arguments.clone()).collect();
        assert_eq!(arguments, [json!({"path":"a.txt"}), json!({"path":"b"})]);

        let failed = json!({"type":"response.failed","response":{"incomplete_details":{"reason":"max_output_tokens"}}});
        let mut s = stream(&[added("fc_1"), delta("{\"path\":\"c.txt"), failed]);
        let m = read_stream(&spec(), &mut s).await.unwrap();
        assert_eq!(
            m.error_message.as_deref(),
            Some("incomplete: max_output_tokens")
        );
        let arguments: Vec<Value> = m.tool_calls().map(|c| c.arguments.clone()).collect();
        assert_eq!(arguments, [json!({"path":"c.txt"})]);
    }

    #[tokio::test]
    async fn errors_failures_and_early_ends() {
        let mut s = stream(&[
            json!({"type":"response.created","response":{"id":"r"}}),
            json!({"type":"error","code":"server_error","message":"boom"}),
        ]);
        assert_eq!(
            read_stream(&spec(), &mut s).await.unwrap_err(),
            ProviderError::Server {
                status: 500,
                message: "server_error in the stream: boom".into()
            }
        );
        for (response, kind) in [
            (
                json!({"error":{"code":"rate_limit_exceeded","message":"slow"}}),
                "rate_limited",
            ),
            (
                json!({"error":{"code":"server_error","message":"boom"}}),
                "server_error",
            ),
            (json!({}), "server_error"),
        ] {
            let mut s = stream(&[json!({"type":"response.failed","response":response})]);
            let err = read_stream(&spec(), &mut s).await.unwrap_err();
            assert_eq!(err.kind(), kind, "{err}");
        }
        // A response that failed without an error is what the model produced being refused.
        let mut s = stream(&[json!({"type":"response.failed",
            "response":{"incomplete_details":{"reason":"content_filter"}}})]);
        let m = read_stream(&spec(), &mut s).await.unwrap();
        assert_eq!(m.stop_reason, StopReason::Error);
        assert_eq!(
            m.error_message.as_deref(),
            Some("incomplete: content_filter")
        );
        let mut s =
            stream(&[json!({"type":"response.completed","response":{"status":"cancelled"}})]);
        let m = read_stream(&spec(), &mut s).await.unwrap();
        assert_eq!(m.stop_reason, StopReason::Error);
        assert_eq!(
            m.error_message.as_deref(),
            Some("An unknown error occurred")
        );
        for kind in ["response.completed", "response.incomplete"] {
            let mut s = stream(&[json!({"type":kind,"response":{"status":"incomplete"}})]);
            assert_eq!(
                read_stream(&spec(), &mut s).await.unwrap().stop_reason,
                StopReason::Length
            );
        }
        let mut s = stream(&[json!({"type":"response.created","response":{"id":"r"}})]);
        assert!(matches!(
            read_stream(&spec(), &mut s).await.unwrap_err(),
            ProviderError::StreamCut { .. }
        ));
    }
}
