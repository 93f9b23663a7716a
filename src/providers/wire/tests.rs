//! Each wire format's directions against each other, for every [`ApiKind`]: a rendered reply
//! read back through the real provider (render → stream), and a request built from a
//! conversation read back into it (request → recorded).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::conversation::{
    AssistantBlock, Content, Message, StopReason, ToolCall, ToolDefinition, ToolResultMessage,
    Usage, UserContent,
};
use crate::providers::sse::encode;
use crate::providers::transport::{HttpResponse, TransportError};

/// Answers each request with the next rendered reply, keeping the requests.
#[derive(Default)]
struct Replies {
    replies: Mutex<VecDeque<Vec<SseEvent>>>,
    requests: Mutex<Vec<HttpRequest>>,
}

#[async_trait]
impl Transport for Replies {
    async fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        self.requests.lock().unwrap().push(request);
        let events = self.replies.lock().unwrap().pop_front().expect("a reply");
        let body = futures::stream::iter(vec![Ok(encode(&events))]);
        Ok(HttpResponse {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: Box::pin(body),
        })
    }
}

fn spec(api: ApiKind) -> ModelSpec {
    ModelSpec {
        provider: "p".into(),
        api,
        model: "m".into(),
        base_url: format!("http://127.0.0.1:1{}", api.wire().base_path()),
        api_key: Some("k".into()),
        headers: Vec::new(),
    }
}

fn call(name: &str, arguments: serde_json::Value) -> AssistantBlock {
    AssistantBlock::ToolCall(ToolCall {
        id: String::new(),
        name: name.into(),
        arguments,
        thought_signature: None,
    })
}

/// A reply of `content` as a script would give it: no ids, no signatures.
fn reply(api: ApiKind, content: Vec<AssistantBlock>, stop_reason: StopReason) -> AssistantMessage {
    AssistantMessage {
        content,
        api: api.as_str().into(),
        provider: "p".into(),
        model: "m".into(),
        usage: Usage {
            input: 120,
            output: 31,
            cache_read: 40,
            cache_write: 0,
            total_tokens: 191,
        },
        stop_reason,
        error_message: None,
        response_id: None,
    }
}

/// Three replies: thinking, text and two calls; a call alone; a final text cut by the limit.
fn replies(api: ApiKind) -> Vec<AssistantMessage> {
    vec![
        reply(
            api,
            vec![
                AssistantBlock::Thinking {
                    thinking: "The test fails on the median of an even list; read it first.".into(),
                    signature: None,
                    redacted: false,
                },
                AssistantBlock::Text {
                    text: "I'll read the module and list the files.".into(),
                    signature: None,
                },
                call("read", json!({"path": "calc/stats.py"})),
                call("bash", json!({"command": "ls -la", "timeout": 10})),
            ],
            StopReason::ToolUse,
        ),
        reply(
            api,
            vec![call(
                "edit",
                json!({"path": "calc/stats.py", "edits": [{"oldText": "a", "newText": "b"}]}),
            )],
            StopReason::ToolUse,
        ),
        reply(
            api,
            vec![AssistantBlock::Text {
                text: "Fixed: the median now averages the middle two.".into(),
                signature: None,
            }],
            StopReason::Length,
        ),
    ]
}

/// A provider of `api`'s format over a transport that answers with `replies`, one a request.
fn answering(api: ApiKind, replies: Vec<Vec<SseEvent>>) -> Arc<dyn Provider> {
    let transport = Arc::new(Replies::default());
    transport.replies.lock().unwrap().extend(replies);
    let settings = ProviderSettings::default();
    api.wire().provider(spec(api), transport, &settings)
}

/// A conversation of one user message.
fn go() -> Context {
    Context {
        system_prompt: None,
        messages: vec![Message::User {
            content: UserContent::Text("go".into()),
        }],
        tools: Vec::new(),
    }
}

