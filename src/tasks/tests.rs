//! Tests of task loading: every validation error with its file and field, defaults, filters.

use std::path::Path;
use std::time::Duration;

use super::*;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A task folder with a fixture repo.
fn task_dir(suite: &Path, folder: &str, yaml: &str) {
    write(&suite.join(folder).join("task.yaml"), yaml);
    write(
        &suite.join(folder).join("repo/src/calc.py"),
        "def median(xs):\n    return xs[0]\n",
    );
}

const GOOD: &str = r#"
id: py-fix-median
prompt: |
  The tests fail. Fix median.
checks:
  - run: python3 -m unittest -q
    name: unit tests
  - file: src/calc.py
    contains: "def median"
  - file: out.txt
    equals_file: expected/out.txt
  - file: src/calc.py
    exists: true
limits: {turns: 30, wall_seconds: 600}
tags: [python, edit]
normalize:
  - pattern: "\\d+ms"
    replacement: "<ms>"
"#;

fn messages(problems: &[TaskProblem]) -> Vec<String> {
    problems.iter().map(|p| p.to_string()).collect()
}

#[test]
fn a_good_task_loads_with_defaults_filled_in() {
    let dir = tempfile::tempdir().unwrap();
    task_dir(dir.path(), "py-median", GOOD);
    write(&dir.path().join("py-median/expected/out.txt"), "3\n");
    let suite = load_suite(dir.path()).unwrap();
    assert_eq!(suite.tasks.len(), 1);
    let task = &suite.tasks[0];
    assert_eq!(task.id, "py-fix-median");
    assert_eq!(task.prompts, ["The tests fail. Fix median.\n"]);
    assert_eq!(task.repo, dir.path().join("py-median/repo"));
    assert_eq!(task.tools, ToolSetSpec::Coding);
    assert_eq!(task.system_prompt, None);
    assert_eq!(
        task.checks[0],
        Check {
            name: "unit tests".into(),
            kind: CheckKind::Command {
                run: "python3 -m unittest -q".into(),
                expect_exit: 0,
                timeout: DEFAULT_CHECK_TIMEOUT,
            },
        }
    );
    assert_eq!(task.checks[1].name, "src/calc.py contains the text");
    assert_eq!(
        task.checks[2].kind,
        CheckKind::File {
            path: "out.txt".into(),
            assert: FileAssert::EqualsFile(dir.path().join("py-median/expected/out.txt")),
        }
    );
    assert_eq!(task.checks[3].name, "src/calc.py exists");
    assert_eq!(task.limits.max_turns, Some(30));
    assert_eq!(task.limits.max_wall, Some(Duration::from_secs(600)));
    assert_eq!(task.limits.max_tokens, None);
    assert_eq!(task.tags, ["python", "edit"]);
    assert_eq!(task.normalize[0].pattern, "\\d+ms");
    assert!(
        task.normalize_defaults,
        "the built-in rules are on by default"
    );
}

#[test]
fn normalize_defaults_comes_from_the_task_else_the_suite_else_true() {
    let dir = tempfile::tempdir().unwrap();
    let task = |id: &str, extra: &str| {
        task_dir(
            dir.path(),
            id,
            &format!("id: {id}\nprompt: p\nchecks: [{{run: 'true'}}]\n{extra}"),
        )
    };
    task("inherits", "");
    task("off", "normalize_defaults: false\n");
    task("on", "normalize_defaults: true\n");
    let flags = |dir: &Path| {
        load_suite(dir)
            .unwrap()
            .tasks
            .iter()
            .map(|t| (t.id.clone(), t.normalize_defaults))
            .collect::<Vec<_>>()
    };
    let owned = |v: &[(&str, bool)]| {
        v.iter()
            .map(|(id, on)| ((*id).to_owned(), *on))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        flags(dir.path()),
        owned(&[("inherits", true), ("off", false), ("on", true)])
    );
    write(
        &dir.path().join(DEFAULTS_FILE),
        "normalize_defaults: false\n",
    );
    assert_eq!(
        flags(dir.path()),
        owned(&[("inherits", false), ("off", false), ("on", true)])
    );
    // A wrong type is a schema problem naming the field.
    task("bad", "normalize_defaults: nope\n");
    let err = load_suite(dir.path()).unwrap_err();
    assert!(
        messages(&err.problems)
            .iter()
            .any(|m| m
                .ends_with("bad/task.yaml: normalize_defaults: expected boolean, got \"nope\"")),
        "{err}"
    );
}

