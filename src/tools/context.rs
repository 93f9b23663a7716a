//! What a tool call runs with and what it returns: the [`ToolContext`] of a run (its workspace,
//! sandbox, environment, edit strategy, tool profile), a tool's [`ToolOutput`] or [`ToolError`],
//! the [`Tool`] trait every tool implements, and the [`EditObserver`] the edit corpus listens
//! through. A leaf of `tools`: the tools import it, it imports none of them (the edit strategy
//! comes from `edit::strategies`, which stands alone).

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::edit::strategies::{EditStrategy, PiStrategy};
use super::profile::ToolProfile;
use super::queue::FileMutationQueue;
use crate::conversation::{Content, ToolDefinition};
use crate::record::{EditReport, ToolResult};

/// What a tool call needs from its surroundings. Cheap to clone; one per run (workspace).
#[derive(Clone)]
pub struct ToolContext {
    /// The working directory every relative path resolves against.
    pub cwd: PathBuf,
    /// The home directory `~` expands to (Pi uses `os.homedir()`; the harness passes the workspace
    /// or a configured folder so nothing leaks the host).
    pub home: PathBuf,
    /// Serialises `write` and `edit` per real path.
    pub queue: FileMutationQueue,
    /// The environment bash commands run with, exactly (an allow-list: [`crate::sandbox::env`]).
    pub env: Arc<Vec<(String, String)>>,
    /// The sandbox of the run: how commands are spawned and which paths the file tools may use.
    pub jail: crate::sandbox::Jail,
    /// Where bash saves the full output of a truncated command.
    pub temp_dir: PathBuf,
    /// The edit matching strategy (Pi's exact-then-fuzzy by default).
    pub edit_strategy: Arc<dyn EditStrategy>,
    /// Whose words the tools answer in: today's Pi (the default) or an older version's.
    pub profile: ToolProfile,
    /// Told about every `edit` call (to record the edit corpus); `None` by default.
    pub edit_observer: Option<Arc<dyn EditObserver>>,
    /// Set by [`registry::ToolSet::call`] for one `edit` call while an observer listens: where
    /// the tool leaves what it read and wrote for the observer.
    pub(crate) edit_capture: Option<Arc<EditCapture>>,
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
            queue: FileMutationQueue::default(),
            env: Arc::new(crate::sandbox::env::base_env(std::env::vars())),
            jail: crate::sandbox::Jail::unconfined(),
            temp_dir: std::env::temp_dir(),
            edit_strategy: Arc::new(PiStrategy),
            profile: ToolProfile::default(),
            edit_observer: None,
            edit_capture: None,
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

/// One `edit` call as an [`EditObserver`] sees it, after it finished.
#[derive(Debug, Clone, Copy)]
pub struct EditObservation<'a> {
    /// The arguments exactly as the model sent them (before `prepareArguments`).
    pub arguments: &'a Value,
    /// The `path` argument as given, if it was a string.
    pub path: Option<&'a str>,
    /// The path it resolved to, if the tool got that far.
    pub resolved: Option<&'a std::path::Path>,
    /// The file's text before the call (BOM and line endings as on disk; invalid UTF-8 replaced),
    /// `None` if it was not read (missing, unreadable, or the call failed before reading).
    pub before: Option<&'a str>,
    /// The text written, if the call changed the file.
    pub after: Option<&'a str>,
    /// The result the model gets (its `edit` field is the [`EditReport`]).
    pub result: &'a ToolResult,
}

/// Told about every `edit` call of a run, after it finished (see
/// [`ToolContext::edit_observer`]). Called from the tool's task: keep it quick and never block
/// on other calls.
pub trait EditObserver: Send + Sync {
    fn observe(&self, call: &EditObservation<'_>);
}

/// What the edit tool read and wrote during one observed call.
#[derive(Debug, Default)]
pub(crate) struct EditCapture {
    state: std::sync::Mutex<CapturedFile>,
}

#[derive(Debug, Default, Clone)]
pub(crate) struct CapturedFile {
    pub resolved: Option<PathBuf>,
    pub before: Option<String>,
    pub after: Option<String>,
}

impl EditCapture {
    pub(crate) fn update(&self, f: impl FnOnce(&mut CapturedFile)) {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut state);
    }

    pub(crate) fn take(&self) -> CapturedFile {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        std::mem::take(&mut *state)
    }
}
