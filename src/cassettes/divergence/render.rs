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
/// Per tool: how many calls the run made and how many of their results differ from the
/// recording, tools in name order. A result that differs is counted once, at the request where
/// it first appeared.
pub fn drift_by_tool(
    diffs: &[Difference],
    calls: &std::collections::BTreeMap<String, usize>,
) -> Vec<(String, usize, usize)> {
    let mut differ: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for d in diffs {
        if d.kind != DivergenceKind::ToolResult {
            continue;
        }
        let tool = d
            .subject
            .strip_prefix("result of ")
            .and_then(|rest| rest.split('#').next())
            .unwrap_or("?");
        *differ.entry(tool.to_owned()).or_default() += 1;
    }
    let mut tools: Vec<&String> = calls.keys().chain(differ.keys()).collect();
    tools.sort();
    tools.dedup();
    tools
        .into_iter()
        .map(|t| {
            (
                t.clone(),
                calls.get(t).copied().unwrap_or(0),
                differ.get(t).copied().unwrap_or(0),
            )
        })
        .collect()
}

/// [`drift_by_tool`] in words: `read 1/3, edit 2/5` (results that differ / calls), only the
/// tools with a difference; `None` when no result differs.
pub fn drift_line(
    diffs: &[Difference],
    calls: &std::collections::BTreeMap<String, usize>,
) -> Option<String> {
    let parts: Vec<String> = drift_by_tool(diffs, calls)
        .into_iter()
        .filter(|(_, _, differ)| *differ > 0)
        .map(|(tool, calls, differ)| format!("{tool} {differ}/{calls}"))
        .collect();
    (!parts.is_empty()).then(|| format!("tool results that differ: {}", parts.join(", ")))
}

/// The divergence report without the drift per tool (see [`markdown_with_calls`]).
pub fn markdown(title: &str, diffs: &[Difference]) -> String {
    markdown_with_calls(title, diffs, &Default::default())
}

/// The divergence report: every difference in a table, then each with its diff; with the
/// run's calls per tool, a table of how many results of each tool differ, so that edit and
/// read drift stand apart from commands whose output depends on the machine.
pub fn markdown_with_calls(
    title: &str,
    diffs: &[Difference],
    calls: &std::collections::BTreeMap<String, usize>,
) -> String {
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
    let drift = drift_by_tool(diffs, calls);
    if !calls.is_empty() {
        out.push_str("Drift per tool (calls made now, results that differ from the recording):\n\n| tool | calls | differ |\n|---|---|---|\n");
        for (tool, n, differ) in &drift {
            let _ = writeln!(out, "| {tool} | {n} | {differ} |");
        }
        out.push('\n');
    }
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