#[test]
fn defaults_merge_and_tasks_override() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join(DEFAULTS_FILE),
        "system_prompt: suite prompt\ntools: readonly\nlimits: {turns: 10, tokens: 1000}\ntags: [suite, edit]\nchecks_timeout_seconds: 42\nnormalize: [{pattern: 'x+', replacement: X}]\n",
    );
    task_dir(
        dir.path(),
        "a",
        "id: a\nprompt: p\nchecks: [{run: 'true'}]\n",
    );
    task_dir(
        dir.path(),
        "b",
        "id: b\nprompt: p\nsystem_prompt: own\ntools: [read, bash]\nlimits: {turns: 3}\ntags: [edit, own]\nchecks: [{run: 'true', timeout_seconds: 5}]\nnormalize: [{pattern: 'y', replacement: Y}]\n",
    );
    let suite = load_suite(dir.path()).unwrap();
    assert_eq!(suite.defaults.checks_timeout_seconds, Some(42));
    let [a, b] = &suite.tasks[..] else {
        panic!("two tasks")
    };
    assert_eq!(a.system_prompt.as_deref(), Some("suite prompt"));
    assert_eq!(a.tools, ToolSetSpec::ReadOnly);
    assert_eq!(
        (a.limits.max_turns, a.limits.max_tokens),
        (Some(10), Some(1000))
    );
    assert_eq!(a.tags, ["suite", "edit"]);
    assert!(
        matches!(a.checks[0].kind, CheckKind::Command { timeout, .. } if timeout == Duration::from_secs(42))
    );
    assert_eq!(a.checks[0].name, "true");
    assert_eq!(b.system_prompt.as_deref(), Some("own"));
    assert_eq!(
        b.tools,
        ToolSetSpec::Names(vec!["read".into(), "bash".into()])
    );
    assert_eq!(
        (b.limits.max_turns, b.limits.max_tokens),
        (Some(3), Some(1000))
    );
    assert_eq!(b.tags, ["suite", "edit", "own"]);
    assert!(
        matches!(b.checks[0].kind, CheckKind::Command { timeout, .. } if timeout == Duration::from_secs(5))
    );
    assert_eq!(
        b.normalize
            .iter()
            .map(|r| r.pattern.as_str())
            .collect::<Vec<_>>(),
        ["x+", "y"]
    );
}

#[test]
fn a_task_folder_is_that_task_alone_under_its_suite_s_defaults() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join(DEFAULTS_FILE),
        "system_prompt: suite prompt\ntags: [suite]\n",
    );
    task_dir(
        dir.path(),
        "a",
        "id: a\nprompt: p\nchecks: [{run: 'true'}]\n",
    );
    // A broken sibling is not the chosen task's problem.
    task_dir(dir.path(), "broken", "id: broken\n");
    let folder = dir.path().join("a");
    for given in [folder.clone(), folder.join("task.yaml")] {
        assert_eq!(task_folder_of(&given).as_deref(), Some(folder.as_path()));
        assert_eq!(suite_dir_of(&given), dir.path());
        let suite = load_suite(&given).unwrap();
        let [a] = &suite.tasks[..] else {
            panic!("one task from {}: {:?}", given.display(), suite.tasks)
        };
        assert_eq!(a.id, "a");
        assert_eq!(a.dir, folder);
        assert_eq!(a.system_prompt.as_deref(), Some("suite prompt"));
        assert_eq!(a.tags, ["suite"]);
    }
    // The suite folder is still every task, and the broken one is a problem there.
    assert_eq!(task_folder_of(dir.path()), None);
    assert_eq!(suite_dir_of(dir.path()), dir.path());
    let (tasks, problems) = load_suite_lenient(dir.path());
    assert_eq!(tasks.len(), 1);
    assert!(
        messages(&problems).iter().any(|m| m.contains("broken")),
        "{problems:?}"
    );
    // The chosen task's own problems are still said, with its file.
    let err = load_suite(&dir.path().join("broken")).unwrap_err();
    assert!(
        messages(&err.problems)
            .iter()
            .all(|m| m.contains("broken/task.yaml")),
        "{err}"
    );
    // A bare name is a task of the suite in the current folder.
    assert_eq!(parent_or_here(Path::new("py-median")), Path::new("."));
    assert_eq!(parent_or_here(Path::new(".")), Path::new("./.."));
    assert_eq!(
        parent_or_here(Path::new("tasks/py-median/")),
        Path::new("tasks")
    );
}

