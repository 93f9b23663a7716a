//! Tests of `report.html` and `compare.html`: everything escaped (tool output is untrusted),
//! every run listed with its panel, the plots present, self-contained.

use super::*;
use crate::reports::tests::{records, run_file};

fn files() -> Vec<RunFile> {
    let records = records();
    records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if i == 0 {
                run_file(
                    r,
                    Some("system <b>prompt</b>"),
                    "diff --git a/x b/x\n-old\n+new\n",
                )
            } else {
                RunFile::record_only(r.clone())
            }
        })
        .collect()
}

/// A run file whose every text is hostile markup.
fn hostile() -> RunFile {
    let evil = "</script><script>alert(1)</script><img src=x onerror=alert(2)>\"'&";
    let mut file = files().remove(0);
    file.record.reason = evil.into();
    file.record.task_id = format!("task{evil}");
    file.record.tags = vec![evil.into()];
    file.record.checks[0].detail = evil.into();
    file.record.detail = Some(evil.into());
    file.system_prompt = Some(evil.into());
    file.diff = format!("+{evil}\n");
    if let Message::ToolResult(result) = &mut file.messages[2] {
        result.content = vec![
            Content::text(evil),
            Content::Image {
                mime_type: "image/svg+xml".into(),
                data: "PHN2Zz4=".into(),
            },
            Content::Image {
                mime_type: "image/png".into(),
                data: "iVBORw0KGgo=\"><script>alert(3)</script>".into(),
            },
        ];
    }
    if let Message::Assistant(reply) = &mut file.messages[1] {
        reply.content.push(AssistantBlock::Text {
            text: evil.into(),
            signature: None,
        });
    }
    file
}

#[test]
fn every_untrusted_text_is_escaped() {
    let file = hostile();
    let html = report_html(&[&file], "2026<x>");
    // One script element: ours.
    assert_eq!(html.matches("<script").count(), 1, "{html}");
    assert_eq!(html.matches("</script>").count(), 1);
    assert!(!html.contains("<img src=x"));
    assert!(!html.contains("alert(3)</script>"));
    assert!(html.contains("&lt;/script&gt;&lt;script&gt;alert(1)"));
    // An SVG image from a tool is named, not shown; a PNG with data that is not base64 neither.
    assert!(html.contains("[image image/svg+xml"));
    assert!(html.contains("[image image/png"));
    assert!(!html.contains("data:image/svg+xml"));
    // Nothing leaves the page: no external URL in any src or href.
    for attr in [
        "src=\"http",
        "href=\"http",
        "src=\"//",
        "href=\"//",
        "@import",
        "url(",
    ] {
        assert!(!html.contains(attr), "{attr}");
    }
}

#[test]
fn an_image_with_real_base64_is_shown_inline() {
    let mut file = files().remove(0);
    if let Message::ToolResult(result) = &mut file.messages[2] {
        result.content.push(Content::Image {
            mime_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        });
    }
    let html = report_html(&[&file], "x");
    assert!(html.contains("src=\"data:image/png;base64,iVBORw0KGgo=\""));
}

#[test]
fn every_run_is_listed_with_its_panel_and_the_plots_are_there() {
    let files = files();
    let refs: Vec<&RunFile> = files.iter().collect();
    let html = report_html(&refs, "20260101-000000");
    for f in &files {
        let anchor = run_anchor(&f.record);
        assert!(html.contains(&format!("id=\"{anchor}\"")), "{anchor}");
        assert!(html.contains(&format!("href=\"#{anchor}\"")), "{anchor}");
        assert!(html.contains(&format!("data-run=\"{anchor}\"")), "{anchor}");
    }
    assert_eq!(
        html.matches("<svg").count(),
        6,
        "5 plots and the difference plot"
    );
    // The transcript: thinking, text, the call with its arguments and result and edit telemetry.
    assert!(html.contains("The bug is in calc.py."));
    assert!(html.contains("tool call <code class=\"tool\">edit</code>"));
    assert!(html.contains("&quot;oldText&quot;: &quot;a + b&quot;"));
    assert!(html.contains("failure: not_found"));
    assert!(html.contains("<span class=\"add\">+new\n</span>"));
    // Three arms: the arms are compared.
    assert!(html.contains("id=\"arms\""));
    assert!(
        html.contains("Divergence"),
        "the diverged run shows its divergence"
    );
}

