//! The integration tests: one binary, one submodule per area.

mod cassettes;
mod cli_tool;
mod edit;
mod edits_cli;
mod load;
mod providers;
mod providers_more;
mod reports;
mod retry;
mod run;
mod tasks;
