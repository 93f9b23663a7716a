//! The integration tests: one binary, one submodule per area.

mod attempts;
mod browser;
mod cassettes;
mod cli_tool;
mod edit;
mod edits_cli;
mod faults;
mod golden;
mod import;
mod layout;
mod load;
mod oracle;
mod preflight;
mod providers;
mod providers_more;
mod regression;
mod report_files;
mod reports;
mod resume;
mod retry;
mod run;
mod sandbox;
mod sandbox_races;
mod sessions;
mod tasks;
mod volatile;
