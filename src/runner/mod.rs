//! The runner: plans the runs of a suite (task x model x epoch), executes them in parallel, each
//! in its own workspace with its own transport (live, recording or replaying a cassette), scores
//! them, writes each run's transcript and diff as soon as it ends, and returns the records.
//!
//! One run never stops another: a missing or malformed cassette, a provider failure or a panic
//! becomes that run's `error` outcome. Progress goes out as [`RunnerEvent`]s to a [`Reporter`];
//! the runner itself never prints. Depends on everything below it; only the CLI depends on it.

pub mod fingerprint;
pub mod journal;
pub mod manifest;
pub mod merge;
pub mod options;
pub mod oracle_check;
pub mod partition;
mod place;
mod plan;
pub mod preflight;
pub mod problem;
pub mod resume;
mod run;
mod schedule;
mod session;
mod state;
pub mod suite;

pub use tokio_util::sync::CancellationToken;

pub use crate::events::{Reporter, RunnerEvent, Silent};
pub use options::{KeyLookup, RunOptions};
pub use plan::{PlanError, PlannedRun, plan_runs, recorded_models};
pub use run::missing_cassette_record;
pub use schedule::{Execution, execute, execute_until};
pub use session::pending_path;
