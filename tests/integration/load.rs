//! Many runs at once against one rate-limited provider: 200 live runs of a trivial task, 64 jobs,
//! a per-provider limit of 8 requests in flight, and a load server answering 15% of requests with
//! `429` + `retry-after-ms`. Every run must pass, the server must never see more than 8 requests
//! at once, and every 429 must show up as a counted retry, in the records and in the reports.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::cassettes::CassetteMode;
use harness::providers::ApiKind;
use harness::providers::catalog::Catalog;
use harness::providers::config::HarnessConfig;
use harness::record::Outcome;
use harness::runner::{self, RunOptions, Silent};
use harness::tasks::{self, Task};
use harness::testkit::{self, LoadConfig, RateLimit};

fn trivial_task(suite: &Path) -> Arc<Task> {
    testkit::write_trivial_task(suite).unwrap();
    let suite = tasks::load_suite(suite).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(suite.tasks.into_iter().next().expect("one task"))
}

fn sum_column(csv_text: &str, column: &str) -> u64 {
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let at = reader
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == column)
        .unwrap_or_else(|| panic!("no `{column}` column"));
    reader
        .records()
        .map(|r| r.unwrap()[at].parse::<u64>().unwrap())
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "slow: .ci/run runs it (`cargo test -- --ignored`)"]
async fn two_hundred_runs_at_64_jobs_stay_within_the_provider_limit_and_retry_every_429() {
    const RUNS: u32 = 200;
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tasks");
    let task = trivial_task(&suite);
    let server = testkit::start_load(LoadConfig {
        rate_limit: RateLimit::Share {
            share: 0.15,
            seed: 2026,
        },
        retry_after_ms: Some(20),
        delay: Duration::from_millis(2),
        ..LoadConfig::default()
    })
    .await;

    let config = HarnessConfig::parse(
        "providers:\n  openai:\n    max_in_flight: 8\n",
        Path::new("harness.yaml"),
    )
    .unwrap();
    let mut options = RunOptions::new(dir.path().join("cassettes"), dir.path().join("reports"));
    options.catalog = Arc::new(Catalog::with_config(&config).unwrap());
    options.mode = CassetteMode::Live;
    options.models = vec!["openai/load-gpt".parse().unwrap()];
    options.base_url = Some(server.base_url(ApiKind::OpenaiCompletions));
    options.key_env = Arc::new(|_| Some("test-key-not-secret".to_owned()));
    options.jobs = 64;
    options.epochs = RUNS;
    options.retry.max_retries = 30;

    let planned = runner::plan_runs(&[task], &options).unwrap();
    assert_eq!(planned.len(), RUNS as usize);
    let started = Instant::now();
    let records = runner::execute(planned, &options, Arc::new(Silent)).await;
    let wall = started.elapsed();

    let stats = server.stats();
    let retries: u64 = records.iter().map(|r| u64::from(r.retries)).sum();
    let attempts: u64 = records.iter().map(|r| u64::from(r.attempts)).sum();
    eprintln!(
        "load: {RUNS} runs in {:.2} s; server: {} requests, {} answered 429, max {} in flight; \
         records: {retries} retries, {attempts} attempts",
        wall.as_secs_f64(),
        stats.requests,
        stats.rate_limited,
        stats.max_in_flight
    );

    assert_eq!(records.len(), RUNS as usize);
    for r in &records {
        assert_eq!(
            r.outcome,
            Outcome::Passed,
            "epoch {}: {} {}",
            r.epoch,
            r.reason,
            r.detail.as_deref().unwrap_or_default()
        );
        assert_eq!(r.turns, 1, "epoch {}", r.epoch);
    }
    assert!(
        stats.max_in_flight <= 8,
        "the provider limit of 8 was exceeded: {stats:?}"
    );
    assert!(
        stats.max_in_flight >= 2,
        "runs went out in parallel: {stats:?}"
    );
    assert!(stats.rate_limited > 0, "some requests were rate limited");
    assert_eq!(stats.in_flight, 0);
    assert_eq!(
        retries, stats.rate_limited,
        "every 429 was retried and counted"
    );
    assert_eq!(attempts, stats.requests, "every request is an attempt");
    assert_eq!(stats.requests, u64::from(RUNS) + stats.rate_limited);

    let reports = dir.path().join("report");
    let paths = harness::reports::write_report(&reports, &records, &[]).unwrap();
    let summary = std::fs::read_to_string(&paths.summary_csv).unwrap();
    assert_eq!(
        sum_column(&summary, "retries"),
        stats.rate_limited,
        "{summary}"
    );
    let runs = std::fs::read_to_string(&paths.runs_csv).unwrap();
    assert_eq!(sum_column(&runs, "retries"), stats.rate_limited);
    let markdown = std::fs::read_to_string(&paths.summary_md).unwrap();
    assert!(
        markdown.contains(&format!("{} retried request", stats.rate_limited)),
        "{markdown}"
    );
}
