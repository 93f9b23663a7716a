//! Replays that do not diverge on noise: a suite whose tools print what changes from one run
//! to the next (Python unittest and node's test runner with their timings, `ls -la`, `ls -l
//! --full-time` and `stat` after a write, `date` in three forms, a background job's pid, bash's
//! full-output file) is recorded once through the scripted model server in all four wire
//! formats, then replayed: every replay matches with no task-declared rule, and with the
//! built-in rules turned off (`normalize_defaults: false`) the same replays diverge.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use harness::cassettes::{self, CassetteMode};
use harness::cli::dev::scripted_models;
use harness::record::{Outcome, RunRecord};
use harness::runner::{self, RunOptions, Silent};
use harness::tasks::{self, Task};

use harness::testkit;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/volatile")
}

fn options(cassettes: &Path, reports: &Path, mode: CassetteMode) -> RunOptions {
    let mut options = RunOptions::new(cassettes.to_path_buf(), reports.to_path_buf());
    options.mode = mode;
    options.jobs = 2;
    options.key_env = Arc::new(|_| Some("test-key-not-secret".to_owned()));
    options
}

fn load(suite: &Path) -> Vec<Arc<Task>> {
    tasks::load_suite(suite)
        .unwrap_or_else(|e| panic!("{e}"))
        .tasks
        .into_iter()
        .map(Arc::new)
        .collect()
}

async fn replay_all(suite: &Path, cassettes: &Path, reports: &Path) -> Vec<RunRecord> {
    let tasks = load(suite);
    let opts = options(cassettes, reports, CassetteMode::Replay);
    let planned = runner::plan_runs(&tasks, &opts).unwrap();
    runner::execute(planned, &opts, Arc::new(Silent)).await
}

fn label(r: &RunRecord) -> String {
    format!("{}/{} {}", r.provider, r.model, r.task_id)
}

#[tokio::test]
#[ignore = "slow: .ci/run runs it (`cargo test -- --ignored`)"]
async fn a_volatile_suite_replays_identically_in_every_wire_format_without_any_task_rule() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tasks");
    let status = Command::new("cp")
        .arg("-a")
        .arg(fixture())
        .arg(&suite)
        .status()
        .unwrap();
    assert!(status.success());
    let cassettes_dir = dir.path().join("cassettes");
    let reports = dir.path().join("reports");
    let tasks = load(&suite);
    assert_eq!(tasks.len(), 5);
    assert!(
        tasks
            .iter()
            .all(|t| t.normalize.is_empty() && t.normalize_defaults),
        "no task declares a rule of its own"
    );

    // Record each task once per wire format, against the scripted server.
    for task in &tasks {
        let script =
            testkit::load_script(suite.join(format!("_scripts/{}.yaml", task.id))).unwrap();
        for (api, model) in scripted_models() {
            let server = testkit::start(script.clone(), api).await;
            let mut opts = options(&cassettes_dir, &reports, CassetteMode::Record);
            opts.models = vec![model.clone()];
            opts.base_url = Some(server.base_url());
            let planned = runner::plan_runs(std::slice::from_ref(task), &opts).unwrap();
            let records = runner::execute(planned, &opts, Arc::new(Silent)).await;
            let r = &records[0];
            assert_eq!(r.outcome, Outcome::Passed, "{}: {}", label(r), r.reason);
            assert_eq!(server.requests().len(), script.turns.len(), "{}", label(r));
        }
    }
    // The recordings hold the noise the replays must see through.
    let text_of = |task: &str| {
        let mut all = String::new();
        for (_, model) in scripted_models() {
            let path =
                cassettes::cassette_path(&cassettes_dir, task, &model.provider, &model.model);
            all.push_str(&std::fs::read_to_string(&path).unwrap());
        }
        all
    };
    let expect = |task: &str, needles: &[&str]| {
        let text = text_of(task);
        for needle in needles {
            assert!(
                text.contains(needle),
                "{task}: no {needle:?} in its cassettes"
            );
        }
    };
    expect("vol-unittest", &["Ran 3 tests in 0."]);
    expect("vol-node", &["duration_ms: ", "# duration_ms "]);
    expect("vol-ls", &["Jan  1  2000 ..", "Inode: ", "Change: 20"]);
    expect("vol-date", &[" UTC 20", "built at 20"]);
    expect("vol-shell", &[" Running ", " Killed ", "pi-bash-"]);

    // 20 of 20 replays match, with the built-in rules alone.
    let records = replay_all(&suite, &cassettes_dir, &reports).await;
    assert_eq!(records.len(), 20);
    let matched: Vec<String> = records
        .iter()
        .filter(|r| r.outcome == Outcome::Passed)
        .map(label)
        .collect();
    let failed: Vec<String> = records
        .iter()
        .filter(|r| r.outcome != Outcome::Passed)
        .map(|r| {
            format!(
                "{} {:?}: {}\n{}",
                label(r),
                r.outcome,
                r.reason,
                r.detail.as_deref().unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        matched.len(),
        20,
        "replays that did not match:\n{}",
        failed.join("\n\n")
    );

    // The control: the same replays with the built-in rules off diverge.
    std::fs::write(
        suite.join("defaults.yaml"),
        "limits: {turns: 10, wall_seconds: 120}\nnormalize_defaults: false\n",
    )
    .unwrap();
    let records = replay_all(&suite, &cassettes_dir, &reports).await;
    assert_eq!(records.len(), 20);
    let diverged: Vec<&RunRecord> = records
        .iter()
        .filter(|r| r.outcome == Outcome::Diverged)
        .collect();
    // Nanosecond clocks and node's microsecond durations differ on every run; unittest's
    // millisecond figure and the pids may repeat by chance, so those are not asserted.
    for task in ["vol-node", "vol-ls", "vol-date"] {
        let n = diverged.iter().filter(|r| r.task_id == task).count();
        assert_eq!(
            n, 4,
            "{task}: diverged in {n} of 4 formats without the built-in rules"
        );
    }
    eprintln!(
        "volatile suite: 20/20 replays matched with the built-in rules; {}/20 diverged without them",
        diverged.len()
    );
}
