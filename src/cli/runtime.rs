//! The tokio runtime of a subcommand: the CLI is the only place that builds one (the library
//! below it never does).

use std::process::ExitCode;

use super::printer::internal_error;

/// Threads for blocking work (workspace copies and diffs, run files, cassettes, folder
/// removal): enough to keep the disk busy, few enough that hundreds of runs in flight do not
/// each get a thread and its allocator heap (512 by default raised the peak RSS of 256 runs in
/// flight by 40%).
const BLOCKING_THREADS: usize = 16;

/// The tokio runtime of a subcommand, or the exit code of the error that stopped it starting.
pub fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(BLOCKING_THREADS)
        .build()
        .map_err(|e| internal_error(&format!("failed to start the async runtime: {e}")))
}
