//! The `harness` binary: parse the command line, run the library, map the result to an exit code.

fn main() -> std::process::ExitCode {
    harness::cli::main()
}
