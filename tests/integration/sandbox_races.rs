//! The sandbox against an adversary, end to end: a symlink flipped while the file tools run in
//! parallel never leads them outside the workspace; nothing the agent runs reads a key from the
//! harness (`/proc/$PPID/environ`, `/proc/$PPID/mem`), whether the harness runs as root or as an
//! unprivileged user; a root harness runs the commands as `nobody` outside `isolated`; and under
//! `isolated` a run's commands share one sandbox whose supervisor they cannot touch.
//!
//! Tests of the `isolated` tier print `SKIPPED` (a failure under `HARNESS_REQUIRE_SANDBOX`)
//! where bubblewrap cannot make a sandbox; those that need root print `SKIPPED` when not root.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;

use harness::providers::ApiKind;
use harness::sandbox::{Sandbox, Scratch, Tier};
use harness::testkit;
use harness::tools::{ToolContext, ToolResult, ToolSet, ToolSetSpec};

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// The isolated sandbox, or `None` after saying why its tests are skipped.
fn isolated_or_skip(test: &str) -> Option<Sandbox> {
    let sandbox = Sandbox::detect(Some(Tier::Isolated));
    if sandbox.tier() == Tier::Isolated {
        return Some(sandbox);
    }
    super::browser::skip(
        "HARNESS_REQUIRE_SANDBOX",
        &format!(
            "{test}: the isolated tier is unavailable here: {}",
            sandbox.notice().unwrap_or("no reason given")
        ),
    );
    None
}

fn text(result: &ToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .collect::<Vec<_>>()
        .join("\n")
}

// ------------------------------------------------------------------------------------------------
// The symlink race
// ------------------------------------------------------------------------------------------------

/// What is outside: files the model knows the content of (so an escaped edit would match), one
/// only outside (an escaped listing would show it), and a secret to read.
const OUTSIDE_FILES: [(&str, &str); 5] = [
    ("edit0.txt", "token\n"),
    ("edit1.txt", "token\n"),
    ("write.txt", "outside write target\n"),
    ("read.txt", "OUTSIDE-SECRET read\n"),
    ("only_outside.txt", "OUTSIDE-SECRET listed\n"),
];

/// Every file under `dir` with its bytes, sorted.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                stack.push(p.clone());
                out.push((p, Vec::new()));
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

/// Flips `link` between `inside` and `outside` (atomic renames of fresh symlinks) until told
/// to stop; counts the flips.
fn flipper(link: PathBuf, inside: PathBuf, outside: PathBuf, stop: Arc<AtomicBool>) -> usize {
    let tmp = link.with_extension("flip");
    let mut flips = 0;
    while !stop.load(Ordering::Relaxed) {
        let target = if flips % 2 == 0 { &outside } else { &inside };
        let _ = std::fs::remove_file(&tmp);
        if std::os::unix::fs::symlink(target, &tmp).is_ok() && std::fs::rename(&tmp, &link).is_ok()
        {
            flips += 1;
        }
    }
    flips
}

/// What one race saw: whether anything outside was written or read.
struct Race {
    escaped_writes: bool,
    escaped_reads: Vec<String>,
    flips: usize,
    calls: usize,
}

