//! Bounded work after and during a run: the workspace diff on rewritten files of 1 to 50 MiB
//! (every line changed), and the size of bash's full-output file after `yes` runs into a
//! timeout.
//!
//! Run with `cargo bench --bench bounded_work` (see `benches/README.md`). Prints one line per case.

use std::sync::Arc;
use std::time::{Duration, Instant};

use harness::tools::bash::BashTool;
use harness::tools::{Tool, ToolContext};
use harness::workspace::Workspace;
use serde_json::json;

/// A file of about `mib` MiB of numbered lines, each ending in `tag`.
fn lines(mib: usize, tag: &str) -> String {
    let mut out = String::with_capacity(mib << 20);
    let mut i = 0u64;
    while out.len() < mib << 20 {
        out.push_str(&format!("line {i:09} of the fixture, version {tag}\n"));
        i += 1;
    }
    out
}

fn main() {
    println!("workspace diff of a full rewrite (every line changed), 60 s deadline:");
    for mib in [1usize, 2, 4, 8, 16, 50] {
        let fixture = tempfile::tempdir().expect("temp dir");
        std::fs::write(fixture.path().join("data.txt"), lines(mib, "one")).expect("write");
        let ws = Workspace::from_fixture(fixture.path(), "bench-diff-", false).expect("workspace");
        std::fs::write(ws.path().join("data.txt"), lines(mib, "two")).expect("rewrite");
        let started = Instant::now();
        let diff = ws
            .diff(Instant::now() + Duration::from_secs(60))
            .expect("diff");
        let took = started.elapsed();
        println!(
            "  {mib:>3} MiB: {:>8.3} s  (+{} -{} lines, {} bytes of diff text, timed out: {})",
            took.as_secs_f64(),
            diff.lines_added,
            diff.lines_removed,
            diff.unified.len(),
            diff.timed_out
        );
    }

    println!("bash full-output file after `yes` with a timeout:");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    for timeout in [1.0, 5.0] {
        let work = tempfile::tempdir().expect("temp dir");
        let mut ctx = ToolContext::new(work.path());
        ctx.temp_dir = work.path().to_path_buf();
        ctx.env = Arc::new(vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())]);
        let out = runtime
            .block_on(BashTool::new().execute(json!({"command": "yes", "timeout": timeout}), &ctx));
        let total: u64 = std::fs::read_dir(work.path())
            .expect("read dir")
            .flatten()
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .sum();
        let text = match &out {
            Ok(o) => o.content[0].as_text().unwrap_or_default().to_owned(),
            Err(e) => e.message.clone(),
        };
        let tail: String = text.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
        println!(
            "  timeout {timeout} s: full-output file {total} bytes ({:.1} MiB); tool text ends: {tail}",
            total as f64 / (1024.0 * 1024.0)
        );
    }
}
