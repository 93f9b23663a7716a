//! The agent loop, as Pi's `agent-loop.ts` (spec section 8 of `../shared/design/pi-tools.md`).
//!
//! Contract: send the system prompt, the history and the tool definitions to the model; if the
//! reply has tool calls, run them all (in parallel by default, results appended in call order)
//! and loop; a reply without tool calls ends the run. The stop reason of a reply is not consulted
//! (a `length` reply with tool calls still runs them). A reply with stop reason `error` or
//! `aborted`, a provider failure, or one of the task's limits ends the run early, and the
//! [`StopCause`] records why.
//!
//! The loop never prints: it emits [`AgentEvent`]s that the runner fans out to reporters. It
//! depends on `conversation`, `tools` and `providers` only.

pub mod system_prompt;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::conversation::{
    AssistantBlock, AssistantMessage, Context, Message, StopReason, ToolCall, ToolResultMessage,
    Usage, UserContent,
};
use crate::markdown::first_line;
use crate::providers::{Provider, ProviderError, RequestOptions};
pub use crate::record::ToolCallRecord;
use crate::tools::{ToolContext, ToolSet};

/// Limits that end a run early. `None` means no limit (Pi has none).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Model replies at most.
    pub max_turns: Option<u32>,
    /// Wall time of the whole loop.
    pub max_wall: Option<Duration>,
    /// Input plus output tokens (cache reads and writes included) summed over replies.
    pub max_tokens: Option<u64>,
}

/// How tool calls of one reply run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolExecution {
    /// All calls start together; results are appended in call order (Pi's default).
    #[default]
    Parallel,
    /// One call after another.
    Sequential,
}

/// Which limit ended a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    Turns,
    WallTime,
    Tokens,
}

impl LimitKind {
    pub fn name(&self) -> &'static str {
        match self {
            LimitKind::Turns => "turns",
            LimitKind::WallTime => "wall_time",
            LimitKind::Tokens => "tokens",
        }
    }
}

/// Why the loop stopped.
#[derive(Debug, Clone, PartialEq)]
pub enum StopCause {
    /// The model replied without tool calls.
    Completed,
    /// A limit was reached.
    Limit(LimitKind),
    /// The model's reply had stop reason `error` (a refusal, an error event in the stream).
    ModelError(String),
    /// The provider (or the cassette under it) failed; not the model's fault.
    Provider(ProviderError),
    /// The reply was interrupted by its user (a replayed session's Escape): as Pi does after an
    /// abort, an `aborted` reply ends the loop (and stays out of later requests), and the next
    /// prompt, if any, goes on.
    Interrupted,
}

impl StopCause {
    /// How the loop stopped, in words (`completed`, `limit: turns`, `model error: …`).
    pub fn label(&self) -> String {
        match self {
            StopCause::Completed => "completed".to_owned(),
            StopCause::Interrupted => "interrupted by the user".to_owned(),
            StopCause::Limit(kind) => format!("limit: {}", kind.name()),
            StopCause::ModelError(message) => format!("model error: {}", first_line(message)),
            StopCause::Provider(err) => format!(
                "provider error ({}): {}",
                err.kind(),
                first_line(&err.to_string())
            ),
        }
    }
}

/// Everything the loop produced.
#[derive(Debug, Clone)]
pub struct AgentRun {
    /// The whole history, starting with the task prompt.
    pub messages: Vec<Message>,
    pub tool_calls: Vec<ToolCallRecord>,
    /// Model replies received.
    pub turns: u32,
    pub usage: Usage,
    /// Time spent waiting for the model.
    pub model_time: Duration,
    /// Time spent running tools (wall time of each batch).
    pub tool_time: Duration,
    pub stop: StopCause,
}

impl AgentRun {
    /// A run that has not asked the model yet: `messages` as history, nothing counted.
    pub fn new(messages: Vec<Message>) -> Self {
        AgentRun {
            messages,
            tool_calls: Vec::new(),
            turns: 0,
            usage: Usage::default(),
            model_time: Duration::ZERO,
            tool_time: Duration::ZERO,
            stop: StopCause::Completed,
        }
    }
}

