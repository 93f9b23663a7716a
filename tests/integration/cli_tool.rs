//! `harness tool` and `harness tools`, run as the built binary.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

fn harness() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
    cmd.env_remove("RUST_BACKTRACE");
    cmd
}

fn run(args: &[&str]) -> Output {
    harness().args(args).output().expect("harness runs")
}

fn run_with_stdin(args: &[&str], stdin: impl AsRef<[u8]>) -> Output {
    let mut child = harness()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("harness runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_ref())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stdout_json(out: &Output) -> Value {
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(text.lines().count(), 1, "one line expected: {text}");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_successful_bash_call_prints_one_json_result() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().to_str().unwrap();
    let out = run(&[
        "tool",
        "bash",
        "--args",
        r#"{"command": "echo hi"}"#,
        "--cwd",
        cwd,
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        stdout_json(&out),
        json!({"isError": false, "content": [{"type": "text", "text": "hi\n"}]})
    );
}

#[test]
fn a_tool_error_still_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().to_str().unwrap();
    let out = run(&[
        "tool",
        "bash",
        "--args",
        r#"{"command": "exit 4"}"#,
        "--cwd",
        cwd,
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        stdout_json(&out),
        json!({
            "isError": true,
            "content": [{"type": "text", "text": "(no output)\n\nCommand exited with code 4"}],
            "details": {}
        })
    );
}

#[test]
fn a_validation_error_is_a_tool_error() {
    let out = run(&["tool", "bash", "--args", r#"{"command": []}"#]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let result = stdout_json(&out);
    assert_eq!(result["isError"], json!(true));
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Validation failed for tool \"bash\":\n  - command: must be string")
    );
}

#[test]
fn invalid_json_arguments_are_a_usage_error() {
    let out = run(&["tool", "bash", "--args", "{not json"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("error: --args is not valid JSON"),
        "{stderr}"
    );
    assert!(stderr.contains("\nhint: "), "{stderr}");
}

#[test]
fn usage_errors_exit_2_with_a_hint() {
    for args in [
        vec!["tool", "bash", "--bogus"],
        vec!["tool", "nope", "--args", "{}"],
        vec!["tool", "bash", "--cwd", "/definitely/not/here"],
        vec!["tools", "--set", "nope"],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr}");
        assert!(stderr.contains("hint: "), "{args:?}: {stderr}");
    }
}

/// Runs `harness tool --batch` in `cwd` on `input`; its result lines (it must exit 0).
fn batch(cwd: &std::path::Path, input: impl AsRef<[u8]>) -> Vec<Value> {
    let out = run_with_stdin(&["tool", "--batch", "--cwd", cwd.to_str().unwrap()], input);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn batch_runs_lines_in_order_and_reports_malformed_ones() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let input = [
        r#"{"tool": "bash", "args": {"command": "echo one"}}"#,
        r#"{"tool": "bash", "args": {"command": "#,
        "",
        r#"{"tool": "bash", "cwd": "sub", "args": {"command": "basename \"$PWD\""}}"#,
        r#"{"tool": "nope", "args": {}}"#,
        r#"{"tool": "bash", "cwd": "missing", "args": {"command": "true"}}"#,
    ]
    .join("\n");
    let lines = batch(dir.path(), input);
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert_eq!(lines[0]["content"][0]["text"], json!("one\n"));
    assert_eq!(lines[1]["isError"], json!(true));
    let malformed = lines[1]["content"][0]["text"].as_str().unwrap();
    assert!(
        malformed.starts_with("line 2: invalid batch request"),
        "{malformed}"
    );
    assert_eq!(lines[2]["content"][0]["text"], json!("sub\n"));
    assert_eq!(lines[3]["content"][0]["text"], json!("Tool nope not found"));
    let missing = lines[4]["content"][0]["text"].as_str().unwrap();
    assert!(
        missing.starts_with("line 6: working directory"),
        "{missing}"
    );
}

#[test]
fn batch_answers_a_line_that_is_not_utf8_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"tool\": \"bash\", \"args\": {\"command\": \"echo one\"}}\n");
    input.extend_from_slice(b"{\"tool\": \"bash\", \"args\": {\"command\": \"echo \xff\"}}\n");
    input.extend_from_slice(b"{\"tool\": \"bash\", \"args\": {\"command\": \"echo three\"}}\n");
    assert_eq!(
        batch(dir.path(), input),
        [
            json!({"isError": false, "content": [{"type": "text", "text": "one\n"}]}),
            json!({"isError": true, "content": [{"type": "text", "text":
                "line 2: not UTF-8 (byte 0xff at offset 43); a batch line is one JSON object in UTF-8"}],
                "details": {}}),
            json!({"isError": false, "content": [{"type": "text", "text": "three\n"}]}),
        ]
    );
}

#[test]
fn tools_lists_definitions() {
    let out = run(&["tools", "--set", "coding"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let defs: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = defs
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["read", "bash", "edit", "write"]);
    let bash = &defs[1];
    assert_eq!(
        bash.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["name", "description", "parameters"]
    );
    assert_eq!(bash["parameters"]["required"], json!(["command"]));

    let out = run(&["tools"]);
    let all: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(all.as_array().unwrap().len(), 7);
}

#[test]
fn edit_telemetry_only_with_the_flag_and_the_strategy_is_selectable() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "hello world\n").unwrap();
    let cwd = dir.path().to_str().unwrap();
    let args = r#"{"path": "f.txt", "edits": [{"oldText": "world", "newText": "there"}]}"#;
    let out = run(&[
        "tool",
        "edit",
        "--args",
        args,
        "--cwd",
        cwd,
        "--edit-strategy",
        "exact",
        "--telemetry",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let result = stdout_json(&out);
    assert_eq!(result["isError"], json!(false), "{result}");
    assert_eq!(result["edit"]["strategy"], json!("exact"), "{result}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
        "hello there\n"
    );

    let out = run(&["tool", "edit", "--args", "{}", "--cwd", cwd]);
    let result = stdout_json(&out);
    assert_eq!(result["isError"], json!(true));
    assert!(result.get("edit").is_none(), "{result}");

    let out = run(&["tool", "edit", "--args", "{}", "--edit-strategy", "bogus"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("hint: valid strategies: pi, exact"),
        "{stderr}"
    );
}
