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
    // The pair's p-value is written as the paired report writes one: `0.125`, `1.000`, or two
    // significant places below 0.001 (`6.9e-18`, not `6.900e-18`; `1.000`, not `1.000e0`).
    let pair = stdout
        .lines()
        .find(|l| l.starts_with("| exact | safe |"))
        .unwrap();
    let p = pair.split('|').nth(5).unwrap().trim();
    let value: f64 = p.parse().unwrap();
    assert_eq!(p, harness::reports::paired::p_value(value), "{pair}");
    let csv = std::fs::read_to_string(Path::new(corpus).join("edits-compare.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * (calls - 2));
    assert!(csv.starts_with("line,task,run,turn,call_id,path,kind,strategy,parse,locate,tiers,score,apply,correct,failure,near_copy_line\n"));
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

/// The corpus of the shipped suite, built by replaying its cassettes: `harness run` writes the
/// same `edits.jsonl` in its report folder. Re-applying every call under `exact` and under `pi`
/// disagrees on exactly the shipped fuzzy-matched edit (py-slugify, turn 3, in each wire
/// format), which `exact` refuses and `pi` applies; every other call gives both the same file.
#[test]
#[ignore = "slow: .ci/run runs it (`cargo test -- --ignored`)"]
fn the_shipped_suites_corpus_tells_exact_from_pi_at_the_fuzzy_edit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["edits", "extract", "tasks", "--out"])
        .arg(&corpus)
        .current_dir(root)
        .env_remove("CI")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines = std::fs::read_to_string(corpus.join("edits.jsonl")).unwrap();
    assert!(lines.lines().count() >= 30, "{lines}");

    // `harness run` writes the same corpus as it goes (in the shipped suite's replay that the
    // report-file tests share).
    let report = &super::report_files::suite().pi;
    let from_run = std::fs::read_to_string(report.join("edits.jsonl")).unwrap();
    assert_eq!(from_run.lines().count(), lines.lines().count());

    let out = run(&[
        "edits",
        "compare",
        corpus.to_str().unwrap(),
        "--strategy",
        "exact",
        "--strategy",
        "pi",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut reader = csv::Reader::from_path(corpus.join("edits-compare.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (line, task, strategy, apply, turn) = (
        col("line"),
        col("task"),
        col("strategy"),
        col("apply"),
        col("turn"),
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let by_line = |n: &str, s: &str| {
        rows.iter()
            .find(|r| &r[line] == n && &r[strategy] == s)
            .unwrap()
            .clone()
    };
    let lines_seen: std::collections::BTreeSet<String> =
        rows.iter().map(|r| r[line].to_owned()).collect();
    let mut disagreements = Vec::new();
    for n in &lines_seen {
        let (e, p) = (by_line(n, "exact"), by_line(n, "pi"));
        if e[apply] != p[apply] {
            disagreements.push((
                e[task].to_owned(),
                e[turn].to_owned(),
                e[apply].to_owned(),
                p[apply].to_owned(),
            ));
        }
    }
    assert_eq!(
        disagreements.len(),
        4,
        "one per wire format: {disagreements:?}"
    );
    for (task, turn, exact, pi) in &disagreements {
        assert_eq!((task.as_str(), turn.as_str()), ("py-slugify", "3"));
        assert_eq!(pi, "applied");
        assert_ne!(exact, "applied");
    }
    let md = std::fs::read_to_string(corpus.join("edits-compare.md")).unwrap();
    assert!(md.contains("### exact vs pi"), "{md}");
    assert!(
        md.matches("py-slugify").count() >= 4,
        "the disagreeing calls are listed: {md}"
    );
}

/// `--edit-strategy` repeated: each strategy is an arm of its own, with its own run folders,
/// rows in every summary, and the arms compared paired by task and epoch. Replayed with
/// `--on-divergence continue`, the recorded actions of py-slugify fail under `exact` where they
/// passed under `pi`: a flip between the arms, and an outcome changed against the cassette.
#[test]
#[ignore = "slow: .ci/run runs it (`cargo test -- --ignored`)"]
fn each_edit_strategy_is_an_arm_compared_in_the_summary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let reports = dir.path().join("reports");
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args([
            "run",
            "tasks",
            "--task",
            "py-slugify",
            "--task",
            "py-median",
            "--edit-strategy",
            "pi",
            "--edit-strategy",
            "exact",
            "--on-divergence",
            "continue",
            "-q",
            "--reports",
        ])
        .arg(&reports)
        .current_dir(root)
        .env_remove("CI")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(102), "{}", text(&out.stderr));
    let report = std::fs::read_dir(&reports)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // 2 tasks x 4 recorded models x 2 strategies, each in a folder of its own.
    let folders: Vec<String> = std::fs::read_dir(report.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(folders.len(), 16, "{folders:?}");
    assert!(folders.contains(&"py-slugify--anthropic--scripted-claude--exact--e1".to_owned()));
    assert!(folders.contains(&"py-slugify--anthropic--scripted-claude--e1".to_owned()));

    let mut reader = csv::Reader::from_path(report.join("summary.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (provider, strategy, runs, passed) = (
        col("provider"),
        col("edit_strategy"),
        col("runs"),
        col("passed"),
    );
    let tag = col("tag");
    // The arms over every run; the per-tag rows follow.
    let rows: Vec<csv::StringRecord> = reader
        .records()
        .map(Result::unwrap)
        .filter(|r| r[tag].is_empty())
        .collect();
    assert_eq!(rows.len(), 8, "one row per provider, model and strategy");
    for r in &rows {
        assert_eq!(&r[runs], "2");
        let want = if &r[strategy] == "exact" { "1" } else { "2" };
        assert_eq!(&r[passed], want, "{} {}", &r[provider], &r[strategy]);
    }
    let summary = std::fs::read_to_string(report.join("summary.md")).unwrap();
    assert!(
        summary.contains("| anthropic | scripted-claude [exact] |"),
        "{summary}"
    );
    assert!(summary.contains("## Arms compared"), "{summary}");
    assert!(
        summary.contains("py-slugify") && summary.contains("scripted-claude (exact)"),
        "the flip between the arms is listed: {summary}"
    );
}

/// A Pi session (version 2) on a repository: its edits replayed from the commit before it
/// started; a cut-off line and a call without a result named with file and line, the corpus
/// written anyway and the exit status 2; `compare` reads the corpus.
#[test]
fn a_pi_session_becomes_a_corpus_and_its_bad_lines_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join("m.py"), "def g():\n    return 'a'\n").unwrap();
    super::sessions::git(&repo, &["init", "-q"]);
    super::sessions::git(&repo, &["add", "."]);
    super::sessions::git(&repo, &["commit", "-q", "-m", "base"]);
    let usage = serde_json::json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0});
    let call = |id: &str, parent: &str, call: &str, old: &str, new: &str| {
        serde_json::json!({"type": "message", "id": id, "parentId": parent, "timestamp": "t",
            "message": {"role": "assistant", "api": "a", "provider": "p", "model": "m", "usage": usage, "stopReason": "toolUse",
                "content": [{"type": "toolCall", "id": call, "name": "edit", "arguments": {"path": "m.py", "oldText": old, "newText": new}}]}})
        .to_string()
    };
    let result = |id: &str, parent: &str, call: &str, is_error: bool| {
        serde_json::json!({"type": "message", "id": id, "parentId": parent, "timestamp": "t",
            "message": {"role": "toolResult", "toolCallId": call, "toolName": "edit", "isError": is_error,
                "content": [{"type": "text", "text": if is_error { "Could not find the exact text" } else { "Successfully replaced text" }}]}})
        .to_string()
    };
    let lines = [
        serde_json::json!({"type": "session", "version": 2, "id": "s", "timestamp": "2025-06-01T00:00:00Z", "cwd": "/x"}).to_string(),
        serde_json::json!({"type": "message", "id": "u", "parentId": null, "timestamp": "t", "message": {"role": "user", "content": "b please"}}).to_string(),
        call("a1", "u", "c1", "return \"a\"", "return 'b'"),
        result("r1", "a1", "c1", true),
        "{\"type\":\"message\",\"id\":\"lost\",".to_owned(),
        call("a2", "r1", "c2", "return 'a'", "return 'b'"),
        result("r2", "a2", "c2", false),
        call("a3", "r2", "c3", "def g", "def h"),
    ];
    let session = dir.path().join("pi.jsonl");
    std::fs::write(&session, lines.join("\n") + "\n").unwrap();
    let corpus = dir.path().join("corpus");
    let out = run(&[
        "edits",
        "extract",
        session.to_str().unwrap(),
        "--repo",
        repo.to_str().unwrap(),
        "--out",
        corpus.to_str().unwrap(),
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let s = session.display();
    assert!(
        stderr.contains(&format!("warning: {s}:5: not valid JSON")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "warning: {s}:8: the `edit` call `c3` has no result on the session's path; left out"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("files start from commit"), "{stderr}");
    assert!(
        stderr.contains(
            "2 edit call(s) from 1 session(s): 2 kept (1 applied, 1 of them exactly; 1 refused)"
        ),
        "{stderr}"
    );
    let records = std::fs::read_to_string(corpus.join("edits.jsonl")).unwrap();
    assert_eq!(records.lines().count(), 2, "{records}");
    assert!(records.contains("\"strategy\":\"pi-session\""), "{records}");

    let out = run(&[
        "edits",
        "compare",
        corpus.to_str().unwrap(),
        "--strategy",
        "exact",
        "--strategy",
        "pi",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut reader = csv::Reader::from_path(corpus.join("edits-compare.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let correct: Vec<String> = reader
        .records()
        .map(|r| r.unwrap()[col("correct")].to_owned())
        .collect();
    // The refused call (double quotes for single) is recovered by the next: its gold is the
    // fixed file, which neither strategy reaches from its arguments; the applied call is its
    // own gold. Rows: each call under exact, then pi.
    assert_eq!(correct, ["missed", "missed", "correct", "correct"]);

    // A commit the repository does not have is named; the import goes on without it.
    let out = run(&[
        "edits",
        "extract",
        session.to_str().unwrap(),
        "--repo",
        repo.to_str().unwrap(),
        "--commit",
        "deadbeef",
        "--out",
        dir.path().join("c2").to_str().unwrap(),
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("has no commit `deadbeef`"), "{stderr}");
    assert!(stderr.contains("2 file unknown"), "{stderr}");
}

/// A Claude Code transcript, told by its first line: an `Edit` kept with the file its result
/// holds; exit 0 when nothing was skipped.
#[test]
fn a_claude_code_transcript_becomes_a_corpus() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        serde_json::json!({"type": "assistant", "uuid": "1", "sessionId": "cc", "cwd": "/w", "timestamp": "2026-01-01T00:00:00Z",
            "message": {"id": "m1", "role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Edit",
                "input": {"file_path": "/w/a.txt", "old_string": "x", "new_string": "y"}}]}}),
        serde_json::json!({"type": "user", "uuid": "2", "sessionId": "cc", "cwd": "/w", "timestamp": "2026-01-01T00:00:01Z",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "updated"}]},
            "toolUseResult": {"filePath": "/w/a.txt", "oldString": "x", "newString": "y", "originalFile": "x\n", "userModified": false, "replaceAll": false}}),
    ];
    let transcript = dir.path().join("cc.jsonl");
    std::fs::write(&transcript, lines.map(|l| l.to_string()).join("\n")).unwrap();
    let corpus = dir.path().join("corpus");
    let out = run(&[
        "edits",
        "extract",
        transcript.to_str().unwrap(),
        "--out",
        corpus.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let records = std::fs::read_to_string(corpus.join("edits.jsonl")).unwrap();
    assert!(
        records.contains("\"strategy\":\"claude-code\""),
        "{records}"
    );
    assert!(
        records
            .contains(r#""arguments":{"path":"/w/a.txt","edits":[{"oldText":"x","newText":"y"}]}"#),
        "{records}"
    );
}
