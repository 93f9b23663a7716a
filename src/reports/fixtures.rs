//! Runs for the report tests, built the way the runner builds them: an agent run of real tool
//! results, real check results, and [`crate::scoring::score`] deciding the outcome, the reason
//! and every count. A fixture can only hold a state the harness can produce (no `diverged` run
//! without a divergence, no skipped run with a reason the runner never writes).

use std::time::Duration;

use serde_json::json;

use crate::agent::{AgentRun, LimitKind, StopCause};
use crate::conversation::{ToolCall, Usage};
use crate::providers::ProviderError;
use crate::record::{
    CheckResult, DivergenceKind, EditFailure, EditReport, LocatedEdit, Outcome, RecordedOutcome,
    RunRecord, ToolCallRecord,
};
use crate::scoring::{self, Price, ReplayInputs, ScoreInputs};
use crate::tasks::Task;
use crate::tools::{ToolError, ToolOutput, ToolResult};
use crate::workspace::WorkspaceDiff;

/// How a fixture run goes.
#[derive(Debug, Clone)]
pub(crate) struct Scenario {
    pub task: String,
    pub provider: String,
    pub model: String,
    pub epoch: u32,
    /// The verdict the run reaches (`Skipped`: the budget was spent before it started).
    pub outcome: Outcome,
    /// The agent read, edited (exactly, fuzzily and once failing) and ran commands.
    pub edits: bool,
    /// The model has a price.
    pub priced: bool,
    /// Requests the retry layer sent again.
    pub retries: u32,
    /// An `error` run: the provider's failure (`None`: the model's own error reply).
    pub provider_error: Option<ProviderError>,
    /// A replay that drifted: its differences, and the outcome its cassette recorded.
    pub drift: Option<(u32, Outcome)>,
    pub tags: Vec<String>,
}

impl Scenario {
    /// A run of `task` by `provider`/`model` that ends `outcome`, with edits and a price.
    pub(crate) fn new(
        task: &str,
        provider: &str,
        model: &str,
        epoch: u32,
        outcome: Outcome,
    ) -> Self {
        Scenario {
            task: task.into(),
            provider: provider.into(),
            model: model.into(),
            epoch,
            outcome,
            edits: true,
            priced: true,
            retries: 0,
            provider_error: None,
            drift: None,
            tags: vec!["python".into(), "edit".into()],
        }
    }

    /// Without a tool call.
    pub(crate) fn no_edits(mut self) -> Self {
        self.edits = false;
        self
    }

    /// Without a price (cost unknown).
    pub(crate) fn unpriced(mut self) -> Self {
        self.priced = false;
        self
    }

    /// With `n` retried requests.
    pub(crate) fn retries(mut self, n: u32) -> Self {
        self.retries = n;
        self
    }

    /// An `error` run that the provider's rate limit ended (after `retries` retries).
    pub(crate) fn rate_limited(mut self) -> Self {
        self.outcome = Outcome::Error;
        self.provider_error = Some(ProviderError::RateLimited {
            status: 429,
            message: "Too Many Requests".into(),
            retry_after: None,
        });
        self
    }

    /// A replay with `divergences` differences from a cassette that recorded `recorded`.
    pub(crate) fn drifted(mut self, divergences: u32, recorded: Outcome) -> Self {
        self.drift = Some((divergences, recorded));
        self
    }

