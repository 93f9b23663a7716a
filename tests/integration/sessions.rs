//! `harness import pi-session`: small Pi session files written here (never copies of real
//! ones), imported against a throwaway git repository and replayed by the binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

/// `git -C repo ARGS...` with a fixed author, committer and date; its stdout, trimmed.
pub(crate) fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .env("GIT_COMMITTER_DATE", "2025-01-01T00:00:00Z")
        .env("GIT_AUTHOR_DATE", "2025-01-01T00:00:00Z")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A repository with `src/a.py` committed on 2025-01-01.
fn repo(dir: &Path) -> PathBuf {
    let repo = dir.join("proj");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/a.py"), "def f():\n    return 1\n").unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    repo
}

/// A Pi session file of version 3 (a tree of entries), written line by line.
struct Session {
    lines: Vec<Value>,
    last: Option<String>,
    n: usize,
}

const CWD: &str = "/home/dev/proj";

impl Session {
    /// A session begun on `day` (which tools recorded it is guessed from it).
    fn on(day: &str) -> Self {
        Session {
            lines: vec![json!({
                "type": "session", "version": 3, "id": "5e55a0b1-0000-4000-8000-000000000001",
                "timestamp": format!("{day}T10:00:00.000Z"), "cwd": CWD
            })],
            last: None,
            n: 0,
        }
    }

    /// The same entries in version 1: no version in the header, no entry ids.
    fn version_1(mut self) -> Self {
        if let Some(header) = self.lines[0].as_object_mut() {
            header.remove("version");
        }
        for line in &mut self.lines[1..] {
            if let Some(entry) = line.as_object_mut() {
                entry.remove("id");
                entry.remove("parentId");
            }
        }
        self
    }

    fn push(&mut self, mut entry: Value) {
        self.n += 1;
        let id = format!("e{:03}", self.n);
        entry["id"] = json!(id);
        entry["parentId"] = json!(self.last);
        let day = self.lines[0]["timestamp"].as_str().unwrap_or_default()[..10].to_owned();
        entry["timestamp"] = json!(format!("{day}T10:00:{:02}.000Z", self.n));
        self.lines.push(entry);
        self.last = Some(id);
    }

    fn user(&mut self, text: &str) {
        self.push(json!({"type": "message", "message": {
            "role": "user", "content": [{"type": "text", "text": text}], "timestamp": 1
        }}));
    }

    fn reply(&mut self, content: Value, stop: &str) {
        self.push(json!({"type": "message", "message": {
            "role": "assistant", "content": content, "api": "anthropic-messages",
            "provider": "anthropic", "model": "claude-sonnet-4-5",
            "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
            "stopReason": stop, "timestamp": 2
        }}));
    }

    fn result(&mut self, id: &str, tool: &str, text: &str) {
        self.push(json!({"type": "message", "message": {
            "role": "toolResult", "toolCallId": id, "toolName": tool,
            "content": [{"type": "text", "text": text}], "isError": false, "timestamp": 3
        }}));
    }

    fn write(&self, path: &Path) {
        let text: String = self.lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(path, text).unwrap();
    }
}

/// A session with three prompts: a read and an edit (with the results today's tools give), a
/// reply the user interrupted, and a failed reply that Pi retried at once.
fn session() -> Session {
    let mut s = Session::on("2026-06-01");
    s.push(
        json!({"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"}),
    );
    s.user("Make f return 2.");
    s.reply(
        json!([{"type": "toolCall", "id": "toolu_01", "name": "read",
                "arguments": {"path": format!("{CWD}/src/a.py")}}]),
        "toolUse",
    );
    s.result("toolu_01", "read", "def f():\n    return 1\n");
    s.push(json!({"type": "thinking_level_change", "thinkingLevel": "high"}));
    s.reply(
        json!([{"type": "text", "text": "Changing it."},
               {"type": "toolCall", "id": "toolu_02", "name": "edit",
                "arguments": {"path": "src/a.py", "edits": [{"oldText": "return 1", "newText": "return 2"}]}}]),
        "toolUse",
    );
    s.result(
        "toolu_02",
        "edit",
        "Successfully replaced 1 block(s) in src/a.py.",
    );
    s.reply(
        json!([{"type": "text", "text": "Done: f returns 2."}]),
        "stop",
    );
    s.user("Now explain it.");
    s.reply(
        json!([{"type": "thinking", "thinking": "Let me"}]),
        "aborted",
    );
    s.user("Explain it in one line.");
    s.reply(json!([]), "error");
    s.reply(
        json!([{"type": "text", "text": "f now returns 2."}]),
        "stop",
    );
    s
}

