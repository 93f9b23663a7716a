//! The summary table printed at the end of `harness run`: one aligned row per run and a totals
//! line. Colour only when the caller asks (it decides from the terminal and `NO_COLOR`).

use std::time::Duration;

use crate::scoring::{Outcome, RunRecord};

use super::sorted;

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";

fn colour(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Passed => "\x1b[32m",
        Outcome::Failed | Outcome::Error => "\x1b[31m",
        Outcome::Diverged | Outcome::LimitReached => "\x1b[33m",
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
                    format!("{}/{}", r.provider, r.model),
                    r.outcome.name().to_owned(),
                    format!("{}/{}", r.checks_passed, r.checks_total),
                    r.turns.to_string(),
                    format!(
                        "{}/{}",
                        r.edits.calls - r.edits.calls_failed,
                        r.edits.calls_failed
                    ),
                    short_count(r.tokens.total),
                    short_duration(r.wall_time),
                ],
            )
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for (_, row) in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    // Text columns left-aligned, numbers right-aligned.
    let right = [false, false, false, true, true, true, true, true];
    let pad = |text: &str, i: usize| {
        let fill = " ".repeat(widths[i] - text.chars().count());
        if right[i] {
            format!("{fill}{text}")
        } else {
            format!("{text}{fill}")
        }
    };
    let mut out = String::new();
    let head: Vec<String> = header.iter().enumerate().map(|(i, h)| pad(h, i)).collect();
    let head = head.join("  ");
    if color {
        out.push_str(&format!("{BOLD}{}{RESET}\n", head.trim_end()));
    } else {
        out.push_str(head.trim_end());
        out.push('\n');
    }
    for (outcome, row) in &rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let padded = pad(c, i);
                if color && i == 2 {
                    format!("{}{padded}{RESET}", colour(*outcome))
                } else {
                    padded
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    let count = |o: Outcome| records.iter().filter(|r| r.outcome == o).count();
    let tokens: u64 = records.iter().map(|r| r.tokens.total).sum();
    let wall: Duration = records.iter().map(|r| r.wall_time).sum();
    let cost: Option<f64> = records
        .iter()
        .filter_map(|r| r.cost)
        .fold(None, |acc, c| Some(acc.unwrap_or(0.0) + c));
    let mut parts = vec![format!("{} passed", count(Outcome::Passed))];
    for outcome in [
        Outcome::Failed,
        Outcome::Diverged,
        Outcome::Error,
        Outcome::LimitReached,
    ] {
        let n = count(outcome);
        if n > 0 {
            parts.push(format!("{n} {}", outcome.name().replace('_', " ")));
        }
    }
    let mut totals = format!(
        "{} run{}: {}; {} tokens",
        records.len(),
        if records.len() == 1 { "" } else { "s" },
        parts.join(", "),
        short_count(tokens)
    );
    if let Some(cost) = cost {
        totals.push_str(&format!(", ${cost:.4}"));
    }
    totals.push_str(&format!("; {} run time", short_duration(wall)));
    if color {
        out.push_str(&format!("{BOLD}{totals}{RESET}\n"));
    } else {
        out.push_str(&totals);
        out.push('\n');
    }
    out
}
