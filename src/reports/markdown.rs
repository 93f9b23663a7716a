//! `summary.md`: a deterministic markdown summary (no timings, timestamps or temporary paths), fit
//! for snapshot tests and a CI job summary.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::record::{Outcome, RunRecord};

use super::cells::{checks_cell, edits_cell, outcome_label, table};
use super::paired::{self, Arm, ArmRun};
use super::summary::{
    CostTotal, UNKNOWN, any_attempts, any_epochs, dollars, edit_failure_label, first_attempt_label,
    fmt_ratio, last_attempt_header, pass_at_k_label, pass_hat_k_label, pass_rate_label, percent,
    percent_interval, summarise, summarise_by_tag, summary_counts,
};

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// ` N replays drifted from their cassettes (M outcomes changed).` when any did, else empty.
fn drift_sentence(records: &[&RunRecord]) -> String {
    let drifted = records.iter().filter(|r| r.is_drifted()).count();
    if drifted == 0 {
        return String::new();
    }
    let changed = records
        .iter()
        .filter(|r| r.outcome_change == Some(crate::record::OutcomeChange::Changed))
        .count();
    format!(
        " {} drifted from {} cassette{} ({} outcome{} changed).",
        plural(drifted, "replay"),
        if drifted == 1 { "its" } else { "their" },
        if drifted == 1 { "" } else { "s" },
        changed,
        if changed == 1 { "" } else { "s" }
    )
}

/// `summary.md` for records already in report order.
/// `## By tag`: for each tag, each arm's pass rates (at attempt 1 when a task gives several)
/// with intervals, and its edit-failure rate: the per-language table of an imported suite.
fn by_tag_section(out: &mut String, records: &[&RunRecord], attempts: bool) {
    let by_tag = summarise_by_tag(records);
    if by_tag.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## By tag\n");
    let rows: Vec<Vec<String>> = by_tag
        .iter()
        .flat_map(|(tag, summaries)| {
            summaries.iter().map(move |s| {
                let mut row = vec![
                    tag.clone(),
                    format!("{}/{}", s.provider, s.model_label()),
                    s.runs.to_string(),
                ];
                if attempts {
                    row.extend([
                        first_attempt_label(s),
                        percent_interval(s.first_attempt_interval()),
                    ]);
                }
                row.extend([
                    pass_rate_label(s),
                    percent_interval(s.pass_rate_interval()),
                    edit_failure_label(s),
                ]);
                row
            })
        })
        .collect();
    let mut header = vec!["tag", "provider/model", "runs"];
    if attempts {
        header.extend(["pass rate (attempt 1)", "95% CI (attempt 1)"]);
    }
    header.extend(["pass rate", "95% CI", "edit failure rate"]);
    table(out, &header, &rows);
    let _ = writeln!(
        out,
        "\nA run counts under each tag of its task; the rates are counted as above."
    );
}