#[test]
fn a_task_without_limits_gets_the_harness_limits() {
    let dir = tempfile::tempdir().unwrap();
    task_dir(
        dir.path(),
        "bare",
        "id: bare\nprompt: p\nchecks: [{run: 'true'}]\n",
    );
    task_dir(
        dir.path(),
        "tokens",
        "id: tokens\nprompt: p\nchecks: [{run: 'true'}]\nlimits: {tokens: 50, turns: 400}\n",
    );
    let suite = load_suite(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let bare = suite.tasks.iter().find(|t| t.id == "bare").unwrap();
    assert_eq!(bare.limits.max_turns, Some(100));
    assert_eq!(bare.limits.max_wall, Some(Duration::from_secs(1800)));
    assert_eq!(bare.limits.max_tokens, None);
    let tokens = suite.tasks.iter().find(|t| t.id == "tokens").unwrap();
    assert_eq!(
        tokens.limits.max_turns,
        Some(400),
        "a task can raise the limit"
    );
    assert_eq!(tokens.limits.max_tokens, Some(50));
    assert_eq!(tokens.limits.max_wall, Some(Duration::from_secs(1800)));
}

#[test]
fn every_problem_of_every_file_is_reported_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // Unknown field, wrong type inside a check, bad tool set.
    task_dir(
        root,
        "bad-fields",
        "id: bad-fields\npromt: hi\nprompt: p\ntools: writeonly\nchecks:\n  - run: make\n    expect_exit: zero\n",
    );
    // Missing required fields and an empty checks list.
    task_dir(root, "missing", "tags: [x]\nchecks: []\n");
    // No repo/ folder.
    write(
        &root.join("no-repo/task.yaml"),
        "id: no-repo\nprompt: p\nchecks: [{run: 'true'}]\n",
    );
    // Duplicate id.
    task_dir(
        root,
        "dup-1",
        "id: same\nprompt: p\nchecks: [{run: 'true'}]\n",
    );
    task_dir(
        root,
        "dup-2",
        "id: same\nprompt: p\nchecks: [{run: 'true'}]\n",
    );
    // Semantic problems: both run and file, missing assertion, escaping path, bad regex, bad id.
    task_dir(
        root,
        "semantic",
        "id: Semantic\nprompt: p\nchecks: [{run: x, file: y}, {file: a.txt}, {file: ../up.txt, exists: true}, {file: a, equals_file: missing.txt}]\nnormalize: [{pattern: '(', replacement: x}]\n",
    );
    task_dir(
        root,
        "semantic2",
        "id: semantic2\nprompt: p\nchecks: [{run: x, file: y}, {file: a.txt}, {file: ../up.txt, exists: true}, {file: a, equals_file: missing.txt}, {file: a, exists: true, timeout_seconds: 3}]\nnormalize: [{pattern: '(', replacement: x}]\n",
    );
    // A folder without task.yaml, invalid YAML.
    std::fs::create_dir_all(root.join("empty/repo")).unwrap();
    task_dir(root, "yaml", "id: [unclosed\n");
    // Ignored folders.
    std::fs::create_dir_all(root.join(".hidden")).unwrap();
    std::fs::create_dir_all(root.join("_shared")).unwrap();
    task_dir(
        root,
        "good",
        "id: good\nprompt: p\nchecks: [{run: 'true'}]\n",
    );

    let err = load_suite(root).unwrap_err();
    let shown: Vec<String> = messages(&err.problems)
        .into_iter()
        .map(|m| m.replace(&format!("{}/", root.display()), ""))
        .collect();
    let expected = [
        "bad-fields/task.yaml: checks[0].expect_exit: expected integer, got \"zero\"",
        "bad-fields/task.yaml: unknown field 'promt', expected one of id, prompt, prompts, attempts, system_prompt, tools, checks, limits, tags, normalize, normalize_defaults, env, requires",
        "bad-fields/task.yaml: tools: expected `coding`, `readonly` or a list of tool names (read, write, edit, bash, grep, find, ls), got \"writeonly\"",
        "dup-2/task.yaml: id: duplicate id 'same': dup-1/task.yaml has it already; give this task an id of its own",
        "empty/task.yaml: missing task.yaml",
    ];
    for line in expected {
        assert!(
            shown.iter().any(|s| s == line),
            "missing {line:?} in\n{}",
            shown.join("\n")
        );
    }
    let has = |needle: &str| {
        assert!(
            shown.iter().any(|s| s.contains(needle)),
            "no problem containing {needle:?} in\n{}",
            shown.join("\n")
        )
    };
    has("missing/task.yaml: missing field 'id'");
    has("missing/task.yaml: prompt: missing: give `prompt`, or `prompts`");
    has("missing/task.yaml: checks: at least one check is required");
    has("no-repo: missing repo/ folder");
    has("semantic/task.yaml: id: \"Semantic\" is not a valid id");
    has("semantic2/task.yaml: checks[0]: a check has either `run` or `file`, not both");
    has("semantic2/task.yaml: checks[1]: a file check needs exactly one of");
    has("semantic2/task.yaml: checks[2].file: '../up.txt' must not leave its folder");
    has("semantic2/task.yaml: checks[3].equals_file: no file 'missing.txt' in the task folder");
    has("semantic2/task.yaml: checks[4].timeout_seconds: only command checks take this field");
    has("semantic2/task.yaml: normalize[0].pattern: invalid regex");
    has("yaml/task.yaml: invalid YAML");
    assert!(
        !shown
            .iter()
            .any(|s| s.contains("hidden") || s.contains("_shared") || s.starts_with("good"))
    );
    assert!(err.to_string().starts_with(&format!(
        "{} problems in the task suite\n  ",
        err.problems.len()
    )));

    // The lenient loader keeps the valid tasks: good and the first of the duplicates.
    let (tasks, problems) = load_suite_lenient(root);
    let ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["same", "good"]);
    assert_eq!(problems, err.problems);
}

