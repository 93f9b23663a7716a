//! The sandbox, end to end: keys never reach the agent (its next request, the transcript, the
//! cassette), the file tools stay inside the workspace under `workspace` and `isolated`, bash
//! cannot escape under `isolated` (other processes' `/proc`, the network, files outside), no
//! process outlives its call or its run, output and reads stay bounded, and the Pi fidelity
//! fixes. Tests of the `isolated` tier print a `SKIPPED` line (on stderr, past the test harness's
//! capture; a failure when `HARNESS_REQUIRE_SANDBOX` is set, as `.ci/run` does) and return when bubblewrap cannot
//! make a sandbox on this machine (`.ci/run` installs it, so CI runs them).

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use harness::providers::ApiKind;
use harness::sandbox::{Jail, Sandbox, Scratch, Tier};
use harness::testkit;
use harness::tools::{ToolContext, ToolResult, ToolSet, ToolSetSpec};

/// Fake secrets, each unlike anything else in a run.
const SECRETS: [(&str, &str); 9] = [
    (
        "ANTHROPIC_API_KEY",
        "sk-ant-api03-fakefakefakefakefake0123456789",
    ),
    ("LLM_ACCESS", "llm-access-fake-value-7d1c0ffee"),
    ("MY_SECRET", "my-secret-fake-value-41424344"),
    (
        "AWS_SECRET_ACCESS_KEY",
        "aws-secret-fake-value-wJalrXUtnFEMI",
    ),
    (
        "DATABASE_URL",
        "postgres://app:db-password-fake-9911@db:5432/app",
    ),
    ("GH_PAT", "gh-pat-fake-value-0000111122223333"),
    (
        "SENTRY_DSN",
        "https://sentry-dsn-fake-value@o1.ingest.example/1",
    ),
    ("DOCKER_PASS", "docker-pass-fake-value-5566"),
    ("HARNESS_TEST_PLAIN", "plain-visible-value-not-secret"),
];

/// The secret part of each value (the password of the URL, the whole value otherwise).
fn secret_parts() -> Vec<&'static str> {
    SECRETS
        .iter()
        .filter(|(k, _)| *k != "HARNESS_TEST_PLAIN")
        .map(|(k, v)| match *k {
            "DATABASE_URL" => "db-password-fake-9911",
            "SENTRY_DSN" => "sentry-dsn-fake-value",
            _ => v,
        })
        .collect()
}

/// The isolated sandbox, or `None` after printing why its tests are skipped.
fn isolated_or_skip(test: &str) -> Option<Sandbox> {
    let sandbox = Sandbox::detect(Some(Tier::Isolated));
    if sandbox.tier() == Tier::Isolated {
        return Some(sandbox);
    }
    // Past the test harness's capture, and a failure where `.ci/run` requires the tier.
    super::browser::skip(
        "HARNESS_REQUIRE_SANDBOX",
        &format!(
            "{test}: the isolated tier is unavailable here: {}",
            sandbox.notice().unwrap_or("no reason given")
        ),
    );
    None
}

fn context(jail: Jail, cwd: &Path, scratch: &Scratch) -> ToolContext {
    let mut ctx = ToolContext::new(cwd);
    ctx.env = Arc::new(harness::sandbox::env::run_env(
        &harness::sandbox::env::base_env(std::env::vars()),
        scratch.home(),
        if jail.tmp_is_private() {
            Path::new("/tmp")
        } else {
            scratch.tmp()
        },
        &[],
    ));
    ctx.temp_dir = scratch.logs().to_path_buf();
    ctx.jail = jail.with_scratch(scratch);
    ctx
}

async fn call(ctx: &ToolContext, tool: &str, args: Value) -> ToolResult {
    let tools = ToolSet::new(&ToolSetSpec::all()).unwrap();
    tools.call(tool, args, ctx).await
}

fn text(result: &ToolResult) -> &str {
    result.content[0].as_text().unwrap_or_default()
}

/// A workspace folder (canonical) next to an `outside` folder holding `secret.txt`.
fn workspace_and_outside() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let ws = root.join("ws");
    let outside = root.join("outside");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(ws.join("src/a.txt"), "inside\n").unwrap();
    std::fs::write(outside.join("secret.txt"), "outside secret\n").unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), ws.join("link.txt")).unwrap();
    std::os::unix::fs::symlink("../outside", ws.join("updir")).unwrap();
    (dir, ws, outside)
}

/// Processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            cmdline
                .contains(marker)
                .then(|| format!("{pid}: {cmdline}"))
        })
        .collect()
}

/// A `sleep` argument no other process has: 1000 seconds and a random fraction.
fn unique_sleep() -> String {
    format!("1000.{}", rand::random::<u32>())
}

// ------------------------------------------------------------------------------------------------
// Point 1: secrets
// ------------------------------------------------------------------------------------------------

/// Writes a one-task suite whose provider `fake` reads its key from `LLM_ACCESS` (harness.yaml)
/// and whose check fails if any secret is visible to it.
fn secret_suite(root: &Path, base_url: &str) -> PathBuf {
    let suite = root.join("tasks");
    let task = suite.join("peek");
    std::fs::create_dir_all(task.join("repo")).unwrap();
    std::fs::write(task.join("repo/README.md"), "nothing here\n").unwrap();
    let parts = secret_parts().join("|");
    std::fs::write(
        task.join("task.yaml"),
        format!(
            "id: peek\nprompt: Look around.\ntools: coding\nchecks:\n  - name: no secret visible\n    run: \"! (env; tr '\\\\0' '\\\\n' < /proc/$PPID/environ; cat /proc/*/environ) 2>/dev/null | grep -aqE '{parts}'\"\n"
        ),
    )
    .unwrap();
    std::fs::write(
        suite.join("harness.yaml"),
        format!(
            "providers:\n  fake:\n    api: anthropic-messages\n    base_url: {base_url}\n    key_env: LLM_ACCESS\n"
        ),
    )
    .unwrap();
    suite
}

const PEEK: &str = "tr '\\0' '\\n' < /proc/$PPID/environ; echo ---; env; echo ---; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'";

/// Runs `harness run` (record mode) with the fake secrets in its environment; checks the next
/// request, the transcript and the cassette hold none of them.
async fn secrets_stay_out(tier: Tier) {
    let script = testkit::parse_script(
        &format!(
            "turns:\n  - tool_calls:\n      - name: bash\n        arguments: {{command: {}}}\n  - text: done\n",
            serde_json::to_string(PEEK).unwrap()
        ),
        "peek.yaml",
    )
    .unwrap();
    let server = testkit::start(script, ApiKind::AnthropicMessages).await;
    let dir = tempfile::tempdir().unwrap();
    let suite = secret_suite(dir.path(), &server.base_url());
    let cassettes = dir.path().join("cassettes");
    let reports = dir.path().join("reports");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
    cmd.arg("run")
        .arg(&suite)
        .args([
            "--record",
            "--model",
            "fake/scripted",
            "--sandbox",
            tier.name(),
        ])
        .arg("--cassettes")
        .arg(&cassettes)
        .arg("--reports")
        .arg(&reports)
        .current_dir(dir.path())
        .envs(SECRETS);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{tier}: {stderr}");
    // The key was found after sealing: the vault still serves the provider.
    assert_eq!(
        requests[0].header("x-api-key"),
        Some("llm-access-fake-value-7d1c0ffee"),
        "{tier}"
    );
    let next = requests[1].body.to_string();
    // The command did run and dumped environments (the test can see it worked) ...
    assert!(next.contains("HARNESS_SANDBOX_TAG="), "{tier}: {next}");
    assert!(next.contains("PATH="), "{tier}: {next}");
    // (Under `workspace` the dump also shows every other process of the machine, so whether
    // a plain variable is passed on is checked by the environment's own tests.)
    let transcript = walk_text(&reports, "transcript.md");
    let cassette = walk_text(&cassettes, ".yaml");
    assert!(
        !transcript.is_empty() && !cassette.is_empty(),
        "{tier}: {stderr}"
    );
    // ... and no secret is anywhere.
    for secret in secret_parts() {
        assert!(
            !next.contains(secret),
            "{tier}: {secret} in the next request"
        );
        assert!(
            !transcript.contains(secret),
            "{tier}: {secret} in the transcript"
        );
        assert!(
            !cassette.contains(secret),
            "{tier}: {secret} in the cassette"
        );
    }
    let runs = walk_text(&reports, "runs.csv");
    assert!(
        runs.contains(",passed,"),
        "{tier}: the check saw a secret: {runs}\n{stderr}"
    );
}

/// The concatenated text of every file under `dir` whose name ends with `suffix`.
fn walk_text(dir: &Path, suffix: &str) -> String {
    let mut out = String::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.push_str(&walk_text(&p, suffix));
        } else if p.to_string_lossy().ends_with(suffix) {
            out.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
        }
    }
    out
}

#[tokio::test]
async fn secrets_never_reach_the_agent_under_workspace() {
    secrets_stay_out(Tier::Workspace).await;
}

#[tokio::test]
async fn secrets_never_reach_the_agent_under_isolated() {
    if isolated_or_skip("secrets_never_reach_the_agent_under_isolated").is_none() {
        return;
    }
    secrets_stay_out(Tier::Isolated).await;
}

