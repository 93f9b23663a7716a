//! The integration tests: one binary, one submodule per area.

mod cassettes;
mod cli_tool;
mod edit;
mod load;
mod providers;
mod reports;
mod run;
mod tasks;
