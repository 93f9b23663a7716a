//! The integration tests: one binary, one submodule per area.

mod browser;
mod cassettes;
mod cli_tool;
mod edit;
mod load;
mod providers;
mod providers_more;
mod report_files;
mod reports;
mod retry;
mod run;
mod tasks;
