//! Tests of scoring: outcome rules, edit counting from real tool results, costs, statistics.

use std::time::Duration;

use serde_json::json;

use super::*;
use crate::agent::LimitKind;
use crate::conversation::{Content, Message, ToolCall, UserContent};
use crate::providers::ProviderError;
use crate::record::{FAILURE_KINDS, ToolCallRecord, UNREPORTED_FAILURE};
use crate::tasks::{Check, CheckKind, FileAssert};
use crate::tools::{
    EditFailure, EditReport, LocatedEdit, MatchTier, ToolError, ToolOutput, ToolResult,
};

fn check(name: &str, passed: bool) -> CheckResult {
    CheckResult {
        name: name.into(),
        passed,
        detail: if passed {
            "exit 0 (expected 0)".into()
        } else {
            "exit 1 (expected 0)\n--- stdout ---\nFAILED".into()
        },
        duration: Duration::from_millis(250),
    }
}

fn task() -> Task {
    Task {
        prompts: vec!["fix it".into()],
        attempts: 1,
        checks: vec![Check {
            name: "exists".into(),
            kind: CheckKind::File {
                path: "a".into(),
                assert: FileAssert::Exists(true),
            },
        }],
        tags: vec!["python".into()],
        ..Task::bare("py-fix-median", "tasks/py-fix-median")
    }
}

fn record(turn: u32, name: &str, result: ToolResult) -> ToolCallRecord {
    ToolCallRecord {
        turn,
        call: ToolCall {
            id: format!("call_{turn}_{name}"),
            name: name.into(),
            arguments: json!({"path": "src/calc.py"}),
            thought_signature: None,
        },
        result,
        duration: Duration::from_millis(5),
    }
}

/// Located edits of the given kinds, named as Pi's tiers are.
fn located(tiers: &[MatchTier]) -> Vec<LocatedEdit> {
    tiers
        .iter()
        .map(|t| match t {
            MatchTier::Exact => LocatedEdit::exact("exact"),
            MatchTier::Fuzzy => LocatedEdit::fuzzy("fuzzy", None),
        })
        .collect()
}

fn edit_ok(tiers: &[MatchTier]) -> ToolResult {
    ToolResult::ok(ToolOutput {
        edit: Some(EditReport::new("pi", located(tiers), None)),
        ..ToolOutput::text("Successfully replaced text in src/calc.py.")
    })
}

fn edit_failed(tiers: &[MatchTier], failure: EditFailure) -> ToolResult {
    ToolResult::error(ToolError {
        message: "Could not find the exact text in src/calc.py.".into(),
        edit: Some(EditReport::new("pi", located(tiers), Some(failure))),
    })
}

fn agent_run(tool_calls: Vec<ToolCallRecord>, stop: StopCause) -> AgentRun {
    AgentRun {
        messages: vec![Message::User {
            content: UserContent::Text("fix it".into()),
        }],
        tool_calls,
        turns: 4,
        usage: Usage {
            input: 1_000_000,
            output: 200_000,
            cache_read: 500_000,
            cache_write: 100_000,
            total_tokens: 1_800_000,
        },
        model_time: Duration::from_secs(7),
        tool_time: Duration::from_secs(2),
        stop,
    }
}

#[test]
fn divergence_wins_over_everything() {
    let (outcome, reason) = decide_outcome(
        Some("turn 3: the system prompt differs\n--- recorded\n+++ now"),
        Some("also an error"),
        &StopCause::Limit(LimitKind::Turns),
        &[check("a", true)],
    );
    assert_eq!(outcome, Outcome::Diverged);
    assert_eq!(reason, "diverged: turn 3: the system prompt differs");
}

#[test]
fn a_runner_error_is_an_error() {
    let (outcome, reason) = decide_outcome(
        None,
        Some("cassette not found: x.yaml"),
        &StopCause::Completed,
        &[check("a", true)],
    );
    assert_eq!(
        (outcome, reason.as_str()),
        (Outcome::Error, "error: cassette not found: x.yaml")
    );
}

#[test]
fn a_provider_failure_that_stopped_the_loop_is_an_error() {
    let stop = StopCause::Provider(ProviderError::Overloaded {
        status: 529,
        message: "Overloaded".into(),
    });
    let (outcome, reason) = decide_outcome(None, None, &stop, &[check("a", true)]);
    assert_eq!(outcome, Outcome::Error);
    assert_eq!(
        reason,
        "provider error (overloaded): provider overloaded (529): Overloaded"
    );
    let (outcome, _) = decide_outcome(
        None,
        None,
        &StopCause::ModelError("refused".into()),
        &[check("a", true)],
    );
    assert_eq!(outcome, Outcome::Error);
}