#[tokio::test]
async fn key_values_are_redacted_from_transcripts_and_reports() {
    // The model itself repeats the key in use (it could only have guessed it): the transcript
    // and the reports show `[REDACTED]`.
    let key = "llm-access-fake-value-7d1c0ffee";
    let script = testkit::parse_script(
        &format!(
            "turns:\n  - text: 'the key is {key} and MY_SECRET is my-secret-fake-value-41424344'\n"
        ),
        "echo-key.yaml",
    )
    .unwrap();
    let server = testkit::start(script, ApiKind::AnthropicMessages).await;
    let dir = tempfile::tempdir().unwrap();
    let suite = secret_suite(dir.path(), &server.base_url());
    let reports = dir.path().join("reports");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
    cmd.arg("run")
        .arg(&suite)
        .args(["--cassette-mode", "live", "--model", "fake/scripted"])
        .arg("--reports")
        .arg(&reports)
        .current_dir(dir.path())
        .envs(SECRETS);
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let transcript = walk_text(&reports, "transcript.md") + &walk_text(&reports, "transcript.json");
    assert!(
        transcript.contains("the key is [REDACTED] and MY_SECRET is [REDACTED]"),
        "{stderr}\n{transcript}"
    );
    assert!(!transcript.contains(key));
    assert!(!transcript.contains("my-secret-fake-value"));
}

#[tokio::test]
async fn the_harness_environment_holds_no_key_after_sealing() {
    // `harness tool` seals too: its bash reads the harness's own environ (it may as root, who
    // passes over the harness being non-dumpable; `harness tool` runs commands as its caller).
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["tool", "bash", "--args"])
        .arg(json!({"command": "tr '\\0' '\\n' < /proc/$PPID/environ"}).to_string())
        .current_dir(dir.path())
        .envs(SECRETS)
        .env("SOME_UNKNOWN_SETTING", "unknown-setting-value")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !nix::unistd::geteuid().is_root() {
        // Non-dumpable: the same user reads nothing.
        assert!(stdout.contains("Permission denied"), "{stdout}");
        return;
    }
    // The harness's own settings stay; every secret and every variable it does not read itself
    // is sealed away (LLM_ACCESS is not known to be a key without a harness.yaml naming it).
    assert!(
        stdout.contains("HARNESS_TEST_PLAIN=plain-visible-value"),
        "{stdout}"
    );
    assert!(stdout.contains("HARNESS_SEALED_FD="), "{stdout}");
    assert!(stdout.contains("PATH="), "{stdout}");
    assert!(!stdout.contains("LLM_ACCESS"), "{stdout}");
    assert!(!stdout.contains("unknown-setting-value"), "{stdout}");
    for secret in secret_parts() {
        assert!(!stdout.contains(secret), "{secret} in {stdout}");
    }
}

// ------------------------------------------------------------------------------------------------
// Point 2: confinement
// ------------------------------------------------------------------------------------------------

async fn file_tools_stay_inside(sandbox: &Sandbox) {
    let (_dir, ws, outside) = workspace_and_outside();
    let scratch = Scratch::new().unwrap();
    let ctx = context(sandbox.jail(&ws), &ws, &scratch);
    let tier = sandbox.name();
    let secret = outside.join("secret.txt");
    let denied = [
        ("read", json!({"path": "../outside/secret.txt"})),
        ("read", json!({"path": secret.to_string_lossy()})),
        ("read", json!({"path": "link.txt"})),
        ("read", json!({"path": "updir/secret.txt"})),
        ("read", json!({"path": "/etc/passwd"})),
        (
            "write",
            json!({"path": "../outside/new.txt", "content": "x"}),
        ),
        ("write", json!({"path": "updir/new.txt", "content": "x"})),
        (
            "edit",
            json!({"path": "link.txt", "edits": [{"oldText": "outside", "newText": "pwned"}]}),
        ),
        ("ls", json!({"path": ".."})),
        ("find", json!({"pattern": "*", "path": "updir"})),
        ("grep", json!({"pattern": "secret", "path": "/tmp/.."})),
    ];
    for (tool, args) in denied {
        let result = call(&ctx, tool, args.clone()).await;
        assert!(
            result.is_error,
            "{tier}: {tool} {args} was allowed: {}",
            text(&result)
        );
        assert!(
            text(&result).starts_with("Access denied: "),
            "{tier}: {tool} {args}: {}",
            text(&result)
        );
    }
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "outside secret\n"
    );
    assert!(!outside.join("new.txt").exists());
    // Inside is fine, through symlinks that stay inside too.
    std::os::unix::fs::symlink("src/a.txt", ws.join("inner.txt")).unwrap();
    for (tool, args) in [
        ("read", json!({"path": "src/a.txt"})),
        ("read", json!({"path": "inner.txt"})),
        ("write", json!({"path": "new/dir/b.txt", "content": "b"})),
        ("ls", json!({})),
        ("grep", json!({"pattern": "inside"})),
    ] {
        let result = call(&ctx, tool, args.clone()).await;
        assert!(!result.is_error, "{tier}: {tool} {args}: {}", text(&result));
    }
}

#[tokio::test]
async fn file_tools_refuse_paths_outside_the_workspace_under_workspace() {
    file_tools_stay_inside(&Sandbox::detect(Some(Tier::Workspace))).await;
    // Under `none` (Pi's behaviour) the same reads succeed: the check above can fail.
    let (_dir, ws, _outside) = workspace_and_outside();
    let scratch = Scratch::new().unwrap();
    let ctx = context(Sandbox::none().jail(&ws), &ws, &scratch);
    let result = call(&ctx, "read", json!({"path": "link.txt"})).await;
    assert_eq!(text(&result), "outside secret\n");
}

#[tokio::test]
async fn file_tools_refuse_paths_outside_the_workspace_under_isolated() {
    let Some(sandbox) =
        isolated_or_skip("file_tools_refuse_paths_outside_the_workspace_under_isolated")
    else {
        return;
    };
    file_tools_stay_inside(&sandbox).await;
}

#[test]
fn validate_refuses_a_fixture_symlink_that_points_outside() {
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("tasks/escape");
    std::fs::create_dir_all(task.join("repo")).unwrap();
    std::fs::write(
        task.join("task.yaml"),
        "id: escape\nprompt: p\nchecks: [{run: 'true'}]\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("../../../outside.txt", task.join("repo/leak.txt")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["validate", "tasks"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "repo/leak.txt: this symlink points outside the fixture (-> ../../../outside.txt)"
        ),
        "{stderr}"
    );
}

#[test]
fn tool_resolves_a_relative_cwd_against_the_current_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["tool", "write", "--cwd", "sub", "--args"])
        .arg(json!({"path": "made.txt", "content": "hi"}).to_string())
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("sub/made.txt")).unwrap(),
        "hi"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["tool", "ls", "--cwd", "."])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("sub/"));
}

/// A process outside any sandbox with a marker in its environment, its cwd in `outside`.
struct Bystander {
    child: std::process::Child,
    marker: String,
}

impl Bystander {
    fn start(outside: &Path) -> Self {
        let marker = format!("bystander-marker-{:x}", rand::random::<u64>());
        let child = Command::new("sleep")
            .arg("60")
            .env("BYSTANDER", &marker)
            .current_dir(outside)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        Bystander { child, marker }
    }
}

impl Drop for Bystander {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn bash_cannot_escape_under_isolated() {
    let Some(sandbox) = isolated_or_skip("bash_cannot_escape_under_isolated") else {
        return;
    };
    let (_dir, ws, outside) = workspace_and_outside();
    let bystander = Bystander::start(&outside);
    let pid = bystander.child.id();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let probes = format!(
        "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c {marker}; \
         ls /proc/{pid}/cwd/ 2>&1 | head -1; \
         ls /proc/$PPID/cwd/ 2>&1 | grep -c secret.txt; \
         (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo net-open || echo net-closed; \
         {{ echo pwned > {secret}; }} 2>/dev/null && echo wrote || echo write-refused; \
         echo ok > inside.txt && echo wrote-inside",
        marker = bystander.marker,
        secret = outside.join("secret.txt").display(),
    );
    let scratch = Scratch::new().unwrap();
    let isolated = context(sandbox.jail(&ws), &ws, &scratch);
    let result = call(&isolated, "bash", json!({"command": probes})).await;
    let lines: Vec<&str> = text(&result).lines().collect();
    assert_eq!(
        lines[0], "0",
        "another process's environ is visible: {lines:?}"
    );
    assert!(
        lines[1].contains("No such file"),
        "the bystander's cwd: {lines:?}"
    );
    assert_eq!(lines[2], "0", "{lines:?}");
    assert_eq!(lines[3], "net-closed", "{lines:?}");
    assert_eq!(lines[4], "write-refused", "{lines:?}");
    assert_eq!(lines[5], "wrote-inside", "{lines:?}");
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "outside secret\n"
    );
    assert!(ws.join("inside.txt").exists());

    // The same probes unconfined see everything: the assertions above can fail.
    let open = context(Sandbox::none().jail(&ws), &ws, &scratch);
    let probes = probes.replace(
        &format!("> {}", outside.join("secret.txt").display()),
        "> /dev/null",
    );
    let result = call(&open, "bash", json!({"command": probes})).await;
    let lines: Vec<&str> = text(&result).lines().collect();
    assert_ne!(lines[0], "0", "{lines:?}");
    assert!(lines[1].contains("secret.txt"), "{lines:?}");
    assert_eq!(lines[3], "net-open", "{lines:?}");
    drop(listener);
}

/// What a command sees of its sandbox, one fact per line: ids and capabilities, `/dev`, the
/// network, which places it can write, what of `/run` and the host's home it sees, the mount
/// flags of `/`, `/tmp` and `/dev/null`, its session, its and PID 1's `oom_score_adj`.
fn sandbox_facts(host_home: &str) -> String {
    format!(
        r#"echo "ids $(id -u) $(id -g) $(id -G)"; echo "map $(tr -s ' ' < /proc/self/uid_map)"
grep -E 'Cap|NoNewPrivs|Seccomp|SigBlk' /proc/self/status | tr -s '\t ' ' '
echo "dev $(ls -A /dev | sort | tr '\n' ' ')"
echo "net $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')"
for p in / /etc /usr {host_home} /tmp "$PWD" /run /dev /dev/shm /proc/sys; do
  touch "$p/.probe" 2>/dev/null && {{ echo "$p writable"; rm -f "$p/.probe"; }} || echo "$p read-only"
done
echo "run $(ls -A /run | wc -l) home $(ls -A {host_home} | sort | tr '\n' ' ')"
(exec 3<>/dev/tcp/127.0.0.1/9) 2>&1 | sed 's/.*: //'
echo "root $(awk '$5=="/"{{print $6}}' /proc/self/mountinfo)"
echo "tmp $(awk '$5=="/tmp"{{print $6}}' /proc/self/mountinfo)"
echo "null $(awk '$5=="/dev/null"{{print $6}}' /proc/self/mountinfo)"
echo "session $(ps -o sid= -p $$ | tr -d ' ') pid1 $(tr '\0' ' ' < /proc/1/cmdline | grep -c __sandbox-)"
echo "oom $(cat /proc/self/oom_score_adj) pid1 $(cat /proc/1/oom_score_adj)"
"#
    )
}

