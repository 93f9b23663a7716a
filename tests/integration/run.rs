//! The whole path of `harness run`: the scripted model server answering in each wire format,
//! recording through the real HTTP and SSE code, replaying from the written cassette, divergence
//! after a changed tool output, and bad input (missing cassette, malformed task, malformed
//! cassette) failing one run while the others go on.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use harness::cassettes::{self, CassetteMode};
use harness::providers::ApiKind;
use harness::providers::catalog::ModelSelector;
use harness::record::{Outcome, RunRecord};
use harness::runner::{self, RunOptions, Silent};
use harness::tasks::{self, Task};
use harness::testkit;

pub(super) fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Copies the shipped task `id` (task.yaml and repo/) into `suite`.
fn copy_task(id: &str, suite: &Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(repo_root().join("tasks").join(id))
        .arg(suite.join(id))
        .status()
        .unwrap();
    assert!(status.success());
}

fn load(suite: &Path, id: &str) -> Arc<Task> {
    let loaded = tasks::load_suite(suite).unwrap_or_else(|e| panic!("{e}"));
    Arc::new(
        loaded
            .tasks
            .into_iter()
            .find(|t| t.id == id)
            .expect("task present"),
    )
}

fn selector(api: ApiKind) -> ModelSelector {
    match api {
        ApiKind::AnthropicMessages => "anthropic/scripted-claude".parse().unwrap(),
        _ => "openai/scripted-gpt".parse().unwrap(),
    }
}

fn options(cassettes: &Path, reports: &Path, mode: CassetteMode) -> RunOptions {
    let mut options = RunOptions::new(cassettes.to_path_buf(), reports.to_path_buf());
    options.mode = mode;
    options.jobs = 2;
    options.key_env = Arc::new(|_| Some("test-key-not-secret".to_owned()));
    options
}

/// Records `task` against the scripted server speaking `api`; returns the record and the
/// requests the server received.
async fn record(
    task: &Arc<Task>,
    api: ApiKind,
    cassettes: &Path,
    reports: &Path,
) -> (RunRecord, Vec<testkit::ReceivedRequest>) {
    let script =
        testkit::load_script(repo_root().join(format!("tests/scripts/{}.yaml", task.id))).unwrap();
    let server = testkit::start(script, api).await;
    let mut opts = options(cassettes, reports, CassetteMode::Record);
    opts.models = vec![selector(api)];
    opts.base_url = Some(server.base_url());
    let planned = runner::plan_runs(std::slice::from_ref(task), &opts).unwrap();
    let mut records = runner::execute(planned, &opts, Arc::new(Silent)).await;
    (records.remove(0), server.requests())
}

async fn replay(task: &Arc<Task>, cassettes: &Path, reports: &Path) -> Vec<RunRecord> {
    let opts = options(cassettes, reports, CassetteMode::Replay);
    let planned = runner::plan_runs(std::slice::from_ref(task), &opts).unwrap();
    runner::execute(planned, &opts, Arc::new(Silent)).await
}

