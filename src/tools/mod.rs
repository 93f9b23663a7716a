//! The agent's tools: a byte-faithful Rust implementation of the Pi coding agent's tool system
//! (`../shared/design/pi-tools.md`, sections 0 to 7).
//!
//! A tool reports failure by returning [`ToolError`] with the bare message Pi would throw; the
//! caller turns it into a result with `is_error: true` ([`ToolResult`]). Nothing here may depend on
//! the agent loop, the providers, the runner or the reports.
//!
//! Layout: one file per tool (`read`, `write`, `edit/`, `bash`, `grep`, `find`, `ls`), the shared
//! pieces Pi has in its own files (`path` resolution, `truncate`, the per-file mutation `queue`),
//! argument `validate`ion and coercion, and `registry` (tool sets, definitions, and
//! [`registry::ToolSet::call`], the one entry point that runs a call the way Pi's agent loop does).

pub mod args;
pub mod bash;
pub mod definitions;
pub mod edit;
pub mod find;
pub mod grep;
pub mod listing;
pub mod ls;
pub mod path;
pub mod queue;
pub mod read;
pub mod registry;
pub mod truncate;
pub mod validate;
pub mod write;

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use crate::conversation::{Content, ToolDefinition};
pub use registry::{ToolSet, ToolSetSpec};

/// What a tool call needs from its surroundings. Cheap to clone; one per run (workspace).
#[derive(Clone)]
pub struct ToolContext {
    /// The working directory every relative path resolves against.
    pub cwd: PathBuf,
    /// The home directory `~` expands to (Pi uses `os.homedir()`; the harness passes the workspace
    /// or a configured folder so nothing leaks the host).
    pub home: PathBuf,
    /// Serialises `write` and `edit` per real path.
    pub queue: queue::FileMutationQueue,
    /// The environment bash commands run with, exactly (an allow-list: [`crate::sandbox::env`]).
    pub env: Arc<Vec<(String, String)>>,
    /// The sandbox of the run: how commands are spawned and which paths the file tools may use.
    pub jail: crate::sandbox::Jail,
    /// Where bash saves the full output of a truncated command.
    pub temp_dir: PathBuf,
    /// The edit matching strategy (Pi's exact-then-fuzzy by default).
    pub edit_strategy: Arc<dyn edit::EditStrategy>,
    /// Cancelled when the run is aborted (a limit was reached, the user pressed Ctrl-C).
    pub cancel: CancellationToken,
}

impl ToolContext {
    /// A context for `cwd` with Pi's defaults: home is `cwd`, temp files in the system temp dir,
    /// the allow-listed part of the process environment, Pi's edit strategy, no confinement
    /// (sandbox tier `none`).
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        let cwd = cwd.into();
        ToolContext {
            home: cwd.clone(),
            cwd,
            queue: queue::FileMutationQueue::default(),
            env: Arc::new(crate::sandbox::env::base_env(std::env::vars())),
            jail: crate::sandbox::Jail::unconfined(),
            temp_dir: std::env::temp_dir(),
            edit_strategy: Arc::new(edit::PiStrategy),
            cancel: CancellationToken::new(),
        }
    }
}

/// A successful tool result before it becomes a [`ToolResult`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    pub content: Vec<Content>,
    /// Pi's `details` (never shown to the model).
    pub details: Option<Value>,
    /// For `edit`: how each edit was located. Counted by scoring, never shown to the model.
    pub edit: Option<EditReport>,
}

impl ToolOutput {
    /// A result with one text block and no details.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![Content::text(text)],
            ..Default::default()
        }
    }
}

/// A tool failure: the bare message Pi would throw (no "Error:" prefix).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    pub message: String,
    /// For `edit`: which edit failed and why.
    pub edit: Option<EditReport>,
}

impl ToolError {
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
            edit: None,
        }
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::new(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::new(message)
    }
}

/// One tool, as Pi defines it.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Name, description and parameter schema, exactly as the model receives them.
    fn definition(&self) -> &ToolDefinition;

    /// Pi's `prepareArguments` hook (only `edit` has one): runs before validation.
    fn prepare_arguments(&self, args: Value) -> Value {
        args
    }

    /// The part of `prepareArguments` that Pi applies to the stored assistant message itself
    /// (it mutates the call's arguments in place), so that later requests replay the rewritten
    /// arguments. Only `edit` has one: `edits` sent as a JSON string becomes the parsed array.
    fn rewrite_history_arguments(&self, _args: &mut Value) {}

    /// Runs the call with validated, coerced arguments.
    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
}

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

impl ToolResult {
    /// Pi's error result: the message as the only text, `details: {}`.
    pub fn error(err: ToolError) -> Self {
        ToolResult {
            is_error: true,
            content: vec![Content::text(err.message)],
            details: Some(Value::Object(Default::default())),
            edit: err.edit,
        }
    }

    pub fn ok(out: ToolOutput) -> Self {
        ToolResult {
            is_error: false,
            content: out.content,
            details: out.details,
            edit: out.edit,
        }
    }

    pub fn from_outcome(outcome: Result<ToolOutput, ToolError>) -> Self {
        match outcome {
            Ok(out) => ToolResult::ok(out),
            Err(err) => ToolResult::error(err),
        }
    }
}

/// Which tier of a strategy located an edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchTier {
    Exact,
    Fuzzy,
}

/// Why an edit call failed, as the harness counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EditFailure {
    /// `edits` missing or empty.
    NoEdits,
    /// An `oldText` was empty.
    EmptyOldText {
        index: usize,
    },
    NotFound {
        index: usize,
    },
    NotUnique {
        index: usize,
        count: usize,
    },
    Overlap {
        first: usize,
        second: usize,
    },
    NoChange,
    /// The file could not be read or written (ENOENT, EACCES, a directory...).
    File,
    /// The arguments failed validation before the tool ran.
    InvalidArguments,
}

impl EditFailure {
    /// A stable short name for reports and CSV columns.
    pub fn name(&self) -> &'static str {
        match self {
            EditFailure::NoEdits => "no_edits",
            EditFailure::EmptyOldText { .. } => "empty_old_text",
            EditFailure::NotFound { .. } => "not_found",
            EditFailure::NotUnique { .. } => "not_unique",
            EditFailure::Overlap { .. } => "overlap",
            EditFailure::NoChange => "no_change",
            EditFailure::File => "file_error",
            EditFailure::InvalidArguments => "invalid_arguments",
        }
    }
}

/// What happened to one edit call: the strategy, the tier of every located edit, and the failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditReport {
    pub strategy: String,
    /// Tiers of the edits located before success or failure, in edit order.
    pub tiers: Vec<MatchTier>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<EditFailure>,
}