/// `rounds` rounds of parallel `edit`, `write`, `read`, `grep`, `find` and `ls` calls through a
/// symlink `lnk` that a thread flips between a folder in the workspace and one outside.
async fn race(sandbox: &Sandbox, rounds: usize) -> Race {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let ws = base.join("ws");
    let outside = base.join("outside");
    let inside = ws.join("real");
    std::fs::create_dir_all(&inside).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    for (name, content) in OUTSIDE_FILES {
        std::fs::write(outside.join(name), content).unwrap();
        if name != "only_outside.txt" {
            let inner = content.replace("OUTSIDE-SECRET", "inside");
            std::fs::write(inside.join(name), inner).unwrap();
        }
    }
    let before = snapshot(&outside);
    let scratch = Scratch::new().unwrap();
    let mut ctx = ToolContext::new(&ws);
    ctx.temp_dir = scratch.logs().to_path_buf();
    ctx.jail = sandbox.jail(&ws).with_scratch(&scratch);
    let tools = ToolSet::new(&ToolSetSpec::all()).unwrap();
    let link = ws.join("lnk");
    std::os::unix::fs::symlink(&inside, &link).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    // Relative and absolute targets both: `../outside` and the absolute path of `real`.
    let flips = {
        let (link, inside, stop) = (link.clone(), inside.clone(), stop.clone());
        std::thread::spawn(move || flipper(link, inside, PathBuf::from("../outside"), stop))
    };
    let mut escaped_reads = Vec::new();
    let mut calls = 0;
    for round in 0..rounds {
        let batch = [
            (
                "edit",
                json!({"path": "lnk/edit0.txt", "edits": [{"oldText": "token", "newText": "TOKEN"}]}),
            ),
            (
                "edit",
                json!({"path": "lnk/edit1.txt", "edits": [{"oldText": "token\n", "newText": format!("token\nround {round}\n")}]}),
            ),
            (
                "write",
                json!({"path": "lnk/write.txt", "content": format!("written {round}\n")}),
            ),
            (
                "write",
                json!({"path": format!("lnk/new{round}/deep/made.txt"), "content": "made\n"}),
            ),
            ("read", json!({"path": "lnk/read.txt"})),
            ("grep", json!({"pattern": "SECRET|inside", "path": "lnk"})),
            ("find", json!({"pattern": "*", "path": "lnk"})),
            ("ls", json!({"path": "lnk"})),
        ];
        let results = futures::future::join_all(
            batch
                .iter()
                .map(|(tool, args)| tools.call(tool, args.clone(), &ctx)),
        )
        .await;
        for ((tool, _), result) in batch.iter().zip(&results) {
            calls += 1;
            let shown = text(result);
            if shown.contains("OUTSIDE-SECRET") || shown.contains("only_outside") {
                escaped_reads.push(format!("{tool}: {shown}"));
            }
            // Bad input ends in a tool error (the sandbox's text, or the file's own), never in
            // a crashed call.
            assert!(
                !shown.contains("panicked") && !shown.contains("failed: JoinError"),
                "{tool}: {shown}"
            );
        }
    }
    stop.store(true, Ordering::Relaxed);
    let flips = flips.join().unwrap();
    let after = snapshot(&outside);
    Race {
        escaped_writes: before != after,
        escaped_reads,
        flips,
        calls,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flipped_symlink_never_leads_the_file_tools_outside() {
    let mut sandboxes = vec![Sandbox::detect(Some(Tier::Workspace))];
    if let Some(isolated) = isolated_or_skip("a_flipped_symlink_never_leads_the_file_tools_outside")
    {
        sandboxes.push(isolated);
    }
    for sandbox in &sandboxes {
        let race = race(sandbox, 300).await;
        assert!(
            race.flips > 100,
            "{}: the flipper barely ran",
            sandbox.name()
        );
        assert!(
            !race.escaped_writes,
            "{}: a file outside the workspace was written ({} calls, {} flips)",
            sandbox.name(),
            race.calls,
            race.flips
        );
        assert!(
            race.escaped_reads.is_empty(),
            "{}: read outside: {:?}",
            sandbox.name(),
            race.escaped_reads
        );
    }
    // The same race without confinement does lead outside: the test can fail.
    let mut open = race(&Sandbox::none(), 300).await;
    for _ in 0..5 {
        if open.escaped_writes && !open.escaped_reads.is_empty() {
            break;
        }
        open = race(&Sandbox::none(), 300).await;
    }
    assert!(
        open.escaped_writes && !open.escaped_reads.is_empty(),
        "the unconfined race never escaped ({} flips)",
        open.flips
    );
}

// ------------------------------------------------------------------------------------------------
// Keys in the harness's memory
// ------------------------------------------------------------------------------------------------

/// Every value a probe must not find; all start with [`PREFIX`], which the probe looks for.
const PREFIX: &str = "probe-secret-";

fn probe_secrets() -> Vec<(&'static str, String)> {
    let tail = format!("{:016x}", rand::random::<u64>());
    vec![
        // A provider key the run uses.
        ("ANTHROPIC_API_KEY", format!("{PREFIX}anthropic-{tail}")),
        // Secrets by name.
        ("MYSQL_PWD", format!("{PREFIX}mysql-{tail}")),
        ("SLACK_WEBHOOK", format!("{PREFIX}slack-{tail}")),
        // No secret by any rule: sealed away all the same.
        ("HF_HUB_SOMETHING", format!("{PREFIX}hfhub-{tail}")),
        // Credentials in the `--base-url` argument (`/proc/<pid>/cmdline` is readable by all).
        (BASE_URL_PASSWORD, format!("{PREFIX}password-{tail}")),
        (BASE_URL_KEY, format!("{PREFIX}urlkey-{tail}")),
    ]
}

/// The names in [`probe_secrets`] of the base URL's password and `?key=`, not variables.
const BASE_URL_PASSWORD: &str = "base URL password";
const BASE_URL_KEY: &str = "base URL key";

/// `base` (`http://host:port`) with the user-info password and the `key` of `secrets`.
fn with_credentials(base: &str, secrets: &[(&str, String)]) -> String {
    let of = |name: &str| &secrets.iter().find(|(n, _)| *n == name).unwrap().1;
    let rest = base.strip_prefix("http://").unwrap();
    format!(
        "http://gateway-user:{}@{rest}?key={}",
        of(BASE_URL_PASSWORD),
        of(BASE_URL_KEY)
    )
}

/// Looks for [`PREFIX`] (and its reverse) in the environment and readable memory of the
/// processes given (default: the parent, its parent and PID 1), and prints each try and each hit
/// with what follows it. Exits 1 on a hit.
const PROBE: &str = r#"
import os, sys
prefix = b"probe-" + b"secret-"
needles = [prefix, prefix[::-1]]
pids = sys.argv[1:] or sorted({str(os.getppid()), "1"} | {open("/proc/%d/stat" % os.getppid()).read().rsplit(")", 1)[1].split()[1]})
hits = 0
def look(pid, what, data):
    global hits
    for n in needles:
        i = data.find(n)
        while i >= 0:
            hits += 1
            around = data[max(0, i - 48): i + 48]
            print("HIT", pid, what, around.decode("latin-1"))
            i = data.find(n, i + 1)
for pid in pids:
    try:
        cmd = open("/proc/%s/cmdline" % pid, "rb").read().replace(b"\0", b" ")[:80]
    except Exception as e:
        cmd = repr(e).encode()
    print("PID", pid, cmd.decode("latin-1"))
    try:
        look(pid, "cmdline", open("/proc/%s/cmdline" % pid, "rb").read())
    except Exception as e:
        print("cmdline denied", pid, type(e).__name__)
    try:
        look(pid, "environ", open("/proc/%s/environ" % pid, "rb").read())
        print("environ readable", pid)
    except Exception as e:
        print("environ denied", pid, type(e).__name__)
    try:
        mem = open("/proc/%s/mem" % pid, "rb", 0)
        regions = 0
        for line in open("/proc/%s/maps" % pid):
            addr, perms = line.split()[:2]
            if not perms.startswith("r"):
                continue
            lo, hi = (int(x, 16) for x in addr.split("-"))
            if hi - lo > 256 * 1024 * 1024:
                continue
            try:
                mem.seek(lo)
                look(pid, "mem", mem.read(hi - lo))
                regions += 1
            except Exception:
                pass
        print("mem readable", pid, regions)
    except Exception as e:
        print("mem denied", pid, type(e).__name__)
sys.exit(1 if hits else 0)
"#;

/// A one-task suite under `root`: the fixture holds the probe; the check runs it.
fn probe_suite(root: &Path) -> PathBuf {
    let task = root.join("tasks/probe");
    std::fs::create_dir_all(task.join("repo")).unwrap();
    std::fs::write(task.join("repo/probe.py"), PROBE).unwrap();
    std::fs::write(
        task.join("task.yaml"),
        "id: probe\nprompt: look\nchecks:\n  - name: no secret readable\n    run: python3 probe.py\n",
    )
    .unwrap();
    root.join("tasks")
}

/// What a `harness run` of the probe suite saw, run as `uid` (the test's own when `None`).
struct Probed {
    /// The bash call's output, as the model got it.
    tool_output: String,
    stdout: String,
    stderr: String,
}

fn run_probe(tier: Tier, uid: Option<u32>, secrets: &[(&str, String)]) -> Probed {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let script = testkit::parse_script(
        "turns:\n  - tool_calls:\n      - name: bash\n        arguments: {command: 'python3 probe.py; echo probe-exit=$?'}\n  - text: done\n",
        "probe.yaml",
    )
    .unwrap();
    let server = runtime.block_on(testkit::start(script, ApiKind::AnthropicMessages));
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("place");
    std::fs::create_dir(&root).unwrap();
    let suite = probe_suite(&root);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
    cmd.arg("run")
        .arg(&suite)
        .args([
            "--cassette-mode",
            "live",
            "--model",
            "anthropic/scripted",
            "-q",
        ])
        .args(["--sandbox", tier.name()])
        .arg("--base-url")
        .arg(with_credentials(&server.base_url(), secrets))
        .arg("--reports")
        .arg(root.join("reports"))
        .current_dir(&root)
        .env_remove("GITHUB_STEP_SUMMARY")
        .envs(
            secrets
                .iter()
                .filter(|(k, _)| !k.contains(' '))
                .map(|(k, v)| (*k, v.as_str())),
        );
    if let Some(uid) = uid {
        // The harness itself as an unprivileged user: its folders are that user's.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        chown_tree(&root, uid);
        cmd.uid(uid).gid(uid).env("HOME", &root);
    }
    let out = cmd.output().unwrap();
    let requests = server.requests();
    let tool_output = requests
        .get(1)
        .map(|r| r.body.to_string())
        .unwrap_or_default();
    Probed {
        tool_output,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn chown_tree(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).unwrap();
    if path.is_dir() {
        for e in std::fs::read_dir(path).unwrap().flatten() {
            chown_tree(&e.path(), uid);
        }
    }
}

fn assert_no_secret(tier: Tier, who: &str, probed: &Probed, secrets: &[(&str, String)]) {
    let seen = format!(
        "{}\n{}\n{}",
        probed.tool_output, probed.stdout, probed.stderr
    );
    assert!(
        probed.tool_output.contains("probe-exit=0"),
        "{tier} as {who}: the probe did not run cleanly: {seen}"
    );
    for (name, value) in secrets {
        let reversed: String = value.chars().rev().collect();
        assert!(
            !seen.contains(value.as_str()) && !seen.contains(&reversed),
            "{tier} as {who}: {name} was read: {seen}"
        );
    }
    assert!(
        probed.stdout.contains("passed"),
        "{tier} as {who}: the check found a secret: {seen}"
    );
}

#[test]
fn no_key_is_readable_from_the_harness_in_any_tier() {
    let mut tiers = vec![Tier::None, Tier::Workspace];
    if isolated_or_skip("no_key_is_readable_from_the_harness_in_any_tier (isolated)").is_some() {
        tiers.push(Tier::Isolated);
    }
    let mut users: Vec<(&str, Option<u32>)> = vec![("this user", None)];
    if is_root() {
        users.push(("nobody", Some(65534)));
    } else {
        eprintln!("SKIPPED: the harness as another user needs root to start it so");
    }
    for tier in &tiers {
        for (who, uid) in &users {
            let secrets = probe_secrets();
            let probed = run_probe(*tier, *uid, &secrets);
            assert_no_secret(*tier, who, &probed, &secrets);
            // The probe looked at the harness (outside `isolated` it is the command's parent)
            // and was refused.
            if *tier != Tier::Isolated {
                assert!(
                    probed.tool_output.contains("environ denied")
                        && probed.tool_output.contains("mem denied"),
                    "{tier} as {who}: {}",
                    probed.tool_output
                );
                assert!(
                    probed.tool_output.contains("harness run"),
                    "{tier} as {who}: the harness was not among the probed: {}",
                    probed.tool_output
                );
            }
        }
    }
}

#[test]
fn the_probe_finds_a_secret_in_a_process_it_may_read() {
    // The same probe, same user, against a dumpable process holding a secret: found. So the
    // test above fails if the harness were readable.
    let secret = format!("{PREFIX}control-{:016x}", rand::random::<u64>());
    let in_argv = format!("{PREFIX}argv-{:016x}", rand::random::<u64>());
    // `sh -c 'sleep 30' NAME`: NAME is the shell's `$0`, in its command line.
    let mut target = Command::new("sh");
    target
        .args(["-c", "sleep 30", &in_argv])
        .env("CONTROL", &secret);
    let mut probe = Command::new("python3");
    if is_root() {
        target.uid(65534).gid(65534);
        probe.uid(65534).gid(65534);
    }
    let mut target = target.spawn().unwrap();
    let out = probe
        .arg("-c")
        .arg(PROBE)
        .arg(target.id().to_string())
        .current_dir("/")
        .output()
        .unwrap();
    let _ = target.kill();
    let _ = target.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains(&secret), "{stdout}");
    assert!(stdout.contains("mem readable"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("HIT") && l.contains(" cmdline ")),
        "{stdout}"
    );
}

// ------------------------------------------------------------------------------------------------
// A root harness's commands
// ------------------------------------------------------------------------------------------------

#[test]
fn a_root_harness_runs_commands_as_nobody_outside_isolated() {
    if !is_root() {
        eprintln!("SKIPPED: a_root_harness_runs_commands_as_nobody_outside_isolated needs root");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for tier in [Tier::Workspace, Tier::None] {
        // bash sees itself as nobody, can change a fixture file and one the `write` tool made
        // (in a folder the tool made), and can use its HOME and TMPDIR.
        let script = testkit::parse_script(
            "turns:\n  - tool_calls:\n      - name: write\n        arguments: {path: made/by/tool.txt, content: \"tool\\n\"}\n  - tool_calls:\n      - name: bash\n        arguments: {command: 'id -u; echo more >> made/by/tool.txt && echo appended; echo x >> x.txt && echo fixture-ok; touch $HOME/h $TMPDIR/t && echo dirs-ok; mkdir made/by/sub && echo mkdir-ok; grep -E \"^(Uid|Gid|Groups|CapEff)\" /proc/self/status | tr -s \"\\t \" \" \" | tr \"\\n\" \";\"'}\n  - text: done\n",
            "nobody.yaml",
        )
        .unwrap();
        let server = runtime.block_on(testkit::start(script, ApiKind::AnthropicMessages));
        let dir = tempfile::tempdir().unwrap();
        let task = dir.path().join("tasks/t");
        std::fs::create_dir_all(task.join("repo")).unwrap();
        std::fs::write(task.join("repo/x.txt"), "x\n").unwrap();
        std::fs::write(
            task.join("task.yaml"),
            "id: t\nprompt: p\nchecks:\n  - run: 'test \"$(id -u)\" = 65534'\n",
        )
        .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_harness"))
            .args(["run", "tasks", "--cassette-mode", "live", "-q"])
            .args(["--model", "anthropic/scripted", "--sandbox", tier.name()])
            .arg("--base-url")
            .arg(server.base_url())
            .current_dir(dir.path())
            .env(
                "ANTHROPIC_API_KEY",
                "sk-ant-api03-fakefakefakefakefake0123456789",
            )
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let requests = server.requests();
        let seen = requests
            .get(2)
            .map(|r| r.body.to_string())
            .unwrap_or_default();
        // The output as the tool result carries it (the command's own text has no newlines).
        assert!(
            seen.contains("65534\\nappended\\nfixture-ok\\ndirs-ok\\nmkdir-ok"),
            "{tier}: {seen}"
        );
        // Every id nobody's, saved ones too (no way back to root), no group, no capability.
        assert!(
            seen.contains(
                "Uid: 65534 65534 65534 65534;Gid: 65534 65534 65534 65534;Groups: ;CapEff: 0000000000000000;"
            ),
            "{tier}: {seen}"
        );
        assert!(stdout.contains("passed"), "{tier}: {stdout}");
    }
}

// ------------------------------------------------------------------------------------------------
// One sandbox per run
// ------------------------------------------------------------------------------------------------

/// A run's tool context under `sandbox`: a fresh workspace (canonical) and scratch folders, held
/// by the folder and the scratch returned.
fn run_context(sandbox: &Sandbox) -> (tempfile::TempDir, PathBuf, Scratch, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap();
    let scratch = Scratch::new().unwrap();
    let mut ctx = ToolContext::new(&ws);
    ctx.temp_dir = scratch.logs().to_path_buf();
    ctx.jail = sandbox.jail(&ws).with_scratch(&scratch);
    (dir, ws, scratch, ctx)
}

/// The host pid of the process whose command line is `argv` (joined by spaces), waiting for it
/// up to 5 s.
fn host_pid_of(argv: &str) -> Option<i32> {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while std::time::Instant::now() < until {
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
                continue;
            };
            let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline)
                .replace('\0', " ")
                .trim_end()
                == argv
            {
                return Some(pid);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    None
}

fn parent_of(pid: i32) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    stat.rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_whose_supervisor_cannot_clean_in_time_is_killed_whole_and_replaced() {
    // What a fork bomb does to the supervisor (tens of thousands of processes in its sandbox
    // leave it almost no CPU), done here by stopping it: a timed-out call must still end, and
    // the run's later commands get a new sandbox.
    let Some(sandbox) = isolated_or_skip(
        "a_sandbox_whose_supervisor_cannot_clean_in_time_is_killed_whole_and_replaced",
    ) else {
        return;
    };
    let (_dir, ws, _scratch, ctx) = run_context(&sandbox);
    let tools = Arc::new(ToolSet::new(&ToolSetSpec::all()).unwrap());
    let ctx = Arc::new(ctx);
    let unique = format!("31.{}", rand::random::<u32>());
    let call = {
        let (tools, ctx, unique) = (tools.clone(), ctx.clone(), unique.clone());
        tokio::spawn(async move {
            let args =
                json!({"command": format!("echo $$ > /tmp/pid; sleep {unique}"), "timeout": 1});
            let started = std::time::Instant::now();
            let result = tools.call("bash", args, &ctx).await;
            (text(&result), started.elapsed())
        })
    };
    let sleeper = tokio::task::spawn_blocking(move || host_pid_of(&format!("sleep {unique}")))
        .await
        .unwrap()
        .expect("the command started");
    let supervisor = parent_of(sleeper);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(supervisor),
        nix::sys::signal::Signal::SIGSTOP,
    )
    .unwrap();
    let (said, took) = tokio::time::timeout(std::time::Duration::from_secs(60), call)
        .await
        .expect("the timed-out call ended")
        .unwrap();
    assert!(
        said.ends_with("Command timed out after 1 seconds"),
        "{said}"
    );
    // The timeout, the wait for the killed command, the supervisor's grace: not for good.
    assert!(took < std::time::Duration::from_secs(15), "{took:?}");
    // The stopped supervisor was killed, and its sandbox with it.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    for pid in [supervisor, sleeper] {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(
            state.is_empty()
                || state
                    .rsplit_once(')')
                    .unwrap()
                    .1
                    .trim_start()
                    .starts_with('Z'),
            "{pid} lives on: {state}"
        );
    }
    // A new sandbox for the rest of the run, with the run's folders: the same workspace, the
    // same private /tmp (the old sandbox's command wrote its pid there).
    std::fs::write(ws.join("kept.txt"), "kept\n").unwrap();
    let again = text(
        &tools
            .call(
                "bash",
                json!({"command": "cat kept.txt; test -s /tmp/pid && echo same-tmp"}),
                &ctx,
            )
            .await,
    );
    assert_eq!(again, "kept\nsame-tmp\n");
}

