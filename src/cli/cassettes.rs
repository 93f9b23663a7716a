//! `harness cassettes check` (stale and broken cassettes) and `harness cassettes upgrade`
//! (rewrite version 1 files in the current format), and `harness review` (pending `.new` files:
//! re-recorded cassettes and changed snapshots).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use globset::{Glob, GlobMatcher};

use crate::cassettes::check::{TaskInfo, Unused, check_dir};
use crate::cassettes::divergence::DivergenceKind;
use crate::cassettes::format::{Cassette, FORMAT_VERSION};
use crate::cassettes::recorder::write_cassette;
use crate::cassettes::review::{self, Pending, PendingKind};
use crate::tasks;
use crate::tools::ToolSet;

use super::exit;

/// `harness cassettes ...`.
#[derive(Debug, Subcommand)]
pub enum CassettesCommand {
    /// List cassettes that are stale or broken: task gone, header not matching the task, empty
    /// or unreadable files, pending reviews, and interactions the last replay never used.
    Check(CheckArgs),
    /// Rewrite version 1 cassettes in the current format (delta storage), in place.
    Upgrade(UpgradeArgs),
}

/// Arguments of `harness cassettes check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The cassettes folder.
    #[arg(default_value = "cassettes")]
    pub cassettes: PathBuf,
    /// The tasks folder the cassettes belong to.
    #[arg(long, default_value = "tasks")]
    pub tasks: PathBuf,
    /// A replay's report folder whose unused interactions to list (default: the newest folder
    /// under `reports/`, if any).
    #[arg(long, value_name = "REPORT_DIR")]
    pub report: Option<PathBuf>,
}

/// Arguments of `harness cassettes upgrade`.
#[derive(Debug, Args)]
pub struct UpgradeArgs {
    /// The cassettes folder.
    #[arg(default_value = "cassettes")]
    pub cassettes: PathBuf,
}

/// Arguments of `harness review`.
#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// Folders to look for `.new` files in (recursively).
    #[arg(default_value = crate::cassettes::review::REVIEW_ROOT)]
    pub roots: Vec<PathBuf>,
    /// Accept the pending files matching GLOB (all without one): each `.new` replaces its file.
    #[arg(long, value_name = "GLOB", num_args = 0..=1, default_missing_value = "*", conflicts_with = "reject")]
    pub accept: Option<String>,
    /// Reject the pending files matching GLOB (all without one): each `.new` is deleted.
    #[arg(long, value_name = "GLOB", num_args = 0..=1, default_missing_value = "*")]
    pub reject: Option<String>,
}

/// Runs a `harness cassettes` command.
pub fn run(command: CassettesCommand) -> ExitCode {
    match command {
        CassettesCommand::Check(args) => check(args),
        CassettesCommand::Upgrade(args) => upgrade(args),
    }
}

fn check(args: CheckArgs) -> ExitCode {
    if !args.cassettes.is_dir() {
        return super::printer::usage_error(
            &format!("no cassettes folder at {}", args.cassettes.display()),
            "pass the folder your cassettes are in, e.g. `harness cassettes check cassettes`",
        );
    }
    let (suite, problems) = tasks::load_suite_lenient(&args.tasks);
    for p in &problems {
        stderr!("error: {p}");
    }
    let infos: Vec<TaskInfo> = suite
        .iter()
        .map(|t| TaskInfo {
            id: t.id.clone(),
            prompt: t.prompts.first().cloned().unwrap_or_default(),
            tools: ToolSet::new(&t.tools)
                .map(|s| s.names().into_iter().map(str::to_owned).collect())
                .unwrap_or_default(),
        })
        .collect();
    let report = args
        .report
        .clone()
        .or_else(|| newest_report(Path::new("reports")));
    let mut unused = Vec::new();
    if let Some(dir) = &report {
        match crate::reports::read_runs_csv(&dir.join("runs.csv")) {
            // A replay stopped at a divergence of its requests leaves the rest unused by design:
            // that divergence is what the run reports, not a recording that went on.
            Ok(keys) => unused.extend(
                keys.into_iter()
                    .filter(|k| {
                        k.unused_interactions > 0
                            && k.divergence_kind
                                .is_none_or(|d| d == DivergenceKind::MissingRequests)
                    })
                    .map(|k| Unused {
                        task: k.task_id,
                        provider: k.provider,
                        model: k.model,
                        edit_strategy: k.edit_strategy,
                        unused: k.unused_interactions,
                    }),
            ),
            Err(e) if args.report.is_some() => {
                return super::printer::usage_error(
                    &e.to_string(),
                    "pass a report folder written by `harness run`",
                );
            }
            Err(_) => {}
        }
    }
    let findings = check_dir(&args.cassettes, &infos, &unused);
    for f in &findings {
        super::printer::print_data(&f.to_string());
    }
    let files = crate::cassettes::cassette_files(&args.cassettes).len();
    stderr!(
        "{} cassette{} in {} against {} task{} in {}{}: {}",
        files,
        if files == 1 { "" } else { "s" },
        args.cassettes.display(),
        infos.len(),
        if infos.len() == 1 { "" } else { "s" },
        args.tasks.display(),
        report
            .as_ref()
            .map(|r| format!(" (unused interactions from {})", r.display()))
            .unwrap_or_default(),
        if findings.is_empty() {
            "no problems".to_owned()
        } else {
            format!(
                "{} problem{}",
                findings.len(),
                if findings.len() == 1 { "" } else { "s" }
            )
        }
    );
    if findings.is_empty() && problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(exit::TASK_FAILED)
    }
}