fn harness(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// `harness import KIND FILE --repo REPO --into tasks --cassettes cassettes EXTRA...` in `dir`.
fn import(dir: &Path, kind: &str, files: &[&Path], repo: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["import".to_owned(), kind.to_owned()];
    args.extend(files.iter().map(|f| f.to_string_lossy().into_owned()));
    args.extend(["--repo".to_owned(), repo.to_string_lossy().into_owned()]);
    args.extend(["--into", "tasks", "--cassettes", "cassettes"].map(str::to_owned));
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    harness(dir, &args)
}

/// `harness run tasks --sandbox none EXTRA...` in `dir`: a replay of what was imported.
fn replay(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["run", "tasks", "--sandbox", "none"];
    args.extend_from_slice(extra);
    harness(dir, &args)
}

/// Whether the run table in `said` shows `task` passed with every request as recorded.
fn replayed_clean(said: &str, task: &str) -> bool {
    said.lines()
        .find(|l| l.starts_with(task))
        .is_some_and(|row| row.contains(" passed ") && !row.contains("drifted"))
}

/// The divergence.md of `task`'s default run in the first report folder under `dir` that has one.
fn divergence_md(dir: &Path, task: &str) -> String {
    std::fs::read_dir(dir.join("reports"))
        .unwrap()
        .map(|e| {
            e.unwrap()
                .path()
                .join("runs")
                .join(format!("{task}--anthropic--claude-sonnet-4-5--e1"))
                .join("divergence.md")
        })
        .find(|p| p.exists())
        .map(|p| std::fs::read_to_string(p).unwrap())
        .unwrap_or_default()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

const TASK: &str = "pi-5e55a0b1";

#[test]
fn a_pi_session_imports_as_a_task_and_cassette_that_replay_clean_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let file = dir.path().join("session.jsonl");
    session().write(&file);
    let formats = [
        "anthropic-messages",
        "openai-completions",
        "openai-responses",
        "google-generative-ai",
    ];
    let extra: Vec<&str> = formats.iter().flat_map(|f| ["--format", *f]).collect();
    let out = import(dir.path(), "pi-session", &[&file], &repo, &extra);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    // The commit is inferred from the session's first timestamp, and said why.
    assert!(
        said.contains("the last commit of HEAD made before the session began"),
        "{said}"
    );
    assert!(
        said.contains("3 prompts, 5 turns (2 interrupted or failed)"),
        "{said}"
    );
    assert!(said.contains("1 thinking level change"), "{said}");

    let task =
        std::fs::read_to_string(dir.path().join("tasks").join(TASK).join("task.yaml")).unwrap();
    assert!(
        task.contains(
            "prompts:\n- Make f return 2.\n- Now explain it.\n- Explain it in one line.\n"
        ),
        "{task}"
    );
    assert!(
        task.contains("tools:\n- read\n- bash\n- edit\n- write\n"),
        "{task}"
    );
    assert!(task.contains("files as the session left them"), "{task}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("tasks").join(TASK).join("repo/src/a.py")).unwrap(),
        "def f():\n    return 1\n"
    );
    let cassettes: Vec<_> = std::fs::read_dir(dir.path().join("cassettes").join(TASK))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(cassettes.len(), 4, "{cassettes:?}");
    let anthropic = std::fs::read_to_string(
        dir.path()
            .join("cassettes")
            .join(TASK)
            .join("anthropic--claude-sonnet-4-5.yaml"),
    )
    .unwrap();
    // The session's folder is the workspace placeholder; the interrupted reply is a stream the
    // client stopped reading; the failed reply Pi retried is not there.
    assert!(!anthropic.contains(CWD), "{anthropic}");
    assert!(anthropic.contains("/workspace/src/a.py"));
    assert_eq!(
        anthropic.matches("end: abandoned").count(),
        1,
        "{anthropic}"
    );
    assert_eq!(anthropic.matches("\n- request:").count(), 5);

    // Replayed in each format: every request as recorded, the outcome held.
    for (provider, model) in [
        ("anthropic", "claude-sonnet-4-5"),
        ("openai", "claude-sonnet-4-5"),
        ("openai-responses", "claude-sonnet-4-5"),
        ("google", "claude-sonnet-4-5"),
    ] {
        let selector = format!("{provider}/{model}");
        let out = harness(
            dir.path(),
            &[
                "run",
                "tasks",
                "--model",
                &selector,
                "-q",
                "--sandbox",
                "none",
            ],
        );
        let said = text(&out);
        assert!(out.status.success(), "{selector}: {said}");
        assert!(replayed_clean(&said, TASK), "{selector}: {said}");
    }
}

#[test]
fn a_changed_tool_answer_is_reported_at_its_turn_and_call_with_the_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let file = dir.path().join("session.jsonl");
    session().write(&file);
    let out = import(dir.path(), "pi-session", &[&file], &repo, &[]);
    assert!(out.status.success(), "{}", text(&out));
    // What the tools now see differs: read's answer at turn 1, and the edit no longer finds
    // its text at turn 2, so the files do not end as the session left them.
    std::fs::write(
        dir.path().join("tasks").join(TASK).join("repo/src/a.py"),
        "def f():\n    return  1\n",
    )
    .unwrap();
    let out = replay(dir.path(), &["--on-divergence", "continue"]);
    let said = text(&out);
    assert!(said.contains("turn 1: result of read#1 changed"), "{said}");
    assert!(
        said.contains("turn 2: result of edit#1 changed (now an error)"),
        "{said}"
    );
    assert!(said.contains("outcome changed: passed → failed"), "{said}");
    let divergence = divergence_md(dir.path(), TASK);
    assert!(
        divergence.contains("| read | 1 | 1 |") && divergence.contains("| edit | 1 | 1 |"),
        "{divergence}"
    );
}

