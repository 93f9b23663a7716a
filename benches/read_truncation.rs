//! Times Pi's `read` on large files (whole-file read, split, truncateHead) and `grep` over them.
//! Run with `cargo bench --bench read_truncation`; prints milliseconds per call.

use std::time::Instant;

use harness::tools::grep::GrepTool;
use harness::tools::read::ReadTool;
use harness::tools::{Tool, ToolContext};
use serde_json::json;

fn main() {
    let dir = tempfile::TempDir::new().expect("temp dir");
    // 10 MB of short lines (line limit hits first) and 10 MB of long lines (byte limit first).
    let short: String = (0..1_000_000).map(|i| format!("line {i:06}\n")).collect();
    let long: String = (0..10_000)
        .map(|i| format!("{i:05} {}\n", "y".repeat(1000)))
        .collect();
    std::fs::write(dir.path().join("short.txt"), &short).expect("write");
    std::fs::write(dir.path().join("long.txt"), &long).expect("write");

    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let ctx = ToolContext::new(dir.path());
    let read = ReadTool::new();
    let grep = GrepTool::new();
    let runs = 10;
    let cases = [
        ("read 10 MB, 1M short lines", json!({"path": "short.txt"})),
        ("read 10 MB, 10k long lines", json!({"path": "long.txt"})),
        (
            "read offset 900000 limit 50",
            json!({"path": "short.txt", "offset": 900000, "limit": 50}),
        ),
    ];
    for (name, args) in cases {
        let start = Instant::now();
        for _ in 0..runs {
            let out = rt
                .block_on(read.execute(args.clone(), &ctx))
                .expect("read ok");
            std::hint::black_box(out);
        }
        let ms = start.elapsed().as_secs_f64() * 1000.0 / runs as f64;
        println!("{name}: {ms:.2} ms/call");
    }
    let start = Instant::now();
    for _ in 0..runs {
        let out = rt
            .block_on(grep.execute(json!({"pattern": "line 99999\\d", "limit": 1000}), &ctx))
            .expect("grep ok");
        std::hint::black_box(out);
    }
    let ms = start.elapsed().as_secs_f64() * 1000.0 / runs as f64;
    println!("grep regex over 20 MB: {ms:.2} ms/call");
}