#[tokio::test]
async fn the_harness_makes_the_sandbox_bubblewrap_makes() {
    let Some(own) = isolated_or_skip("the_harness_makes_the_sandbox_bubblewrap_makes") else {
        return;
    };
    if own.maker() != Some("harness") {
        super::browser::skip(
            "HARNESS_REQUIRE_SANDBOX",
            &format!(
                "the_harness_makes_the_sandbox_bubblewrap_makes: the harness cannot make its own \
                 sandboxes here: {}",
                own.notice().unwrap_or("bubblewrap makes them")
            ),
        );
        return;
    }
    let bwrap = Sandbox::detect_with_bwrap(Some(Tier::Isolated));
    if bwrap.maker() != Some("bubblewrap") {
        super::browser::skip(
            "HARNESS_REQUIRE_SANDBOX",
            &format!(
                "the_harness_makes_the_sandbox_bubblewrap_makes: no bubblewrap to compare with: {}",
                bwrap.notice().unwrap_or("no reason given")
            ),
        );
        return;
    }
    let host_home = std::env::var("HOME").unwrap_or_else(|_| "/root".to_owned());
    let facts = sandbox_facts(&host_home);
    let mut seen = Vec::new();
    for sandbox in [&own, &bwrap] {
        let (_dir, ws, _outside) = workspace_and_outside();
        let scratch = Scratch::new().unwrap();
        let ctx = context(sandbox.jail(&ws), &ws, &scratch);
        let result = call(&ctx, "bash", json!({"command": facts})).await;
        assert!(!result.is_error, "{}", text(&result));
        seen.push(text(&result).replace(&ws.display().to_string(), "WORKSPACE"));
    }
    pretty_assertions::assert_eq!(seen[0], seen[1], "the harness's sandbox, then bubblewrap's");
    // The facts say what they should, so the comparison compares something.
    let own_facts = &seen[0];
    for expected in [
        "CapEff: 0000000000000000",
        "CapBnd: 0000000000000000",
        "NoNewPrivs: 1",
        // The supervisor takes its children's ends from a signalfd, SIGCHLD blocked: a command
        // starts with nothing blocked all the same.
        "SigBlk: 0000000000000000",
        "net lo ",
        "/ read-only",
        "/etc read-only",
        "WORKSPACE writable",
        "/tmp writable",
        "/proc/sys read-only",
        "Connection refused",
        "root ro,nosuid,nodev",
        "session 1 pid1 1",
        // The first the OOM killer takes, the supervisor with them.
        "oom 1000 pid1 1000",
    ] {
        assert!(
            own_facts.contains(expected),
            "{expected:?} in:\n{own_facts}"
        );
    }
    assert!(
        own_facts.contains(
            "dev core fd full null ptmx pts random shm stderr stdin stdout tty urandom zero"
        ),
        "{own_facts}"
    );
}

