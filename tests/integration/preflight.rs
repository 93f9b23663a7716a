//! `harness run` checks what it was given before the first run starts: one `error:` and one
//! `hint:` line per problem, exit 2, no run made, no report written. And a closed stdout or
//! stderr (`harness run 2>&1 | head`) ends the command quietly instead of panicking.

use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{Command, Stdio};

use harness::testkit;

/// A project folder with the trivial task (no cassette): `tasks/load-trivial`.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    testkit::write_trivial_task(&dir.path().join("tasks")).unwrap();
    dir
}

/// A project folder with the shipped task `id` and its cassettes.
fn shipped(id: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for folder in ["tasks", "cassettes"] {
        std::fs::create_dir_all(dir.path().join(folder)).unwrap();
        let status = Command::new("cp")
            .arg("-a")
            .arg(root.join(folder).join(id))
            .arg(dir.path().join(folder))
            .status()
            .unwrap();
        assert!(status.success());
    }
    dir
}

/// Runs the binary in `cwd` with no key, CI or mode variable set; returns (code, stdout, stderr).
fn harness(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_harness"));
    cmd.args(args).current_dir(cwd);
    for var in [
        "CI",
        "HARNESS_CASSETTE_MODE",
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `harness run tasks ARGS` and checks it stopped before any run with exactly `expected`
/// on stderr.
fn refused(args: &[&str], config: Option<&str>, expected: &str) {
    let dir = project();
    if let Some(yaml) = config {
        std::fs::write(dir.path().join("tasks/harness.yaml"), yaml).unwrap();
    }
    let mut all = vec!["run", "tasks"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = harness(dir.path(), &all, &[]);
    assert_eq!(code, 2, "{args:?}\nstdout: {stdout}\nstderr: {stderr}");
    assert_eq!(stderr, expected, "{args:?}");
    assert_eq!(stdout, "", "no summary: nothing ran");
    assert!(
        !dir.path().join("reports").exists(),
        "{args:?}: no report folder, no run started"
    );
}

#[test]
fn jobs_and_epochs_must_be_at_least_one() {
    refused(
        &["--jobs", "0"],
        None,
        "error: `--jobs 0` would run nothing\n\
         hint: pass `--jobs N` with N from 1 to 4096, or leave it out (one per core)\n",
    );
    refused(
        &["--jobs", "18446744073709551615"],
        None,
        "error: `--jobs 18446744073709551615` is more runs at once than the harness allows (4096)\n\
         hint: pass `--jobs N` with N from 1 to 4096\n",
    );
    refused(
        &["--epochs", "0"],
        None,
        "error: `--epochs 0` is out of range\n\
         hint: pass `--epochs N` with N from 1 to 10000 (default 1)\n",
    );
}

#[test]
fn max_cost_must_be_a_finite_amount() {
    for value in ["-1", "NaN", "inf"] {
        let flag = format!("--max-cost={value}");
        refused(
            &[&flag],
            None,
            &format!(
                "error: `--max-cost {}` is not an amount of dollars\n\
                 hint: pass a finite amount of 0 or more, for example `--max-cost 5`\n",
                value.parse::<f64>().unwrap()
            ),
        );
    }
}

#[test]
fn an_unknown_edit_strategy_is_named_with_the_known_ones() {
    let known = harness::tools::edit::strategy_names().join(", ");
    let hint =
        format!("hint: valid strategies: {known}; combine them with chain:a,b,c (all but pi)\n");
    refused(
        &["--edit-strategy", "fuzzy-ish"],
        None,
        &format!("error: unknown edit strategy `fuzzy-ish`\n{hint}"),
    );
    // A malformed chain or threshold is refused the same way, before anything runs.
    for bad in ["chain:exact,nope", "similarity:1.5"] {
        let dir = project();
        let (code, _, stderr) = harness(dir.path(), &["run", "tasks", "--edit-strategy", bad], &[]);
        assert_eq!(code, 2, "{bad}: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.ends_with(&hint),
            "{bad}: {stderr}"
        );
        assert!(!dir.path().join("reports").exists());
    }
}

#[test]
fn an_unknown_provider_is_refused_once_not_per_run() {
    let known: Vec<String> = harness::providers::catalog::Catalog::default()
        .providers
        .into_iter()
        .map(|p| p.name)
        .collect();
    refused(
        &["--model", "nope/m1", "--model", "nope/m2", "--epochs", "3"],
        None,
        &format!(
            "error: unknown provider `nope`; known providers: {}\n\
             hint: use one of the known providers, or define it under `providers:` in harness.yaml (see the README's provider section)\n",
            known.join(", ")
        ),
    );
}

#[test]
fn a_missing_key_is_refused_when_a_run_would_call_the_provider() {
    let hint = "hint: export ANTHROPIC_API_KEY (it never reaches the agent, reports or cassettes), \
                or run from the cassettes with `--cassette-mode replay`\n";
    refused(
        &["--record", "--model", "anthropic/claude-x", "--epochs", "2"],
        None,
        &format!(
            "error: no API key for provider `anthropic`: set ANTHROPIC_API_KEY (2 runs call the provider in record mode)\n{hint}"
        ),
    );
    refused(
        &["--cassette-mode", "live", "--model", "google/gemini-x"],
        None,
        "error: no API key for provider `google`: set GEMINI_API_KEY or GOOGLE_API_KEY (1 run calls the provider in live mode)\n\
         hint: export GEMINI_API_KEY (it never reaches the agent, reports or cassettes), or run from the cassettes with `--cassette-mode replay`\n",
    );
    // `auto` records the task that has no cassette, so it needs the key too.
    refused(
        &["--cassette-mode", "auto", "--model", "anthropic/claude-x"],
        None,
        &format!(
            "error: no API key for provider `anthropic`: set ANTHROPIC_API_KEY (1 run calls the provider in auto mode)\n{hint}"
        ),
    );
}

#[test]
fn replay_and_auto_over_recorded_cassettes_need_no_key() {
    // The shipped py-median task and its cassettes: auto replays them all, without a key.
    let dir = shipped("py-median");
    let (code, stdout, stderr) = harness(
        dir.path(),
        &[
            "run",
            "tasks",
            "--cassette-mode",
            "auto",
            "--model",
            "anthropic/scripted-claude",
        ],
        &[],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
}

#[test]
fn a_malformed_base_url_is_refused() {
    refused(
        &["--base-url", "localhost:8000", "--model", "openai/gpt-x"],
        None,
        "error: `--base-url localhost:8000` is not an http(s) URL: the scheme is `localhost`\n\
         hint: give the scheme and the host, for example `--base-url http://127.0.0.1:8000/v1`\n",
    );
    refused(
        &["--model", "box/m"],
        Some("providers:\n  box:\n    api: openai-completions\n    base_url: 127.0.0.1:8000/v1\n"),
        "error: tasks/harness.yaml: provider `box`: base_url `127.0.0.1:8000/v1` is not an http(s) URL: relative URL without a base\n\
         hint: give the scheme and the host, for example `base_url: http://127.0.0.1:8000/v1`\n",
    );
}

#[test]
fn bad_header_names_and_values_in_harness_yaml_are_refused_without_showing_the_value() {
    refused(
        &["--model", "openai/gpt-x"],
        Some(
            "providers:\n  openai:\n    headers:\n      \"x team\": evals\n      x-token: \"secret\\nvalue\"\n",
        ),
        "error: tasks/harness.yaml: provider `openai`: `x team` is not a valid HTTP header name\n\
         hint: header names are ASCII letters, digits and `-` (for example `x-team`)\n\
         error: tasks/harness.yaml: provider `openai`: the value of header `x-token` is not a valid HTTP header value\n\
         hint: header values are visible ASCII characters and spaces, without line breaks\n",
    );
}

#[test]
fn a_price_that_is_not_an_amount_is_refused() {
    refused(
        &["--model", "openai/gpt-x"],
        Some(
            "providers:\n  openai:\n    models:\n      gpt-x: {price: {input: -1, output: .nan}}\n",
        ),
        "error: tasks/harness.yaml: provider `openai`: model `gpt-x`: price `input: -1` is not a price\n\
         hint: prices are dollars per million tokens: a finite amount of 0 or more\n\
         error: tasks/harness.yaml: provider `openai`: model `gpt-x`: price `output: NaN` is not a price\n\
         hint: prices are dollars per million tokens: a finite amount of 0 or more\n",
    );
}

#[test]
fn every_problem_is_reported_at_once() {
    let dir = project();
    let (code, _, stderr) = harness(
        dir.path(),
        &[
            "run",
            "tasks",
            "--jobs",
            "0",
            "--edit-strategy",
            "nope",
            "--model",
            "nope/m",
        ],
        &[],
    );
    assert_eq!(code, 2);
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    let hints = stderr.lines().filter(|l| l.starts_with("hint: ")).count();
    assert_eq!(errors.len(), 3, "{stderr}");
    assert_eq!(hints, 3, "{stderr}");
}

/// A pipe whose reading end is already closed: whatever is written to it fails with EPIPE.
fn closed_pipe() -> OwnedFd {
    let (read, write) = nix::unistd::pipe().unwrap();
    drop(read);
    write
}

#[test]
fn a_closed_stderr_or_stdout_ends_quietly() {
    // A refused invocation writes its error to a closed stderr: exit 2, not a panic (101).
    let dir = project();
    let status = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["run", "tasks", "--jobs", "0"])
        .current_dir(dir.path())
        .stdout(Stdio::from(closed_pipe()))
        .stderr(Stdio::from(closed_pipe()))
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(2));

    // A whole replay, progress lines and summary included, into closed pipes: it still runs
    // every run, writes its report and exits with its verdict.
    let dir = shipped("sh-args");
    for (stdout, stderr) in [(true, true), (false, true), (true, false)] {
        let pipe = |closed: bool| {
            if closed {
                Stdio::from(closed_pipe())
            } else {
                Stdio::null()
            }
        };
        let status = Command::new(env!("CARGO_BIN_EXE_harness"))
            .args(["run", "tasks"])
            .current_dir(dir.path())
            .env_remove("CI")
            .env_remove("HARNESS_CASSETTE_MODE")
            .stdout(pipe(stdout))
            .stderr(pipe(stderr))
            .status()
            .unwrap();
        assert_eq!(
            status.code(),
            Some(0),
            "closed stdout {stdout}, closed stderr {stderr}"
        );
    }
    assert_eq!(
        std::fs::read_dir(dir.path().join("reports"))
            .unwrap()
            .count(),
        3,
        "every invocation wrote its report"
    );
}

#[test]
fn files_nested_too_deep_are_refused_at_once_by_name() {
    // libyaml's time grows with the square of the depth (100,000 levels took 39 s to refuse);
    // the pre-scan refuses them before it, naming the file and the place.
    let dir = shipped("py-median");
    let tasks = dir.path().join("tasks");
    let deep = format!("{}{}", "[".repeat(20_000), "]".repeat(20_000));
    let task = tasks.join("py-median/task.yaml");
    let good_task = std::fs::read_to_string(&task).unwrap();
    std::fs::write(&task, format!("id: py-median\nprompt: p\nchecks: {deep}\n")).unwrap();
    std::fs::write(tasks.join("defaults.yaml"), format!("tags: {deep}\n")).unwrap();
    let (code, _, stderr) = harness(dir.path(), &["validate", "tasks"], &[]);
    assert_eq!(code, 2, "{stderr}");
    let why = "(a task, cassette or config needs a few levels; the file is probably generated or corrupt)";
    for line in [
        format!(
            "tasks/py-median/task.yaml: invalid YAML: nested more than 128 levels deep at line 3 column 137 {why}"
        ),
        format!(
            "tasks/defaults.yaml: invalid YAML: nested more than 128 levels deep at line 1 column 135 {why}"
        ),
    ] {
        assert!(stderr.contains(&line), "{line}\nnot in:\n{stderr}");
    }
    std::fs::write(&task, good_task).unwrap();
    std::fs::remove_file(tasks.join("defaults.yaml")).unwrap();

    std::fs::write(tasks.join("harness.yaml"), format!("providers: {deep}\n")).unwrap();
    let (code, _, stderr) = harness(dir.path(), &["run", "tasks"], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "error: failed to parse tasks/harness.yaml: nested more than 128 levels deep at line 1 column 140 {why}\n"
        )),
        "{stderr}"
    );
    std::fs::remove_file(tasks.join("harness.yaml")).unwrap();

    let cassette = dir
        .path()
        .join("cassettes/py-median/anthropic--scripted-claude.yaml");
    let text = std::fs::read_to_string(&cassette).unwrap();
    std::fs::write(&cassette, format!("{text}x: {deep}\n")).unwrap();
    let (code, stdout, stderr) = harness(dir.path(), &["cassettes", "check"], &[]);
    assert_ne!(code, 0, "{stdout}{stderr}");
    assert!(
        format!("{stdout}{stderr}").contains(&format!(
            "cassette `cassettes/py-median/anthropic--scripted-claude.yaml` at line {} column 132: nested more than 128 levels deep",
            text.lines().count() + 1
        )),
        "{stdout}{stderr}"
    );
}

