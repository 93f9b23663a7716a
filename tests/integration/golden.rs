//! What the harness writes stays what it wrote: the shipped suite's `run.json` of one task per
//! wire format (a fuzzy multi-edit, and a failed edit recovered from), the `runs.csv` header and
//! rows and `summary.md` are compared byte for byte with copies written by an earlier build
//! (`tests/fixtures/golden/`), timings aside. A refactor of the records, the scoring or the
//! reports that changes a byte a user's tooling reads fails here first.

use std::path::Path;

use harness::reports::csv::without_timings;

use super::run::{harness, repo_root};

/// Times in milliseconds and test runners' `0.000s` set to fixed values: the only bytes of a
/// run file that differ between two runs of the same cassette.
fn without_times(run_json: &str) -> String {
    let times =
        regex::Regex::new(r#""(duration|wall_time|model_time|tool_time|check_time)":\d+"#).unwrap();
    let seconds = regex::Regex::new(r"\d+\.\d+s\b").unwrap();
    let text = times.replace_all(run_json, r#""$1":0"#);
    seconds.replace_all(&text, "N.NNNs").into_owned()
}

#[test]
fn run_files_runs_csv_and_summary_are_byte_identical_to_the_golden_copies() {
    let project = tempfile::tempdir().unwrap();
    let root = project.path();
    for folder in ["tasks", "cassettes"] {
        let status = std::process::Command::new("cp")
            .arg("-a")
            .arg(repo_root().join(folder))
            .arg(root.join(folder))
            .status()
            .unwrap();
        assert!(status.success());
    }
    let (code, stdout, stderr) = harness(
        root,
        &[
            "run",
            "tasks",
            "-q",
            "--task",
            "py-slugify",
            "--task",
            "sh-args",
            "--reports",
            "out",
        ],
    );
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    let report = std::fs::read_dir(root.join("out"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let golden = repo_root().join("tests/fixtures/golden");

    let mut compared = 0;
    for entry in std::fs::read_dir(golden.join("runs")).unwrap() {
        let expected_path = entry.unwrap().path();
        let name = expected_path
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let written = report.join("runs").join(&name).join("run.json");
        let got = without_times(&std::fs::read_to_string(&written).unwrap());
        let want = std::fs::read_to_string(&expected_path).unwrap();
        pretty_assertions::assert_eq!(got, want, "{}", written.display());
        compared += 1;
    }
    assert_eq!(compared, 8, "two tasks in four wire formats");

    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    let (got_csv, want_csv) = (
        read(&report.join("runs.csv")),
        read(&golden.join("runs.csv")),
    );
    assert_eq!(
        got_csv.lines().next(),
        want_csv.lines().next(),
        "the runs.csv header"
    );
    pretty_assertions::assert_eq!(
        without_timings(&got_csv).unwrap(),
        without_timings(&want_csv).unwrap()
    );
    pretty_assertions::assert_eq!(
        read(&report.join("summary.md")),
        read(&golden.join("summary.md"))
    );
}