/// What the loop reports while it runs.
#[derive(Debug, Clone)]
pub enum AgentEvent {
    TurnStarted {
        turn: u32,
    },
    ModelReply {
        turn: u32,
        message: Box<AssistantMessage>,
        elapsed: Duration,
    },
    ToolCallStarted {
        turn: u32,
        call: ToolCall,
    },
    ToolCallFinished {
        turn: u32,
        call_id: String,
        tool_name: String,
        is_error: bool,
        elapsed: Duration,
    },
    RunFinished {
        stop: StopCause,
    },
}

/// Receives events. The runner passes a closure that forwards to its reporters.
pub type EventSink = Arc<dyn Fn(AgentEvent) + Send + Sync>;

/// An event sink that drops everything.
pub fn no_events() -> EventSink {
    Arc::new(|_| {})
}

/// The fixed parts of one run.
pub struct Agent {
    pub provider: Arc<dyn Provider>,
    pub tools: Arc<ToolSet>,
    pub system_prompt: Option<String>,
    pub options: RequestOptions,
    pub limits: Limits,
    pub execution: ToolExecution,
}

impl Agent {
    /// Runs the loop on `prompt` until the model stops, a limit is reached or the provider fails.
    pub async fn run(&self, prompt: &str, ctx: &ToolContext, events: &EventSink) -> AgentRun {
        let mut run = AgentRun::new(Vec::new());
        self.follow_up(&mut run, prompt, Instant::now(), ctx, events)
            .await;
        run
    }

    /// Sends `message` as the next user message of `run` (a later prompt of the task, or what
    /// failed in an attempt) and runs the loop on until the model stops again, a limit is
    /// reached or the provider fails. Limits count the whole run: its turns and tokens so far,
    /// and the wall time since `started`. Pi's follow-up: the conversation goes on, nothing of it
    /// is dropped.
    pub async fn follow_up(
        &self,
        run: &mut AgentRun,
        message: &str,
        started: Instant,
        ctx: &ToolContext,
        events: &EventSink,
    ) {
        run.messages.push(Message::User {
            content: UserContent::Text(message.to_owned()),
        });
        let stop = self.drive(run, started, ctx, events).await;
        run.stop = stop.clone();
        events(AgentEvent::RunFinished { stop });
    }

