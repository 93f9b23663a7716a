//! `harness dev`: commands for the harness's own developers.
//!
//! `harness dev record-scripted` re-records the shipped cassettes honestly: for each task with a
//! script of assistant turns under `tests/scripts/`, it starts the scripted model server (a real
//! local HTTP server answering in the provider's wire format), runs the task in record mode
//! against it through the live transport, and lets the recorder write the cassette. Nothing in a
//! shipped cassette is written by hand.
//!
//! The scripted server is test support, built only with the `testkit` feature: without it the
//! command says how to run it (`cargo run --features testkit -- dev record-scripted tasks/`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::providers::ApiKind;
use crate::providers::catalog::ModelSelector;

/// Developer subcommands.
#[derive(Debug, Subcommand)]
pub enum DevCommand {
    /// Re-record the shipped cassettes from the scripted turns in tests/scripts/.
    RecordScripted(RecordScriptedArgs),
}

/// Arguments of `harness dev record-scripted`.
#[derive(Debug, Args)]
pub struct RecordScriptedArgs {
    /// The tasks folder.
    #[arg(default_value = "tasks")]
    pub tasks: PathBuf,
    /// Where the scripts are (`<task-id>.yaml`).
    #[arg(long, default_value = "tests/scripts")]
    pub scripts: PathBuf,
    /// Where cassettes are written.
    #[arg(long, default_value = "cassettes")]
    pub cassettes: PathBuf,
    /// Only tasks whose id matches this glob (repeatable).
    #[arg(long = "task", value_name = "GLOB")]
    pub task_globs: Vec<String>,
    /// Where the recording runs' reports go.
    #[arg(long, default_value = "reports")]
    pub reports: PathBuf,
}

/// The provider and model name each wire format is recorded under.
pub fn scripted_models() -> Vec<(ApiKind, ModelSelector)> {
    vec![
        (
            ApiKind::AnthropicMessages,
            ModelSelector {
                provider: "anthropic".into(),
                model: "scripted-claude".into(),
            },
        ),
        (
            ApiKind::OpenaiCompletions,
            ModelSelector {
                provider: "openai".into(),
                model: "scripted-gpt".into(),
            },
        ),
        (
            ApiKind::OpenaiResponses,
            ModelSelector {
                provider: "openai-responses".into(),
                model: "scripted-gpt".into(),
            },
        ),
        (
            ApiKind::GoogleGenerativeAi,
            ModelSelector {
                provider: "google".into(),
                model: "scripted-gemini".into(),
            },
        ),
    ]
}

/// Runs a developer command.
pub fn run(command: DevCommand) -> ExitCode {
    let runtime = match super::runtime::runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    match command {
        DevCommand::RecordScripted(args) => runtime.block_on(record_scripted(args)),
    }
}

/// Without the `testkit` feature there is no scripted server to record against.
#[cfg(not(feature = "testkit"))]
async fn record_scripted(_: RecordScriptedArgs) -> ExitCode {
    super::printer::usage_error(
        "this harness was built without the scripted model server (the `testkit` feature)",
        "run `cargo run --features testkit -- dev record-scripted tasks/`",
    )
}

#[cfg(feature = "testkit")]
async fn record_scripted(args: RecordScriptedArgs) -> ExitCode {
    use std::sync::Arc;

    use futures::StreamExt;

    use crate::cassettes::CassetteMode;
    use crate::record::{Outcome, RunRecord};
    use crate::runner::{self, RunOptions, Silent};
    use crate::tasks;
    use crate::testkit;

    use super::exit;

    let suite = match tasks::load_suite(&args.tasks) {
        Ok(suite) => suite,
        Err(e) => {
            stderr!("{e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let selected = match tasks::filter(suite.tasks, &args.task_globs, &[]) {
        Ok(selected) => selected,
        Err(e) => return super::printer::usage_error(&e.to_string(), "`--task` takes a glob"),
    };
    let report_dir = args.reports.join(
        chrono::Utc::now()
            .format("%Y%m%d-%H%M%S-%3f-record")
            .to_string(),
    );
    let mut jobs = Vec::new();
    for task in selected {
        let script_path = args.scripts.join(format!("{}.yaml", task.id));
        let script = match testkit::load_script(&script_path) {
            Ok(script) => script,
            Err(e) => {
                stderr!("error: {e}");
                return ExitCode::from(exit::USAGE);
            }
        };
        for (api, model) in scripted_models() {
            jobs.push((Arc::new(task.clone()), script.clone(), api, model));
        }
    }
    let cassettes = args.cassettes.clone();
    let records: Vec<RunRecord> = futures::stream::iter(jobs)
        .map(|(task, script, api, model)| {
            let cassettes = cassettes.clone();
            let report_dir = report_dir.clone();
            async move {
                let server = testkit::start(script, api).await;
                let mut options = RunOptions::new(cassettes, report_dir);
                options.mode = CassetteMode::Record;
                options.models = vec![model];
                options.base_url = Some(server.base_url());
                options.jobs = 1;
                // The scripted server takes any key; this one only exists to be scrubbed.
                options.key_env = Arc::new(|_| Some("scripted-server-key".to_owned()));
                let planned = runner::plan_runs(&[task], &options).expect("one task, one model");
                runner::execute(planned, &options, Arc::new(Silent)).await
            }
        })
        .buffer_unordered(2)
        .flat_map(futures::stream::iter)
        .collect()
        .await;
    let mut failed = 0;
    for record in &records {
        let ok = record.outcome == Outcome::Passed;
        failed += usize::from(!ok);
        stderr!(
            "{} {}/{}: {} {}",
            if ok { "recorded" } else { "FAILED  " },
            record.provider,
            record.model,
            record.task_id,
            if ok {
                String::new()
            } else {
                record.reason.clone()
            }
        );
    }
    if failed > 0 {
        stderr!("error: {failed} scripted run(s) did not pass; their cassettes may be stale");
        ExitCode::from(exit::TASK_FAILED)
    } else {
        ExitCode::SUCCESS
    }
}
