//! Records: what one run leaves behind, as data every later stage reads. The per-run record
//! ([`RunRecord`], a row of `runs.csv`), the run file ([`RunFile`], `runs/<run>/run.json`), and
//! the typed values they hold: the run's [`Outcome`], the [`ErrorKind`] of an `error` run, the
//! [`DivergenceKind`] of a replay's first difference, the outcome a cassette recorded
//! ([`RecordedOutcome`], [`Recorded`]) and whether a replay held it ([`OutcomeChange`]), and how
//! each edit call went ([`EditReport`], [`EditStats`]).
//!
//! A leaf: it depends on `conversation` only (for the messages and tool calls a run file keeps),
//! so that the tools, the cassettes, scoring, the reports and the runner can all speak of a run
//! without depending on each other. Nothing here runs anything; serialised forms are the ones
//! `run.json`, `journal.jsonl`, `runs.csv` and cassette headers have always had.

mod attempt;
mod divergence_kind;
pub mod duration_ms;
mod edit;
mod edit_stats;
mod error_kind;
mod outcome;
mod recorded;
mod run_file;
mod run_record;
mod tool_call;

pub use attempt::AttemptOutcome;
pub use divergence_kind::DivergenceKind;
pub use edit::{
    EDIT_TOOL, EditFailure, EditReport, FAILURE_KINDS, LocatedEdit, MatchTier, UNREPORTED_FAILURE,
};
pub use edit_stats::EditStats;
pub use error_kind::ErrorKind;
pub use outcome::{Outcome, OutcomeChange};
pub use recorded::{Recorded, RecordedCheck, RecordedEdits, RecordedOutcome};
pub use run_file::{RUN_FILE_FORMAT, RUN_FILE_NAME, RunFile};
pub use run_record::{
    CheckResult, DEFAULT_EDIT_STRATEGY, NOT_STARTED, RunRecord, Tokens, run_dir, run_dir_for,
};
pub use tool_call::{ToolCallRecord, ToolResult};
