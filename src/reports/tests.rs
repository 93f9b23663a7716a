//! Tests of the reports: CSV columns, the deterministic summary.md, transcripts, reading runs.csv back.

use std::time::Duration;

use serde_json::json;

use super::*;
use crate::agent::{AgentRun, StopCause, ToolCallRecord};
use crate::conversation::{
    AssistantBlock, AssistantMessage, Content, Message, StopReason, ToolCall, ToolResultMessage,
    Usage, UserContent,
};
use crate::record::RunFile;
use crate::record::{Outcome, RunRecord};
use crate::tools::{EditFailure, EditReport, MatchTier, ToolError, ToolResult};

use super::fixtures::Scenario;
pub(crate) use super::fixtures::rec;

pub(crate) fn records() -> Vec<RunRecord> {
    vec![
        rec("py-fix-median", "openai", "gpt-x", 1, Outcome::Failed),
        rec("py-fix-median", "anthropic", "claude-y", 2, Outcome::Passed),
        rec("py-fix-median", "anthropic", "claude-y", 1, Outcome::Passed),
        rec("rs-add-flag", "anthropic", "claude-y", 1, Outcome::Diverged),
        Scenario::new("rs-add-flag", "openai", "gpt-x", 1, Outcome::LimitReached)
            .no_edits()
            .unpriced()
            .record(),
        Scenario::new("rs-add-flag", "anthropic", "claude-y", 2, Outcome::Error)
            .rate_limited()
            .retries(4)
            .record(),
        Scenario::new("rs-add-flag", "openai", "gpt-x", 2, Outcome::Skipped).record(),
        Scenario::new("py-fix-median", "local", "qwen", 1, Outcome::Passed)
            .unpriced()
            .retries(1)
            .record(),
    ]
}

/// `runs.csv` without the timing columns.
fn without_timings(csv_text: &str) -> String {
    csv::without_timings(csv_text).unwrap()
}

#[test]
fn runs_csv_snapshot() {
    let records = records();
    let text = csv::runs_csv(&sorted(&records)).unwrap();
    // Every row has as many cells as the header.
    let width = csv::runs_columns().len();
    let mut reader = ::csv::Reader::from_reader(text.as_bytes());
    assert_eq!(reader.headers().unwrap().len(), width);
    assert_eq!(
        reader
            .records()
            .map(|r| r.unwrap().len())
            .collect::<Vec<_>>(),
        vec![width; records.len()]
    );
    insta::assert_snapshot!(without_timings(&text));
}

#[test]
fn timing_columns_hold_seconds() {
    let records = records();
    let text = csv::runs_csv(&sorted(&records)).unwrap();
    let mut reader = ::csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().unwrap().clone();
    let row = reader.records().next().unwrap().unwrap();
    let get = |name: &str| row[header.iter().position(|h| h == name).unwrap()].to_owned();
    assert_eq!(get("wall_seconds"), "12.345");
    assert_eq!(get("check_seconds"), "1.500");
}

#[test]
fn summary_csv_snapshot() {
    let records = records();
    insta::assert_snapshot!(csv::summary_csv(&sorted(&records)).unwrap());
}

#[test]
fn summary_md_snapshot() {
    let records = records();
    let md = markdown::summary_md(&sorted(&records));
    assert!(!md.contains("12.3"), "no timings in summary.md");
    insta::assert_snapshot!(md);
}

#[test]
fn summary_md_does_not_depend_on_record_order() {
    let records = records();
    let mut reversed = records.clone();
    reversed.reverse();
    assert_eq!(
        markdown::summary_md(&sorted(&records)),
        markdown::summary_md(&sorted(&reversed))
    );
}

#[test]
fn the_columns_doc_lists_every_column_in_order() {
    let documented = |section: &str| -> Vec<String> {
        let body = COLUMNS_DOC.split(&format!("## {section}")).nth(1).unwrap();
        let body = body.split("\n## ").next().unwrap();
        body.lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .map(|l| l.split('`').next().unwrap().to_owned())
            .collect()
    };
    assert_eq!(documented("runs.csv"), csv::runs_columns());
    assert_eq!(
        documented("summary.csv"),
        csv::SUMMARY_COLUMNS.map(String::from).to_vec()
    );
}