#[test]
fn a_sandbox_maker_that_dies_is_started_again_and_the_calls_go_on() {
    if isolated_or_skip("a_sandbox_maker_that_dies_is_started_again_and_the_calls_go_on").is_none()
    {
        return;
    }
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let mut batch = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["tool", "--batch", "--sandbox", "isolated"])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = batch.stdin.take().unwrap();
    let mut lines = BufReader::new(batch.stdout.take().unwrap()).lines();
    let mut call = |n: usize| -> String {
        writeln!(
            stdin,
            r#"{{"tool":"bash","args":{{"command":"echo call-{n}"}}}}"#
        )
        .unwrap();
        lines.next().unwrap().unwrap()
    };
    // The maker: the child of the batch started as one.
    let maker = |parent: u32| -> Option<u32> {
        processes_with("__sandbox-zygote")
            .into_iter()
            .find_map(|p| {
                let pid: u32 = p.split(':').next()?.parse().ok()?;
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                let ppid: u32 = stat
                    .rsplit_once(')')?
                    .1
                    .split_whitespace()
                    .nth(1)?
                    .parse()
                    .ok()?;
                (ppid == parent).then_some(pid)
            })
    };
    assert!(call(1).contains("call-1"));
    let first = maker(batch.id()).expect("a sandbox maker");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(first as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let waited = std::time::Instant::now();
    while maker(batch.id()) == Some(first) {
        assert!(
            waited.elapsed() < Duration::from_secs(5),
            "the killed maker is still there"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let after = call(2);
    assert!(
        after.contains("call-2") && after.contains(r#""isError":false"#),
        "{after}"
    );
    let second = maker(batch.id()).expect("a new sandbox maker");
    assert_ne!(first, second);
    drop(stdin);
    assert!(batch.wait().unwrap().success());
}

#[test]
fn where_no_sandbox_can_be_made_the_harness_says_why_up_front_and_falls_back() {
    // Run `harness tool` inside a bubblewrap sandbox that forbids what a run's sandbox needs:
    // more user namespaces, or a `/proc` it may mount. The probe at start must name the failing
    // step for its own maker and for bubblewrap, and the call must still run (under `workspace`).
    if isolated_or_skip("where_no_sandbox_can_be_made_the_harness_says_why_up_front_and_falls_back")
        .is_none()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (jail, own_reason) in [
        (
            &["--unshare-user", "--disable-userns"][..],
            "failed to create the run's namespaces",
        ),
        (
            &["--unshare-user", "--unshare-pid", "--tmpfs", "/proc/sys"][..],
            "failed to mount proc on /proc",
        ),
    ] {
        let out = Command::new("bwrap")
            .args(["--dev-bind", "/", "/", "--proc", "/proc"])
            .args(jail)
            .arg("--")
            .arg(env!("CARGO_BIN_EXE_harness"))
            .args(["tool", "bash", "--sandbox", "isolated", "--args"])
            .arg(r#"{"command":"echo still-runs"}"#)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stderr.contains(&format!(
                "the harness cannot make a sandbox here: {own_reason}"
            )),
            "{jail:?}: {stderr}"
        );
        assert!(
            stderr.contains("bubblewrap cannot create its namespaces here")
                && stderr.contains("falling back to `--sandbox workspace`"),
            "{jail:?}: {stderr}"
        );
        assert!(stdout.contains("still-runs"), "{jail:?}: {stdout} {stderr}");
    }
}

// ------------------------------------------------------------------------------------------------
// Point 3: no process outlives its call or its run
// ------------------------------------------------------------------------------------------------

async fn nothing_left_behind(sandbox: &Sandbox) {
    let (_dir, ws, _outside) = workspace_and_outside();
    let scratch = Scratch::new().unwrap();
    let ctx = context(sandbox.jail(&ws), &ws, &scratch);
    let marks: Vec<String> = (0..4).map(|_| unique_sleep()).collect();
    let command = format!(
        "sleep {} & setsid sleep {} & nohup sleep {} >/dev/null 2>&1 & (setsid sleep {} &); echo started",
        marks[0], marks[1], marks[2], marks[3]
    );
    let result = call(&ctx, "bash", json!({"command": command})).await;
    assert_eq!(text(&result), "started\n", "{}", sandbox.name());
    for mark in &marks {
        let left = processes_with(mark);
        assert!(
            left.is_empty(),
            "{}: left running: {left:?}",
            sandbox.name()
        );
    }
    // Under `isolated`: a call that leaves nothing (its cleaning is skipped: the supervisor
    // said so as its shell ended), then one whose leftover dropped its tag and was orphaned
    // before the shell ended: it is still found and killed. (Outside `isolated` such an orphan
    // is caught by the harness binary as a subreaper, which this test process is not: see
    // `a_whole_run_leaves_no_process_behind`.)
    if sandbox.tier() == Tier::Isolated {
        let result = call(&ctx, "bash", json!({"command": "true"})).await;
        assert!(!result.is_error, "{}: {}", sandbox.name(), text(&result));
        let mark = unique_sleep();
        let command = format!("(env -i \"$(command -v sleep)\" {mark} &); echo started");
        let result = call(&ctx, "bash", json!({"command": command})).await;
        assert_eq!(text(&result), "started\n", "{}", sandbox.name());
        let left = processes_with(&mark);
        assert!(
            left.is_empty(),
            "{}: left running: {left:?}",
            sandbox.name()
        );
    }
    // A timed-out call, with a child in its own session, leaves nothing either.
    let mark = unique_sleep();
    let result = call(
        &ctx,
        "bash",
        json!({"command": format!("setsid sleep {mark} & sleep 30"), "timeout": 0.5}),
    )
    .await;
    assert!(text(&result).contains("Command timed out after 0.5 seconds"));
    assert!(processes_with(&mark).is_empty(), "{}", sandbox.name());
}

/// Three commands of one run in flight at once in its sandbox: one that times out (its group
/// killed and cleaned), one that ends at once, one that ends later. Each end is reported as it
/// happens, whatever the others are doing, and each result is its own.
#[tokio::test]
async fn only_the_harness_own_sandbox_proves_its_last_process_ended() {
    // What lets a run's folders be given to a later run: under `isolated`, once the sandbox's
    // PID 1 has ended, every process of the sandbox has (a sleeper left in the background
    // too); outside a PID namespace nothing proves it.
    let (_dir, ws, _outside) = workspace_and_outside();
    let within = Duration::from_secs(5);
    let unconfined = Sandbox::detect(Some(Tier::Workspace));
    let scratch = Scratch::new().unwrap();
    let ctx = context(unconfined.jail(&ws), &ws, &scratch);
    call(&ctx, "bash", json!({"command": "true"})).await;
    let jail = ctx.jail.clone();
    drop(ctx);
    assert!(!jail.end().everything_ended(within), "workspace tier");
    let Some(sandbox) =
        isolated_or_skip("only_the_harness_own_sandbox_proves_its_last_process_ended")
    else {
        return;
    };
    let ctx = context(sandbox.jail(&ws), &ws, &scratch);
    let mark = unique_sleep();
    let result = call(
        &ctx,
        "bash",
        json!({"command": format!("(setsid sleep {mark} &); echo ok")}),
    )
    .await;
    assert_eq!(text(&result), "ok\n");
    let jail = ctx.jail.clone();
    drop(ctx);
    let ended = jail.end();
    if sandbox.maker() == Some("harness") {
        assert!(ended.everything_ended(within), "the sandbox did not end");
        assert!(
            processes_with(&mark).is_empty(),
            "a process outlived its sandbox"
        );
    } else {
        assert!(
            !ended.everything_ended(within),
            "bubblewrap's end proves nothing"
        );
    }
}

#[tokio::test]
async fn commands_of_one_run_in_flight_at_once_each_end_as_they_end() {
    let Some(sandbox) =
        isolated_or_skip("commands_of_one_run_in_flight_at_once_each_end_as_they_end")
    else {
        return;
    };
    let (_dir, ws, _outside) = workspace_and_outside();
    let scratch = Scratch::new().unwrap();
    let ctx = context(sandbox.jail(&ws), &ws, &scratch);
    let started = std::time::Instant::now();
    let timed = |args: Value| {
        let ctx = &ctx;
        async move {
            let result = call(ctx, "bash", args).await;
            (result, started.elapsed())
        }
    };
    let all = async {
        tokio::join!(
            timed(json!({"command": "sleep 0.3; echo never & sleep 30", "timeout": 1})),
            timed(json!({"command": "echo quick"})),
            timed(json!({"command": "sleep 0.5; echo later; exit 3"})),
        )
    };
    let ((stuck, stuck_at), (quick, quick_at), (later, later_at)) =
        tokio::time::timeout(Duration::from_secs(60), all)
            .await
            .expect("the three commands ended within a minute");
    assert!(!quick.is_error, "{}", text(&quick));
    assert_eq!(text(&quick).trim(), "quick");
    assert!(
        quick_at < Duration::from_millis(900),
        "the quick command waited for the others: {quick_at:?}"
    );
    assert!(later.is_error, "{}", text(&later));
    assert!(text(&later).starts_with("later"), "{}", text(&later));
    assert!(
        text(&later).contains("Command exited with code 3"),
        "{}",
        text(&later)
    );
    assert!(
        later_at < Duration::from_millis(1500),
        "the later command waited for the one timing out: {later_at:?}"
    );
    assert!(stuck.is_error, "{}", text(&stuck));
    assert!(
        text(&stuck).contains("Command timed out after 1 seconds"),
        "{}",
        text(&stuck)
    );
    assert!(stuck_at < Duration::from_secs(10), "{stuck_at:?}");
    // The sandbox serves the next command as before.
    let next = call(&ctx, "bash", json!({"command": "echo next"})).await;
    assert_eq!(text(&next).trim(), "next");
}

#[tokio::test]
async fn a_command_the_supervisor_cannot_start_says_so_at_its_end_as_a_direct_spawn_does() {
    // The supervisor answers only a spawn that fails: the harness learns it when it waits, with
    // the same text a spawn outside the sandbox gives at once.
    let Some(sandbox) = isolated_or_skip(
        "a_command_the_supervisor_cannot_start_says_so_at_its_end_as_a_direct_spawn_does",
    ) else {
        return;
    };
    let (_dir, ws, _outside) = workspace_and_outside();
    let scratch = Scratch::new().unwrap();
    let ctx = context(sandbox.jail(&ws), &ws, &scratch);
    let spec = |stdout, stderr| harness::sandbox::CommandSpec {
        shell: Path::new("/no/such/shell"),
        script: "echo never",
        cwd: &ws,
        env: &ctx.env,
        stdout,
        stderr,
    };
    let pipe = || {
        let (read, write) = std::io::pipe().unwrap();
        (read, std::os::fd::OwnedFd::from(write))
    };
    let (_read, write) = pipe();
    let mut spawned = ctx
        .jail
        .spawn(spec(write.try_clone().unwrap(), write))
        .await
        .expect("under isolated the spawn is only asked for");
    let err = tokio::time::timeout(Duration::from_secs(30), spawned.wait())
        .await
        .expect("the supervisor answered")
        .unwrap_err();
    assert!(harness::sandbox::NotStarted::is(&err), "{err:?}");
    // Asked again, the command says the same.
    let again = spawned.wait().await.unwrap_err();
    assert!(harness::sandbox::NotStarted::is(&again), "{again:?}");
    assert_eq!(again.to_string(), err.to_string());
    let direct = Sandbox::detect(Some(Tier::None));
    let (_read, write) = pipe();
    let outside = direct
        .jail(&ws)
        .spawn(spec(write.try_clone().unwrap(), write))
        .await
        .map(drop)
        .unwrap_err();
    assert_eq!(err.to_string(), outside.to_string());
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
    // Nothing to kill or clean, and the sandbox serves the next command.
    spawned.kill_all().await;
    drop(spawned);
    let next = call(&ctx, "bash", json!({"command": "echo next"})).await;
    assert_eq!(text(&next).trim(), "next");
}

#[tokio::test]
async fn a_request_larger_than_the_socket_holds_reaches_the_supervisor_whole() {
    // The run's socket is watched for reading alone; a frame its buffer cannot take at once (a
    // command with a large environment: about 800 KB here, against some 200 KB of buffer)
    // waits for room, and arrives whole.
    let Some(sandbox) =
        isolated_or_skip("a_request_larger_than_the_socket_holds_reaches_the_supervisor_whole")
    else {
        return;
    };
    let (_dir, ws, _outside) = workspace_and_outside();
    let scratch = Scratch::new().unwrap();
    let mut ctx = context(sandbox.jail(&ws), &ws, &scratch);
    let mut env = (*ctx.env).clone();
    for i in 0..8 {
        env.push((format!("LARGE_{i}"), format!("{i}").repeat(100_000)));
    }
    ctx.env = Arc::new(env);
    let command = "for i in 0 1 2 3 4 5 6 7; do eval \"v=\\$LARGE_$i\"; \
                   printf '%s ' \"${#v}:${v:0:1}${v: -1}\"; done";
    let result = tokio::time::timeout(
        Duration::from_secs(60),
        call(&ctx, "bash", json!({ "command": command })),
    )
    .await
    .expect("the large request was sent");
    assert!(!result.is_error, "{}", text(&result));
    let expected: String = (0..8).map(|i| format!("100000:{i}{i} ")).collect();
    assert_eq!(text(&result), expected);
    // The socket goes on serving small requests.
    let next = call(&ctx, "bash", json!({"command": "echo next"})).await;
    assert_eq!(text(&next).trim(), "next");
}

/// Prints the sandbox's network namespace, then how many sockets of any family the kernel lists
/// in it.
const NETWORK_FACTS: &str = "readlink /proc/self/ns/net; cat /proc/net/tcp /proc/net/tcp6 \
     /proc/net/udp /proc/net/udp6 /proc/net/unix 2>/dev/null | grep -vc -e '^ *sl ' -e '^Num '; true";

#[tokio::test]
async fn a_run_gets_no_socket_an_earlier_run_left_and_never_shares_its_network() {
    let Some(sandbox) =
        isolated_or_skip("a_run_gets_no_socket_an_earlier_run_left_and_never_shares_its_network")
    else {
        return;
    };
    let (_dir, ws, _outside) = workspace_and_outside();
    let scratch = Scratch::new().unwrap();
    // One run leaves a connection in TIME_WAIT on the loopback (its server closed first): for a
    // minute no other server could bind that port there.
    let lingering = {
        let ctx = context(sandbox.jail(&ws), &ws, &scratch);
        let script = "python3 -c \"
import socket
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()
c = socket.create_connection(s.getsockname()); a, _ = s.accept()
a.close(); c.close(); s.close()
\" && "
            .to_owned()
            + NETWORK_FACTS;
        let left = call(&ctx, "bash", json!({"command": script})).await;
        let facts = text(&left).to_owned();
        let mut lines = facts.lines();
        let net = lines.next().unwrap_or_default().to_owned();
        assert!(net.starts_with("net:["), "{facts}");
        assert_ne!(
            lines.next(),
            Some("0"),
            "the run's socket is listed in its namespace: {facts}"
        );
        net
    };
    // The runs after it, one at a time, each once the one before has ended.
    let mut seen = Vec::new();
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(150)).await;
        let ctx = context(sandbox.jail(&ws), &ws, &scratch);
        let facts = call(&ctx, "bash", json!({"command": NETWORK_FACTS})).await;
        let facts = text(&facts).to_owned();
        let (net, sockets) = facts.trim().split_once('\n').expect("two lines");
        // The lingering namespace's TIME_WAIT socket is listed there for a minute, longer than
        // this test: a run given that namespace would count it. Its number alone proves nothing:
        // once the harness releases a namespace (with a batch of other tests' ended ones), the
        // kernel gives its number to the next new namespace.
        assert_eq!(
            sockets, "0",
            "a run found sockets in its network namespace (the one a socket was left in is              {lingering}): {facts}"
        );
        seen.push(net.to_owned());
    }
    if sandbox.maker() == Some("harness") {
        let mut distinct = seen.clone();
        distinct.sort();
        distinct.dedup();
        assert!(
            distinct.len() < seen.len(),
            "no network namespace was kept for a later run: {seen:?}"
        );
    }
    // Two runs at once never share one.
    let first = context(sandbox.jail(&ws), &ws, &scratch);
    let second = context(sandbox.jail(&ws), &ws, &scratch);
    let ask = json!({"command": "readlink /proc/self/ns/net"});
    let (a, b) = tokio::join!(
        call(&first, "bash", ask.clone()),
        call(&second, "bash", ask)
    );
    assert!(text(&a).starts_with("net:["), "{}", text(&a));
    assert_ne!(
        text(&a),
        text(&b),
        "two runs in flight shared a network namespace"
    );
}

