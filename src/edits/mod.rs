//! The edit corpus and the offline comparison of edit strategies (`harness edits`).
//!
//! - [`corpus`]: the on-disk format, `edits.jsonl` plus content blobs, its writer and reader;
//! - [`recorder`]: [`CorpusRecorder`], the observer a run puts in its tool context to record
//!   every `edit` call;
//! - [`gold`]: the right answer of a call, where one can be known;
//! - [`perturb`]: realistic model mistakes derived from gold edits (or from any folder of
//!   source files), each with its kind and right answer;
//! - [`reapply`]: every call re-applied under every strategy, classified, summarised, with
//!   paired statistics;
//! - [`sessions`]: the corpus of a real Pi session or Claude Code transcript, its files rebuilt
//!   by replaying it.
//!
//! Sits after `tools`, `sessions` and `scoring` (it re-applies edits with the tool's own strategies and uses
//! the exact McNemar test of `stats`); it must not depend on the runner, the reports or
//! the CLI.

pub mod corpus;
pub mod gold;
pub mod perturb;
pub mod reapply;
pub mod recorder;
pub mod sessions;

pub use corpus::{CorpusWriter, EditRecord, Gold, read_corpus};
pub use recorder::CorpusRecorder;
