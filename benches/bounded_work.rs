//! Bounded work after and during a run: the workspace diff on rewritten files of 1 to 50 MiB
//! (every line changed), the size of bash's full-output file after `yes` runs into a
//! timeout, and the time to refuse a task file nested N levels deep.
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

/// `checks: [[[...]]]` nested `depth` deep, after a block scalar of `pad` bytes.
fn nested(depth: usize, pad: usize) -> String {
    let line = "text ".repeat(15) + "\n";
    format!(
        "id: deep\nprompt: |\n{}checks: {}{}\n",
        format!("  {line}").repeat(pad / (line.len() + 2)),
        "[".repeat(depth),
        "]".repeat(depth)
    )
}

/// The time `parse` takes on `text` (best of 3, in ms) and the start of its error.
fn timed(text: &str, parse: impl Fn(&str) -> Option<String>) -> (f64, String) {
    let mut best = f64::MAX;
    let mut error = String::new();
    for _ in 0..3 {
        let started = Instant::now();
        error = parse(text).unwrap_or_else(|| "accepted".to_owned());
        best = best.min(started.elapsed().as_secs_f64() * 1000.0);
    }
    (best, error.chars().take(40).collect())
}

fn serde_alone(text: &str) -> Option<String> {
    serde_yaml_ng::from_str::<serde_yaml_ng::Value>(text)
        .err()
        .map(|e| e.to_string())
}

fn with_prescan(text: &str) -> Option<String> {
    harness::yaml::from_str::<serde_yaml_ng::Value>(text)
        .err()
        .map(|e| e.to_string())
}

fn main() {
    println!("refusing a task file nested N deep after a block scalar of P bytes (ms, best of 3):");
    for (depth, pad) in [(10_000usize, 0usize), (20_000, 0)] {
        let (ms, error) = timed(&nested(depth, pad), serde_alone);
        println!("  serde_yaml_ng alone  N {depth:>9} P {pad:>9}: {ms:>10.3} ms  ({error}...)");
    }
    for (depth, pad) in [
        (10_000usize, 0usize),
        (100_000, 0),
        (1_000_000, 0),
        (100_000, 1 << 20),
        (100_000, 16 << 20),
    ] {
        let (ms, error) = timed(&nested(depth, pad), with_prescan);
        println!("  harness::yaml        N {depth:>9} P {pad:>9}: {ms:>10.3} ms  ({error}...)");
    }
    println!("the pre-scan on files it passes (ms, best of 3):");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let cassette = std::fs::read_to_string(
        root.join("cassettes/py-median/openai-responses--scripted-gpt.yaml"),
    )
    .expect("shipped cassette");
    let flat = nested(0, 16 << 20);
    for (name, text) in [
        ("a shipped cassette", &cassette),
        ("16 MiB block scalar", &flat),
    ] {
        let (scan, _) = timed(text, |t| {
            harness::yaml::check_depth(t).err().map(|e| e.to_string())
        });
        let (parse, _) = timed(text, serde_alone);
        println!(
            "  {name:<20} ({:>9} bytes): pre-scan {scan:>8.3} ms, serde_yaml_ng {parse:>9.3} ms",
            text.len()
        );
    }

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
