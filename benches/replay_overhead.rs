//! Replay overhead: the shipped suite replayed end to end through the harness, against the time
//! its tool calls (the bash commands, reads and edits the recorded model asked for) and its
//! checks alone take.
//!
//! Both sides run one run at a time, in the same process, on fresh copies of the fixtures:
//! - harness: `runner::execute` in replay mode (workspace copy, request building, cassette
//!   comparison, SSE parsing, the agent loop, tools, checks, diff, transcript writing);
//! - baseline: the same tool calls from `tests/scripts/<task>.yaml`, executed directly through
//!   the tool set in the same per-turn batches, then the task's checks.
//!
//! The ratio harness / baseline is what the harness adds on top of the work any replay must do.
//! Run with `cargo bench --bench replay_overhead` (`-- --rounds N` to repeat, default 3).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::cassettes::CassetteMode;
use harness::record::Outcome;
use harness::runner::{self, RunOptions, Silent};
use harness::tasks::{self, Task};
use harness::testkit;
use harness::tools::{ToolContext, ToolSet};
use harness::workspace::Workspace;

fn main() {
    let rounds: usize = std::env::args()
        .skip_while(|a| a != "--rounds")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let suite = tasks::load_suite(&root.join("tasks")).expect("the shipped suite loads");
    let tasks: Vec<Arc<Task>> = suite.tasks.into_iter().map(Arc::new).collect();
    let reports = tempfile::tempdir().unwrap();

    // Warm the fixtures' own build caches (cargo writes target/ inside each workspace copy, so
    // nothing carries over between copies; this only warms the OS page cache).
    let _ = runtime.block_on(replay_all(&root, &tasks, reports.path()));

    let mut runs = 0;
    let mut harness_times = Vec::new();
    let mut baseline_times = Vec::new();
    for round in 0..rounds {
        let started = Instant::now();
        let runs_done = runtime.block_on(replay_all(&root, &tasks, reports.path()));
        let harness_time = started.elapsed();
        assert!(
            runs_done.iter().all(|o| *o == Outcome::Passed),
            "every replay passes: {runs_done:?}"
        );
        let started = Instant::now();
        let n = runtime.block_on(baseline_all(&root, &tasks));
        assert_eq!(n, runs_done.len(), "both sides do the same runs");
        runs = n;
        let baseline_time = started.elapsed();
        println!(
            "round {}: harness replay {:>7.2} s for {} runs, baseline {:>7.2} s for {} runs, ratio {:.3}",
            round + 1,
            harness_time.as_secs_f64(),
            runs_done.len(),
            baseline_time.as_secs_f64(),
            n,
            harness_time.as_secs_f64() / baseline_time.as_secs_f64()
        );
        harness_times.push(harness_time);
        baseline_times.push(baseline_time);
    }
    let h = median(&mut harness_times);
    let b = median(&mut baseline_times);
    println!(
        "median: harness {:.2} s, baseline {:.2} s, ratio {:.3}, overhead {:.0} ms per run",
        h.as_secs_f64(),
        b.as_secs_f64(),
        h.as_secs_f64() / b.as_secs_f64(),
        (h.as_secs_f64() - b.as_secs_f64()) * 1000.0 / runs as f64
    );
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Every shipped cassette, replayed one run at a time.
async fn replay_all(root: &Path, tasks: &[Arc<Task>], reports: &Path) -> Vec<Outcome> {
    let mut options = RunOptions::new(root.join("cassettes"), reports.to_path_buf());
    options.mode = CassetteMode::Replay;
    options.jobs = 1;
    let planned = runner::plan_runs(tasks, &options).unwrap();
    runner::execute(planned, &options, Arc::new(Silent))
        .await
        .into_iter()
        .map(|r| r.outcome)
        .collect()
}

/// The same work without the harness around it: per task and per recorded format, the scripted
/// tool calls run directly through the tools, then the checks.
async fn baseline_all(root: &Path, tasks: &[Arc<Task>]) -> usize {
    let mut runs = 0;
    for task in tasks {
        let script = testkit::load_script(root.join(format!("tests/scripts/{}.yaml", task.id)))
            .expect("script");
        // One recording per wire format: do the work as many times as the replay does.
        let recordings = runner::recorded_models(&root.join("cassettes"), &task.id).len();
        for _ in 0..recordings {
            let workspace = Workspace::create(task, false).unwrap();
            let tools = ToolSet::new(&task.tools).unwrap();
            let ctx = ToolContext::new(workspace.path());
            for turn in &script.turns {
                let calls = turn
                    .tool_calls
                    .iter()
                    .map(|c| tools.call(&c.name, c.arguments.clone(), &ctx));
                futures::future::join_all(calls).await;
            }
            let checks = harness::scoring::run_checks(task, workspace.path(), &ctx.env)
                .await
                .expect("the checks start");
            assert!(checks.iter().all(|c| c.passed), "{}: {checks:?}", task.id);
            runs += 1;
        }
    }
    runs
}
