//! Planning: which (task, model, epoch) runs a `harness run` makes, and which cassette each uses.

use std::path::PathBuf;
use std::sync::Arc;

use crate::cassettes::{self, CassetteMode};
use crate::providers::catalog::ModelSelector;
use crate::tasks::Task;

use super::RunOptions;

/// One run to make.
#[derive(Debug, Clone)]
pub struct PlannedRun {
    pub task: Arc<Task>,
    pub model: ModelSelector,
    /// 1-based.
    pub epoch: u32,
    /// Where this run's cassette is (or will be written).
    pub cassette: PathBuf,
}

impl PlannedRun {
    /// `task provider/model` (plus `#epoch` when several epochs run).
    pub fn label(&self) -> String {
        if self.epoch > 1 {
            format!("{} {} #{}", self.task.id, self.model, self.epoch)
        } else {
            format!("{} {}", self.task.id, self.model)
        }
    }
}

/// Why no plan could be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("no model to run: {mode} mode needs at least one `--model PROVIDER/MODEL`")]
    NoModel { mode: String },
    #[error("no tasks matched the filters")]
    NoTasks,
}

/// Plans the runs for `tasks`.
///
/// With explicit models, every task runs against every model. Without, replay and auto modes run
/// every cassette recorded for each task (a task with none is planned against nothing and
/// reported by the caller); record and live modes need a model.
pub fn plan_runs(tasks: &[Arc<Task>], options: &RunOptions) -> Result<Vec<PlannedRun>, PlanError> {
    if tasks.is_empty() {
        return Err(PlanError::NoTasks);
    }
    let mut planned = Vec::new();
    for task in tasks {
        let models: Vec<ModelSelector> = if options.models.is_empty() {
            match options.mode {
                CassetteMode::Replay | CassetteMode::Auto => {
                    cassettes::recorded_models(&options.cassettes_dir, &task.id)
                }
                mode => {
                    return Err(PlanError::NoModel {
                        mode: format!("{mode:?}").to_lowercase(),
                    });
                }
            }
        } else {
            options.models.clone()
        };
        for model in models {
            for epoch in 1..=options.epochs.max(1) {
                planned.push(PlannedRun {
                    task: task.clone(),
                    cassette: cassettes::cassette_path(
                        &options.cassettes_dir,
                        &task.id,
                        &model.provider,
                        &model.model,
                    ),
                    model: model.clone(),
                    epoch,
                });
            }
        }
    }
    Ok(planned)
}
