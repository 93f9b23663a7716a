//! Report writing: the time to write every report file of a report folder, for the shipped suite
//! (36 runs) and for 1,000 runs, with and without `report.html`.
//!
//! The shipped suite is replayed once (through `runner::execute`, which writes each run's folder
//! as it ends); its run files are then the material: the 1,000 runs are copies of its 36 real
//! transcripts under new epochs. Measured per size:
//! - run folders: `write_run_artifacts` for every run (run.json, transcript.md and .json,
//!   trajectory.json, diff.patch), what the runner pays as runs finish;
//! - report: `write_report_with` (runs.csv, summary.csv, summary.md, junit.xml, reading every
//!   run.json back), with and without `report.html`.
//!
//! Run with `cargo bench --bench report_writing` (`-- --rounds N`, default 5; the median is
//! printed; `-- --dir DIR` puts the report folders in DIR, e.g. `/dev/shm` to leave the disk's
//! file-creation cost out).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::cassettes::CassetteMode;
use harness::record::{Outcome, RunFile, RunRecord, run_dir};
use harness::reports::{self, ReportOptions};
use harness::runner::{self, RunOptions, Silent};
use harness::tasks::{self, Task};

fn main() {
    let rounds: usize = std::env::args()
        .skip_while(|a| a != "--rounds")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let place: PathBuf = std::env::args()
        .skip_while(|a| a != "--dir")
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let suite = tasks::load_suite(&root.join("tasks")).expect("the shipped suite loads");
    let tasks: Vec<Arc<Task>> = suite.tasks.into_iter().map(Arc::new).collect();
    let shipped = tempfile::tempdir().unwrap();
    let records = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let mut options = RunOptions::new(root.join("cassettes"), shipped.path().to_path_buf());
        options.mode = CassetteMode::Replay;
        let planned = runner::plan_runs(&tasks, &options).unwrap();
        runner::execute(planned, &options, Arc::new(Silent)).await
    });
    assert!(records.iter().all(|r| r.outcome == Outcome::Passed));
    // The run files as the runner left them, with their final records.
    reports::write_report(shipped.path(), &records, &[]).unwrap();
    let files = reports::read_run_files(shipped.path()).unwrap();
    println!("report folders in {}", place.display());
    println!(
        "{:>6}  {:>14}  {:>16}  {:>13}  {:>12}  {:>12}",
        "runs", "run folders", "report (no html)", "report + html", "report.html", "folder"
    );
    for size in [files.len(), 1_000] {
        let runs = synthetic(&files, size);
        let records: Vec<RunRecord> = runs.iter().map(|f| f.record.clone()).collect();
        let mut artifacts = Vec::new();
        let mut plain = Vec::new();
        let mut full = Vec::new();
        let mut html_bytes = 0;
        let mut folder_bytes = 0;
        for _ in 0..rounds {
            let dir = tempfile::tempdir_in(&place).unwrap();
            let started = Instant::now();
            for file in &runs {
                reports::write_run_artifacts(dir.path(), file).unwrap();
            }
            artifacts.push(started.elapsed());
            let without = ReportOptions {
                html: false,
                ..ReportOptions::default()
            };
            let started = Instant::now();
            reports::write_report_with(dir.path(), &records, &[], &without).unwrap();
            plain.push(started.elapsed());
            let started = Instant::now();
            let paths =
                reports::write_report_with(dir.path(), &records, &[], &ReportOptions::default())
                    .unwrap();
            full.push(started.elapsed());
            html_bytes = std::fs::metadata(paths.report_html.unwrap()).unwrap().len();
            folder_bytes = du(dir.path());
        }
        println!(
            "{:>6}  {:>11.1} ms  {:>13.1} ms  {:>10.1} ms  {:>9.1} MB  {:>9.1} MB",
            size,
            ms(median(&mut artifacts)),
            ms(median(&mut plain)),
            ms(median(&mut full)),
            html_bytes as f64 / 1e6,
            folder_bytes as f64 / 1e6
        );
    }
}

/// `size` run files: the real ones again and again, each copy under the next epoch.
fn synthetic(files: &[RunFile], size: usize) -> Vec<RunFile> {
    (0..size)
        .map(|i| {
            let mut file = files[i % files.len()].clone();
            let r = &mut file.record;
            r.epoch = (i / files.len()) as u32 + 1;
            let dir = run_dir(&r.task_id, &r.provider, &r.model, r.epoch);
            r.transcript_path = format!("{dir}/transcript.md");
            r.diff_path = format!("{dir}/diff.patch");
            file
        })
        .collect()
}

fn du(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                du(&e.path())
            } else {
                e.metadata().unwrap().len()
            }
        })
        .sum()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}
