//! `harness merge SHARD_DIR... --into DIR`: one report from the shards' report folders
//! ([`crate::runner::merge`]), its summary on stdout, what is missing or duplicated on stderr,
//! and the exit status `harness run` would give for the merged runs (a run no shard finished
//! did not pass).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::runner::merge::MergeError;
use crate::runner::suite::FinishOptions;

use super::exit;
use super::printer::Printer;

/// How many names a list of runs shows before it says how many more there are.
const LISTED: usize = 20;

/// Arguments of `harness merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The report folders of the shards (`harness run --partition ...`), in any order.
    #[arg(required = true, value_name = "SHARD_DIR")]
    pub shards: Vec<PathBuf>,

    /// Where the merged report goes (created; a folder holding an earlier merge is merged
    /// again, keeping the runs it has).
    #[arg(long, value_name = "DIR")]
    pub into: PathBuf,

    /// Compare the merged outcome table with this committed snapshot, as `harness run
    /// --snapshot` does.
    #[arg(long, value_name = "FILE")]
    pub snapshot: Option<PathBuf>,

    /// No messages on stderr but errors; the summary still goes to stdout.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// `harness merge`.
pub fn merge(args: MergeArgs) -> ExitCode {
    let printer = Printer::from_env(args.quiet);
    let options = FinishOptions {
        step_summary: printer.step_summary(),
        snapshot: args.snapshot.clone(),
        ci: crate::cassettes::ci_set(std::env::var("CI").ok().as_deref()),
    };
    let merged = match crate::runner::merge::merge(&args.shards, &args.into, &options) {
        Ok(merged) => merged,
        Err(e @ MergeError::Copy { .. }) => {
            printer.error(&e.to_string());
            return ExitCode::from(exit::INTERNAL);
        }
        Err(e) => {
            return printer.problems(&[crate::runner::problem::Problem::new(
                e.to_string(),
                e.hint(),
            )]);
        }
    };
    for (key, dirs) in &merged.duplicated {
        let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        printer.warn(&format!(
            "run `{key}` was finished by more than one shard ({}); the last to finish is kept",
            dirs.join(", ")
        ));
    }
    let outcome = &merged.outcome;
    let missing = !merged.missing_shards.is_empty() || !merged.missing.is_empty();
    // The runs, the summary and the snapshot as `harness run` prints them; what is missing
    // after, where it is read last.
    let mut missing_lines = Vec::new();
    if !merged.missing_shards.is_empty() {
        missing_lines.push(format!(
            "error: shard(s) {} not merged",
            merged.missing_shards.join(", ")
        ));
    }
    if !merged.missing.is_empty() {
        missing_lines.push(format!(
            "error: {} of {} runs missing: {}",
            merged.missing.len(),
            outcome.manifest.plan.len(),
            listed(&merged.missing)
        ));
        missing_lines.push(format!(
            "hint: merge again as more shards arrive, or `harness run --resume {}` runs the missing ones here",
            args.into.display()
        ));
    }
    let code = super::outcome::print_outcome(&printer, outcome, &missing_lines, |_| {
        format!(
            "{} runs from {} shard(s) merged into {} (open {})",
            outcome.records.len(),
            args.shards.len(),
            args.into.display(),
            args.into.join(crate::reports::html::REPORT_HTML).display()
        )
    });
    if missing && outcome.snapshot.is_none() && code == ExitCode::from(exit::SUCCESS) {
        return ExitCode::from(exit::TASK_FAILED);
    }
    code
}

/// `a, b, c` or `a, b, … (and 12 more)`.
fn listed(names: &[String]) -> String {
    let shown: Vec<&str> = names.iter().take(LISTED).map(String::as_str).collect();
    if names.len() > LISTED {
        format!("{} (and {} more)", shown.join(", "), names.len() - LISTED)
    } else {
        shown.join(", ")
    }
}
