//! The `harness` command line: clap definitions and one function per subcommand.
//!
//! Data goes to stdout, messages to stderr as `error: …` followed by `hint: …`. Every exit code
//! the binary uses is one of the documented constants in [`exit`]. This is the only module that
//! builds a tokio runtime; the library below it never does.

/// `eprintln!` that never panics: writes one line to stderr, and a closed stderr
/// (`harness run 2>&1 | head`) loses the line quietly instead of panicking.
macro_rules! stderr {
    ($($arg:tt)*) => {
        $crate::cli::printer::line(&format!($($arg)*))
    };
}

pub mod cassettes;
pub mod compare;
pub mod dev;
pub mod edits;
pub mod exit;
pub mod import;
pub mod merge;
pub mod oracle;
pub mod outcome;
pub mod preflight;
pub mod printer;
pub mod progress;
pub mod run;
pub mod run_args;
pub mod runtime;
pub mod signals;
pub mod tool;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    Run(Box<run_args::RunArgs>),
    /// Check every task of a suite without running anything; with `--oracle`, run each task's
    /// reference solution and its untouched fixture against its checks.
    Validate(run_args::ValidateArgs),
    /// Check cassettes for stale or broken files, or upgrade old ones.
    #[command(subcommand)]
    Cassettes(cassettes::CassettesCommand),
    /// List re-recorded cassettes and changed snapshots waiting for review; accept or reject
    /// them.
    Review(cassettes::ReviewArgs),
    /// Edit strategies: list them, build a perturbed edit corpus, compare them offline.
    #[command(subcommand)]
    Edits(edits::EditsCommand),
    /// Compare two report folders (or the arms of one): flips and paired statistics.
    Compare(compare::CompareArgs),
    /// Import an outside suite as task folders (`harness import exercism DIR --into TASKS`).
    #[command(subcommand)]
    Import(import::ImportCommand),
    /// Merge the report folders of the shards of one suite (`run --partition`) into one report.
    Merge(merge::MergeArgs),
    /// Developer commands (re-recording the shipped scripted cassettes).
    #[command(hide = true, subcommand)]
    Dev(dev::DevCommand),
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    // Started by bubblewrap as the supervisor of a run's sandbox, or by the harness as the maker
    // of its run sandboxes: that and nothing else.
    if crate::sandbox::supervisor::requested() {
        return crate::sandbox::supervisor::main();
    }
    if crate::sandbox::zygote::requested() {
        return crate::sandbox::zygote::main();
    }
    crate::sandbox::this_is_the_harness_binary();
    let (cli, given) = match parse(std::env::args_os().collect()) {
        Ok(parsed) => parsed,
        Err(code) => return code,
    };
    // First, while single-threaded: move every key and every variable the harness does not
    // read itself out of the environment (this re-executes the binary), so
    // `/proc/<harness>/environ` never shows a key. Only `run` reads the keys back.
    let unseal = match cli.command {
        Command::Run(_) => crate::sandbox::secrets::Unseal::Read,
        _ => crate::sandbox::secrets::Unseal::Discard,
    };
    let vault = match crate::sandbox::secrets::seal(&key_names(&cli.command, &given), unseal) {
        Ok(vault) => std::sync::Arc::new(vault),
        Err(e) => {
            return printer::internal_error(&format!(
                "{e}; refusing to run with API keys readable in the harness's environment"
            ));
        }
    };
    // This image was started with the credentials of a URL argument masked (`/proc/<pid>/cmdline`
    // is readable by anyone): the arguments as given come from the vault.
    let (cli, given) = if vault.masked_args() {
        match parse(vault.restore_args(std::env::args_os().collect())) {
            Ok(parsed) => parsed,
            Err(code) => return code,
        }
    } else {
        (cli, given)
    };
    // Then nothing of the same user may read this process's memory, environment or descriptors
    // (`/proc/<pid>/mem`, ptrace): only the final image can be made so (an exec undoes it).
    if let Err(e) = crate::sandbox::secrets::make_undumpable() {
        printer::warn(&format!(
            "failed to make the harness non-dumpable ({e}); a command running as the same user could read its memory"
        ));
    }
    // Orphans of the agent's commands come back to the harness, which kills them (see
    // `sandbox::process`); without it they would go on under init.
    if let Err(e) = crate::sandbox::process::become_subreaper() {
        printer::warn(&format!(
            "failed to become a child subreaper ({e}); a command that drops its environment may outlive its run"
        ));
    }
    // Many runs in flight hold many descriptors.
    crate::sandbox::process::raise_open_files_limit();
    let code = match cli.command {
        Command::Tool(args) => tool::run_tool(args),
        Command::Tools(args) => tool::list_tools(args),
        Command::Run(args) => run::run(*args, given, vault),
        Command::Validate(args) => run::validate(args),
        Command::Cassettes(command) => cassettes::run(command),
        Command::Review(args) => cassettes::review(args),
        Command::Edits(command) => edits::run(command),
        Command::Compare(args) => compare::compare(args),
        Command::Merge(args) => merge::merge(args),
        Command::Import(command) => import::run(command),
        Command::Dev(command) => dev::run(command),
    };
    // The sandbox maker ends, and its CPU and its sandboxes' are counted as this process's
    // children's.
    crate::sandbox::zygote::shutdown();
    code
}

/// The command line parsed, and which of `run`'s flags were given (`--resume` takes the report's
/// options for the others); `Err` with the exit code once clap has said why not.
fn parse(args: Vec<std::ffi::OsString>) -> Result<(Cli, run_args::Given), ExitCode> {
    use clap::{CommandFactory, FromArgMatches};
    let matches = Cli::command()
        .try_get_matches_from(args)
        .map_err(clap_error)?;
    let cli =
        Cli::from_arg_matches(&matches).map_err(|e| clap_error(e.format(&mut Cli::command())))?;
    let given = run_args::Given::of(matches.subcommand_matches("run"));
    Ok((cli, given))
}

/// The variables the provider catalog reads keys from: the built-in providers' and, for `run`,
/// those `harness.yaml` names (a file that does not load is reported later, by `run` itself).
fn key_names(command: &Command, given: &run_args::Given) -> Vec<String> {
    use crate::providers::catalog::Catalog;
    use crate::providers::config::HarnessConfig;
    let mut names: Vec<String> = Catalog::default()
        .providers
        .iter()
        .flat_map(|p| p.key_env.iter().cloned())
        .collect();
    if let Command::Run(args) = command {
        let tasks = run_args::tasks_dir(args, given);
        if let Ok((config, _)) = HarnessConfig::load_first(&run_args::config_candidates(&tasks)) {
            names.extend(config.providers.values().filter_map(|p| p.key_env.clone()));
        }
    }
    names.sort();
    names.dedup();
    names
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
            stderr!("{}", rendered.trim_end_matches('\n'));
            stderr!("hint: run `harness --help` or `harness <command> --help` for usage");
            ExitCode::from(exit::USAGE)
        }
    }
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
