//! How `harness run` and `harness merge` show a suite's outcome: errors and warnings, the
//! summary table, where the reports are, a continued folder's progress, the snapshot's verdict;
//! and the exit status the outcome maps to.

use std::process::ExitCode;

use crate::reports::ReportPaths;
use crate::reports::snapshot::SnapshotVerdict;
use crate::runner::resume::Continuation;
use crate::runner::suite::{Continued, SuiteOutcome};

use super::exit;
use super::printer::Printer;

/// Prints a suite's outcome (errors, warnings, the summary, then `after_summary`, where the
/// reports are in the words of `written`, the snapshot's verdict) and returns its exit status
/// (`harness run`'s and `harness merge`'s alike).
pub fn print_outcome(
    printer: &Printer,
    outcome: &SuiteOutcome,
    after_summary: &[String],
    written: impl FnOnce(&ReportPaths) -> String,
) -> ExitCode {
    for error in &outcome.errors {
        printer.error(error);
    }
    for warning in &outcome.warnings {
        printer.warn(warning);
    }
    if let Some(e) = &outcome.manifest_error {
        return internal(printer, e);
    }
    printer.data(&crate::reports::render_terminal_summary(
        &outcome.records,
        printer.colour(),
    ));
    for line in after_summary {
        printer.message(line);
    }
    match &outcome.written {
        Ok(paths) => printer.note(&written(paths)),
        Err(e) => return internal(printer, e),
    }
    if outcome.interrupted {
        if let Some(notice) = &outcome.notice {
            printer.message(notice);
        }
        return ExitCode::from(exit::INTERRUPTED);
    }
    let snapshot = match &outcome.snapshot {
        None => None,
        Some(check) => match &check.verdict {
            Err(e) => return internal(printer, e),
            Ok(verdict) => {
                report_snapshot(printer, &check.file, verdict);
                Some(verdict)
            }
        },
    };
    ExitCode::from(exit::of_suite(&outcome.records, snapshot))
}

/// Says how far a continued folder got before its runs start.
pub fn say_continued(printer: &Printer, c: &Continued) {
    let errors = c.running - c.never_finished;
    let why = match (errors, c.never_finished) {
        _ if c.running == 0 => String::new(),
        (0, never) => format!(" ({never} never finished)"),
        (errors, 0) => format!(" ({errors} ended in an infrastructure error)"),
        (errors, never) => {
            format!(" ({errors} ended in an infrastructure error, {never} never finished)")
        }
    };
    printer.note(&format!(
        "{}: {} of its {} run(s) finished; running {}{why}",
        c.dir.display(),
        c.finished,
        c.planned,
        c.running
    ));
    if c.how == Continuation::RerunErrors && c.never_finished > 0 {
        printer.warn(&format!(
            "{} run(s) of {} never finished (the harness was stopped before them); \
             `--rerun-errors` runs them too, as `--resume` would",
            c.never_finished,
            c.dir.display()
        ));
    }
}

/// Says how the run's outcome table compares with the committed snapshot.
pub fn report_snapshot(printer: &Printer, file: &std::path::Path, verdict: &SnapshotVerdict) {
    match verdict {
        SnapshotVerdict::Equal => printer.message(&format!("snapshot {} matches", file.display())),
        SnapshotVerdict::Changed {
            diff,
            proposed,
            missing,
        } => {
            if *missing {
                printer.message(&format!("snapshot {} does not exist yet", file.display()));
            } else {
                printer.message(&format!(
                    "snapshot {} differs from this run:",
                    file.display()
                ));
                printer.message(diff.trim_end_matches('\n'));
            }
            printer.message(&match proposed {
                Some(p) => format!(
                    "hint: the new table is in {}; `{} --accept` keeps it, `--reject` drops it",
                    p.display(),
                    crate::cassettes::review::review_command_for(p)
                ),
                None => "hint: under CI nothing is written; run it locally and `harness review` \
                         the result"
                    .to_owned(),
            });
        }
    }
}

fn internal(printer: &Printer, message: &str) -> ExitCode {
    printer.error(message);
    ExitCode::from(exit::INTERNAL)
}
