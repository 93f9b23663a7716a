//! Test support shipped in the library: the scripted model server that answers in a provider's
//! wire format (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses or Gemini SSE) from
//! a script of assistant turns, and records the requests it got. Used by the tests and to produce
//! the shipped, scripted cassettes. Nothing else in the crate depends on this module.

pub mod scripted_server;

pub use scripted_server::{
    Fault, RecordedRequest, Script, ScriptError, ScriptedServer, ScriptedToolCall, ScriptedUsage,
    Turn, load_script, parse_script, start,
};
