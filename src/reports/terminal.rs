//! The summary printed at the end of `harness run`: one aligned row per run, one per provider and
//! model (pass rate with its n and 95% interval, pass@k and pass^k, infrastructure errors, skipped runs, retries,
//! cost) and a totals line. Colour only when the caller asks (it decides from the terminal and
//! `NO_COLOR`).

use std::time::Duration;

use crate::record::{Outcome, RunRecord};

use super::cells::{checks_cell, edits_cell, outcome_label};
use super::paired::{self, Comparison, Flip};
use super::summary::{
    CostTotal, ModelSummary, any_attempts, dollars, edit_failure_label, first_attempt_label,
    last_attempt_header, pass_at_k_label, pass_hat_k_label, pass_rate_label, percent,
    percent_interval, sorted, summarise, summarise_by_tag,
};

/// At most this many tags get their rows in the terminal's pass-rate table (an imported suite's
/// languages do); with more, `summary.md` has them.
const TERMINAL_TAGS: usize = 12;

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";

fn colour(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Passed => "\x1b[32m",
        Outcome::Failed | Outcome::Error => "\x1b[31m",
        Outcome::Diverged | Outcome::LimitReached => "\x1b[33m",
        Outcome::Skipped => "\x1b[2m",
    }
}

/// `1234` → `1234`, `12345` → `12.3k`, `1234567` → `1.23M`.
pub fn short_count(n: u64) -> String {
    if n < 10_000 {
        n.to_string()
    } else if n < 1_000_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        format!("{:.2}M", n as f64 / 1_000_000.0)
    }
}

/// `3.2s`, `2m05s`.
pub fn short_duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 60.0 {
        format!("{secs:.1}s")
    } else {
        let whole = d.as_secs();
        format!("{}m{:02}s", whole / 60, whole % 60)
    }
}

/// The aligned summary table of `records` plus a totals line; ANSI colours when `color`.
pub fn render_terminal_summary(records: &[RunRecord], color: bool) -> String {
    let records = sorted(records);
    let header = [
        "task",
        "provider/model",
        "outcome",
        "checks",
        "turns",
        "edits ok/failed",
        "tokens",
        "time",
    ];
    let rows: Vec<(Outcome, [String; 8])> = records
        .iter()
        .map(|r| {
            let task = if r.epoch > 1 {
                format!("{} #{}", r.task_id, r.epoch)
            } else {
                r.task_id.clone()
            };
            (
                r.outcome,
                [
                    task,
                    r.arm_label(),
                    outcome_label(r),
                    checks_cell(r),
                    r.turns.to_string(),
                    edits_cell(r),
                    short_count(r.tokens.total),
                    short_duration(r.wall_time),
                ],
            )
        })
        .collect();
    let right = [false, false, false, true, true, true, true, true];
    let mut out = String::new();
    aligned(&mut out, &header, &right, &rows, 2, color);
    let summaries = summarise(&records);
    let header = [
        "provider/model",
        "pass rate",
        "95% CI",
        "pass@1",
        "pass@k",
        "pass^k",
        "infra errors",
        "skipped",
        "drifted",
        "retries",
        "cost",
    ];
    let rows: Vec<(Outcome, [String; 11])> = summaries
        .iter()
        .map(|s| (Outcome::Passed, model_row(s)))
        .collect();
    out.push('\n');
    let right = [
        false, true, false, true, true, true, true, true, true, true, true,
    ];
    aligned(&mut out, &header, &right, &rows, usize::MAX, color);
    attempts_and_tags(&mut out, &records, &summaries, color);
    let count = |o: Outcome| records.iter().filter(|r| r.outcome == o).count();
    let tokens: u64 = records.iter().map(|r| r.tokens.total).sum();
    let wall: Duration = records.iter().map(|r| r.wall_time).sum();
    let retries: u64 = records.iter().map(|r| u64::from(r.retries)).sum();
    let infra = records
        .iter()
        .filter(|r| r.is_infrastructure_error())
        .count();
    let mut parts = vec![format!("{} passed", count(Outcome::Passed))];
    for outcome in [
        Outcome::Failed,
        Outcome::Diverged,
        Outcome::Error,
        Outcome::LimitReached,
        Outcome::Skipped,
    ] {
        let n = count(outcome);
        if n > 0 {
            parts.push(format!("{n} {}", outcome.name().replace('_', " ")));
        }
        if outcome == Outcome::Error && infra > 0 {
            let last = parts.last_mut().expect("an error count was pushed");
            last.push_str(&format!(" ({infra} infrastructure)"));
        }
    }
    let drifted = records.iter().filter(|r| r.is_drifted()).count();
    if drifted > 0 {
        let changed = records
            .iter()
            .filter(|r| r.outcome_change == Some(crate::record::OutcomeChange::Changed))
            .count();
        parts.push(format!("{drifted} drifted ({changed} outcomes changed)"));
    }
    let mut totals = format!(
        "{} run{}: {}; {} tokens",
        records.len(),
        if records.len() == 1 { "" } else { "s" },
        parts.join(", "),
        short_count(tokens)
    );
    totals.push_str(&format!(
        ", cost {}; {retries} retr{}",
        CostTotal::of(&summaries).display(4),
        if retries == 1 { "y" } else { "ies" }
    ));
    totals.push_str(&format!("; {} run time", short_duration(wall)));
    if color {
        out.push_str(&format!("{BOLD}{totals}{RESET}\n"));
    } else {
        out.push_str(&totals);
        out.push('\n');
    }
    out
}

