//! Scoring → reports for a benchmark of live providers: epochs, infrastructure errors kept out of
//! pass rates, a run skipped by the budget, and reading a report back for `--rerun-errors`.

use std::path::PathBuf;
use std::time::Duration;

use harness::record::Outcome;
use harness::reports::{RunKey, error_runs, read_runs_csv, write_report};
use harness::scoring::{ScoreInputs, score_without_run};
use harness::tasks::Task;

fn task(id: &str) -> Task {
    Task {
        prompts: vec!["fix it".into()],
        attempts: 1,
        ..Task::bare(id, PathBuf::from("tasks").join(id))
    }
}

#[test]
fn a_report_reads_back_its_error_runs_and_keeps_infra_errors_out_of_pass_rates() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("reports/1");
    let rate_limited = score_without_run(
        &task("a"),
        ScoreInputs {
            provider: "p".into(),
            model: "org/m:1".into(),
            epoch: 2,
            error: Some("429 Too Many Requests after 5 attempts".into()),
            error_kind: Some(harness::record::ErrorKind::from_name("rate_limited")),
            retries: 4,
            attempts: 5,
            wall_time: Duration::from_secs(3),
            ..ScoreInputs::default()
        },
    );
    // Without checks a finished run fails: it counts in the pass rate.
    let failed = score_without_run(
        &task("a"),
        ScoreInputs {
            provider: "p".into(),
            model: "org/m:1".into(),
            epoch: 1,
            ..ScoreInputs::default()
        },
    );
    let skipped = harness::record::RunRecord::skipped(
        "b",
        "p",
        "org/m:1",
        1,
        "the --max-cost budget was spent",
    );
    let records = vec![rate_limited, failed, skipped];
    let paths = write_report(&report, &records, &[]).unwrap();

    let keys = read_runs_csv(&paths.runs_csv).unwrap();
    let outcomes: Vec<(&str, u32, Outcome)> = keys
        .iter()
        .map(|k| (k.task_id.as_str(), k.epoch, k.outcome))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("a", 1, Outcome::Failed),
            ("a", 2, Outcome::Error),
            ("b", 1, Outcome::Skipped)
        ]
    );
    assert_eq!(
        error_runs(&report).unwrap(),
        [RunKey {
            task_id: "a".into(),
            provider: "p".into(),
            model: "org/m:1".into(),
            epoch: 2,
            outcome: Outcome::Error,
            error_kind: Some(harness::record::ErrorKind::RateLimited),
            unused_interactions: 0,
            edit_strategy: "pi".into(),
            divergence_kind: None,
        }]
    );

    let summary = std::fs::read_to_string(&paths.summary_csv).unwrap();
    let mut reader = csv::Reader::from_reader(summary.as_bytes());
    let header = reader.headers().unwrap().clone();
    let row = reader.records().next().unwrap().unwrap();
    let get = |name: &str| row[header.iter().position(|h| h == name).unwrap()].to_owned();
    assert_eq!(get("runs"), "3");
    assert_eq!(get("counted_runs"), "1");
    assert_eq!(get("infra_errors"), "1");
    assert_eq!(get("skipped"), "1");
    assert_eq!(get("pass_rate"), "0.0000");
    assert_eq!(get("retries"), "4");
    assert_eq!(get("k"), "2");
    // Task a has one run that counts (< k = 2), task b none: no pass@2.
    assert_eq!(get("pass_at_k"), "");
    assert_eq!(get("cost_usd"), "");
    let md = std::fs::read_to_string(&paths.summary_md).unwrap();
    assert!(md.contains("Total cost: -."), "{md}");
}