pub fn summary_md(records: &[&RunRecord]) -> String {
    let mut out = String::new();
    let summaries = summarise(records);
    let tasks: BTreeSet<&str> = records.iter().map(|r| r.task_id.as_str()).collect();
    let count = |o: Outcome| records.iter().filter(|r| r.outcome == o).count();
    let infra = records
        .iter()
        .filter(|r| r.is_infrastructure_error())
        .count();
    let retries: u64 = records.iter().map(|r| u64::from(r.retries)).sum();
    let _ = writeln!(out, "# Harness results\n");
    let _ = writeln!(
        out,
        "{} of {} with {}: {} passed, {} failed, {} diverged, {} errored ({} infrastructure), {} limit reached, {} skipped; {}.{}\n",
        plural(records.len(), "run"),
        plural(tasks.len(), "task"),
        plural(summaries.len(), "provider/model pair"),
        count(Outcome::Passed),
        count(Outcome::Failed),
        count(Outcome::Diverged),
        count(Outcome::Error),
        infra,
        count(Outcome::LimitReached),
        count(Outcome::Skipped),
        plural(retries as usize, "retried request"),
        drift_sentence(records),
    );

    let _ = writeln!(out, "## By provider and model\n");
    let epochs = any_epochs(&summaries);
    let attempts = any_attempts(&summaries);
    let rows: Vec<Vec<String>> = summaries
        .iter()
        .map(|s| {
            let mut row = summary_counts(s);
            row.extend([
                s.drifted.to_string(),
                s.infra_errors.to_string(),
                s.count(Outcome::Skipped).to_string(),
                pass_rate_label(s),
                percent_interval(s.pass_rate_interval()),
            ]);
            if attempts {
                row.extend([
                    first_attempt_label(s),
                    percent_interval(s.first_attempt_interval()),
                ]);
            }
            if epochs {
                row.push(percent(s.pass_rate_se()));
            }
            row.extend([
                percent(s.pass_at_1()),
                pass_at_k_label(s),
                pass_hat_k_label(s),
                s.retries.to_string(),
                dollars(s.cost, 6),
            ]);
            row
        })
        .collect();
    let mut header = vec![
        "provider",
        "model",
        "runs",
        "passed",
        "failed",
        "diverged",
        "error",
        "limit",
        "drifted",
        "infra errors",
        "skipped",
        "pass rate",
        "95% CI",
    ];
    if attempts {
        header.extend(["pass rate (attempt 1)", "95% CI (attempt 1)"]);
    }
    if epochs {
        header.push("SE (by task)");
    }
    header.extend(["pass@1", "pass@k", "pass^k", "retries", "cost"]);
    table(&mut out, &header, &rows);
    let _ = writeln!(
        out,
        "\nTotal cost: {}.\n\nPass rates are passed runs over the runs that count (n in brackets): infrastructure errors (provider, cassette or setup failures, also counted under `error`), skipped runs, and replays that no longer match their cassette (`diverged`, or `drifted`: run to a verdict with `--on-divergence continue`, also counted under that verdict) are left out. 95% CI: Wilson score interval.{} pass@k: the unbiased estimator per task, averaged over the tasks with at least k runs that count; k is the number of epochs. pass^k: the chance that all k runs of a task pass, C(c,k)/C(n,k), averaged the same way.",
        CostTotal::of(&summaries).display(6),
        if epochs {
            " SE (by task): the standard error of the pass rate clustered by task, since the epochs of a task are not independent."
        } else {
            ""
        }
    );

    if attempts {
        let _ = writeln!(
            out,
            "\nAttempts: a task with `attempts: N` sends the failing checks' output back to the model, up to N attempts; `pass rate` counts the runs that passed by their last attempt ({}), `pass rate (attempt 1)` those that passed at the first.",
            last_attempt_header(&summaries)
        );
    }
    by_tag_section(&mut out, records, attempts);

    let _ = writeln!(out, "\n## Turns and tokens\n");
    let rows: Vec<Vec<String>> = summaries
        .iter()
        .map(|s| {
            vec![
                format!("{}/{}", s.provider, s.model_label()),
                s.mean_turns()
                    .map(|x| format!("{x:.1}"))
                    .unwrap_or_else(|| UNKNOWN.to_owned()),
                s.edit_calls.to_string(),
                edit_failure_label(s),
                s.input_tokens.to_string(),
                s.output_tokens.to_string(),
                s.cache_read_tokens.to_string(),
                s.cache_write_tokens.to_string(),
            ]
        })
        .collect();
    table(
        &mut out,
        &[
            "provider/model",
            "mean turns",
            "edit calls",
            "edit failure rate",
            "input tokens",
            "output tokens",
            "cache read",
            "cache write",
        ],
        &rows,
    );

    let _ = writeln!(out, "\n## By task\n");
    let rows: Vec<Vec<String>> = records
        .iter()
        .map(|r| {
            vec![
                r.task_id.clone(),
                r.arm_label(),
                r.epoch.to_string(),
                outcome_label(r),
                checks_cell(r),
                r.turns.to_string(),
                edits_cell(r),
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
                format!("{}/{}", s.provider, s.model_label()),
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
                    format!("{}/{}", s.provider, s.model_label()),
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
    if summaries.len() > 1 {
        let runs: Vec<ArmRun<'_>> = records.iter().map(|r| (Arm::of_record(r), *r)).collect();
        let cmp = paired::compare_within(&runs);
        let _ = writeln!(out, "\n## Arms compared\n");
        out.push_str(&paired::comparison_md(&cmp, "###", false, &|r, _| {
            Some(r.transcript_path.clone())
        }));
    }
    out
}