#[test]
fn a_task_whose_requirement_is_missing_is_skipped_up_front_and_the_rest_run() {
    // Two shipped tasks replayed from their cassettes; one needs a program no machine has.
    let dir = shipped("py-median");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for folder in ["tasks", "cassettes"] {
        let status = Command::new("cp")
            .arg("-a")
            .arg(root.join(folder).join("sh-args"))
            .arg(dir.path().join(folder))
            .status()
            .unwrap();
        assert!(status.success());
    }
    let task_yaml = dir.path().join("tasks/py-median/task.yaml");
    let mut text = std::fs::read_to_string(&task_yaml).unwrap();
    text.push_str("requires:\n  programs: [harness-no-such-program]\n  python_modules: [json]\n");
    std::fs::write(&task_yaml, text).unwrap();
    let (code, stdout, stderr) = harness(
        dir.path(),
        &["run", "tasks", "--cassette-mode", "replay"],
        &[],
    );
    assert_eq!(code, 100, "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "warning: 1 task needs `harness-no-such-program`, which is not on PATH: skipped (py-median)\n\
             hint: install `harness-no-such-program` or put it on PATH\n"
        ),
        "{stderr}"
    );
    let reports: Vec<_> = std::fs::read_dir(dir.path().join("reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(reports.len(), 1);
    let csv = std::fs::read_to_string(reports[0].join("runs.csv")).unwrap();
    let outcome = |id: &str| {
        csv.lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("{id} in {csv}"))
            .to_owned()
    };
    assert!(outcome("py-median").contains(",skipped,"), "{csv}");
    assert!(
        outcome("py-median")
            .contains("not started: needs `harness-no-such-program`, which is not on PATH"),
        "{csv}"
    );
    assert!(outcome("sh-args").contains(",passed,"), "{csv}");
}

