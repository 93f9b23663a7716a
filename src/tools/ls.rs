//! `ls`: Pi's ls tool (spec section 5).
//!
//! TEMPORARY placeholder from branch tools-bash so the registry compiles; the real tool replaces
//! this whole file when its branch is merged.

use async_trait::async_trait;
use serde_json::Value;

use super::definitions::pi_definition;
use super::{Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};

/// Placeholder for Pi's `ls` tool.
pub struct LsTool {
    definition: ToolDefinition,
}

impl LsTool {
    /// The tool with Pi's definition.
    pub fn new() -> Self {
        LsTool {
            definition: pi_definition("ls"),
        }
    }
}

impl Default for LsTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Tool for LsTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(&self, _args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        todo!("ls tool: not merged yet")
    }
}