/// Lowers the sandbox's task limit to 30 (as a command may), forks sleepers until a fork fails,
/// and prints how many it got and the hard limit it found.
const FORK_UNTIL_REFUSED: &str = r#"
import os, resource, time
hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]
resource.setrlimit(resource.RLIMIT_NPROC, (30, hard))
kids = []
try:
    for i in range(100):
        pid = os.fork()
        if pid == 0:
            time.sleep(10)
            os._exit(0)
        kids.append(pid)
    print("forked", len(kids))
except OSError as e:
    print("refused after", len(kids))
for k in kids:
    os.kill(k, 9)
print("hard", hard)
"#;

#[test]
fn a_non_root_harness_s_sandbox_caps_its_tasks_and_counts_them_alone() {
    // A fork bomb stops at the cap instead of filling the machine's process table. The kernel
    // counts a user's tasks per user namespace: the sandbox's own, from zero, whatever else the
    // user runs. Root's are never capped (the kernel exempts root's user), so the test runs the
    // harness as nobody when it is root.
    if isolated_or_skip("a_non_root_harness_s_sandbox_caps_its_tasks_and_counts_them_alone")
        .is_none()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::write(dir.path().join("fork.py"), FORK_UNTIL_REFUSED).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
    cmd.args(["tool", "bash", "--sandbox", "isolated", "--args"])
        .arg(json!({"command": "python3 fork.py"}).to_string())
        .current_dir(dir.path());
    if is_root() {
        cmd.uid(65534).gid(65534).env("HOME", dir.path());
    }
    let out = cmd.output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    let warned = String::from_utf8_lossy(&out.stderr);
    if warned.contains("falling back") {
        super::browser::skip(
            "HARNESS_REQUIRE_SANDBOX",
            &format!("a_non_root_harness_s_sandbox_caps_its_tasks_and_counts_them_alone: {warned}"),
        );
        return;
    }
    let cores = std::thread::available_parallelism().unwrap().get() as u64;
    let cap = harness::sandbox::supervisor::MIN_TASKS
        .max(harness::sandbox::supervisor::TASKS_PER_CORE * cores);
    assert!(said.contains(&format!("hard {cap}")), "{said}");
    // 30 tasks in all: the supervisor, bash and python among them.
    let got: usize = said
        .split("refused after ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no fork was refused: {said}"));
    assert!((20..30).contains(&got), "{said}");
}

