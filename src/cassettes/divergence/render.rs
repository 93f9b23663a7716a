//! Rendering differences: the one-line summary for the terminal, the `runs.csv` columns, and
//! `divergence.md` (a table of every difference, then each with its diff).
//!
//! Depends on [`super::types`] and [`crate::markdown`] only.

use std::fmt::Write as _;

use serde::Serialize;

use super::types::{Change, Difference, DivergenceKind};

/// How many differences the one-line summary names before "and N more".
pub const SUMMARY_MAX: usize = 4;

/// One line for the terminal: `turn 3: result of edit#2 changed; turn 5: result of bash#4
/// changed`, after [`SUMMARY_MAX`] entries `; and N more`. Empty when there is no difference.
pub fn summary_line(diffs: &[Difference]) -> String {
    let mut parts: Vec<String> = diffs
        .iter()
        .take(SUMMARY_MAX)
        .map(Difference::summary)
        .collect();
    if diffs.len() > SUMMARY_MAX {
        parts.push(format!("and {} more", diffs.len() - SUMMARY_MAX));
    }
    parts.join("; ")
}

/// The kind of the first difference (`runs.csv` column `divergence_kind`).
pub fn first_kind(diffs: &[Difference]) -> Option<DivergenceKind> {
    diffs.first().map(|d| d.kind)
}

/// The turn of the first difference (`runs.csv` column `divergence_turn`).
pub fn first_turn(diffs: &[Difference]) -> Option<u32> {
    diffs.first().map(|d| d.turn)
}

/// The three `runs.csv` columns at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct DivergenceColumns {
    /// `divergence_kind`: the first difference's kind.
    pub kind: Option<DivergenceKind>,
    /// `divergence_turn`: the first difference's turn.
    pub turn: Option<u32>,
    /// `divergences`: how many.
    pub count: usize,
}

/// The `runs.csv` columns of a run's differences.
pub fn csv_columns(diffs: &[Difference]) -> DivergenceColumns {
    DivergenceColumns {
        kind: first_kind(diffs),
        turn: first_turn(diffs),
        count: diffs.len(),
    }
}

/// `divergence.md`: a table of every difference, then each with its diff. `title` names the
/// run (task, provider and model, epoch).
pub fn markdown(title: &str, diffs: &[Difference]) -> String {
    let mut out = format!("# Divergence: {title}\n\n");
    if diffs.is_empty() {
        out.push_str("Every request matched the cassette.\n");
        return out;
    }
    let n = diffs.len();
    let _ = writeln!(
        out,
        "{n} difference{} between the recorded requests and the requests built now, each at the request where it first appeared.\n",
        if n == 1 { "" } else { "s" }
    );
    out.push_str("| # | turn | request | kind | where | change |\n|---|---|---|---|---|---|\n");
    for (i, d) in diffs.iter().enumerate() {
        let _ = writeln!(
            out,
            "| {} | {} | {} | `{}` | {} | {} |",
            i + 1,
            d.turn,
            d.request + 1,
            d.kind,
            escape_cell(&d.location),
            match d.change {
                Change::Changed => "changed",
                Change::Added => "added",
                Change::Removed => "removed",
            }
        );
    }
    for (i, d) in diffs.iter().enumerate() {
        let _ = write!(out, "\n## {}. {}\n\n", i + 1, d.summary());
        let _ = writeln!(
            out,
            "- where: {}\n- kind: `{}`\n- first in request {} (turn {})",
            d.location,
            d.kind,
            d.request + 1,
            d.turn
        );
        if !d.diff.is_empty() {
            out.push('\n');
            out.push_str(&crate::markdown::fenced("diff", &d.diff));
        }
    }
    out
}

fn escape_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}