#[test]
fn a_copied_task_is_the_duplicate_wherever_it_sorts() {
    // `py-median` copied to `aa-copy` and `zz-copy` without changing the id: the copies are the
    // duplicates, and the error names each copy and the task it copies.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let yaml = "id: py-median\nprompt: p\nchecks: [{run: 'true'}]\n";
    for folder in ["aa-copy", "py-median", "zz-copy"] {
        task_dir(root, folder, yaml);
    }
    let (tasks, problems) = load_suite_lenient(root);
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].dir, root.join("py-median"));
    let shown: Vec<String> = messages(&problems)
        .into_iter()
        .map(|m| m.replace(&format!("{}/", root.display()), ""))
        .collect();
    let dup = |copy: &str| {
        format!(
            "{copy}/task.yaml: id: duplicate id 'py-median': py-median/task.yaml has it already; \
             give this task an id of its own"
        )
    };
    assert_eq!(shown, [dup("aa-copy"), dup("zz-copy")]);
}

#[test]
fn an_id_longer_than_a_run_folder_can_hold_is_refused_before_the_run() {
    // A run's folder is `<task>--<provider>--<model>--e<epoch>`: a 240-character id made it
    // longer than a file name may be, and the run and its report failed.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let longest = "t".repeat(100);
    let over = "t".repeat(101);
    for id in [&longest, &over] {
        task_dir(
            root,
            &format!("len-{}", id.len()),
            &format!("id: {id}\nprompt: p\nchecks: [{{run: 'true'}}]\n"),
        );
    }
    let (tasks, problems) = load_suite_lenient(root);
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].id, longest);
    let shown = messages(&problems);
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].contains("len-101/task.yaml: id:")
            && shown[0].contains("is not a valid id: use at most 100 lowercase letters"),
        "{shown:?}"
    );
}

