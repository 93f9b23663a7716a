//! The agent's tools: a byte-faithful Rust implementation of the Pi coding agent's tool system
//! (`../shared/design/pi-tools.md`, sections 0 to 7).
//!
//! A tool reports failure by returning [`ToolError`] with the bare message Pi would throw; the
//! caller turns it into a result with `is_error: true` ([`ToolResult`]). Nothing here may depend on
//! the agent loop, the providers, the runner or the reports.
//!
//! Layout: one file per tool (`read`, `write`, `edit/`, `bash`, `grep`, `find`, `ls`), the shared
//! pieces Pi has in its own files (`path` resolution, `truncate`, the per-file mutation `queue`),
//! the folder `walk` of `grep` and `find` (on open folder descriptors, never led out by a symlink),
//! argument `validate`ion and coercion, and `registry` (tool sets, definitions, and
//! [`registry::ToolSet::call`], the one entry point that runs a call the way Pi's agent loop does).

pub mod args;
pub mod bash;
pub mod context;
pub mod definitions;
pub mod edit;
pub mod find;
pub mod grep;
pub mod listing;
pub mod ls;
pub mod path;
pub mod profile;
pub mod queue;
pub mod read;
pub mod registry;
pub mod truncate;
pub mod validate;
pub mod walk;
pub mod write;

pub use crate::conversation::{Content, ToolDefinition};
pub use crate::record::{EditFailure, EditReport, LocatedEdit, MatchTier, ToolResult};
pub(crate) use context::EditCapture;
pub use context::{EditObservation, EditObserver, Tool, ToolContext, ToolError, ToolOutput};
pub use registry::{ToolSet, ToolSetSpec};
