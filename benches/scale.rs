//! Scale on one machine: thousands of runs in flight against a fast provider, through the real
//! release binary, and what the harness itself costs.
//!
//! The load server (`testkit::load_server`: every request answered at once with a complete
//! OpenAI Chat stream, no 429s) runs in this process. `harness run` is a child process — the
//! binary cargo builds beside this bench (`CARGO_BIN_EXE_harness`, release profile under
//! `cargo bench`) — run live against it: `--runs` epochs of a trivial task (one `README.md`, check
//! `true`), `--jobs` runs in flight, `--turns` model turns per run (the turns before the last
//! call `read README.md`), the default sandbox (`isolated` where bubblewrap works), the provider's
//! `max_in_flight` raised to `--jobs` in the suite's `harness.yaml`.
//!
//! Measured on the child alone:
//! - peak RSS: `VmHWM` of `/proc/PID/status`, sampled every 10 ms while it lives (a high-water
//!   mark, so a sample taken any time after the peak shows it), with `VmRSS` at each quarter of
//!   the turns served, to show whether memory grows with the runs done;
//! - CPU: utime + stime of `/proc/PID/stat`, read once the child has exited and before it is
//!   reaped (a zombie's `stat` keeps its final times), so its waited-for children (the checks,
//!   bubblewrap) are apart (cutime + cstime); divided by the turns the server answered. The CPU at
//!   the moment the server answered the last turn splits it into the run phase and the rest
//!   (reports);
//! - report time: from the last write of `events.jsonl` (the last run's `RunFinished`) to the last
//!   report file written (`runs.csv`, `summary.csv`, `summary.md`, `report.html`, `junit.xml`).
//!
//! Then it checks the report: `runs.csv` has one row per run, every one `passed` with `--turns`
//! turns. Exits 1 if a target is missed (peak RSS 200 MiB, 1 ms of harness CPU per turn).
//!
//! Run with `cargo bench --bench scale` (`-- --runs 10000 --jobs 256 --turns 4`, the defaults;
//! `--runs 1000,10000` runs several sizes in turn; `--sandbox workspace` passes that tier;
//! `--tmpdir DIR` is the child's TMPDIR, where its workspaces go; `--dir DIR` holds the suite and
//! the report folders, by default cargo's target/tmp; `--harness PATH` measures another binary).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use harness::testkit::{self, LoadConfig, LoadServer, proc_stat};

const PEAK_TARGET_MIB: f64 = 200.0;
const CPU_PER_TURN_TARGET_MS: f64 = 1.0;

fn arg(name: &str) -> Option<String> {
    std::env::args().skip_while(|a| a != name).nth(1)
}

fn main() {
    let sizes: Vec<usize> = arg("--runs")
        .unwrap_or_else(|| "10000".to_owned())
        .split(',')
        .map(|n| n.parse().expect("--runs takes numbers, comma-separated"))
        .collect();
    let jobs: usize = arg("--jobs").map_or(256, |n| n.parse().expect("--jobs N"));
    let turns: usize = arg("--turns").map_or(4, |n| n.parse().expect("--turns N"));
    let sandbox = arg("--sandbox");
    let tmpdir = arg("--tmpdir").map(PathBuf::from);
    let place =
        arg("--dir").map_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")), PathBuf::from);
    let tick = proc_stat::clock_ticks_per_second();
    // `--harness PATH` measures another build (an older one, to compare).
    let harness = arg("--harness").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_harness")),
        PathBuf::from,
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(testkit::start_load(LoadConfig {
        turns_per_run: turns,
        ..LoadConfig::default()
    }));
    let workspaces = tmpdir.clone().unwrap_or_else(std::env::temp_dir);
    println!(
        "scale: {} as a child process, {jobs} in flight, {turns} turns per run, sandbox {}, \
         workspaces in {} ({}), report folders in {} ({})",
        harness.display(),
        sandbox.as_deref().unwrap_or("default"),
        workspaces.display(),
        file_system(&workspaces),
        place.display(),
        file_system(&place),
    );
    let setup = Setup {
        harness: &harness,
        server: &server,
        jobs,
        turns,
        sandbox: sandbox.as_deref(),
        tmpdir: tmpdir.as_deref(),
        place: &place,
        tick,
    };
    let mut results = Vec::new();
    for &runs in &sizes {
        let m = measure(&setup, runs);
        m.print();
        results.push(m);
    }
    println!();
    println!(
        "| runs | in flight | turns | wall s | turns/s | peak RSS MiB | RSS at 25/50/75/100% of turns MiB | harness CPU s | CPU ms/turn (all) | CPU ms/turn (run phase) | checks CPU s | report s | report CPU s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for m in &results {
        println!(
            "| {} | {jobs} | {} | {:.1} | {:.0} | {:.1} | {} | {:.2} | {:.3} | {:.3} | {:.2} | {:.2} | {:.2} |",
            m.runs,
            m.turns,
            m.wall.as_secs_f64(),
            m.turns as f64 / m.run_wall.as_secs_f64(),
            m.peak_mib,
            m.quarters
                .iter()
                .map(|q| format!("{q:.0}"))
                .collect::<Vec<_>>()
                .join(" / "),
            m.cpu,
            m.cpu_per_turn_ms(),
            m.run_cpu * 1000.0 / m.turns as f64,
            m.children_cpu,
            m.report_time.as_secs_f64(),
            m.cpu - m.run_cpu,
        );
    }
    let missed: Vec<String> = results
        .iter()
        .flat_map(|m| {
            let mut missed = Vec::new();
            if m.peak_mib >= PEAK_TARGET_MIB {
                missed.push(format!(
                    "{} runs: peak RSS {:.1} MiB (target: under {PEAK_TARGET_MIB} MiB)",
                    m.runs, m.peak_mib
                ));
            }
            if m.cpu_per_turn_ms() >= CPU_PER_TURN_TARGET_MS {
                missed.push(format!(
                    "{} runs: {:.3} ms of harness CPU per turn (target: under {CPU_PER_TURN_TARGET_MS} ms)",
                    m.runs,
                    m.cpu_per_turn_ms()
                ));
            }
            missed
        })
        .collect();
    if !missed.is_empty() {
        for m in &missed {
            eprintln!("target missed: {m}");
        }
        std::process::exit(1);
    }
}