#[test]
fn bad_sessions_are_named_and_nothing_is_written_half() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    // A truncated line is named with its file and line; the rest is imported, exit non-zero.
    let torn = dir.path().join("torn.jsonl");
    session().write(&torn);
    let mut body = std::fs::read_to_string(&torn).unwrap();
    body.push_str("{\"type\": \"message\", \"id\": \"e9\n");
    std::fs::write(&torn, body).unwrap();
    // A session whose commit the repository does not have: nothing written for it.
    let other = dir.path().join("other.jsonl");
    let mut s = session();
    s.lines[0]["id"] = json!("0badc0de-0000-4000-8000-000000000002");
    s.write(&other);
    let out = import(dir.path(), "pi-session", &[&torn], &repo, &[]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("torn.jsonl:15: not valid JSON"), "{said}");
    assert!(
        dir.path()
            .join("tasks")
            .join(TASK)
            .join("task.yaml")
            .exists()
    );

    let out = import(
        dir.path(),
        "pi-session",
        &[&other],
        &repo,
        &["--commit", "1234567"],
    );
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("other.jsonl") && said.contains("1234567"),
        "{said}"
    );
    assert!(!dir.path().join("tasks/pi-0badc0de").exists());
    assert!(!dir.path().join("cassettes/pi-0badc0de").exists());
}