#[test]
fn terminal_summary_is_aligned_and_colour_is_optional() {
    let records = records();
    let plain = render_terminal_summary(&records, false);
    assert!(!plain.contains('\x1b'));
    insta::assert_snapshot!(plain);
    let coloured = render_terminal_summary(&records, true);
    assert!(coloured.contains("\x1b[32mpassed"));
    assert!(coloured.contains("\x1b[31mfailed"));
    let stripped = regex::Regex::new("\x1b\\[[0-9;]*m")
        .unwrap()
        .replace_all(&coloured, "");
    assert_eq!(stripped, plain);
}

fn agent_run() -> AgentRun {
    let call = ToolCall {
        id: "toolu_1".into(),
        name: "edit".into(),
        arguments: json!({"path": "calc.py", "edits": [{"oldText": "a + b", "newText": "b + a"}]}),
        thought_signature: None,
    };
    let result = ToolResult::error(ToolError {
        message: "Could not find the exact text in calc.py. The old text must match exactly including all whitespace and newlines.".into(),
        edit: Some(EditReport {
            strategy: "pi".into(),
            tiers: vec![MatchTier::Exact],
            located: Vec::new(),
            failure: Some(EditFailure::NotFound { index: 1 }),
        }),
    });
    AgentRun {
        messages: vec![
            Message::User {
                content: UserContent::Text("Fix the median.\nUse ```python``` fences.".into()),
            },
            Message::Assistant(AssistantMessage {
                content: vec![
                    AssistantBlock::Thinking {
                        thinking: "The bug is in calc.py.".into(),
                        signature: None,
                        redacted: false,
                    },
                    AssistantBlock::Text {
                        text: "Let me fix it.".into(),
                        signature: None,
                    },
                    AssistantBlock::ToolCall(call.clone()),
                ],
                api: "anthropic-messages".into(),
                provider: "anthropic".into(),
                model: "claude-y".into(),
                usage: Usage {
                    input: 100,
                    output: 20,
                    ..Usage::default()
                },
                stop_reason: StopReason::ToolUse,
                error_message: None,
                response_id: None,
            }),
            Message::ToolResult(ToolResultMessage {
                tool_call_id: "toolu_1".into(),
                tool_name: "edit".into(),
                content: result.content.clone(),
                is_error: true,
            }),
            Message::Assistant(AssistantMessage {
                content: vec![AssistantBlock::Text {
                    text: "I could not fix it.".into(),
                    signature: None,
                }],
                api: "anthropic-messages".into(),
                provider: "anthropic".into(),
                model: "claude-y".into(),
                usage: Usage::default(),
                stop_reason: StopReason::Stop,
                error_message: None,
                response_id: None,
            }),
        ],
        tool_calls: vec![ToolCallRecord {
            turn: 1,
            call,
            result,
            duration: Duration::from_millis(3),
        }],
        turns: 2,
        usage: Usage::default(),
        model_time: Duration::ZERO,
        tool_time: Duration::ZERO,
        stop: StopCause::Completed,
    }
}

/// The run file of `record` with [`agent_run`] as its transcript.
pub(crate) fn run_file(record: &RunRecord, system_prompt: Option<&str>, diff: &str) -> RunFile {
    let run = agent_run();
    RunFile::new(
        record.clone(),
        run.messages,
        run.tool_calls,
        diff.to_owned(),
        system_prompt.map(str::to_owned),
        Some("pi".to_owned()),
    )
}

#[test]
fn transcript_md_snapshot() {
    let records = records();
    let file = run_file(&records[0], Some("You are an expert coding assistant."), "");
    let md = transcript::transcript_md(&file);
    // The prompt holds a ``` run, so its fence is longer.
    assert!(md.contains("````text\nFix the median."), "{md}");
    insta::assert_snapshot!(md);
}