#[tokio::test]
async fn commands_are_the_first_the_oom_killer_takes_in_every_tier() {
    // A command that eats the memory ends its own run, not the harness with the suite. What the
    // command starts inherits it (the pause lets the shell's adjustment land first outside
    // `isolated`, where it is set as the shell starts).
    let mut sandboxes = vec![Sandbox::none(), Sandbox::detect(Some(Tier::Workspace))];
    if let Some(sandbox) =
        isolated_or_skip("commands_are_the_first_the_oom_killer_takes_in_every_tier")
    {
        sandboxes.push(sandbox);
    }
    for sandbox in sandboxes {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let scratch = Scratch::new().unwrap();
        let ctx = context(sandbox.jail(&ws), &ws, &scratch);
        let ask = json!({"command": "sleep 0.2; cat /proc/self/oom_score_adj"});
        let got = call(&ctx, "bash", ask).await;
        assert_eq!(text(&got), "1000\n", "{}", sandbox.name());
    }
}

#[tokio::test]
async fn background_setsid_and_nohup_children_die_with_the_call_unconfined() {
    nothing_left_behind(&Sandbox::none()).await;
    nothing_left_behind(&Sandbox::detect(Some(Tier::Workspace))).await;
}

#[tokio::test]
async fn background_setsid_and_nohup_children_die_with_the_call_isolated() {
    let Some(sandbox) =
        isolated_or_skip("background_setsid_and_nohup_children_die_with_the_call_isolated")
    else {
        return;
    };
    nothing_left_behind(&sandbox).await;
}

/// `harness run` of a one-task suite under `root` (the task `task_yaml` names, with a one-file
/// fixture), live against the scripted server at `base_url`, under `tier`, quiet.
/// A suite of one task under `root/tasks`: `t`, a fixture of one file and `task_yaml`.
fn write_task(root: &Path, task_yaml: &str) {
    let task = root.join("tasks/t");
    std::fs::create_dir_all(task.join("repo")).unwrap();
    std::fs::write(task.join("repo/x.txt"), "x\n").unwrap();
    std::fs::write(task.join("task.yaml"), task_yaml).unwrap();
}

fn scripted_run(root: &Path, task_yaml: &str, tier: Tier, base_url: &str) -> Command {
    write_task(root, task_yaml);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
    cmd.args(["run", "tasks", "--cassette-mode", "live", "-q"])
        .args(["--model", "anthropic/scripted", "--sandbox", tier.name()])
        .arg("--base-url")
        .arg(base_url)
        .current_dir(root)
        .env(
            "ANTHROPIC_API_KEY",
            "sk-ant-api03-fakefakefakefakefake0123456789",
        );
    cmd
}

