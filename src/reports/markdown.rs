//! `summary.md`: a deterministic markdown summary (no timings, timestamps or temporary paths), fit
//! for snapshot tests and a CI job summary.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::scoring::{Outcome, RunRecord};

use super::{fmt_cost, fmt_ratio, summarise};

/// Escapes a table cell: `|` and newlines would break the row.
pub fn cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\r', '\n'], " ")
}

fn table(out: &mut String, header: &[&str], rows: &[Vec<String>]) {
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(
        out,
        "|{}|",
        header.iter().map(|_| "---").collect::<Vec<_>>().join("|")
    );
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
}

fn percent(x: Option<f64>) -> String {
    x.map(|x| format!("{:.1}%", x * 100.0))
        .unwrap_or_else(|| "–".to_owned())
}

/// `summary.md` for records already in report order.
pub fn summary_md(records: &[&RunRecord]) -> String {
    let mut out = String::new();
    let summaries = summarise(records);
    let tasks: BTreeSet<&str> = records.iter().map(|r| r.task_id.as_str()).collect();
    let count = |o: Outcome| records.iter().filter(|r| r.outcome == o).count();
    let _ = writeln!(out, "# Harness results\n");
    let _ = writeln!(
        out,
        "{} run{} of {} task{} with {} provider/model pair{}: {} passed, {} failed, {} diverged, {} errored, {} limit reached.\n",
        records.len(),
        if records.len() == 1 { "" } else { "s" },
        tasks.len(),
        if tasks.len() == 1 { "" } else { "s" },
        summaries.len(),
        if summaries.len() == 1 { "" } else { "s" },
        count(Outcome::Passed),
        count(Outcome::Failed),
        count(Outcome::Diverged),
        count(Outcome::Error),
        count(Outcome::LimitReached),
    );

    let _ = writeln!(out, "## By provider and model\n");
    let rows: Vec<Vec<String>> = summaries
        .iter()
        .map(|s| {
            vec![
                s.provider.clone(),
                s.model.clone(),
                s.runs.to_string(),
                s.count(Outcome::Passed).to_string(),
                s.count(Outcome::Failed).to_string(),
                s.count(Outcome::Diverged).to_string(),
                s.count(Outcome::Error).to_string(),
                s.count(Outcome::LimitReached).to_string(),
                percent(s.pass_rate()),
                s.mean_turns()
                    .map(|x| format!("{x:.1}"))
                    .unwrap_or_default(),
                s.edit_calls.to_string(),
                percent(s.edit_failure_rate()),
                s.input_tokens.to_string(),
                s.output_tokens.to_string(),
                s.cache_read_tokens.to_string(),
                s.cache_write_tokens.to_string(),
                s.cost
                    .map(|c| format!("${}", fmt_cost(Some(c))))
                    .unwrap_or_else(|| "–".to_owned()),
            ]
        })
        .collect();
    table(
        &mut out,
        &[
            "provider",
            "model",
            "runs",
            "passed",
            "failed",
            "diverged",
            "error",
            "limit",
            "pass rate",
            "mean turns",
            "edit calls",
            "edit failure rate",
            "input tokens",
            "output tokens",
            "cache read",
            "cache write",
            "cost",
        ],
        &rows,
    );

    let _ = writeln!(out, "\n## By task\n");
    let rows: Vec<Vec<String>> = records
        .iter()
        .map(|r| {
            vec![
                r.task_id.clone(),
                format!("{}/{}", r.provider, r.model),
                r.epoch.to_string(),
                r.outcome.name().to_owned(),
                format!("{}/{}", r.checks_passed, r.checks_total),
                r.turns.to_string(),
                format!(
                    "{}/{}",
                    r.edits.calls - r.edits.calls_failed,
                    r.edits.calls_failed
                ),
                r.reason.clone(),
            ]
        })
        .collect();
    table(
        &mut out,
        &[
            "task",
            "provider/model",
            "epoch",
            "outcome",
            "checks",
            "turns",
            "edits ok/failed",
            "reason",
        ],
        &rows,
    );

    let _ = writeln!(out, "\n## Edit outcomes\n");
    let rows: Vec<Vec<String>> = summaries
        .iter()
        .map(|s| {
            vec![
                format!("{}/{}", s.provider, s.model),
                s.edit_calls.to_string(),
                s.edit_calls_exact.to_string(),
                s.edit_calls_fuzzy.to_string(),
                s.edit_calls_failed.to_string(),
                s.edits_exact.to_string(),
                s.edits_fuzzy.to_string(),
                fmt_ratio(s.edit_failure_rate()),
            ]
        })
        .collect();
    table(
        &mut out,
        &[
            "provider/model",
            "edit calls",
            "applied exactly",
            "applied fuzzily",
            "failed",
            "edits located exactly",
            "edits located fuzzily",
            "failure rate",
        ],
        &rows,
    );
    let failures: Vec<Vec<String>> = summaries
        .iter()
        .flat_map(|s| {
            s.edit_failures.iter().map(move |(kind, n)| {
                vec![
                    format!("{}/{}", s.provider, s.model),
                    kind.clone(),
                    n.to_string(),
                ]
            })
        })
        .collect();
    if failures.is_empty() {
        let _ = writeln!(out, "\nNo edit call failed.");
    } else {
        let _ = writeln!(out, "\n### Edit failures by kind\n");
        table(&mut out, &["provider/model", "kind", "calls"], &failures);
    }
    out
}
