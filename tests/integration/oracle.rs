//! The oracle through the binary: `harness run --model oracle/reference` applies a task's
//! reference solution with the agent's real tools (recorded like any model's run),
//! `oracle/none` touches nothing, and `harness validate --oracle` lists every task whose
//! reference fails, whose checks pass untouched, or that has no reference, with exit 1; a
//! reference solution that cannot be applied safely is refused at load with its path named.
//!
//! The task folders are small bash fixtures written here.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use harness::record::{Outcome, RUN_FILE_NAME, RunFile};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn make_executable(path: &Path) {
    let mut perms = std::fs::metadata(path).unwrap().permissions();
    perms.set_mode(0o755);
    std::fs::set_permissions(path, perms).unwrap();
}

/// A task whose fixture greets wrongly (`helo`); its checks want `hello` and an executable
/// `bin/check.sh`, which the fix adds.
fn greet_task(suite: &Path, id: &str) -> PathBuf {
    let dir = suite.join(id);
    write(
        &dir.join("task.yaml"),
        &format!(
            "id: {id}\nprompt: Make greet.sh print hello.\nchecks:\n  - name: greets\n    run: test \"$(bash greet.sh)\" = hello\n  - file: greet.sh\n    contains: hello\nlimits: {{turns: 5, wall_seconds: 60}}\n"
        ),
    );
    write(&dir.join("repo/greet.sh"), "echo helo\n");
    dir
}

/// `greet_task` with a reference solution folder: the fixed script and a new executable one.
fn greet_with_folder(suite: &Path, id: &str) -> PathBuf {
    let dir = greet_task(suite, id);
    write(&dir.join("solution/greet.sh"), "echo hello\n");
    write(
        &dir.join("solution/bin/check.sh"),
        "#!/bin/sh\nbash greet.sh\n",
    );
    make_executable(&dir.join("solution/bin/check.sh"));
    let yaml = std::fs::read_to_string(dir.join("task.yaml")).unwrap();
    write(
        &dir.join("task.yaml"),
        &yaml.replace(
            "limits:",
            "  - name: check script is executable\n    run: test -x bin/check.sh && test \"$(bin/check.sh)\" = hello\nlimits:",
        ),
    );
    dir
}

fn harness(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env_remove("CI")
        .env_remove("HARNESS_CASSETTE_MODE")
        .output()
        .unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The run file of `task`'s run by `oracle/model` in the only report folder under `reports`.
fn run_file(reports: &Path, task: &str, model: &str) -> RunFile {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(reports)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    let path = folders
        .remove(0)
        .join(format!("runs/{task}--oracle--{model}--e1"))
        .join(RUN_FILE_NAME);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn the_reference_passes_through_real_tool_calls_and_none_fails_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tasks");
    greet_with_folder(&suite, "greet");
    let out = harness(
        &[
            "run",
            "tasks",
            "--model",
            "oracle/reference",
            "--model",
            "oracle/none",
            "--jobs",
            "2",
        ],
        dir.path(),
    );
    let (stdout, stderr) = text(&out);
    // The untouched run fails: the suite does not pass.
    assert_eq!(out.status.code(), Some(100), "{stdout}\n{stderr}");

    let reference = run_file(&dir.path().join("reports"), "greet", "reference");
    assert_eq!(
        reference.record.outcome,
        Outcome::Passed,
        "{:?}",
        reference.record
    );
    // Turn 1 writes both files, turn 2 makes the new script executable, turn 3 is words.
    let calls: Vec<(u32, &str, String)> = reference
        .tool_calls
        .iter()
        .map(|c| {
            let what = c.call.arguments["path"]
                .as_str()
                .or(c.call.arguments["command"].as_str())
                .unwrap()
                .to_owned();
            (c.turn, c.call.name.as_str(), what)
        })
        .collect();
    assert_eq!(
        calls,
        [
            (1, "write", "bin/check.sh".to_owned()),
            (1, "write", "greet.sh".to_owned()),
            (2, "bash", "chmod +x -- 'bin/check.sh'".to_owned()),
        ]
    );
    assert!(reference.tool_calls.iter().all(|c| !c.result.is_error));
    assert_eq!(reference.record.turns, 3);
    assert_eq!(
        reference.record.tokens.input + reference.record.tokens.output,
        0
    );
    assert_eq!(reference.record.cost, Some(0.0));
    assert!(reference.diff.contains("+echo hello"), "{}", reference.diff);
    assert!(
        reference.diff.contains("bin/check.sh"),
        "{}",
        reference.diff
    );

    let none = run_file(&dir.path().join("reports"), "greet", "none");
    assert_eq!(none.record.outcome, Outcome::Failed, "{:?}", none.record);
    assert!(none.tool_calls.is_empty());
    assert_eq!(none.record.turns, 1);
    assert_eq!(none.diff, "");
    // Nothing was recorded: the oracle needs no cassette.
    assert!(!dir.path().join("cassettes").exists());
}

#[test]
fn a_script_reference_runs_in_one_bash_call() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tasks");
    let task = greet_task(&suite, "greet-sh");
    write(
        &task.join("solution.sh"),
        "set -eu\nsed -i 's/helo/hello/' greet.sh\n",
    );
    let out = harness(
        &["run", "tasks", "--model", "oracle/reference", "--record"],
        dir.path(),
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let run = run_file(&dir.path().join("reports"), "greet-sh", "reference");
    assert_eq!(run.record.outcome, Outcome::Passed);
    assert_eq!(run.tool_calls.len(), 1);
    assert_eq!(run.tool_calls[0].call.name, "bash");
    assert_eq!(
        run.tool_calls[0].call.arguments["command"],
        "set -eu\nsed -i 's/helo/hello/' greet.sh\n"
    );
    // Even when asked to record, no cassette is written, and the run says why.
    assert!(!dir.path().join("cassettes").exists());
    assert!(
        run.record
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("no cassette for oracle/reference")),
        "{:?}",
        run.record.detail
    );
}

