//! Memory and time of the bash tool on huge outputs: the harness must stay bounded (target: peak
//! RSS under 64 MiB) while a command prints 1 GiB, and truncation of large outputs must be fast.
//! The full-output file keeps the first 32 MiB (`sandbox::output::FULL_OUTPUT_CAP`).
//!
//! Run with `cargo bench --bench bash_memory` (see `benches/README.md`). Prints one line per case
//! and exits non-zero if the peak resident set size passes the target.

use std::sync::Arc;
use std::time::Instant;

use harness::tools::bash::BashTool;
use harness::tools::{Tool, ToolContext};
use serde_json::json;

const TARGET_PEAK_KIB: u64 = 64 * 1024;

/// A `/proc/self/status` field in KiB (`VmHWM` is the peak resident set size).
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let work = tempfile::tempdir().expect("temp dir");
    let mut ctx = ToolContext::new(work.path());
    ctx.temp_dir = work.path().to_path_buf();
    ctx.env = Arc::new(vec![("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into())]);
    let tool = BashTool::new();

    let cases = [
        (
            "1 GiB, one line",
            "head -c 1073741824 /dev/zero | tr '\\0' a",
            1u64 << 30,
        ),
        (
            "1 GiB, 2-byte lines",
            "yes | head -c 1073741824",
            1u64 << 30,
        ),
        ("seq 1 5000000 (38.9 MB)", "seq 1 5000000", 38_888_896),
        ("seq 1 3000 (small)", "seq 1 3000", 13_893),
    ];

    println!(
        "{:<26} {:>10} {:>12} {:>14} {:>14}",
        "case", "time", "MB/s", "peak RSS", "RSS now"
    );
    let start_peak = status_kib("VmHWM");
    println!(
        "{:<26} {:>10} {:>12} {:>10} KiB",
        "(before any case)", "", "", start_peak
    );
    let mut worst = start_peak;
    for (label, command, bytes) in cases {
        let started = Instant::now();
        let result = runtime.block_on(tool.execute(json!({"command": command}), &ctx));
        let elapsed = started.elapsed();
        let out = result.expect("command succeeds");
        let text = out.content[0].as_text().unwrap_or_default();
        let path = out
            .details
            .as_ref()
            .and_then(|d| d["fullOutputPath"].as_str());
        let saved = path
            .and_then(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .unwrap_or(0);
        // The file keeps every byte up to its cap, then a notice line.
        let cap = harness::sandbox::output::FULL_OUTPUT_CAP;
        if bytes <= cap {
            assert_eq!(saved, bytes, "{label}: the full output file has every byte");
        } else {
            let notice = format!(
                "\n{}\n",
                harness::sandbox::output::cap_notice(cap, bytes - cap)
            );
            assert_eq!(
                saved,
                cap + notice.len() as u64,
                "{label}: the full output file stops at its cap"
            );
        }
        if let Some(p) = path {
            let _ = std::fs::remove_file(p);
        }
        let peak = status_kib("VmHWM");
        worst = worst.max(peak);
        println!(
            "{:<26} {:>8.2} s {:>12.0} {:>10} KiB {:>10} KiB   (visible text {} bytes)",
            label,
            elapsed.as_secs_f64(),
            bytes as f64 / 1e6 / elapsed.as_secs_f64(),
            peak,
            status_kib("VmRSS"),
            text.len()
        );
    }
    let verdict = if worst < TARGET_PEAK_KIB {
        "PASS"
    } else {
        "FAIL"
    };
    println!(
        "peak RSS {worst} KiB ({:.1} MiB), target < {} MiB: {verdict}",
        worst as f64 / 1024.0,
        TARGET_PEAK_KIB / 1024
    );
    if worst >= TARGET_PEAK_KIB {
        std::process::exit(1);
    }
}