#[test]
fn a_harness_started_under_a_low_open_files_limit_runs_many_runs_at_once() {
    // Each run in flight holds descriptors (its sandbox's socket, pidfd and namespace, its
    // commands' pipes): the harness raises its soft limit to the hard one, and under `isolated`
    // the commands still see the limit it started with.
    if isolated_or_skip("a_harness_started_under_a_low_open_files_limit_runs_many_runs_at_once")
        .is_none()
    {
        return;
    }
    let hard = rustix::process::getrlimit(rustix::process::Resource::Nofile).maximum;
    if hard.is_some_and(|hard| hard < 1024) {
        eprintln!("skipped: a hard limit on open files of {hard:?} leaves nothing to raise");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(testkit::start_load(testkit::LoadConfig {
        turns_per_run: 2,
        tool_call: testkit::ScriptedToolCall {
            name: "bash".to_owned(),
            arguments: json!({"command": "true"}),
        },
        ..Default::default()
    }));
    let dir = tempfile::tempdir().unwrap();
    write_task(
        dir.path(),
        "id: t\nprompt: p\nchecks:\n  - name: limit\n    run: 'test \"$(ulimit -Sn)\" = 64'\n",
    );
    // The harness's own sandbox maker, and bubblewrap (which starts the supervisor itself).
    for maker in ["harness", "bwrap"] {
        let out = Command::new("bash")
            .args(["-c", r#"ulimit -Sn 64 && exec "$@""#, "bash"])
            .arg(env!("CARGO_BIN_EXE_harness"))
            .args(["run", "tasks", "--cassette-mode", "live", "-q"])
            .args(["--model", "openai/load-gpt", "--sandbox", "isolated"])
            .args(["--jobs", "24", "--epochs", "24"])
            .arg("--base-url")
            .arg(format!("http://127.0.0.1:{}/v1", server.addr().port()))
            .arg("--reports")
            .arg(dir.path().join(format!("reports-{maker}")))
            .current_dir(dir.path())
            .env("OPENAI_API_KEY", "load-key-not-secret")
            .env(harness::sandbox::MAKER_VAR, maker)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("24 runs: 24 passed"),
            "{maker}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    drop(server);
}

#[test]
fn a_check_the_harness_cannot_start_is_an_error_of_the_run_not_a_failed_check() {
    // No `bash` on the check's PATH: the harness cannot start the check, so the run has no
    // verdict. Counted as a failed check, it would be held against the model.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut tiers = vec![Tier::None, Tier::Workspace];
    if isolated_or_skip(
        "a_check_the_harness_cannot_start_is_an_error_of_the_run_not_a_failed_check",
    )
    .is_some()
    {
        tiers.push(Tier::Isolated);
    }
    for tier in tiers {
        let script = testkit::parse_script("turns:\n  - text: done\n", "done.yaml").unwrap();
        let server = runtime.block_on(testkit::start(script, ApiKind::AnthropicMessages));
        let dir = tempfile::tempdir().unwrap();
        let out = scripted_run(
            dir.path(),
            "id: t\nprompt: p\nenv: {PATH: /nowhere}\nchecks:\n  - name: tests\n    run: 'true'\n",
            tier,
            &server.base_url(),
        )
        .output()
        .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let runs = walk_text(&dir.path().join("reports"), "runs.csv");
        let row = runs.lines().nth(1).unwrap_or_default();
        assert!(
            row.contains(",error,") && row.contains("setup"),
            "{tier}: {row}\n{stdout}"
        );
        assert!(
            row.contains("check `tests` could not be started: failed to start bash"),
            "{tier}: {row}"
        );
        assert!(!row.contains(",failed,"), "{tier}: {row}");
    }
}

#[test]
fn a_whole_run_leaves_no_process_behind() {
    // A scripted run whose bash call and check both leave sleepers behind, in every tier: in
    // the background, under `setsid` and `nohup`, and under `env -i`, which drops the tag.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for tier in [Tier::None, Tier::Workspace, Tier::Isolated] {
        let call_mark = unique_sleep();
        let check_mark = unique_sleep();
        let script = testkit::parse_script(
            &format!(
                "turns:\n  - tool_calls:\n      - name: bash\n        arguments: {{command: 'setsid sleep {call_mark} & nohup sleep {call_mark} >/dev/null 2>&1 & env -i setsid sleep {call_mark} >/dev/null 2>&1 & (env -i sh -c \\\"sleep {call_mark} &\\\" &) ; echo ok'}}\n  - text: done\n"
            ),
            "sleepers.yaml",
        )
        .unwrap();
        let server = runtime.block_on(testkit::start(script, ApiKind::AnthropicMessages));
        let dir = tempfile::tempdir().unwrap();
        let out = scripted_run(
            dir.path(),
            &format!(
                "id: sleepers\nprompt: p\nchecks:\n  - run: 'setsid sleep {check_mark} & (sleep {check_mark} &) ; true'\n"
            ),
            tier,
            &server.base_url(),
        )
        .output()
        .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("passed"), "{tier}: {stdout}");
        for mark in [&call_mark, &check_mark] {
            let left = processes_with(mark);
            assert!(
                left.is_empty(),
                "{tier}: left running after the run: {left:?}"
            );
        }
        drop(server);
    }
}

#[test]
fn runs_that_take_an_ended_runs_folders_start_from_the_fixture_alone_and_none_is_left() {
    // Under `isolated` an ended run's folders (its workspace's, its HOME, /tmp and logs) are
    // emptied and taken by a later run. Each run here says where it runs, writes into all of
    // them, and leaves a mark that the check finds if anything of an earlier run was there.
    let Some(sandbox) = isolated_or_skip(
        "runs_that_take_an_ended_runs_folders_start_from_the_fixture_alone_and_none_is_left",
    ) else {
        return;
    };
    // Only the harness's own sandboxes tell when their last process has ended.
    let recycles = sandbox.maker() == Some("harness");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // One run at a time, the same two turns each (request N gets turn N).
    let run = "  - tool_calls:\n      - name: bash\n        arguments: {command: 'echo \"WS=$PWD HOME=$HOME\"; if [ \"$(ls -A)\" != x.txt ] || [ -n \"$(ls -A ~)$(ls -A /tmp | grep -v ^harness-)\" ]; then echo DIRTY > dirty; fi; mkdir -p sub ~/.cache /tmp/t; touch sub/f ~/.cache/f /tmp/t/f .hidden; echo more >> x.txt'}\n  - text: done\n";
    let script =
        testkit::parse_script(&format!("turns:\n{}", run.repeat(6)), "marks.yaml").unwrap();
    let server = runtime.block_on(testkit::start(script, ApiKind::AnthropicMessages));
    let dir = tempfile::tempdir().unwrap();
    let out = scripted_run(
        dir.path(),
        "id: t\nprompt: p\nchecks:\n  - run: 'test ! -e dirty && test \"$(wc -l < x.txt)\" -eq 2'\n",
        Tier::Isolated,
        &server.base_url(),
    )
    .args(["--epochs", "6", "--jobs", "1"])
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.matches(" passed ").count(), 6, "{stdout}");
    // Where each run ran, from its transcript.
    let mut workspaces = Vec::new();
    let mut homes = Vec::new();
    let reports = dir.path().join("reports");
    for report in std::fs::read_dir(&reports).unwrap() {
        for run in std::fs::read_dir(report.unwrap().path().join("runs")).unwrap() {
            let text = std::fs::read_to_string(run.unwrap().path().join("transcript.md")).unwrap();
            let line = text.lines().find(|l| l.starts_with("WS=")).expect(&text);
            let (ws, home) = line.split_once(" HOME=").unwrap();
            workspaces.push(ws.trim_start_matches("WS=").to_owned());
            homes.push(home.to_owned());
        }
    }
    assert_eq!(workspaces.len(), 6);
    let distinct = |v: &[String]| v.iter().collect::<std::collections::BTreeSet<_>>().len();
    // One run at a time, the next made while one runs: two sets of folders serve all six.
    if recycles {
        assert!(
            distinct(&workspaces) < 6,
            "no workspace folder was taken again: {workspaces:?}"
        );
        assert!(
            distinct(&homes) < 6,
            "no scratch folder was taken again: {homes:?}"
        );
    }
    for path in workspaces.iter().chain(&homes) {
        let private = Path::new(path).parent().unwrap();
        assert!(
            !private.exists(),
            "{} was left after the run",
            private.display()
        );
    }
    drop(server);
}

#[tokio::test]
async fn the_mount_points_a_run_s_private_tmp_needs_are_made_before_its_sandbox_and_alone_there() {
    // The harness's own sandbox mounts the run's folders on mount points in the run's private
    // /tmp. They are made (or taken from an ended run of the same scratch folder, renamed)
    // with the jail, the scratch folder's own first, and are all a command finds there.
    let Some(sandbox) = isolated_or_skip(
        "the_mount_points_a_run_s_private_tmp_needs_are_made_before_its_sandbox_and_alone_there",
    ) else {
        return;
    };
    let real_tmp = Path::new("/tmp").canonicalize().unwrap();
    if sandbox.maker() != Some("harness")
        || std::env::temp_dir().canonicalize().unwrap() != real_tmp
    {
        eprintln!("not the harness's own sandbox, or the temp dir is not /tmp: skipped");
        return;
    }
    let sorted = |mut v: Vec<String>| {
        v.sort();
        v
    };
    for _ in 0..3 {
        let (_dir, ws, _outside) = workspace_and_outside();
        let scratch = Scratch::new().unwrap();
        let ctx = context(sandbox.jail(&ws), &ws, &scratch);
        let own = scratch
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let top = ws
            .strip_prefix(&real_tmp)
            .unwrap()
            .components()
            .next()
            .unwrap();
        let want = sorted(vec![own, top.as_os_str().to_string_lossy().into_owned()]);
        let made: Vec<String> = std::fs::read_dir(scratch.tmp())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(sorted(made), want);
        let out = call(&ctx, "bash", json!({"command": "ls -A /tmp"})).await;
        let seen: Vec<String> = text(&out).lines().map(str::to_owned).collect();
        assert_eq!(sorted(seen), want, "{}", text(&out));
        let ended = ctx.jail.clone().end();
        drop(ctx);
        scratch.recycle(ended.everything_ended(Duration::from_secs(5)));
    }
}

#[test]
fn a_tree_a_command_nests_thousands_deep_is_walked_diffed_and_removed_without_a_crash() {
    // Each of these recursed once per folder and overflowed its thread's stack on such a tree,
    // which aborted the harness with every run in flight: `find` and `grep` (the walk of the
    // file tools), the workspace diff, and the removal of the run's folders.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let nest = "python3 -c 'import os\nfor i in range(25000):\n    os.mkdir(\"d\"); os.chdir(\"d\")\nopen(\"leaf\", \"w\").write(\"needle\")\n' && echo nested";
    let script = testkit::Script {
        turns: vec![
            testkit::Turn {
                tool_calls: vec![testkit::ScriptedToolCall {
                    name: "bash".into(),
                    arguments: json!({"command": nest}),
                }],
                ..Default::default()
            },
            testkit::Turn {
                tool_calls: vec![
                    testkit::ScriptedToolCall {
                        name: "find".into(),
                        arguments: json!({"pattern": "**/leaf"}),
                    },
                    testkit::ScriptedToolCall {
                        name: "grep".into(),
                        arguments: json!({"pattern": "needle"}),
                    },
                ],
                ..Default::default()
            },
            testkit::Turn {
                text: Some("done".into()),
                ..Default::default()
            },
        ],
    };
    let server = runtime.block_on(testkit::start(script, ApiKind::AnthropicMessages));
    let dir = tempfile::tempdir().unwrap();
    let temp = dir.path().join("temp");
    std::fs::create_dir(&temp).unwrap();
    let out = scripted_run(
        dir.path(),
        "id: deep\nprompt: p\ntools: [bash, find, grep]\nchecks:\n  - run: 'true'\n",
        Tier::Workspace,
        &server.base_url(),
    )
    .env("TMPDIR", &temp)
    .output()
    .unwrap();
    // What a crashed harness left is removed here first: the temp dir's own removal would
    // overflow this test's stack on it.
    let left: Vec<_> = std::fs::read_dir(&temp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    for path in &left {
        harness::sandbox::remove::remove_tree(path, harness::sandbox::remove::Access::AsItIs)
            .unwrap();
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("1 run: 1 passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(left.is_empty(), "left behind: {left:?}");
    let transcript = walk_text(&dir.path().join("reports"), "transcript.md");
    assert!(transcript.contains("nested"), "{transcript}");
    // rg and fd stop where the path passes PATH_MAX; so does the walk, saying so.
    assert!(transcript.contains("File name too long"), "{transcript}");
    let diff = walk_text(&dir.path().join("reports"), "diff.patch");
    assert!(
        diff.contains("the diff could not be computed: d/d/d/") && diff.contains("levels deep"),
        "{diff}"
    );
    drop(server);
}

#[test]
fn a_killed_harness_takes_its_sandboxes_with_it() {
    // SIGKILL leaves the harness no time to end anything: the sandbox maker, the run's sandbox
    // and the command running in it must all die of their parents' deaths.
    if isolated_or_skip("a_killed_harness_takes_its_sandboxes_with_it").is_none() {
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for maker in ["harness", "bwrap"] {
        let mark = unique_sleep();
        let script = testkit::parse_script(
            &format!(
                "turns:\n  - tool_calls:\n      - name: bash\n        arguments: {{command: 'sleep {mark}'}}\n  - text: done\n"
            ),
            "sleeper.yaml",
        )
        .unwrap();
        let server = runtime.block_on(testkit::start(script, ApiKind::AnthropicMessages));
        let dir = tempfile::tempdir().unwrap();
        let mut harness = scripted_run(
            dir.path(),
            "id: sleeper\nprompt: p\nchecks:\n  - run: 'true'\n",
            Tier::Isolated,
            &server.base_url(),
        )
        .env(harness::sandbox::MAKER_VAR, maker)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
        let waited = std::time::Instant::now();
        while processes_with(&mark).is_empty() {
            assert!(
                waited.elapsed() < Duration::from_secs(30),
                "{maker}: the command never started"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // The harness's sandbox maker (none when bubblewrap makes the sandboxes).
        let makers: Vec<String> = processes_with("__sandbox-zygote")
            .into_iter()
            .filter(|p| {
                let pid = p.split(':').next().unwrap_or_default();
                std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                    stat.rsplit_once(')')
                        .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                        == Some(harness.id().to_string().as_str())
                })
            })
            .collect();
        assert_eq!(
            makers.len(),
            usize::from(maker == "harness"),
            "{maker}: {makers:?}"
        );
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(harness.id() as i32),
            nix::sys::signal::Signal::SIGKILL,
        )
        .unwrap();
        harness.wait().unwrap();
        let killed = std::time::Instant::now();
        loop {
            let left = processes_with(&mark);
            let still: Vec<&String> = makers
                .iter()
                .filter(|m| processes_with("__sandbox-zygote").contains(m))
                .collect();
            if left.is_empty() && still.is_empty() {
                break;
            }
            assert!(
                killed.elapsed() < Duration::from_secs(5),
                "{maker}: left running after the harness was killed: {left:?} {still:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        drop(server);
    }
}

/// The zombie children of `pid`, from `/proc/*/stat`.
fn zombie_children(pid: u32) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    dir.flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
            let mut fields = rest.split_whitespace();
            let state = fields.next().unwrap_or("");
            let ppid = fields.next().and_then(|p| p.parse::<u32>().ok());
            state == "Z" && ppid == Some(pid)
        })
        .count()
}

#[test]
fn an_adopted_process_is_reaped_so_zombies_never_pile_up() {
    // The harness is a child subreaper: an orphan it kills (`env -i setsid`, outside
    // `isolated`) and, under `isolated`, bubblewrap's namespace init after every command become
    // its children. Unreaped they would pile up, one or more per command, for the whole suite.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let calls = 30;
    let mut tiers = vec![Tier::None];
    if isolated_or_skip("an_adopted_process_is_reaped_so_zombies_never_pile_up (isolated)")
        .is_some()
    {
        tiers.push(Tier::Isolated);
    }
    for tier in tiers {
        let mark = unique_sleep();
        let call = format!(
            "  - tool_calls:\n      - name: bash\n        arguments: {{command: 'env -i setsid sleep {mark} >/dev/null 2>&1 & sleep 0.05'}}\n"
        );
        let script = testkit::parse_script(
            &format!("turns:\n{}  - text: done\n", call.repeat(calls)),
            "zombies.yaml",
        )
        .unwrap();
        let server = runtime.block_on(testkit::start(script, ApiKind::AnthropicMessages));
        let dir = tempfile::tempdir().unwrap();
        let mut child = scripted_run(
            dir.path(),
            "id: zombies\nprompt: p\nlimits: {turns: 40}\nchecks:\n  - run: 'true'\n",
            tier,
            &server.base_url(),
        )
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
        let mut most = 0;
        while child.try_wait().unwrap().is_none() {
            most = most.max(zombie_children(child.id()));
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut stdout = String::new();
        std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
        assert!(stdout.contains("passed"), "{tier}: {stdout}");
        assert!(
            most <= 5,
            "{tier}: {most} zombie children at once over {calls} commands"
        );
        assert!(processes_with(&mark).is_empty(), "{tier}");
        drop(server);
    }
}

// ------------------------------------------------------------------------------------------------
// Point 5: bounded work (the sandbox's and the tools' parts)
// ------------------------------------------------------------------------------------------------

#[tokio::test]
async fn read_refuses_fifos_and_devices() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let ctx = ToolContext::new(dir.path());
    for (path, kind) in [
        (fifo.to_string_lossy().into_owned(), "a FIFO"),
        ("/dev/zero".to_owned(), "a character device"),
    ] {
        let result = tokio::time::timeout(
            Duration::from_secs(5),
            call(&ctx, "read", json!({"path": path})),
        )
        .await
        .expect("read returns at once");
        assert!(result.is_error);
        assert_eq!(
            text(&result),
            format!("Not a regular file: {path} ({kind}); read only reads regular files")
        );
    }
}

/// A FIFO the agent made with `mkfifo` (nothing reading it) used to hang a `write` for good:
/// opening it for writing waited for a reader that never came.
#[test]
fn write_and_edit_refuse_fifos_and_devices_without_hanging() {
    for tier in [Tier::None, Tier::Workspace] {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let lonely = ws.join("lonely");
        let read_end = ws.join("read-end");
        for fifo in [&lonely, &read_end] {
            nix::unistd::mkfifo(fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        }
        // A reader holds the second one open: its open for writing would succeed.
        let mut reader = std::fs::File::options()
            .read(true)
            .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
            .open(&read_end)
            .unwrap();
        let scratch = Scratch::new().unwrap();
        let sandbox = if tier == Tier::None {
            Sandbox::none()
        } else {
            Sandbox::detect(Some(tier))
        };
        let ctx = context(sandbox.jail(&ws), &ws, &scratch);
        let mut cases = vec![
            ("write", &lonely, "a FIFO", "write only writes"),
            ("edit", &lonely, "a FIFO", "edit only edits"),
            ("write", &read_end, "a FIFO", "write only writes"),
            ("edit", &read_end, "a FIFO", "edit only edits"),
        ];
        // A device is not waited on: `edit` reads it first, which `read` refuses too; `write`
        // writes it as Pi does (outside the workspace: under `none` only).
        let null = PathBuf::from("/dev/null");
        if tier == Tier::None {
            cases.push(("edit", &null, "a character device", "edit only edits"));
        }
        for (tool, path, kind, says) in cases {
            let args = match tool {
                "write" => json!({"path": path, "content": "x"}),
                _ => json!({"path": path, "edits": [{"oldText": "a", "newText": "b"}]}),
            };
            // On a thread of its own: a call stuck in an `open` would hold the runtime's end.
            let (tx, rx) = std::sync::mpsc::channel();
            let (ctx, tool_name) = (ctx.clone(), tool.to_owned());
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                let _gone = tx.send(runtime.block_on(call(&ctx, &tool_name, args)));
            });
            let result = rx
                .recv_timeout(Duration::from_secs(5))
                .unwrap_or_else(|_| panic!("{tier:?}: {tool} {} hangs", path.display()));
            assert!(result.is_error, "{tier:?}: {tool} {}", path.display());
            assert_eq!(
                text(&result),
                format!(
                    "Not a regular file: {} ({kind}); {says} regular files",
                    path.display()
                ),
                "{tier:?}"
            );
        }
        let mut got = Vec::new();
        let _empty = std::io::Read::read_to_end(&mut reader, &mut got);
        assert!(got.is_empty(), "{tier:?}: {got:?} was written to the FIFO");
    }
}

#[tokio::test]
async fn the_full_output_file_of_yes_is_capped() {
    let dir = tempfile::tempdir().unwrap();
    let scratch = Scratch::new().unwrap();
    let ctx = context(Sandbox::none().jail(dir.path()), dir.path(), &scratch);
    // 40 MB of output, more than the cap.
    let result = call(
        &ctx,
        "bash",
        json!({"command": "head -c 40000000 /dev/zero"}),
    )
    .await;
    let shown = text(&result);
    assert!(
        shown.contains("Full output: "),
        "{}",
        &shown[shown.len() - 300..]
    );
    assert!(
        shown.contains("[harness: full output capped at 32 MiB; "),
        "{}",
        &shown[shown.len() - 300..]
    );
    let path = result.details.as_ref().unwrap()["fullOutputPath"]
        .as_str()
        .unwrap()
        .to_owned();
    let size = std::fs::metadata(&path).unwrap().len();
    let cap = harness::sandbox::output::FULL_OUTPUT_CAP;
    assert!(size > cap && size < cap + 200, "{size}");
}

#[tokio::test]
async fn the_full_output_file_can_be_read_back_in_every_tier() {
    // Pi's notice tells the model to read the file: it stays reachable under confinement.
    let mut sandboxes = vec![Sandbox::detect(Some(Tier::Workspace))];
    if let Some(isolated) =
        isolated_or_skip("the_full_output_file_can_be_read_back_in_every_tier (isolated)")
    {
        sandboxes.push(isolated);
    }
    for sandbox in sandboxes {
        let (_dir, ws, _outside) = workspace_and_outside();
        let scratch = Scratch::new().unwrap();
        let ctx = context(sandbox.jail(&ws), &ws, &scratch);
        let result = call(&ctx, "bash", json!({"command": "seq 1 3000"})).await;
        let path = result.details.as_ref().unwrap()["fullOutputPath"]
            .as_str()
            .unwrap()
            .to_owned();
        let read = call(&ctx, "read", json!({"path": path, "limit": 2})).await;
        assert!(
            text(&read).starts_with("1\n2"),
            "{}: {}",
            sandbox.name(),
            text(&read)
        );
        let tail = call(
            &ctx,
            "bash",
            json!({"command": format!("tail -n 1 {path}")}),
        )
        .await;
        assert_eq!(text(&tail), "3000\n", "{}", sandbox.name());
        let write = call(
            &ctx,
            "bash",
            json!({"command": format!("echo x >> {path} && echo wrote")}),
        )
        .await;
        if sandbox.tier() == Tier::Isolated {
            assert!(write.is_error, "the log is read-only under isolated");
        }
    }
}

#[tokio::test]
async fn the_harness_holds_the_network_namespace_its_sandbox_s_commands_see() {
    // The supervisor sends it with its first frame, so the harness can release the ended
    // sandboxes' namespaces in batches; it is the sandbox's own, not the host's.
    let Some(sandbox) =
        isolated_or_skip("the_harness_holds_the_network_namespace_its_sandbox_s_commands_see")
    else {
        return;
    };
    let held = || -> Vec<String> {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .map(|link| link.to_string_lossy().into_owned())
            .filter(|link| link.starts_with("net:["))
            .collect()
    };
    let host = std::fs::read_link("/proc/self/ns/net").unwrap();
    let (_dir, ws, _outside) = workspace_and_outside();
    let scratch = Scratch::new().unwrap();
    let ctx = context(sandbox.jail(&ws), &ws, &scratch);
    let result = call(
        &ctx,
        "bash",
        json!({"command": "readlink /proc/self/ns/net"}),
    )
    .await;
    let inside = text(&result).trim().to_owned();
    assert!(inside.starts_with("net:["), "{inside}");
    assert_ne!(
        Path::new(&inside),
        host,
        "the commands have a network of their own"
    );
    assert!(
        held().contains(&inside),
        "the harness holds {inside}: {:?}",
        held()
    );
}

#[tokio::test]
async fn a_check_runs_the_bash_its_path_finds_first_in_every_tier() {
    // The checks' shell is `bash` from the command's PATH: the harness (or the supervisor,
    // inside the sandbox) looks it up as execvp would, and `$0` stays `bash`.
    let mut sandboxes = vec![
        Sandbox::detect(Some(Tier::None)),
        Sandbox::detect(Some(Tier::Workspace)),
    ];
    if let Some(isolated) =
        isolated_or_skip("a_check_runs_the_bash_its_path_finds_first_in_every_tier (isolated)")
    {
        sandboxes.push(isolated);
    }
    for sandbox in sandboxes {
        let (_dir, ws, _outside) = workspace_and_outside();
        let bin = ws.join("bin");
        std::fs::create_dir(&bin).unwrap();
        let fake = bin.join("bash");
        std::fs::write(&fake, "#!/bin/sh\necho \"a bash of the task's own: $2\"\n").unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let scratch = Scratch::new().unwrap();
        let jail = sandbox.jail(&ws).with_scratch(&scratch);
        let tasks = tempfile::tempdir().unwrap();
        let task = |path: &str| {
            let folder = tasks.path().join("t");
            std::fs::create_dir_all(folder.join("repo")).unwrap();
            std::fs::write(
                folder.join("task.yaml"),
                format!(
                    "id: t\nprompt: p\nenv: {{PATH: \"{path}\"}}\nchecks:\n  - name: shell\n    run: 'echo \"$0\"'\n    expect_exit: 0\n"
                ),
            )
            .unwrap();
            let mut problems = Vec::new();
            let task = harness::tasks::load_task(&folder, &Default::default(), &mut problems);
            assert!(problems.is_empty(), "{problems:?}");
            task.unwrap()
        };
        let env = |task: &harness::tasks::Task| {
            harness::sandbox::env::run_env(&[], scratch.home(), scratch.tmp(), &task.env)
        };
        let first = task(&format!("{}:/usr/bin:/bin", bin.display()));
        let checks = harness::scoring::run_checks_in(&first, &jail, &ws, &env(&first))
            .await
            .unwrap();
        assert!(
            checks[0]
                .detail
                .contains("a bash of the task's own: echo \"$0\""),
            "{}: {}",
            sandbox.name(),
            checks[0].detail
        );
        let usual = task("/nowhere:/usr/bin:/bin");
        let checks = harness::scoring::run_checks_in(&usual, &jail, &ws, &env(&usual))
            .await
            .unwrap();
        assert!(checks[0].passed, "{}: {}", sandbox.name(), checks[0].detail);
        assert!(
            checks[0].detail.ends_with("--- stdout ---\nbash"),
            "{}: {}",
            sandbox.name(),
            checks[0].detail
        );
    }
}

// ------------------------------------------------------------------------------------------------
// Point 8: Pi fidelity, through the binary
// ------------------------------------------------------------------------------------------------

#[test]
fn batch_accepts_lone_surrogates_and_a_failed_write_says_write() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["tool", "--batch"])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            concat!(
                r#"{"tool":"write","args":{"path":"s.txt","content":"a\ud800b"}}"#,
                "\n",
                r#"{"tool":"write","args":{"path":"/dev/full","content":"x"}}"#,
                "\n"
            )
            .as_bytes(),
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Node: "a\ud800b".length is 3 and the lone surrogate is written as U+FFFD.
    assert_eq!(
        lines[0]["content"][0]["text"],
        "Successfully wrote 3 bytes to s.txt"
    );
    assert_eq!(
        std::fs::read(dir.path().join("s.txt")).unwrap(),
        "a\u{FFFD}b".as_bytes()
    );
    assert_eq!(
        lines[1]["content"][0]["text"],
        "ENOSPC: no space left on device, write"
    );
}