/// The terminal view of a comparison: the statistics per pair of arms (a significant drop in
/// red when `color`), then every flip.
pub fn render_comparison(cmp: &Comparison<'_>, alpha: f64, color: bool) -> String {
    let mut header = [""; 14];
    for (h, name) in header
        .iter_mut()
        .zip(paired::STATS_HEADER.iter().chain([&paired::TIME_HEADER]))
    {
        *h = name;
    }
    let rows: Vec<(Outcome, [String; 14])> = cmp
        .rows()
        .map(|a| {
            let outcome = if a.stats.significant_regression(alpha) {
                Outcome::Failed
            } else {
                Outcome::Passed
            };
            let cells: [String; 14] = paired::stats_cells(a, cmp.with_strategy, true)
                .try_into()
                .expect("14 cells with the time column");
            (outcome, cells)
        })
        .collect();
    let mut right = [true; 14];
    right[0] = false;
    right[1] = false;
    let mut out = String::new();
    aligned(&mut out, &header, &right, &rows, 5, color);
    let first: Vec<(Outcome, [String; 10])> = cmp
        .rows()
        .filter_map(|a| {
            let cells = paired::first_attempt_cells(a, cmp.with_strategy)?;
            let regression = a
                .stats
                .first_attempt
                .as_ref()
                .is_some_and(|s| s.significant_regression(alpha));
            let outcome = if regression {
                Outcome::Failed
            } else {
                Outcome::Passed
            };
            Some((outcome, cells.try_into().expect("10 cells")))
        })
        .collect();
    if !first.is_empty() {
        out.push_str("\nat attempt 1:\n");
        let mut right = [true; 10];
        right[0] = false;
        right[1] = false;
        aligned(
            &mut out,
            &paired::FIRST_ATTEMPT_HEADER,
            &right,
            &first,
            5,
            color,
        );
    }
    let flips: Vec<_> = cmp.flips().collect();
    out.push_str(&format!("\n{} run(s) flipped\n", flips.len()));
    for (arm, flip, pair) in flips {
        let (base, new) = arm.label(cmp.with_strategy);
        let arrow = flip.arrow(pair);
        let arrow = match (color, flip) {
            (true, Flip::Regressed) => format!("{}{arrow}{RESET}", colour(Outcome::Failed)),
            (true, Flip::Fixed) => format!("{}{arrow}{RESET}", colour(Outcome::Passed)),
            (false, _) => arrow,
        };
        out.push_str(&format!(
            "  {} #{}  {base} → {new}  {arrow} — {}\n",
            pair.base.task_id, pair.base.epoch, pair.new.reason
        ));
    }
    out
}