#[tokio::test]
async fn record_then_replay_both_wire_formats() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tasks");
    std::fs::create_dir(&suite).unwrap();
    copy_task("py-median", &suite);
    let task = load(&suite, "py-median");
    let cassettes_dir = dir.path().join("cassettes");
    let reports = dir.path().join("reports");

    for api in [ApiKind::AnthropicMessages, ApiKind::OpenaiCompletions] {
        let (recorded, requests) = record(&task, api, &cassettes_dir, &reports).await;
        assert_eq!(
            recorded.outcome,
            Outcome::Passed,
            "{api:?}: {}",
            recorded.reason
        );
        let sel = selector(api);
        let path = cassettes::cassette_path(&cassettes_dir, "py-median", &sel.provider, &sel.model);
        let text = std::fs::read_to_string(&path).unwrap();
        let cassette = cassettes::Cassette::from_yaml(&text, &path).unwrap();
        assert_eq!(cassette.interactions.len(), requests.len(), "{api:?}");
        // The header says which sandbox tier the recording ran under.
        let tier = harness::sandbox::Sandbox::detect(None);
        assert_eq!(cassette.header.sandbox.as_deref(), Some(tier.name()));
        assert_eq!(recorded.turns as usize, requests.len());
        // The first request is what the model sees before any tool ran: system prompt, tool
        // definitions, task prompt, in the provider's wire format.
        insta::assert_json_snapshot!(
            format!("py_median_first_request_{}", sel.provider),
            requests[0].body
        );
        // The key never reaches the file, and neither does the workspace path.
        assert!(!text.contains("test-key-not-secret"));
        assert!(
            !text.contains("/tmp/"),
            "{api:?}: a temp path leaked into the cassette"
        );
        // What the server received is what the cassette holds, request for request.
        for (i, (req, int)) in requests.iter().zip(&cassette.interactions).enumerate() {
            assert_eq!(req.path, int.request.path, "{api:?} request {i}");
            assert_eq!(
                req.body["messages"].as_array().map(Vec::len),
                int.request.body["messages"].as_array().map(Vec::len),
                "{api:?} request {i}"
            );
        }
    }

    // Replay needs no server and no key: both recordings pass again.
    let records = replay(&task, &cassettes_dir, &reports).await;
    assert_eq!(records.len(), 2);
    for r in &records {
        assert_eq!(
            r.outcome,
            Outcome::Passed,
            "{}/{}: {}",
            r.provider,
            r.model,
            r.reason
        );
        assert!(r.turns >= 3);
        assert!(
            r.detail
                .as_deref()
                .is_none_or(|d| !d.contains("sandbox tier")),
            "the same tier says nothing: {:?}",
            r.detail
        );
    }

    // A replay under another tier says so up front, in its record.
    let mut opts = options(&cassettes_dir, &reports, CassetteMode::Replay);
    opts.sandbox = harness::sandbox::Sandbox::none();
    let planned = runner::plan_runs(std::slice::from_ref(&task), &opts).unwrap();
    let tier = harness::sandbox::Sandbox::detect(None);
    for r in runner::execute(planned, &opts, Arc::new(Silent)).await {
        let detail = r.detail.unwrap_or_default();
        assert!(
            detail.contains(&format!(
                "this replay runs with sandbox tier `none` (recorded with `{}`)",
                tier.name()
            )),
            "{detail}"
        );
    }
}

#[tokio::test]
async fn a_changed_tool_output_diverges_at_the_request_that_carries_it() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tasks");
    std::fs::create_dir(&suite).unwrap();
    copy_task("py-median", &suite);
    let task = load(&suite, "py-median");
    let cassettes_dir = dir.path().join("cassettes");
    let reports = dir.path().join("reports");
    let (recorded, _) = record(&task, ApiKind::AnthropicMessages, &cassettes_dir, &reports).await;
    assert_eq!(recorded.outcome, Outcome::Passed, "{}", recorded.reason);

    // The script reads tests/test_stats.py in its first turn: change that file, and the tool
    // result in the second request differs from the recording.
    let test_file = suite.join("py-median/repo/tests/test_stats.py");
    let mut text = std::fs::read_to_string(&test_file).unwrap();
    text.push_str("# a line the recording never saw\n");
    std::fs::write(&test_file, text).unwrap();
    let records = replay(&task, &cassettes_dir, &reports).await;
    let r = &records[0];
    assert_eq!(r.outcome, Outcome::Diverged, "{}", r.reason);
    assert!(r.reason.contains("request 2 of"), "{}", r.reason);
    let detail = r.detail.as_deref().unwrap_or_default();
    assert!(
        detail.contains("+") && detail.contains("a line the recording never saw"),
        "the diff shows the new text: {detail}"
    );
}

