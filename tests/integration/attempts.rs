//! Tasks of several attempts and several prompts, end to end: recorded against the scripted
//! server in each wire format, replayed from the written cassettes by the `harness` binary, and
//! shown as such in `run.json`, the transcript, `trajectory.json`, `summary.md`, `summary.csv`
//! and `report.html`.

use std::path::Path;
use std::sync::Arc;

use harness::cassettes::CassetteMode;
use harness::providers::ApiKind;
use harness::providers::catalog::ModelSelector;
use harness::record::{AttemptOutcome, Outcome, RunRecord};
use harness::runner::{self, RunOptions, Silent};
use harness::tasks::{self, Task};
use harness::testkit;

use super::run::harness;

/// One model per wire format, named as the shipped cassettes name them.
const ARMS: [(ApiKind, &str); 4] = [
    (ApiKind::AnthropicMessages, "anthropic/scripted-claude"),
    (ApiKind::OpenaiCompletions, "openai/scripted-gpt"),
    (ApiKind::OpenaiResponses, "openai-responses/scripted-gpt"),
    (ApiKind::GoogleGenerativeAi, "google/scripted-gemini"),
];

/// A task whose check wants `greet.sh` to print `hello, world`, in two attempts.
const GREET_TASK: &str = r#"id: sh-greet
prompt: "Make `bash greet.sh` print exactly `hello, world`."
attempts: 2
checks:
  - name: greeting
    run: |
      test "$(bash greet.sh)" = "hello, world" || { echo "greet.sh printed: $(bash greet.sh)"; exit 1; }
tags: [shell, attempts]
"#;

/// Attempt 1 writes the wrong greeting and stops; attempt 2, after the failed check's output,
/// writes the right one.
const GREET_SCRIPT: &str = r#"
turns:
  - text: "I'll write the script."
    tool_calls:
      - name: write
        arguments: {path: greet.sh, content: "echo hello\n"}
  - text: "Done."
  - text: "The check wants the comma and the world too."
    tool_calls:
      - name: write
        arguments: {path: greet.sh, content: "echo 'hello, world'\n"}
  - text: "Fixed."
"#;

/// Three prompts, each answered by writing one file.
const STEPS_TASK: &str = r#"id: sh-steps
prompts:
  - "Write `a.txt` holding `one`."
  - "Now write `b.txt` holding `two`."
  - "Last, write `c.txt` holding `three`."
checks:
  - name: all three files
    run: test "$(cat a.txt b.txt c.txt)" = "$(printf 'one\ntwo\nthree')"
tags: [shell, prompts]
"#;

const STEPS_SCRIPT: &str = r#"
turns:
  - tool_calls:
      - name: write
        arguments: {path: a.txt, content: "one\n"}
  - text: "Wrote a.txt."
  - tool_calls:
      - name: write
        arguments: {path: b.txt, content: "two\n"}
  - text: "Wrote b.txt."
  - tool_calls:
      - name: write
        arguments: {path: c.txt, content: "three\n"}
  - text: "Wrote c.txt."
"#;

fn write_task(suite: &Path, id: &str, yaml: &str, files: &[(&str, &str)]) {
    let dir = suite.join(id);
    std::fs::create_dir_all(dir.join("repo")).unwrap();
    std::fs::write(dir.join("task.yaml"), yaml).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join("repo").join(name), text).unwrap();
    }
}

fn load(suite: &Path, id: &str) -> Arc<Task> {
    let loaded = tasks::load_suite(suite).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(loaded.tasks.into_iter().find(|t| t.id == id).unwrap())
}

/// Records `task` with `model` against the scripted server speaking `api`.
async fn record(
    task: &Arc<Task>,
    api: ApiKind,
    model: &str,
    script: &str,
    root: &Path,
) -> (RunRecord, Vec<testkit::ReceivedRequest>) {
    let script = testkit::parse_script(script, "inline.yaml").unwrap();
    let server = testkit::start(script, api).await;
    let mut opts = RunOptions::new(root.join("cassettes"), root.join("reports/recorded"));
    opts.tasks_dir = root.join("tasks");
    opts.mode = CassetteMode::Record;
    opts.models = vec![model.parse::<ModelSelector>().unwrap()];
    opts.base_url = Some(server.base_url());
    opts.key_env = Arc::new(|_| Some("test-key-not-secret".to_owned()));
    let planned = runner::plan_runs(std::slice::from_ref(task), &opts).unwrap();
    let mut records = runner::execute(planned, &opts, Arc::new(Silent)).await;
    (records.remove(0), server.requests())
}