/// The newest report folder under `reports` (folder names are timestamps).
fn newest_report(reports: &Path) -> Option<PathBuf> {
    std::fs::read_dir(reports)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("runs.csv").is_file())
        .max()
}

fn upgrade(args: UpgradeArgs) -> ExitCode {
    let mut upgraded = 0;
    let mut current = 0;
    let mut failed = 0;
    for path in crate::cassettes::cassette_files(&args.cassettes) {
        let mut cassette = match Cassette::load(&path) {
            Ok(c) => c,
            Err(e) => {
                stderr!("error: {e}");
                failed += 1;
                continue;
            }
        };
        if cassette.header.format_version >= FORMAT_VERSION {
            current += 1;
            continue;
        }
        cassette.header.format_version = FORMAT_VERSION;
        match write_cassette(&cassette, &path, &[]) {
            Ok(()) => {
                upgraded += 1;
                stderr!("upgraded {}", path.display());
            }
            Err(e) => {
                stderr!("error: {e}");
                failed += 1;
            }
        }
    }
    stderr!(
        "{upgraded} upgraded to format_version {FORMAT_VERSION}, {current} already current, {failed} failed"
    );
    if failed > 0 {
        ExitCode::from(exit::TASK_FAILED)
    } else {
        ExitCode::SUCCESS
    }
}

/// `harness review`: list pending files with what changed, or accept/reject them.
pub fn review(args: ReviewArgs) -> ExitCode {
    let pending = review::pending_files(&args.roots);
    let (action, pattern) = match (&args.accept, &args.reject) {
        (Some(g), _) => (Some(true), g.as_str()),
        (_, Some(g)) => (Some(false), g.as_str()),
        _ => (None, "*"),
    };
    let matcher = match Glob::new(pattern) {
        Ok(g) => g.compile_matcher(),
        Err(e) => {
            return super::printer::usage_error(
                &format!("`{pattern}` is not a glob: {e}"),
                "for example `--accept 'cassettes/py-*'`",
            );
        }
    };
    let selected: Vec<&Pending> = pending
        .iter()
        .filter(|p| matches(&matcher, pattern, &p.target))
        .collect();
    if pending.is_empty() {
        stderr!(
            "nothing to review: no `.new` files under {}",
            args.roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return ExitCode::SUCCESS;
    }
    let Some(accept) = action else {
        for p in &pending {
            super::printer::print_data(&describe(p));
        }
        stderr!(
            "{} pending: `{} --accept [GLOB]` keeps them, `--reject [GLOB]` drops them",
            pending.len(),
            crate::cassettes::review::review_command(&args.roots)
        );
        return ExitCode::SUCCESS;
    };
    if selected.is_empty() {
        return super::printer::usage_error(
            &format!("no pending file matches `{pattern}`"),
            "run `harness review` to list them",
        );
    }
    let mut failed = 0;
    for p in selected {
        let done = if accept {
            review::accept(p)
        } else {
            review::reject(p)
        };
        match done {
            Ok(()) => stderr!(
                "{} {}",
                if accept { "accepted" } else { "rejected" },
                p.target.display()
            ),
            Err(e) => {
                stderr!(
                    "error: failed to {} {}: {e}",
                    if accept { "accept" } else { "reject" },
                    p.path.display()
                );
                failed += 1;
            }
        }
    }
    if failed > 0 {
        ExitCode::from(exit::INTERNAL)
    } else {
        ExitCode::SUCCESS
    }
}

/// A glob matches a pending file by its path, or by any trailing part of it (`py-*`,
/// `py-median/*`, `*.snap`).
fn matches(matcher: &GlobMatcher, pattern: &str, target: &Path) -> bool {
    if pattern == "*" || matcher.is_match(target) {
        return true;
    }
    let parts: Vec<_> = target.components().collect();
    (0..parts.len()).any(|i| {
        let tail: PathBuf = parts[i..].iter().collect();
        matcher.is_match(&tail)
    })
}

/// What a pending file changes: a summary line, then a diff against the file it replaces.
fn describe(p: &Pending) -> String {
    let new_text = std::fs::read_to_string(&p.path).unwrap_or_default();
    let old_text = std::fs::read_to_string(&p.target).ok();
    let what = match p.kind {
        PendingKind::Cassette => {
            let summary = match Cassette::from_yaml(&new_text, &p.path) {
                Ok(new) => {
                    let old = old_text
                        .as_deref()
                        .and_then(|t| Cassette::from_yaml(t, &p.target).ok());
                    review::cassette_summary(old.as_ref(), &new)
                }
                Err(e) => format!("unreadable: {e}"),
            };
            format!("re-recorded cassette: {summary}")
        }
        PendingKind::Snapshot => "changed snapshot".to_owned(),
    };
    let diff = review::text_diff(
        old_text.as_deref().unwrap_or_default(),
        &new_text,
        &p.target.display().to_string(),
        &p.path.display().to_string(),
    );
    format!("{}: {what}\n{diff}", p.target.display())
}
