//! What kind of thing a replayed request differs in from its recording, as `runs.csv`'s
//! `divergence_kind` and the divergence reports name it.

use serde::{Deserialize, Serialize};

/// What kind of thing differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DivergenceKind {
    /// The request line or a header: method, path, `anthropic-beta`, ...; also a body that is
    /// not an object, or a difference no other kind explains.
    Request,
    /// A request parameter: model, max_tokens, thinking / reasoning, temperature, stream
    /// options, prompt-caching markers.
    Params,
    /// The system (or developer) prompt.
    SystemPrompt,
    /// The tool definitions: a tool added or removed, its description, a parameter, the order.
    Tools,
    /// The task prompt (turn 0) or a later user message.
    UserPrompt,
    /// A model turn as sent back in the history: its text, thinking or tool calls.
    AssistantHistory,
    /// The result of a tool call (or the images attached to the results of a turn).
    ToolResult,
    /// The run made more requests than the cassette recorded.
    ExtraRequest,
    /// The run ended with recorded interactions unused.
    MissingRequests,
}

impl DivergenceKind {
    /// Every kind, in the order the reports list them.
    pub const ALL: [DivergenceKind; 9] = [
        DivergenceKind::Request,
        DivergenceKind::Params,
        DivergenceKind::SystemPrompt,
        DivergenceKind::Tools,
        DivergenceKind::UserPrompt,
        DivergenceKind::AssistantHistory,
        DivergenceKind::ToolResult,
        DivergenceKind::ExtraRequest,
        DivergenceKind::MissingRequests,
    ];

    /// The name used in reports and `runs.csv` (`tool_result`).
    pub fn as_str(self) -> &'static str {
        match self {
            DivergenceKind::Request => "request",
            DivergenceKind::Params => "params",
            DivergenceKind::SystemPrompt => "system_prompt",
            DivergenceKind::Tools => "tools",
            DivergenceKind::UserPrompt => "user_prompt",
            DivergenceKind::AssistantHistory => "assistant_history",
            DivergenceKind::ToolResult => "tool_result",
            DivergenceKind::ExtraRequest => "extra_request",
            DivergenceKind::MissingRequests => "missing_requests",
        }
    }

    /// The kind named `name` (the inverse of [`DivergenceKind::as_str`]).
    pub fn from_name(name: &str) -> Option<DivergenceKind> {
        DivergenceKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

impl std::fmt::Display for DivergenceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_serialise_as_the_reports_spell_them() {
        for kind in DivergenceKind::ALL {
            assert_eq!(DivergenceKind::from_name(kind.as_str()), Some(kind));
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
        }
        assert_eq!(DivergenceKind::from_name("nope"), None);
    }
}
