//! `harness compare BASE [NEW]`: read two report folders (or one, to compare its arms) back from
//! their run files, pair the runs by task and epoch (and arm), print the statistics and every
//! flip, write `compare.md`, `compare.csv` and `compare.html`, and exit with a status CI can gate
//! on (`--fail-on`).

use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use crate::record::{RunFile, RunRecord};
use crate::reports::paired::{self, Arm, ArmRun, Comparison, Side};
use crate::reports::{self, html};

use super::exit;

/// When `harness compare` exits non-zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// A run that passed on BASE did not on NEW (any regression flip), or a significant drop.
    Flip,
    /// Any run flipped, either way, or a significant drop.
    AnyFlip,
    /// Only a significant drop: more runs passed → not than not → passed, McNemar p < --alpha.
    Regression,
    /// Never (0 unless the comparison could not be made).
    Never,
}

/// Arguments of `harness compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The base report folder (reports/<timestamp>), or the only one to compare its arms.
    pub base: PathBuf,

    /// The new report folder; without it, every arm of BASE is compared with every other.
    pub new: Option<PathBuf>,

    /// Where compare.md, compare.csv and compare.html go (default: NEW/compare, or BASE/compare).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// When to exit non-zero (see the README's exit codes).
    #[arg(long, value_enum, default_value = "regression")]
    pub fail_on: FailOn,

    /// Significance level for a regression (exact McNemar test).
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
}

/// `harness compare`.
pub fn compare(args: CompareArgs) -> ExitCode {
    if !(0.0..=1.0).contains(&args.alpha) {
        return super::printer::usage_error(
            &format!("--alpha {} is not a probability", args.alpha),
            "for example `--alpha 0.05`",
        );
    }
    let base = match load(&args.base) {
        Ok(files) => files,
        Err(code) => return code,
    };
    let new = match &args.new {
        Some(dir) => match load(dir) {
            Ok(files) => Some(files),
            Err(code) => return code,
        },
        None => None,
    };
    let base_view = arm_runs(&base);
    let new_view = new.as_deref().map(arm_runs);
    let cmp = match &new_view {
        Some(new_view) => paired::compare_sides(&base_view, new_view),
        None => {
            let cmp = paired::compare_within(&base_view);
            if cmp.arms.is_empty() {
                return super::printer::usage_error(
                    &format!(
                        "{} holds a single arm; there is nothing to compare it with",
                        args.base.display()
                    ),
                    "pass a second report folder: `harness compare BASE NEW`",
                );
            }
            cmp
        }
    };
    if cmp.arms.is_empty() {
        return super::printer::usage_error(
            "no arm of the new folder pairs with an arm of the base folder",
            "compare folders run with the same providers and models, or with one arm each",
        );
    }
    let new_dir = args.new.as_deref().unwrap_or(&args.base);
    let out = args.out.clone().unwrap_or_else(|| new_dir.join("compare"));
    let title = match &args.new {
        Some(new_dir) => format!(
            "base `{}` ({} runs) against new `{}` ({} runs)",
            args.base.display(),
            base.len(),
            new_dir.display(),
            new.as_ref().map_or(0, Vec::len)
        ),
        None => format!(
            "the arms of `{}` ({} runs) against each other",
            args.base.display(),
            base.len()
        ),
    };
    let printer = super::printer::Printer::from_env(false);
    printer.data(&reports::terminal::render_comparison(
        &cmp,
        args.alpha,
        printer.colour(),
    ));
    let summary = printer.step_summary();
    if let Err(e) = write(&cmp, &out, &args.base, new_dir, &title, summary.as_deref()) {
        return super::printer::internal_error(&format!("failed to write the comparison: {e}"));
    }
    stderr!(
        "comparison written to {}",
        out.join(html::COMPARE_HTML).display()
    );
    status(&cmp, args.fail_on, args.alpha)
}

/// Each run with its arm.
fn arm_runs(files: &[RunFile]) -> Vec<ArmRun<'_>> {
    files.iter().map(|f| (Arm::of(f), &f.record)).collect()
}

/// The exit status for `fail_on`.
pub fn status(cmp: &Comparison<'_>, fail_on: FailOn, alpha: f64) -> ExitCode {
    if fail_on == FailOn::Never {
        return ExitCode::SUCCESS;
    }
    if cmp.significant_regression(alpha) {
        stderr!("error: the pass rate dropped significantly (McNemar p < {alpha})");
        return ExitCode::from(exit::COMPARE_REGRESSED);
    }
    let flipped = match fail_on {
        FailOn::Flip => cmp.any_regression_flip(),
        FailOn::AnyFlip => cmp.flips().next().is_some(),
        FailOn::Regression | FailOn::Never => false,
    };
    if flipped {
        stderr!("error: runs flipped (see the list above)");
        return ExitCode::from(exit::COMPARE_FLIPPED);
    }
    ExitCode::SUCCESS
}

/// The run files of a report folder; a usage error naming it when there are none.
fn load(dir: &Path) -> Result<Vec<RunFile>, ExitCode> {
    match reports::read_run_files(dir) {
        Ok(files) if files.is_empty() => Err(super::printer::usage_error(
            &format!("{} holds no run (no runs/*/run.json)", dir.display()),
            "pass a report folder written by `harness run` (reports/<timestamp>)",
        )),
        Ok(files) => Ok(files),
        Err(e) => Err(super::printer::usage_error(
            &e.to_string(),
            "pass a report folder written by `harness run` (reports/<timestamp>)",
        )),
    }
}

fn write(
    cmp: &Comparison<'_>,
    out: &Path,
    base: &Path,
    new: &Path,
    title: &str,
    step_summary: Option<&Path>,
) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let to_base = relative(out, base);
    let to_new = relative(out, new);
    let link = |r: &RunRecord, side: Side| {
        let dir = if side == Side::Base {
            &to_base
        } else {
            &to_new
        };
        Some(format!("{}/{}", dir, r.transcript_path))
    };
    let md = format!(
        "# Harness comparison\n\nComparing {title}.\n\n{}",
        paired::comparison_md(cmp, "##", true, &link)
    );
    let csv = paired::comparison_csv(cmp).map_err(|e| e.to_string())?;
    let page = html::compare_html(
        cmp,
        &format!("Comparing {title}."),
        &format!("{to_base}/{}", html::REPORT_HTML),
        &format!("{to_new}/{}", html::REPORT_HTML),
    );
    for (name, text) in [
        ("compare.md", md.as_str()),
        ("compare.csv", csv.as_str()),
        (html::COMPARE_HTML, page.as_str()),
    ] {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if let Some(summary) = step_summary {
        reports::append_file(summary, &md).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The path of `to` relative to the folder `from` (`../20260101-000000`), with `/` separators;
/// both are made absolute first. Falls back to `to` itself when no relative path exists.
pub fn relative(from: &Path, to: &Path) -> String {
    let absolute = |p: &Path| {
        std::fs::canonicalize(p).unwrap_or_else(|_| {
            std::env::current_dir()
                .map(|cwd| cwd.join(p))
                .unwrap_or_else(|_| p.to_path_buf())
        })
    };
    let (from, to) = (absolute(from), absolute(to));
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common == 0 {
        return to.display().to_string();
    }
    let mut parts: Vec<String> = vec!["..".to_owned(); a.len() - common];
    parts.extend(
        b[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_between_folders() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("reports/a");
        let out = dir.path().join("reports/b/compare");
        std::fs::create_dir_all(&base).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        assert_eq!(relative(&out, &base), "../../a");
        assert_eq!(relative(&out, &dir.path().join("reports/b")), "..");
        assert_eq!(relative(&base, &base), ".");
    }
}