/// One `harness run` of `runs` runs, measured.
struct Measured {
    runs: usize,
    turns: u64,
    wall: Duration,
    /// From the start to the last turn served.
    run_wall: Duration,
    peak_mib: f64,
    /// VmRSS when a quarter, half, three quarters and all of the turns were served.
    quarters: [f64; 4],
    /// Harness CPU (user + system), seconds, whole life.
    cpu: f64,
    /// Harness CPU when the last turn was served.
    run_cpu: f64,
    /// CPU of the harness's waited-for children (checks, bubblewrap), seconds.
    children_cpu: f64,
    report_time: Duration,
}

impl Measured {
    fn cpu_per_turn_ms(&self) -> f64 {
        self.cpu * 1000.0 / self.turns as f64
    }

    fn print(&self) {
        println!(
            "{} runs: {:.1} s, {} turns, peak RSS {:.1} MiB, harness CPU {:.2} s ({:.3} ms/turn), checks {:.2} s, reports {:.2} s",
            self.runs,
            self.wall.as_secs_f64(),
            self.turns,
            self.peak_mib,
            self.cpu,
            self.cpu_per_turn_ms(),
            self.children_cpu,
            self.report_time.as_secs_f64()
        );
    }
}

/// What every measured run shares.
struct Setup<'a> {
    harness: &'a Path,
    server: &'a LoadServer,
    jobs: usize,
    turns: usize,
    sandbox: Option<&'a str>,
    /// The child's TMPDIR (its workspaces and per-run scratch folders).
    tmpdir: Option<&'a Path>,
    /// Where the suite and the report folders go.
    place: &'a Path,
    tick: f64,
}