#[tokio::test]
async fn a_missing_cassette_is_an_error_that_says_how_to_record_it() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tasks");
    std::fs::create_dir(&suite).unwrap();
    copy_task("py-median", &suite);
    let task = load(&suite, "py-median");
    let mut opts = options(
        &dir.path().join("cassettes"),
        &dir.path().join("reports"),
        CassetteMode::Replay,
    );
    opts.models = vec!["anthropic/claude-never-recorded".parse().unwrap()];
    let planned = runner::plan_runs(&[task], &opts).unwrap();
    let records = runner::execute(planned, &opts, Arc::new(Silent)).await;
    let r = &records[0];
    assert_eq!(r.outcome, Outcome::Error);
    let text = format!("{} {}", r.reason, r.detail.as_deref().unwrap_or_default());
    assert!(text.contains("--cassette-mode record"), "{text}");
    assert!(text.contains("claude-never-recorded"), "{text}");
}

/// Runs the binary with `args` in `cwd` (no `CI`, no cassette-mode variable); returns (exit
/// code, stdout, stderr).
pub(super) fn harness(cwd: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .current_dir(cwd)
        .env_remove("CI")
        .env_remove("HARNESS_CASSETTE_MODE")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn bad_tasks_and_cassettes_fail_alone_while_the_others_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let suite = root.join("tasks");
    std::fs::create_dir(&suite).unwrap();
    // A good task with its shipped cassettes.
    copy_task("py-median", &suite);
    std::fs::create_dir_all(root.join("cassettes")).unwrap();
    let status = Command::new("cp")
        .arg("-a")
        .arg(repo_root().join("cassettes/py-median"))
        .arg(root.join("cassettes/py-median"))
        .status()
        .unwrap();
    assert!(status.success());
    // A task with a typo in its definition.
    copy_task("sh-args", &suite);
    let yaml = suite.join("sh-args/task.yaml");
    let text = std::fs::read_to_string(&yaml).unwrap();
    std::fs::write(&yaml, text.replacen("prompt:", "promt:", 1)).unwrap();
    // A task whose cassette is malformed.
    copy_task("py-crlf", &suite);
    std::fs::create_dir_all(root.join("cassettes/py-crlf")).unwrap();
    std::fs::write(
        root.join("cassettes/py-crlf/anthropic--scripted-claude.yaml"),
        "format_version: 1\ninteractions: [this is not a cassette\n",
    )
    .unwrap();

    let (code, stdout, stderr) = harness(root, &["run", "tasks", "--jobs", "2"]);
    assert_eq!(
        code, 2,
        "input problems exit 2\nstdout:{stdout}\nstderr:{stderr}"
    );
    assert!(
        stderr.contains("sh-args/task.yaml") && stderr.contains("promt"),
        "the malformed task is named with its field: {stderr}"
    );
    let report = std::fs::read_dir(root.join("reports"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let runs = std::fs::read_to_string(report.join("runs.csv")).unwrap();
    let rows: Vec<&str> = runs.lines().skip(1).collect();
    let median: Vec<&&str> = rows
        .iter()
        .filter(|r| r.starts_with("py-median,"))
        .collect();
    assert_eq!(
        median.len(),
        4,
        "every recording of the good task ran: {runs}"
    );
    assert!(median.iter().all(|r| r.contains(",passed,")), "{runs}");
    let crlf = rows
        .iter()
        .find(|r| r.starts_with("py-crlf,"))
        .expect("py-crlf row");
    assert!(crlf.contains(",error,"), "{crlf}");
    assert!(
        crlf.contains("anthropic--scripted-claude.yaml"),
        "the error names the cassette file: {crlf}"
    );
}

/// The main job of the README: the shipped suite, replayed from its cassettes, passes every
/// task; its deterministic reports are snapshot-tested. The replay is the one the report-file
/// tests share (`report_files::suite`: `harness run tasks`, which must exit 0).
#[test]
#[ignore = "slow: .ci/run runs it (`cargo test -- --ignored`)"]
fn the_shipped_suite_replays_and_passes() {
    let folder = &super::report_files::suite().pi;
    let summary = std::fs::read_to_string(folder.join("summary.md")).unwrap();
    insta::assert_snapshot!("shipped_suite_summary_md", summary);
    let runs = std::fs::read_to_string(folder.join("runs.csv")).unwrap();
    insta::assert_snapshot!("shipped_suite_runs_csv", without_timings(&runs));
}

/// `runs.csv` without its timing columns, which differ on every run.
pub(crate) fn without_timings(csv_text: &str) -> String {
    harness::reports::csv::without_timings(csv_text).unwrap()
}

/// A temp project with the shipped tasks `ids` and their cassettes; returns its root.
fn project_with(ids: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tasks");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::create_dir_all(dir.path().join("cassettes")).unwrap();
    for id in ids {
        copy_task(id, &suite);
        let status = Command::new("cp")
            .arg("-a")
            .arg(repo_root().join("cassettes").join(id))
            .arg(dir.path().join("cassettes").join(id))
            .status()
            .unwrap();
        assert!(status.success());
    }
    dir
}

fn only_report(root: &Path) -> PathBuf {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(root.join("reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    folders.sort();
    folders.pop().unwrap()
}

#[test]
fn max_cost_stops_starting_runs_once_the_budget_is_spent() {
    let project = project_with(&["py-median", "sh-args"]);
    let root = project.path();
    std::fs::write(
        root.join("tasks/harness.yaml"),
        "providers:\n  anthropic:\n    models:\n      scripted-claude: {price: {input: 1000, output: 1000}}\n  openai:\n    models:\n      scripted-gpt: {price: {input: 1000, output: 1000}}\n  openai-responses:\n    models:\n      scripted-gpt: {price: {input: 1000, output: 1000}}\n  google:\n    models:\n      scripted-gemini: {price: {input: 1000, output: 1000}}\n",
    )
    .unwrap();
    let (code, stdout, stderr) =
        harness(root, &["run", "tasks", "--jobs", "1", "--max-cost", "0.5"]);
    assert_eq!(code, 100, "skipped runs are not passes\n{stdout}\n{stderr}");
    let runs = std::fs::read_to_string(only_report(root).join("runs.csv")).unwrap();
    let passed = runs.lines().filter(|l| l.contains(",passed,")).count();
    let skipped = runs.lines().filter(|l| l.contains(",skipped,")).count();
    assert_eq!(passed, 1, "the first run spends the budget: {runs}");
    assert_eq!(
        skipped,
        runs.lines().count() - 2,
        "all the others are skipped: {runs}"
    );
    assert!(skipped >= 3);
    assert!(runs.contains("--max-cost budget"), "{runs}");
}

#[test]
fn rerun_errors_runs_only_the_runs_that_errored_and_completes_the_report() {
    let project = project_with(&["py-median", "sh-args"]);
    let root = project.path();
    let cassette = root.join("cassettes/sh-args/openai--scripted-gpt.yaml");
    let good = std::fs::read_to_string(&cassette).unwrap();
    std::fs::write(&cassette, "not: [a cassette\n").unwrap();
    let (code, _, stderr) = harness(root, &["run", "tasks"]);
    assert_eq!(code, 100, "{stderr}");
    let first = only_report(root);
    let runs = std::fs::read_to_string(first.join("runs.csv")).unwrap();
    assert_eq!(
        runs.lines().filter(|l| l.contains(",error,")).count(),
        1,
        "{runs}"
    );

    // The cassette fixed (the cassette of the errored run may change), only that run runs
    // again, and the original report is complete.
    std::fs::write(&cassette, good).unwrap();
    let (code, stdout, stderr) = harness(
        root,
        &["run", "tasks", "--rerun-errors", first.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stderr.contains("running 1"), "{stderr}");
    assert_eq!(only_report(root), first, "no new report folder");
    let rerun = std::fs::read_to_string(first.join("runs.csv")).unwrap();
    let rows: Vec<&str> = rerun.lines().skip(1).collect();
    assert_eq!(rows.len(), 8, "{rerun}");
    assert!(rows.iter().all(|r| r.contains(",passed,")), "{rerun}");
    let summary = std::fs::read_to_string(first.join("summary.md")).unwrap();
    assert!(summary.contains("8 runs of 2 tasks"), "{summary}");
    // Nothing errored is left: a second rerun runs nothing.
    let (code, _, stderr) = harness(root, &["run", "--rerun-errors", first.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("running 0"), "{stderr}");
}

/// A model that makes the agent print a key-shaped string: the recording refuses to write the
/// cassette, says so in the record, and never prints the secret itself.
#[tokio::test]
async fn a_secret_in_the_traffic_refuses_the_recording() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tasks");
    testkit::write_trivial_task(&suite).unwrap();
    let task = load(&suite, testkit::TRIVIAL_TASK_ID);
    let leaked = format!("sk-ant-api03-{}", "Q".repeat(40));
    let script = testkit::parse_script(
        &format!(
            "turns:\n  - tool_calls:\n      - name: bash\n        arguments: {{command: 'echo {leaked}'}}\n  - text: done\n"
        ),
        "secret.yaml",
    )
    .unwrap();
    let server = testkit::start(script, ApiKind::AnthropicMessages).await;
    let cassettes_dir = dir.path().join("cassettes");
    let mut opts = options(
        &cassettes_dir,
        &dir.path().join("reports"),
        CassetteMode::Record,
    );
    opts.models = vec![selector(ApiKind::AnthropicMessages)];
    opts.base_url = Some(server.base_url());
    let planned = runner::plan_runs(&[task], &opts).unwrap();
    let record = runner::execute(planned, &opts, Arc::new(Silent))
        .await
        .remove(0);
    // The run passed, but the recording it was made for is lost: an infrastructure error.
    assert_eq!(record.outcome, Outcome::Error, "{}", record.reason);
    assert_eq!(record.error_kind.map(|k| k.name()), Some("cassette"));
    assert!(record.is_infrastructure_error());
    assert!(
        record.reason.contains("cassette not written"),
        "{}",
        record.reason
    );
    let detail = record.detail.clone().unwrap_or_default();
    assert!(detail.contains("cassette not written"), "{detail}");
    assert!(
        !detail.contains(&leaked),
        "the secret itself is masked: {detail}"
    );
    let sel = selector(ApiKind::AnthropicMessages);
    let path = cassettes::cassette_path(
        &cassettes_dir,
        testkit::TRIVIAL_TASK_ID,
        &sel.provider,
        &sel.model,
    );
    assert!(!path.exists(), "nothing was written");
}

/// `harness run --record` with a real key in its environment: the key goes to the provider in
/// its header, never into the agent's commands, and never into the cassette.
#[tokio::test]
async fn the_provider_key_reaches_the_provider_but_not_commands_or_cassettes() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tasks");
    testkit::write_trivial_task(&suite).unwrap();
    let key = format!("sk-ant-api03-{}", "K".repeat(40));
    let script = testkit::parse_script(
        "turns:\n  - tool_calls:\n      - name: bash\n        arguments: {command: 'echo key=${ANTHROPIC_API_KEY:-unset}; env | grep -c sk-ant || true'}\n  - text: done\n",
        "env.yaml",
    )
    .unwrap();
    let server = testkit::start(script, ApiKind::AnthropicMessages).await;
    let root = dir.path().to_path_buf();
    let base_url = server.base_url();
    let key_for_child = key.clone();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_harness"))
            .args([
                "run",
                "tasks",
                "--record",
                "--model",
                "anthropic/scripted-claude",
            ])
            .args(["--base-url", &base_url])
            .current_dir(&root)
            .env("ANTHROPIC_API_KEY", key_for_child)
            .env_remove("CI")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let requests = server.requests();
    assert_eq!(requests[0].header("x-api-key"), Some(key.as_str()));
    let tool_output = requests[1].body.to_string();
    assert!(tool_output.contains("key=unset\\n0\\n"), "{tool_output}");
    let cassette = std::fs::read_to_string(cassettes::cassette_path(
        &dir.path().join("cassettes"),
        testkit::TRIVIAL_TASK_ID,
        "anthropic",
        "scripted-claude",
    ))
    .unwrap();
    assert!(!cassette.contains(&key));
    assert!(!cassette.to_lowercase().contains("x-api-key"));
}

/// Every file under `dir` (recursively) that holds one of `needles`: (path, needle).
fn files_holding(dir: &Path, needles: &[&str]) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(at) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                let text = String::from_utf8_lossy(&bytes);
                for needle in needles {
                    if text.contains(needle) {
                        found.push((path.clone(), (*needle).to_owned()));
                    }
                }
            }
        }
    }
    found
}

