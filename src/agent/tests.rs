//! Tests of the loop with an in-memory provider (the wire formats are tested in providers/ and
//! the whole path in tests/integration/run.rs); tools run for real in a temp dir.

use std::collections::VecDeque;
use std::sync::Mutex;

use async_trait::async_trait;
use serde_json::json;

use super::*;
use crate::conversation::AssistantBlock;
use crate::providers::{ApiKind, ModelSpec};
use crate::tools::ToolSetSpec;

/// Answers from a queue of replies and keeps every context it was sent.
struct Queue {
    spec: ModelSpec,
    replies: Mutex<VecDeque<Result<AssistantMessage, ProviderError>>>,
    seen: Mutex<Vec<Context>>,
}

#[async_trait]
impl Provider for Queue {
    fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    async fn complete(
        &self,
        context: &Context,
        _: &RequestOptions,
    ) -> Result<AssistantMessage, ProviderError> {
        self.seen.lock().unwrap().push(context.clone());
        self.replies
            .lock()
            .unwrap()
            .pop_front()
            .expect("the loop asked for more replies than scripted")
    }
}

fn reply(blocks: Vec<AssistantBlock>, stop: StopReason) -> Result<AssistantMessage, ProviderError> {
    Ok(AssistantMessage {
        content: blocks,
        api: "test".into(),
        provider: "test".into(),
        model: "m".into(),
        usage: Usage {
            input: 10,
            output: 5,
            cache_read: 0,
            cache_write: 0,
            total_tokens: 15,
        },
        stop_reason: stop,
        error_message: None,
        response_id: None,
    })
}

fn call(id: &str, name: &str, args: serde_json::Value) -> AssistantBlock {
    AssistantBlock::ToolCall(ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args,
        thought_signature: None,
    })
}

fn text(t: &str) -> AssistantBlock {
    AssistantBlock::Text {
        text: t.into(),
        signature: None,
    }
}

fn make_agent(
    replies: Vec<Result<AssistantMessage, ProviderError>>,
    limits: Limits,
) -> (Agent, Arc<Queue>) {
    let queue = Arc::new(Queue {
        spec: ModelSpec {
            provider: "test".into(),
            api: ApiKind::AnthropicMessages,
            model: "m".into(),
            base_url: "http://127.0.0.1:9".into(),
            api_key: None,
            headers: vec![],
        },
        replies: Mutex::new(replies.into()),
        seen: Mutex::new(Vec::new()),
    });
    let agent = Agent {
        provider: queue.clone(),
        tools: Arc::new(ToolSet::new(&ToolSetSpec::Coding).unwrap()),
        system_prompt: Some("sys".into()),
        options: RequestOptions::default(),
        limits,
        execution: ToolExecution::Parallel,
    };
    (agent, queue)
}

fn recording_sink() -> (EventSink, Arc<Mutex<Vec<String>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let sink_log = log.clone();
    let sink: EventSink = Arc::new(move |event| {
        let line = match event {
            AgentEvent::TurnStarted { turn } => format!("turn {turn}"),
            AgentEvent::ModelReply { turn, .. } => format!("reply {turn}"),
            AgentEvent::ToolCallStarted { call, .. } => format!("start {}", call.id),
            AgentEvent::ToolCallFinished { call_id, .. } => format!("end {call_id}"),
            AgentEvent::RunFinished { .. } => "finished".into(),
        };
        sink_log.lock().unwrap().push(line);
    });
    (sink, log)
}

fn results(run: &AgentRun) -> Vec<(String, bool, String)> {
    run.messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some((
                r.tool_call_id.clone(),
                r.is_error,
                r.content[0].as_text().unwrap_or_default().to_owned(),
            )),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn parallel_calls_finish_in_any_order_but_results_keep_call_order() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let (agent, queue) = make_agent(
        vec![
            reply(
                vec![
                    text("Looking."),
                    call("c1", "bash", json!({"command": "sleep 0.3; echo slow"})),
                    call("c2", "read", json!({"path": "a.txt"})),
                    call("c3", "nope", json!({})),
                ],
                StopReason::ToolUse,
            ),
            reply(vec![text("Done.")], StopReason::Stop),
        ],
        Limits::default(),
    );
    let (sink, log) = recording_sink();
    let run = agent.run("go", &ToolContext::new(dir.path()), &sink).await;
    assert_eq!(run.stop, StopCause::Completed);
    assert_eq!(run.turns, 2);
    assert_eq!(run.usage.total_tokens, 30);
    assert_eq!(
        results(&run),
        vec![
            ("c1".into(), false, "slow\n".into()),
            ("c2".into(), false, "alpha\n".into()),
            ("c3".into(), true, "Tool nope not found".into()),
        ]
    );
    let log = log.lock().unwrap().clone();
    let end = |id: &str| log.iter().position(|l| l == &format!("end {id}")).unwrap();
    assert!(
        end("c2") < end("c1"),
        "the fast read finishes first: {log:?}"
    );
    assert_eq!(log.last().unwrap(), "finished");
    // The second request carried the history: prompt, reply, three results in call order.
    let seen = queue.seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].messages.len(), 5);
    assert_eq!(seen[1].system_prompt.as_deref(), Some("sys"));
    assert_eq!(seen[1].tools.len(), 4);
}