#[test]
fn a_check_that_could_never_pass_or_shares_a_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    task_dir(
        dir.path(),
        "t",
        "id: t\nprompt: p\nchecks:\n  - {name: big, run: 'exit 3', expect_exit: 300}\n  \
         - {name: below, run: 'true', expect_exit: -1}\n  - {name: twice, run: 'true'}\n  \
         - {name: twice, run: 'false'}\n  - {run: 'make test'}\n  - {run: 'make test'}\n  \
         - {name: fine, run: 'exit 255', expect_exit: 255}\n",
    );
    let (tasks, problems) = load_suite_lenient(dir.path());
    assert!(tasks.is_empty());
    let shown: Vec<String> = messages(&problems)
        .into_iter()
        .map(|m| m.replace(&format!("{}/", dir.path().display()), ""))
        .collect();
    assert_eq!(
        shown,
        [
            "t/task.yaml: checks[0].expect_exit: 300 is no exit status (0 to 255): the check \
             could never pass",
            "t/task.yaml: checks[1].expect_exit: -1 is no exit status (0 to 255): the check \
             could never pass",
            "t/task.yaml: checks[3].name: 'twice' names checks[2] too: give each check a name of \
             its own (the reports tell checks apart by name)",
            "t/task.yaml: checks[5].name: 'make test' names checks[4] too: give each check a name \
             of its own (the reports tell checks apart by name)",
        ]
    );
}

#[test]
fn the_json_schema_rejects_a_bad_type_that_serde_would_also_reject() {
    let schema: Value = serde_json::from_str(task_schema()).unwrap();
    let validator = schema::Validator::new(schema).unwrap();
    let good = serde_json::json!({"id": "a", "prompt": "p", "checks": [{"run": "true"}]});
    assert!(validator.is_valid(&good));
    let bad = serde_json::json!({"id": "a", "prompt": "p", "checks": [{"run": "true", "expect_exit": "0"}], "limits": {"turns": -1}});
    let errors: Vec<String> = validator
        .errors(&bad)
        .iter()
        .map(|e| field_name(&e.path))
        .collect();
    assert_eq!(errors, ["checks[0].expect_exit", "limits.turns"]);
}

#[test]
fn a_bad_defaults_file_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join(DEFAULTS_FILE), "limits: {turn: 3}\n");
    task_dir(
        dir.path(),
        "a",
        "id: a\nprompt: p\nchecks: [{run: 'true'}]\n",
    );
    let err = load_suite(dir.path()).unwrap_err();
    let shown = messages(&err.problems);
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].ends_with("defaults.yaml: limits: unknown field 'turn', expected one of turns, wall_seconds, tokens"),
        "{}",
        shown[0]
    );
    let (tasks, _) = load_suite_lenient(dir.path());
    assert_eq!(tasks.len(), 1);

    write(&dir.path().join(DEFAULTS_FILE), "prompt: no\n");
    let err = load_suite(dir.path()).unwrap_err();
    assert!(
        err.problems[0].to_string().ends_with(
            "defaults.yaml: unknown field 'prompt', expected one of system_prompt, tools, limits, tags, normalize, normalize_defaults, checks_timeout_seconds"
        ),
        "{}",
        err.problems[0]
    );
}

#[test]
fn a_missing_suite_folder_is_one_problem() {
    let dir = tempfile::tempdir().unwrap();
    let err = load_suite(&dir.path().join("nope")).unwrap_err();
    assert_eq!(err.problems.len(), 1);
    assert!(
        err.problems[0]
            .message
            .starts_with("failed to read the tasks folder")
    );
}

fn named(id: &str, tags: &[&str]) -> Task {
    Task {
        prompts: vec!["p".into()],
        tags: tags.iter().map(|t| t.to_string()).collect(),
        ..Task::bare(id, id)
    }
}

#[test]
fn filters_by_glob_and_tag() {
    let tasks = vec![
        named("py-median", &["python"]),
        named("py-mean", &["python", "slow"]),
        named("rs-flag", &["rust"]),
    ];
    let ids = |t: Vec<Task>| t.into_iter().map(|t| t.id).collect::<Vec<_>>();
    assert_eq!(
        ids(filter(tasks.clone(), &[], &[]).unwrap()),
        ["py-median", "py-mean", "rs-flag"]
    );
    assert_eq!(
        ids(filter(tasks.clone(), &["py-*".into()], &[]).unwrap()),
        ["py-median", "py-mean"]
    );
    assert_eq!(
        ids(filter(tasks.clone(), &["py-m?an".into(), "rs-*".into()], &[]).unwrap()),
        ["py-mean", "rs-flag"]
    );
    assert_eq!(
        ids(filter(tasks.clone(), &[], &["slow".into(), "rust".into()]).unwrap()),
        ["py-mean", "rs-flag"]
    );
    assert_eq!(
        ids(filter(tasks.clone(), &["py-*".into()], &["rust".into()]).unwrap()),
        Vec::<String>::new()
    );
    assert!(
        filter(tasks, &["py-[".into()], &[])
            .unwrap_err()
            .to_string()
            .starts_with("invalid task pattern 'py-['")
    );
}