#[test]
fn a_task_folder_runs_that_task_alone_with_its_suite_s_config() {
    let dir = shipped("sh-args");
    // A broken task beside it is not the chosen task's problem.
    std::fs::create_dir_all(dir.path().join("tasks/broken/repo")).unwrap();
    std::fs::write(dir.path().join("tasks/broken/task.yaml"), "id: broken\n").unwrap();
    let (code, stdout, stderr) = harness(dir.path(), &["run", "tasks/sh-args"], &[]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("4 runs: 4 passed"), "{stdout}");
    assert!(!stderr.contains("broken"), "{stderr}");
    let (code, stdout, stderr) = harness(dir.path(), &["validate", "tasks/sh-args/task.yaml"], &[]);
    assert_eq!(
        (code, stdout.as_str()),
        (0, "1 task in tasks/sh-args/task.yaml is valid\n"),
        "{stderr}"
    );
    // The suite's harness.yaml is the one read (its provider is checked before any run).
    std::fs::write(
        dir.path().join("tasks/harness.yaml"),
        "providers:\n  box:\n    api: openai-completions\n    base_url: 127.0.0.1:8000/v1\n",
    )
    .unwrap();
    let (code, _, stderr) = harness(
        dir.path(),
        &["run", "tasks/sh-args", "--model", "box/m"],
        &[],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.starts_with("error: tasks/harness.yaml: provider `box`: base_url"),
        "{stderr}"
    );
}

