//! Tool sets and the one entry point that runs a tool call the way Pi's agent loop does:
//! unknown tool, `prepareArguments`, validation, execution, and errors as results.
//!
//! Depends on the tool implementations and `validate`; never on the agent loop, which calls
//! [`ToolSet::call`] for every tool call the model makes.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::str::FromStr;
use std::sync::Arc;

use futures::FutureExt;
use serde_json::Value;

use super::bash::BashTool;
use super::edit::EditTool;
use super::find::FindTool;
use super::grep::GrepTool;
use super::ls::LsTool;
use super::read::ReadTool;
use super::validate::validate_arguments;
use super::write::WriteTool;
use super::{
    EditCapture, EditFailure, EditObservation, EditReport, Tool, ToolContext, ToolDefinition,
    ToolError, ToolResult,
};

/// Pi's seven tools, in the order `harness tools --set all` lists them.
const ALL_TOOLS: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];
/// Pi's default tools (`read, bash, edit, write`), in Pi's order.
const CODING_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];
/// Pi's read-only tools (`createReadOnlyTools`).
const READ_ONLY_TOOLS: [&str; 4] = ["read", "grep", "find", "ls"];

/// The names of every tool the harness has, in a stable order.
pub fn all_tool_names() -> &'static [&'static str] {
    &ALL_TOOLS
}

/// Which tools are on: Pi's coding set, the read-only set, or an explicit list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolSetSpec {
    /// `read, bash, edit, write` (Pi's default).
    Coding,
    /// `read, grep, find, ls`.
    ReadOnly,
    /// An explicit list of tool names, in the order given.
    Names(Vec<String>),
}

impl ToolSetSpec {
    /// Every tool (`all`).
    pub fn all() -> Self {
        ToolSetSpec::Names(ALL_TOOLS.iter().map(|s| (*s).to_owned()).collect())
    }

    /// The tool names of the set, in order, duplicates removed.
    pub fn names(&self) -> Vec<String> {
        let names: Vec<String> = match self {
            ToolSetSpec::Coding => CODING_TOOLS.iter().map(|s| (*s).to_owned()).collect(),
            ToolSetSpec::ReadOnly => READ_ONLY_TOOLS.iter().map(|s| (*s).to_owned()).collect(),
            ToolSetSpec::Names(names) => names.clone(),
        };
        let mut seen = Vec::new();
        for name in names {
            if !seen.contains(&name) {
                seen.push(name);
            }
        }
        seen
    }
}

impl FromStr for ToolSetSpec {
    type Err = UnknownToolError;

    /// `coding`, `readonly` (or `read-only`), `all`, or comma-separated tool names
    /// (`read,grep`); names are checked here.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "coding" => Ok(ToolSetSpec::Coding),
            "readonly" | "read-only" => Ok(ToolSetSpec::ReadOnly),
            "all" => Ok(ToolSetSpec::all()),
            list => {
                let names: Vec<String> = list
                    .split(',')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_owned)
                    .collect();
                if names.is_empty() {
                    return Err(UnknownToolError { name: s.to_owned() });
                }
                if let Some(bad) = names.iter().find(|n| !ALL_TOOLS.contains(&n.as_str())) {
                    return Err(UnknownToolError { name: bad.clone() });
                }
                Ok(ToolSetSpec::Names(names))
            }
        }
    }
}

/// A tool name (or tool-set name) the harness does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown tool `{name}` (valid tools: {}; tool sets: coding, readonly, all)",
    ALL_TOOLS.join(", ")
)]
pub struct UnknownToolError {
    /// The name as given.
    pub name: String,
}

/// A fresh instance of the tool called `name`.
fn tool_by_name(name: &str) -> Option<Arc<dyn Tool>> {
    Some(match name {
        "read" => Arc::new(ReadTool::new()),
        "bash" => Arc::new(BashTool::new()),
        "edit" => Arc::new(EditTool::new()),
        "write" => Arc::new(WriteTool::new()),
        "grep" => Arc::new(GrepTool::new()),
        "find" => Arc::new(FindTool::new()),
        "ls" => Arc::new(LsTool::new()),
        _ => return None,
    })
}

/// The tools of one run. Cheap to clone.
#[derive(Clone)]
pub struct ToolSet {
    tools: Vec<Arc<dyn Tool>>,
    /// Whose definitions the model is sent.
    profile: super::profile::ToolProfile,
}