#[test]
fn a_limit_is_limit_reached_even_when_checks_pass() {
    let (outcome, reason) = decide_outcome(
        None,
        None,
        &StopCause::Limit(LimitKind::Tokens),
        &[check("a", true), check("b", false)],
    );
    assert_eq!(outcome, Outcome::LimitReached);
    assert_eq!(reason, "tokens limit reached; 1/2 checks passed");
}

#[test]
fn passed_iff_every_check_passes() {
    let (outcome, reason) = decide_outcome(
        None,
        None,
        &StopCause::Completed,
        &[check("a", true), check("b", true)],
    );
    assert_eq!(
        (outcome, reason.as_str()),
        (Outcome::Passed, "all 2 checks passed")
    );
    let (outcome, reason) = decide_outcome(
        None,
        None,
        &StopCause::Completed,
        &[check("a", true), check("unit tests", false)],
    );
    assert_eq!(
        (outcome, reason.as_str()),
        (
            Outcome::Failed,
            "check 'unit tests' failed: exit 1 (expected 0): FAILED"
        )
    );
    let (outcome, reason) = decide_outcome(
        None,
        None,
        &StopCause::Completed,
        &[check("x", false), check("y", false)],
    );
    assert_eq!(
        (outcome, reason.as_str()),
        (
            Outcome::Failed,
            "2 of 2 checks failed; first 'x': exit 1 (expected 0): FAILED"
        )
    );
    let (outcome, _) = decide_outcome(None, None, &StopCause::Completed, &[]);
    assert_eq!(outcome, Outcome::Failed);
}

#[test]
fn edit_calls_are_counted_by_outcome_and_edits_by_tier() {
    use MatchTier::{Exact, Fuzzy};
    let records = vec![
        record(1, "read", ToolResult::ok(ToolOutput::text("..."))),
        record(2, "edit", edit_ok(&[Exact, Exact])),
        record(2, "edit", edit_ok(&[Exact, Fuzzy])),
        record(
            3,
            "edit",
            edit_failed(&[Exact], EditFailure::NotFound { index: 1 }),
        ),
        record(
            3,
            "edit",
            edit_failed(&[], EditFailure::NotUnique { index: 0, count: 2 }),
        ),
        record(
            4,
            "edit",
            edit_failed(&[], EditFailure::NotFound { index: 0 }),
        ),
        record(
            4,
            "edit",
            ToolResult::error(ToolError::new("Validation failed")),
        ),
        record(5, "bash", ToolResult::error(ToolError::new("exit 1"))),
    ];
    let stats = EditStats::count(&records);
    let expected = EditStats {
        calls: 6,
        calls_exact: 1,
        calls_fuzzy: 1,
        calls_failed: 4,
        edits_exact: 3,
        edits_fuzzy: 1,
        failures: [
            ("not_found".to_owned(), 2),
            ("not_unique".to_owned(), 1),
            ("unreported".to_owned(), 1),
        ]
        .into_iter()
        .collect(),
    };
    pretty_assertions::assert_eq!(stats, expected);
    assert_eq!(stats.failure_rate(), Some(4.0 / 6.0));
    assert_eq!(EditStats::count(&records[..1]).failure_rate(), None);
}

#[test]
fn cost_is_per_million_tokens_by_kind() {
    let price = Price {
        input: 3.0,
        output: 15.0,
        cache_read: 0.3,
        cache_write: 3.75,
    };
    let usage = agent_run(vec![], StopCause::Completed).usage;
    // 1M * 3 + 0.2M * 15 + 0.5M * 0.3 + 0.1M * 3.75
    let dollars = cost(&price, &usage);
    assert!((dollars - 6.525).abs() < 1e-9, "{dollars}");
    // The re-exported provider-config price is the same type.
    let from_config: crate::providers::config::Price = price;
    assert_eq!(from_config.cost(1_000_000, 0, 0, 0), 3.0);
}

