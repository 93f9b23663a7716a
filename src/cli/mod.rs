//! The `harness` command line: clap definitions and one function per subcommand.
//!
//! Data goes to stdout, messages to stderr as `error: …` followed by `hint: …`. Every exit code
//! the binary uses is one of the documented constants in [`exit`]. This is the only module that
//! builds a tokio runtime; the library below it never does.

pub mod compare;
pub mod dev;
pub mod events;
pub mod progress;
pub mod run;
pub mod tool;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The exit codes of the `harness` binary.
pub mod exit {
    /// Everything ran; for `harness tool`, also when the tool reported an error result.
    pub const SUCCESS: u8 = 0;
    /// An internal error (a bug, or an I/O failure of the harness itself).
    pub const INTERNAL: u8 = 1;
    /// A usage or input error: unknown flag, invalid JSON, missing directory, unknown tool.
    pub const USAGE: u8 = 2;
    /// A cassette had no recorded response for a request (replay mode).
    pub const CASSETTE_MISS: u8 = 3;
    /// At least one task failed its checks.
    pub const TASK_FAILED: u8 = 100;
    /// `harness compare --fail-on flip` (or `any-flip`): a run flipped (with `flip`, passed on
    /// the base side and not on the new one; with `any-flip`, either way).
    pub const COMPARE_FLIPPED: u8 = 101;
    /// `harness compare`: the pass rate dropped significantly (more runs passed → not than not →
    /// passed, exact McNemar p below `--alpha`), in some pair of arms or all pooled; with every
    /// `--fail-on` but `never`.
    pub const COMPARE_REGRESSED: u8 = 102;
}

/// Evaluate coding agents: run recorded tasks against live providers or cassettes, score, report.
#[derive(Debug, Parser)]
#[command(name = "harness", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one tool call (or a batch of them from stdin) and print the result as JSON.
    Tool(tool::ToolArgs),
    /// Print the tool definitions the model receives, as JSON.
    Tools(tool::ToolsArgs),
    /// Run the tasks of a suite against models or cassettes, score them, write reports.
    Run(run::RunArgs),
    /// Check every task of a suite without running anything.
    Validate(run::ValidateArgs),
    /// Compare two report folders (or the arms of one): flips and paired statistics.
    Compare(compare::CompareArgs),
    /// Developer commands (re-recording the shipped scripted cassettes).
    #[command(hide = true, subcommand)]
    Dev(dev::DevCommand),
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return clap_error(err),
    };
    match cli.command {
        Command::Tool(args) => tool::run_tool(args),
        Command::Tools(args) => tool::list_tools(args),
        Command::Run(args) => run::run(args),
        Command::Validate(args) => run::validate(args),
        Command::Compare(args) => compare::compare(args),
        Command::Dev(command) => dev::run(command),
    }
}

/// Prints a clap error (help and version go to stdout with success) and maps it to an exit code.
fn clap_error(err: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = err.print();
            ExitCode::from(exit::SUCCESS)
        }
        _ => {
            let rendered = err.render().to_string();
            eprint!("{rendered}");
            if !rendered.ends_with('\n') {
                eprintln!();
            }
            eprintln!("hint: run `harness --help` or `harness <command> --help` for usage");
            ExitCode::from(exit::USAGE)
        }
    }
}

/// The tokio runtime of a subcommand, or the exit code of the error that stopped it starting.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Runtime::new()
        .map_err(|e| internal_error(&format!("could not start the async runtime: {e}")))
}

/// Writes one line of data to stdout and flushes it; unlike `println!`, a closed pipe
/// (`harness ... | head`) is an error to handle, not a panic.
pub(crate) fn print_line(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()
}

/// Writes data to stdout, ending quietly if the reader has gone (`| head`).
pub(crate) fn print_data(text: &str) {
    let _ = print_line(text);
}

/// Prints `error: {message}` and `hint: {hint}` to stderr and returns [`exit::USAGE`].
pub(crate) fn usage_error(message: &str, hint: &str) -> ExitCode {
    eprintln!("error: {message}");
    eprintln!("hint: {hint}");
    ExitCode::from(exit::USAGE)
}

/// Prints `error: {message}` to stderr and returns [`exit::INTERNAL`].
pub(crate) fn internal_error(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(exit::INTERNAL)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