impl fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.names())
            .finish()
    }
}

impl ToolSet {
    /// The tools of `spec`, in its order.
    pub fn new(spec: &ToolSetSpec) -> Result<ToolSet, UnknownToolError> {
        let tools = spec
            .names()
            .iter()
            .map(|name| tool_by_name(name).ok_or_else(|| UnknownToolError { name: name.clone() }))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ToolSet {
            tools,
            profile: Default::default(),
        })
    }

    /// The set with `profile`'s definitions (the tools' texts follow the call's context).
    pub fn with_profile(mut self, profile: super::profile::ToolProfile) -> ToolSet {
        self.profile = profile;
        self
    }

    /// The definitions sent to the model, in the set's order.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .map(|t| self.profile.definition(t.definition()))
            .collect()
    }

    /// The tool names, in the set's order.
    pub fn names(&self) -> Vec<&str> {
        self.tools
            .iter()
            .map(|t| t.definition().name.as_str())
            .collect()
    }

    fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|t| t.definition().name == name)
    }

    /// Rewrites a call's arguments the way Pi's `prepareArguments` rewrites the stored assistant
    /// message (see [`Tool::rewrite_history_arguments`]); unknown tools are left alone.
    pub fn rewrite_history_arguments(&self, name: &str, args: &mut Value) {
        if let Some(tool) = self.get(name) {
            tool.rewrite_history_arguments(args);
        }
    }

    /// Runs one call as Pi's loop does: unknown tool, prepare, validate, execute; never panics
    /// on bad input, errors come back as results.
    ///
    /// A validation failure of `edit` carries an [`EditReport`] with
    /// [`EditFailure::InvalidArguments`] so scoring counts it. A panic inside a tool (a harness
    /// bug) becomes an error result rather than ending the whole run.
    pub async fn call(&self, name: &str, args: Value, ctx: &ToolContext) -> ToolResult {
        if name == "edit"
            && let Some(observer) = ctx.edit_observer.clone()
        {
            let capture = Arc::new(EditCapture::default());
            let mut scoped = ctx.clone();
            scoped.edit_capture = Some(Arc::clone(&capture));
            let raw = args.clone();
            let result = self.call_unobserved(name, args, &scoped).await;
            let file = capture.take();
            observer.observe(&EditObservation {
                arguments: &raw,
                path: raw.get("path").and_then(Value::as_str),
                resolved: file.resolved.as_deref(),
                before: file.before.as_deref(),
                after: file.after.as_deref(),
                result: &result,
            });
            return result;
        }
        self.call_unobserved(name, args, ctx).await
    }

    async fn call_unobserved(&self, name: &str, args: Value, ctx: &ToolContext) -> ToolResult {
        let Some(tool) = self.get(name) else {
            return ToolResult::error(ToolError::new(format!("Tool {name} not found")));
        };
        // An old profile's edit takes the flat arguments its schema names; they are checked as
        // sent, then made today's shape and checked again like any call.
        let sent = if ctx.profile.flat_edit() && name == "edit" {
            validate_arguments(
                name,
                &ctx.profile.definition(tool.definition()).parameters,
                &args,
            )
        } else {
            Ok(args)
        };
        let checked = sent.and_then(|args| {
            validate_arguments(
                name,
                &tool.definition().parameters,
                &tool.prepare_arguments(args),
            )
        });
        let validated = match checked {
            Ok(v) => v,
            Err(message) => {
                let mut err = ToolError::new(message);
                if name == "edit" {
                    err.edit = Some(EditReport::new(
                        ctx.edit_strategy.name(),
                        Vec::new(),
                        Some(EditFailure::InvalidArguments),
                    ));
                }
                return ToolResult::error(err);
            }
        };
        match AssertUnwindSafe(tool.execute(validated, ctx))
            .catch_unwind()
            .await
        {
            Ok(outcome) => ToolResult::from_outcome(outcome),
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".to_owned());
                ToolResult::error(ToolError::new(format!(
                    "Internal error in tool {name}: {what}"
                )))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ctx() -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx = ToolContext::new(dir.path());
        ctx.temp_dir = dir.path().to_path_buf();
        ctx.env = Arc::new(vec![("PATH".into(), "/usr/bin:/bin".into())]);
        (dir, ctx)
    }

    #[test]
    fn specs_parse() {
        assert_eq!("coding".parse::<ToolSetSpec>(), Ok(ToolSetSpec::Coding));
        assert_eq!("readonly".parse::<ToolSetSpec>(), Ok(ToolSetSpec::ReadOnly));
        assert_eq!(
            " read, bash ".parse::<ToolSetSpec>(),
            Ok(ToolSetSpec::Names(vec!["read".into(), "bash".into()]))
        );
        let err = "read,nope".parse::<ToolSetSpec>().unwrap_err();
        assert_eq!(err.name, "nope");
        assert_eq!(
            err.to_string(),
            "unknown tool `nope` (valid tools: read, bash, edit, write, grep, find, ls; tool sets: coding, readonly, all)"
        );
        assert!("".parse::<ToolSetSpec>().is_err());
    }

    #[test]
    fn sets_keep_pi_order() {
        assert_eq!(
            ToolSet::new(&ToolSetSpec::Coding).unwrap().names(),
            ["read", "bash", "edit", "write"]
        );
        assert_eq!(
            ToolSet::new(&ToolSetSpec::ReadOnly).unwrap().names(),
            ["read", "grep", "find", "ls"]
        );
        let all = ToolSet::new(&ToolSetSpec::all()).unwrap();
        assert_eq!(all.names(), all_tool_names());
        let defs = all.definitions();
        assert_eq!(defs[1].name, "bash");
        assert_eq!(defs[1].parameters["required"], json!(["command"]));
        let dup = ToolSetSpec::Names(vec!["ls".into(), "ls".into()]);
        assert_eq!(ToolSet::new(&dup).unwrap().names(), ["ls"]);
        let bad = ToolSetSpec::Names(vec!["nope".into()]);
        assert_eq!(ToolSet::new(&bad).unwrap_err().name, "nope");
    }

    #[tokio::test]
    async fn unknown_tool_is_an_error_result() {
        let (_d, ctx) = ctx();
        let set = ToolSet::new(&ToolSetSpec::ReadOnly).unwrap();
        let result = set.call("bash", json!({"command": "echo hi"}), &ctx).await;
        assert!(result.is_error);
        assert_eq!(result.content[0].as_text(), Some("Tool bash not found"));
        assert_eq!(result.details, Some(json!({})));
    }

    #[tokio::test]
    async fn validation_errors_become_results_and_coercion_reaches_the_tool() {
        let (_d, ctx) = ctx();
        let set = ToolSet::new(&ToolSetSpec::Coding).unwrap();
        let result = set.call("bash", json!({"command": ["ls"]}), &ctx).await;
        assert!(result.is_error);
        assert_eq!(
            result.content[0].as_text().unwrap(),
            "Validation failed for tool \"bash\":\n  - command: must be string\n\nReceived arguments:\n{\n  \"command\": [\n    \"ls\"\n  ]\n}"
        );
        assert_eq!(result.edit, None);

        // A number becomes the string "42", and "5" the timeout 5.
        let result = set
            .call("bash", json!({"command": 42, "timeout": "5"}), &ctx)
            .await;
        assert!(result.is_error);
        assert_eq!(
            result.content[0].as_text().unwrap(),
            "/bin/bash: line 1: 42: command not found\n\n\nCommand exited with code 127"
        );
    }

    #[tokio::test]
    async fn invalid_edit_arguments_are_counted() {
        let (_d, ctx) = ctx();
        let set = ToolSet::new(&ToolSetSpec::Coding).unwrap();
        let result = set.call("edit", json!({}), &ctx).await;
        assert!(result.is_error);
        assert_eq!(
            result.edit,
            Some(EditReport::new(
                "pi",
                vec![],
                Some(EditFailure::InvalidArguments)
            ))
        );
    }

    #[tokio::test]
    async fn success_has_no_error_flag() {
        let (_d, ctx) = ctx();
        let set = ToolSet::new(&ToolSetSpec::Coding).unwrap();
        let result = set.call("bash", json!({"command": "echo hi"}), &ctx).await;
        assert_eq!(
            result,
            ToolResult {
                is_error: false,
                content: vec![crate::tools::Content::text("hi\n")],
                details: None,
                edit: None,
            }
        );
    }
}
