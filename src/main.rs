//! The `harness` binary: parse the command line, run the library, map the result to an exit code.

/// mimalloc instead of the system allocator: a suite in flight allocates and frees request
/// bodies, streamed events and tool output across many threads, where glibc's malloc spent a
/// fifth of the harness's CPU (`benches/README.md`, `scale`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    harness::cli::main()
}
