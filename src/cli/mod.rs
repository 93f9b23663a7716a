//! The `harness` command line: clap definitions and one function per subcommand.

use std::process::ExitCode;

/// Entry point of the binary.
pub fn main() -> ExitCode {
    ExitCode::SUCCESS
}
