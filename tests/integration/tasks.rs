//! Tasks → workspace → checks → scoring → reports, end to end on a real fixture (no model: the
//! "agent" is a file edit made by the test, and the agent run is fabricated).

use std::path::Path;
use std::time::Duration;

use harness::agent::{AgentRun, StopCause};
use harness::conversation::{Message, Usage, UserContent};
use harness::record::{Outcome, RunFile};
use harness::reports::{render_terminal_summary, write_report};
use harness::scoring::{Price, ScoreInputs, run_checks, score};
use harness::tasks::{filter, load_suite};
use harness::workspace::Workspace;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn suite(root: &Path) {
    write(
        &root.join("defaults.yaml"),
        "checks_timeout_seconds: 60\ntags: [shipped]\n",
    );
    let task = root.join("py-fix-median");
    write(
        &task.join("task.yaml"),
        r#"id: py-fix-median
prompt: The tests fail; fix median in calc.py.
checks:
  - run: python3 -m unittest -q
    name: unit tests
  - file: calc.py
    contains: "sorted("
tags: [python]
"#,
    );
    write(
        &task.join("repo/calc.py"),
        "def median(xs):\n    return xs[len(xs) // 2]\n",
    );
    write(
        &task.join("repo/test_calc.py"),
        "import unittest\nfrom calc import median\n\nclass T(unittest.TestCase):\n    def test_unsorted(self):\n        self.assertEqual(median([3, 1, 2]), 2)\n\nif __name__ == '__main__':\n    unittest.main()\n",
    );
}

fn run(prompt: &str) -> AgentRun {
    AgentRun {
        messages: vec![Message::User {
            content: UserContent::Text(prompt.to_owned()),
        }],
        tool_calls: vec![],
        turns: 1,
        usage: Usage {
            input: 1000,
            output: 100,
            cache_read: 0,
            cache_write: 0,
            total_tokens: 1100,
        },
        model_time: Duration::from_millis(10),
        tool_time: Duration::ZERO,
        stop: StopCause::Completed,
    }
}

fn env() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(k, _)| k == "PATH" || k == "HOME")
        .collect()
}

#[tokio::test]
async fn a_fixed_workspace_passes_and_an_untouched_one_fails() {
    let dir = tempfile::tempdir().unwrap();
    let tasks_dir = dir.path().join("tasks");
    suite(&tasks_dir);
    let suite = load_suite(&tasks_dir).unwrap();
    let tasks = filter(suite.tasks, &["py-*".into()], &["python".into()]).unwrap();
    assert_eq!(tasks.len(), 1);
    let task = &tasks[0];
    assert_eq!(task.tags, ["shipped", "python"]);

    // Untouched: the unit tests fail, the file check fails.
    let untouched = Workspace::create(task, false).unwrap();
    let checks = run_checks(task, untouched.path(), &env()).await.unwrap();
    assert_eq!(
        checks.iter().map(|c| c.passed).collect::<Vec<_>>(),
        [false, false],
        "{checks:#?}"
    );
    let failed = score(
        task,
        &run(&task.prompts[0]),
        checks,
        &untouched
            .diff(std::time::Instant::now() + std::time::Duration::from_secs(600))
            .unwrap(),
        ScoreInputs {
            provider: "scripted".into(),
            model: "fixer".into(),
            epoch: 1,
            ..ScoreInputs::default()
        },
    );
    assert_eq!(failed.outcome, Outcome::Failed);
    assert!(
        failed.reason.starts_with(
            "2 of 2 checks failed; first 'unit tests': exit 1 (expected 0): FAILED (failures=1)"
        ),
        "{}",
        failed.reason
    );

    // Fixed (as an agent would), with __pycache__ left behind by the check run.
    let fixed = Workspace::create(task, false).unwrap();
    write(
        &fixed.path().join("calc.py"),
        "def median(xs):\n    return sorted(xs)[len(xs) // 2]\n",
    );
    let checks = run_checks(task, fixed.path(), &env()).await.unwrap();
    assert!(checks.iter().all(|c| c.passed), "{checks:#?}");
    assert!(fixed.path().join("__pycache__").exists());
    let diff = fixed
        .diff(std::time::Instant::now() + std::time::Duration::from_secs(600))
        .unwrap();
    assert_eq!(
        (diff.files_changed, diff.lines_added, diff.lines_removed),
        (1, 1, 1)
    );
    assert!(
        diff.unified
            .contains("+    return sorted(xs)[len(xs) // 2]\n")
    );
    let agent = run(&task.prompts[0]);
    let passed = score(
        task,
        &agent,
        checks,
        &diff,
        ScoreInputs {
            provider: "scripted".into(),
            model: "fixer".into(),
            epoch: 1,
            price: Some(Price {
                input: 3.0,
                output: 15.0,
                cache_read: 0.3,
                cache_write: 3.75,
            }),
            wall_time: Duration::from_secs(2),
            ..ScoreInputs::default()
        },
    );
    assert_eq!(passed.outcome, Outcome::Passed);
    assert_eq!(passed.cost, Some(0.0045));

    // The original fixture is untouched.
    assert_eq!(
        std::fs::read_to_string(task.repo.join("calc.py")).unwrap(),
        "def median(xs):\n    return xs[len(xs) // 2]\n"
    );

    let report = dir.path().join("reports/now");
    let artifacts = [RunFile::new(
        passed.clone(),
        agent.messages.clone(),
        agent.tool_calls.clone(),
        diff.unified.clone(),
        None,
        None,
    )];
    let paths = write_report(&report, &[failed.clone(), passed.clone()], &artifacts).unwrap();
    let patch = std::fs::read_to_string(report.join(&passed.diff_path)).unwrap();
    assert_eq!(patch, diff.unified);
    let md = std::fs::read_to_string(&paths.summary_md).unwrap();
    assert!(
        md.contains("| py-fix-median | scripted/fixer | 1 | passed | 2/2 |"),
        "{md}"
    );
    let table = render_terminal_summary(&[failed, passed], false);
    assert!(
        table
            .lines()
            .last()
            .unwrap()
            .starts_with("2 runs: 1 passed, 1 failed"),
        "{table}"
    );
}

/// The shipped suite (`tasks/` at the crate root, once merged) loads without a single problem,
/// and every fixture copies into a workspace whose diff is empty.
#[test]
fn the_shipped_suite_loads_and_copies_cleanly() {
    let dir = std::env::var_os("HARNESS_TASKS_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("tasks"));
    if !dir.join("defaults.yaml").exists() {
        eprintln!("no shipped suite at {}; skipped", dir.display());
        return;
    }
    let suite = match load_suite(&dir) {
        Ok(suite) => suite,
        Err(errors) => panic!("{errors}"),
    };
    assert!(!suite.tasks.is_empty());
    for task in &suite.tasks {
        let ws = Workspace::create(task, false).unwrap();
        let diff = ws
            .diff(std::time::Instant::now() + std::time::Duration::from_secs(600))
            .unwrap();
        assert_eq!(diff.files_changed, 0, "{}: {}", task.id, diff.unified);
    }
}
