//! Reports that outlive one process: Ctrl-C mid-suite leaves a valid partial report (exit 130)
//! that `--resume` completes with no duplicates and nothing lost; a SIGKILL leaves temporary
//! folders the next run proves dead and removes; `--resume` refuses another suite;
//! `--rerun-errors` completes the report in place, the runs a SIGKILL left unfinished included;
//! the shipped suite run as 3 shards in separate processes and merged is the unsharded run, and
//! a shard missing from the merge is named.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use super::run::without_timings;

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A project with the shipped tasks `ids` and their cassettes, every command check made
/// `slow` seconds slower (so a run is still in its checks when the signal comes), and a private
/// temp folder the harness uses (`TMPDIR`). The delay is read from the file `slow` at the
/// project's root (each task requires it, so the sandbox mounts it), so `set_slow(0)` speeds
/// up the runs after the signal without changing a task.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new(ids: &[&str], slow: u32) -> Project {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["tasks", "cassettes", "tmp"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        for id in ids {
            for (from, to) in [("tasks", "tasks"), ("cassettes", "cassettes")] {
                let status = Command::new("cp")
                    .arg("-a")
                    .arg(repo_root().join(from).join(id))
                    .arg(dir.path().join(to).join(id))
                    .status()
                    .unwrap();
                assert!(status.success());
            }
            if slow > 0 {
                let knob = dir.path().join("slow");
                let yaml = dir.path().join("tasks").join(id).join("task.yaml");
                let text = std::fs::read_to_string(&yaml).unwrap();
                let slowed = text.replace(
                    "run: ",
                    &format!("run: sleep \"$(cat {})\" && ", knob.display()),
                );
                assert_ne!(slowed, text, "{id} has a command check");
                let required = format!("requires:\n  files: [\"{}\"]\n", knob.display());
                std::fs::write(&yaml, slowed + &required).unwrap();
            }
        }
        let project = Project { dir };
        project.set_slow(slow);
        project
    }

    /// How many seconds each command check sleeps from now on.
    fn set_slow(&self, seconds: u32) {
        std::fs::write(self.root().join("slow"), format!("{seconds}\n")).unwrap();
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn tmp(&self) -> PathBuf {
        self.root().join("tmp")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
        cmd.args(args)
            .current_dir(self.root())
            .env("TMPDIR", self.tmp())
            .env_remove("CI")
            .env_remove("HARNESS_CASSETTE_MODE")
            .env_remove("GITHUB_STEP_SUMMARY");
        cmd
    }

    /// Runs the harness to its end: (exit code, stdout, stderr).
    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.command(args).output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Starts `harness run` and sends `signal` once `finished` runs have finished (it prints
    /// one line per finished run when stderr is not a terminal); when `then` is given, that
    /// signal too, at the same moment (a second Ctrl-C pressed before the wind-down is over);
    /// returns the exit code (`None`: killed by a signal) and stderr.
    fn run_and_signal(
        &self,
        args: &[&str],
        finished: usize,
        signal: Signal,
        then: Option<Signal>,
    ) -> (Option<i32>, String) {
        let mut child = self
            .command(args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = Pid::from_raw(child.id() as i32);
        let mut stderr = String::new();
        let mut seen = 0;
        let mut sent = false;
        for line in BufReader::new(child.stderr.take().unwrap()).lines() {
            let line = line.unwrap();
            if line.starts_with('[') && line.contains("] ") {
                seen += 1;
            }
            stderr.push_str(&line);
            stderr.push('\n');
            if seen >= finished && !sent {
                // Mid-run, as a real signal lands: while a run in flight has its temp folders
                // (each owned from its first moment, so any moment will do). Right after the
                // finished lines the next runs may not have started yet (on a loaded machine a
                // Ctrl-C once came before them, and no run was stopped mid-way). Seen with the
                // harness stopped, so that its last run cannot end and remove them between the
                // look and the signal, as it did once.
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
                let mut stopped = false;
                while std::time::Instant::now() < deadline {
                    if !self.leftovers().is_empty() {
                        kill(pid, Signal::SIGSTOP).unwrap();
                        if !self.leftovers().is_empty() {
                            stopped = true;
                            break;
                        }
                        kill(pid, Signal::SIGCONT).unwrap();
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                kill(pid, signal).unwrap();
                // A second signal of the same kind sent while the first is pending would merge
                // with it, and one sent once the harness says it winds down can come after the
                // wind-down is over (it takes milliseconds): another kind, sent while the
                // harness is stopped, is delivered right after the first, every time.
                if let Some(then) = then {
                    kill(pid, then).unwrap();
                }
                if stopped && signal != Signal::SIGKILL {
                    kill(pid, Signal::SIGCONT).unwrap();
                }
                sent = true;
            }
        }
        let status = child.wait().unwrap();
        assert!(
            sent,
            "the suite ended before {finished} runs finished:\n{stderr}"
        );
        (status.code(), stderr)
    }

    /// The one report folder under `reports/`.
    fn report(&self, under: &str) -> PathBuf {
        let mut folders: Vec<PathBuf> = std::fs::read_dir(self.root().join(under))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert_eq!(folders.len(), 1, "{folders:?}");
        folders.pop().unwrap()
    }

    /// Processes still working in the project's temp folder (the runs' workspaces), as
    /// `pid cwd`.
    fn processes(&self) -> Vec<String> {
        let tmp = self.tmp().canonicalize().unwrap();
        let mut out = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            if let Ok(cwd) = std::fs::read_link(e.path().join("cwd")) {
                if cwd.starts_with(&tmp) {
                    out.push(format!("{name} {}", cwd.display()));
                }
            }
        }
        out
    }

    /// [`Project::processes`] once there are none, or after `seconds`.
    fn processes_left_after(&self, seconds: u64) -> Vec<String> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
        loop {
            let left = self.processes();
            if left.is_empty() || std::time::Instant::now() >= deadline {
                return left;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// The harness's temporary folders left in the private temp folder.
    fn leftovers(&self) -> Vec<String> {
        std::fs::read_dir(self.tmp())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("harness-"))
            .collect()
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&read(&dir.join("report.json"))).unwrap()
}

/// The run keys of a `runs.csv` (task, provider, model, epoch, strategy), asserting each once.
fn unique_rows(csv_text: &str) -> BTreeSet<String> {
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let col = |n: &str| headers.iter().position(|h| h == n).unwrap();
    let (t, p, m, e, s) = (
        col("task"),
        col("provider"),
        col("model"),
        col("epoch"),
        col("edit_strategy"),
    );
    let mut keys = BTreeSet::new();
    for row in reader.records() {
        let row = row.unwrap();
        let key = format!(
            "{} {} {} {} {}",
            &row[t], &row[p], &row[m], &row[e], &row[s]
        );
        assert!(keys.insert(key.clone()), "{key} twice in\n{csv_text}");
    }
    keys
}

/// Every file of a finished report folder that a resumed one must reproduce, timings aside.
fn comparable(dir: &Path) -> (String, String, String, usize) {
    let journal = read(&dir.join("journal.jsonl"));
    (
        read(&dir.join("summary.md")),
        without_timings(&read(&dir.join("runs.csv"))),
        read(&dir.join("edits.jsonl")),
        journal.lines().count(),
    )
}

const TASKS: [&str; 2] = ["py-median", "sh-args"];

#[test]
fn ctrl_c_mid_suite_leaves_a_partial_report_that_resume_completes() {
    let project = Project::new(&TASKS, 2);
    let (code, stderr) =
        project.run_and_signal(&["run", "tasks", "--jobs", "2"], 2, Signal::SIGINT, None);
    assert_eq!(code, Some(130), "{stderr}");
    project.set_slow(0);
    assert!(
        stderr.contains("interrupted: no more runs start"),
        "{stderr}"
    );
    let dir = project.report("reports");
    let m = manifest(&dir);
    assert_eq!(m["interrupted"], true, "{m}");
    assert_eq!(m["complete"], false, "{m}");
    let counts = &m["counts"];
    let finished = counts["finished"].as_u64().unwrap() as usize;
    assert_eq!(counts["planned"], 8, "{m}");
    assert!((2..8).contains(&finished), "{m}");
    assert_eq!(
        finished
            + counts["interrupted"].as_u64().unwrap() as usize
            + counts["not_started"].as_u64().unwrap() as usize,
        8,
        "{m}"
    );
    assert!(
        counts["interrupted"].as_u64().unwrap() >= 1,
        "a run was in its checks: {m}"
    );
    // A valid partial report: every finished run once, in every file.
    let runs = read(&dir.join("runs.csv"));
    assert_eq!(unique_rows(&runs).len(), finished, "{runs}");
    assert!(
        runs.lines().skip(1).all(|l| l.contains(",passed,")),
        "{runs}"
    );
    assert_eq!(read(&dir.join("journal.jsonl")).lines().count(), finished);
    let summary = read(&dir.join("summary.md"));
    assert!(
        summary.starts_with(&format!("> **Interrupted: {finished} of 8 runs finished")),
        "{summary}"
    );
    assert!(read(&dir.join("report.html")).contains("Interrupted: "));
    let junit = read(&dir.join("junit.xml"));
    assert_eq!(junit.matches("<testcase ").count(), finished, "{junit}");
    // The interrupted runs' workspaces and processes are gone.
    assert_eq!(project.leftovers(), Vec::<String>::new());
    assert_eq!(project.processes(), Vec::<String>::new());

    // --resume runs only the rest, in place.
    let dir_arg = dir.to_str().unwrap();
    let (code, stdout, stderr) = project.run(&["run", "--resume", dir_arg]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!(
            "{finished} of its 8 run(s) finished; running {}",
            8 - finished
        )),
        "{stderr}"
    );
    let m = manifest(&dir);
    assert_eq!(
        (m["interrupted"].clone(), m["complete"].clone()),
        (false.into(), true.into())
    );
    let resumed = comparable(&dir);
    assert_eq!(unique_rows(&read(&dir.join("runs.csv"))).len(), 8);
    assert_eq!(
        resumed.3, 8,
        "one journal entry per run: none twice, none lost"
    );
    assert_eq!(std::fs::read_dir(dir.join("runs")).unwrap().count(), 8);

    // The same as a run that was never interrupted.
    let (code, _, stderr) = project.run(&["run", "tasks", "--reports", "straight"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(resumed, comparable(&project.report("straight")));
}

#[test]
fn a_second_ctrl_c_exits_at_once_and_kills_what_runs() {
    // The first Ctrl-C after a run has finished cancels the runs in their (slowed) checks; the
    // second (a SIGTERM, which the harness takes as the same) comes as the suite starts to
    // wind down and ends the harness there, its commands killed all the same.
    let project = Project::new(&TASKS, 3);
    let started = std::time::Instant::now();
    let (code, stderr) = project.run_and_signal(
        &["run", "tasks", "--jobs", "2"],
        1,
        Signal::SIGINT,
        Some(Signal::SIGTERM),
    );
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted again: exiting now"),
        "{stderr}"
    );
    assert!(
        started.elapsed().as_secs() < 10,
        "the suite did not run on to its end"
    );
    // Killed as the harness exits: under `isolated` the last of them go with their sandbox's
    // PID 1 an instant later, which a loaded machine stretches.
    assert_eq!(project.processes_left_after(3), Vec::<String>::new());
    let dir = project.report("reports");
    assert_eq!(manifest(&dir)["complete"], false);
}

#[test]
fn after_a_sigkill_the_next_run_removes_what_was_left_and_resume_completes() {
    let project = Project::new(&TASKS, 2);
    let (code, stderr) =
        project.run_and_signal(&["run", "tasks", "--jobs", "2"], 1, Signal::SIGKILL, None);
    assert_eq!(code, None, "killed: {stderr}");
    project.set_slow(0);
    let left = project.leftovers();
    assert!(!left.is_empty(), "runs in flight leave their folders");
    let dir = project.report("reports");
    let finished = read(&dir.join("journal.jsonl")).lines().count();
    assert!((1..8).contains(&finished), "{finished}");
    assert_eq!(manifest(&dir)["complete"], false);

    let (code, stdout, stderr) = project.run(&["run", "--resume", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("temporary folder(s) left by a harness that was killed"),
        "{stderr}"
    );
    assert_eq!(project.leftovers(), Vec::<String>::new(), "was: {left:?}");
    let resumed = comparable(&dir);
    assert_eq!(resumed.3, 8, "{:?}", read(&dir.join("journal.jsonl")));
    let (code, _, stderr) = project.run(&["run", "tasks", "--reports", "straight"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(resumed, comparable(&project.report("straight")));
}

#[test]
fn rerun_errors_after_a_sigkill_runs_the_runs_that_never_finished_too() {
    // A broken cassette (an infrastructure error if its run is reached) and a suite killed
    // mid-run: the user fixes the cassette and asks for the errored runs. `--resume` refuses the
    // changed cassette, so `--rerun-errors` must finish the folder, never-finished runs included.
    let project = Project::new(&TASKS, 2);
    let cassette = project
        .root()
        .join("cassettes/sh-args/openai--scripted-gpt.yaml");
    let good = read(&cassette);
    std::fs::write(&cassette, "not: [a cassette\n").unwrap();
    let (code, stderr) =
        project.run_and_signal(&["run", "tasks", "--jobs", "2"], 1, Signal::SIGKILL, None);
    assert_eq!(code, None, "killed: {stderr}");
    project.set_slow(0);
    let dir = project.report("reports");
    let dir_arg = dir.to_str().unwrap();
    let journal = read(&dir.join("journal.jsonl"));
    let finished = journal.lines().count();
    assert!((1..8).contains(&finished), "{finished}");
    let errored = journal.matches(r#""outcome":"error""#).count();
    std::fs::write(&cassette, good).unwrap();

    let (code, _, stderr) = project.run(&["run", "--resume", dir_arg]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("cassette `sh-args/openai--scripted-gpt.yaml` changed"),
        "{stderr}"
    );
    let (code, stdout, stderr) = project.run(&["run", "--rerun-errors", dir_arg]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let never = 8 - finished;
    let why = match errored {
        0 => format!("({never} never finished)"),
        n => format!("({n} ended in an infrastructure error, {never} never finished)"),
    };
    assert!(
        stderr.contains(&format!(
            "{} of its 8 run(s) finished; running {} {why}",
            finished - errored,
            never + errored
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "warning: {never} run(s) of {dir_arg} never finished (the harness was stopped before \
             them); `--rerun-errors` runs them too, as `--resume` would"
        )),
        "{stderr}"
    );
    let m = manifest(&dir);
    assert_eq!(m["complete"], true, "{m}");
    assert!(!read(&dir.join("summary.md")).contains("Incomplete"));
    let rerun = comparable(&dir);
    assert_eq!(rerun.3, 8, "{:?}", read(&dir.join("journal.jsonl")));
    let (code, _, stderr) = project.run(&["run", "tasks", "--reports", "straight"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(rerun, comparable(&project.report("straight")));
}

#[test]
fn resume_refuses_another_suite_and_other_options() {
    let project = Project::new(&["py-median"], 0);
    let (code, _, stderr) = project.run(&["run", "tasks", "--epochs", "2"]);
    assert_eq!(code, 0, "{stderr}");
    let dir = project.report("reports");
    let dir_arg = dir.to_str().unwrap();
    // The report's options are taken; a given one must agree.
    let (code, _, stderr) = project.run(&["run", "--resume", dir_arg, "--epochs", "3"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("`--epochs 3` is not what the report was run with (`--epochs 2`)"),
        "{stderr}"
    );
    let (code, _, stderr) = project.run(&["run", "--resume", dir_arg, "--partition", "hash:1/2"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("the report is not a shard"), "{stderr}");
    // A changed task or cassette is another suite.
    let yaml = project.root().join("tasks/py-median/task.yaml");
    let text = read(&yaml);
    std::fs::write(&yaml, format!("{text}\n# changed\n")).unwrap();
    let (code, _, stderr) = project.run(&["run", "--resume", dir_arg]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("was run with another suite: task `py-median` changed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("hint: a report is completed only with the suite"),
        "{stderr}"
    );
    std::fs::write(&yaml, text).unwrap();
    let cassette = project
        .root()
        .join("cassettes/py-median/anthropic--scripted-claude.yaml");
    let recorded = read(&cassette);
    std::fs::write(
        &cassette,
        recorded.replace("recorded_at:", "# x\nrecorded_at:"),
    )
    .unwrap();
    let (code, _, stderr) = project.run(&["run", "--resume", dir_arg]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("cassette `py-median/anthropic--scripted-claude.yaml` changed"),
        "{stderr}"
    );
    std::fs::write(&cassette, recorded).unwrap();
    // A folder that is no report says so.
    let (code, _, stderr) = project.run(&["run", "--resume", "tasks"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("has no report.json"), "{stderr}");
    // Unchanged: nothing to run, the report stays complete.
    let (code, _, stderr) = project.run(&["run", "--resume", dir_arg]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("8 of its 8 run(s) finished; running 0"),
        "{stderr}"
    );
}

#[test]
fn partitions_are_validated_up_front() {
    let project = Project::new(&["py-median"], 0);
    for (bad, why) in [
        ("hash:0/3", "M is 1-based"),
        ("count:4/3", "M must be from 1 to 3"),
        ("slice:1/2", "unknown kind `slice`"),
    ] {
        let (code, _, stderr) = project.run(&["run", "tasks", "--partition", bad]);
        assert_eq!(code, 2, "{bad}: {stderr}");
        assert!(
            stderr.contains(&format!("error: `--partition {bad}` is not a partition"))
                && stderr.contains(why)
                && stderr.contains("hint: write `hash:M/N`"),
            "{bad}: {stderr}"
        );
    }
    assert!(!project.root().join("reports").exists(), "nothing ran");
}

/// Reads the value of an insta snapshot file (what follows its header).
fn snapshot_value(name: &str) -> String {
    let text = read(&repo_root().join("tests/integration/snapshots").join(name));
    let body = text.splitn(3, "---\n").nth(2).unwrap();
    body.trim_end().to_owned()
}

#[test]
#[ignore = "slow: .ci/run runs it (`cargo test -- --ignored`)"]
fn the_shipped_suite_in_three_shards_merges_into_the_unsharded_report() {
    let reports = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let harness = |args: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
        cmd.args(args)
            .current_dir(repo_root())
            .env("TMPDIR", tmp.path())
            .env_remove("CI")
            .env_remove("HARNESS_CASSETTE_MODE")
            .env_remove("GITHUB_STEP_SUMMARY");
        cmd
    };
    // Three machines: three processes at once, one shard each.
    let shards: Vec<PathBuf> = (1..=3)
        .map(|m| reports.path().join(format!("shard-{m}")))
        .collect();
    let children: Vec<_> = shards
        .iter()
        .enumerate()
        .map(|(i, dir)| {
            harness(&[
                "run",
                "tasks",
                "--jobs",
                "1",
                "-q",
                "--partition",
                &format!("hash:{}/3", i + 1),
                "--reports",
                dir.to_str().unwrap(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    let mut folders = Vec::new();
    let mut sizes = Vec::new();
    for (child, dir) in children.into_iter().zip(&shards) {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let folder = std::fs::read_dir(dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let m = manifest(&folder);
        assert_eq!(
            m["plan"].as_array().unwrap().len(),
            36,
            "the whole plan in every shard"
        );
        sizes.push(m["counts"]["planned"].as_u64().unwrap());
        folders.push(folder);
    }
    assert_eq!(sizes.iter().sum::<u64>(), 36, "{sizes:?}");
    assert!(
        sizes.iter().all(|n| *n > 0 && n % 4 == 0),
        "whole tasks: {sizes:?}"
    );
    let folder_args: Vec<&str> = folders.iter().map(|f| f.to_str().unwrap()).collect();

    // All three merged: the unsharded report, snapshot included.
    let merged = reports.path().join("merged");
    let mut args = vec!["merge"];
    args.extend(&folder_args);
    args.extend([
        "--into",
        merged.to_str().unwrap(),
        "--snapshot",
        "cassettes/suite.snap",
    ]);
    let out = harness(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("snapshot cassettes/suite.snap matches"),
        "{stderr}"
    );
    assert_eq!(
        read(&merged.join("summary.md")).trim_end(),
        snapshot_value("integration__run__shipped_suite_summary_md.snap")
    );
    assert_eq!(
        without_timings(&read(&merged.join("runs.csv"))).trim_end(),
        snapshot_value("integration__run__shipped_suite_runs_csv.snap")
    );
    let m = manifest(&merged);
    assert_eq!(
        (m["complete"].clone(), m["partition"].clone()),
        (true.into(), serde_json::Value::Null)
    );
    assert_eq!(std::fs::read_dir(merged.join("runs")).unwrap().count(), 36);
    let junit = read(&merged.join("junit.xml"));
    assert_eq!(junit.matches("<testcase ").count(), 36);
    let edits = read(&merged.join("edits.jsonl"));
    let shard_edits: usize = folders
        .iter()
        .map(|f| read(&f.join("edits.jsonl")).lines().count())
        .sum();
    assert_eq!(edits.lines().count(), shard_edits);
    for line in edits.lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        if let Some(blob) = record["before"].as_str() {
            assert!(merged.join("edits/blobs").join(blob).is_file(), "{blob}");
        }
    }
    // Merging again changes nothing.
    let out = harness(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(read(&merged.join("journal.jsonl")).lines().count(), 36);

    // A shard missing from the merge is named, and so is every run it held.
    let partial = reports.path().join("partial");
    let out = harness(&[
        "merge",
        folder_args[0],
        folder_args[2],
        "--into",
        partial.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(100), "{stderr}");
    assert!(
        stderr.contains("error: shard(s) hash:2/3 not merged"),
        "{stderr}"
    );
    let missing = sizes[1] as usize;
    assert!(
        stderr.contains(&format!("error: {missing} of 36 runs missing: ")),
        "{stderr}"
    );
    let shard2_plan: Vec<String> = std::fs::read_to_string(folders[1].join("journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["run"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    for key in shard2_plan.iter().take(20) {
        assert!(stderr.contains(key.as_str()), "{key} named: {stderr}");
    }
    assert!(read(&partial.join("summary.md")).starts_with(&format!(
        "> **Incomplete: {} of 36 runs merged, {missing} missing",
        36 - missing
    )));
    // ... and `--resume` runs only those, anywhere.
    let out = harness(&["run", "--resume", partial.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains(&format!("running {missing}")), "{stderr}");
    assert_eq!(
        read(&partial.join("summary.md")).trim_end(),
        snapshot_value("integration__run__shipped_suite_summary_md.snap")
    );
}

#[test]
fn shards_of_other_suites_are_refused_by_name() {
    let project = Project::new(&["py-median", "sh-args"], 0);
    let (code, _, e1) =
        project.run(&["run", "tasks", "--partition", "count:1/2", "--reports", "a"]);
    assert_eq!(code, 0, "{e1}");
    let (code, _, e2) = project.run(&[
        "run",
        "tasks",
        "--partition",
        "count:2/2",
        "--edit-strategy",
        "exact",
        "--reports",
        "b",
    ]);
    assert!(code == 0 || code == 100, "{e2}");
    let (a, b) = (project.report("a"), project.report("b"));
    let (code, _, stderr) = project.run(&[
        "merge",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--into",
        "merged",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("error: the shards ran different suites"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("{} differs from {}", b.display(), a.display()))
            && stderr.contains("`--edit-strategy`: pi in the first, exact in this one"),
        "{stderr}"
    );
    assert!(!project.root().join("merged").exists());
}

/// `--resume` runs the rest under the report's `--sandbox` tier: its sandbox was made before
/// the report's options were read, so a report run under `none` was resumed under the default
/// `isolated`, and a task whose check passes only outside it failed in every resumed run.
#[test]
fn resume_runs_the_rest_under_the_report_s_sandbox_tier() {
    let project = Project::new(&[], 0);
    let task = project.root().join("tasks/outside");
    std::fs::create_dir_all(task.join("repo")).unwrap();
    std::fs::write(task.join("repo/a.txt"), "a\n").unwrap();
    // Under `isolated` PID 1 is the run's supervisor, the harness binary; each run takes a
    // second, so that the signal comes mid-suite.
    std::fs::write(
        task.join("task.yaml"),
        "id: outside\nprompt: p\nchecks:\n  - name: not isolated\n    \
         run: 'sleep 1; test \"$(cat /proc/1/comm)\" != harness'\n",
    )
    .unwrap();
    let args = [
        "run",
        "tasks",
        "--model",
        "oracle/none",
        "--sandbox",
        "none",
        "--epochs",
        "4",
        "--jobs",
        "1",
    ];
    let (code, stderr) = project.run_and_signal(&args, 1, Signal::SIGINT, None);
    assert_eq!(code, Some(130), "{stderr}");
    let dir = project.report("reports");
    let (code, stdout, stderr) = project.run(&["run", "--resume", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let runs = read(&dir.join("runs.csv"));
    let rows: Vec<&str> = runs.lines().skip(1).collect();
    assert_eq!(rows.len(), 4, "{runs}");
    assert!(rows.iter().all(|r| r.contains(",passed,")), "{runs}");
}