/// The replies rendered by `api`'s format, read by one provider of it, in order.
async fn read_back(api: ApiKind, replies: &[AssistantMessage]) -> Vec<AssistantMessage> {
    let mut first_call = 1;
    let mut rendered = Vec::new();
    for (i, r) in replies.iter().enumerate() {
        rendered.push(
            api.wire()
                .render_turn(r, &RenderOptions::new(i + 1, first_call)),
        );
        first_call += r.tool_calls().count();
    }
    let provider = answering(api, rendered);
    let mut out = Vec::new();
    for _ in replies {
        let options = RequestOptions::default();
        out.push(provider.complete(&go(), &options).await.expect("a reply"));
    }
    out
}

/// The reply without what rendering mints: ids, signatures, the response id.
fn without_minted(mut m: AssistantMessage) -> AssistantMessage {
    m.response_id = None;
    for block in &mut m.content {
        match block {
            AssistantBlock::Text { signature, .. } | AssistantBlock::Thinking { signature, .. } => {
                *signature = None;
            }
            AssistantBlock::ToolCall(call) => {
                call.id.clear();
                call.thought_signature = None;
            }
        }
    }
    m
}

#[tokio::test]
async fn a_rendered_reply_reads_back_to_itself_in_every_format() {
    for api in ApiKind::ALL {
        let mut given = replies(api);
        // Rendered without ids or signatures: the format mints them, the rest reads back.
        let first = read_back(api, &given).await;
        if api == ApiKind::GoogleGenerativeAi {
            // Gemini's closing chunk carries an empty text part: after tool calls, the reader
            // keeps it as an empty text block (and renders it back as it is, below).
            for m in given.iter_mut().filter(|m| m.tool_calls().count() > 0) {
                m.content.push(AssistantBlock::Text {
                    text: String::new(),
                    signature: None,
                });
            }
        }
        assert_eq!(
            first
                .iter()
                .cloned()
                .map(without_minted)
                .collect::<Vec<_>>(),
            given,
            "{api:?}"
        );
        for m in &first {
            assert!(m.response_id.is_some(), "{api:?}: a response id");
            assert!(
                m.tool_calls().all(|c| !c.id.is_empty()),
                "{api:?}: call ids"
            );
        }
        let ids: Vec<String> = first
            .iter()
            .flat_map(|m| m.tool_calls().map(|c| c.id.clone()))
            .collect();
        let unique: std::collections::HashSet<&String> = ids.iter().collect();
        assert_eq!(
            (ids.len(), unique.len()),
            (3, 3),
            "{api:?}: three ids, all different"
        );
        // With its ids and signatures the reply reads back exactly.
        assert_eq!(read_back(api, &first).await, first, "{api:?}");
    }
}

#[tokio::test]
async fn wire_stop_values_and_stream_errors_are_rendered_in_each_api_s_words() {
    for api in ApiKind::ALL {
        let text = AssistantBlock::Text {
            text: "no".into(),
            signature: None,
        };
        for stop in [StopReason::Error, StopReason::Aborted] {
            let got = read_back(api, &[reply(api, vec![text.clone()], stop)]).await;
            assert_eq!(got[0].stop_reason, StopReason::Error, "{api:?} {stop:?}");
            assert!(got[0].error_message.is_some(), "{api:?} {stop:?}");
        }
        let failing = RenderOptions {
            stream_error: Some(StreamError {
                message: "try later".into(),
                kind: None,
            }),
            ..RenderOptions::new(1, 1)
        };
        let events = api
            .wire()
            .render_turn(&reply(api, vec![text.clone()], StopReason::Stop), &failing);
        let err = answering(api, vec![events])
            .complete(&go(), &RequestOptions::default())
            .await
            .expect_err("an error event");
        assert!(err.is_retryable(), "{api:?}: {err}");
        assert!(err.to_string().contains("try later"), "{api:?}: {err}");
    }
}

fn tools() -> Vec<ToolDefinition> {
    let schema = |name: &str| {
        json!({"type": "object", "properties": {name: {"type": "string", "description": "What."}},
               "required": [name]})
    };
    vec![
        ToolDefinition {
            name: "read".into(),
            description: "Read a file.".into(),
            parameters: schema("path"),
        },
        ToolDefinition {
            name: "bash".into(),
            description: "Run a command.".into(),
            parameters: schema("command"),
        },
    ]
}