#[test]
fn a_filter_that_selects_no_task_names_the_ids_and_tags_there_are() {
    refused(
        &["--task", "load-trivail"],
        None,
        "error: `--task load-trivail` matches none of the 1 task(s) in tasks\n\
         hint: `--task` matches task ids (globs such as `py-*`); the ids are load-trivial\n",
    );
    refused(
        &["--task", "load-*", "--tag", "python"],
        None,
        "error: `--task load-*` and `--tag python` match none of the 1 task(s) in tasks\n\
         hint: `--task` matches task ids (globs such as `py-*`); the ids are load-trivial; no \
         task has a tag\n",
    );
}

#[test]
fn no_suite_where_it_is_looked_for_says_where_to_run_from() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = harness(dir.path(), &["run"], &[]);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert_eq!(
        stderr,
        "error: no task suite at tasks\n\
         hint: run from the folder that holds `tasks/`, or name the suite's folder (or one \
         task's): `harness run path/to/tasks`\n"
    );
    assert!(!dir.path().join("reports").exists());
}

#[test]
fn a_model_without_its_provider_gets_the_likely_one_suggested() {
    for (model, provider) in [
        ("gpt-4o", "openai"),
        ("claude-sonnet-4-5", "anthropic"),
        ("gemini-2.5-pro", "google"),
    ] {
        refused(
            &["--model", model],
            None,
            &format!(
                "error: `{model}` is not a model selector: expected PROVIDER/MODEL, for example \
                 anthropic/claude-sonnet-4-5\n\
                 hint: did you mean `--model {provider}/{model}`?\n"
            ),
        );
    }
    refused(
        &["--model", "mystery"],
        None,
        "error: `mystery` is not a model selector: expected PROVIDER/MODEL, for example \
         anthropic/claude-sonnet-4-5\n\
         hint: for example `--model anthropic/claude-sonnet-4-5`\n",
    );
}