#[test]
fn score_builds_the_whole_record() {
    let run = agent_run(
        vec![
            record(1, "read", ToolResult::ok(ToolOutput::text("..."))),
            record(2, "edit", edit_ok(&[MatchTier::Exact])),
            record(3, "bash", ToolResult::error(ToolError::new("exit 1"))),
            record(3, "bash", ToolResult::ok(ToolOutput::text("ok"))),
        ],
        StopCause::Completed,
    );
    let diff = WorkspaceDiff {
        unified: String::new(),
        files_changed: 1,
        lines_added: 2,
        lines_removed: 1,

        ..Default::default()
    };
    let rec = score(
        &task(),
        &run,
        vec![check("unit tests", true), check("exists", true)],
        &diff,
        ScoreInputs {
            provider: "anthropic".into(),
            model: "org/model:v1".into(),
            epoch: 2,
            price: Some(Price {
                input: 1.0,
                output: 1.0,
                cache_read: 0.0,
                cache_write: 0.0,
            }),
            wall_time: Duration::from_secs(12),
            divergence: None,
            error: None,
            error_kind: None,
            retries: 3,
            attempts: 9,
            replay: None,
            edit_strategy: String::new(),
            attempt_outcomes: Vec::new(),
        },
    );
    assert_eq!(rec.outcome, Outcome::Passed);
    assert_eq!((rec.retries, rec.attempts), (3, 9));
    assert_eq!(rec.error_kind, None);
    assert!(rec.counts_for_pass_rate());
    assert_eq!(rec.stop, "completed");
    assert_eq!((rec.checks_passed, rec.checks_total), (2, 2));
    assert_eq!(rec.check_time, Duration::from_millis(500));
    assert_eq!(rec.tool_call_count(), 4);
    assert_eq!(rec.tool_calls["bash"], 2);
    assert_eq!(rec.tool_errors, 1);
    assert_eq!(rec.edits.calls_exact, 1);
    assert_eq!(rec.edit_failure_rate, Some(0.0));
    assert_eq!(rec.tokens.total, 1_800_000);
    assert_eq!(rec.cost, Some(1.2));
    assert_eq!(rec.tags, ["python"]);
    assert_eq!(
        (rec.diff_files, rec.diff_lines_added, rec.diff_lines_removed),
        (1, 2, 1)
    );
    assert_eq!(
        rec.transcript_path,
        "runs/py-fix-median--anthropic--org_model_v1--e2/transcript.md"
    );
    assert_eq!(
        rec.diff_path,
        "runs/py-fix-median--anthropic--org_model_v1--e2/diff.patch"
    );
    assert_eq!(rec.detail, None);

    let no_price = score(
        &task(),
        &run,
        vec![check("a", true)],
        &diff,
        ScoreInputs::default(),
    );
    assert_eq!(no_price.cost, None);

    let diverged = score(
        &task(),
        &run,
        vec![],
        &diff,
        ScoreInputs {
            divergence: Some("turn 2: tool result differs\n-a\n+b".into()),
            ..ScoreInputs::default()
        },
    );
    assert_eq!(diverged.outcome, Outcome::Diverged);
    assert_eq!(
        diverged.detail.as_deref(),
        Some("turn 2: tool result differs\n-a\n+b")
    );
}

#[test]
fn a_tool_result_is_flagged_only_when_it_is_an_error() {
    let ok = ToolResult::ok(ToolOutput::text("fine"));
    assert_eq!(ok.content, vec![Content::text("fine")]);
    let run = agent_run(vec![record(1, "bash", ok)], StopCause::Completed);
    let rec = score(
        &task(),
        &run,
        vec![check("a", true)],
        &WorkspaceDiff::default(),
        ScoreInputs::default(),
    );
    assert_eq!(rec.tool_errors, 0);
    assert_eq!(rec.edits, EditStats::default());
    assert_eq!(rec.edit_failure_rate, None);
}

#[test]
fn failure_kinds_cover_every_edit_failure() {
    let all = [
        EditFailure::NoEdits,
        EditFailure::EmptyOldText { index: 0 },
        EditFailure::NotFound { index: 0 },
        EditFailure::NotUnique { index: 0, count: 2 },
        EditFailure::Overlap {
            first: 0,
            second: 1,
        },
        EditFailure::NoChange,
        EditFailure::File,
        EditFailure::InvalidArguments,
    ];
    let names: Vec<&str> = all
        .iter()
        .map(|f| f.name())
        .chain([UNREPORTED_FAILURE])
        .collect();
    assert_eq!(names, FAILURE_KINDS);
}

#[test]
fn a_run_that_never_started_is_an_error_record() {
    let rec = score_without_run(
        &task(),
        ScoreInputs {
            provider: "anthropic".into(),
            model: "m".into(),
            epoch: 1,
            error: Some("no cassette at cassettes/py-fix-median/anthropic--m.yaml".into()),
            ..ScoreInputs::default()
        },
    );
    assert_eq!(rec.outcome, Outcome::Error);
    assert_eq!(
        rec.reason,
        "error: no cassette at cassettes/py-fix-median/anthropic--m.yaml"
    );
    assert_eq!((rec.turns, rec.checks_total, rec.tokens.total), (0, 0, 0));
}

