//! Reports: `runs.csv`, `summary.csv`, `summary.md`, `report.html`, `junit.xml`, transcripts,
//! trajectories and diffs under a report folder, the terminal summary, and comparisons of arms
//! and report folders ([`compare`]).
//!
//! Reports read run records only: the [`RunRecord`] of each run and, for everything per run, its
//! [`RunFile`] (the record plus messages, tool calls, system prompt and diff), never the agent or
//! the workspace. Nothing here feeds back into a run. Writing is plain synchronous file I/O. The
//! runner creates the folder (`reports/<timestamp>/`) and passes it in. Layout of a report folder:
//!
//! ```text
//! runs.csv                      one row per run (columns: COLUMNS.md)
//! summary.csv                   one row per provider and model
//! summary.md                    deterministic markdown summary (no timings, timestamps or paths)
//! report.html                   one self-contained page: summary, plots, runs, transcripts
//! junit.xml                     one test case per run (JUnit XML, as CI systems read it)
//! runs/<task>--<provider>--<model>--e<epoch>/
//!     run.json                  the run file: what every other file here is written from
//!     transcript.md             readable transcript: prompt, turns, tool calls and results, stop
//!     transcript.json           the messages and tool-call records as JSON
//!     trajectory.json           the run as an ATIF v1.4 trajectory (Harbor's format)
//!     diff.patch                unified diff of what the agent changed in its workspace
//!     run.html                  the run's own page, when report.html is too large to hold it
//! ```
//!
//! Writing the report folder holds the records and one run file at a time, never every run's
//! transcript: `report.html` is streamed to its file a part at a time.
//!
//! Every run has a folder with its `run.json` (a run that never started gets one holding its
//! record alone), so [`rewrite_report`] can write the whole folder again from the run folders,
//! and `harness compare` reads two folders back with [`read_run_files`]. [`read_runs_csv`] reads
//! the run keys of a previous report back. The runner adds `report.json` (the manifest) and
//! `journal.jsonl` (one line per finished run) beside these files; reports never read them.
//!
//! Depends on `record` (and `conversation` for the messages a transcript shows), `stats` and
//! `events`; never on scoring, the runner or anything that runs.

pub mod cells;
pub mod csv;
pub mod error;
pub mod event_log;
pub mod folder;
pub mod html;
pub mod junit;
pub mod markdown;
pub mod paired;
pub mod snapshot;
pub mod summary;
pub mod terminal;
pub mod trajectory;
pub mod transcript;

pub use csv::{RunKey, error_runs, read_runs_csv};
pub use error::ReportError;
pub use folder::{
    COLUMNS_DOC, ReportOptions, ReportPaths, append_file, read_run_file, read_run_files,
    read_run_records, rewrite_report, write_report, write_report_with, write_run_artifacts,
    write_run_file,
};
pub use summary::{CostTotal, ModelSummary, UNKNOWN, sorted, summarise};
pub use terminal::render_terminal_summary;

#[cfg(test)]
pub(crate) mod fixtures;
#[cfg(test)]
mod tests;
