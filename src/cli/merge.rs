//! `harness merge SHARD_DIR... --into DIR`: one report from the shards' report folders
//! ([`crate::runner::merge`]), its summary on stdout, what is missing or duplicated on stderr,
//! and the exit status `harness run` would give for the merged runs (a run no shard finished
//! did not pass).

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use crate::reports;

use super::exit;

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
    let options = reports::ReportOptions {
        step_summary: std::env::var_os("GITHUB_STEP_SUMMARY")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
        ..reports::ReportOptions::default()
    };
    let merged = match crate::runner::merge::merge(&args.shards, &args.into, &options) {
        Ok(merged) => merged,
        Err(e) => {
            let hint = e.hint();
            return match e {
                crate::runner::merge::MergeError::Copy { .. }
                | crate::runner::merge::MergeError::Report(_)
                | crate::runner::merge::MergeError::Corpus { .. } => {
                    super::internal_error(&e.to_string())
                }
                _ => super::usage_error(&e.to_string(), hint),
            };
        }
    };
    for w in &merged.warnings {
        super::warn(w);
    }
    for (key, dirs) in &merged.duplicated {
        let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        super::warn(&format!(
            "run `{key}` was finished by more than one shard ({}); the last to finish is kept",
            dirs.join(", ")
        ));
    }
    let colour = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && std::io::stdout().is_terminal();
    super::print_data(&reports::render_terminal_summary(&merged.records, colour));
    if !merged.missing_shards.is_empty() {
        stderr!(
            "error: shard(s) {} not merged",
            merged.missing_shards.join(", ")
        );
    }
    if !merged.missing.is_empty() {
        stderr!(
            "error: {} of {} runs missing: {}",
            merged.missing.len(),
            merged.manifest.plan.len(),
            listed(&merged.missing)
        );
        stderr!(
            "hint: merge again as more shards arrive, or `harness run --resume {}` runs the missing ones here",
            args.into.display()
        );
    }
    if !args.quiet {
        stderr!(
            "{} runs from {} shard(s) merged into {} (open {})",
            merged.records.len(),
            args.shards.len(),
            args.into.display(),
            args.into.join(reports::html::REPORT_HTML).display()
        );
    }
    let ci = crate::cassettes::ci_set(std::env::var("CI").ok().as_deref());
    let snapshot = match &args.snapshot {
        None => None,
        Some(file) => match reports::snapshot::check_snapshot(file, &merged.records, ci) {
            Ok(verdict) => {
                super::run::report_snapshot(file, &verdict);
                Some(verdict)
            }
            Err(e) => return super::internal_error(&e.to_string()),
        },
    };
    let status = super::run::run_status(&merged.records, snapshot.as_ref());
    if snapshot.is_none() && !merged.missing.is_empty() && status == exit::SUCCESS {
        return ExitCode::from(exit::TASK_FAILED);
    }
    ExitCode::from(status)
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
