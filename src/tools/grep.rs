//! `grep`: Pi's grep tool (spec section 5), on the ripgrep crates instead of the rg binary.
//!
//! TEMPORARY placeholder from branch tools-bash so the registry compiles; the real tool replaces
//! this whole file when its branch is merged.

use async_trait::async_trait;
use serde_json::Value;

use super::definitions::pi_definition;
use super::{Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};

/// Placeholder for Pi's `grep` tool.
pub struct GrepTool {
    definition: ToolDefinition,
}

impl GrepTool {
    /// The tool with Pi's definition.
    pub fn new() -> Self {
        GrepTool {
            definition: pi_definition("grep"),
        }
    }
}

impl Default for GrepTool {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Tool for GrepTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(&self, _args: Value, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        todo!("grep tool: not merged yet")
    }
}
