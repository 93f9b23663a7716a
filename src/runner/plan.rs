//! Planning: which (task, model, epoch) runs a `harness run` makes, and which cassette each uses.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cassettes::{self, CassetteMode};
use crate::providers::catalog::ModelSelector;
use crate::tasks::Task;

use super::options::RunOptions;

/// One run to make.
#[derive(Debug, Clone)]
pub struct PlannedRun {
    pub task: Arc<Task>,
    pub model: ModelSelector,
    /// 1-based.
    pub epoch: u32,
    /// The edit strategy of this run's arm.
    pub edit_strategy: String,
    /// Where this run's cassette is (or will be written).
    pub cassette: PathBuf,
}

impl PlannedRun {
    /// The run's folder under the report folder (`runs/<task>--<provider>--<model>--e<epoch>`).
    pub fn run_dir(&self) -> String {
        crate::record::run_dir_for(
            &self.task.id,
            &self.model.provider,
            &self.model.model,
            &self.edit_strategy,
            self.epoch,
        )
    }

    /// The run's key in the journal and the manifest: its folder's name.
    pub fn key(&self) -> String {
        super::journal::folder_key(&self.run_dir())
    }

    /// `task provider/model` (plus `[strategy]` for another edit strategy than the default,
    /// and `#epoch` when several epochs run).
    pub fn label(&self) -> String {
        let mut label = format!("{} {}", self.task.id, self.model);
        if self.edit_strategy != crate::record::DEFAULT_EDIT_STRATEGY {
            label.push_str(&format!(" [{}]", self.edit_strategy));
        }
        if self.epoch > 1 {
            label.push_str(&format!(" #{}", self.epoch));
        }
        label
    }
}

/// Why no plan could be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("no model to run: {mode} mode needs at least one `--model PROVIDER/MODEL`")]
    NoModel { mode: String },
    #[error("no tasks to run")]
    NoTasks,
}

/// Plans the runs for `tasks`.
///
/// Every edit strategy is an arm of its own: each task runs under each of them. With explicit
/// models, every task runs against every model. Without, replay and auto modes run
/// every cassette recorded for each task (a task with none gets no run; the caller reports it);
/// record and live modes need a model.
pub fn plan_runs(tasks: &[Arc<Task>], options: &RunOptions) -> Result<Vec<PlannedRun>, PlanError> {
    if tasks.is_empty() {
        return Err(PlanError::NoTasks);
    }
    if options.models.is_empty()
        && matches!(options.mode, CassetteMode::Record | CassetteMode::Live)
    {
        return Err(PlanError::NoModel {
            mode: format!("{:?}", options.mode).to_lowercase(),
        });
    }
    let mut planned = Vec::new();
    for task in tasks {
        let models = if options.models.is_empty() {
            recorded_models(&options.cassettes_dir, &task.id)
        } else {
            options.models.clone()
        };
        for strategy in options.strategies() {
            for model in &models {
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
                        edit_strategy: strategy.clone(),
                    });
                }
            }
        }
    }
    Ok(planned)
}

/// The provider and model of every cassette recorded for `task`, sorted.
///
/// Read from each file's header (the lines before its interactions). A file whose header cannot
/// be read, or names another provider and model than its file name says, is planned by its file
/// name, so that replaying it reports the problem instead of skipping it silently.
pub fn recorded_models(cassettes_dir: &Path, task: &str) -> Vec<ModelSelector> {
    let folder = cassettes_dir.join(cassettes::sanitize_component(task));
    let Ok(entries) = std::fs::read_dir(&folder) else {
        return Vec::new();
    };
    let mut models: Vec<ModelSelector> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .filter_map(|path| {
            // The header only: the recorded traffic is parsed when the run replays it.
            let header = cassettes::format::read_header(&path).ok();
            match header.filter(|h| {
                cassettes::cassette_path(cassettes_dir, task, &h.provider, &h.model) == path
            }) {
                Some(h) => Some(ModelSelector {
                    provider: h.provider,
                    model: h.model,
                }),
                None => {
                    let stem = path.file_stem()?.to_string_lossy().into_owned();
                    let (provider, model) = stem.split_once("--")?;
                    Some(ModelSelector {
                        provider: provider.to_owned(),
                        model: model.to_owned(),
                    })
                }
            }
        })
        .collect();
    models.sort();
    models.dedup();
    models
}
