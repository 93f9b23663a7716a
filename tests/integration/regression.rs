//! The regression story of `../shared/design/cassettes.md`, end to end: replaying the shipped
//! suite's committed cassettes after a tool change, with `--on-divergence continue`, says which
//! recorded conversations now differ, where, and whether their outcomes held; re-recording from
//! the divergent turn against the scripted server writes `.new` cassettes that `harness review
//! --accept` turns into cassettes that replay clean.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use harness::cassettes::{self, CassetteMode, OnDivergence};
use harness::providers::ApiKind;
use harness::record::{Outcome, OutcomeChange, RunRecord};
use harness::runner::{self, RunOptions, Silent};
use harness::tasks;
use harness::testkit;

use super::run::{harness, repo_root};

fn cp(from: &Path, to: &Path) {
    let status = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(status.success());
}

/// A copy of the shipped suite and its cassettes in a temp folder.
fn shipped_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    cp(&repo_root().join("tasks"), &dir.path().join("tasks"));
    cp(
        &repo_root().join("cassettes"),
        &dir.path().join("cassettes"),
    );
    dir
}

/// The newest report folder under `root/reports`.
fn newest_report(root: &Path) -> PathBuf {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(root.join("reports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    folders.sort();
    folders.pop().unwrap()
}

/// The rows of the newest report's `runs.csv`.
fn report_rows(root: &Path) -> Vec<csv::StringRecord> {
    let folder = newest_report(root);
    let mut reader = csv::Reader::from_path(folder.join("runs.csv")).unwrap();
    reader.records().map(Result::unwrap).collect()
}

fn column(root: &Path, name: &str) -> usize {
    let folder = newest_report(root);
    let mut reader = csv::Reader::from_path(folder.join("runs.csv")).unwrap();
    reader
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}"))
}

/// A change to the text of `edit`'s result: every recorded conversation that holds an edit call
/// now differs at the request that carries its result, and only there. The recordings are
/// rewritten as if they had been made with a tool whose success text said "applied" where
/// today's says "replaced": for the comparison that is the same as changing today's tool.
#[test]
#[ignore = "slow: .ci/run runs it (`cargo test -- --ignored`)"]
fn an_edit_text_change_drifts_with_every_outcome_held() {
    let project = shipped_copy();
    let root = project.path();
    let mut with_edits = 0;
    for file in cassettes::cassette_files(&root.join("cassettes")) {
        let text = std::fs::read_to_string(&file).unwrap();
        if text.contains("Successfully replaced") {
            with_edits += 1;
        }
        std::fs::write(
            &file,
            text.replace("Successfully replaced", "Successfully applied"),
        )
        .unwrap();
    }
    assert!(with_edits >= 8, "the shipped suite has edits in most runs");

    // Strict replay (of one task's four runs: the run below shows every touched run diverging):
    // a touched run diverges, and the harness exits as "some run did not pass".
    let (code, _, stderr) = harness(root, &["run", "tasks", "-q", "--task", "sh-args"]);
    assert_eq!(code, 100, "{stderr}");
    let strict = report_rows(root);
    let (outcome, kind) = (column(root, "outcome"), column(root, "divergence_kind"));
    assert_eq!(strict.len(), 4);
    for row in &strict {
        assert_eq!(
            (&row[outcome], &row[kind]),
            ("diverged", "tool_result"),
            "{row:?}"
        );
    }

    let (code, stdout, stderr) = harness(root, &["run", "tasks", "--on-divergence", "continue"]);
    assert_eq!(
        code, 101,
        "drift only: stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stderr.contains("outcome held: passed → passed"), "{stderr}");
    assert!(stderr.contains("result of edit#1"), "{stderr}");
    let rows = report_rows(root);
    let (outcome, kind, turn, count, change, calls) = (
        column(root, "outcome"),
        column(root, "divergence_kind"),
        column(root, "divergence_turn"),
        column(root, "divergences"),
        column(root, "outcome_change"),
        column(root, "edit_calls"),
    );
    let mut drifted = 0;
    for row in &rows {
        assert_eq!(&row[outcome], "passed", "{row:?}");
        if &row[calls] == "0" {
            assert_eq!(
                &row[count], "0",
                "a run without edits does not drift: {row:?}"
            );
            continue;
        }
        drifted += 1;
        assert_eq!(&row[kind], "tool_result", "{row:?}");
        assert_eq!(&row[change], "held", "{row:?}");
        assert!(row[turn].parse::<u32>().unwrap() >= 2, "{row:?}");
    }
    assert_eq!(drifted, with_edits, "every run with an edit drifted");
    // Drifted runs are left out of the pass rate, in every report that shows it: each arm's
    // cell is the passes among the runs that count over those runs (every undrifted run
    // passed), never the drifted runs' passes over the rest.
    let provider = column(root, "provider");
    let mut counted: std::collections::BTreeMap<String, usize> = Default::default();
    for row in &rows {
        let entry = counted.entry(row[provider].to_owned()).or_default();
        if &row[count] == "0" {
            *entry += 1;
        }
    }
    let report = newest_report(root);
    let summary_md = std::fs::read_to_string(report.join("summary.md")).unwrap();
    let html = std::fs::read_to_string(report.join("report.html")).unwrap();
    let cell = regex::Regex::new(r"(\d+\.\d)% \((\d+)/(\d+)\)").unwrap();
    for (what, text) in [
        ("terminal", &stdout),
        ("summary.md", &summary_md),
        ("report.html", &html),
    ] {
        for (arm, n) in &counted {
            let want = format!("100.0% ({n}/{n})");
            assert!(
                text.contains(&want),
                "{what} lacks {want} for {arm}:\n{text}"
            );
        }
        for c in cell.captures_iter(text) {
            let (passed, of): (u32, u32) = (c[2].parse().unwrap(), c[3].parse().unwrap());
            assert!(passed <= of, "{what}: {} in\n{text}", &c[0]);
        }
    }
    // The run folder explains each difference with a diff of the changed result.
    let divergence_mds: Vec<PathBuf> = walk(&report)
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "divergence.md"))
        .collect();
    assert_eq!(divergence_mds.len(), with_edits);
    let md = std::fs::read_to_string(&divergence_mds[0]).unwrap();
    assert!(
        md.contains("-Successfully applied") && md.contains("+Successfully replaced"),
        "{md}"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A change to `edit`'s matching that makes the shipped fuzzy-matched edits fail (`exact`
/// instead of Pi's fuzzy matching): the recorded actions run against today's tools, and the
/// runs whose fuzzy edit now fails report that their outcome changed.
#[test]
#[ignore = "slow: .ci/run runs it (`cargo test -- --ignored`)"]
fn a_matching_change_that_breaks_the_fuzzy_edits_changes_their_outcomes() {
    // The Python and shell tasks (the two with a fuzzy-matched edit and four without); the
    // Rust tasks, which build their fixture with cargo, add time and no case.
    let project = shipped_copy();
    let root = project.path();
    let (code, stdout, stderr) = harness(
        root,
        &[
            "run",
            "tasks",
            "--task",
            "py-*",
            "--task",
            "sh-*",
            "--on-divergence",
            "continue",
            "--edit-strategy",
            "exact",
        ],
    );
    assert_eq!(
        code, 102,
        "outcome changed: stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stderr.contains("cassette recorded with tool profile `pi` and edit strategy `pi`")
            || stderr.contains("edit strategy"),
        "the replay says up front that it runs under another strategy: {stderr}"
    );
    let rows = report_rows(root);
    let (task, outcome, change, fuzzy) = (
        column(root, "task"),
        column(root, "outcome"),
        column(root, "outcome_change"),
        column(root, "edit_calls_fuzzy"),
    );
    let changed: Vec<&csv::StringRecord> =
        rows.iter().filter(|r| &r[change] == "changed").collect();
    assert!(!changed.is_empty());
    for r in &changed {
        assert_ne!(&r[outcome], "passed", "{r:?}");
        assert!(["py-crlf", "py-slugify"].contains(&&r[task]), "{r:?}");
    }
    // Every run whose recording needed the fuzzy tier now has a failed edit and changed; the
    // rest held.
    assert_eq!(rows.len(), 24, "six tasks in four wire formats");
    for r in &rows {
        if ["py-crlf", "py-slugify"].contains(&&r[task]) {
            continue;
        }
        assert_eq!(&r[fuzzy], "0");
        assert!(["held", ""].contains(&&r[change]), "{r:?}");
    }
    assert!(
        stderr.contains("outcome changed: passed → failed"),
        "{stderr}"
    );
}

/// `--cassette-mode rerecord` against the scripted server: the matched prefix comes from the
/// cassette, the rest from the live server (whose script answers differently after the
/// divergence point), and the result waits as a `.new` cassette; `harness review --accept`
/// makes it the cassette, which then replays clean.
#[tokio::test]
async fn rerecord_writes_new_cassettes_that_review_accepts_and_that_replay_clean() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("tasks")).unwrap();
    cp(
        &repo_root().join("tasks/py-median"),
        &root.join("tasks/py-median"),
    );
    let suite = tasks::load_suite(&root.join("tasks")).unwrap();
    let task = Arc::new(suite.tasks.into_iter().next().unwrap());
    let script = |final_text: &str| {
        let mut text =
            std::fs::read_to_string(repo_root().join("tests/scripts/py-median.yaml")).unwrap();
        text.push_str(&format!("  - text: {final_text:?}\n"));
        // The shipped script ends with a text turn; the extra one is never reached.
        testkit::parse_script(&text, "py-median.yaml").unwrap()
    };
    let options = |mode, server: &testkit::ScriptedServer| {
        let mut o = RunOptions::new(root.join("cassettes"), root.join("reports/r"));
        o.tasks_dir = root.join("tasks");
        o.mode = mode;
        o.models = vec!["anthropic/scripted-claude".parse().unwrap()];
        o.base_url = Some(server.base_url());
        o.key_env = Arc::new(|_| Some("scripted-server-key".to_owned()));
        o
    };
    let run = |o: RunOptions| {
        let task = task.clone();
        async move {
            let planned = runner::plan_runs(&[task], &o).unwrap();
            runner::execute(planned, &o, Arc::new(Silent))
                .await
                .remove(0)
        }
    };

    // Record once.
    let server = testkit::start(script("unused"), ApiKind::AnthropicMessages).await;
    let recorded: RunRecord = run(options(CassetteMode::Record, &server)).await;
    assert_eq!(recorded.outcome, Outcome::Passed, "{}", recorded.reason);
    let cassette = cassettes::cassette_path(
        &root.join("cassettes"),
        "py-median",
        "anthropic",
        "scripted-claude",
    );
    let original = std::fs::read_to_string(&cassette).unwrap();

    // The fixture changes: the file the model reads in turn 1 has a new line, so request 2
    // differs. The live part answers from turn 2 of a script whose last words are new.
    let test_file = root.join("tasks/py-median/repo/tests/test_stats.py");
    let mut text = std::fs::read_to_string(&test_file).unwrap();
    text.push_str("# a line the recording never saw\n");
    std::fs::write(&test_file, text).unwrap();
    let mut changed = script("unused");
    let last = changed.turns.len() - 2;
    changed.turns[last].text = Some("Fixed it; the new line in the tests changes nothing.".into());
    let server = testkit::start_from(changed, ApiKind::AnthropicMessages, 1).await;
    let rerecorded = run(options(CassetteMode::Rerecord, &server)).await;
    assert_eq!(rerecorded.outcome, Outcome::Passed, "{}", rerecorded.reason);
    assert_eq!(server.requests().len(), 4, "requests 2 to 5 went live");
    let pending = runner::pending_path(&cassette);
    assert!(pending.exists(), "{:?}", rerecorded.detail);
    // The note names the review that finds it: this run's cassettes are not under `cassettes/`
    // of the current folder, so the command names their folder.
    let folder = pending.parent().unwrap().display().to_string();
    assert!(
        rerecorded
            .detail
            .as_deref()
            .is_some_and(|d| d.contains(&format!("for `harness review {folder}`"))),
        "{:?}",
        rerecorded.detail
    );
    assert_eq!(
        std::fs::read_to_string(&cassette).unwrap(),
        original,
        "the old cassette is untouched"
    );

    // Review lists it with what changed, then accepts it.
    let (code, stdout, stderr) = harness(root, &["review"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("re-recorded cassette"), "{stdout}");
    assert!(
        stdout.contains("a line the recording never saw"),
        "the diff shows the change: {stdout}"
    );
    let (code, _, stderr) = harness(root, &["review", "--accept", "py-median/*"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!pending.exists());
    assert_ne!(std::fs::read_to_string(&cassette).unwrap(), original);

    // The accepted cassette replays clean, under the strictest policy.
    let mut replay = options(CassetteMode::Replay, &server);
    replay.on_divergence = OnDivergence::Stop;
    replay.report_dir = root.join("reports/replayed");
    let replayed = run(replay).await;
    assert_eq!(replayed.outcome, Outcome::Passed, "{}", replayed.reason);
    let transcript = std::fs::read_to_string(
        root.join("reports/replayed")
            .join(&replayed.transcript_path),
    )
    .unwrap();
    assert!(
        transcript.contains("Fixed it; the new line in the tests changes nothing."),
        "the live part's new answer is in the cassette: {transcript}"
    );
    assert_eq!(replayed.divergences, 0);
    assert_eq!(replayed.outcome_change, Some(OutcomeChange::Held));

    // Under CI a re-recording writes nothing and says what it would re-record.
    std::fs::write(&test_file, "# changed again\n").unwrap();
    let mut ci = options(CassetteMode::Rerecord, &server);
    ci.ci = true;
    let previewed = run(ci).await;
    assert!(!pending.exists());
    assert!(
        previewed
            .detail
            .unwrap_or_default()
            .contains("would be re-recorded from request 2"),
    );
}

/// Without a network, a re-recording that has to go live fails that run with a clear message
/// and leaves the old cassette untouched.
#[tokio::test]
async fn rerecord_without_a_server_fails_the_run_and_keeps_the_cassette() {
    let project = shipped_copy();
    let root = project.path();
    let test_file = root.join("tasks/py-median/repo/tests/test_stats.py");
    std::fs::write(&test_file, "# not the recorded tests\n").unwrap();
    let suite = tasks::load_suite(&root.join("tasks")).unwrap();
    let task = Arc::new(
        suite
            .tasks
            .into_iter()
            .find(|t| t.id == "py-median")
            .unwrap(),
    );
    let mut o = RunOptions::new(root.join("cassettes"), root.join("reports/r"));
    o.mode = CassetteMode::Rerecord;
    o.models = vec!["anthropic/scripted-claude".parse().unwrap()];
    // A port nothing listens on.
    o.base_url = Some("http://127.0.0.1:9".to_owned());
    o.key_env = Arc::new(|_| Some("k-not-a-secret".to_owned()));
    o.retry = harness::providers::retry::RetryPolicy::default().without_waiting();
    let cassette = cassettes::cassette_path(
        &root.join("cassettes"),
        "py-median",
        "anthropic",
        "scripted-claude",
    );
    let before = std::fs::read_to_string(&cassette).unwrap();
    let planned = runner::plan_runs(&[task], &o).unwrap();
    let r = runner::execute(planned, &o, Arc::new(Silent))
        .await
        .remove(0);
    assert_eq!(r.outcome, Outcome::Error, "{}", r.reason);
    assert_eq!(
        r.error_kind.map(|k| k.name()),
        Some("connection_failed"),
        "{}",
        r.reason
    );
    let detail = r.detail.unwrap_or_default();
    assert!(detail.contains("nothing was re-recorded"), "{detail}");
    assert_eq!(std::fs::read_to_string(&cassette).unwrap(), before);
    assert!(!runner::pending_path(&cassette).exists());
}

/// A stream recorded short (its final event gone, or no events at all) is a broken cassette, in
/// every wire format: the replay is an infrastructure error naming the file and the
/// interaction (not a divergence at the next request), and `harness cassettes check` lists it.
#[test]
fn a_stream_recorded_short_is_a_broken_cassette_not_a_divergence() {
    use harness::cassettes::format::{Cassette, ResponseBody};
    let project = shipped_copy();
    let root = project.path();
    let dir = root.join("cassettes/py-median");
    // (file, interaction index, events kept: `None` for all but the last, else that many)
    let cuts = [
        ("anthropic--scripted-claude.yaml", 1, None),
        ("openai--scripted-gpt.yaml", 0, Some(0)),
        ("google--scripted-gemini.yaml", 4, None),
        ("openai-responses--scripted-gpt.yaml", 2, None),
    ];
    for (file, index, keep) in cuts {
        let path = dir.join(file);
        let mut cassette = Cassette::load(&path).unwrap();
        let ResponseBody::Sse { events, .. } = &mut cassette.interactions[index].response.body
        else {
            panic!("{file}: not a stream");
        };
        events.truncate(keep.unwrap_or(events.len() - 1));
        std::fs::write(&path, cassette.to_yaml().unwrap()).unwrap();
    }
    let expected = [
        (
            "anthropic",
            "interaction 2 of 5: its stream ends without `message_stop`",
        ),
        ("openai", "interaction 1 of 5: its stream has no events"),
        (
            "google",
            "interaction 5 of 5: its stream ends without a chunk with a `finishReason`",
        ),
        (
            "openai-responses",
            "interaction 3 of 5: its stream ends without `response.completed`",
        ),
    ];

    let (code, stdout, stderr) = harness(root, &["run", "tasks", "--task", "py-median"]);
    assert_eq!(code, 100, "{stdout}\n{stderr}");
    let rows = report_rows(root);
    let (provider, outcome, kind, reason) = (
        column(root, "provider"),
        column(root, "outcome"),
        column(root, "error_kind"),
        column(root, "reason"),
    );
    assert_eq!(rows.len(), 4);
    for (p, why) in expected {
        let row = rows.iter().find(|r| &r[provider] == p).unwrap();
        assert_eq!(
            (&row[outcome], &row[kind]),
            ("error", "cassette"),
            "{row:?}"
        );
        let file = cuts
            .iter()
            .find(|c| c.0.starts_with(&format!("{p}--")))
            .unwrap()
            .0;
        assert!(
            row[reason].contains(&format!(
                "cassette `cassettes/py-median/{file}` is broken: {why} (the file was cut short \
                 or edited)"
            )),
            "{p}: {}",
            &row[reason]
        );
    }

    let (code, stdout, _) = harness(root, &["cassettes", "check"]);
    assert_eq!(code, 100, "{stdout}");
    for (file, _, _) in cuts {
        let why = expected
            .iter()
            .find(|e| file.starts_with(&format!("{}--", e.0)))
            .unwrap()
            .1;
        let line = format!(
            "cassettes/py-median/{file}: is broken: {why} (the file was cut short or edited); \
             its replays fail until it is recorded again"
        );
        assert!(stdout.contains(&line), "{line}\nnot in:\n{stdout}");
    }
}

/// Cassettes that are empty, truncated, of an unknown version, or hand-edited into an
/// inconsistent conversation each fail their own run with a message naming the file (and the
/// interaction), while the good cassettes of the same task replay; `harness cassettes check`
/// lists the same files before any run.
#[test]
#[ignore = "slow: .ci/run runs it (`cargo test -- --ignored`)"]
fn broken_cassettes_fail_alone_and_say_what_is_wrong() {
    let project = shipped_copy();
    let root = project.path();
    let dir = root.join("cassettes/py-median");
    std::fs::write(dir.join("anthropic--scripted-claude.yaml"), "").unwrap();
    let openai = std::fs::read_to_string(dir.join("openai--scripted-gpt.yaml")).unwrap();
    std::fs::write(
        dir.join("openai--scripted-gpt.yaml"),
        &openai[..openai.len() / 2],
    )
    .unwrap();
    // A file that holds another model's recording than its name says.
    std::fs::create_dir_all(root.join("cassettes/sh-args")).unwrap();
    std::fs::write(
        root.join("cassettes/sh-args/anthropic--scripted-claude.yaml"),
        std::fs::read_to_string(root.join("cassettes/sh-args/openai--scripted-gpt.yaml")).unwrap(),
    )
    .unwrap();
    let gemini = std::fs::read_to_string(dir.join("google--scripted-gemini.yaml")).unwrap();
    std::fs::write(
        dir.join("google--scripted-gemini.yaml"),
        gemini.replacen("format_version: 2", "format_version: 9", 1),
    )
    .unwrap();
    let responses =
        std::fs::read_to_string(dir.join("openai-responses--scripted-gpt.yaml")).unwrap();
    assert!(responses.contains("keep: "), "format 2 with deltas");
    let bad_keep = regex::Regex::new(r"keep: \d+").unwrap();
    std::fs::write(
        dir.join("openai-responses--scripted-gpt.yaml"),
        bad_keep.replace(&responses, "keep: 999").into_owned(),
    )
    .unwrap();

    let (code, stdout, _) = harness(root, &["cassettes", "check"]);
    assert_eq!(code, 100, "{stdout}");
    for expected in [
        "anthropic--scripted-claude.yaml: cassette",
        "is an empty file",
        "format_version 9",
        "records openai/scripted-gpt but is named `anthropic--scripted-claude.yaml`",
    ] {
        assert!(stdout.contains(expected), "{expected}: {stdout}");
    }

    let (code, stdout, stderr) = harness(
        root,
        &["run", "tasks", "--task", "py-*", "--task", "sh-args"],
    );
    assert_eq!(code, 100, "{stdout}\n{stderr}");
    let rows = report_rows(root);
    let (task, provider, outcome, reason) = (
        column(root, "task"),
        column(root, "provider"),
        column(root, "outcome"),
        column(root, "reason"),
    );
    let reason_of = |p: &str| {
        rows.iter()
            .find(|r| &r[task] == "py-median" && &r[provider] == p)
            .map(|r| (r[outcome].to_owned(), r[reason].to_owned()))
            .unwrap()
    };
    let (o, why) = reason_of("anthropic");
    assert_eq!(o, "error");
    assert!(why.contains("is an empty file"), "{why}");
    let (o, why) = reason_of("openai");
    assert_eq!(o, "error");
    assert!(why.contains("openai--scripted-gpt.yaml"), "{why}");
    let (_, why) = reason_of("google");
    assert!(why.contains("format_version 9"), "{why}");
    let (_, why) = reason_of("openai-responses");
    assert!(
        why.contains("interaction 1 (request 2)") && why.contains("keep"),
        "{why}"
    );
    let misnamed = rows
        .iter()
        .find(|r| &r[task] == "sh-args" && &r[provider] == "anthropic")
        .unwrap();
    assert_eq!(&misnamed[outcome], "error");
    assert!(
        misnamed[reason].contains("records openai/scripted-gpt"),
        "{misnamed:?}"
    );
    // The other runs replayed as usual.
    let others: Vec<&csv::StringRecord> = rows
        .iter()
        .filter(|r| {
            &r[task] != "py-median" && !(&r[task] == "sh-args" && &r[provider] == "anthropic")
        })
        .collect();
    assert!(others.len() >= 12);
    assert!(others.iter().all(|r| &r[outcome] == "passed"), "{others:?}");
}

/// Bash's full-output file lives in a per-run temp folder; the cassette records it under a fixed
/// placeholder, and the replay, in another temp folder, matches.
#[tokio::test]
async fn the_full_output_path_is_a_placeholder_in_the_cassette() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tasks");
    testkit::write_trivial_task(&suite).unwrap();
    let task = Arc::new(tasks::load_suite(&suite).unwrap().tasks.remove(0));
    let script = testkit::parse_script(
        "turns:\n  - tool_calls:\n      - name: bash\n        arguments: {command: 'seq 1 5000'}\n  - text: done\n",
        "big.yaml",
    )
    .unwrap();
    let server = testkit::start(script, ApiKind::AnthropicMessages).await;
    let mut o = RunOptions::new(dir.path().join("cassettes"), dir.path().join("reports/a"));
    o.mode = CassetteMode::Record;
    o.models = vec!["anthropic/scripted-claude".parse().unwrap()];
    o.base_url = Some(server.base_url());
    o.key_env = Arc::new(|_| Some("scripted-server-key".to_owned()));
    let planned = runner::plan_runs(std::slice::from_ref(&task), &o).unwrap();
    let recorded = runner::execute(planned, &o, Arc::new(Silent))
        .await
        .remove(0);
    assert_eq!(recorded.outcome, Outcome::Passed, "{}", recorded.reason);
    let path = cassettes::cassette_path(&o.cassettes_dir, &task.id, "anthropic", "scripted-claude");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("Full output: /tmp/harness-bash/pi-bash-"),
        "{text}"
    );
    let tmp = std::env::temp_dir().join("harness-bash-");
    assert!(
        !text.contains(&*tmp.to_string_lossy()),
        "no host temp folder in the cassette"
    );

    o.mode = CassetteMode::Replay;
    o.report_dir = dir.path().join("reports/b");
    let planned = runner::plan_runs(std::slice::from_ref(&task), &o).unwrap();
    let replayed = runner::execute(planned, &o, Arc::new(Silent))
        .await
        .remove(0);
    assert_eq!(replayed.outcome, Outcome::Passed, "{}", replayed.reason);
    assert_eq!(replayed.divergences, 0);
}

