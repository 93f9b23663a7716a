//! The cells every report shows of a run, spelled once: a markdown-escaped cell and table, a
//! run's checks (`passed/total`), edits (`succeeded/failed`) and outcome label (`error
//! (rate_limited)`, `passed (drifted, held)`).

use std::fmt::Write;

use crate::record::{Outcome, RunRecord};

/// Escapes a table cell: `|` and newlines would break the row.
pub fn cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\r', '\n'], " ")
}

/// Appends a markdown table; every cell is escaped with [`cell`].
pub(crate) fn table(out: &mut String, header: &[&str], rows: &[Vec<String>]) {
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

/// A run's checks cell: `passed/total`.
pub fn checks_cell(r: &RunRecord) -> String {
    format!("{}/{}", r.checks_passed, r.checks_total)
}

/// A run's edits cell: `succeeded/failed` edit calls.
pub fn edits_cell(r: &RunRecord) -> String {
    format!(
        "{}/{}",
        r.edits.calls - r.edits.calls_failed,
        r.edits.calls_failed
    )
}

/// The outcome as the tables show it: `error (rate_limited)` for an error with a kind.
pub fn outcome_label(r: &RunRecord) -> String {
    let label = match (&r.outcome, &r.error_kind) {
        (Outcome::Error, Some(kind)) => format!("error ({kind})"),
        (outcome, _) => outcome.name().to_owned(),
    };
    match (r.is_drifted(), r.outcome_change) {
        (true, Some(change)) => format!("{label} (drifted, {})", change.name()),
        (true, None) => format!("{label} (drifted)"),
        (false, _) => label,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_cannot_break_its_row() {
        assert_eq!(cell("exit 1 | see log\nnext"), "exit 1 \\| see log next");
        assert_eq!(cell("a\\|b"), "a\\\\\\|b");
        let mut out = String::new();
        table(&mut out, &["a", "b"], &[vec!["x|y".into(), "z".into()]]);
        assert_eq!(out, "| a | b |\n|---|---|\n| x\\|y | z |\n");
    }
}