#[tokio::test]
async fn a_runs_commands_share_one_sandbox_whose_supervisor_they_cannot_touch() {
    let Some(sandbox) =
        isolated_or_skip("a_runs_commands_share_one_sandbox_whose_supervisor_they_cannot_touch")
    else {
        return;
    };
    let (_dir, _ws, _scratch, ctx) = run_context(&sandbox);
    let tools = ToolSet::new(&ToolSetSpec::all()).unwrap();
    let bash = |command: &str| tools.call("bash", json!({"command": command}), &ctx);
    // PID 1 is the supervisor, the same for every command of the run.
    let first = text(&bash("tr '\\0' ' ' < /proc/1/cmdline; echo; echo $$ > /tmp/first-pid").await);
    // The sandbox maker's clone, or the binary bubblewrap started.
    assert!(
        first.contains("__sandbox-zygote") || first.contains("__sandbox-supervisor"),
        "{first}"
    );
    let second = bash("tr '\\0' ' ' < /proc/1/cmdline; echo; cat /tmp/first-pid; echo $$").await;
    let lines: Vec<String> = text(&second).lines().map(str::to_owned).collect();
    assert_eq!(lines[0], first.lines().next().unwrap());
    let (a, b): (u32, u32) = (lines[1].parse().unwrap(), lines[2].parse().unwrap());
    assert!(
        b > a,
        "the second command is later in the same namespace: {lines:?}"
    );
    // Neither signals nor /proc reach it, and the sandbox goes on.
    let probe = bash(
        "kill -9 1; kill -STOP 1; cat /proc/1/environ >/dev/null 2>&1 && echo environ-read || echo environ-denied; \
         readlink /proc/1/fd/0 >/dev/null 2>&1 && echo fd-read || echo fd-denied",
    )
    .await;
    let shown = text(&probe);
    assert!(
        shown.contains("environ-denied") && shown.contains("fd-denied"),
        "{shown}"
    );
    let after = bash("echo still-here").await;
    assert_eq!(text(&after), "still-here\n");
    // A timed-out command is killed in the sandbox, and the next one runs.
    let slow = tools
        .call("bash", json!({"command": "sleep 30", "timeout": 0.3}), &ctx)
        .await;
    assert!(text(&slow).contains("Command timed out"), "{}", text(&slow));
    let left = bash("grep -lx sleep /proc/[0-9]*/comm 2>/dev/null | wc -l").await;
    assert_eq!(text(&left).trim(), "0");
    // When the run ends (its jail goes), everything in the sandbox dies with it.
    let mark = format!("1000.{}", rand::random::<u32>());
    let started = bash(&format!("(setsid sleep {mark} &) ; echo ok")).await;
    assert_eq!(text(&started), "ok\n");
    drop(ctx);
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let left: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&mark))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn the_supervisor_refuses_to_run_outside_a_sandbox() {
    // Started by hand on the host it would see every process: it must do nothing. (Its socket
    // stays open, so without the refusal it would wait, and be killed here, not kill.)
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg(harness::sandbox::supervisor::ARG)
        .stdin(std::process::Stdio::from(std::os::fd::OwnedFd::from(
            theirs,
        )))
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    drop(ours);
    let status = status.expect("the supervisor did not refuse at once");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("refusing to run"), "{stderr}");
}

