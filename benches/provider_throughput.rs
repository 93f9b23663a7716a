//! Provider throughput: how many model turns per second the harness sustains with 64 runs in
//! flight against a provider that answers instantly, and how much of the harness's own CPU time
//! each turn costs.
//!
//! The load server runs in a separate process (this binary re-executed with `--serve`, printing
//! its port on stdout), so the CPU figures are the harness's alone: the process's utime + stime
//! from `/proc/self/stat`, read around each scenario. Children the harness waited for (the `true`
//! check of each run) are reported separately (cutime + cstime).
//!
//! Scenarios, each `--runs N` runs (default 2000) at `--jobs J` (default 64; the provider's
//! `max_in_flight` is set to the same):
//! - `fixed`: no model at all: per run, the workspace copy, the `true` check and the diff, as
//!   the runner does them (the per-run cost any turn count pays once);
//! - `HTTP client setup`: building the runner's per-run `LiveTransport` (reqwest + rustls) alone;
//! - `1 turn`: the runner, live, one final text reply per run;
//! - `N turns`: the runner, live, `--turns N` (default 4) model turns per run: N-1 turns calling
//!   `read README.md`, then the final reply.
//!
//! Run with `cargo bench --bench provider_throughput` (`-- --runs 500 --turns 4 --jobs 64`).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::cassettes::CassetteMode;
use harness::providers::catalog::Catalog;
use harness::providers::config::HarnessConfig;
use harness::providers::live::LiveTransport;
use harness::record::Outcome;
use harness::runner::{self, RunOptions, Silent};
use harness::scoring;
use harness::tasks::{self, Task};
use harness::testkit::{self, LoadConfig, proc_stat};
use harness::workspace::Workspace;