    /// The record, as the runner makes it.
    pub(crate) fn record(&self) -> RunRecord {
        if self.outcome == Outcome::Skipped {
            return RunRecord::skipped(
                &self.task,
                &self.provider,
                &self.model,
                self.epoch,
                "not started: the --max-cost budget of $0.10 is spent ($0.12)",
            );
        }
        let mut task = Task::bare(&self.task, "tasks/fixture");
        task.tags = self.tags.clone();
        let stop = match self.outcome {
            Outcome::LimitReached => StopCause::Limit(LimitKind::Turns),
            Outcome::Error => match &self.provider_error {
                Some(e) => StopCause::Provider(e.clone()),
                None => StopCause::ModelError("refused".into()),
            },
            _ => StopCause::Completed,
        };
        let passing = self.outcome == Outcome::Passed;
        let checks = match self.outcome {
            Outcome::Error => Vec::new(),
            _ => vec![check(passing)],
        };
        let mut run = agent_run(self.edits, stop);
        if self.outcome == Outcome::Error {
            // The first request failed: no reply, no tokens, no tool call.
            run.tool_calls.clear();
            run.turns = 0;
            run.usage = Usage::default();
            run.model_time = Duration::ZERO;
            run.tool_time = Duration::ZERO;
        }
        let replay = match (self.outcome, self.drift) {
            (Outcome::Diverged, _) => Some(ReplayInputs {
                divergences: 1,
                first_kind: Some(DivergenceKind::ToolResult),
                first_turn: Some(2),
                summary: Some("turn 2: result of read#1 changed".into()),
                recorded: None,
                unused_interactions: 3,
            }),
            (_, Some((divergences, recorded))) => Some(ReplayInputs {
                divergences,
                first_kind: Some(DivergenceKind::ToolResult),
                first_turn: Some(3),
                summary: Some("turn 3: result of edit#1 changed".into()),
                recorded: Some(RecordedOutcome {
                    outcome: recorded,
                    checks: vec![crate::record::RecordedCheck {
                        name: "unit tests".into(),
                        passed: recorded == Outcome::Passed,
                    }],
                    edits: Default::default(),
                }),
                unused_interactions: 0,
            }),
            _ => None,
        };
        let diff = WorkspaceDiff {
            unified: String::new(),
            files_changed: 1,
            lines_added: 2,
            lines_removed: 1,
            ..Default::default()
        };
        scoring::score(
            &task,
            &run,
            checks,
            &diff,
            ScoreInputs {
                provider: self.provider.clone(),
                model: self.model.clone(),
                epoch: self.epoch,
                price: self.priced.then_some(Price {
                    input: 3.0,
                    output: 15.0,
                    cache_read: 0.3,
                    cache_write: 3.75,
                }),
                wall_time: Duration::from_millis(12_345),
                divergence: (self.outcome == Outcome::Diverged)
                    .then(|| "turn 2: result of read#1 changed".to_owned()),
                retries: self.retries,
                // Every reply took one request, and an error run's failing request is one too.
                attempts: run.turns.max(u32::from(self.outcome == Outcome::Error)) + self.retries,
                replay,
                edit_strategy: "pi".into(),
                ..ScoreInputs::default()
            },
        )
    }
}

/// A record of `task` by `provider`/`model` that ends `outcome`, with edits and a price.
pub(crate) fn rec(
    task: &str,
    provider: &str,
    model: &str,
    epoch: u32,
    outcome: Outcome,
) -> RunRecord {
    Scenario::new(task, provider, model, epoch, outcome).record()
}

fn check(passed: bool) -> CheckResult {
    CheckResult {
        name: "unit tests".into(),
        passed,
        detail: if passed {
            "exit 0 (expected 0)".into()
        } else {
            "exit 1 (expected 0)\n--- stdout ---\nFAILED (failures=1)".into()
        },
        duration: Duration::from_millis(1500),
    }
}

fn call(turn: u32, id: &str, name: &str, result: ToolResult) -> ToolCallRecord {
    ToolCallRecord {
        turn,
        call: ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: json!({}),
            thought_signature: None,
        },
        result,
        duration: Duration::from_millis(400),
    }
}

fn ok(text: &str) -> ToolResult {
    ToolResult::ok(ToolOutput::text(text))
}

fn edited(located: Vec<LocatedEdit>) -> ToolResult {
    let mut out = ToolOutput::text("Successfully replaced text in calc.py.");
    out.edit = Some(EditReport::new("pi", located, None));
    ToolResult::ok(out)
}

/// Three reads, three edits (exact, fuzzy, not found), two bash calls and a call of a tool
/// the run does not have; five turns, and the usage of a cached conversation.
fn agent_run(edits: bool, stop: StopCause) -> AgentRun {
    let mut run = AgentRun::new(Vec::new());
    run.stop = stop;
    run.turns = 5;
    run.usage = Usage {
        input: 12_000,
        output: 3_400,
        cache_read: 40_000,
        cache_write: 2_000,
        total_tokens: 57_400,
    };
    run.model_time = Duration::from_millis(9_000);
    run.tool_time = Duration::from_millis(1_200);
    if !edits {
        return run;
    }
    let not_found = ToolResult::error(ToolError {
        message: "Could not find the exact text in calc.py.".into(),
        edit: Some(EditReport::new(
            "pi",
            Vec::new(),
            Some(EditFailure::NotFound { index: 0 }),
        )),
    });
    let unknown = ToolResult::error(ToolError {
        message: "Tool mystery not found".into(),
        edit: None,
    });
    run.tool_calls = vec![
        call(1, "r1", "read", ok("def median(xs):")),
        call(1, "r2", "read", ok("import calc")),
        call(2, "e1", "edit", not_found),
        call(2, "r3", "read", ok("def median(xs):")),
        call(3, "e2", "edit", edited(vec![LocatedEdit::exact("exact")])),
        call(
            3,
            "e3",
            "edit",
            edited(vec![
                LocatedEdit::exact("exact"),
                LocatedEdit::fuzzy("fuzzy", None),
            ]),
        ),
        call(4, "b1", "bash", ok("FAILED")),
        call(4, "m1", "mystery", unknown),
        call(5, "b2", "bash", ok("OK")),
    ];
    run
}
