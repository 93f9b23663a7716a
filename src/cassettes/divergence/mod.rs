//! Conversation-aware divergence: every difference between the requests recorded in a cassette
//! and the requests the harness builds now, classified and located in conversation terms
//! ("turn 3: result of edit#2 changed") instead of JSON paths.
//!
//! The input is, for each request index, the recorded and the current request as JSON values
//! `{"method", "path", "headers", "body"}`, both already normalised (workspace placeholder,
//! built-in and task rules). Each body is read back by its wire format
//! ([`crate::providers::wire::WireFormat::parse_request`]) and laid out as one neutral view:
//! request line and headers, parameters, tool definitions, and the conversation as items (system
//! prompt, user messages, assistant turns with their parts, tool results), each with its turn.
//! Both views are aligned item by item and every difference becomes a [`Difference`] of one
//! [`DivergenceKind`].
//!
//! Turns: request `i` (0-based) is sent before model turn `i + 1`. Turn `N` is the model's `N`-th
//! reply together with the results of its tool calls, so a tool result that first appears in
//! request `i` belongs to turn `i`; the system prompt, the tools and the task prompt are turn 0.
//! Calls are named `tool#n`: the `n`-th call of that tool in the conversation, 1-based.
//!
//! Every request repeats the whole history, so a change made in request 3 reappears in requests
//! 4, 5 and on: a [`DivergenceTracker`] reports each difference once, at the request where it
//! first appears.
//!
//! The parts, in their dependency order: [`types`] (kinds, changes, differences), `view` (a
//! request as items), `classify` (two views compared), [`tracker`] (request after request),
//! [`render`] (the terminal line, the `runs.csv` columns, `divergence.md`). Pure: no I/O, no
//! transport. Depends on serde_json, [`crate::providers`]' wire formats and the helpers of
//! [`super::normalize`] only.

mod classify;
pub mod render;
pub mod tracker;
pub mod types;
mod view;

#[cfg(test)]
mod tests;

pub use render::{
    DivergenceColumns, SUMMARY_MAX, csv_columns, drift_by_tool, drift_line, first_kind, first_turn,
    markdown, markdown_with_calls, summary_line,
};
pub use tracker::{DivergenceTracker, differences};
pub use types::{Change, Difference, DivergenceKind, ReplaySetup, setup_mismatch};
