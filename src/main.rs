//! The `harness` binary: parse the command line, run the library, map the result to an exit code.

/// jemalloc instead of the system allocator: a suite in flight allocates and frees request
/// bodies, streamed events and tool output across many threads, where glibc's malloc spent a
/// fifth of the harness's CPU; jemalloc also holds the least memory of those measured
/// (`benches/README.md`, `scale`).
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    harness::cli::main()
}