#[test]
fn validate_oracle_passes_a_sound_suite() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tasks");
    greet_with_folder(&suite, "a-folder");
    let task = greet_task(&suite, "b-script");
    write(
        &task.join("solution.sh"),
        "sed -i 's/helo/hello/' greet.sh\n",
    );
    let out = harness(
        &["validate", "--oracle", "tasks", "--jobs", "2"],
        dir.path(),
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(
        stdout,
        "task      reference (must pass)  untouched (must fail)  verdict\n\
         a-folder  pass                   fail                   ok\n\
         b-script  pass                   fail                   ok\n\
         2 task(s) hold: every reference solution passes its checks, and every untouched \
         fixture fails them\n"
    );
    assert!(!stderr.contains("error"), "{stderr}");
}

#[test]
fn validate_oracle_lists_every_unsound_task_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tasks");
    greet_with_folder(&suite, "good");
    // A check that cannot fail.
    let trivial = suite.join("trivial");
    write(
        &trivial.join("task.yaml"),
        "id: trivial\nprompt: Anything.\nchecks:\n  - run: \"true\"\n",
    );
    write(&trivial.join("repo/a.txt"), "a\n");
    write(&trivial.join("solution/a.txt"), "b\n");
    // A reference that does not fix the task.
    let broken = greet_task(&suite, "broken");
    write(&broken.join("solution/greet.sh"), "echo hullo\n");
    // No reference at all.
    greet_task(&suite, "unsolved");

    let out = harness(
        &["validate", "--oracle", "tasks", "--jobs", "2"],
        dir.path(),
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert_eq!(
        stdout,
        "task      reference (must pass)  untouched (must fail)  verdict\n\
         broken    fail                   fail                   PROBLEM\n\
         good      pass                   fail                   ok\n\
         trivial   pass                   pass                   PROBLEM\n\
         unsolved  missing                fail                   PROBLEM\n"
    );
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("error:") || l.starts_with("hint:"))
        .collect();
    // Paths as given on the command line.
    let tasks = "tasks";
    assert!(
        errors[0].starts_with(
            "error: task `broken`: the reference solution does not pass (failed): 2 of 2 checks failed; first 'greets': exit 1"
        ),
        "{stderr}"
    );
    assert!(
        errors[1].contains("--task broken --model oracle/reference --keep-workspaces"),
        "{stderr}"
    );
    assert_eq!(
        errors[2..],
        [
            "error: task `trivial`: the checks pass on the untouched fixture, so every model passes the task".to_owned(),
            format!("hint: make at least one check of {tasks}/trivial/task.yaml fail until the task is solved (a test the fixture fails, a file or text the fix adds)"),
            "error: task `unsolved`: no reference solution".to_owned(),
            format!("hint: add {tasks}/unsolved/solution (files laid over repo/) or {tasks}/unsolved/solution.sh"),
            "error: 3 of 4 task(s) do not hold (see above)".to_owned(),
        ]
    );
}

