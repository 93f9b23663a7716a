//! `harness validate --oracle`: each task run twice by the oracle ([`crate::providers::oracle`]),
//! once applying its reference solution and once touching nothing, through the same runs as any
//! model's (workspace, agent loop, tools, checks). A task is sound when its reference passes its
//! checks and the untouched fixture fails them; every other task gets a [`OracleFinding`] saying
//! what is wrong and what to do.
//!
//! A task without a reference solution is not run with `oracle/reference` (its finding says what
//! to add), but its checks are still run untouched. Prints nothing; the CLI shows the table.

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::events::Reporter;
use crate::providers::catalog::ModelSelector;
use crate::providers::oracle::{NONE_MODEL, PROVIDER, REFERENCE_MODEL};
use crate::record::{Outcome, RunRecord};
use crate::tasks::Task;
use crate::tasks::solution::{SOLUTION_DIR, SOLUTION_SCRIPT};

use super::options::RunOptions;
use super::plan::PlannedRun;
use super::schedule::execute_until;

/// The two oracle runs of one task.
#[derive(Debug, Clone)]
pub struct OracleCheck {
    pub task: String,
    /// The task folder.
    pub dir: PathBuf,
    /// The run of `oracle/reference`; `None` when the task has no reference solution (or the
    /// suite was interrupted before it ran).
    pub reference: Option<RunRecord>,
    /// The run of `oracle/none`; `None` when the suite was interrupted before it ran.
    pub none: Option<RunRecord>,
    /// Whether the task has a reference solution.
    pub has_reference: bool,
}

/// What is wrong with a task, as the oracle found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OracleFinding {
    /// Neither `solution/` nor `solution.sh`.
    NoReference,
    /// The reference solution applied, the checks did not pass (or the run did not finish).
    ReferenceFails {
        /// The run's outcome name (`failed`, `error`, `limit`).
        outcome: &'static str,
        reason: String,
    },
    /// Every check passes on the untouched fixture: the task scores every model perfect.
    PassesUntouched,
    /// The untouched run did not get as far as the checks (a setup error).
    UntouchedDidNotRun { reason: String },
}

impl OracleCheck {
    /// Everything wrong with the task; empty when it is sound. Runs an interrupt kept from
    /// running say nothing.
    pub fn findings(&self) -> Vec<OracleFinding> {
        let mut findings = Vec::new();
        match &self.reference {
            _ if !self.has_reference => findings.push(OracleFinding::NoReference),
            Some(r) if r.outcome != Outcome::Passed => {
                findings.push(OracleFinding::ReferenceFails {
                    outcome: r.outcome.name(),
                    reason: failure_reason(r),
                });
            }
            _ => {}
        }
        match &self.none {
            Some(r) if r.outcome == Outcome::Passed => {
                findings.push(OracleFinding::PassesUntouched);
            }
            Some(r) if r.outcome == Outcome::Error => {
                findings.push(OracleFinding::UntouchedDidNotRun {
                    reason: failure_reason(r),
                });
            }
            _ => {}
        }
        findings
    }

    /// What to do about `finding`, in one sentence naming the task's folder.
    pub fn hint(&self, finding: &OracleFinding) -> String {
        let dir = self.dir.display();
        match finding {
            OracleFinding::NoReference => format!(
                "add {} (files laid over repo/) or {}",
                self.dir.join(SOLUTION_DIR).display(),
                self.dir.join(SOLUTION_SCRIPT).display()
            ),
            OracleFinding::ReferenceFails { .. } => format!(
                "fix the reference solution or the checks; `harness run {} --task {} --model \
                 {PROVIDER}/{REFERENCE_MODEL} --keep-workspaces` keeps the run's transcript, diff \
                 and workspace",
                self.dir
                    .parent()
                    .map_or_else(|| ".".into(), |p| p.display().to_string()),
                self.task
            ),
            OracleFinding::PassesUntouched => format!(
                "make at least one check of {dir}/task.yaml fail until the task is solved (a \
                 test the fixture fails, a file or text the fix adds)"
            ),
            OracleFinding::UntouchedDidNotRun { .. } => {
                "see the error above; the task's checks could not be run on its fixture".to_owned()
            }
        }
    }
}

impl std::fmt::Display for OracleFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OracleFinding::NoReference => write!(f, "no reference solution"),
            OracleFinding::ReferenceFails { outcome, reason } => {
                write!(
                    f,
                    "the reference solution does not pass ({outcome}): {reason}"
                )
            }
            OracleFinding::PassesUntouched => write!(
                f,
                "the checks pass on the untouched fixture, so every model passes the task"
            ),
            OracleFinding::UntouchedDidNotRun { reason } => {
                write!(f, "the untouched run did not reach the checks: {reason}")
            }
        }
    }
}

/// The record's reason, with the first line of the first failing check's detail when it says
/// more.
fn failure_reason(record: &RunRecord) -> String {
    let check = record.checks.iter().find(|c| !c.passed);
    match check.and_then(|c| c.detail.lines().find(|l| !l.trim().is_empty())) {
        Some(line) if !record.reason.contains(line.trim()) => {
            format!("{} ({})", record.reason, line.trim())
        }
        _ => record.reason.clone(),
    }
}

/// Runs the oracle on every task of `tasks` (`oracle/reference` where there is a reference
/// solution, `oracle/none` everywhere), at most `options.jobs` runs at once, until `stop`;
/// returns one check per task, in the order given.
pub async fn check_with_oracle(
    tasks: &[Arc<Task>],
    options: &RunOptions,
    reporter: Arc<dyn Reporter>,
    stop: CancellationToken,
) -> Vec<OracleCheck> {
    let model = |name: &str| ModelSelector {
        provider: PROVIDER.to_owned(),
        model: name.to_owned(),
    };
    let mut planned = Vec::new();
    for task in tasks {
        let models = if task.solution.is_some() {
            vec![model(REFERENCE_MODEL), model(NONE_MODEL)]
        } else {
            vec![model(NONE_MODEL)]
        };
        for model in models {
            planned.push(PlannedRun {
                task: task.clone(),
                cassette: crate::cassettes::cassette_path(
                    &options.cassettes_dir,
                    &task.id,
                    &model.provider,
                    &model.model,
                ),
                model,
                epoch: 1,
                edit_strategy: crate::record::DEFAULT_EDIT_STRATEGY.to_owned(),
            });
        }
    }
    let execution = execute_until(planned, options, reporter, stop).await;
    let mut checks: Vec<OracleCheck> = tasks
        .iter()
        .map(|task| OracleCheck {
            task: task.id.clone(),
            dir: task.dir.clone(),
            reference: None,
            none: None,
            has_reference: task.solution.is_some(),
        })
        .collect();
    for record in execution.records {
        let Some(check) = checks.iter_mut().find(|c| c.task == record.task_id) else {
            continue;
        };
        if record.model == REFERENCE_MODEL {
            check.reference = Some(record);
        } else {
            check.none = Some(record);
        }
    }
    checks
}