#[test]
fn a_required_folder_outside_the_workspace_is_read_only_inside_the_run_sandbox() {
    // A shared dependency install (like an imported JavaScript suite's node_modules) lives
    // beside the suite, here under /tmp, which `isolated` replaces with the run's private /tmp:
    // the task's `requires.files` names it, so the agent and the checks read it there; nothing
    // inside may change it.
    let Some(_) = isolated_or_skip(
        "a_required_folder_outside_the_workspace_is_read_only_inside_the_run_sandbox",
    ) else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let deps = root.join("deps");
    std::fs::create_dir_all(&deps).unwrap();
    std::fs::write(deps.join("lib.txt"), "shared\n").unwrap();
    let lib = deps.join("lib.txt");
    let script = testkit::parse_script(
        &format!(
            "turns:\n  - tool_calls:\n      - name: bash\n        arguments: {{command: 'cat {lib} > seen.txt; echo changed > {lib} || echo refused > refused.txt'}}\n  - text: done\n",
            lib = lib.display()
        ),
        "deps.yaml",
    )
    .unwrap();
    let server = runtime.block_on(testkit::start(script, ApiKind::AnthropicMessages));
    let out = scripted_run(
        &root,
        &format!(
            "id: deps\nprompt: p\nrequires:\n  files: ['{deps}']\nchecks:\n  - run: 'grep -qx shared {lib} && grep -qx shared seen.txt && test -f refused.txt'\n",
            deps = deps.display(),
            lib = lib.display()
        ),
        Tier::Isolated,
        &server.base_url(),
    )
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("deps ") && l.contains(" passed ")),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&lib).unwrap(), "shared\n");
}