#[test]
fn the_schema_is_published_and_valid() {
    let schema: Value = serde_json::from_str(task_schema()).unwrap();
    assert_eq!(schema["title"], "harness task");
    // The validator refuses a schema with a keyword it does not implement, a misspelt type or a
    // reference that leads nowhere: the published schema has none.
    if let Err(err) = schema::Validator::new(schema) {
        panic!("{err}");
    }
}

#[test]
fn declared_env_is_loaded_sorted_and_reserved_or_bad_names_are_problems() {
    let dir = tempfile::tempdir().unwrap();
    task_dir(
        dir.path(),
        "envs",
        "id: envs\nprompt: p\nchecks: [{run: 'true'}]\nenv: {ZED: '1', PYTHONHASHSEED: '0'}\n",
    );
    let suite = load_suite(dir.path()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        suite.tasks[0].env,
        vec![
            ("PYTHONHASHSEED".to_owned(), "0".to_owned()),
            ("ZED".to_owned(), "1".to_owned())
        ]
    );

    let dir = tempfile::tempdir().unwrap();
    task_dir(
        dir.path(),
        "bad",
        "id: bad\nprompt: p\nchecks: [{run: 'true'}]\nenv: {HOME: /x, TMPDIR: /y}\n",
    );
    task_dir(
        dir.path(),
        "schema",
        "id: schema\nprompt: p\nchecks: [{run: 'true'}]\nenv: {1X: a, OK: 3}\n",
    );
    let err = load_suite(dir.path()).unwrap_err();
    let shown = messages(&err.problems).join("\n");
    let shown = shown.replace(&format!("{}/", dir.path().display()), "");
    assert!(
        shown.contains(
            "bad/task.yaml: env.HOME: set by the harness for every run; a task cannot declare it"
        ),
        "{shown}"
    );
    assert!(
        shown.contains("bad/task.yaml: env.TMPDIR: set by the harness"),
        "{shown}"
    );
    assert!(shown.contains("schema/task.yaml: env"), "{shown}");
}

#[test]
fn fixture_symlinks_that_leave_the_fixture_are_refused() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    task_dir(
        dir.path(),
        "links",
        "id: links\nprompt: p\nchecks: [{run: 'true'}]\n",
    );
    let repo = dir.path().join("links/repo");
    write(&dir.path().join("links/secret.txt"), "s");
    symlink("src/calc.py", repo.join("inside.py")).unwrap();
    symlink("../secret.txt", repo.join("up.txt")).unwrap();
    symlink("/etc/passwd", repo.join("src/abs")).unwrap();
    let err = load_suite(dir.path()).unwrap_err();
    let shown: Vec<String> = messages(&err.problems)
        .into_iter()
        .map(|m| m.replace(&format!("{}/", dir.path().display()), ""))
        .collect();
    assert_eq!(shown.len(), 2, "{shown:#?}");
    assert!(
        shown[0].starts_with(
            "links/repo/src/abs: this symlink points outside the fixture (-> /etc/passwd)"
        ),
        "{shown:#?}"
    );
    assert!(
        shown[1].starts_with(
            "links/repo/up.txt: this symlink points outside the fixture (-> ../secret.txt)"
        ),
        "{shown:#?}"
    );
}

