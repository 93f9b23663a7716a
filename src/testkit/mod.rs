//! Test support shipped in the library: the scripted model server that answers in a provider's
//! wire format (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses or Gemini SSE) from
//! a script of assistant turns, and records the requests it got. Used by the tests and to produce
//! the shipped, scripted cassettes; and the load server that answers any number of conversations
//! at once (with a share of 429s) and counts requests in flight, for load tests and throughput
//! benchmarks; the instant server that stands in for a provider in the overhead benchmarks at as
//! little CPU as it can; and the benchmarks' reader of a process's CPU times. Nothing else in the crate
//! depends on this module.

pub mod instant_server;
pub mod load_server;
pub mod proc_stat;
pub mod scripted_server;

pub use instant_server::{InstantConfig, InstantServer, start_instant};
pub use load_server::{
    LoadConfig, LoadServer, LoadStats, RateLimit, TRIVIAL_TASK_ID, start_load, write_trivial_task,
};

pub use scripted_server::{
    Fault, ReceivedRequest, Script, ScriptError, ScriptedServer, ScriptedToolCall, ScriptedUsage,
    Turn, load_script, parse_script, start, start_from,
};