#[tokio::test]
async fn same_file_writes_in_one_reply_apply_in_call_order() {
    let dir = tempfile::tempdir().unwrap();
    let writes: Vec<AssistantBlock> = (0..8)
        .map(|i| {
            call(
                &format!("w{i}"),
                "write",
                json!({"path": "f.txt", "content": format!("version {i}\n")}),
            )
        })
        .collect();
    let (agent, _) = make_agent(
        vec![
            reply(writes, StopReason::ToolUse),
            reply(vec![text("ok")], StopReason::Stop),
        ],
        Limits::default(),
    );
    agent
        .run("go", &ToolContext::new(dir.path()), &no_events())
        .await;
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "version 7\n"
    );
}

#[tokio::test]
async fn tool_calls_run_even_when_the_stop_reason_is_length() {
    let dir = tempfile::tempdir().unwrap();
    let (agent, _) = make_agent(
        vec![
            reply(
                vec![call("c1", "write", json!({"path": "x", "content": "1"}))],
                StopReason::Length,
            ),
            reply(vec![text("ok")], StopReason::Stop),
        ],
        Limits::default(),
    );
    let run = agent
        .run("go", &ToolContext::new(dir.path()), &no_events())
        .await;
    assert_eq!(run.turns, 2);
    assert!(dir.path().join("x").exists());
}

#[tokio::test]
async fn an_error_reply_or_a_provider_failure_ends_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut refusal = reply(vec![], StopReason::Error).unwrap();
    refusal.error_message = Some("refused".into());
    let (agent, _) = make_agent(vec![Ok(refusal)], Limits::default());
    let run = agent
        .run("go", &ToolContext::new(dir.path()), &no_events())
        .await;
    assert_eq!(run.stop, StopCause::ModelError("refused".into()));

    let failure = ProviderError::Server {
        status: 500,
        message: "down".into(),
    };
    let (agent, _) = make_agent(vec![Err(failure.clone())], Limits::default());
    let run = agent
        .run("go", &ToolContext::new(dir.path()), &no_events())
        .await;
    assert_eq!(run.stop, StopCause::Provider(failure));
    assert_eq!(run.turns, 0);
}

#[tokio::test]
async fn the_turn_limit_stops_the_loop() {
    let dir = tempfile::tempdir().unwrap();
    let looping = || {
        reply(
            vec![call("c", "bash", json!({"command": "true"}))],
            StopReason::ToolUse,
        )
    };
    let (agent, queue) = make_agent(
        vec![looping(), looping(), looping()],
        Limits {
            max_turns: Some(2),
            ..Default::default()
        },
    );
    let run = agent
        .run("go", &ToolContext::new(dir.path()), &no_events())
        .await;
    assert_eq!(run.stop, StopCause::Limit(LimitKind::Turns));
    assert_eq!(run.turns, 2);
    assert_eq!(queue.seen.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn the_token_limit_stops_the_loop() {
    let dir = tempfile::tempdir().unwrap();
    let looping = || {
        reply(
            vec![call("c", "bash", json!({"command": "true"}))],
            StopReason::ToolUse,
        )
    };
    let (agent, _) = make_agent(
        vec![looping(), looping(), looping()],
        Limits {
            max_tokens: Some(20),
            ..Default::default()
        },
    );
    let run = agent
        .run("go", &ToolContext::new(dir.path()), &no_events())
        .await;
    assert_eq!(run.stop, StopCause::Limit(LimitKind::Tokens));
    assert_eq!(run.turns, 2, "15 tokens, then 30 >= 20");
}

#[tokio::test]
async fn the_wall_time_limit_kills_a_hanging_command() {
    let dir = tempfile::tempdir().unwrap();
    let (agent, _) = make_agent(
        vec![reply(
            vec![call("c1", "bash", json!({"command": "sleep 30"}))],
            StopReason::ToolUse,
        )],
        Limits {
            max_wall: Some(Duration::from_millis(400)),
            ..Default::default()
        },
    );
    let started = Instant::now();
    let run = agent
        .run("go", &ToolContext::new(dir.path()), &no_events())
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "did not wait for sleep 30"
    );
    assert_eq!(run.stop, StopCause::Limit(LimitKind::WallTime));
    assert_eq!(
        results(&run),
        vec![("c1".into(), true, "Command aborted".into())]
    );
}

#[tokio::test]
async fn edits_sent_as_a_json_string_are_replayed_as_an_array_as_pi_rewrites_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "one\ntwo\n").unwrap();
    let edits = r#"[{"oldText":"two","newText":"TWO"}]"#;
    let (agent, queue) = make_agent(
        vec![
            reply(
                vec![call("c1", "edit", json!({"path": "f.txt", "edits": edits}))],
                StopReason::ToolUse,
            ),
            reply(vec![text("ok")], StopReason::Stop),
        ],
        Limits::default(),
    );
    let run = agent
        .run("go", &ToolContext::new(dir.path()), &no_events())
        .await;
    assert!(!results(&run)[0].1, "{:?}", results(&run));
    let seen = queue.seen.lock().unwrap();
    let Message::Assistant(replayed) = &seen[1].messages[1] else {
        panic!("the reply is replayed second");
    };
    let call = replayed.tool_calls().next().unwrap();
    assert_eq!(
        call.arguments["edits"],
        json!([{"oldText": "two", "newText": "TWO"}])
    );
}