#[test]
fn version_1_and_version_2_sessions_import_and_replay_clean() {
    for version in [1, 2] {
        let dir = tempfile::tempdir().unwrap();
        let repo = repo(dir.path());
        let file = dir.path().join(format!("v{version}.jsonl"));
        let session = if version == 1 {
            session().version_1()
        } else {
            let mut s = session();
            s.lines[0]["version"] = json!(2);
            s
        };
        session.write(&file);
        let out = import(dir.path(), "pi-session", &[&file], &repo, &[]);
        let said = text(&out);
        assert!(out.status.success(), "v{version}: {said}");
        assert!(said.contains("3 prompts, 5 turns"), "v{version}: {said}");
        let task =
            std::fs::read_to_string(dir.path().join("tasks").join(TASK).join("task.yaml")).unwrap();
        assert!(
            task.contains(&format!("Pi session file v{version}")),
            "{task}"
        );
        let out = replay(dir.path(), &["-q"]);
        let said = text(&out);
        assert!(replayed_clean(&said, TASK), "v{version}: {said}");
    }
}

/// A session as Pi 0.14 recorded it: the edit sent flat arguments and was answered in the old
/// words.
fn old_session() -> Session {
    let mut s = Session::on("2025-12-01");
    s.user("Make f return 2.");
    s.reply(
        json!([{"type": "toolCall", "id": "toolu_01", "name": "edit",
                "arguments": {"path": "src/a.py", "oldText": "return 1", "newText": "return 2"}}]),
        "toolUse",
    );
    s.result(
        "toolu_01",
        "edit",
        "Successfully replaced text in src/a.py. Changed 8 characters to 8 characters.",
    );
    s.reply(json!([{"type": "text", "text": "Done."}]), "stop");
    s
}