/// `cassettes check` reads the newest report for recordings that went on past the replay: a run
/// that stopped at a divergence, or ran under another edit strategy than its recording, says
/// nothing about that (no finding); a clean replay cut short by a smaller turn limit does.
#[test]
fn cassettes_check_reads_unused_interactions_only_from_replays_of_the_recording() {
    let project = shipped_copy();
    let root = project.path();
    // Under `exact`, py-slugify's fuzzy edit fails: the replay diverges and stops there.
    let (code, stdout, stderr) = harness(
        root,
        &[
            "run",
            "tasks",
            "--task",
            "py-slugify",
            "--edit-strategy",
            "exact",
        ],
    );
    assert_ne!(code, 0, "{stdout}\n{stderr}");
    let unused = column(root, "unused_interactions");
    assert!(
        report_rows(root).iter().any(|r| &r[unused] != "0"),
        "the diverged replays left interactions unused"
    );
    let (code, stdout, stderr) = harness(root, &["cassettes", "check"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stderr.contains("no problems"), "{stderr}");

    // The same task allowed two turns: each replay ends early with the recording unused.
    let yaml = root.join("tasks/py-slugify/task.yaml");
    let text = std::fs::read_to_string(&yaml).unwrap();
    std::fs::write(&yaml, text.replace("turns: 12", "turns: 2")).unwrap();
    harness(root, &["run", "tasks", "--task", "py-slugify"]);
    let (code, stdout, stderr) = harness(root, &["cassettes", "check"]);
    assert_eq!(code, 100, "{stdout}\n{stderr}");
    assert_eq!(
        stdout.matches("recorded interactions unused").count(),
        4,
        "one per wire format: {stdout}"
    );
}