/// Every kind of schema problem a `task.yaml` or `defaults.yaml` can have, with the messages
/// users see. Accepted while the schema was checked by the `jsonschema` crate, so a change of
/// validator shows here as a changed message.
#[test]
fn schema_problems_read_as_before() {
    const TASKS: &[(&str, &str)] = &[
        ("not-a-mapping", "- a\n- b\n"),
        ("a-scalar", "hello\n"),
        ("nothing-required", "{}\n"),
        (
            "unknown-fields",
            "id: a\nprompt: p\nchecks: [{run: 'true'}]\nfoo: 1\nbar: 2\n",
        ),
        (
            "one-unknown-field",
            "id: a\nprompt: p\nchecks: [{run: 'true'}]\nturns: 3\n",
        ),
        (
            "wrong-types",
            "id: 3\nprompt: []\nsystem_prompt: 1\nchecks: {}\nlimits: []\ntags: x\nnormalize: {}\nnormalize_defaults: 'yes'\nenv: []\n",
        ),
        ("bad-id", "id: Bad Id\nprompt: p\nchecks: [{run: 'true'}]\n"),
        (
            "long-bad-id",
            "id: ThisIdIsFarTooLongAndHasCapitalsInItSoTheMessageMustCutItShortSomewhere\nprompt: p\nchecks: [{run: 'true'}]\n",
        ),
        (
            "unicode-id",
            "id: médian\nprompt: p\nchecks: [{run: 'true'}]\n",
        ),
        (
            "empty-prompt",
            "id: a\nprompt: ''\nchecks: [{run: 'true'}]\n",
        ),
        ("no-checks", "id: a\nprompt: p\nchecks: []\n"),
        (
            "check-fields",
            "id: a\nprompt: p\nchecks:\n  - {run: '', expect_exit: '0', timeout_seconds: 0, file: '', exists: 'yes', contains: 1, not_contains: [], equals_file: '', nme: x}\n",
        ),
        (
            "checks-not-objects",
            "id: a\nprompt: p\nchecks: [1, x, null]\n",
        ),
        (
            "limits",
            "id: a\nprompt: p\nchecks: [{run: 'true'}]\nlimits: {turns: 0, wall_seconds: -5, tokens: 1.5, turn: 3}\n",
        ),
        (
            "float-limit",
            "id: a\nprompt: p\nchecks: [{run: 'true'}]\nlimits: {turns: 3.0}\n",
        ),
        (
            "tags",
            "id: a\nprompt: p\nchecks: [{run: 'true'}]\ntags: [1, '', x]\n",
        ),
        (
            "normalize",
            "id: a\nprompt: p\nchecks: [{run: 'true'}]\nnormalize: [{pattern: ''}, {replacement: 1, extra: 2}, x]\n",
        ),
        (
            "tools-unknown-set",
            "id: a\nprompt: p\nchecks: [{run: 'true'}]\ntools: all\n",
        ),
        (
            "tools-empty",
            "id: a\nprompt: p\nchecks: [{run: 'true'}]\ntools: []\n",
        ),
        (
            "tools-repeated",
            "id: a\nprompt: p\nchecks: [{run: 'true'}]\ntools: [read, read]\n",
        ),
        (
            "tools-unknown-name",
            "id: a\nprompt: p\nchecks: [{run: 'true'}]\ntools: [read, nope]\n",
        ),
        (
            "tools-number",
            "id: a\nprompt: p\nchecks: [{run: 'true'}]\ntools: 3\n",
        ),
        (
            "tools-mapping",
            "id: a\nprompt: p\nchecks: [{run: 'true'}]\ntools: {a: 1}\n",
        ),
        (
            "env",
            "id: a\nprompt: p\nchecks: [{run: 'true'}]\nenv: {1X: a, OK: 3, bad-name: [], GOOD: x}\n",
        ),
        (
            "normalize-defaults",
            "id: a\nprompt: p\nchecks: [{run: 'true'}]\nnormalize_defaults: 1\n",
        ),
        (
            "valid",
            "id: a\nprompt: p\nchecks: [{run: 'true', expect_exit: 3, timeout_seconds: 1}]\ntools: [read, ls]\nlimits: {turns: 1, wall_seconds: 1, tokens: 1}\nenv: {A_1: x}\n",
        ),
    ];
    const DEFAULTS: &[(&str, &str)] = &[
        ("a-list", "- a\n"),
        ("unknown-fields", "prompt: no\nid: x\n"),
        (
            "wrong-values",
            "limits: {turn: 3, tokens: 0}\nchecks_timeout_seconds: 0\ntools: x\ntags: ['']\nnormalize: [{pattern: 1}]\nnormalize_defaults: no-thanks\nsystem_prompt: [1]\n",
        ),
        ("timeout-string", "checks_timeout_seconds: '5'\n"),
        ("valid", "checks_timeout_seconds: 5\ntools: readonly\n"),
    ];
    let dir = tempfile::tempdir().unwrap();
    let shown = |problems: &[TaskProblem]| {
        messages(problems)
            .iter()
            .map(|m| m.replace(&format!("{}/", dir.path().display()), ""))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut out = String::new();
    for (name, yaml) in TASKS {
        task_dir(dir.path(), name, yaml);
        let mut problems = Vec::new();
        let loaded = load_task(
            &dir.path().join(name),
            &SuiteDefaults::default(),
            &mut problems,
        );
        assert_eq!(loaded.is_some(), problems.is_empty(), "{name}");
        out.push_str(&format!(
            "## task {name}\n{yaml}--\n{}\n\n",
            shown(&problems)
        ));
    }
    for (name, yaml) in DEFAULTS {
        let path = dir.path().join(format!("{name}.yaml"));
        write(&path, yaml);
        let mut problems = Vec::new();
        let loaded = load_defaults(&path, &mut problems);
        assert_eq!(loaded.is_some(), problems.is_empty(), "{name}");
        out.push_str(&format!(
            "## defaults {name}\n{yaml}--\n{}\n\n",
            shown(&problems)
        ));
    }
    insta::assert_snapshot!(out);
}

#[test]
fn prompts_and_attempts_load_and_their_mistakes_are_all_said_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    task_dir(
        root,
        "good",
        "id: good\nprompts: [first, second, third]\nattempts: 2\nchecks: [{run: 'true'}]\n",
    );
    task_dir(
        root,
        "both",
        "id: both\nprompt: p\nprompts: [q]\nattempts: 0\nchecks: [{run: 'true'}]\n",
    );
    task_dir(
        root,
        "empty",
        "id: empty\nprompts: []\nchecks: [{run: 'true'}]\n",
    );
    task_dir(root, "neither", "id: neither\nchecks: [{run: 'true'}]\n");
    task_dir(
        root,
        "too-many",
        "id: too-many\nprompts: [a, '  ']\nattempts: 11\nchecks: [{run: 'true'}]\n",
    );
    let err = load_suite(root).unwrap_err();
    let text = messages(&err.problems).join("\n");
    for want in [
        "both/task.yaml: attempts: ",
        "both/task.yaml: prompts: give `prompt` or `prompts`, not both",
        "empty/task.yaml: prompts: ",
        "neither/task.yaml: prompt: missing: give `prompt`, or `prompts`",
        "too-many/task.yaml: prompts[1]: the prompt is blank",
        "too-many/task.yaml: attempts: 11 is more than a task may give (10)",
    ] {
        assert!(text.contains(want), "{want}\n{text}");
    }
    assert!(!text.contains("good/task.yaml"), "{text}");
    // `attempts: 0` is caught by the schema along with the rest of the file.
    assert!(
        err.problems
            .iter()
            .filter(|p| p.to_string().contains("both/task.yaml"))
            .count()
            >= 2,
        "{text}"
    );

    let dir = tempfile::tempdir().unwrap();
    task_dir(
        dir.path(),
        "good",
        "id: good\nprompts: [first, second, third]\nattempts: 2\nchecks: [{run: 'true'}]\n",
    );
    let suite = load_suite(dir.path()).unwrap();
    let task = &suite.tasks[0];
    assert_eq!(task.prompts, ["first", "second", "third"]);
    assert_eq!(task.attempts, 2);
}