#[test]
fn a_session_replays_clean_under_its_own_tool_profile_and_differs_under_today_s() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let file = dir.path().join("old.jsonl");
    old_session().write(&file);
    let out = import(dir.path(), "pi-session", &[&file], &repo, &[]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    // The session's date (2025-12-01) points to Pi 0.14's tools.
    assert!(said.contains("tool profile pi-0.14"), "{said}");
    let cassette = std::fs::read_to_string(
        dir.path()
            .join("cassettes")
            .join(TASK)
            .join("anthropic--claude-sonnet-4-5.yaml"),
    )
    .unwrap();
    assert!(cassette.contains("tool_profile: pi-0.14"), "{cassette}");
    assert!(cassette.contains("Edit a file by replacing exact text."));

    let out = replay(dir.path(), &["--tool-profile", "pi-0.14"]);
    let said = text(&out);
    assert!(replayed_clean(&said, TASK), "{said}");
    assert!(!said.contains("recorded with"), "{said}");

    // Today's tools describe edit otherwise and answer it in other words: said up front, and
    // found at the tool definitions and at the edit's result.
    let out = replay(dir.path(), &["--on-divergence", "continue"]);
    let said = text(&out);
    assert!(
        said.contains("tool profile `pi-0.73` (recorded with `pi-0.14`)"),
        "{said}"
    );
    assert!(said.contains("outcome held: passed → passed"), "{said}");
    let divergence = divergence_md(dir.path(), TASK);
    assert!(
        divergence.contains("turn 1: result of edit#1 changed"),
        "{divergence}"
    );
    assert!(divergence.contains("| edit | 1 | 1 |"), "{divergence}");
    assert!(
        divergence.contains("tool edit: parameter oldText"),
        "{divergence}"
    );

    // Both profiles as arms of one run, compared like edit strategies.
    let out = replay(
        dir.path(),
        &[
            "--tool-profile",
            "pi-0.14",
            "--tool-profile",
            "pi-0.73",
            "--on-divergence",
            "continue",
        ],
    );
    let said = text(&out);
    let rows: Vec<&str> = said.lines().filter(|l| l.starts_with(TASK)).collect();
    assert_eq!(rows.len(), 2, "{said}");
    assert!(
        rows.iter()
            .any(|r| r.contains("[pi@pi-0.14]") || r.contains("pi@pi-0.14")),
        "{said}"
    );
    assert_eq!(
        rows.iter().filter(|r| r.contains("drifted")).count(),
        1,
        "{said}"
    );

    // An unknown profile is refused before anything runs.
    let out = replay(dir.path(), &["--tool-profile", "pi-0.30"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("no profile for Pi 0.30"),
        "{}",
        text(&out)
    );
}

/// An ATIF trajectory of the same work, written as the format has it (v1.6).
fn trajectory(tools: [&str; 2]) -> Value {
    json!({
        "schema_version": "ATIF-v1.6",
        "session_id": "7a7f0000-run",
        "agent": {"name": "some-agent", "version": "1.0", "model_name": "claude-sonnet-4-5"},
        "steps": [
            {"step_id": 1, "timestamp": "2026-06-01T10:00:00Z", "source": "system", "message": "You are an agent."},
            {"step_id": 2, "timestamp": "2026-06-01T10:00:01Z", "source": "user", "message": "Make f return 2."},
            {"step_id": 3, "source": "agent", "model_name": "claude-sonnet-4-5", "message": "",
             "reasoning_content": "Read it first.",
             "tool_calls": [{"tool_call_id": "call_1", "function_name": tools[0], "arguments": {"path": "src/a.py"}}],
             "observation": {"results": [{"source_call_id": "call_1", "content": "def f():\n    return 1\n"}]},
             "metrics": {"prompt_tokens": 100, "completion_tokens": 20, "cached_tokens": 10}},
            {"step_id": 4, "source": "agent", "message": "Changing it.",
             "tool_calls": [{"tool_call_id": "call_2", "function_name": tools[1],
                             "arguments": {"path": "src/a.py", "edits": [{"oldText": "return 1", "newText": "return 2"}]}}],
             "observation": {"results": [{"source_call_id": "call_2", "content": "Successfully replaced 1 block(s) in src/a.py."}]}},
            {"step_id": 5, "source": "agent", "message": [{"type": "text", "text": "Done."}]}
        ]
    })
}

#[test]
fn an_atif_trajectory_with_our_tools_imports_and_replays_clean_and_one_without_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repo(dir.path());
    let ours = dir.path().join("trajectory.json");
    // Saved with a byte-order mark, as Windows editors save files: no part of the JSON.
    let marked = format!("\u{feff}{}", trajectory(["read", "edit"]));
    std::fs::write(&ours, marked).unwrap();
    let theirs = dir.path().join("other.json");
    let mut other = trajectory(["Read", "str_replace_based_edit_tool"]);
    other["session_id"] = json!("0the0r00-run");
    std::fs::write(&theirs, other.to_string()).unwrap();
    let out = import(dir.path(), "atif", &[&ours, &theirs], &repo, &[]);
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("task atif-7a7f0000 new: 1 prompts, 3 turns"),
        "{said}"
    );
    assert!(
        said.contains("other.json") && said.contains("Read, str_replace_based_edit_tool"),
        "{said}"
    );
    assert!(!dir.path().join("tasks/atif-0the0r00").exists());
    assert!(!dir.path().join("cassettes/atif-0the0r00").exists());
    let task = std::fs::read_to_string(dir.path().join("tasks/atif-7a7f0000/task.yaml")).unwrap();
    assert!(
        task.contains("- atif\n") && task.contains("ATIF-v1.6 trajectory"),
        "{task}"
    );

    let out = replay(dir.path(), &[]);
    let said = text(&out);
    assert!(replayed_clean(&said, "atif-7a7f0000"), "{said}");
}
