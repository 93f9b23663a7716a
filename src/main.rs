//! The `harness` binary: parse the command line, run the library, map the result to an exit code.

/// mimalloc instead of the system allocator: a suite in flight allocates and frees request
/// bodies, streamed events and tool output across many threads, where glibc's malloc spent a
/// fifth of the harness's CPU. It builds in seconds from one C file; with 10,000 runs, 256 in
/// flight, it peaked at 155 MiB and 0.82–0.90 ms of CPU per model turn (targets 200 MiB, 1 ms).
#[cfg(not(feature = "jemalloc"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// jemalloc (`--features jemalloc`, as the container image builds it): the least memory and CPU
/// measured at that scale (110 MiB, 0.64–0.69 ms per turn), but minutes to build from source
/// (`benches/README.md`, `scale` and `loop`).
#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    // No transparent huge pages for the harness and what it starts (its sandbox supervisors
    // first of all): mimalloc asks for them on its arenas, so each new heap of each process
    // faulted in a 2 MiB page and zeroed it, half of the harness's own CPU per run on short
    // runs (benches/README.md, `sandbox_overhead`). What mimalloc does with
    // `MIMALLOC_ALLOW_THP=0`. They are off before `main` already, since the runtime's first
    // allocation reserves mimalloc's first arena: `sandbox_ns::THP_OFF_BEFORE_MAIN`, which the
    // loader calls.
    harness::cli::main()
}