/// The only report folder under `root/out`.
fn report(root: &Path) -> std::path::PathBuf {
    let mut folders: Vec<_> = std::fs::read_dir(root.join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    folders.pop().unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The user messages of a request body, in the provider's wire format, as text.
fn user_texts(api: ApiKind, body: &serde_json::Value) -> Vec<String> {
    let text_of = |v: &serde_json::Value| -> String {
        match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join(""),
            _ => String::new(),
        }
    };
    match api {
        ApiKind::AnthropicMessages | ApiKind::OpenaiCompletions => body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user" && !m["content"].to_string().contains("tool_result"))
            .map(|m| text_of(&m["content"]))
            .collect(),
        ApiKind::OpenaiResponses => body["input"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| text_of(&m["content"]))
            .collect(),
        ApiKind::GoogleGenerativeAi => body["contents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user" && m["parts"][0].get("text").is_some())
            .map(|m| text_of(&m["parts"]))
            .collect(),
    }
}

#[tokio::test]
async fn a_task_failing_attempt_1_passes_attempt_2_recorded_and_replayed_in_every_wire_format() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_task(
        &root.join("tasks"),
        "sh-greet",
        GREET_TASK,
        &[("greet.sh", "echo hi\n")],
    );
    let task = load(&root.join("tasks"), "sh-greet");
    assert_eq!(task.attempts, 2);

    let want = vec![
        AttemptOutcome {
            attempt: 1,
            passed: false,
            checks_passed: 0,
            checks_total: 1,
            turns: 2,
        },
        AttemptOutcome {
            attempt: 2,
            passed: true,
            checks_passed: 1,
            checks_total: 1,
            turns: 4,
        },
    ];
    for (api, model) in ARMS {
        let (recorded, requests) = record(&task, api, model, GREET_SCRIPT, root).await;
        assert_eq!(
            recorded.outcome,
            Outcome::Passed,
            "{model}: {}",
            recorded.reason
        );
        assert_eq!(recorded.attempt_outcomes, want, "{model}");
        assert_eq!(recorded.passed_at_attempt(), Some(2));
        assert_eq!(requests.len(), 4, "{model}");
        // The third request carries the failed check's output as the next user message.
        let users = user_texts(api, &requests[2].body);
        assert_eq!(users.len(), 2, "{model}: {users:?}");
        assert!(
            users[1].contains("## greeting") && users[1].contains("greet.sh printed: hello"),
            "{model}: {}",
            users[1]
        );
        assert!(users[1].contains("Fix the code so that every check passes."));
    }

    // The binary replays all four from their cassettes, with no server and no key.
    let (code, stdout, stderr) = harness(root, &["run", "tasks", "--reports", "out"]);
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("pass rate (attempt 1)"), "{stdout}");
    assert!(stdout.contains("pass rate (attempt 2)"), "{stdout}");
    let folder = report(root);
    let mut runs = 0;
    for entry in std::fs::read_dir(folder.join("runs")).unwrap() {
        let run = entry.unwrap().path();
        let file: serde_json::Value = serde_json::from_str(&read(&run.join("run.json"))).unwrap();
        let record = &file["record"];
        assert_eq!(record["outcome"], "passed");
        assert_eq!(record["task_attempts"], 2);
        assert_eq!(
            serde_json::from_value::<Vec<AttemptOutcome>>(record["attempt_outcomes"].clone())
                .unwrap(),
            want
        );
        let transcript = read(&run.join("transcript.md"));
        assert!(
            transcript.contains("## User · attempt 2 (the checks that failed)"),
            "{transcript}"
        );
        assert!(
            transcript.contains(
                "- attempts (of 2): 1 failed (0/1 checks, turn 2); 2 passed (1/1 checks, turn 4)"
            ),
            "{transcript}"
        );
        let trajectory: serde_json::Value =
            serde_json::from_str(&read(&run.join("trajectory.json"))).unwrap();
        let attempts: Vec<&serde_json::Value> = trajectory["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["extra"].get("attempt"))
            .collect();
        assert_eq!(attempts, [&serde_json::json!(2)]);
        assert_eq!(trajectory["extra"]["attempts"][1]["passed"], true);
        runs += 1;
    }
    assert_eq!(runs, 4);

    let summary = read(&folder.join("summary.md"));
    for line in [
        "| pass rate (attempt 1) | 95% CI (attempt 1) |",
        "| anthropic | scripted-claude | 1 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 100.0% (1/1) | [20.7%, 100.0%] | 0.0% (0/1) | [0.0%, 79.3%] |",
        "## By tag",
        "| attempts | google/scripted-gemini | 1 | 0.0% (0/1) | [0.0%, 79.3%] | 100.0% (1/1) | [20.7%, 100.0%] | - |",
    ] {
        assert!(summary.contains(line), "{line}\n{summary}");
    }
    let csv = read(&folder.join("summary.csv"));
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    // Four arms, then four arms under each of the two tags.
    assert_eq!(rows.len(), 12);
    for row in &rows {
        assert_eq!(&row[col("pass_rate")], "1.0000", "{row:?}");
        assert_eq!(&row[col("pass_rate_attempt_1")], "0.0000", "{row:?}");
        assert_eq!(&row[col("task_attempts")], "2", "{row:?}");
    }
    assert_eq!(
        rows.iter()
            .map(|r| r[col("tag")].to_owned())
            .collect::<Vec<_>>(),
        [
            "", "", "", "", "attempts", "attempts", "attempts", "attempts", "shell", "shell",
            "shell", "shell"
        ]
    );
    let html = read(&folder.join("report.html"));
    assert!(html.contains("pass rate at attempt 1"));
    assert!(html.contains("By tag"));
    assert!(html.contains("User · attempt 2 (the checks that failed)"));
    assert!(html.contains("<h3>Attempts</h3>"));
}

