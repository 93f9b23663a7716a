//! Test support shipped in the library: the scripted model server that answers in a provider's
//! wire format (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses or Gemini SSE) from
//! a script of assistant turns, and records the requests it got. Used by the tests and to produce
//! the shipped, scripted cassettes; and the load server that answers any number of conversations
//! at once (with a share of 429s) and counts requests in flight, for load tests and throughput
//! benchmarks; and the benchmarks' reader of a process's CPU times. Nothing else in the crate
//! depends on this module.

pub mod load_server;
pub mod proc_stat;
pub mod scripted_server;

pub use load_server::{
    LoadConfig, LoadServer, LoadStats, RateLimit, TRIVIAL_TASK_ID, start_load, write_trivial_task,
};

pub use scripted_server::{
    Fault, ReceivedRequest, Script, ScriptError, ScriptedServer, ScriptedToolCall, ScriptedUsage,
    Turn, load_script, parse_script, start, start_from,
};
