//! The report folder of the shipped suite, as people and CI systems read it: `report.html` in a
//! real browser (headless Chromium), `junit.xml` against the JUnit schema CI systems use (with
//! `xmllint`), every `trajectory.json` against ATIF v1.4, `events.jsonl`, the GitHub step
//! summary, a folder written again from its run files alone, and `harness compare` of the suite
//! run with Pi's edit strategy against the same suite with `--edit-strategy exact`.
//!
//! The suite is run twice per test binary (once per strategy) and shared by the tests here, and
//! by the other tests that need the shipped suite's plain replay (`run.rs`, `edits_cli.rs`). The
//! browser and schema tests skip, saying so on stderr, when Chromium or `xmllint` and the schema
//! are missing; `.ci/run` installs them and sets `HARNESS_REQUIRE_BROWSER=1` and
//! `HARNESS_REQUIRE_XMLLINT=1`, which turn a skip into a failure.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use harness::reports::{self, ReportOptions, trajectory::atif};

use super::browser::{self, Browser};

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where these tests keep what they make (reports, the screenshot): under `target/tmp`.
fn artifacts() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report-files")
}

pub(super) struct Suite {
    /// The report folder of the shipped suite with Pi's edit strategy (`harness run tasks`,
    /// which exited 0).
    pub(super) pi: PathBuf,
    /// ... and with `--edit-strategy exact`.
    exact: PathBuf,
    /// stderr of the Pi run (progress lines).
    pi_stderr: String,
    /// What the Pi run appended to `$GITHUB_STEP_SUMMARY`.
    step_summary: String,
}

fn harness(args: &[&str], envs: &[(&str, &Path)]) -> (i32, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_harness"));
    command
        .args(args)
        .current_dir(repo_root())
        .env_remove("CI")
        .env_remove("HARNESS_CASSETTE_MODE")
        .env_remove("GITHUB_STEP_SUMMARY");
    for (key, value) in envs {
        command.env(key, value);
    }
    let out = command.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn only_folder(dir: &Path) -> PathBuf {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    folders.pop().unwrap()
}

/// The shipped suite replayed once per test binary, by `harness run tasks` and by `harness run
/// tasks --edit-strategy exact` at the same time.
pub(super) fn suite() -> &'static Suite {
    static SUITE: OnceLock<Suite> = OnceLock::new();
    SUITE.get_or_init(|| {
        let root = artifacts();
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let summary = root.join("step-summary.md");
        let (pi_dir, exact_dir) = (root.join("pi"), root.join("exact"));
        let exact = {
            let exact_dir = exact_dir.clone();
            std::thread::spawn(move || {
                harness(
                    &[
                        "run",
                        "tasks",
                        "--edit-strategy",
                        "exact",
                        "--reports",
                        exact_dir.to_str().unwrap(),
                    ],
                    &[],
                )
            })
        };
        let (code, stdout, pi_stderr) = harness(
            &["run", "tasks", "--reports", pi_dir.to_str().unwrap()],
            &[("GITHUB_STEP_SUMMARY", &summary)],
        );
        assert_eq!(code, 0, "{stdout}\n{pi_stderr}");
        let (code, stdout, stderr) = exact.join().unwrap();
        assert_eq!(code, 100, "the exact run has failures\n{stdout}\n{stderr}");
        Suite {
            pi: only_folder(&pi_dir),
            exact: only_folder(&exact_dir),
            pi_stderr,
            step_summary: std::fs::read_to_string(&summary).unwrap(),
        }
    })
}

/// The run folders of the shipped suite, from its `runs.csv`.
fn run_anchors(report: &Path) -> Vec<String> {
    let keys = reports::read_runs_csv(&report.join("runs.csv")).unwrap();
    assert_eq!(keys.len(), 36);
    keys.iter()
        .map(|k| {
            format!(
                "run-{}",
                harness::record::run_dir(&k.task_id, &k.provider, &k.model, k.epoch)
                    .trim_start_matches("runs/")
            )
        })
        .collect()
}

