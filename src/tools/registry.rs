//! Tool sets and the one entry point that runs a tool call the way Pi's agent loop does:
//! unknown tool, `prepareArguments`, validation, execution, and errors as results.

/// Which tools are on: Pi's coding set, the read-only set, or an explicit list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolSetSpec {
    Coding,
    ReadOnly,
    Names(Vec<String>),
}

/// The tools of one run.
pub struct ToolSet;

impl ToolSet {
    /// The definitions sent to the model, in the set's order.
    pub fn definitions(&self) -> Vec<crate::conversation::ToolDefinition> {
        todo!("tool registry")
    }

    /// Runs one call as Pi's loop does: unknown tool, prepare, validate, execute; never panics
    /// on bad input, errors come back as results.
    pub async fn call(
        &self,
        _name: &str,
        _args: serde_json::Value,
        _ctx: &super::ToolContext,
    ) -> super::ToolResult {
        todo!("tool registry")
    }
}