#[test]
fn panels_of_run_files_kept_from_reading_them_are_those_read_again() {
    // The run files read to complete their records are kept for report.html's panels while
    // they are small (`InlineLimit::held`); past it each is read again. The page is the same.
    let dir = tempfile::tempdir().unwrap();
    let records = records();
    let artifacts: Vec<RunFile> = records
        .iter()
        .enumerate()
        .map(|(i, r)| run_file(r, Some("You are an expert."), &format!("+line {i}\n")))
        .collect();
    let mut pages = Vec::new();
    for held in [u64::MAX, 0] {
        let out = dir.path().join(format!("held-{held}/20260101-000000"));
        let options = ReportOptions {
            inline: html::InlineLimit {
                held,
                ..Default::default()
            },
            ..ReportOptions::default()
        };
        write_report_with(&out, &records, &artifacts, &options).unwrap();
        let page = std::fs::read_to_string(out.join("report.html")).unwrap();
        assert_eq!(
            page.matches("<section class=\"run").count(),
            records.len(),
            "every panel inline"
        );
        assert!(
            page.contains("The bug is in calc.py."),
            "a transcript inline"
        );
        pages.push(page);
    }
    assert!(pages[0] == pages[1], "the pages differ");
}

#[test]
fn write_report_writes_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("reports/20260101-000000");
    let records = records();
    let artifacts = [run_file(&records[1], None, "diff --git a/x b/x\n")];
    let paths = write_report(&out, &records, &artifacts).unwrap();
    assert_eq!(paths.runs_csv, out.join("runs.csv"));
    assert_eq!(
        std::fs::read_to_string(&paths.runs_csv)
            .unwrap()
            .lines()
            .count(),
        records.len() + 1
    );
    assert_eq!(
        std::fs::read_to_string(&paths.summary_csv)
            .unwrap()
            .lines()
            .count(),
        // The header, three arms, then the three arms under each of the two tags.
        1 + 3 + 3 * 2
    );
    assert!(
        std::fs::read_to_string(&paths.summary_md)
            .unwrap()
            .starts_with("# Harness results")
    );
    let run_dir = out.join("runs/py-fix-median--anthropic--claude-y--e2");
    assert_eq!(paths.run_dirs, vec![run_dir.clone()]);
    assert_eq!(
        std::fs::read_to_string(run_dir.join("diff.patch")).unwrap(),
        "diff --git a/x b/x\n"
    );
    assert!(
        std::fs::read_to_string(run_dir.join("transcript.md"))
            .unwrap()
            .contains("## Assistant (turn 2)")
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("transcript.json")).unwrap())
            .unwrap();
    assert_eq!(json["messages"].as_array().unwrap().len(), 4);
    assert_eq!(
        json["tool_calls"][0]["result"]["edit"]["failure"]["kind"],
        "not_found"
    );
    assert_eq!(json["messages"][2]["content"][0], serde_json::to_value(Content::text(
        "Could not find the exact text in calc.py. The old text must match exactly including all whitespace and newlines."
    )).unwrap());
    // The run file holds what the run's other files are written from.
    let file: RunFile =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("run.json")).unwrap()).unwrap();
    assert_eq!(file, artifacts[0]);
    assert!(run_dir.join("trajectory.json").is_file());
    // Every other run got a folder holding its record alone, and no trajectory.
    for r in &records {
        let file = read_run_file(&out.join(r.run_dir()).join("run.json")).unwrap();
        assert_eq!(&file.record, r);
    }
    let skipped = out.join("runs/rs-add-flag--openai--gpt-x--e2");
    assert!(skipped.join("transcript.md").is_file());
    assert!(!skipped.join("trajectory.json").exists());
    assert_eq!(paths.report_html, Some(out.join("report.html")));
    assert_eq!(paths.junit_xml, Some(out.join("junit.xml")));
}