/// The run panel with id `run` is displayed, and its text holds each of `expected`.
fn assert_run_shown(page: &mut Browser, run: &str, expected: &[&str]) {
    assert_eq!(
        page.eval(&format!(
            "getComputedStyle(document.getElementById('{run}')).display"
        )),
        "block",
        "run {run} is displayed"
    );
    let text: String =
        serde_json::from_value(page.eval(&format!("document.getElementById('{run}').innerText")))
            .unwrap();
    for part in expected {
        assert!(text.contains(part), "`{part}` in run {run}:\n{text}");
    }
}

#[test]
#[ignore = "slow: .ci/run runs it (`cargo test -- --ignored`)"]
fn the_shipped_suite_leaves_every_file_and_can_be_written_again() {
    let suite = suite();
    let report = &suite.pi;
    for file in ["report.html", "junit.xml", "events.jsonl", "summary.md"] {
        assert!(report.join(file).is_file(), "{file}");
    }
    // Progress: one line per finished run on a stderr that is no terminal.
    let finished = suite
        .pi_stderr
        .lines()
        .filter(|l| l.starts_with('[') && l.contains("/36] "))
        .count();
    assert_eq!(finished, 36, "{}", suite.pi_stderr);
    // The step summary is summary.md.
    let summary = std::fs::read_to_string(report.join("summary.md")).unwrap();
    assert_eq!(suite.step_summary, format!("{summary}\n"));
    // events.jsonl: every event a JSON line, the suite's start first, every run's end.
    let events: Vec<serde_json::Value> = std::fs::read_to_string(report.join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events[0]["event"], "suite_started");
    assert_eq!(events[0]["runs"], 36);
    let ends = events
        .iter()
        .filter(|e| e["event"] == "run_finished")
        .count();
    assert_eq!(ends, 36);
    assert!(
        events
            .iter()
            .any(|e| e["agent"]["event"] == "tool_call_finished")
    );
    // Every run: its run file, and a trajectory that is valid ATIF v1.4.
    let files = reports::read_run_files(report).unwrap();
    assert_eq!(files.len(), 36);
    for file in &files {
        let dir = report.join(file.record.run_dir());
        let trajectory: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("trajectory.json")).unwrap())
                .unwrap();
        let errors = atif::validate(&trajectory);
        assert!(errors.is_empty(), "{}: {errors:?}", dir.display());
        let agent_steps = trajectory["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["source"] == "agent")
            .count();
        assert_eq!(agent_steps as u32, file.record.turns, "{}", dir.display());
        assert_eq!(file.edit_strategy.as_deref(), Some("pi"));
    }
    // The folder written again from its run files alone is the same, byte for byte.
    let copy = artifacts().join("rewritten");
    let _ = std::fs::remove_dir_all(&copy);
    let status = Command::new("cp")
        .arg("-a")
        .arg(report)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    for name in [
        "runs.csv",
        "summary.csv",
        "summary.md",
        "report.html",
        "junit.xml",
    ] {
        std::fs::remove_file(copy.join(name)).unwrap();
    }
    reports::rewrite_report(&copy, &ReportOptions::default()).unwrap();
    for name in ["summary.md", "report.html", "junit.xml"] {
        let a = std::fs::read_to_string(report.join(name)).unwrap();
        let b = std::fs::read_to_string(copy.join(name))
            .unwrap()
            .replace("rewritten", report.file_name().unwrap().to_str().unwrap());
        assert!(a == b, "{name} differs once written again");
    }
}

