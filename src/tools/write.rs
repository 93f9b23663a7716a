//! `write`: Pi's write tool (spec section 2).
//!
//! TEMPORARY placeholder from branch tools-bash so the registry compiles; the real tool replaces
//! this whole file when its branch is merged.

use async_trait::async_trait;
use serde_json::Value;

use super::definitions::pi_definition;
use super::{Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};

/// Placeholder for Pi's `write` tool.
pub struct WriteTool {
    definition: ToolDefinition,
}

impl WriteTool {
    /// The tool with Pi's definition.
    pub fn new() -> Self {
        WriteTool {
            definition: pi_definition("write"),
        }
    }
}

impl Default for WriteTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Tool for WriteTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(&self, _args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        todo!("write tool: not merged yet")
    }
}