#[test]
fn a_report_is_written_again_from_its_run_folders_alone() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let records = records();
    let artifacts = [run_file(&records[1], None, "diff --git a/x b/x\n")];
    write_report(&out, &records, &artifacts).unwrap();
    let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
    const WRITTEN: [&str; 5] = [
        "runs.csv",
        "summary.csv",
        "summary.md",
        "report.html",
        "junit.xml",
    ];
    let before: Vec<String> = WRITTEN.iter().map(|f| read(f)).collect();
    for f in WRITTEN {
        std::fs::remove_file(out.join(f)).unwrap();
    }
    let paths = rewrite_report(&out, &ReportOptions::default()).unwrap();
    let after: Vec<String> = WRITTEN.iter().map(|f| read(f)).collect();
    assert_eq!(before, after);
    assert!(paths.run_dirs.is_empty());
    // Without the HTML and JUnit files when asked.
    let plain = dir.path().join("plain");
    let options = ReportOptions {
        html: false,
        junit: false,
        step_summary: Some(dir.path().join("step-summary.md")),
        ..ReportOptions::default()
    };
    let paths = write_report_with(&plain, &records, &[], &options).unwrap();
    assert_eq!((paths.report_html, paths.junit_xml), (None, None));
    assert!(!plain.join("report.html").exists());
    // The step summary got summary.md appended, twice after two reports.
    write_report_with(&plain, &records, &[], &options).unwrap();
    let step = std::fs::read_to_string(dir.path().join("step-summary.md")).unwrap();
    assert_eq!(step.matches("# Harness results").count(), 2);
    assert!(step.starts_with(&std::fs::read_to_string(plain.join("summary.md")).unwrap()));
    // A partial report says so first, in summary.md and report.html.
    let partial = dir.path().join("partial");
    let notice = ReportOptions {
        notice: Some("Interrupted: 2 of 5 runs finished".into()),
        ..ReportOptions::default()
    };
    write_report_with(&partial, &records, &[], &notice).unwrap();
    let md = std::fs::read_to_string(partial.join("summary.md")).unwrap();
    assert!(
        md.starts_with("> **Interrupted: 2 of 5 runs finished**\n\n# Harness results"),
        "{md}"
    );
    let html = std::fs::read_to_string(partial.join("report.html")).unwrap();
    assert!(
        html.contains(r#"<p class="notice" role="status">Interrupted: 2 of 5 runs finished</p>"#),
        "{html}"
    );
}

#[test]
fn a_newer_record_replaces_the_one_a_run_folder_holds() {
    let dir = tempfile::tempdir().unwrap();
    let records = records();
    write_run_artifacts(dir.path(), &run_file(&records[1], None, "")).unwrap();
    let mut noted = records.clone();
    noted[1].detail = Some("workspace kept at /tmp/x".into());
    write_report(dir.path(), &noted, &[]).unwrap();
    let file = read_run_file(&dir.path().join(noted[1].run_dir()).join("run.json")).unwrap();
    assert_eq!(file.record, noted[1]);
    assert_eq!(file.messages.len(), 4, "the transcript is kept");
    assert!(
        std::fs::read_to_string(dir.path().join(&noted[1].transcript_path))
            .unwrap()
            .contains("workspace kept at /tmp/x")
    );
}

/// The `href` values of `<a>` elements in `html`, in order.
fn hrefs(html: &str) -> Vec<String> {
    html.split("<a ")
        .skip(1)
        .filter_map(|a| {
            let start = a.find("href=\"")? + 6;
            Some(a[start..start + a[start..].find('"')?].to_owned())
        })
        .collect()
}

