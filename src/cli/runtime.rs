//! The tokio runtime of a subcommand: the CLI is the only place that builds one (the library
//! below it never does).

use std::process::ExitCode;

use super::printer::internal_error;

/// Threads for blocking work (workspace copies and diffs, run files, cassettes, folder
/// removal): enough to keep the disk busy, few enough that hundreds of runs in flight do not
/// each get a thread and its allocator heap (512 by default raised the peak RSS of 256 runs in
/// flight by 40%).
const BLOCKING_THREADS: usize = 16;

/// Runs in flight per thread of async work (model turns, the agent loop, the tools' replies).
const RUNS_PER_WORKER: usize = 2;

/// The tokio runtime of a subcommand, or the exit code of the error that stopped it starting:
/// one worker thread per core.
pub fn runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    build(None)
}

/// The runtime of `harness run` with `jobs` runs in flight: a worker thread per
/// [`RUNS_PER_WORKER`] runs, at most one per core. A run's async work is a small share of its
/// time (its commands and its model's replies are the rest), and an idle worker is woken to
/// steal each task that becomes ready: with a worker per core and two runs on two cores, the
/// harness spent about 1.6 ms more of its own CPU per sample than with one worker
/// (`benches/README.md`, `sandbox_overhead`).
pub fn runtime_for_runs(jobs: usize) -> Result<tokio::runtime::Runtime, ExitCode> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    build(Some(workers_for(jobs, cores)))
}

/// Worker threads for `jobs` runs in flight on `cores` cores.
fn workers_for(jobs: usize, cores: usize) -> usize {
    jobs.div_ceil(RUNS_PER_WORKER).clamp(1, cores.max(1))
}

fn build(workers: Option<usize>) -> Result<tokio::runtime::Runtime, ExitCode> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(workers) = workers {
        builder.worker_threads(workers);
    }
    builder
        .enable_all()
        .max_blocking_threads(BLOCKING_THREADS)
        .build()
        .map_err(|e| internal_error(&format!("failed to start the async runtime: {e}")))
}

#[cfg(test)]
mod tests {
    use super::workers_for;

    #[test]
    fn a_worker_thread_serves_two_runs_and_no_more_threads_than_cores() {
        assert_eq!(workers_for(1, 8), 1);
        assert_eq!(workers_for(2, 8), 1);
        assert_eq!(workers_for(3, 8), 2);
        assert_eq!(workers_for(16, 8), 8);
        assert_eq!(workers_for(256, 2), 2);
        assert_eq!(workers_for(0, 4), 1);
        assert_eq!(workers_for(4, 0), 1);
    }
}