/// The folders a command lists in `dir`, sorted, and what it could not do there.
fn listing_in(dir: &Path) -> String {
    format!(
        "cd '{}' && ls -A | sort | tr '\\n' ' '; echo; cat harness-other-run/secret.txt 2>&1; \
         touch new 2>&1 | sed 's/.*: //'",
        dir.display()
    )
}

#[tokio::test]
async fn a_run_sees_none_of_the_temp_dirs_other_folders() {
    let Some(own) = isolated_or_skip("a_run_sees_none_of_the_temp_dirs_other_folders") else {
        return;
    };
    let bwrap = Sandbox::detect_with_bwrap(Some(Tier::Isolated));
    let bwrap = (bwrap.maker() == Some("bubblewrap")).then_some(bwrap);
    for sandbox in std::iter::once(&own).chain(bwrap.as_ref()) {
        let maker = sandbox.maker().unwrap();
        // A temp dir elsewhere than /tmp (`TMPDIR=/var/tmp/...`), shared with another run.
        let shared = if Path::new("/var/tmp").is_dir() {
            tempfile::tempdir_in("/var/tmp")
        } else {
            tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        }
        .unwrap();
        let base = shared.path().canonicalize().unwrap();
        std::fs::create_dir(base.join("harness-other-run")).unwrap();
        std::fs::write(
            base.join("harness-other-run/secret.txt"),
            "another run's work\n",
        )
        .unwrap();
        let ws = base.join("harness-t-1/work");
        std::fs::create_dir_all(&ws).unwrap();
        let scratch = Scratch::new_in(&base).unwrap();
        let own_folder = scratch.path().file_name().unwrap().to_str().unwrap();
        let ctx = context(sandbox.jail(&ws), &ws, &scratch);
        let seen = call(&ctx, "bash", json!({"command": listing_in(&base)})).await;
        let seen = text(&seen);
        let mut expected = [own_folder, "harness-t-1"];
        expected.sort();
        assert!(
            seen.starts_with(&format!("{} \n", expected.join(" "))),
            "{maker}: the temp dir shows only the run's own folders:\n{seen}"
        );
        assert!(
            !seen.contains("another run's work") && seen.contains("Read-only file system"),
            "{maker}: {seen}"
        );

        // The usual temp dir, /tmp, is the run's private one: the run folders' mount points are
        // made on a read-only tmpfs, not as folders on disk in the run's /tmp.
        let shared = tempfile::tempdir_in("/tmp").unwrap();
        let base = shared.path().canonicalize().unwrap();
        let ws = base.join("harness-t-1/work");
        std::fs::create_dir_all(&ws).unwrap();
        let scratch = Scratch::new_in(&base).unwrap();
        let own_folder = scratch.path().canonicalize().unwrap();
        let ctx = context(sandbox.jail(&ws), &ws, &scratch);
        let seen = call(&ctx, "bash", json!({"command": listing_in(&own_folder)})).await;
        let seen = text(&seen);
        assert!(
            seen.starts_with("home logs \n") && seen.contains("Read-only file system"),
            "{maker}: {seen}"
        );
        let on_disk = scratch.tmp().join(own_folder.strip_prefix("/tmp").unwrap());
        // The folder itself is there (the tmpfs's own mount point), and empty.
        let made: Vec<_> = std::fs::read_dir(&on_disk)
            .unwrap_or_else(|e| panic!("{maker}: {}: {e}", on_disk.display()))
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(
            made.is_empty(),
            "{maker}: mount points made on disk in {}: {made:?}",
            on_disk.display()
        );
    }
}

#[test]
fn the_harness_binary_under_another_name_still_makes_its_sandboxes() {
    if isolated_or_skip("the_harness_binary_under_another_name_still_makes_its_sandboxes").is_none()
    {
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let renamed = dir.path().join("harness-0.3");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_harness"), &renamed).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_harness"), &renamed).unwrap();
    }
    let out = Command::new(&renamed)
        .args(["tool", "bash", "--sandbox", "isolated", "--args"])
        .arg(r#"{"command":"tr '\\0' ' ' < /proc/1/cmdline"}"#)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        !stderr.contains("falling back") && stdout.contains("__sandbox-"),
        "stdout: {stdout}\nstderr: {stderr}"
    );
}

/// The harness binary turns transparent huge pages off before its first allocation, not from
/// `main`: by then the runtime had already reserved and touched mimalloc's first arena, and each
/// start of the binary faulted in (and zeroed) two 2 MiB pages. Counted with the kernel's
/// machine-wide `thp_fault_alloc`; where the machine's mode is not `madvise` (only mimalloc's
/// arenas ask for huge pages then, so other processes cannot add to the count) the count says
/// nothing and the test only says so.
#[test]
fn the_harness_binary_faults_in_no_huge_page_from_its_start() {
    let mode =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    if !mode.contains("[madvise]") {
        eprintln!("skipped: transparent huge pages are not in `madvise` mode here ({mode:?})");
        return;
    }
    let faults = || -> u64 {
        std::fs::read_to_string("/proc/vmstat")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("thp_fault_alloc "))
            .expect("/proc/vmstat has thp_fault_alloc")
            .trim()
            .parse()
            .unwrap()
    };
    let starts = 10;
    let before = faults();
    for _ in 0..starts {
        let out = Command::new(env!("CARGO_BIN_EXE_harness"))
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    // Other tests' harness binaries start meanwhile; each of those faulted in two pages too,
    // so fewer faults than starts holds only if none of them does.
    let added = faults() - before;
    assert!(
        added < starts,
        "{added} huge pages faulted in over {starts} starts of the harness binary"
    );
}