#[test]
fn requires_is_loaded_and_its_mistakes_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    task_dir(
        dir.path(),
        "ok",
        "id: ok\nprompt: p\nchecks: [{run: 'true'}]\nrequires: {programs: [cargo], python_modules: [pytest, a.b], files: [../deps], hint: install it}\n",
    );
    let suite = load_suite(dir.path()).unwrap();
    assert_eq!(
        suite.tasks[0].requires,
        crate::tasks::Requires {
            programs: vec!["cargo".into()],
            python_modules: vec!["pytest".into(), "a.b".into()],
            files: vec!["../deps".into()],
            hint: Some("install it".into()),
        }
    );

    task_dir(
        dir.path(),
        "bad",
        "id: bad\nprompt: p\nchecks: [{run: 'true'}]\nrequires: {programs: go, python_modules: ['no such'], tools: [x]}\n",
    );
    let err = load_suite(dir.path()).unwrap_err();
    let shown = messages(&err.problems).join("\n");
    let shown = shown.replace(&format!("{}/", dir.path().display()), "");
    assert!(
        shown.contains("bad/task.yaml: requires.programs: expected array, got \"go\""),
        "{shown}"
    );
    assert!(
        shown.contains("bad/task.yaml: requires.python_modules[0]:"),
        "{shown}"
    );
    assert!(
        shown.contains("bad/task.yaml: requires: unknown field 'tools'"),
        "{shown}"
    );
}
