//! The sandbox's overhead on Inspect's own overhead workload: `--samples` samples (default 50),
//! each a model that calls `bash` `--calls` times (default 5) and then answers, the task's check
//! run once, `--jobs` samples at a time (default 2), against a bare shell doing the same
//! commands, the same way, in the same round.
//!
//! The harness is the real binary (`CARGO_BIN_EXE_harness`, the release build under `cargo
//! bench`), run live against a local model server in this process (`testkit::instant_server`,
//! which takes as little of the measured cores as it can; `--server load` for
//! `testkit::load_server`, hyper on the async runtime, used until 2026-12-04), once per
//! tier (`--tiers isolated,isolated:bwrap,workspace,none`; `isolated:bwrap` is `isolated` with
//! bubblewrap making each run's sandbox, `HARNESS_SANDBOX_MAKER=bwrap`, as before the harness
//! made them itself), and once more per tier for every `--before PATH`
//! (an older build, to compare). The bare shell runs, per sample, the same `bash -c COMMAND`
//! `--calls` times and `bash -c true` (the check) in a fresh copy of the fixture, `--jobs`
//! samples at a time.
//!
//! Measured, each the median of `--rounds` rounds (default 3; 0: the in-process figures only),
//! every side run in each round:
//! - wall time of the whole run, and the **overhead per sample**: (harness − shell) / samples;
//! - the **cost of an extra tool call**: the same with `2 × calls` calls, (its overhead − the
//!   overhead with `calls`) / (samples × calls);
//! - the harness's **own CPU** (utime + stime of its process, read from `/proc/PID/stat` when it
//!   has exited and before it is reaped) per sample, and the CPU of its waited-for children
//!   (bubblewrap, the supervisor, the commands) against the shell's; and the model server's
//!   CPU meanwhile (this process's), which a provider elsewhere would not take from the cores
//!   measured but which is in the wall time here.
//!
//! First, in process, the latency of one bash call through the tool set under each tier against
//! `bash -c` spawned directly (`--micro N` calls each, default 100; 0 skips it): the per-call
//! cost without the process start, the model or the reports around it. Then the same with a new
//! run sandbox for every call (made, one `true`, torn down), by each maker (the harness's own,
//! bubblewrap): what a run's sandbox costs, end to end.
//!
//! The machine's load average is printed before and after: it is shared with other builds, so
//! compare figures of one run only. Targets (issue 16, under the default tier `isolated`): at
//! most 5 ms per sample, 0.5 ms per extra call, 5 ms of harness CPU per sample; the bench exits
//! 1 when the after-build misses one.
//!
//! `--tmpdir DIR` gives the harness that temp dir (`TMPDIR`), where it makes each run's
//! workspace and scratch folders, and puts the suite, the reports and the bare shell's copies
//! there too: the cost of making and removing files depends on the file system (`--tmpdir
//! /dev/shm` against the default measures it). Those folders of every measured side stay until
//! the bench ends: removed after each side, the thousands of report files the bench deleted made
//! every file created after them slower on ext4 without a journal, a cost of the bench's own.
//!
//! Run with `cargo bench --bench sandbox_overhead` (`-- --rounds 5 --before
//! target/before/harness`). To profile one side by hand, `-- --serve` starts the model server
//! of this workload alone (`--calls` bash calls per run), prints its port and serves until its
//! stdin closes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use harness::testkit::{
    self, InstantConfig, InstantServer, LoadConfig, LoadServer, ScriptedToolCall, proc_stat,
};
use serde_json::json;

const COMMAND: &str = "ls; cat README.md";

/// The harness's allocator here too: the model server runs in this process, on the cores the
/// workload is measured on (a provider's would be on another machine), and under glibc's malloc
/// `malloc` and `free` were about a fifth of its samples.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const TARGET_SAMPLE_MS: f64 = 5.0;
const TARGET_CALL_MS: f64 = 0.5;
const TARGET_CPU_MS: f64 = 5.0;