    async fn drive(
        &self,
        run: &mut AgentRun,
        started: Instant,
        ctx: &ToolContext,
        events: &EventSink,
    ) -> StopCause {
        // One context for the whole run: each turn lends it the conversation (moved, not
        // copied: a copy per turn would cost the whole conversation every turn).
        let mut context = Context {
            system_prompt: self.system_prompt.clone(),
            messages: Vec::new(),
            tools: self.tools.definitions(),
        };
        loop {
            if let Some(limit) = self.limit_reached(run, started) {
                return StopCause::Limit(limit);
            }
            let turn = run.turns + 1;
            events(AgentEvent::TurnStarted { turn });
            context.messages = std::mem::take(&mut run.messages);
            let asked = Instant::now();
            let reply = self.ask(&context, started).await;
            run.messages = std::mem::take(&mut context.messages);
            let elapsed = asked.elapsed();
            run.model_time += elapsed;
            let reply = match reply {
                Ok(reply) => reply,
                Err(StopCause::Provider(ProviderError::Interrupted { message })) => {
                    let spec = self.provider.spec();
                    run.messages
                        .push(Message::Assistant(AssistantMessage::interrupted(
                            spec.api.as_str(),
                            &spec.provider,
                            &spec.model,
                            format!("the reply was interrupted: {message}"),
                        )));
                    return StopCause::Interrupted;
                }
                Err(stop) => return stop,
            };
            run.turns = turn;
            run.usage.add(&reply.usage);
            events(AgentEvent::ModelReply {
                turn,
                message: Box::new(reply.clone()),
                elapsed,
            });
            let mut reply = reply;
            // Pi's edit `prepareArguments` rewrites the stored message (edits sent as a JSON
            // string become an array), so later requests replay the rewritten arguments.
            for block in &mut reply.content {
                if let AssistantBlock::ToolCall(call) = block {
                    self.tools
                        .rewrite_history_arguments(&call.name, &mut call.arguments);
                }
            }
            let failed = matches!(reply.stop_reason, StopReason::Error | StopReason::Aborted);
            let error_message = reply.error_message.clone();
            let calls: Vec<ToolCall> = reply.tool_calls().cloned().collect();
            run.messages.push(Message::Assistant(reply));
            if failed {
                return StopCause::ModelError(
                    error_message.unwrap_or_else(|| "An unknown error occurred".to_owned()),
                );
            }
            if calls.is_empty() {
                return StopCause::Completed;
            }
            let batch_started = Instant::now();
            // A tool never outlives the wall-time limit: at the deadline the run's cancellation
            // fires, bash kills its process group and the other tools answer "aborted".
            let deadline = self.limits.max_wall.map(|max| {
                let left = max.saturating_sub(started.elapsed());
                let cancel = ctx.cancel.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(left).await;
                    cancel.cancel();
                })
            });
            let records = self.run_tools(turn, calls, ctx, events).await;
            if let Some(timer) = deadline {
                timer.abort();
            }
            run.tool_time += batch_started.elapsed();
            for record in records {
                run.messages.push(Message::ToolResult(ToolResultMessage {
                    tool_call_id: record.call.id.clone(),
                    tool_name: record.call.name.clone(),
                    content: record.result.content.clone(),
                    is_error: record.result.is_error,
                }));
                run.tool_calls.push(record);
            }
            if ctx.cancel.is_cancelled() {
                return StopCause::Limit(LimitKind::WallTime);
            }
        }
    }

    /// One model request, bounded by what is left of the wall-time limit.
    async fn ask(
        &self,
        context: &Context,
        started: Instant,
    ) -> Result<AssistantMessage, StopCause> {
        let request = self.provider.complete(context, &self.options);
        let result = match self.limits.max_wall {
            Some(max) => {
                let left = max.saturating_sub(started.elapsed());
                match tokio::time::timeout(left, request).await {
                    Ok(result) => result,
                    Err(_) => return Err(StopCause::Limit(LimitKind::WallTime)),
                }
            }
            None => request.await,
        };
        result.map_err(StopCause::Provider)
    }

    fn limit_reached(&self, run: &AgentRun, started: Instant) -> Option<LimitKind> {
        if self.limits.max_turns.is_some_and(|max| run.turns >= max) {
            return Some(LimitKind::Turns);
        }
        if self
            .limits
            .max_tokens
            .is_some_and(|max| run.usage.total_tokens >= max)
        {
            return Some(LimitKind::Tokens);
        }
        if self
            .limits
            .max_wall
            .is_some_and(|max| started.elapsed() >= max)
        {
            return Some(LimitKind::WallTime);
        }
        None
    }

    /// Runs one reply's tool calls; returns their records in call order.
    async fn run_tools(
        &self,
        turn: u32,
        calls: Vec<ToolCall>,
        ctx: &ToolContext,
        events: &EventSink,
    ) -> Vec<ToolCallRecord> {
        let one = |call: ToolCall| async move {
            events(AgentEvent::ToolCallStarted {
                turn,
                call: call.clone(),
            });
            let began = Instant::now();
            let result = self
                .tools
                .call(&call.name, call.arguments.clone(), ctx)
                .await;
            let duration = began.elapsed();
            events(AgentEvent::ToolCallFinished {
                turn,
                call_id: call.id.clone(),
                tool_name: call.name.clone(),
                is_error: result.is_error,
                elapsed: duration,
            });
            ToolCallRecord {
                turn,
                call,
                result,
                duration,
            }
        };
        match self.execution {
            // join_all polls the futures in call order on their first poll, so each call takes
            // its place in the per-file mutation queue in source order, as Pi's loop does.
            ToolExecution::Parallel => futures::future::join_all(calls.into_iter().map(one)).await,
            ToolExecution::Sequential => {
                let mut records = Vec::with_capacity(calls.len());
                for call in calls {
                    records.push(one(call).await);
                }
                records
            }
        }
    }
}