fn result(call: &ToolCall, content: Vec<Content>, is_error: bool) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        content,
        is_error,
    })
}

/// A conversation as the agent keeps it after three replies of `api`'s own (read back from its
/// stream, so with its own ids and signatures): every call answered, one result an error, one
/// an image only.
async fn conversation(api: ApiKind) -> Context {
    let mut messages = vec![Message::User {
        content: UserContent::Text("The tests fail. Fix the bug.".into()),
    }];
    let image = Content::Image {
        data: "iVBORw0KGgo=".into(),
        mime_type: "image/png".into(),
    };
    for (i, mut m) in read_back(api, &replies(api)).await.into_iter().enumerate() {
        m.usage = Usage::default();
        m.response_id = None;
        // The empty text block Gemini's reader keeps from the closing chunk is not sent back
        // (neither by Anthropic nor Chat Completions).
        m.content
            .retain(|b| !matches!(b, AssistantBlock::Text { text, .. } if text.is_empty()));
        if m.stop_reason == StopReason::Length {
            m.stop_reason = StopReason::Stop;
        }
        let calls: Vec<ToolCall> = m.tool_calls().cloned().collect();
        messages.push(Message::Assistant(m));
        for (k, call) in calls.iter().enumerate() {
            let content = match (i, k) {
                (0, 0) => vec![image.clone()],
                _ => vec![Content::text(format!("output of {}", call.name))],
            };
            messages.push(result(call, content, (i, k) == (0, 1)));
        }
    }
    Context {
        system_prompt: Some("You are a coding agent.\nUse the tools.".into()),
        messages,
        tools: tools(),
    }
}

#[tokio::test]
async fn a_built_request_reads_back_to_its_conversation_in_every_format() {
    for api in ApiKind::ALL {
        let context = conversation(api).await;
        let request = api.wire().build_request(
            &spec(api),
            &context,
            &RequestOptions::default(),
            &ProviderSettings::default(),
        );
        let parsed = api.wire().parse_request(&request.body);
        let mut expected = context.clone();
        if matches!(api, ApiKind::OpenaiCompletions | ApiKind::OpenaiResponses) {
            // The OpenAI formats send no error flag with a tool result.
            for m in &mut expected.messages {
                if let Message::ToolResult(r) = m {
                    r.is_error = false;
                }
            }
        }
        assert_eq!(parsed.context(api, "p", "m"), expected, "{api:?}");
        let model = match api.wire().model_in_path(&request.path()) {
            Some((model, template)) => {
                assert!(template.contains("{model}"), "{template}");
                model
            }
            None => parsed
                .param("model")
                .and_then(|m| m.as_str())
                .unwrap()
                .to_owned(),
        };
        assert_eq!(model, "m", "{api:?}");
        let names: Vec<&str> = parsed.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["read", "bash"], "{api:?}");
        // Every result is linked to its call.
        let linked = parsed
            .messages
            .iter()
            .filter(|m| matches!(&m.kind, ParsedMessageKind::ToolResult(r) if r.call.is_some()));
        assert_eq!(linked.count(), 3, "{api:?}");
    }
}

#[test]
fn each_api_has_its_own_endpoint_and_error_body() {
    let routes = [
        "/v1/messages",
        "/v1/chat/completions",
        "/v1/responses",
        "/v1beta/models/m:streamGenerateContent",
    ];
    for (api, route) in ApiKind::ALL.into_iter().zip(routes) {
        assert_eq!(api.wire().api(), api);
        let serving: Vec<ApiKind> = ApiKind::ALL
            .into_iter()
            .filter(|a| a.wire().is_endpoint("POST", route))
            .collect();
        assert_eq!(serving, [api], "{route}");
        assert!(!api.wire().is_endpoint("GET", route), "{route}");
        let body: serde_json::Value =
            serde_json::from_str(&api.wire().render_error_body(429, "slow down")).unwrap();
        assert_eq!(body["error"]["message"], "slow down", "{api:?}");
    }
}
