//! `find`: Pi's find tool (spec section 5), on the `ignore` and `globset` crates instead of fd.
//!
//! TEMPORARY placeholder from branch tools-bash so the registry compiles; the real tool replaces
//! this whole file when its branch is merged.

use async_trait::async_trait;
use serde_json::Value;

use super::definitions::pi_definition;
use super::{Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};

/// Placeholder for Pi's `find` tool.
pub struct FindTool {
    definition: ToolDefinition,
}

impl FindTool {
    /// The tool with Pi's definition.
    pub fn new() -> Self {
        FindTool {
            definition: pi_definition("find"),
        }
    }
}

impl Default for FindTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Tool for FindTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(&self, _args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        todo!("find tool: not merged yet")
    }
}