#[test]
fn the_sandbox_starts_once_per_run() {
    // A whole run of five bash calls and a check: one bubblewrap, one supervisor.
    let Some(_sandbox) = isolated_or_skip("the_sandbox_starts_once_per_run") else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let call = "  - tool_calls:\n      - name: bash\n        arguments: {command: 'cut -d\" \" -f22 /proc/1/stat >> /tmp/starts'}\n";
    let script = testkit::parse_script(
        &format!("turns:\n{}  - text: done\n", call.repeat(5)),
        "once.yaml",
    )
    .unwrap();
    let server = runtime.block_on(testkit::start(script, ApiKind::AnthropicMessages));
    let dir = tempfile::tempdir().unwrap();
    let task = dir.path().join("tasks/t");
    std::fs::create_dir_all(task.join("repo")).unwrap();
    std::fs::write(task.join("repo/x.txt"), "x\n").unwrap();
    // The check sees the five start times of PID 1 equal: one supervisor for the whole run.
    std::fs::write(
        task.join("task.yaml"),
        "id: t\nprompt: p\nchecks:\n  - run: 'test $(sort -u /tmp/starts | wc -l) = 1 && test $(wc -l < /tmp/starts) = 5'\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["run", "tasks", "--cassette-mode", "live", "-q"])
        .args(["--model", "anthropic/scripted", "--sandbox", "isolated"])
        .arg("--base-url")
        .arg(server.base_url())
        .current_dir(dir.path())
        .env(
            "ANTHROPIC_API_KEY",
            "sk-ant-api03-fakefakefakefakefake0123456789",
        )
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn a_root_harness_s_file_tools_act_for_nobody_and_refuse_its_hard_links_to_root_s_files() {
    // Where `fs.protected_hardlinks` is 0, `nobody` may link any file of the file system into
    // the workspace; the file tools, running as root, must not read or write through such a
    // link. The test makes the link itself, as root, as such a command could.
    if !is_root() {
        eprintln!(
            "SKIPPED: a_root_harness_s_file_tools_act_for_nobody_and_refuse_its_hard_links_to_root_s_files needs root"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let ws = root.join("work");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("mine.txt"), "mine\n").unwrap();
    let secret = root.join("shadow");
    std::fs::write(&secret, "root-only hunter2\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let sandbox = Sandbox::detect(Some(Tier::Workspace)).with_unprivileged_commands();
    let mut ctx = ToolContext::new(&ws);
    ctx.jail = sandbox.jail(&ws);
    std::fs::hard_link(&secret, ws.join("link.txt")).unwrap();
    // A second link to a file nobody owns is nobody's to use.
    std::fs::hard_link(ws.join("mine.txt"), ws.join("mine2.txt")).unwrap();
    let tools = ToolSet::new(&ToolSetSpec::all()).unwrap();
    let call = |name: &'static str, args: serde_json::Value| tools.call(name, args, &ctx);
    for (name, args) in [
        ("read", json!({"path": "link.txt"})),
        ("write", json!({"path": "link.txt", "content": "pwned\n"})),
        (
            "edit",
            json!({"path": "link.txt", "edits": [{"oldText": "hunter2", "newText": "x"}]}),
        ),
        ("grep", json!({"pattern": "hunter2", "path": "link.txt"})),
    ] {
        let out = text(&call(name, args).await);
        assert!(
            out.contains("is a hard link to a file the agent's commands do not own"),
            "{name}: {out}"
        );
        assert!(
            !out.contains("hunter2\n") || name == "edit",
            "{name}: {out}"
        );
    }
    // A folder's search skips the link's content with the same refusal.
    let out = text(&call("grep", json!({"pattern": "hunter2"})).await);
    assert!(!out.contains("link.txt:1:"), "{out}");
    assert!(out.contains("hard link"), "{out}");
    let meta = std::fs::metadata(&secret).unwrap();
    assert_eq!(
        std::fs::read_to_string(&secret).unwrap(),
        "root-only hunter2\n"
    );
    assert_eq!((meta.uid(), meta.mode() & 0o777), (0, 0o600));
    // nobody's own links work, and what the tools make is nobody's.
    let out = text(
        &call(
            "write",
            json!({"path": "mine2.txt", "content": "changed\n"}),
        )
        .await,
    );
    assert!(out.starts_with("Successfully wrote"), "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.join("mine.txt")).unwrap(),
        "changed\n"
    );
    let out = text(&call("write", json!({"path": "new/made.txt", "content": "new\n"})).await);
    assert!(out.starts_with("Successfully wrote"), "{out}");
    assert_eq!(
        std::fs::metadata(ws.join("new/made.txt")).unwrap().uid(),
        65534
    );

    // Unconfined (`none`), the file tools reach anything, but a file that was there keeps its
    // owner; only what they make is handed to nobody.
    let sandbox = Sandbox::detect(Some(Tier::None)).with_unprivileged_commands();
    let mut ctx = ToolContext::new(&ws);
    ctx.jail = sandbox.jail(&ws);
    let outside = root.join("outside.txt");
    std::fs::write(&outside, "root's\n").unwrap();
    for (path, uid) in [(&outside, 0), (&root.join("made-outside.txt"), 65534)] {
        let args = json!({"path": path, "content": "written\n"});
        let out = text(&tools.call("write", args, &ctx).await);
        assert!(out.starts_with("Successfully wrote"), "{out}");
        assert_eq!(std::fs::read_to_string(path).unwrap(), "written\n");
        assert_eq!(
            std::fs::metadata(path).unwrap().uid(),
            uid,
            "{}",
            path.display()
        );
    }
}

#[test]
fn handed_over_workspaces_keep_their_modes() {
    // The fixture's modes survive the handover to nobody (only owners change).
    if !is_root() {
        eprintln!("SKIPPED: handed_over_workspaces_keep_their_modes needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("work");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("run.sh"), "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(ws.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let sandbox = Sandbox::detect(Some(Tier::Workspace)).with_unprivileged_commands();
    let _jail = sandbox.jail(&ws);
    let meta = std::fs::metadata(ws.join("run.sh")).unwrap();
    assert_eq!(meta.uid(), 65534);
    assert_eq!(meta.mode() & 0o777, 0o755);
}