/// The leaderboard's view, when there is one to show: per arm and per tag (each tag of at most
/// [`TERMINAL_TAGS`]), the pass rate at attempt 1 and at the last attempt when a task gives
/// several, with intervals, and the edit-failure rate.
fn attempts_and_tags(
    out: &mut String,
    records: &[&RunRecord],
    summaries: &[ModelSummary],
    color: bool,
) {
    let attempts = any_attempts(summaries);
    let by_tag = summarise_by_tag(records);
    let tags_shown = by_tag.len() <= TERMINAL_TAGS;
    if !attempts && (by_tag.is_empty() || !tags_shown) {
        if !by_tag.is_empty() {
            out.push_str(&format!(
                "\npass rates per tag ({} tags): see summary.md\n",
                by_tag.len()
            ));
        }
        return;
    }
    let mut arms: Vec<(&ModelSummary, &str)> = summaries.iter().map(|s| (s, "(all)")).collect();
    if tags_shown {
        for (tag, tagged) in &by_tag {
            arms.extend(tagged.iter().map(|s| (s, tag.as_str())));
        }
    }
    out.push('\n');
    if attempts {
        let last = last_attempt_header(summaries);
        let header = [
            "provider/model",
            "tag",
            "pass rate (attempt 1)",
            "95% CI",
            last.as_str(),
            "95% CI",
            "edit failures",
        ];
        let rows: Vec<(Outcome, [String; 7])> = arms
            .iter()
            .map(|(s, tag)| {
                let [arm, tag, rate, ci, edits] = tag_cells(s, tag);
                let first = first_attempt_label(s);
                let first_ci = percent_interval(s.first_attempt_interval());
                (
                    Outcome::Passed,
                    [arm, tag, first, first_ci, rate, ci, edits],
                )
            })
            .collect();
        let right = [false, false, true, false, true, false, true];
        aligned(out, &header, &right, &rows, usize::MAX, color);
    } else {
        let header = [
            "provider/model",
            "tag",
            "pass rate",
            "95% CI",
            "edit failures",
        ];
        let rows: Vec<(Outcome, [String; 5])> = arms
            .iter()
            .map(|(s, tag)| (Outcome::Passed, tag_cells(s, tag)))
            .collect();
        let right = [false, false, true, false, true];
        aligned(out, &header, &right, &rows, usize::MAX, color);
    }
    if !tags_shown {
        out.push_str(&format!(
            "pass rates per tag ({} tags): see summary.md\n",
            by_tag.len()
        ));
    }
}

/// An arm's row under `tag`: arm, tag, pass rate (at the last attempt), its interval, edit
/// failures.
fn tag_cells(s: &ModelSummary, tag: &str) -> [String; 5] {
    [
        format!("{}/{}", s.provider, s.model_label()),
        tag.to_owned(),
        pass_rate_label(s),
        percent_interval(s.pass_rate_interval()),
        edit_failure_label(s),
    ]
}

fn model_row(s: &ModelSummary) -> [String; 11] {
    [
        format!("{}/{}", s.provider, s.model_label()),
        pass_rate_label(s),
        percent_interval(s.pass_rate_interval()),
        percent(s.pass_at_1()),
        pass_at_k_label(s),
        pass_hat_k_label(s),
        s.infra_errors.to_string(),
        s.count(Outcome::Skipped).to_string(),
        s.drifted.to_string(),
        s.retries.to_string(),
        dollars(s.cost, 4),
    ]
}

/// Appends `header` and `rows` as aligned columns (`right[i]`: right-aligned), two spaces apart.
/// With `color`, the header is bold and column `coloured` of each row takes its outcome's colour.
fn aligned<const N: usize>(
    out: &mut String,
    header: &[&str; N],
    right: &[bool; N],
    rows: &[(Outcome, [String; N])],
    coloured: usize,
    color: bool,
) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for (_, row) in rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let pad = |text: &str, i: usize| {
        let fill = " ".repeat(widths[i] - text.chars().count());
        if right[i] {
            format!("{fill}{text}")
        } else {
            format!("{text}{fill}")
        }
    };
    let head: Vec<String> = header.iter().enumerate().map(|(i, h)| pad(h, i)).collect();
    let head = head.join("  ");
    if color {
        out.push_str(&format!("{BOLD}{}{RESET}\n", head.trim_end()));
    } else {
        out.push_str(head.trim_end());
        out.push('\n');
    }
    for (outcome, row) in rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let padded = pad(c, i);
                if color && i == coloured {
                    format!("{}{padded}{RESET}", colour(*outcome))
                } else {
                    padded
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
}
