//! Divergence classification (interim): what differs between a replayed request and its
//! recording. Replaced by the conversation-aware classifier.

use serde_json::Value;

use super::compare::{divergence_diff, first_difference};
use super::format::CassetteHeader;
use crate::providers::ApiKind;

/// What kind of difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DivergenceKind {
    Request,
    ExtraRequest,
    MissingRequests,
}

impl DivergenceKind {
    pub fn name(&self) -> &'static str {
        match self {
            DivergenceKind::Request => "request",
            DivergenceKind::ExtraRequest => "extra_request",
            DivergenceKind::MissingRequests => "missing_requests",
        }
    }
}

/// One difference.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub kind: DivergenceKind,
    pub interaction: usize,
    pub turn: u32,
    pub location: String,
    pub diff: String,
}

/// Tracks differences across the requests of one replay.
pub struct DivergenceTracker {
    _api: ApiKind,
}

impl DivergenceTracker {
    pub fn new(api: ApiKind) -> Self {
        DivergenceTracker { _api: api }
    }

    pub fn compare(&mut self, index: usize, recorded: &Value, now: &Value) -> Vec<Difference> {
        let Some(what) = first_difference(recorded, now, "") else {
            return Vec::new();
        };
        let what = what.trim_start_matches('.').to_owned();
        vec![Difference {
            kind: DivergenceKind::Request,
            interaction: index,
            turn: u32::try_from(index.max(1)).unwrap_or(u32::MAX),
            diff: divergence_diff(recorded, now, &what),
            location: what,
        }]
    }

    pub fn extra_request(&mut self, index: usize) -> Vec<Difference> {
        vec![Difference {
            kind: DivergenceKind::ExtraRequest,
            interaction: index,
            turn: u32::try_from(index + 1).unwrap_or(u32::MAX),
            location: format!("request {} has no recording", index + 1),
            diff: String::new(),
        }]
    }

    pub fn missing_requests(&mut self, served: usize, total: usize) -> Vec<Difference> {
        vec![Difference {
            kind: DivergenceKind::MissingRequests,
            interaction: served,
            turn: u32::try_from(served + 1).unwrap_or(u32::MAX),
            location: format!("{} recorded requests never made", total - served),
            diff: String::new(),
        }]
    }
}

/// One line naming every difference.
pub fn summary_line(differences: &[Difference]) -> String {
    differences
        .iter()
        .map(|d| format!("turn {}: {} ({})", d.turn, d.location, d.kind.name()))
        .collect::<Vec<_>>()
        .join("; ")
}

/// `divergence.md`.
pub fn render_markdown(differences: &[Difference]) -> String {
    let mut out = String::from("# Divergence\n\n");
    for d in differences {
        out.push_str(&format!(
            "## turn {}: {} ({})\n\n```diff\n{}\n```\n\n",
            d.turn,
            d.location,
            d.kind.name(),
            d.diff.trim_end()
        ));
    }
    out
}

/// A message when the replay runs with other settings than the recording.
pub fn settings_notice(
    header: &CassetteHeader,
    tool_profile: &str,
    edit_strategy: &str,
) -> Option<String> {
    (header.edit_strategy != edit_strategy || header.tool_profile != tool_profile).then(|| {
        format!(
            "cassette recorded with tool profile `{}` and edit strategy `{}`; replaying with `{tool_profile}` and `{edit_strategy}`",
            header.tool_profile, header.edit_strategy
        )
    })
}