#[test]
#[ignore = "slow: .ci/run runs it (`cargo test -- --ignored`)"]
fn junit_xml_validates_against_the_junit_schema() {
    const VAR: &str = "HARNESS_REQUIRE_XMLLINT";
    let schema = std::env::var_os("HARNESS_JUNIT_XSD")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/junit-xsd/junit-10.xsd"));
    if Command::new("xmllint").arg("--version").output().is_err() {
        return browser::skip(
            VAR,
            "xmllint not found (install with apt-get install libxml2-utils)",
        );
    }
    if !schema.is_file() {
        return browser::skip(
            VAR,
            &format!(
                "the JUnit schema is not at {} (.ci/run fetches junit-10.xsd from pytest's source distribution)",
                schema.display()
            ),
        );
    }
    let suite = suite();
    for report in [&suite.pi, &suite.exact] {
        let out = Command::new("xmllint")
            .arg("--noout")
            .arg("--schema")
            .arg(&schema)
            .arg(report.join("junit.xml"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The exact run's failures carry the reason and the run's detail.
    let xml = std::fs::read_to_string(suite.exact.join("junit.xml")).unwrap();
    assert_eq!(xml.matches("<testcase ").count(), 36);
    assert_eq!(
        xml.matches("<failure type=\"diverged\"").count(),
        4,
        "{xml}"
    );
    assert!(
        xml.contains(
            "message=\"diverged: request 4 of 5 differs from the cassette: turn 3: result of edit#1 changed (now an error)"
        ),
        "{xml}"
    );
}

#[test]
#[ignore = "slow: .ci/run runs it (`cargo test -- --ignored`)"]
fn compare_lists_the_run_whose_fuzzy_edit_now_fails_and_exits_as_documented() {
    let suite = suite();
    let (pi, exact) = (suite.pi.to_str().unwrap(), suite.exact.to_str().unwrap());
    let out = artifacts().join("compare");
    let out_s = out.to_str().unwrap();
    let (code, stdout, stderr) = harness(
        &["compare", pi, exact, "--out", out_s, "--fail-on", "flip"],
        &[],
    );
    assert_eq!(
        code, 110,
        "a run flipped: exit::COMPARE_FLIPPED\n{stdout}\n{stderr}"
    );
    let flips: Vec<&str> = stdout.lines().filter(|l| l.starts_with("  py-")).collect();
    assert_eq!(flips.len(), 4, "py-slugify on each provider\n{stdout}");
    assert!(
        flips
            .iter()
            .all(|l| l.contains("py-slugify #1") && l.contains("passed → diverged"))
    );
    // b = 4 runs passed → not, c = 0: p = 2 · (1/2)^4 = 0.125 pooled, and 1.000 per provider.
    let md = std::fs::read_to_string(out.join("compare.md")).unwrap();
    assert!(
        md.contains("| all arms | all arms | 36 | 100.0% (36/36) | 88.9% (32/36) | -11.1 pp | [-33.3, +0.0] pp | 4 | 0 | 0.125 |"),
        "{md}"
    );
    assert!(md.contains("| anthropic/scripted-claude (pi) | anthropic/scripted-claude (exact) | 9 | 100.0% (9/9) | 88.9% (8/9) | -11.1 pp |"), "{md}");
    // Links to both transcripts resolve from the compare folder.
    let link = regex::Regex::new(r"\[base\]\(([^)]+)\)").unwrap();
    let target = link.captures(&md).expect("a link to the base transcript")[1].to_owned();
    assert!(out.join(&target).is_file(), "{target}");
    let csv = std::fs::read_to_string(out.join("compare.csv")).unwrap();
    assert!(
        csv.lines()
            .any(|l| l.contains(",true,36,") && l.contains(",0.125000,")),
        "{csv}"
    );
    let html = std::fs::read_to_string(out.join("compare.html")).unwrap();
    assert_eq!(
        html.matches("report.html#run-py-slugify--").count(),
        8,
        "both transcripts of 4 flips"
    );
    // Not significant at 5%: --fail-on regression passes, at 20% it fails; never never fails.
    let status = |extra: &[&str]| {
        let mut args = vec!["compare", pi, exact, "--out", out_s];
        args.extend_from_slice(extra);
        harness(&args, &[]).0
    };
    assert_eq!(status(&["--fail-on", "regression"]), 0);
    assert_eq!(status(&[]), 0, "the default is --fail-on regression");
    assert_eq!(status(&["--fail-on", "regression", "--alpha", "0.2"]), 111);
    assert_eq!(status(&["--fail-on", "never", "--alpha", "0.2"]), 0);
    // The other way round every flip is a fix: only any-flip fails.
    let back = |fail_on: &str| {
        harness(
            &["compare", exact, pi, "--out", out_s, "--fail-on", fail_on],
            &[],
        )
        .0
    };
    assert_eq!(back("flip"), 0);
    assert_eq!(back("any-flip"), 110);
    // The arms of one folder: the four providers agree.
    let (code, stdout, _) = harness(
        &["compare", pi, "--out", out_s, "--fail-on", "any-flip"],
        &[],
    );
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("0 run(s) flipped"), "{stdout}");
    // Bad input is a usage error naming the folder.
    let (code, _, stderr) = harness(&["compare", pi, "/nonexistent/report"], &[]);
    assert_eq!(code, 2);
    assert!(stderr.contains("/nonexistent/report"), "{stderr}");
}

#[test]
#[ignore = "slow: .ci/run runs it (`cargo test -- --ignored`)"]
fn the_report_opens_in_a_browser_without_errors_and_shows_a_run() {
    const VAR: &str = "HARNESS_REQUIRE_BROWSER";
    let Some(chromium) = browser::find() else {
        return browser::skip(
            VAR,
            "chromium not found (install with apt-get install chromium)",
        );
    };
    let suite = suite();
    let report = suite.pi.join("report.html");
    let mut page = Browser::launch(&chromium);
    page.open(&format!("file://{}", report.display()));
    // Every run of the suite is listed.
    let listed: Vec<String> =
        serde_json::from_value(page.eval(
            "Array.from(document.querySelectorAll('#runs tbody tr')).map(r => r.dataset.run)",
        ))
        .unwrap();
    let mut expected = run_anchors(&suite.pi);
    expected.sort();
    let mut sorted = listed.clone();
    sorted.sort();
    assert_eq!(sorted, expected);
    // The summary has a row per provider and the plots are drawn.
    assert_eq!(
        page.eval("document.querySelectorAll('table.summary')[0].tBodies[0].rows.length"),
        4
    );
    assert_eq!(
        page.eval("document.querySelectorAll('#plots svg').length"),
        5
    );
    // Filtering and sorting.
    page.eval("{ const f = document.getElementById('f-task'); f.value = 'py-'; f.dispatchEvent(new Event('input')); }");
    assert_eq!(
        page.eval("document.getElementById('shown').textContent"),
        "16"
    );
    page.eval("{ const f = document.getElementById('f-task'); f.value = ''; f.dispatchEvent(new Event('input')); }");
    page.eval("document.querySelectorAll('#runs thead th')[7].click(); document.querySelectorAll('#runs thead th')[7].click()");
    let tokens: Vec<f64> = serde_json::from_value(page.eval(
        "Array.from(document.querySelectorAll('#runs tbody tr')).map(r => Number(r.cells[7].dataset.v))",
    ))
    .unwrap();
    assert!(
        tokens.windows(2).all(|w| w[0] >= w[1]),
        "sorted by tokens, descending: {tokens:?}"
    );
    // Opening a run shows its transcript and its diff.
    let run = "run-py-slugify--anthropic--scripted-claude--e1";
    assert_eq!(
        page.eval(&format!(
            "getComputedStyle(document.getElementById('{run}')).display"
        )),
        "none",
        "a run's panel is closed until opened"
    );
    page.eval(&format!(
        "document.querySelector('a[href=\"#{run}\"]').click()"
    ));
    page.wait_until(
        &format!("getComputedStyle(document.getElementById('{run}')).display !== 'none'"),
        Duration::from_secs(30),
    );
    assert_run_shown(
        &mut page,
        run,
        &[
            "Transcript",
            "User",
            "Assistant · turn 1",
            "tool call",
            "slugify",
            "Diff",
            "Checks",
        ],
    );
    let diff_lines = page.eval(&format!(
        "Array.from(document.querySelectorAll('#{run} pre.diff span.add')).filter(s => s.offsetHeight > 0).length"
    ));
    assert!(
        diff_lines.as_u64().unwrap() > 0,
        "the diff shows added lines"
    );
    let screenshot = artifacts().join("report-open-run.png");
    page.screenshot(1400, 900, &screenshot);
    let _ = std::io::Write::write_all(
        &mut std::io::stderr(),
        format!("screenshot of the open report: {}\n", screenshot.display()).as_bytes(),
    );
    assert!(std::fs::metadata(&screenshot).unwrap().len() > 10_000);
    // The comparison view opens too.
    let out = artifacts().join("compare-browser");
    let (code, _, _) = harness(
        &[
            "compare",
            suite.pi.to_str().unwrap(),
            suite.exact.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--fail-on",
            "never",
        ],
        &[],
    );
    assert_eq!(code, 0);
    page.open(&format!("file://{}", out.join("compare.html").display()));
    assert_eq!(
        page.eval("document.querySelectorAll('tr.regressed').length"),
        4
    );
    let errors = page.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}

#[test]
#[ignore = "slow: .ci/run runs it (`cargo test -- --ignored`)"]
fn a_report_past_the_inline_limit_links_each_runs_page_and_both_open_in_a_browser() {
    const VAR: &str = "HARNESS_REQUIRE_BROWSER";
    let Some(chromium) = browser::find() else {
        return browser::skip(
            VAR,
            "chromium not found (install with apt-get install chromium)",
        );
    };
    // The shipped suite's report written again as a large one would be: every run on its page.
    let copy = artifacts().join("linked");
    let _ = std::fs::remove_dir_all(&copy);
    let status = Command::new("cp")
        .arg("-a")
        .arg(&suite().pi)
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    let options = ReportOptions {
        inline: reports::html::InlineLimit {
            runs: 10,
            ..Default::default()
        },
        ..ReportOptions::default()
    };
    reports::rewrite_report(&copy, &options).unwrap();
    let mut page = Browser::launch(&chromium);
    page.open(&format!("file://{}", copy.join("report.html").display()));
    assert_eq!(
        page.eval("document.querySelectorAll('#runs tbody tr').length"),
        36
    );
    assert_eq!(
        page.eval("document.querySelectorAll('section.run').length"),
        0
    );
    // A run's link opens its own page, which shows the run.
    let run = "run-py-slugify--anthropic--scripted-claude--e1";
    page.eval(&format!(
        "document.querySelector('tr[data-run=\"{run}\"] a').click()"
    ));
    page.wait_until(
        "location.href.endsWith('/run.html') && document.readyState === 'complete'",
        Duration::from_secs(30),
    );
    let url: String = serde_json::from_value(page.eval("location.href")).unwrap();
    assert!(
        url.ends_with("runs/py-slugify--anthropic--scripted-claude--e1/run.html"),
        "{url}"
    );
    assert_run_shown(
        &mut page,
        run,
        &[
            "Transcript",
            "Assistant · turn 1",
            "tool call",
            "Diff",
            "Checks",
        ],
    );
    let screenshot = artifacts().join("run-page.png");
    page.screenshot(1200, 900, &screenshot);
    assert!(std::fs::metadata(&screenshot).unwrap().len() > 10_000);
    // Back to the report, at the run's row.
    page.eval("document.querySelector('a.close').click()");
    page.wait_until(
        &format!(
            "location.href.endsWith('report.html#{run}') && document.querySelector('tr.current')"
        ),
        Duration::from_secs(30),
    );
    let url: String = serde_json::from_value(page.eval("location.href")).unwrap();
    assert!(url.ends_with(&format!("report.html#{run}")), "{url}");
    assert_eq!(
        page.eval("document.querySelector('tr.current').dataset.run"),
        run
    );
    let errors = page.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:#?}");
}
