//! `read`: Pi's read tool (spec section 1). TODO: implemented by the tools issue.
//!
//! TEMPORARY placeholder from branch tools-bash so the registry compiles; the real tool replaces
//! this whole file when its branch is merged.

use async_trait::async_trait;
use serde_json::Value;

use super::definitions::pi_definition;
use super::{Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};

/// Placeholder for Pi's `read` tool.
pub struct ReadTool {
    definition: ToolDefinition,
}

impl ReadTool {
    /// The tool with Pi's definition.
    pub fn new() -> Self {
        ReadTool {
            definition: pi_definition("read"),
        }
    }
}

impl Default for ReadTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Tool for ReadTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(&self, _args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        todo!("read tool: not merged yet")
    }
}