fn measure(setup: &Setup<'_>, runs: usize) -> Measured {
    let Setup {
        harness,
        server,
        jobs,
        turns,
        sandbox,
        tmpdir,
        place,
        tick,
    } = *setup;
    let scratch = tempfile::tempdir_in(place).unwrap();
    let suite = scratch.path().join("tasks");
    testkit::write_trivial_task(&suite).unwrap();
    std::fs::write(
        suite.join("harness.yaml"),
        format!("providers:\n  openai:\n    max_in_flight: {jobs}\n"),
    )
    .unwrap();
    let reports = scratch.path().join("reports");
    let before = server.stats().completed;
    let expected_turns = (runs * turns) as u64;
    let mut command = Command::new(harness);
    command
        .arg("run")
        .arg(&suite)
        .args(["--cassette-mode", "live", "--model", "openai/load-gpt"])
        .arg("--base-url")
        .arg(format!("http://127.0.0.1:{}/v1", server.addr().port()))
        .args(["--jobs", &jobs.to_string(), "--epochs", &runs.to_string()])
        .arg("--cassettes")
        .arg(scratch.path().join("cassettes"))
        .arg("--reports")
        .arg(&reports)
        .arg("--quiet")
        .env("OPENAI_API_KEY", "bench-key-not-secret")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("CI")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(tier) = sandbox {
        command.args(["--sandbox", tier]);
    }
    if let Some(dir) = tmpdir {
        command.env("TMPDIR", dir);
    }
    let started = Instant::now();
    let mut child = command.spawn().expect("start harness run");
    let pid = child.id();
    // Drain the pipes so the child never blocks on them.
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());

    let mut peak_kib = 0u64;
    let mut quarters = [0.0; 4];
    let mut next_quarter = 0;
    let mut run_cpu = None;
    let mut run_wall = None;
    let (cpu, children_cpu) = loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the child's stat");
        let proc_stat::CpuTimes {
            state,
            own,
            children,
        } = proc_stat::parse(&stat, tick).expect("the child's stat line");
        if state == 'Z' {
            break (own, children);
        }
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            peak_kib = peak_kib.max(status_kib(&status, "VmHWM:").unwrap_or(0));
            let served = server.stats().completed - before;
            while next_quarter < 4 && served * 4 >= expected_turns * (next_quarter as u64 + 1) {
                quarters[next_quarter] = status_kib(&status, "VmRSS:").unwrap_or(0) as f64 / 1024.0;
                next_quarter += 1;
            }
            if run_cpu.is_none() && served >= expected_turns {
                run_cpu = Some(own);
                run_wall = Some(started.elapsed());
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let wall = started.elapsed();
    let status = child.wait().unwrap();
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    assert!(
        status.success(),
        "harness run exited {status}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let turns_served = server.stats().completed - before;
    assert_eq!(turns_served, expected_turns, "turns served");

    let dir = only_folder(&reports);
    let runs_csv = std::fs::read_to_string(dir.join("runs.csv")).unwrap();
    check_runs_csv(&runs_csv, runs, turns);
    let last_event = mtime(&dir.join("events.jsonl"));
    let last_report = [
        "runs.csv",
        "summary.csv",
        "summary.md",
        "report.html",
        "junit.xml",
    ]
    .iter()
    .map(|f| mtime(&dir.join(f)))
    .max()
    .unwrap();
    let report_time = last_report.duration_since(last_event).unwrap_or_default();
    let report_bytes = std::fs::metadata(dir.join("report.html")).unwrap().len();
    println!(
        "  report.html {:.1} MiB; report folder {}",
        report_bytes as f64 / 1024.0 / 1024.0,
        dir.display()
    );
    let _ = std::io::stdout().flush();
    Measured {
        runs,
        turns: turns_served,
        wall,
        run_wall: run_wall.unwrap_or(wall),
        peak_mib: peak_kib as f64 / 1024.0,
        quarters,
        cpu,
        run_cpu: run_cpu.unwrap_or(cpu),
        children_cpu,
        report_time,
    }
}

/// Every row of `runs.csv` is a passed run of `turns` turns, and there are `runs` of them.
fn check_runs_csv(text: &str, runs: usize, turns: usize) {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().expect("runs.csv header").clone();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("runs.csv has no column {name}"))
    };
    let (outcome, turns_col) = (column("outcome"), column("turns"));
    let mut rows = 0;
    for row in reader.records() {
        let row = row.expect("a runs.csv row");
        assert_eq!(&row[outcome], "passed", "{row:?}");
        assert_eq!(row[turns_col], turns.to_string(), "{row:?}");
        rows += 1;
    }
    assert_eq!(rows, runs, "rows in runs.csv");
}

fn drain(mut pipe: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut out = String::new();
        let _ = pipe.read_to_string(&mut out);
        out
    })
}

/// A `Name:   123 kB` line of `/proc/PID/status`, in KiB.
fn status_kib(status: &str, name: &str) -> Option<u64> {
    status
        .lines()
        .find(|l| l.starts_with(name))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn mtime(path: &Path) -> SystemTime {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn only_folder(dir: &Path) -> PathBuf {
    let folders: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    folders.into_iter().next().unwrap()
}

/// The type of the file system holding `dir` (`stat -f`), since creating and removing files is
/// much of a run's cost and varies with it: `ext2/ext3` is what `stat` calls ext4 too.
fn file_system(dir: &Path) -> String {
    Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(dir)
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "file system unknown".to_owned())
}
