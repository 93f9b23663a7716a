//! The integration tests: one binary, one submodule per area.

mod cassettes;
mod cli_tool;
mod edit;
mod load;
mod providers;
mod providers_more;
mod reports;
mod retry;
mod run;
mod sandbox;
mod tasks;