/// A server that answers every request `404` with a body that quotes its request line, as
/// some gateways do: the provider's error then holds the request's URL.
async fn echoing_404_server() -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut got = Vec::new();
                let mut buf = [0u8; 8192];
                while !String::from_utf8_lossy(&got).contains("\r\n\r\n") {
                    match conn.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&got);
                let line = text.lines().next().unwrap_or_default().to_owned();
                let body = format!("{{\"error\":{{\"message\":\"no route for {line}\"}}}}");
                let reply = format!(
                    "HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = conn.write_all(reply.as_bytes()).await;
            });
        }
    });
    format!("http://{addr}")
}

/// Credentials in `--base-url` (a password in its user-info, a `?key=` a gateway takes): the
/// requests carry them, to the path the API needs; no report file, log or cassette holds them,
/// not even where a provider's error quotes the URL; the report keeps the URL masked, and a
/// `--resume` asks for it again rather than run with the mask.
#[tokio::test]
async fn credentials_in_the_base_url_reach_the_provider_and_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    testkit::write_trivial_task(&root.join("tasks")).unwrap();
    let password = "pw-in-the-url-0123";
    let key = "key-in-the-query-4567";
    let script = testkit::parse_script("turns:\n  - text: done\n", "done.yaml").unwrap();
    let server = testkit::start(script, ApiKind::OpenaiCompletions).await;
    let with_credentials = |base: &str| {
        format!(
            "{}?api-version=1&key={key}",
            base.replacen("http://", &format!("http://alice:{password}@"), 1)
        )
    };
    let harness = |args: Vec<String>| {
        let root = root.clone();
        tokio::task::spawn_blocking(move || {
            let out = Command::new(env!("CARGO_BIN_EXE_harness"))
                .args(&args)
                .current_dir(&root)
                .env("OPENAI_API_KEY", "sk-test-not-a-real-key-000")
                .env_remove("CI")
                .env_remove("GITHUB_STEP_SUMMARY")
                .output()
                .unwrap();
            (
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stdout).into_owned()
                    + &String::from_utf8_lossy(&out.stderr),
            )
        })
    };
    let run = |reports: &str, base_url: String| {
        [
            "run",
            "tasks",
            "--record",
            "--model",
            "openai/scripted-gpt",
            "--reports",
            reports,
            "--base-url",
            &base_url,
        ]
        .map(str::to_owned)
        .to_vec()
    };

    let base_url = with_credentials(&server.base_url());
    let (code, out) = harness(run("ok", base_url.clone())).await.unwrap();
    assert_eq!(code, 0, "{out}");
    let requests = server.requests();
    assert_eq!(
        requests[0].path,
        format!("/v1/chat/completions?api-version=1&key={key}")
    );
    assert!(
        requests[0]
            .header("authorization")
            .is_some_and(|h| h.starts_with("Basic ")),
        "{:?}",
        requests[0].headers
    );

    // A gateway that quotes the URL in its error.
    let echo = echoing_404_server().await;
    let (code, out) = harness(run("failed", with_credentials(&format!("{echo}/v1"))))
        .await
        .unwrap();
    assert_ne!(code, 0, "{out}");
    let events = std::fs::read_dir(root.join("failed"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("events.jsonl");
    let events = std::fs::read_to_string(events).unwrap();
    assert!(
        events.contains("no route for POST /v1/chat/completions?api-version=1&key=[REDACTED]"),
        "{events}"
    );

    assert_eq!(files_holding(&root, &[password, key]), vec![], "{out}");
    let report = std::fs::read_dir(root.join("ok"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let manifest = std::fs::read_to_string(report.join("report.json")).unwrap();
    assert!(
        manifest.contains(&format!(
            "http://alice:[REDACTED]@{}/v1?api-version=1&key=[REDACTED]",
            server.addr()
        )),
        "{manifest}"
    );

    // A resume needs the URL again, and takes it when it matches.
    let report = report.to_string_lossy().into_owned();
    let (code, out) = harness(["run", "--resume", &report].map(str::to_owned).to_vec())
        .await
        .unwrap();
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("does not keep its credentials"), "{out}");
    let (code, out) = harness(
        ["run", "--resume", &report, "--base-url", &base_url]
            .map(str::to_owned)
            .to_vec(),
    )
    .await
    .unwrap();
    assert_eq!(code, 0, "{out}");
    assert_eq!(files_holding(&root, &[password, key]), vec![], "{out}");
}

/// With one place (`--jobs 1`), the next run's workspace and sandbox are made while the run
/// before it holds the place, so its first command does not wait for them: the second run's
/// kept workspace was made well before the first run (whose check takes 2 s) ended.
#[tokio::test]
async fn the_next_run_is_prepared_while_the_one_before_holds_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tasks");
    std::fs::create_dir_all(suite.join("slow/repo")).unwrap();
    std::fs::write(suite.join("slow/repo/README.md"), "A fixture.\n").unwrap();
    std::fs::write(
        suite.join("slow/task.yaml"),
        "id: slow\nprompt: Do nothing.\nchecks:\n  - name: takes two seconds\n    run: sleep 2\n",
    )
    .unwrap();
    let task = load(&suite, "slow");
    let mut opts = options(
        &dir.path().join("cassettes"),
        &dir.path().join("reports"),
        CassetteMode::Live,
    );
    opts.models = vec!["oracle/none".parse().unwrap()];
    opts.epochs = 2;
    opts.jobs = 1;
    opts.keep_workspaces = true;
    let planned = runner::plan_runs(std::slice::from_ref(&task), &opts).unwrap();
    let records = runner::execute(planned, &opts, Arc::new(Silent)).await;
    let kept: Vec<PathBuf> = records
        .iter()
        .map(|r| {
            let detail = r.detail.clone().unwrap_or_default();
            let path = detail
                .lines()
                .find_map(|l| l.strip_prefix("workspace kept at "))
                .unwrap_or_else(|| panic!("no kept workspace in {detail:?}"));
            PathBuf::from(path)
        })
        .collect();
    // When each kept workspace was made (its birth time).
    let made = |p: &Path| {
        let born = std::fs::metadata(p).unwrap().created().unwrap();
        born.duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64()
    };
    let (first, second) = (made(&kept[0]), made(&kept[1]));
    for path in &kept {
        let _ = std::fs::remove_dir_all(path.parent().unwrap());
    }
    assert_eq!(records.len(), 2);
    assert!(
        records.iter().all(|r| r.outcome == Outcome::Passed),
        "{records:?}"
    );
    assert!(
        second - first < 1.5,
        "the second run's workspace was made {:.2} s after the first's: not before the first \
         run ended",
        second - first
    );
}
