//! `harness edits`, run as the built binary: the strategy list, a perturbed corpus from a folder
//! of sources, the comparison and its files, and the errors (exit 2 before anything runs; a bad
//! corpus line skipped with its number).

use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("harness runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// A folder of Python sources shaped like real code.
fn sources(dir: &Path) {
    for (name, n) in [("alpha", 6), ("beta", 5), ("gamma", 7)] {
        let body: String = (0..n)
            .map(|i| {
                format!(
                    "def {name}_{i}(value, limit={i}):\n    # Check the \"value\" - it's {name}'s job.\n    if value > limit:\n        result = value * {i} + 1\n        return result + {i}\n    return None\n\n\n"
                )
            })
            .collect();
        std::fs::write(dir.join(format!("{name}.py")), body).unwrap();
    }
}

#[test]
fn strategies_are_listed_one_per_line() {
    let out = run(&["edits", "strategies"]);
    assert_eq!(out.status.code(), Some(0));
    insta::assert_snapshot!(text(&out.stdout));
}

#[test]
fn perturb_then_compare_writes_the_csv_and_the_summary() {
    let src = tempfile::tempdir().unwrap();
    sources(src.path());
    let work = tempfile::tempdir().unwrap();
    let corpus = work.path().join("corpus");
    let corpus = corpus.to_str().unwrap();
    let out = run(&[
        "edits",
        "perturb",
        src.path().to_str().unwrap(),
        "--out",
        corpus,
        "--seed",
        "4",
        "--per-file",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines = std::fs::read_to_string(Path::new(corpus).join("edits.jsonl")).unwrap();
    let calls = lines.lines().count();
    assert!(calls >= 40, "{calls} calls");
    // The same seed gives the same corpus.
    let again = work.path().join("again");
    run(&[
        "edits",
        "perturb",
        src.path().to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
        "--seed",
        "4",
        "--per-file",
        "2",
    ]);
    assert_eq!(
        std::fs::read_to_string(again.join("edits.jsonl")).unwrap(),
        lines
    );

    // Break one line and point another at a missing blob: both are skipped, with their numbers.
    let mut broken: Vec<String> = lines.lines().map(str::to_owned).collect();
    broken[1] = "{not json".to_owned();
    let mut record: serde_json::Value = serde_json::from_str(&broken[2]).unwrap();
    record["before"] = "0".repeat(64).into();
    broken[2] = record.to_string();
    std::fs::write(
        Path::new(corpus).join("edits.jsonl"),
        broken.join("\n") + "\n",
    )
    .unwrap();

    let out = run(&[
        "edits",
        "compare",
        corpus,
        "--strategy",
        "exact",
        "--strategy",
        "safe",
        "--jobs",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("line 2: not a valid edit record"),
        "{stderr}"
    );
    assert!(
        stderr.contains("line 3: blob `") && stderr.contains("is missing"),
        "{stderr}"
    );
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("# Edit strategies compared"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "{} calls, {} with a gold answer.",
            calls - 2,
            calls - 2
        )),
        "{stdout}"
    );
    assert!(stdout.contains("| exact | safe |"), "{stdout}");
    let csv = std::fs::read_to_string(Path::new(corpus).join("edits-compare.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * (calls - 2));
    assert!(csv.starts_with("line,task,run,turn,call_id,path,kind,strategy,parse,locate,tiers,score,apply,correct,failure\n"));
    let md = std::fs::read_to_string(Path::new(corpus).join("edits-compare.md")).unwrap();
    assert_eq!(md.trim_end(), stdout.trim_end());
}

#[test]
fn bad_strategy_names_are_usage_errors_listing_the_valid_ones() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().to_str().unwrap();
    for (name, message) in [
        ("nope", "error: unknown edit strategy `nope`"),
        (
            "chain:exact,,indent",
            "error: malformed chain `chain:exact,,indent`: a step is empty",
        ),
        ("anchors:0", "error: bad threshold `0` in `anchors:0`"),
        ("chain:pi,exact", "error: `pi` cannot be a step of a chain"),
    ] {
        let out = run(&[
            "edits",
            "compare",
            corpus,
            "--strategy",
            "exact",
            "--strategy",
            name,
        ]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let stderr = text(&out.stderr);
        assert!(stderr.starts_with(message), "{stderr}");
        assert!(
            stderr.contains("hint: valid strategies: pi, exact, pi-local"),
            "{stderr}"
        );
    }
    // A missing corpus is a usage error too, after the names were checked.
    let out = run(&[
        "edits",
        "compare",
        "/nonexistent/corpus",
        "--strategy",
        "exact",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("failed to read the corpus at `/nonexistent/corpus"),
        "{}",
        text(&out.stderr)
    );
    let out = run(&[
        "edits",
        "perturb",
        corpus,
        "--out",
        corpus,
        "--kinds",
        "typo,nope",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown perturbation kind `nope`"));
}
