//! The types of divergence: what kind of thing differs ([`DivergenceKind`]), how ([`Change`]),
//! and one difference located in conversation terms ([`Difference`]); and the replay setup a
//! cassette was recorded with ([`ReplaySetup`]), named up front when a replay differs from it.
//!
//! Depends on serde and `record` (where [`DivergenceKind`] lives, as runs record it) only.

use std::fmt::Write as _;

use serde::Serialize;

pub use crate::record::DivergenceKind;

/// How the part differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// In both, with another content.
    Changed,
    /// Only in the request built now.
    Added,
    /// Only in the recorded request.
    Removed,
}

/// One difference, located in conversation terms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    pub kind: DivergenceKind,
    pub change: Change,
    /// 0-based index of the request where it first appeared.
    pub request: usize,
    /// The conversation turn it belongs to (0: system prompt, tools, task prompt, parameters of
    /// the first request).
    pub turn: u32,
    /// What differs, short: `result of edit#2`, `tool edit: description`, `max_tokens`.
    pub subject: String,
    /// Where, in full: `result of edit#2 (call toolu_01, edit)`.
    pub location: String,
    /// A short addition to the summary: `32000 → 16000`, `now an error`.
    pub detail: Option<String>,
    /// The text of the changed part in the recording (`None`: not there).
    pub recorded: Option<String>,
    /// The text of the changed part now (`None`: not there).
    pub now: Option<String>,
    /// A unified diff of the two texts (capped; empty when neither has text).
    pub diff: String,
}

impl Difference {
    /// One phrase: `turn 3: result of edit#2 changed`, `tool edit: description changed`.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        if self.turn > 0 {
            let _ = write!(out, "turn {}: ", self.turn);
        }
        out.push_str(&self.subject);
        match self.kind {
            DivergenceKind::ExtraRequest | DivergenceKind::MissingRequests => {}
            _ => out.push_str(match self.change {
                Change::Changed => " changed",
                Change::Added => " added",
                Change::Removed => " removed",
            }),
        }
        if let Some(detail) = &self.detail {
            let _ = write!(out, " ({detail})");
        }
        out
    }
}

/// Tool profile, edit strategy and sandbox tier a cassette was recorded with, or a replay runs
/// with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplaySetup<'a> {
    pub tool_profile: &'a str,
    pub edit_strategy: &'a str,
    /// The sandbox tier (`isolated`, `workspace`, `none`); `None` when not known (a cassette
    /// recorded before tiers were recorded), which is never reported as a difference.
    pub sandbox: Option<&'a str>,
}

/// Says up front when a replay runs under another tool profile, edit strategy or sandbox tier
/// than the cassette's header records (`None` when they agree).
pub fn setup_mismatch(recorded: ReplaySetup<'_>, now: ReplaySetup<'_>) -> Option<String> {
    let mut parts = Vec::new();
    if !crate::tools::profile::ToolProfile::same(recorded.tool_profile, now.tool_profile) {
        parts.push(format!(
            "tool profile `{}` (recorded with `{}`)",
            now.tool_profile, recorded.tool_profile
        ));
    }
    if recorded.edit_strategy != now.edit_strategy {
        parts.push(format!(
            "edit strategy `{}` (recorded with `{}`)",
            now.edit_strategy, recorded.edit_strategy
        ));
    }
    if let (Some(then), Some(tier)) = (recorded.sandbox, now.sandbox) {
        if then != tier {
            parts.push(format!("sandbox tier `{tier}` (recorded with `{then}`)"));
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "this replay runs with {}; tool definitions and tool results may differ from the recording for that reason alone",
        parts.join(" and ")
    ))
}

/// The turn a request opens: request `i` (0-based) is sent before model turn `i + 1`, and its
/// new tool results belong to turn `i`.
pub(super) fn turn_of_request(index: usize) -> u32 {
    u32::try_from(index).unwrap_or(u32::MAX)
}
