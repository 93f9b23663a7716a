//! harness: evaluate coding agents by running them on recorded tasks.
//!
//! The data flows through the modules in this order, and each module may only depend on the ones
//! before it (never the other way):
//!
//! ```text
//! markdown              fenced code blocks for the markdown the reports write
//! yaml                  YAML not ours to trust, its nesting checked in linear time first
//! sandbox               spawning the agent's commands under a sandbox tier, process-tree
//!                       cleanup, output caps, the commands' environment, the harness's secrets
//! stats                 statistics on counts (intervals, pass@k, McNemar, bootstrap)
//! conversation          provider-neutral messages, tool calls, usage, stop reasons
//!   -> sessions         real agent sessions read back (Pi session files, Claude Code
//!                       transcripts)
//!   -> record           what a run leaves behind: the run record and run file, outcomes,
//!                       error and divergence kinds, recorded outcomes, edit call outcomes
//!   -> tools            the agent's tools (Pi's read, write, edit, bash, grep, find, ls)
//!   -> providers        wire formats (Anthropic, OpenAI, ...), SSE, the HTTP transport seam
//!   -> cassettes        recorded provider traffic: a transport that records or replays
//!   -> agent            the agent loop: model <-> tools, emitting events, never printing
//!   -> tasks            task definitions (task.yaml) and their validation
//!   -> workspace        throwaway copies of a task's fixture repository, and their diff
//!   -> scoring          checks after the agent stops, and building the per-run record
//!   -> events           what the runner says while a suite runs, and the reporters that
//!                       hear it
//!   -> edits            the edit corpus (edits.jsonl), gold answers, perturbations, and the
//!                       offline comparison of edit strategies
//!   -> reports          CSV, markdown, HTML, JUnit, trajectories, comparisons; they read
//!                       records and run files only
//!   -> import           outside suites (Exercism tracks, the aider polyglot benchmark) as
//!                       task folders; depends on tasks only
//!   -> runner           schedules task runs in parallel and fans events out to reporters
//!   -> cli              the `harness` command line (the binary in main.rs is a thin shell)
//! ```
//!
//! `testkit` holds the scripted model server used by the tests and to produce the shipped,
//! scripted cassettes; nothing else depends on it. It is built only with the `testkit` feature
//! (the tests and benches turn it on through a dev-dependency on this package), so neither it nor
//! its HTTP server dependencies ship in the production binary.

pub mod agent;
pub mod cassettes;
pub mod cli;
pub mod conversation;
pub mod edits;
pub mod events;
pub mod import;
pub mod markdown;
pub mod providers;
pub mod record;
pub mod reports;
pub mod runner;
pub mod sandbox;
pub mod scoring;
pub mod sessions;
pub mod stats;
pub mod tasks;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod tools;
pub mod workspace;
pub mod yaml;