fn arg(name: &str) -> Option<String> {
    std::env::args().skip_while(|a| a != name).nth(1)
}

fn args(name: &str) -> Vec<String> {
    let all: Vec<String> = std::env::args().collect();
    all.windows(2)
        .filter(|w| w[0] == name)
        .map(|w| w[1].clone())
        .collect()
}

/// One measured side: wall seconds, own CPU seconds, children's CPU seconds, and the CPU
/// seconds of this process meanwhile (the model server's, on the harness's side).
#[derive(Debug, Clone, Copy, Default)]
struct Measure {
    wall: f64,
    cpu: f64,
    children: f64,
    server: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

struct Setup {
    samples: usize,
    jobs: usize,
    tick: f64,
    place: PathBuf,
    /// The harness's `TMPDIR`, when not the machine's.
    tmpdir: Option<PathBuf>,
    /// The folders of the measured runs (the suites, reports, cassettes, the shell's copies),
    /// kept until the bench ends: removed after each run, their thousands of files made every
    /// file the next runs created slower on a file system such as ext4 without a journal, which
    /// will not reuse an inode freed in the last minute and scans past each such one first (the
    /// bench's own deletions, which a user's suite does not make).
    kept: std::sync::Mutex<Vec<tempfile::TempDir>>,
}

impl Setup {
    /// A folder for one measured side's files, kept until the bench ends.
    fn folder(&self) -> PathBuf {
        let dir = tempfile::tempdir_in(&self.place).unwrap();
        let path = dir.path().to_path_buf();
        self.kept.lock().unwrap().push(dir);
        path
    }
}

fn main() {
    let samples: usize = arg("--samples").map_or(50, |n| n.parse().expect("--samples N"));
    let calls: usize = arg("--calls").map_or(5, |n| n.parse().expect("--calls N"));
    let jobs: usize = arg("--jobs").map_or(2, |n| n.parse().expect("--jobs N"));
    let rounds: usize = arg("--rounds").map_or(3, |n| n.parse().expect("--rounds N"));
    let tiers: Vec<String> = arg("--tiers")
        .unwrap_or_else(|| "isolated,isolated:bwrap,workspace,none".to_owned())
        .split(',')
        .map(str::to_owned)
        .collect();
    let mut builds: Vec<(String, PathBuf)> = vec![(
        "after".to_owned(),
        PathBuf::from(env!("CARGO_BIN_EXE_harness")),
    )];
    for (i, before) in args("--before").into_iter().enumerate() {
        let name = if i == 0 {
            "before".to_owned()
        } else {
            format!("before{}", i + 1)
        };
        builds.push((name, PathBuf::from(before)));
    }
    let tmpdir = arg("--tmpdir").map(PathBuf::from);
    // The suite, the reports and the shell's copies go where the harness's folders go, so
    // that both sides make and remove their files on the same file system.
    let place = tempfile::tempdir_in(
        tmpdir
            .clone()
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR"))),
    )
    .unwrap();
    let setup = Setup {
        samples,
        jobs,
        tick: proc_stat::clock_ticks_per_second(),
        place: place.path().to_path_buf(),
        tmpdir,
        kept: std::sync::Mutex::new(Vec::new()),
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    if std::env::args().any(|a| a == "--serve") {
        let server = runtime.block_on(start_server(calls));
        println!("{}", server.port());
        std::io::Write::flush(&mut std::io::stdout()).unwrap();
        let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut Vec::new());
        return;
    }
    let servers: Vec<(usize, Server)> = [calls, 2 * calls]
        .into_iter()
        .map(|n| (n, runtime.block_on(start_server(n))))
        .collect();
    println!(
        "sandbox_overhead: {samples} samples x {calls} bash calls (and x {}), {jobs} at a time, \
         {rounds} rounds; command `{COMMAND}`; the harness's temp dir {}; load average before: {}",
        2 * calls,
        setup
            .tmpdir
            .clone()
            .unwrap_or_else(std::env::temp_dir)
            .display(),
        load_average()
    );
    for (name, path) in &builds {
        println!("  {name}: {}", path.display());
    }
    let micro: usize = arg("--micro").map_or(100, |n| n.parse().expect("--micro N"));
    if micro > 0 {
        runtime.block_on(per_call(&setup, &tiers, micro));
        runtime.block_on(per_sandbox(&setup, micro));
    }
    if rounds == 0 {
        return;
    }

    // results[(build, tier, calls)] = per-round measures; shell[calls] = per-round measures.
    let mut results: Vec<((String, String, usize), Vec<Measure>)> = Vec::new();
    let mut shell: Vec<(usize, Vec<Measure>)> = Vec::new();
    for round in 0..rounds {
        for (n, server) in &servers {
            let s = bare_shell(&setup, *n);
            push(&mut shell, *n, s);
            println!(
                "round {}: shell, {n} calls: {:.3} s wall, {:.3} s CPU",
                round + 1,
                s.wall,
                s.children
            );
            for tier in &tiers {
                for (name, path) in &builds {
                    let m = harness_run(&setup, path, tier, server);
                    println!(
                        "round {}: {name} {tier}, {n} calls: {:.3} s wall, harness CPU {:.3} s, children {:.3} s",
                        round + 1,
                        m.wall,
                        m.cpu,
                        m.children
                    );
                    push(&mut results, (name.clone(), tier.clone(), *n), m);
                }
            }
        }
    }
    println!("load average after: {}", load_average());

    let med = |v: &[Measure], f: fn(&Measure) -> f64| median(v.iter().map(f).collect());
    let shell_of = |n: usize| &shell.iter().find(|(k, _)| *k == n).unwrap().1;
    let sample_ms = |build: &str, tier: &str, n: usize| -> (f64, f64, f64, f64, f64) {
        let runs = &results
            .iter()
            .find(|((b, t, k), _)| b == build && t == tier && *k == n)
            .unwrap()
            .1;
        // Per-round differences against the shell of the same round, then the median.
        let overhead = median(
            runs.iter()
                .zip(shell_of(n))
                .map(|(h, s)| (h.wall - s.wall) * 1000.0 / setup.samples as f64)
                .collect(),
        );
        let cpu = med(runs, |m| m.cpu) * 1000.0 / setup.samples as f64;
        let children = med(runs, |m| m.children) * 1000.0 / setup.samples as f64;
        let server = med(runs, |m| m.server) * 1000.0 / setup.samples as f64;
        (med(runs, |m| m.wall), overhead, cpu, children, server)
    };
    println!();
    println!(
        "| build | tier | wall s ({calls} calls) | shell s | overhead ms/sample | extra call ms | harness CPU ms/sample | children CPU ms/sample | shell CPU ms/sample | model server CPU ms/sample |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let shell_wall = med(shell_of(calls), |m| m.wall);
    let shell_cpu = med(shell_of(calls), |m| m.children) * 1000.0 / samples as f64;
    let mut missed = Vec::new();
    for tier in &tiers {
        for (name, _) in &builds {
            let (wall, overhead, cpu, children, server) = sample_ms(name, tier, calls);
            let (_, overhead2, ..) = sample_ms(name, tier, 2 * calls);
            let extra = (overhead2 - overhead) / calls as f64;
            println!(
                "| {name} | {tier} | {wall:.3} | {shell_wall:.3} | {overhead:.2} | {extra:.3} | {cpu:.2} | {children:.2} | {shell_cpu:.2} | {server:.2} |"
            );
            if name == "after" && tier == "isolated" {
                if overhead > TARGET_SAMPLE_MS {
                    missed.push(format!(
                        "{overhead:.2} ms per sample (target {TARGET_SAMPLE_MS})"
                    ));
                }
                if extra > TARGET_CALL_MS {
                    missed.push(format!(
                        "{extra:.3} ms per extra call (target {TARGET_CALL_MS})"
                    ));
                }
                if cpu > TARGET_CPU_MS {
                    missed.push(format!(
                        "{cpu:.2} ms of harness CPU per sample (target {TARGET_CPU_MS})"
                    ));
                }
            }
        }
    }
    // The measured runs' folders, and the bench's own, go before it exits (which drops
    // nothing).
    drop(setup);
    drop(place);
    if !missed.is_empty() {
        for m in &missed {
            eprintln!("target missed under isolated: {m}");
        }
        std::process::exit(1);
    }
}

/// In process: `n` sequential bash calls through the tool set under each tier, and `n` direct
/// `bash -c` spawns, each after 5 warm-up calls; prints the median and mean milliseconds per
/// call, and this process's CPU per call (the tool's own work; the children's apart).
async fn per_call(setup: &Setup, tiers: &[String], n: usize) {
    use harness::sandbox::{Sandbox, Scratch};
    use harness::tools::{ToolContext, ToolSet, ToolSetSpec};
    let dir = tempfile::tempdir_in(&setup.place).unwrap();
    let ws = dir.path().canonicalize().unwrap().join("work");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("README.md"), "A tiny fixture.\n").unwrap();
    let cpu = || proc_stat::read("/proc/self/stat", setup.tick);
    let report = |what: &str, mut times: Vec<f64>, before: proc_stat::CpuTimes| {
        let after = cpu();
        let mean = times.iter().sum::<f64>() / times.len() as f64;
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!(
            "per call, in process: {what}: median {:.3} ms, mean {mean:.3} ms; CPU per call: this process {:.3} ms, its children {:.3} ms",
            times[times.len() / 2],
            (after.own - before.own) * 1000.0 / times.len() as f64,
            (after.children - before.children) * 1000.0 / times.len() as f64,
        );
    };
    for name in tiers {
        let (tier, bwrap) = tier_of(name);
        let sandbox = if bwrap {
            Sandbox::detect_with_bwrap(Some(tier))
        } else {
            Sandbox::detect(Some(tier))
        }
        .with_unprivileged_commands();
        let scratch = Scratch::new().unwrap();
        let mut ctx = ToolContext::new(&ws);
        ctx.temp_dir = scratch.logs().to_path_buf();
        ctx.jail = sandbox.jail(&ws).with_scratch(&scratch);
        let tools = ToolSet::new(&ToolSetSpec::all()).unwrap();
        let mut times = Vec::new();
        let mut before = cpu();
        for i in 0..n + 5 {
            if i == 5 {
                before = cpu();
            }
            let started = Instant::now();
            let result = tools
                .call("bash", json!({ "command": COMMAND }), &ctx)
                .await;
            assert!(!result.is_error, "{result:?}");
            if i >= 5 {
                times.push(started.elapsed().as_secs_f64() * 1000.0);
            }
        }
        report(name, times, before);
    }
    let mut times = Vec::new();
    let mut before = cpu();
    for i in 0..n + 5 {
        if i == 5 {
            before = cpu();
        }
        let started = Instant::now();
        let out = tokio::process::Command::new("bash")
            .arg("-c")
            .arg(COMMAND)
            .current_dir(&ws)
            .stdin(Stdio::null())
            .output()
            .await
            .unwrap();
        assert!(out.status.success());
        if i >= 5 {
            times.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    report("bash -c, spawned directly", times, before);
}

/// The model server of this workload, in this process.
enum Server {
    /// `testkit::instant_server`: a blocking thread per connection, the body never parsed.
    Instant(InstantServer),
    /// `testkit::load_server`: hyper on the async runtime, the body parsed as JSON (the
    /// benchmark's server until 2026-12-04, `--server load`).
    Load(LoadServer),
}

impl Server {
    fn port(&self) -> u16 {
        match self {
            Server::Instant(s) => s.addr().port(),
            Server::Load(s) => s.addr().port(),
        }
    }
}

/// The model server of this workload (`--server instant`, the default, or `load`): `calls`
/// bash calls, then the answer.
async fn start_server(calls: usize) -> Server {
    let tool_call = ScriptedToolCall {
        name: "bash".to_owned(),
        arguments: json!({ "command": COMMAND }),
    };
    match arg("--server").as_deref() {
        None | Some("instant") => Server::Instant(
            testkit::start_instant(InstantConfig {
                turns: calls + 1,
                tool_call,
                text: "Done.".to_owned(),
            })
            .expect("start the instant model server"),
        ),
        Some("load") => Server::Load(
            testkit::start_load(LoadConfig {
                turns_per_run: calls + 1,
                tool_call,
                ..LoadConfig::default()
            })
            .await,
        ),
        Some(other) => panic!("--server: `instant` or `load`, not `{other}`"),
    }
}

/// In process: `n` times a new jail under `isolated` (its sandbox made at the first command),
/// one `bash` call of `true`, and the jail dropped (its sandbox torn down), by each maker, after
/// 3 warm-up rounds; against `bash -c true` spawned directly. Prints the median and mean wall
/// milliseconds per round.
async fn per_sandbox(setup: &Setup, n: usize) {
    use harness::sandbox::{Sandbox, Scratch, Tier};
    use harness::tools::{ToolContext, ToolSet, ToolSetSpec};
    let dir = tempfile::tempdir_in(&setup.place).unwrap();
    let ws = dir.path().canonicalize().unwrap().join("work");
    std::fs::create_dir(&ws).unwrap();
    let tools = ToolSet::new(&ToolSetSpec::all()).unwrap();
    let summary = |what: &str, mut times: Vec<f64>| {
        let mean = times.iter().sum::<f64>() / times.len() as f64;
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!(
            "per sandbox, in process: {what}: median {:.3} ms, mean {mean:.3} ms",
            times[times.len() / 2]
        );
    };
    for (name, sandbox) in [
        ("isolated", Sandbox::detect(Some(Tier::Isolated))),
        (
            "isolated:bwrap",
            Sandbox::detect_with_bwrap(Some(Tier::Isolated)),
        ),
    ] {
        if sandbox.tier() != Tier::Isolated {
            println!("per sandbox, in process: {name}: unavailable here");
            continue;
        }
        let scratch = Scratch::new().unwrap();
        let mut times = Vec::new();
        for i in 0..n + 3 {
            let started = Instant::now();
            let mut ctx = ToolContext::new(&ws);
            ctx.temp_dir = scratch.logs().to_path_buf();
            ctx.jail = sandbox.jail(&ws).with_scratch(&scratch);
            let result = tools.call("bash", json!({ "command": "true" }), &ctx).await;
            assert!(!result.is_error, "{result:?}");
            drop(ctx);
            if i >= 3 {
                times.push(started.elapsed().as_secs_f64() * 1000.0);
            }
        }
        summary(name, times);
    }
    let mut times = Vec::new();
    for i in 0..n + 3 {
        let started = Instant::now();
        let out = tokio::process::Command::new("bash")
            .args(["-c", "true"])
            .current_dir(&ws)
            .stdin(Stdio::null())
            .output()
            .await
            .unwrap();
        assert!(out.status.success());
        if i >= 3 {
            times.push(started.elapsed().as_secs_f64() * 1000.0);
        }
    }
    summary("bash -c true, spawned directly", times);
}

fn push<K: PartialEq>(into: &mut Vec<(K, Vec<Measure>)>, key: K, m: Measure) {
    match into.iter_mut().find(|(k, _)| *k == key) {
        Some((_, v)) => v.push(m),
        None => into.push((key, vec![m])),
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// A `--tiers` name: the tier, and whether bubblewrap makes the sandboxes (`isolated:bwrap`).
fn tier_of(name: &str) -> (harness::sandbox::Tier, bool) {
    use harness::sandbox::Tier;
    match name {
        "isolated" => (Tier::Isolated, false),
        "isolated:bwrap" => (Tier::Isolated, true),
        "workspace" => (Tier::Workspace, false),
        "none" => (Tier::None, false),
        other => panic!("--tiers: unknown tier `{other}`"),
    }
}

/// One `harness run` of `samples` epochs of the trivial task, `jobs` at a time, under `tier`.
fn harness_run(setup: &Setup, harness: &Path, tier: &str, server: &Server) -> Measure {
    let dir = setup.folder();
    let suite = dir.join("tasks");
    testkit::write_trivial_task(&suite).unwrap();
    let mut command = Command::new(harness);
    command
        .arg("run")
        .arg(&suite)
        .args(["--cassette-mode", "live", "--model", "openai/load-gpt"])
        .arg("--base-url")
        .arg(format!("http://127.0.0.1:{}/v1", server.port()))
        .args(["--jobs", &setup.jobs.to_string()])
        .args(["--epochs", &setup.samples.to_string()])
        .args(["--sandbox", tier_of(tier).0.name()])
        .arg("--cassettes")
        .arg(dir.join("cassettes"))
        .arg("--reports")
        .arg(dir.join("reports"))
        .arg("--quiet")
        .env("OPENAI_API_KEY", "bench-key-not-secret")
        .env(
            harness::sandbox::MAKER_VAR,
            if tier_of(tier).1 { "bwrap" } else { "harness" },
        )
        .envs(setup.tmpdir.iter().map(|dir| ("TMPDIR", dir)))
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("CI")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let serving = proc_stat::read("/proc/self/stat", setup.tick).own;
    let started = Instant::now();
    let child = command.spawn().expect("start harness run");
    let pid = child.id() as i32;
    // Until it has exited, without reaping it: its stat then holds its final CPU times.
    let _ = nix::sys::wait::waitid(
        nix::sys::wait::Id::Pid(nix::unistd::Pid::from_raw(pid)),
        nix::sys::wait::WaitPidFlag::WEXITED | nix::sys::wait::WaitPidFlag::WNOWAIT,
    );
    let wall = started.elapsed().as_secs_f64();
    let served = proc_stat::read("/proc/self/stat", setup.tick).own;
    let times = proc_stat::read(&format!("/proc/{pid}/stat"), setup.tick);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "harness run under {tier} exited {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    Measure {
        wall,
        cpu: times.own,
        children: times.children,
        server: served - serving,
    }
}

/// The same commands from a bare shell: per sample, `calls` times `bash -c COMMAND` then
/// `bash -c true`, in a fresh copy of the fixture; `jobs` samples at a time.
fn bare_shell(setup: &Setup, calls: usize) -> Measure {
    let dir = setup.folder();
    let before = proc_stat::read("/proc/self/stat", setup.tick).children;
    let started = Instant::now();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..setup.jobs {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= setup.samples {
                        break;
                    }
                    let ws = dir.join(format!("s{i}"));
                    std::fs::create_dir(&ws).unwrap();
                    std::fs::write(ws.join("README.md"), "A tiny fixture.\n").unwrap();
                    for script in std::iter::repeat_n(COMMAND, calls).chain(["true"]) {
                        let out = Command::new("bash")
                            .arg("-c")
                            .arg(script)
                            .current_dir(&ws)
                            .stdin(Stdio::null())
                            .output()
                            .unwrap();
                        assert!(out.status.success());
                    }
                }
            });
        }
    });
    let wall = started.elapsed().as_secs_f64();
    let after = proc_stat::read("/proc/self/stat", setup.tick).children;
    Measure {
        wall,
        children: after - before,
        ..Measure::default()
    }
}