#[test]
fn long_texts_are_collapsed_and_huge_ones_cut() {
    let short = long_text("one line", "out", false).into_string();
    assert!(!short.contains("<details"));
    let long: String = (0..100).map(|i| format!("line {i}\n")).collect();
    let folded = long_text(&long, "out", false).into_string();
    assert!(folded.starts_with("<details class=\"long\"><summary><code>line 0</code>"));
    assert!(folded.contains("100 lines"));
    let huge = "é".repeat(MAX_TEXT_BYTES);
    let cut = long_text(&huge, "out", false).into_string();
    assert!(cut.contains(&format!("{} more bytes", huge.len() - MAX_TEXT_BYTES)));
}

#[test]
fn the_comparison_view_links_both_transcripts_of_every_flip() {
    let base = files();
    let mut new = files();
    // The run that passed on the base side fails on the new one.
    let flipped = new
        .iter_mut()
        .find(|f| f.record.outcome == Outcome::Passed)
        .unwrap();
    let r = &flipped.record;
    flipped.record =
        crate::reports::fixtures::rec(&r.task_id, &r.provider, &r.model, r.epoch, Outcome::Failed);
    let anchor = run_anchor(&flipped.record);
    let arm_runs = |files: &[RunFile]| -> Vec<(Arm, usize)> {
        files
            .iter()
            .enumerate()
            .map(|(i, f)| (Arm::of(f), i))
            .collect()
    };
    let bv: Vec<ArmRun<'_>> = arm_runs(&base)
        .into_iter()
        .map(|(a, i)| (a, &base[i].record))
        .collect();
    let nv: Vec<ArmRun<'_>> = arm_runs(&new)
        .into_iter()
        .map(|(a, i)| (a, &new[i].record))
        .collect();
    let cmp = paired::compare_sides(&bv, &nv);
    let page = compare_html(&cmp, "a <title>", "../a/report.html", "../b/report.html");
    assert!(
        page.contains(&format!("href=\"../a/report.html#{anchor}\"")),
        "{page}"
    );
    assert!(
        page.contains(&format!("href=\"../b/report.html#{anchor}\"")),
        "{page}"
    );
    assert!(page.contains("a &lt;title&gt;"));
    assert_eq!(page.matches("<tr class=\"regressed\">").count(), 1);
}

#[test]
fn an_empty_report_still_renders() {
    let html = report_html(&[], "empty");
    assert!(html.contains("0 runs of 0 tasks"));
    assert_eq!(html.matches("<svg").count(), 5);
}

#[test]
fn a_drifted_replay_shows_its_divergences_and_counts_in_the_drift_column() {
    let mut all = files();
    let r = &all[0].record;
    all[0].record = crate::reports::fixtures::Scenario::new(
        &r.task_id,
        &r.provider,
        &r.model,
        r.epoch,
        Outcome::Failed,
    )
    .drifted(2, Outcome::Passed)
    .record();
    let dir = all[0].record.run_dir();
    let refs: Vec<&RunFile> = all.iter().collect();
    let page = report_html(&refs, "t");
    assert!(page.contains("2 differences from the cassette"), "{page}");
    assert!(
        page.contains("<code>tool_result</code> at turn 3"),
        "{page}"
    );
    assert!(page.contains("turn 3: result of edit#1 changed"), "{page}");
    assert!(page.contains("outcome changed: passed → failed"), "{page}");
    assert!(
        page.contains(&format!("href=\"{dir}/divergence.md\"")),
        "{page}"
    );
    assert!(
        page.contains("1 (1 changed)"),
        "the drift column counts it: {page}"
    );
}