#[tokio::test]
async fn a_task_of_three_prompts_sends_each_when_the_agent_stops_and_replays() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_task(&root.join("tasks"), "sh-steps", STEPS_TASK, &[]);
    let task = load(&root.join("tasks"), "sh-steps");
    assert_eq!(task.prompts.len(), 3);

    for (api, model) in ARMS {
        let (recorded, requests) = record(&task, api, model, STEPS_SCRIPT, root).await;
        assert_eq!(
            recorded.outcome,
            Outcome::Passed,
            "{model}: {}",
            recorded.reason
        );
        assert_eq!(recorded.turns, 6);
        assert!(recorded.attempt_outcomes.is_empty());
        assert_eq!(requests.len(), 6);
        // Prompt 2 is sent after the reply that ended prompt 1, prompt 3 after the next.
        let counts: Vec<usize> = requests
            .iter()
            .map(|r| user_texts(api, &r.body).len())
            .collect();
        assert_eq!(counts, [1, 1, 2, 2, 3, 3], "{model}");
        let last = user_texts(api, &requests[5].body);
        assert_eq!(last[2], "Last, write `c.txt` holding `three`.");
    }

    let (code, stdout, stderr) = harness(root, &["run", "tasks", "--reports", "out"]);
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    let folder = report(root);
    let mut runs = 0;
    for entry in std::fs::read_dir(folder.join("runs")).unwrap() {
        let run = entry.unwrap().path();
        let transcript = read(&run.join("transcript.md"));
        for n in 1..=3 {
            assert!(
                transcript.contains(&format!("## User · prompt {n} of 3")),
                "{transcript}"
            );
        }
        let trajectory: serde_json::Value =
            serde_json::from_str(&read(&run.join("trajectory.json"))).unwrap();
        let prompts: Vec<u64> = trajectory["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["extra"].get("prompt").and_then(|p| p.as_u64()))
            .collect();
        assert_eq!(prompts, [1, 2, 3]);
        runs += 1;
    }
    assert_eq!(runs, 4);
    let html = read(&folder.join("report.html"));
    assert!(html.contains("User · prompt 3 of 3"));
    // One attempt: no attempt columns anywhere.
    assert!(!read(&folder.join("summary.md")).contains("attempt 1"));
}
