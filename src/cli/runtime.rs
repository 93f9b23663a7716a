//! The tokio runtime of a subcommand: the CLI is the only place that builds one (the library
//! below it never does).

use std::process::ExitCode;

use super::printer::internal_error;

/// The tokio runtime of a subcommand, or the exit code of the error that stopped it starting.
pub fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Runtime::new()
        .map_err(|e| internal_error(&format!("could not start the async runtime: {e}")))
}