#[test]
fn the_review_a_pending_snapshot_is_pointed_to_finds_it() {
    let dir = shipped("sh-args");
    // Outside the folder `harness review` looks in by default: the hint names its folder.
    let (code, _, stderr) = harness(
        dir.path(),
        &["run", "tasks/sh-args", "--snapshot", "snaps/one.snap"],
        &[],
    );
    assert_eq!(code, 103, "{stderr}");
    assert!(
        stderr.contains(
            "hint: the new table is in snaps/one.snap.new; `harness review snaps --accept` keeps \
             it, `--reject` drops it"
        ),
        "{stderr}"
    );
    let (code, _, stderr) = harness(dir.path(), &["review", "snaps"], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("1 pending: `harness review snaps --accept [GLOB]` keeps them"),
        "{stderr}"
    );
    let (code, _, stderr) = harness(dir.path(), &["review", "snaps", "--accept"], &[]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = harness(
        dir.path(),
        &["run", "tasks/sh-args", "--snapshot", "snaps/one.snap"],
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("snapshot snaps/one.snap matches"),
        "{stderr}"
    );
    // Under the default folder, the bare command.
    let (_, _, stderr) = harness(
        dir.path(),
        &["run", "tasks/sh-args", "--snapshot", "cassettes/one.snap"],
        &[],
    );
    assert!(
        stderr.contains("`harness review --accept` keeps it"),
        "{stderr}"
    );
}