#[test]
fn past_the_inline_limit_each_run_has_its_own_page_and_report_html_links_it() {
    let dir = tempfile::tempdir().unwrap();
    let records = records();
    let artifacts = [run_file(
        &records[1],
        Some("system"),
        "diff --git a/x b/x\n+new\n",
    )];
    // Inline by default: every panel in the page, no run page.
    let inline = dir.path().join("inline");
    write_report(&inline, &records, &artifacts).unwrap();
    let page = std::fs::read_to_string(inline.join("report.html")).unwrap();
    assert_eq!(
        page.matches("<section class=\"run\"").count(),
        records.len()
    );
    assert!(
        !inline
            .join(records[1].run_dir())
            .join(html::RUN_HTML)
            .exists()
    );
    // Past the number of runs, and past the bytes of run files: linked.
    for limit in [
        html::InlineLimit {
            runs: records.len() - 1,
            bytes: u64::MAX,
            ..Default::default()
        },
        html::InlineLimit {
            runs: usize::MAX,
            bytes: 100,
            ..Default::default()
        },
    ] {
        let out = dir.path().join(format!("linked-{}", limit.runs));
        // As the runner does: a run with differences from its cassette has its divergence.md.
        for r in records.iter().filter(|r| r.divergences > 0) {
            write_run_file(&out, r, "divergence.md", "# differences\n".into()).unwrap();
        }
        let options = ReportOptions {
            inline: limit,
            ..ReportOptions::default()
        };
        write_report_with(&out, &records, &artifacts, &options).unwrap();
        let page = std::fs::read_to_string(out.join("report.html")).unwrap();
        assert_eq!(page.matches("<section class=\"run").count(), 0, "{limit:?}");
        assert!(page.contains("on its own page"), "{limit:?}");
        assert!(
            !page.contains("The bug is in calc.py."),
            "no transcript inline"
        );
        for r in &records {
            let anchor = html::run_anchor(r);
            let own = format!("{}/{}", r.run_dir(), html::RUN_HTML);
            // The row links the page and keeps the run's anchor for links from elsewhere.
            assert!(page.contains(&format!("href=\"{own}\"")), "{own}");
            assert!(page.contains(&format!("<tr id=\"{anchor}\"")), "{anchor}");
            let run_page = std::fs::read_to_string(out.join(&own)).unwrap();
            assert!(run_page.contains("<section class=\"run page\""), "{own}");
            // Every link of the run page leads to a file beside it or back to a run's row.
            for href in hrefs(&run_page) {
                let target = href.split('#').next().unwrap();
                assert!(
                    out.join(r.run_dir()).join(target).is_file(),
                    "{own} links {href}, which is missing"
                );
            }
            assert!(run_page.contains(&format!("href=\"../../report.html#{anchor}\"")));
        }
        // The run with a transcript shows it on its page, with its diff.
        let own =
            std::fs::read_to_string(out.join(records[1].run_dir()).join(html::RUN_HTML)).unwrap();
        assert!(own.contains("The bug is in calc.py."), "{own}");
        assert!(own.contains("<span class=\"add\">+new\n</span>"));
        // Written again from its run folders, the same bytes.
        let before = std::fs::read_to_string(out.join("report.html")).unwrap();
        rewrite_report(&out, &options).unwrap();
        assert_eq!(
            before,
            std::fs::read_to_string(out.join("report.html")).unwrap()
        );
    }
}

#[test]
fn run_records_alone_are_the_records_of_the_run_files() {
    let dir = tempfile::tempdir().unwrap();
    let records = records();
    write_report(dir.path(), &records, &[run_file(&records[1], None, "")]).unwrap();
    let files: Vec<RunRecord> = read_run_files(dir.path())
        .unwrap()
        .into_iter()
        .map(|f| f.record)
        .collect();
    assert_eq!(read_run_records(dir.path()).unwrap(), files);
    assert_eq!(files.len(), records.len());
}

#[test]
fn a_malformed_run_file_names_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("runs/x--p--m--e1");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("run.json"), "{not json").unwrap();
    let err = read_run_files(dir.path()).unwrap_err().to_string();
    assert!(err.contains("runs/x--p--m--e1/run.json"), "{err}");
    let err = read_run_files(&dir.path().join("missing"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing"), "{err}");
}

#[test]
fn a_report_into_an_unwritable_place_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let err = write_report(&file.join("sub"), &records(), &[]).unwrap_err();
    assert!(err.to_string().contains("not-a-dir"), "{err}");
}

fn summary_of(records: &[RunRecord], provider: &str) -> ModelSummary {
    summarise(&sorted(records))
        .into_iter()
        .find(|s| s.provider == provider)
        .unwrap()
}

