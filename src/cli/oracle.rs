//! `harness validate --oracle`: load the suite, run every task with the oracle
//! ([`crate::runner::oracle_check`]) in a throwaway report folder, print one row per task (the
//! reference run's verdict, the untouched run's) and every finding as `error: …` / `hint: …`,
//! and map them to an exit status: 2 for tasks that do not load (the others still run), 1 for
//! any finding, else 0.

use std::process::ExitCode;
use std::sync::Arc;

use crate::record::{Outcome, RunRecord};
use crate::runner::oracle_check::{OracleCheck, check_with_oracle};
use crate::runner::{CancellationToken, RunOptions};
use crate::sandbox::Sandbox;
use crate::tasks;

use super::exit;
use super::printer::Printer;
use super::run_args::ValidateArgs;

/// `harness validate --oracle TASKS`.
pub fn validate_with_oracle(args: ValidateArgs) -> ExitCode {
    let printer = Printer::from_env(args.quiet);
    if let Some(jobs) = args.jobs {
        if jobs == 0 || jobs > super::preflight::MAX_JOBS {
            return printer.problems(&[crate::runner::problem::Problem::new(
                format!("`--jobs {jobs}` is out of range"),
                format!(
                    "pass `--jobs N` with N from 1 to {}",
                    super::preflight::MAX_JOBS
                ),
            )]);
        }
    }
    let (all, load_problems) = tasks::load_suite_lenient(&args.tasks);
    for problem in &load_problems {
        printer.error(&problem.to_string());
    }
    let selected = match tasks::filter(all, &args.task_globs, &[]) {
        Ok(selected) => selected,
        Err(e) => {
            return printer.problems(&[crate::runner::problem::Problem::new(
                e.to_string(),
                "`--task` takes a glob such as `py-*`",
            )]);
        }
    };
    if selected.is_empty() {
        printer.error(&format!("no task to run in {}", args.tasks.display()));
        return ExitCode::from(exit::USAGE);
    }
    let report = match tempfile::Builder::new().prefix("harness-oracle-").tempdir() {
        Ok(dir) => dir,
        Err(e) => {
            return super::printer::internal_error(&format!(
                "failed to create a temporary report folder: {e}"
            ));
        }
    };
    let runtime = match super::runtime::runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let sandbox = Sandbox::detect(args.sandbox);
    if let Some(notice) = sandbox.notice() {
        printer.warn(notice);
    }
    // The oracle reads and writes no cassette: the folder named is never made.
    let mut options = RunOptions::with_sandbox(
        report.path().join("cassettes"),
        report.path().to_owned(),
        sandbox.clone(),
    );
    options.tasks_dir = args.tasks.clone();
    options.ci = crate::cassettes::ci_set(std::env::var("CI").ok().as_deref());
    if let Some(jobs) = args.jobs {
        options.jobs = jobs;
    }
    // The oracle needs no key: none is looked up.
    options.key_env = Arc::new(|_| None);
    let tasks: Vec<Arc<tasks::Task>> = selected.into_iter().map(Arc::new).collect();
    let stop = CancellationToken::new();
    let progress = Arc::new(printer.progress());
    let checks = runtime.block_on(async {
        super::signals::watch_signals(stop.clone(), sandbox.clone());
        check_with_oracle(&tasks, &options, progress.clone(), stop.clone()).await
    });
    progress.finish();
    sandbox.kill_all();
    if stop.is_cancelled() {
        runtime.shutdown_timeout(std::time::Duration::from_millis(500));
        printer.error("interrupted: the table holds the runs that finished");
    }
    printer.data(&table(&checks));
    let mut with_findings = 0;
    for check in &checks {
        let findings = check.findings();
        if !findings.is_empty() {
            with_findings += 1;
        }
        for finding in findings {
            printer.error(&format!("task `{}`: {finding}", check.task));
            printer.message(&format!("hint: {}", check.hint(&finding)));
        }
    }
    let n = checks.len();
    let code = if stop.is_cancelled() {
        ExitCode::from(exit::INTERRUPTED)
    } else if !load_problems.is_empty() {
        printer.error(&format!(
            "{} problem(s) in the task suite (see above); the valid tasks ran",
            load_problems.len()
        ));
        ExitCode::from(exit::USAGE)
    } else if with_findings > 0 {
        ExitCode::from(exit::ORACLE_FINDINGS)
    } else {
        ExitCode::SUCCESS
    };
    if with_findings > 0 {
        printer.error(&format!(
            "{with_findings} of {n} task(s) do not hold (see above)"
        ));
    } else if !stop.is_cancelled() {
        printer.data(&format!(
            "{n} task(s) hold: every reference solution passes its checks, and every \
             untouched fixture fails them"
        ));
    }
    code
}

/// One row per task: its id, the reference run's verdict and the untouched run's, each `pass`,
/// `fail`, another outcome's name, `missing` (no reference solution) or `-` (not run).
fn table(checks: &[OracleCheck]) -> String {
    let verdict = |record: Option<&RunRecord>| match record.map(|r| r.outcome) {
        None => "-",
        Some(Outcome::Passed) => "pass",
        Some(Outcome::Failed) => "fail",
        Some(other) => other.name(),
    };
    let rows: Vec<[String; 4]> = checks
        .iter()
        .map(|c| {
            let reference = if c.has_reference {
                verdict(c.reference.as_ref())
            } else {
                "missing"
            };
            let ok = if c.findings().is_empty() {
                "ok"
            } else {
                "PROBLEM"
            };
            [
                c.task.clone(),
                reference.to_owned(),
                verdict(c.none.as_ref()).to_owned(),
                ok.to_owned(),
            ]
        })
        .collect();
    let header = [
        "task".to_owned(),
        "reference (must pass)".to_owned(),
        "untouched (must fail)".to_owned(),
        "verdict".to_owned(),
    ];
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String; 4]| {
        cells
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    let mut out = vec![line(&header)];
    out.extend(rows.iter().map(line));
    out.join("\n")
}