#[test]
fn unsafe_or_unusable_references_are_refused_with_their_path_and_the_rest_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tasks");
    greet_with_folder(&suite, "good");
    let outside = dir.path().join("outside.txt");
    write(&outside, "secret\n");
    // A symlink out of the task folder inside solution/.
    let link = greet_task(&suite, "link");
    write(&link.join("solution/greet.sh"), "echo hello\n");
    std::os::unix::fs::symlink(&outside, link.join("solution/leak.txt")).unwrap();
    // solution/ itself a symlink.
    let linked_dir = greet_task(&suite, "linked-dir");
    std::os::unix::fs::symlink(dir.path(), linked_dir.join("solution")).unwrap();
    // A solution file where the fixture has a symlink leading out of the fixture.
    let through = greet_task(&suite, "through");
    std::os::unix::fs::symlink("/tmp", through.join("repo/tmp")).unwrap();
    // (a fixture symlink leading out is itself refused; the solution is refused with it)
    write(&through.join("solution/tmp/x.txt"), "x\n");
    // A binary file.
    let binary = greet_task(&suite, "binary");
    std::fs::create_dir_all(binary.join("solution")).unwrap();
    std::fs::write(binary.join("solution/logo.png"), [0x89, b'P', 0xff, 0xfe]).unwrap();
    // Both kinds.
    let both = greet_task(&suite, "both");
    write(&both.join("solution/greet.sh"), "echo hello\n");
    write(&both.join("solution.sh"), "true\n");
    // A file where the fixture has a folder.
    let onto_dir = greet_task(&suite, "onto-dir");
    write(&onto_dir.join("repo/lib/a.sh"), "\n");
    write(&onto_dir.join("solution/lib"), "\n");

    let out = harness(&["validate", "tasks"], dir.path());
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let tasks = "tasks";
    for (path, why) in [
        (
            "link/solution/leak.txt",
            "a symlink cannot be a reference file",
        ),
        ("linked-dir/solution", "not a folder (a symlink or a file)"),
        ("binary/solution/logo.png", "not UTF-8 text"),
        ("both", "both solution/ and solution.sh"),
        (
            "onto-dir/solution/lib",
            "repo/lib is a folder in the fixture",
        ),
    ] {
        assert!(
            stderr.contains(&format!("{tasks}/{path}: {why}")),
            "{path}: {why}\n{stderr}"
        );
    }
    // The fixture's own link out is refused, and the solution file that would go through it.
    assert!(
        stderr.contains(&format!(
            "{tasks}/through/solution/tmp/x.txt: repo/tmp/x.txt leads outside the fixture \
             through a symlink"
        )),
        "{stderr}"
    );
    assert!(
        stderr.starts_with("7 problems in the task suite"),
        "{stderr}"
    );

    // With --oracle the valid tasks still run; the invalid ones are named, exit 2.
    let out = harness(&["validate", "--oracle", "tasks"], dir.path());
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert_eq!(
        stdout,
        "task  reference (must pass)  untouched (must fail)  verdict\n\
         good  pass                   fail                   ok\n\
         1 task(s) hold: every reference solution passes its checks, and every untouched \
         fixture fails them\n"
    );
    assert!(
        stderr.contains("error: 7 problem(s) in the task suite (see above); the valid tasks ran"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("{tasks}/binary/solution/logo.png")),
        "{stderr}"
    );
}

#[test]
fn an_unknown_oracle_model_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    greet_with_folder(&dir.path().join("tasks"), "greet");
    let out = harness(&["run", "tasks", "--model", "oracle/gold"], dir.path());
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "error: `oracle/gold` is not an oracle model: use `oracle/reference` (the task's \
             reference solution) or `oracle/none` (touches nothing)"
        ),
        "{stderr}"
    );
    assert!(!dir.path().join("reports").exists());
}

#[test]
fn a_reference_run_on_a_task_without_one_is_an_error_run_saying_what_to_add() {
    let dir = tempfile::tempdir().unwrap();
    greet_task(&dir.path().join("tasks"), "unsolved");
    let out = harness(&["run", "tasks", "--model", "oracle/reference"], dir.path());
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(100), "{stdout}\n{stderr}");
    let run = run_file(&dir.path().join("reports"), "unsolved", "reference");
    assert_eq!(run.record.outcome, Outcome::Error);
    assert_eq!(
        run.record.error_kind,
        Some(harness::record::ErrorKind::Setup)
    );
    assert!(
        run.record.reason.contains(
            "task `unsolved` has no reference solution for oracle/reference: add \
             tasks/unsolved/solution (files laid over repo/) or tasks/unsolved/solution.sh"
        ),
        "{}",
        run.record.reason
    );
    assert!(run.tool_calls.is_empty());
}
