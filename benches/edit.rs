//! Benchmark: our `edit` tool against Pi's own, on the same generated files and calls.
//!
//! `cargo bench --bench edit` generates files of 1 MB and 10 MB (plain code-like lines with some
//! non-ASCII comment lines), and calls of 1, 10 and 50 edits that match exactly or only fuzzily
//! (the file has smart quotes and trailing spaces where the edit has ASCII). It times our tool
//! (the full call: access, read, match, write, diff) and writes the files plus a `cases.json`;
//! then, if `benches/pi/node_modules` exists, it runs `benches/pi/bench.mjs`, which loads Pi's
//! edit tool once and times `execute` on the same files and arguments, checks that both wrote
//! the same bytes, and prints the two side by side.
//!
//! Options (after `--`): `--quick` (fewer iterations), `--no-pi` (ours only), `--only <text>`
//! (only the cases whose name contains it, e.g. `10MB-fuzzy`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use harness::tools::edit::EditTool;
use harness::tools::{Tool, ToolContext};
use serde_json::{Value, json};

const MB: usize = 1024 * 1024;

struct Case {
    name: String,
    size: usize,
    fuzzy: bool,
    edits: usize,
}

/// A deterministic file of about `size` bytes and the edits of one call.
fn generate(size: usize, fuzzy: bool, edits: usize) -> (String, Value) {
    let mut lines: Vec<String> = Vec::new();
    let mut total = 0;
    let mut i = 0usize;
    while total < size {
        let line = if i % 97 == 13 {
            format!("    // note {i}: naïve café — “résumé” ’s ﬁle…\n")
        } else {
            format!("    let value_{i:07} = compute({i}, \"item\"); // plain line\n")
        };
        total += line.len();
        lines.push(line);
        i += 1;
    }
    let count = lines.len();
    let mut list = Vec::new();
    for k in 0..edits {
        // Evenly spaced targets, moved off the non-ASCII comment lines.
        let mut at = (k + 1) * count / (edits + 1);
        if at % 97 == 13 {
            at += 1;
        }
        if fuzzy {
            lines[at] = format!("    let value_{at:07} = “quoted {at}” – ok;   \n");
            list.push(json!({
                "oldText": format!("let value_{at:07} = \"quoted {at}\" - ok;"),
                "newText": format!("let value_{at:07} = \"changed {at}\";"),
            }));
        } else {
            list.push(json!({
                "oldText": format!("let value_{at:07} = compute({at}, \"item\");"),
                "newText": format!("let value_{at:07} = compute({at}, \"changed\");"),
            }));
        }
    }
    (lines.concat(), Value::Array(list))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let no_pi = args.iter().any(|a| a == "--no-pi");
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1).cloned());
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("edit-bench");
    std::fs::create_dir_all(&out_dir).expect("create bench dir");

    let mut cases = Vec::new();
    for size in [MB, 10 * MB] {
        for fuzzy in [false, true] {
            for edits in [1, 10, 50] {
                let mode = if fuzzy { "fuzzy" } else { "exact" };
                let name = format!("{}MB-{mode}-{edits}", size / MB);
                if only.as_ref().is_some_and(|o| !name.contains(o.as_str())) {
                    continue;
                }
                cases.push(Case {
                    name,
                    size,
                    fuzzy,
                    edits,
                });
            }
        }
    }

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let tool = EditTool::new();
    let ctx = ToolContext::new(&out_dir);
    let mut manifest = Vec::new();
    let mut ours = Vec::new();
    println!("ours: ms per edit call (median)");
    for case in &cases {
        let (content, edits) = generate(case.size, case.fuzzy, case.edits);
        let original = out_dir.join(format!("{}.orig.txt", case.name));
        let target = out_dir.join(format!("{}.txt", case.name));
        std::fs::write(&original, &content).expect("write original");
        let call = json!({"path": target.file_name().unwrap().to_str().unwrap(), "edits": edits});
        let iterations = match (case.size > MB, quick) {
            (false, false) => 30,
            (true, false) => 10,
            (false, true) => 5,
            (true, true) => 2,
        };
        let mut times = Vec::new();
        for run in 0..=iterations {
            std::fs::write(&target, &content).expect("reset target");
            let started = Instant::now();
            let out = runtime.block_on(tool.execute(call.clone(), &ctx));
            let elapsed = started.elapsed().as_secs_f64() * 1000.0;
            if let Err(err) = out {
                panic!("{}: {}", case.name, err.message);
            }
            if run > 0 {
                times.push(elapsed); // run 0 warms the caches up
            }
        }
        std::fs::copy(&target, out_dir.join(format!("{}.ours.txt", case.name))).expect("copy");
        let ms = median(times);
        println!("  {:<16} {:>9.2}", case.name, ms);
        ours.push(ms);
        manifest.push(json!({
            "name": case.name,
            "original": original,
            "target": target,
            "args": call,
            "iterations": if case.size > MB { if quick { 1 } else { 3 } } else if quick { 2 } else { 10 },
        }));
    }
    let manifest_path = out_dir.join("cases.json");
    std::fs::write(
        &manifest_path,
        serde_json::to_vec_pretty(&manifest).unwrap(),
    )
    .unwrap();

    let pi_dir = root.join("benches/pi");
    if no_pi || !pi_dir.join("node_modules").exists() {
        println!("\nPi side skipped (run `npm install` in benches/pi, then drop --no-pi).");
        return;
    }
    println!("\nrunning Pi's edit tool in node on the same files (this takes a while)...");
    let output = Command::new("node")
        .arg(pi_dir.join("bench.mjs"))
        .arg(&manifest_path)
        .output()
        .expect("run node");
    if !output.status.success() {
        panic!("node failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    let pi: Value = serde_json::from_slice(&output.stdout).expect("node output is JSON");
    println!(
        "\n| case | ours (ms) | Pi 0.73.1 (ms) | Pi / ours | same bytes |\n|---|---:|---:|---:|---|"
    );
    for (case, ours_ms) in cases.iter().zip(&ours) {
        let pi_ms = pi[&case.name]["median"].as_f64().unwrap_or(f64::NAN);
        let same = same_file(
            &out_dir.join(format!("{}.ours.txt", case.name)),
            &out_dir.join(format!("{}.pi.txt", case.name)),
        );
        println!(
            "| {} | {:.2} | {:.1} | {:.1}x | {} |",
            case.name,
            ours_ms,
            pi_ms,
            pi_ms / ours_ms,
            if same { "yes" } else { "NO" }
        );
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    matches!((std::fs::read(a), std::fs::read(b)), (Ok(x), Ok(y)) if x == y)
}