#[test]
fn an_error_run_carries_its_kind_and_retries() {
    let run = agent_run(vec![], StopCause::Completed);
    let diff = WorkspaceDiff::default();
    let given = score(
        &task(),
        &run,
        vec![],
        &diff,
        ScoreInputs {
            error: Some("429 Too Many Requests".into()),
            error_kind: Some(crate::record::ErrorKind::from_name("rate_limited")),
            retries: 4,
            attempts: 5,
            ..ScoreInputs::default()
        },
    );
    assert_eq!(given.outcome, Outcome::Error);
    assert_eq!(given.error_kind.map(|k| k.name()), Some("rate_limited"));
    assert_eq!((given.retries, given.attempts), (4, 5));
    assert!(given.is_infrastructure_error());
    assert!(!given.counts_for_pass_rate());

    // Without a kind from the runner, the loop's stop cause names it.
    let stopped = agent_run(
        vec![],
        StopCause::Provider(ProviderError::Overloaded {
            status: 529,
            message: "Overloaded".into(),
        }),
    );
    let from_stop = score(&task(), &stopped, vec![], &diff, ScoreInputs::default());
    assert_eq!(from_stop.error_kind.map(|k| k.name()), Some("overloaded"));
    assert!(from_stop.is_infrastructure_error());

    // A refusal or in-stream error is the model's: it counts like a failure.
    let refused = agent_run(vec![], StopCause::ModelError("refused".into()));
    let model = score(&task(), &refused, vec![], &diff, ScoreInputs::default());
    assert_eq!(model.outcome, Outcome::Error);
    assert_eq!(model.error_kind.map(|k| k.name()), Some("model_error"));
    assert!(!model.is_infrastructure_error());
    assert!(model.counts_for_pass_rate());

    // A runner error without a kind is an infrastructure error of unknown kind.
    let unknown = score_without_run(
        &task(),
        ScoreInputs {
            error: Some("workspace copy failed".into()),
            ..ScoreInputs::default()
        },
    );
    assert_eq!(unknown.error_kind.map(|k| k.name()), Some("unknown"));
    assert!(unknown.is_infrastructure_error());

    // Only error runs have a kind.
    let passed = score(
        &task(),
        &run,
        vec![check("a", true)],
        &diff,
        ScoreInputs {
            error_kind: Some(crate::record::ErrorKind::from_name("rate_limited")),
            retries: 2,
            ..ScoreInputs::default()
        },
    );
    assert_eq!(passed.outcome, Outcome::Passed);
    assert_eq!(passed.error_kind, None);
    assert_eq!(passed.retries, 2);
}

#[test]
fn infrastructure_kinds_exclude_the_models_own_errors() {
    for kind in [
        "rate_limited",
        "server_error",
        "authentication",
        "stream_cut",
        "cassette",
        "setup",
        "unknown",
    ] {
        assert!(
            crate::record::ErrorKind::from_name(kind).is_infrastructure(),
            "{kind}"
        );
    }
    assert!(!crate::record::ErrorKind::from_name("model_error").is_infrastructure());
    assert!(!crate::record::ErrorKind::from_name("context_too_long").is_infrastructure());
}

#[test]
fn a_skipped_run_is_its_own_outcome() {
    let rec = crate::record::RunRecord::skipped(
        "py-fix-median",
        "openai",
        "gpt/x",
        3,
        "budget of $5.00 spent",
    );
    assert_eq!(rec.outcome, Outcome::Skipped);
    assert_eq!(rec.outcome.name(), "skipped");
    assert_eq!(rec.reason, "budget of $5.00 spent");
    assert_eq!(rec.stop, NOT_STARTED);
    assert_eq!(rec.epoch, 3);
    assert_eq!(rec.cost, None);
    assert_eq!(rec.run_dir(), "runs/py-fix-median--openai--gpt_x--e3");
    assert!(!rec.counts_for_pass_rate());
    assert!(!rec.is_infrastructure_error());
}

#[test]
fn outcome_names_round_trip() {
    for outcome in Outcome::ALL {
        assert_eq!(Outcome::from_name(outcome.name()), Some(outcome));
        assert_eq!(
            serde_json::to_value(outcome).unwrap(),
            serde_json::json!(outcome.name())
        );
    }
    assert_eq!(Outcome::from_name("pass"), None);
}
