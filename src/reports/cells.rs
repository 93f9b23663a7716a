//! The cells every report shows of a run, spelled once: a markdown-escaped cell and table, a
//! run's checks (`passed/total`), edits (`succeeded/failed`) and outcome label (`error
//! (rate_limited)`, `passed (drifted, held)`).

use std::fmt::Write;

use crate::conversation::Message;
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
    let mut label = match (&r.outcome, &r.error_kind) {
        (Outcome::Error, Some(kind)) => format!("error ({kind})"),
        (outcome, _) => outcome.name().to_owned(),
    };
    // A task of several attempts: at which one it passed, or how many it failed.
    match (r.outcome, r.attempt_outcomes.len()) {
        (_, 0) => {}
        (Outcome::Passed, _) => {
            if let Some(n) = r.passed_at_attempt() {
                label.push_str(&format!(" (attempt {n})"));
            }
        }
        (Outcome::Failed, 1) => label.push_str(" (1 attempt)"),
        (Outcome::Failed, n) => label.push_str(&format!(" ({n} attempts)")),
        _ => {}
    }
    match (r.is_drifted(), r.outcome_change) {
        (true, Some(change)) => format!("{label} (drifted, {})", change.name()),
        (true, None) => format!("{label} (drifted)"),
        (false, _) => label,
    }
}

/// What a user message of a run is: one of the task's prompts, or the failed checks' output
/// that started a further attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserTurn {
    /// Prompt `index` (1-based) of `of`.
    Prompt { index: usize, of: usize },
    /// The message that started attempt `n` (2 and on).
    Attempt(u32),
}

impl UserTurn {
    /// `User`, `User · prompt 2 of 3`, `User · attempt 2 (the checks that failed)`.
    pub fn label(self) -> String {
        match self {
            UserTurn::Prompt { of: 1, .. } => "User".to_owned(),
            UserTurn::Prompt { index, of } => format!("User · prompt {index} of {of}"),
            UserTurn::Attempt(n) => format!("User · attempt {n} (the checks that failed)"),
        }
    }
}

/// One [`UserTurn`] per user message of `messages`, in order: the task's prompts come first, and
/// each attempt after the first began with one more user message.
pub fn user_turns(r: &RunRecord, messages: &[Message]) -> Vec<UserTurn> {
    let users = messages
        .iter()
        .filter(|m| matches!(m, Message::User { .. }))
        .count();
    let feedback = (r.attempts_made() as usize - 1).min(users);
    let prompts = users - feedback;
    (0..users)
        .map(|i| {
            if i < prompts {
                UserTurn::Prompt {
                    index: i + 1,
                    of: prompts,
                }
            } else {
                UserTurn::Attempt((i - prompts + 2) as u32)
            }
        })
        .collect()
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
