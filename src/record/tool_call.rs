//! One executed tool call as a run file keeps it: the call, Pi's result shape
//! (`{isError, content, details}`) and the harness's edit telemetry, and how long it took.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::edit::EditReport;
use crate::conversation::{Content, ToolCall};

/// A finished tool call, Pi's result shape: `{isError, content, details}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    pub is_error: bool,
    pub content: Vec<Content>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Harness-only telemetry for scoring; not part of Pi's shape.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit: Option<EditReport>,
}

/// One executed tool call, for scoring and transcripts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// 1-based turn (model reply) that asked for it.
    pub turn: u32,
    pub call: ToolCall,
    pub result: ToolResult,
    #[serde(with = "super::duration_ms")]
    pub duration: Duration,
}
