//! Resume correctness under SIGKILL: a small suite (the shipped Python and shell tasks, 24 runs,
//! each check made a little slower) is run once straight through, then 20 times killed with
//! SIGKILL at a random moment (seeded, so the same moments every time) and resumed with
//! `harness run --resume` until complete. A trial counts as correct when the resumed folder is
//! complete (`report.json`), holds every run once (runs.csv rows, journal entries, run
//! folders), equals the straight run (summary.md, runs.csv without timings, edits.jsonl), and
//! no temporary folder of the killed harness is left.
//!
//! Run with `cargo bench --bench resume_kill` (see `benches/README.md`). Prints one line per
//! trial and the count; exits 1 unless all 20 are correct.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};

const TASKS: [&str; 6] = [
    "py-median",
    "py-slugify",
    "py-crlf",
    "py-envfile",
    "sh-args",
    "sh-logsummary",
];
const TRIALS: usize = 20;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh project: the tasks (checks slowed by `sleep 0.5`), their cassettes, a temp folder.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for sub in ["tasks", "cassettes", "tmp"] {
        std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
    }
    for id in TASKS {
        for sub in ["tasks", "cassettes"] {
            let ok = Command::new("cp")
                .arg("-a")
                .arg(root().join(sub).join(id))
                .arg(dir.path().join(sub).join(id))
                .status()
                .expect("cp")
                .success();
            assert!(ok);
        }
        let yaml = dir.path().join("tasks").join(id).join("task.yaml");
        let text = std::fs::read_to_string(&yaml).expect("task.yaml");
        // One-line checks only: a block scalar (`run: |`) is left as it is.
        let slowed: String = text
            .lines()
            .map(|l| {
                if l.trim_end().ends_with("run: |") {
                    l.to_owned()
                } else {
                    l.replace("run: ", "run: sleep 0.5 && ")
                }
            })
            .map(|l| l + "\n")
            .collect();
        std::fs::write(&yaml, slowed).expect("write");
    }
    dir
}

fn harness(project: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
    cmd.args(args)
        .current_dir(project)
        .env("TMPDIR", project.join("tmp"))
        .env_remove("CI")
        .env_remove("HARNESS_CASSETTE_MODE")
        .env_remove("GITHUB_STEP_SUMMARY")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

fn only_folder(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .next()
}

/// What must equal the straight run: summary.md, runs.csv (timings aside), edits.jsonl.
fn comparable(dir: &Path) -> Option<(String, String, String)> {
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).ok();
    Some((
        read("summary.md")?,
        harness::reports::csv::without_timings(&read("runs.csv")?).ok()?,
        read("edits.jsonl")?,
    ))
}

/// Why the folder is not a complete, duplicate-free report of `runs` runs (empty: it is).
fn problems(dir: &Path, runs: usize) -> Vec<String> {
    let mut out = Vec::new();
    let manifest: serde_json::Value = std::fs::read_to_string(dir.join("report.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    if manifest["complete"] != true {
        out.push("report.json does not say complete".to_owned());
    }
    let journal = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap_or_default();
    let keys: Vec<String> = journal
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| v["run"].as_str().unwrap_or_default().to_owned())
        .collect();
    let unique: BTreeSet<&String> = keys.iter().collect();
    if unique.len() != runs {
        out.push(format!("{} runs in the journal, not {runs}", unique.len()));
    }
    let rows = std::fs::read_to_string(dir.join("runs.csv"))
        .map(|t| t.lines().count().saturating_sub(1))
        .unwrap_or(0);
    if rows != runs {
        out.push(format!("{rows} rows in runs.csv, not {runs}"));
    }
    let folders = std::fs::read_dir(dir.join("runs")).map_or(0, |d| d.count());
    if folders != runs {
        out.push(format!("{folders} run folders, not {runs}"));
    }
    out
}

fn main() {
    let straight_project = project();
    let started = Instant::now();
    let status = harness(straight_project.path(), &["run", "tasks", "--jobs", "2"])
        .status()
        .expect("harness");
    let straight_time = started.elapsed();
    assert_eq!(status.code(), Some(0), "the straight run passes");
    let straight = only_folder(&straight_project.path().join("reports")).expect("report");
    let want = comparable(&straight).expect("straight report");
    let runs = TASKS.len() * 4;
    assert!(
        problems(&straight, runs).is_empty(),
        "the straight run is complete"
    );
    println!(
        "straight run: {runs} runs in {:.1} s; killing at random in [0.3 s, {:.1} s]",
        straight_time.as_secs_f64(),
        straight_time.as_secs_f64()
    );
    let mut rng = rand::rngs::StdRng::seed_from_u64(20261201);
    let mut correct = 0;
    for trial in 1..=TRIALS {
        let p = project();
        let at = Duration::from_secs_f64(rng.gen_range(0.3..straight_time.as_secs_f64()));
        let mut child = harness(p.path(), &["run", "tasks", "--jobs", "2"])
            .spawn()
            .expect("harness");
        std::thread::sleep(at);
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        let killed = child.wait().expect("wait").code().is_none();
        let Some(dir) = only_folder(&p.path().join("reports")) else {
            println!("trial {trial:>2}: killed at {at:.2?} before the report folder existed");
            continue;
        };
        let journaled = std::fs::read_to_string(dir.join("journal.jsonl"))
            .map(|t| t.lines().count())
            .unwrap_or(0);
        let left = std::fs::read_dir(p.path().join("tmp")).map_or(0, |d| d.count());
        let mut resumes = 0;
        let mut code = None;
        while resumes < 3 {
            resumes += 1;
            code = harness(p.path(), &["run", "--resume", dir.to_str().expect("utf-8")])
                .status()
                .expect("harness")
                .code();
            if code == Some(0) {
                break;
            }
        }
        let mut why = problems(&dir, runs);
        if comparable(&dir).as_ref() != Some(&want) {
            why.push("differs from the straight run".to_owned());
        }
        let after = std::fs::read_dir(p.path().join("tmp")).map_or(0, |d| d.count());
        if after != 0 {
            why.push(format!("{after} temp folders left"));
        }
        if code != Some(0) {
            why.push(format!("resume exited {code:?}"));
        }
        let ok = why.is_empty();
        correct += usize::from(ok);
        println!(
            "trial {trial:>2}: killed at {:>5.2} s ({}; {journaled:>2} runs journaled, {left} temp folders left), {resumes} resume(s): {}",
            at.as_secs_f64(),
            if killed { "SIGKILL" } else { "had ended" },
            if ok {
                "correct".to_owned()
            } else {
                why.join("; ")
            }
        );
    }
    println!(
        "{correct} of {TRIALS} resumed to a complete, duplicate-free report equal to the straight run"
    );
    if correct != TRIALS {
        std::process::exit(1);
    }
}