fn arg(name: &str, default: usize) -> usize {
    std::env::args()
        .skip_while(|a| a != name)
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

fn main() {
    if std::env::args().any(|a| a == "--serve") {
        serve(arg("--turns", 1));
        return;
    }
    let runs = arg("--runs", 2000);
    let jobs = arg("--jobs", 64);
    let turns = arg("--turns", 4).max(2);
    let tick = proc_stat::clock_ticks_per_second();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tasks");
    testkit::write_trivial_task(&suite).unwrap();
    let task = Arc::new(
        tasks::load_suite(&suite)
            .unwrap_or_else(|e| panic!("{e}"))
            .tasks
            .remove(0),
    );

    println!(
        "provider throughput: {runs} runs per scenario, {jobs} in flight, CPU tick 1/{tick} s"
    );
    let one_turn = ServerProcess::start(1);
    let many_turns = ServerProcess::start(turns);
    // Warm up: page cache, connection code paths, the check's binary.
    runtime.block_on(fixed_cost(&task, 64.min(runs), jobs));
    live_runs(
        &runtime,
        &task,
        dir.path(),
        &one_turn,
        (64.min(runs), jobs, 1),
    );

    let fixed = measure(tick, (runs, 0), None, || {
        runtime.block_on(fixed_cost(&task, runs, jobs));
    });
    // One HTTP client per run: the runner builds a `LiveTransport` (reqwest + rustls) per run.
    let transports = measure(tick, (runs, 0), None, || {
        for _ in 0..runs {
            drop(std::hint::black_box(LiveTransport::new().unwrap()));
        }
    });
    let one = measure(tick, (runs, runs), Some(&one_turn), || {
        live_runs(&runtime, &task, dir.path(), &one_turn, (runs, jobs, 1));
    });
    let many = measure(tick, (runs, runs * turns), Some(&many_turns), || {
        live_runs(
            &runtime,
            &task,
            dir.path(),
            &many_turns,
            (runs, jobs, turns),
        );
    });
    drop((one_turn, many_turns));

    println!();
    println!(
        "| scenario | wall s | runs/s | turns/s | harness CPU s | CPU ms/run | CPU ms/turn | checks CPU s | server CPU s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (name, m) in [
        (
            "fixed (workspace + check + diff, no model)".to_owned(),
            &fixed,
        ),
        (
            "HTTP client setup only (`LiveTransport::new`)".to_owned(),
            &transports,
        ),
        ("1 turn per run".to_owned(), &one),
        (format!("{turns} turns per run"), &many),
    ] {
        println!(
            "| {name} | {:.2} | {:.0} | {} | {:.2} | {:.2} | {} | {:.2} | {:.2} |",
            m.wall.as_secs_f64(),
            m.runs as f64 / m.wall.as_secs_f64(),
            if m.turns > 0 {
                format!("{:.0}", m.turns as f64 / m.wall.as_secs_f64())
            } else {
                "-".to_owned()
            },
            m.cpu,
            m.cpu * 1000.0 / m.runs as f64,
            if m.turns > 0 {
                format!("{:.2}", m.cpu * 1000.0 / m.turns as f64)
            } else {
                "-".to_owned()
            },
            m.children_cpu,
            m.server_cpu
        );
    }
    let extra_turns = (many.turns - one.turns) as f64;
    println!();
    println!(
        "1 turn per run, fixed cost subtracted: {:.2} CPU ms per turn, {:.0} turns/s of model time \
         ({:.2} s wall beyond the fixed part)",
        (one.cpu - fixed.cpu) * 1000.0 / one.turns as f64,
        one.turns as f64 / (one.wall.as_secs_f64() - fixed.wall.as_secs_f64()).max(1e-9),
        one.wall.as_secs_f64() - fixed.wall.as_secs_f64()
    );
    println!(
        "marginal turn ({turns} vs 1 turn per run, includes one `read` tool call): {:.2} CPU ms per turn, \
         {:.0} turns/s",
        (many.cpu - one.cpu) * 1000.0 / extra_turns,
        extra_turns / (many.wall.as_secs_f64() - one.wall.as_secs_f64()).max(1e-9)
    );
}

/// What one scenario took.
struct Measured {
    runs: usize,
    turns: usize,
    wall: Duration,
    /// Seconds of this process's CPU (user + system).
    cpu: f64,
    /// Seconds of CPU of waited-for children (the checks).
    children_cpu: f64,
    /// Seconds of CPU of the load server process.
    server_cpu: f64,
}

fn measure(
    tick: f64,
    (runs, turns): (usize, usize),
    server: Option<&ServerProcess>,
    work: impl FnOnce(),
) -> Measured {
    let server_cpu = || server.map_or(0.0, |s| s.cpu(tick));
    let (cpu0, child0, server0) = (cpu_seconds(tick).0, cpu_seconds(tick).1, server_cpu());
    let started = Instant::now();
    work();
    let wall = started.elapsed();
    let (cpu1, child1) = cpu_seconds(tick);
    Measured {
        runs,
        turns,
        wall,
        cpu: cpu1 - cpu0,
        children_cpu: child1 - child0,
        server_cpu: server_cpu() - server0,
    }
}

/// (utime + stime, cutime + cstime) of this process, in seconds.
fn cpu_seconds(tick: f64) -> (f64, f64) {
    let t = proc_stat::read("/proc/self/stat", tick);
    (t.own, t.children)
}

/// The per-run work that does not depend on the model: workspace, check, diff.
async fn fixed_cost(task: &Arc<Task>, runs: usize, jobs: usize) {
    let semaphore = Arc::new(tokio::sync::Semaphore::new(jobs));
    let env = Arc::new(harness::sandbox::env::base_env(std::env::vars()));
    let handles: Vec<_> = (0..runs)
        .map(|_| {
            let (task, semaphore, env) = (task.clone(), semaphore.clone(), env.clone());
            tokio::spawn(async move {
                let _permit = semaphore.acquire_owned().await.unwrap();
                let workspace = Workspace::create(&task, false).unwrap();
                let checks = scoring::run_checks(&task, workspace.path(), &env)
                    .await
                    .expect("the checks start");
                assert!(checks.iter().all(|c| c.passed), "{checks:?}");
                workspace
                    .diff(std::time::Instant::now() + std::time::Duration::from_secs(600))
                    .unwrap();
            })
        })
        .collect();
    for h in handles {
        h.await.unwrap();
    }
}

/// The load server, in a child process (this binary with `--serve`).
struct ServerProcess {
    child: std::process::Child,
    port: u16,
}

impl ServerProcess {
    /// Starts a server answering `turns` turns per run and waits for its port.
    fn start(turns: usize) -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--serve", "--turns", &turns.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the load server process");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the server prints its port");
        ServerProcess { child, port }
    }

    /// The server's CPU time so far (user + system), in seconds.
    fn cpu(&self, tick: f64) -> f64 {
        proc_stat::read(&format!("/proc/{}/stat", self.child.id()), tick).own
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // Closing its stdin stops the server.
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// `runs` live runs through the runner against `server`, which answers `turns` turns per run.
fn live_runs(
    runtime: &tokio::runtime::Runtime,
    task: &Arc<Task>,
    scratch: &Path,
    server: &ServerProcess,
    (runs, jobs, turns): (usize, usize, usize),
) {
    let config = HarnessConfig::parse(
        &format!("providers:\n  openai:\n    max_in_flight: {jobs}\n"),
        Path::new("harness.yaml"),
    )
    .unwrap();
    let reports = tempfile::tempdir_in(scratch).unwrap();
    let mut options = RunOptions::new(scratch.join("cassettes"), reports.path().to_path_buf());
    options.catalog = Arc::new(Catalog::with_config(&config).unwrap());
    options.mode = CassetteMode::Live;
    options.models = vec!["openai/load-gpt".parse().unwrap()];
    options.base_url = Some(format!("http://127.0.0.1:{}/v1", server.port));
    options.key_env = Arc::new(|_| Some("bench-key-not-secret".to_owned()));
    options.jobs = jobs;
    options.epochs = u32::try_from(runs).unwrap();
    let planned = runner::plan_runs(std::slice::from_ref(task), &options).unwrap();
    let records = runtime.block_on(runner::execute(planned, &options, Arc::new(Silent)));
    for r in &records {
        assert_eq!(r.outcome, Outcome::Passed, "{} {:?}", r.reason, r.detail);
        assert_eq!(r.turns as usize, turns);
    }
}

/// The `--serve` side: a load server answering `turns` turns per run, instantly, no 429s, until
/// stdin closes.
fn serve(turns: usize) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(testkit::start_load(LoadConfig {
        turns_per_run: turns,
        ..LoadConfig::default()
    }));
    println!("{}", server.addr().port());
    std::io::stdout().flush().unwrap();
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    drop(server);
}
