//! The imported Exercism exercises checked against their own reference solutions: for every
//! task of a suite written by `harness import exercism`, its check commands run on the untouched
//! fixture (they must fail) and with `solution/` laid over it (they must pass), with the
//! toolchains of this machine. Tasks whose `requires:` is not met are counted as skipped, as
//! `harness run` would skip them.
//!
//! `cargo bench --bench exercism_reference -- TASKS [--jobs N] [--details FILE]` prints a table
//! per language (benches/README.md, `exercism`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use harness::runner::preflight::check_requirements;
use harness::sandbox::env::{base_env, run_env};
use harness::scoring::run_checks;
use harness::tasks::{Task, load_suite_lenient};
use harness::workspace::Workspace;

/// With the reference laid over (passed, why not), untouched (passed, why), and the time.
type Outcome = ((bool, String), (bool, String), Duration);

#[derive(Default)]
struct Row {
    imported: usize,
    skipped: usize,
    reference_passes: usize,
    untouched_fails: usize,
    time: Duration,
}

async fn run(task: &Task, solved: bool) -> (bool, String) {
    let ws = match Workspace::create(task, false) {
        Ok(ws) => ws,
        Err(e) => return (false, format!("workspace: {e}")),
    };
    if solved {
        let status = std::process::Command::new("cp")
            .arg("-a")
            .arg(format!("{}/.", task.dir.join("solution").display()))
            .arg(ws.path())
            .status();
        if !status.is_ok_and(|s| s.success()) {
            return (false, "could not lay the solution over the fixture".into());
        }
    }
    let home = tempfile::tempdir().expect("temp dir");
    let env = run_env(
        &base_env(std::env::vars()),
        home.path(),
        home.path(),
        &task.env,
    );
    let results = match run_checks(task, ws.path(), &env).await {
        Ok(results) => results,
        Err(e) => return (false, e.to_string()),
    };
    let passed = results.iter().all(|r| r.passed);
    let detail = results
        .iter()
        .filter(|r| !r.passed)
        .map(|r| format!("{}: {}", r.name, r.detail))
        .collect::<Vec<_>>()
        .join("\n");
    (passed, detail)
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let mut tasks_dir: Option<PathBuf> = None;
    let mut jobs = 2usize;
    let mut details: Option<PathBuf> = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--jobs" => jobs = args.next().and_then(|n| n.parse().ok()).unwrap_or(2),
            "--details" => details = args.next().map(PathBuf::from),
            _ => tasks_dir = Some(PathBuf::from(arg)),
        }
    }
    let Some(tasks_dir) = tasks_dir else {
        eprintln!(
            "usage: cargo bench --bench exercism_reference -- TASKS [--jobs N] [--details FILE]"
        );
        return;
    };
    let (tasks, problems) = load_suite_lenient(&tasks_dir);
    for p in &problems {
        eprintln!("problem: {p}");
    }
    let tasks: Vec<Arc<Task>> = tasks
        .into_iter()
        .filter(|t| t.tags.iter().any(|tag| tag == "exercism"))
        .map(Arc::new)
        .collect();
    let unmet = check_requirements(&tasks, std::env::var_os("PATH"));
    for m in &unmet.missing {
        eprintln!("missing: {} (hint: {})", m.message, m.hint);
    }
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let started = Instant::now();
    let results: Vec<(Arc<Task>, Option<Outcome>)> = runtime.block_on(async {
        futures::stream::iter(tasks.iter().cloned())
            .map(|task| {
                let skip = unmet.skipped.contains_key(&task.id);
                async move {
                    if skip {
                        return (task, None);
                    }
                    let t = Instant::now();
                    let solved = run(&task, true).await;
                    let untouched = run(&task, false).await;
                    eprintln!(
                        "{:40} reference {} untouched {} ({:.1}s)",
                        task.id,
                        if solved.0 { "passes" } else { "FAILS" },
                        if untouched.0 { "PASSES" } else { "fails" },
                        t.elapsed().as_secs_f64()
                    );
                    (task, Some((solved, untouched, t.elapsed())))
                }
            })
            .buffer_unordered(jobs.max(1))
            .collect()
            .await
    });
    let mut rows: BTreeMap<String, Row> = BTreeMap::new();
    let mut log = String::new();
    for (task, result) in &results {
        let language = task.tags.first().cloned().unwrap_or_default();
        let row = rows.entry(language).or_default();
        row.imported += 1;
        match result {
            None => {
                row.skipped += 1;
                log.push_str(&format!(
                    "## {} skipped\n{}\n\n",
                    task.id, unmet.skipped[&task.id]
                ));
            }
            Some((solved, untouched, time)) => {
                row.time += *time;
                if solved.0 {
                    row.reference_passes += 1;
                } else {
                    log.push_str(&format!("## {} reference fails\n{}\n\n", task.id, solved.1));
                }
                if !untouched.0 {
                    row.untouched_fails += 1;
                } else {
                    log.push_str(&format!("## {} untouched passes\n\n", task.id));
                }
            }
        }
    }
    println!(
        "| language | imported | skipped (toolchain) | reference passes | untouched fails | check time |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    let mut total = Row::default();
    for (language, row) in &rows {
        let ran = row.imported - row.skipped;
        println!(
            "| {language} | {} | {} | {}/{ran} | {}/{ran} | {:.0} s |",
            row.imported,
            row.skipped,
            row.reference_passes,
            row.untouched_fails,
            row.time.as_secs_f64()
        );
        total.imported += row.imported;
        total.skipped += row.skipped;
        total.reference_passes += row.reference_passes;
        total.untouched_fails += row.untouched_fails;
        total.time += row.time;
    }
    let ran = total.imported - total.skipped;
    println!(
        "| all | {} | {} | {}/{ran} | {}/{ran} | {:.0} s |",
        total.imported,
        total.skipped,
        total.reference_passes,
        total.untouched_fails,
        total.time.as_secs_f64()
    );
    println!(
        "\nwall time {:.0} s with {jobs} jobs",
        started.elapsed().as_secs_f64()
    );
    if let Some(path) = details {
        if let Err(e) = std::fs::write(&path, log) {
            eprintln!("cannot write {}: {e}", path.display());
        }
    }
}