#[test]
fn pass_rates_leave_out_infrastructure_errors_and_skipped_runs() {
    let records = records();
    let claude = summary_of(&records, "anthropic");
    // Four runs: 2 passed, 1 diverged, 1 rate-limited error; only the passed ones count.
    assert_eq!(claude.runs, 4);
    assert_eq!(claude.count(Outcome::Error), 1);
    assert_eq!(claude.infra_errors, 1);
    assert_eq!(claude.counted, 2);
    assert_eq!(claude.pass_rate(), Some(1.0));
    assert_eq!(
        claude.pass_rate_interval(),
        crate::stats::wilson_interval(2, 2, crate::stats::Z_95)
    );
    assert_eq!(claude.retries, 4);
    assert_eq!(claude.attempts, 20);
    // pass@1 per task: py-fix-median 2/2; rs-add-flag's only run diverged and does not count.
    // pass@2: only py-fix-median has 2 runs that count.
    assert_eq!(claude.k(), Some(2));
    assert_eq!(claude.pass_at_1(), Some(1.0));
    assert_eq!(claude.pass_at_k(), Some(1.0));
    assert_eq!(claude.pass_at_k_tasks(), Some((1, 1)));

    let gpt = summary_of(&records, "openai");
    assert_eq!(gpt.runs, 3);
    assert_eq!(gpt.count(Outcome::Skipped), 1);
    assert_eq!(gpt.infra_errors, 0);
    assert_eq!(gpt.counted, 2);
    assert_eq!(gpt.pass_rate(), Some(0.0));
    assert_eq!(gpt.pass_at_k(), None, "no task has 2 runs that count");

    let local = summary_of(&records, "local");
    assert_eq!(local.k(), None, "a single epoch has no pass@k");
    assert_eq!(local.pass_at_k_tasks(), None);
    assert_eq!(local.cost, None);
}

#[test]
fn a_model_error_counts_against_the_model() {
    let refused = rec("t", "p", "m", 1, Outcome::Error);
    assert_eq!(
        refused.error_kind,
        Some(crate::record::ErrorKind::ModelError)
    );
    let passed = rec("t", "p", "m", 2, Outcome::Passed);
    let records = [refused, passed];
    let s = &summarise(&sorted(&records))[0];
    assert_eq!((s.infra_errors, s.counted), (0, 2));
    assert_eq!(s.pass_rate(), Some(0.5));
    // n = 2, c = 1, k = 2: 1 - C(1,2)/C(2,2) = 1.
    assert_eq!(s.pass_at_k(), Some(1.0));
}

#[test]
fn only_skipped_or_infra_runs_give_no_pass_rate() {
    let records = [crate::record::RunRecord::skipped(
        "t",
        "p",
        "m",
        1,
        "budget spent",
    )];
    let s = &summarise(&sorted(&records))[0];
    assert_eq!(s.pass_rate(), None);
    assert_eq!(s.pass_rate_interval(), None);
    let row = csv::summary_row(s);
    let get = |name: &str| {
        row[csv::SUMMARY_COLUMNS
            .iter()
            .position(|c| *c == name)
            .unwrap()]
        .clone()
    };
    assert_eq!(get("pass_rate"), "");
    assert_eq!(get("skipped"), "1");
    assert_eq!(get("cost_usd"), "");
    let md = markdown::summary_md(&sorted(&records));
    assert!(
        md.contains("| p | m | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 1 | - | - | - | - | - | 0 | - |"),
        "{md}"
    );
    assert!(md.contains("Total cost: -."), "{md}");
}

#[test]
fn cost_totals_say_when_a_price_is_missing() {
    let records = records();
    let summaries = summarise(&sorted(&records));
    let total = CostTotal::of(&summaries);
    assert_eq!(total.unpriced, 1);
    let known = total.known.unwrap();
    // Four priced runs of 57,400 tokens at $3/$15/$0.30/$3.75 per million (input, output,
    // cache read, cache write), and a rate-limited one that spent nothing.
    let per_run = (12_000.0 * 3.0 + 3_400.0 * 15.0 + 40_000.0 * 0.3 + 2_000.0 * 3.75) / 1e6;
    assert!((known - 4.0 * per_run).abs() < 1e-12, "{known}");
    assert_eq!(total.display(4), "$0.4260 (+ 1 pair without a price)");
    assert_eq!(CostTotal::default().display(4), "-");
}

#[test]
fn read_runs_csv_round_trips_write_report() {
    let dir = tempfile::tempdir().unwrap();
    let records = records();
    let paths = write_report(dir.path(), &records, &[]).unwrap();
    let keys = read_runs_csv(&paths.runs_csv).unwrap();
    let expected: Vec<RunKey> = sorted(&records)
        .into_iter()
        .map(|r| RunKey {
            task_id: r.task_id.clone(),
            provider: r.provider.clone(),
            model: r.model.clone(),
            epoch: r.epoch,
            outcome: r.outcome,
            error_kind: r.error_kind,
            unused_interactions: r.unused_interactions,
            edit_strategy: "pi".into(),
            divergence_kind: r.divergence_kind,
        })
        .collect();
    assert_eq!(keys, expected);
    let errors: Vec<(&str, u32, Option<&str>)> = keys
        .iter()
        .filter(|k| k.outcome == Outcome::Error)
        .map(|k| (k.task_id.as_str(), k.epoch, k.error_kind.map(|k| k.name())))
        .collect();
    assert_eq!(errors, [("rs-add-flag", 2, Some("rate_limited"))]);
}

#[test]
fn read_runs_csv_finds_columns_by_name_and_names_bad_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.csv");
    // An older layout: no error_kind column, columns in another order.
    std::fs::write(
        &path,
        "outcome,task,epoch,model,provider\nerror,a,3,m/x,p\npassed,b,1,m,p\n",
    )
    .unwrap();
    let keys = read_runs_csv(&path).unwrap();
    assert_eq!(
        keys[0],
        RunKey {
            task_id: "a".into(),
            provider: "p".into(),
            model: "m/x".into(),
            epoch: 3,
            outcome: Outcome::Error,
            error_kind: None,
            unused_interactions: 0,
            edit_strategy: "pi".into(),
            divergence_kind: None,
        }
    );
    assert_eq!(keys[1].outcome, Outcome::Passed);

    std::fs::write(
        &path,
        "task,provider,model,epoch,outcome\na,p,m,1,passed\na,p,m,2,exploded\n",
    )
    .unwrap();
    let err = read_runs_csv(&path).unwrap_err().to_string();
    assert!(
        err.contains("runs.csv") && err.contains("line 3") && err.contains("`exploded`"),
        "{err}"
    );

    std::fs::write(&path, "task,provider,model,outcome\n").unwrap();
    let err = read_runs_csv(&path).unwrap_err().to_string();
    assert!(err.contains("no `epoch` column"), "{err}");

    let err = read_runs_csv(&dir.path().join("missing/runs.csv"))
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("failed to read") && err.contains("missing"),
        "{err}"
    );
}

#[test]
fn drifted_replays_have_their_own_column_and_stay_out_of_pass_rates() {
    let held = Scenario::new("t", "p", "m", 1, Outcome::Passed)
        .drifted(2, Outcome::Passed)
        .record();
    let changed = Scenario::new("t", "p", "m", 2, Outcome::Failed)
        .drifted(1, Outcome::Passed)
        .record();
    let clean = rec("t", "p", "m", 3, Outcome::Passed);
    let records = [held, changed, clean];
    let s = &summarise(&sorted(&records))[0];
    assert_eq!((s.drifted, s.outcomes_changed, s.counted), (2, 1, 1));
    assert_eq!(s.pass_rate(), Some(1.0));
    assert_eq!(cells::outcome_label(&records[0]), "passed (drifted, held)");
    assert_eq!(
        cells::outcome_label(&records[1]),
        "failed (drifted, changed)"
    );
    let row = csv::runs_row(&records[0]);
    let cols = csv::runs_columns();
    let get = |name: &str| row[cols.iter().position(|c| c == name).unwrap()].clone();
    assert_eq!(get("divergence_kind"), "tool_result");
    assert_eq!(get("divergence_turn"), "3");
    assert_eq!(get("divergences"), "2");
    assert_eq!(get("outcome_change"), "held");
    assert_eq!(get("counted"), "false");
    let md = markdown::summary_md(&sorted(&records));
    assert!(
        md.contains("2 replays drifted from their cassettes (1 outcome changed)."),
        "{md}"
    );
}
