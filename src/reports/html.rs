//! `report.html` (and the `compare.html` view of `harness compare`): one self-contained static
//! page that opens from disk or a CI artifact, with no network access (no CDN, no fonts, no
//! images from elsewhere): inline CSS, a little inline JavaScript, inline SVG plots.
//!
//! The page holds the summary per arm (provider, model and edit strategy: pass rate with its n
//! and Wilson interval, the clustered standard error with several epochs, pass@1, pass@k,
//! pass^k, infrastructure errors, drift, tokens, cost, time), the arms compared pairwise when
//! there are several, four plots (pass rate with interval bars per arm, cost against pass rate,
//! edit outcomes per arm as stacked bars, turns and tokens per run as distributions), a runs
//! table that sorts by any column and filters by task, arm, outcome and tag, and one panel per
//! run: its transcript (user, assistant text, thinking, every tool call with its arguments and
//! result, images, long parts collapsed), its checks with their output, its workspace diff, and
//! the divergence details when it diverged. A run's panel opens at `report.html#run-<run>`
//! (plain CSS `:target`, so links from elsewhere open it too, and the page works with scripts
//! off; the script adds sorting and filtering).
//!
//! A large report (past [`InlineLimit`]: 500 runs, or 32 MiB of run files) does not hold the
//! panels: each run gets its own page, `runs/<run>/run.html`, the same panel with links to the
//! files beside it and back to its row, and the runs table links there (the row keeps the run's
//! anchor, so `report.html#run-<run>` still finds the run). Why: ten thousand transcripts make a
//! page no browser opens comfortably, and a page is written a part at a time
//! ([`write_report_html`]) so that its writer never holds more than one run file.
//!
//! Why these tools: the markup is written with `maud`, whose `html!` macro is checked at compile
//! time, escapes every interpolated value unless told otherwise, and renders straight into one
//! `String` (fast: no template files or runtime parsing). Escaping is the point: tool output is
//! untrusted, and a model can make a tool print `</script>` or markup; nothing here is ever
//! emitted unescaped except our own CSS, script and SVG structure, and no run data ever goes
//! inside the `<script>` element (the script reads `data-` attributes). The plots are SVG written
//! by [`plots`] (see there for why not a plotting crate).
//!
//! Reads run files only.

mod plots;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::Path;

use maud::{DOCTYPE, Markup, PreEscaped, html};

use crate::conversation::{AssistantBlock, Content, Message, ToolResultMessage, UserContent};
use crate::record::{Outcome, RunFile, RunRecord};

use super::cells::{UserTurn, checks_cell, edits_cell, outcome_label, user_turns};
use super::error::ReportError;
use super::paired::{self, Arm, ArmRun, Comparison, Side};
use super::summary::{
    CostTotal, ModelSummary, UNKNOWN, any_attempts, dollars, edit_failure_label,
    first_attempt_label, last_attempt_header, pass_at_k_label, pass_hat_k_label, pass_rate_label,
    percent, percent_interval, summarise_by_tag,
};
use super::terminal::{short_count, short_duration};

/// The file name in a report folder.
pub const REPORT_HTML: &str = "report.html";

/// The file name of the comparison view in a compare folder.
pub const COMPARE_HTML: &str = "compare.html";

/// The file name of a run's own page in its run folder (`runs/<run>/run.html`), written when
/// `report.html` links to each run's page instead of holding every panel ([`Panels::Linked`]).
pub const RUN_HTML: &str = "run.html";

const CSS: &str = include_str!("html/report.css");
const SCRIPT: &str = include_str!("html/report.js");

/// Texts longer than this many lines (or [`LONG_BYTES`]) are collapsed behind their first line.
const LONG_LINES: usize = 24;
const LONG_BYTES: usize = 2_000;

/// At most this much of one text is put in the page; the rest is in the run's `transcript.md`.
const MAX_TEXT_BYTES: usize = 64 * 1024;

/// At most this much of a diff is put in the page; the rest is in the run's `diff.patch`.
const MAX_DIFF_BYTES: usize = 256 * 1024;

/// The anchor of a run's panel: `run-<task>--<provider>--<model>--e<epoch>`.
pub fn run_anchor(r: &RunRecord) -> String {
    format!("run-{}", r.run_dir().trim_start_matches("runs/"))
}

/// When `report.html` holds every run's panel, and when it links each run's own page instead.
///
/// A panel holds the run's transcript, checks and diff: a page of thousands of them is slow to
/// open (most browsers struggle past a few tens of MiB of markup) and would be memory the writer
/// holds, so a large report keeps its summary, plots and runs table in `report.html` and gives
/// every run its own `runs/<run>/run.html`. Small reports stay one file, fit for a CI artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InlineLimit {
    /// The most runs whose panels are inline.
    pub runs: usize,
    /// The most bytes of run files (`run.json`, which holds what the panels show) together.
    pub bytes: u64,
    /// The most bytes of run files kept in memory once read (to complete their records), for
    /// the panels, which would read them again; past it each is read again when its panel is
    /// written, one at a time.
    pub held: u64,
}

impl Default for InlineLimit {
    fn default() -> Self {
        InlineLimit {
            runs: 500,
            bytes: 32 * 1024 * 1024,
            held: 4 * 1024 * 1024,
        }
    }
}

/// What the page shows of a run outside its panel: the record, and the edit strategy its run
/// file names (the arm's third part). Everything but the panels is written from these, so the
/// page never needs more than one run file in memory.
#[derive(Debug, Clone, Copy)]
pub struct RunRow<'a> {
    pub record: &'a RunRecord,
    pub strategy: Option<&'a str>,
}

impl<'a> RunRow<'a> {
    pub fn of(file: &'a RunFile) -> Self {
        RunRow {
            record: &file.record,
            strategy: file.edit_strategy.as_deref(),
        }
    }

    /// The run's arm, as [`Arm::of`] gives it for the run file.
    pub fn arm(&self) -> Arm {
        Arm {
            strategy: self.strategy.map(str::to_owned),
            ..Arm::of_record(self.record)
        }
    }
}

/// How `report.html` shows each run's transcript, checks and diff.
pub enum Panels<'a> {
    /// In the page, one panel per run opened by its anchor; `load(i)` gives the run file of row
    /// `i`, one at a time, as the panels are written.
    Inline(&'a mut dyn FnMut(usize) -> Result<Cow<'a, RunFile>, ReportError>),
    /// On each run's own page, `runs/<run>/run.html` ([`run_page`]), which the runs table links.
    Linked,
}

/// The summary of every arm, in arm order.
pub fn summarise_arms(rows: &[RunRow<'_>]) -> Vec<(Arm, ModelSummary)> {
    let mut by: BTreeMap<Arm, ModelSummary> = BTreeMap::new();
    for row in rows {
        by.entry(row.arm())
            .or_insert_with(|| ModelSummary {
                provider: row.record.provider.clone(),
                model: row.record.model.clone(),
                ..ModelSummary::default()
            })
            .add(row.record);
    }
    by.into_iter().collect()
}

/// Everything of a page before its body's content: doctype, head (title, the CSS), `<body>`.
fn page_start(title: &str) -> String {
    let head = html! {
        meta charset="utf-8";
        meta name="viewport" content="width=device-width, initial-scale=1";
        // No favicon request, not even from disk.
        link rel="icon" href="data:,";
        title { (title) }
        style { (PreEscaped(CSS)) }
    };
    format!(
        "{}<html lang=\"en\"><head>{}</head><body>",
        DOCTYPE.into_string(),
        head.into_string()
    )
}

/// Everything of a page after its body's content: the script, the closing tags.
fn page_end() -> String {
    let script = html! { script { (PreEscaped(SCRIPT)) } };
    format!("{}</body></html>", script.into_string())
}

fn page(title: &str, body: Markup) -> String {
    let mut out = page_start(title);
    out.push_str(&body.into_string());
    out.push_str(&page_end());
    out
}

/// The outcome as a coloured badge.
fn badge(r: &RunRecord) -> Markup {
    html! { span class=(format!("badge o-{}", r.outcome.name())) { (outcome_label(r)) } }
}

/// `text`, whole when short, else collapsed behind its first line; cut at [`MAX_TEXT_BYTES`].
fn long_text(text: &str, class: &str, open: bool) -> Markup {
    let (shown, cut) = cut_at(text, MAX_TEXT_BYTES);
    let lines = text.lines().count();
    let body = html! {
        pre class=(class) { (shown) }
        @if cut > 0 {
            p.note { "… " (cut) " more bytes in the run's transcript.md" }
        }
    };
    if lines <= LONG_LINES && text.len() <= LONG_BYTES {
        return body;
    }
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let first: String = first.chars().take(100).collect();
    html! {
        details.long open[open] {
            summary { code { (first) } span.muted { " … " (lines) " lines, " (text.len()) " bytes" } }
            (body)
        }
    }
}

/// The longest prefix of `text` within `max` bytes (on a character boundary), and how many bytes
/// were left out.
fn cut_at(text: &str, max: usize) -> (&str, usize) {
    if text.len() <= max {
        return (text, 0);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], text.len() - end)
}

/// An image block: shown inline when its type is a raster image and its data is base64, else
/// named.
fn image(mime: &str, data: &str) -> Markup {
    let raster = matches!(
        mime,
        "image/png" | "image/jpeg" | "image/gif" | "image/webp"
    );
    let base64 = !data.is_empty()
        && data
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='));
    html! {
        @if raster && base64 {
            img.shot src=(format!("data:{mime};base64,{data}")) alt=(format!("{mime} image from the tool"));
        } @else {
            p.note { "[image " (mime) ", " (data.len()) " base64 bytes, not shown]" }
        }
    }
}

fn contents(content: &[Content], class: &str) -> Markup {
    html! {
        @for c in content {
            @match c {
                Content::Text { text } => (long_text(text, class, false)),
                Content::Image { mime_type, data } => (image(mime_type, data)),
            }
        }
    }
}

fn tool_result(result: &ToolResultMessage, file: &RunFile) -> Markup {
    let edit = file
        .tool_call(&result.tool_call_id)
        .and_then(|t| t.result.edit.as_ref());
    let duration = file
        .tool_call(&result.tool_call_id)
        .map(|t| t.duration.as_millis());
    html! {
        div class=(if result.is_error { "result error" } else { "result" }) {
            div.head {
                "result"
                @if result.is_error { " — " strong { "error" } }
                @if let Some(ms) = duration { span.muted { " · " (ms) " ms" } }
                @if let Some(edit) = edit {
                    span.muted {
                        " · edit strategy " (edit.strategy) "; located: "
                        (edit.tiers.iter().map(|t| t.name()).collect::<Vec<_>>().join(", "))
                        @if let Some(f) = &edit.failure { "; failure: " (f.name()) }
                    }
                }
            }
            (contents(&result.content, "out"))
        }
    }
}

fn transcript(file: &RunFile) -> Markup {
    let results: HashMap<&str, &ToolResultMessage> = file
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) => Some((r.tool_call_id.as_str(), r)),
            _ => None,
        })
        .collect();
    let called: BTreeSet<&str> = file
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant(a) => Some(a.tool_calls().map(|c| c.id.as_str())),
            _ => None,
        })
        .flatten()
        .collect();
    // The turn number of each assistant message.
    let mut turn = 0;
    let turns: Vec<u32> = file
        .messages
        .iter()
        .map(|m| {
            turn += u32::from(matches!(m, Message::Assistant(_)));
            turn
        })
        .collect();
    let mut users = user_turns(&file.record, &file.messages).into_iter();
    html! {
        @if let Some(system) = &file.system_prompt {
            details.msg.system {
                summary { span.role { "System prompt" } span.muted { " · " (system.lines().count()) " lines" } }
                pre { (system) }
            }
        }
        @for (message, turn) in file.messages.iter().zip(&turns) {
            @match message {
                Message::User { content } => {
                    div.msg.user {
                        div.role { (users.next().map_or_else(|| "User".to_owned(), UserTurn::label)) }
                        @match content {
                            UserContent::Text(text) => (long_text(text, "text", true)),
                            UserContent::Blocks(blocks) => (contents(blocks, "text")),
                        }
                    }
                }
                Message::Assistant(reply) => {
                    div.msg.assistant {
                        div.role {
                            "Assistant · turn " (turn)
                            span.muted {
                                " · " (serde_json::to_value(reply.stop_reason).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default())
                                " · " (reply.usage.input) " in, " (reply.usage.output) " out"
                                @if reply.usage.cache_read > 0 { ", " (reply.usage.cache_read) " cache read" }
                            }
                        }
                        @for block in &reply.content {
                            @match block {
                                AssistantBlock::Thinking { thinking, redacted, .. } => {
                                    details.thinking {
                                        summary { "Thinking" @if *redacted { " (redacted)" } }
                                        @if !*redacted { pre { (thinking) } }
                                    }
                                }
                                AssistantBlock::Text { text, .. } => (long_text(text, "text", true)),
                                AssistantBlock::ToolCall(call) => {
                                    div.call {
                                        div.head {
                                            "tool call " code.tool { (call.name) } span.muted { " · " (call.id) }
                                        }
                                        (long_text(&serde_json::to_string_pretty(&call.arguments).unwrap_or_default(), "args", false))
                                        @if let Some(result) = results.get(call.id.as_str()) {
                                            (tool_result(result, file))
                                        } @else {
                                            p.note { "(no result: the run stopped before this call ran)" }
                                        }
                                    }
                                }
                            }
                        }
                        @if let Some(error) = &reply.error_message {
                            div.detail { strong { "Error: " } (error) }
                        }
                    }
                }
                Message::ToolResult(result) => {
                    // Results are shown under their call; one without a call stands alone.
                    @if !called.contains(result.tool_call_id.as_str()) {
                        div.msg { div.role { "Tool result " code { (result.tool_call_id) } } (tool_result(result, file)) }
                    }
                }
            }
        }
        @if file.messages.is_empty() {
            p.note { "No transcript: the run never reached the model (" (file.record.stop) ")." }
        }
    }
}

fn diff_view(diff: &str) -> Markup {
    if diff.is_empty() {
        return html! { p.note { "The agent changed nothing." } };
    }
    let (shown, cut) = cut_at(diff, MAX_DIFF_BYTES);
    let class = |line: &str| {
        if line.starts_with("+++") || line.starts_with("---") || line.starts_with("diff ") {
            "meta"
        } else if line.starts_with('+') {
            "add"
        } else if line.starts_with('-') {
            "del"
        } else if line.starts_with("@@") {
            "hunk"
        } else {
            "ctx"
        }
    };
    html! {
        pre.diff {
            @for line in shown.lines() {
                span class=(class(line)) { (line) "\n" }
            }
        }
        @if cut > 0 { p.note { "… " (cut) " more bytes in the run's diff.patch" } }
    }
}

/// Divergence details of a replay that no longer matched its cassette: how many differences, the
/// first one's kind and turn, every difference in conversation terms, whether the outcome held
/// against the recording, a link to `divergence.md` (each difference with its diff), and for a
/// run that stopped at the divergence, its detail text (the request, the JSON path and a diff).
/// `folder` is the run's folder relative to the page (empty on the run's own page).
fn divergence(r: &RunRecord, folder: &str) -> Option<Markup> {
    if r.outcome != Outcome::Diverged && r.divergences == 0 {
        return None;
    }
    let detail = r.detail.as_deref().unwrap_or(&r.reason);
    Some(html! {
        div.divergence {
            h3 { "Divergence" }
            @if r.divergences > 0 {
                p {
                    (r.divergences) " difference" @if r.divergences != 1 { "s" } " from the cassette"
                    @if let Some(kind) = &r.divergence_kind { "; the first: " code { (kind) } }
                    @if let Some(turn) = r.divergence_turn { " at turn " (turn) }
                    " · " a href=(format!("{folder}divergence.md")) { "divergence.md" }
                }
                @if let Some(summary) = &r.divergence_summary { p { (summary) } }
                @if let Some(drift) = r.drift_line() { p.drift { (drift) } }
            }
            @if r.outcome == Outcome::Diverged { (long_text(detail, "diverge", true)) }
        }
    })
}

/// Where a run's panel is: in `report.html` (links relative to the report folder), or on the
/// run's own page in its run folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Report,
    OwnPage,
}

fn run_panel(file: &RunFile, arm: &Arm, with_strategy: bool, place: Place) -> Markup {
    let r = &file.record;
    let (close, folder) = match place {
        Place::Report => ("#runs".to_owned(), format!("{}/", r.run_dir())),
        Place::OwnPage => (
            format!("../../{REPORT_HTML}#{}", run_anchor(r)),
            String::new(),
        ),
    };
    // The run's files, relative to the page the panel is on.
    let own = |path: &str| match place {
        Place::Report => path.to_owned(),
        Place::OwnPage => path.rsplit('/').next().unwrap_or(path).to_owned(),
    };
    html! {
        section.run.page[place == Place::OwnPage] id=(run_anchor(r)) aria-label=(format!("run {} {}", r.task_id, arm.label(true))) {
            header {
                a.close href=(close) title=(if place == Place::Report { "close" } else { "back to the report" }) { "×" }
                h2 { (r.task_id) " " span.muted { "— " (arm.label(with_strategy)) ", epoch " (r.epoch) } }
                p { (badge(r)) " " (r.reason) }
                p.facts {
                    "stop: " (r.stop) " · turns " (r.turns) " · tool calls " (r.tool_call_count())
                    " · checks " (checks_cell(r)) " · edits ok/failed " (edits_cell(r))
                    " · tokens " (short_count(r.tokens.total)) " · cost " (dollars(r.cost, 6))
                    " · " (short_duration(r.wall_time))
                    @if let Some(s) = &file.edit_strategy { " · edit strategy " (s) }
                }
                p.links {
                    a href=(own(&r.transcript_path)) { "transcript.md" } " · "
                    a href=(format!("{folder}run.json")) { "run.json" } " · "
                    a href=(own(&r.diff_path)) { "diff.patch" }
                    @if place == Place::OwnPage { " · " a href=(close) { "report.html" } }
                }
            }
            @if let Some(d) = divergence(r, &folder) { (d) }
            @if r.outcome != Outcome::Diverged {
                @if let Some(detail) = &r.detail {
                    div.detail { h3 { "Detail" } (long_text(detail, "detail", true)) }
                }
            }
            @if !r.attempt_outcomes.is_empty() {
                h3 { "Attempts" }
                table.attempts {
                    thead { tr { th { "attempt" } th { "checks" } th { "turns" } th { "result" } } }
                    tbody {
                        @for a in &r.attempt_outcomes {
                            tr {
                                td.num { (a.attempt) " of " (r.task_attempts) }
                                td.num { (a.checks_passed) "/" (a.checks_total) }
                                td.num { (a.turns) }
                                td { span class=(if a.passed { "badge o-passed" } else { "badge o-failed" }) { @if a.passed { "passed" } @else { "failed" } } }
                            }
                        }
                    }
                }
                p.note { "After a failed attempt the failing checks' output went back to the model as the next user message; the checks below are the last attempt's." }
            }
            h3 { "Checks" }
            @if r.checks.is_empty() { p.note { "No check ran." } }
            @for check in &r.checks {
                details.check open[!check.passed] {
                    summary {
                        span class=(if check.passed { "badge o-passed" } else { "badge o-failed" }) {
                            @if check.passed { "pass" } @else { "FAIL" }
                        }
                        " " (check.name) span.muted { " · " (check.duration.as_millis()) " ms" }
                    }
                    pre.out { (check.detail) }
                }
            }
            h3 { "Transcript" }
            div.transcript { (transcript(file)) }
            h3 { "Diff" }
            p.muted { (r.diff_files) " file(s) changed, +" (r.diff_lines_added) " −" (r.diff_lines_removed) }
            (diff_view(&file.diff))
        }
    }
}

fn summary_table(arms: &[(Arm, ModelSummary)], with_strategy: bool) -> Markup {
    let epochs = arms.iter().any(|(_, s)| s.k().is_some());
    let attempts = arms.iter().any(|(_, s)| s.has_attempts());
    html! {
        table.summary {
            thead { tr {
                th { "arm" } th { "runs" } th { "pass rate (n)" } th { "95% CI" }
                @if attempts { th title="runs that passed at their first attempt" { "pass rate at attempt 1" } th { "95% CI (attempt 1)" } }
                @if epochs { th title="standard error clustered by task" { "SE (by task)" } }
                th { "pass@1" } th { "pass@k" } th { "pass^k" } th { "infra errors" }
                th title="replays run to a verdict although their conversation differed from the cassette (--on-divergence continue), and how many of their outcomes changed against the recording" { "drift" }
                th { "edit failures" } th { "tokens" } th { "cost" } th { "mean time" }
            } }
            tbody {
                @for (arm, s) in arms {
                    tr {
                        td { (arm.label(with_strategy)) }
                        td.num { (s.runs) }
                        td.num { (pass_rate_label(s)) }
                        td.num { (percent_interval(s.pass_rate_interval())) }
                        @if attempts {
                            td.num { (first_attempt_label(s)) }
                            td.num { (percent_interval(s.first_attempt_interval())) }
                        }
                        @if epochs { td.num { (percent(s.pass_rate_se())) } }
                        td.num { (percent(s.pass_at_1())) }
                        td.num { (pass_at_k_label(s)) }
                        td.num { (pass_hat_k_label(s)) }
                        td.num { (s.infra_errors) }
                        td.num {
                            (s.drifted)
                            @if s.outcomes_changed > 0 { " (" (s.outcomes_changed) " changed)" }
                        }
                        td.num { (edit_failure_label(s)) }
                        td.num { (short_count(s.total_tokens)) }
                        td.num { (dollars(s.cost, 4)) }
                        td.num { (s.mean_wall_seconds().map(|x| format!("{x:.1}s")).unwrap_or_else(|| UNKNOWN.to_owned())) }
                    }
                }
            }
        }
        p.note {
            "Pass rates leave out infrastructure errors, skipped runs and replays that diverged or drifted from their cassettes; n is the runs that count. "
            "95% CI: Wilson score interval. pass@k (at least one of k runs passes) and pass^k (all k pass) "
            "use the unbiased estimators per task, k = epochs."
            @if epochs { " SE (by task): standard error clustered by task." }
            @if attempts { " Tasks with several attempts: the pass rate is at the last attempt, the failing checks' output having gone back to the model after each failed one." }
        }
    }
}

/// Per tag (an imported suite's language), each arm's pass rates with intervals and its
/// edit-failure rate; a run counts under each tag of its task.
fn tags_table(records: &[&RunRecord]) -> Option<Markup> {
    let by_tag = summarise_by_tag(records);
    if by_tag.is_empty() {
        return None;
    }
    let all: Vec<ModelSummary> = by_tag.iter().flat_map(|(_, s)| s.iter().cloned()).collect();
    let attempts = any_attempts(&all);
    let last = if attempts {
        last_attempt_header(&all)
    } else {
        "pass rate (n)".to_owned()
    };
    Some(html! {
        table.summary.tags {
            thead { tr {
                th { "tag" } th { "arm" } th { "runs" }
                @if attempts { th { "pass rate at attempt 1" } th { "95% CI" } }
                th { (last) } th { "95% CI" } th { "edit failures" }
            } }
            tbody {
                @for (tag, summaries) in &by_tag {
                    @for s in summaries {
                        tr {
                            td { (tag) }
                            td { (s.provider) "/" (s.model_label()) }
                            td.num { (s.runs) }
                            @if attempts {
                                td.num { (first_attempt_label(s)) }
                                td.num { (percent_interval(s.first_attempt_interval())) }
                            }
                            td.num { (pass_rate_label(s)) }
                            td.num { (percent_interval(s.pass_rate_interval())) }
                            td.num { (edit_failure_label(s)) }
                        }
                    }
                }
            }
        }
    })
}

fn plots_section(arms: &[(Arm, ModelSummary)], rows: &[RunRow<'_>], with_strategy: bool) -> Markup {
    let label = |a: &Arm| a.label(with_strategy);
    let pass_rows: Vec<plots::IntervalRow> = arms
        .iter()
        .map(|(a, s)| {
            let i = s.pass_rate_interval();
            plots::IntervalRow {
                label: label(a),
                value: s.pass_rate(),
                low: i.map(|i| i.low),
                high: i.map(|i| i.high),
                note: format!(
                    "{}: {} {}",
                    label(a),
                    pass_rate_label(s),
                    percent_interval(i)
                ),
            }
        })
        .collect();
    let priced = arms.iter().any(|(_, s)| s.cost.is_some());
    let points: Vec<plots::Point> = arms
        .iter()
        .filter_map(|(a, s)| {
            let started = f64::from(s.started().max(1));
            let x = if priced {
                s.cost? / started
            } else {
                s.total_tokens as f64 / started
            };
            Some(plots::Point {
                label: label(a),
                x,
                y: s.pass_rate()?,
            })
        })
        .collect();
    let stacks: Vec<plots::Stack> = arms
        .iter()
        .map(|(a, s)| plots::Stack {
            label: label(a),
            counts: vec![s.edit_calls_exact, s.edit_calls_fuzzy, s.edit_calls_failed],
        })
        .collect();
    let mut turns: BTreeMap<Arm, Vec<f64>> = BTreeMap::new();
    let mut tokens: BTreeMap<Arm, Vec<f64>> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.record.outcome != Outcome::Skipped) {
        turns
            .entry(row.arm())
            .or_default()
            .push(f64::from(row.record.turns));
        tokens
            .entry(row.arm())
            .or_default()
            .push(row.record.tokens.total as f64);
    }
    let strips = |by: BTreeMap<Arm, Vec<f64>>| -> Vec<plots::Strip> {
        by.into_iter()
            .map(|(a, values)| plots::Strip {
                label: label(&a),
                values,
            })
            .collect()
    };
    html! {
        div.plots {
            figure {
                figcaption { "Pass rate per arm, with its 95% Wilson interval" }
                (plots::interval_plot("pass rate per arm", &pass_rows, 0.0, 1.0, None, &|t| format!("{:.0}%", t * 100.0)))
            }
            figure {
                @if priced {
                    figcaption { "Cost per run against pass rate" }
                    (plots::scatter_plot("cost per run against pass rate", &points, "mean cost per started run ($)", &|t| format!("${t:.4}")))
                } @else {
                    figcaption { "Tokens per run against pass rate " span.muted { "(no arm has a price, so tokens stand in for cost)" } }
                    (plots::scatter_plot("tokens per run against pass rate", &points, "mean tokens per started run", &|t| short_count(t as u64)))
                }
            }
            figure {
                figcaption { "Edit calls per arm by outcome" }
                (plots::stacked_plot("edit outcomes per arm", &["applied exactly", "applied fuzzily", "failed"], &stacks))
            }
            figure {
                figcaption { "Turns per run" }
                (plots::strip_plot("turns per run", &strips(turns), &|t| format!("{t:.0}")))
            }
            figure {
                figcaption { "Tokens per run" }
                (plots::strip_plot("tokens per run", &strips(tokens), &|t| short_count(t as u64)))
            }
        }
    }
}

/// The runs table, one row at a time into `out`: with [`Panels::Linked`] a row links to the run's
/// own page and carries the run's anchor (so `report.html#run-…` still lands on the run).
fn write_runs_table(
    out: &mut dyn Write,
    rows: &[RunRow<'_>],
    with_strategy: bool,
    linked: bool,
) -> std::io::Result<()> {
    let arms: BTreeSet<String> = rows.iter().map(|r| r.arm().label(with_strategy)).collect();
    let outcomes: BTreeSet<&str> = rows.iter().map(|r| r.record.outcome.name()).collect();
    let tags: BTreeSet<&str> = rows
        .iter()
        .flat_map(|r| r.record.tags.iter().map(String::as_str))
        .collect();
    let head = html! {
        div.filters {
            label { "task " input id="f-task" type="search" placeholder="filter by task"; }
            label { "arm " select id="f-arm" { option value="" { "all" } @for a in &arms { option value=(a) { (a) } } } }
            label { "outcome " select id="f-outcome" { option value="" { "all" } @for o in &outcomes { option value=(o) { (o) } } } }
            label { "tag " select id="f-tag" { option value="" { "all" } @for t in &tags { option value=(t) { (t) } } } }
            span.muted { span id="shown" { (rows.len()) } " of " (rows.len()) " runs shown" }
        }
    };
    out.write_all(head.into_string().as_bytes())?;
    let columns = html! {
        thead { tr {
            th { "task" } th { "arm" } th.num { "epoch" } th { "outcome" } th.num { "checks" }
            th.num { "turns" } th.num { "edits ok/failed" } th.num { "tokens" } th.num { "cost" }
            th.num { "time" } th { "tags" }
        } }
    };
    write!(
        out,
        "<table class=\"runs\" id=\"runs\">{}<tbody>",
        columns.into_string()
    )?;
    for row in rows {
        let r = row.record;
        let arm = row.arm().label(with_strategy);
        let anchor = run_anchor(r);
        let target = if linked {
            format!("{}/{RUN_HTML}", r.run_dir())
        } else {
            format!("#{anchor}")
        };
        let line = html! {
            tr id=[linked.then_some(&anchor)] data-task=(r.task_id) data-arm=(arm) data-outcome=(r.outcome.name())
                data-tags=(format!(" {} ", r.tags.join(" "))) data-run=(anchor) {
                td { a href=(target) { (r.task_id) } }
                td { (arm) }
                td.num data-v=(r.epoch) { (r.epoch) }
                td data-v=(r.outcome.name()) { (badge(r)) }
                td.num data-v=(r.checks_passed) { (checks_cell(r)) }
                td.num data-v=(r.turns) { (r.turns) }
                td.num data-v=(r.edits.calls_failed) { (edits_cell(r)) }
                td.num data-v=(r.tokens.total) { (short_count(r.tokens.total)) }
                td.num data-v=(r.cost.unwrap_or(-1.0)) { (dollars(r.cost, 4)) }
                td.num data-v=(format!("{:.3}", r.wall_time.as_secs_f64())) { (short_duration(r.wall_time)) }
                td { (r.tags.join(", ")) }
            }
        };
        out.write_all(line.into_string().as_bytes())?;
    }
    out.write_all(b"</tbody></table>")
}

/// The statistics table of a comparison; flips link to `link(record, side)`.
fn comparison_view(
    cmp: &Comparison<'_>,
    timings: bool,
    link: &dyn Fn(&RunRecord, Side) -> String,
) -> Markup {
    let mut header: Vec<&str> = paired::STATS_HEADER.to_vec();
    if timings {
        header.push(paired::TIME_HEADER);
    }
    let rows: Vec<(bool, Vec<String>)> = cmp
        .rows()
        .map(|a| {
            (
                a.stats.significant_regression(0.05),
                paired::stats_cells(a, cmp.with_strategy, timings),
            )
        })
        .collect();
    let diff_rows: Vec<plots::IntervalRow> = cmp
        .rows()
        .map(|a| {
            let (b, n) = a.label(cmp.with_strategy);
            plots::IntervalRow {
                label: if a.pooled { b } else { format!("{b} → {n}") },
                value: a.stats.difference(),
                low: a.stats.interval.map(|i| i.low),
                high: a.stats.interval.map(|i| i.high),
                note: format!(
                    "{} {}, McNemar p = {}",
                    paired::points(a.stats.difference()),
                    paired::points_interval(a.stats.interval),
                    paired::p_value(a.stats.p_value)
                ),
            }
        })
        .collect();
    let flips: Vec<_> = cmp.flips().collect();
    html! {
        div.scroll {
            table.summary {
                thead { tr { @for h in &header { th { (h) } } } }
                tbody {
                    @for (significant, row) in &rows {
                        tr.regressed[*significant] { @for (i, c) in row.iter().enumerate() { td.num[i > 1] { (c) } } }
                    }
                }
            }
        }
        p.note { (paired::STATS_NOTE) }
        figure {
            figcaption { "Pass-rate difference (new − base) with its 95% paired bootstrap interval" }
            (plots::interval_plot("pass-rate difference per pair of arms", &diff_rows, -1.0, 1.0, Some(0.0), &|t| format!("{:+.0} pp", t * 100.0)))
        }
        h3 { "Flips" }
        @if flips.is_empty() {
            p { "No run flipped." }
        } @else {
            table.runs {
                thead { tr { th { "task" } th.num { "epoch" } th { "base" } th { "new" } th { "outcome" } th { "transcripts" } th { "new reason" } } }
                tbody {
                    @for (arm, flip, pair) in &flips {
                        @let (b, n) = arm.label(cmp.with_strategy);
                        tr class=(if *flip == paired::Flip::Regressed { "regressed" } else { "fixed" }) {
                            td { (pair.base.task_id) }
                            td.num { (pair.base.epoch) }
                            td { (b) }
                            td { (n) }
                            td { (badge(pair.base)) " → " (badge(pair.new)) }
                            td { a href=(link(pair.base, Side::Base)) { "base" } " · " a href=(link(pair.new, Side::New)) { "new" } }
                            td { (pair.new.reason) }
                        }
                    }
                }
            }
        }
    }
}

/// `report.html` for the run files of one report folder, in report order, every panel in the
/// page; `name` is the folder's name (its timestamp).
pub fn report_html(files: &[&RunFile], name: &str) -> String {
    let rows: Vec<RunRow<'_>> = files.iter().map(|f| RunRow::of(f)).collect();
    let mut load =
        |i: usize| -> Result<Cow<'_, RunFile>, ReportError> { Ok(Cow::Borrowed(files[i])) };
    let mut out = Vec::new();
    write_report_html(
        &mut out,
        Path::new(REPORT_HTML),
        &rows,
        name,
        Panels::Inline(&mut load),
        None,
    )
    .expect("writing to memory cannot fail");
    String::from_utf8(out).expect("the page is UTF-8")
}

/// Writes `report.html` for `rows` (in report order) into `out`, a part at a time: the summary,
/// plots, comparison and runs table from the rows alone, then, with [`Panels::Inline`], each run's
/// panel from its run file, loaded and dropped one after the other. `path` names `out` in errors;
/// `notice`, when given, is said first (an interrupted or incomplete report says so).
pub fn write_report_html(
    out: &mut dyn Write,
    path: &Path,
    rows: &[RunRow<'_>],
    name: &str,
    panels: Panels<'_>,
    notice: Option<&str>,
) -> Result<(), ReportError> {
    let io = |source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    };
    let arms = summarise_arms(rows);
    let with_strategy = paired::strategies_differ(arms.iter().map(|(a, _)| a));
    let tasks: BTreeSet<&str> = rows.iter().map(|r| r.record.task_id.as_str()).collect();
    let count = |o: Outcome| rows.iter().filter(|r| r.record.outcome == o).count();
    let summaries: Vec<ModelSummary> = arms.iter().map(|(_, s)| s.clone()).collect();
    let arm_runs: Vec<ArmRun<'_>> = rows.iter().map(|r| (r.arm(), r.record)).collect();
    let cmp = (arms.len() > 1).then(|| paired::compare_within(&arm_runs));
    let linked = matches!(panels, Panels::Linked);
    let records: Vec<&RunRecord> = rows.iter().map(|r| r.record).collect();
    let tags = tags_table(&records);
    let top = html! {
        header.top {
            @if let Some(notice) = notice { p.notice role="status" { (notice) } }
            h1 { "Harness report " span.muted { (name) } }
            p {
                (rows.len()) " runs of " (tasks.len()) " tasks, " (arms.len()) " arm(s): "
                (count(Outcome::Passed)) " passed, " (count(Outcome::Failed)) " failed, "
                (count(Outcome::Diverged)) " diverged, " (count(Outcome::Error)) " errored, "
                (count(Outcome::LimitReached)) " limit reached, " (count(Outcome::Skipped)) " skipped. "
                "Total cost " (CostTotal::of(&summaries).display(4)) "."
            }
            nav { a href="#summary" { "summary" } a href="#plots" { "plots" } @if cmp.is_some() { a href="#arms" { "arms compared" } } a href="#runs" { "runs" } }
        }
    };
    let sections = html! {
        section id="summary" {
            h2 { "Summary" } div.scroll { (summary_table(&arms, with_strategy)) }
            @if let Some(tags) = &tags {
                details.by-tag { summary { "By tag" } div.scroll { (tags) } }
            }
        }
        section id="plots" { h2 { "Plots" } (plots_section(&arms, rows, with_strategy)) }
        @if let Some(cmp) = &cmp {
            section id="arms" {
                h2 { "Arms compared" }
                (comparison_view(cmp, true, &|r, _| format!("#{}", run_anchor(r))))
            }
        }
    };
    let runs_note = html! {
        @if linked {
            p.note {
                "Each run's transcript, checks and diff are on its own page ("
                code { "runs/<run>/" (RUN_HTML) } "), linked from the table: the "
                (rows.len()) " runs are more than one page should hold."
            }
        }
    };
    let write = || -> std::io::Result<()> {
        out.write_all(page_start(&format!("Harness report {name}")).as_bytes())?;
        out.write_all(top.into_string().as_bytes())?;
        out.write_all(b"<main>")?;
        out.write_all(sections.into_string().as_bytes())?;
        out.write_all(b"<section id=\"runs-section\"><h2>Runs</h2>")?;
        out.write_all(runs_note.into_string().as_bytes())?;
        out.write_all(b"<div class=\"scroll\">")?;
        write_runs_table(out, rows, with_strategy, linked)?;
        out.write_all(b"</div></section></main>")
    };
    write().map_err(io)?;
    if let Panels::Inline(load) = panels {
        for (i, row) in rows.iter().enumerate() {
            let file = load(i)?;
            let panel = run_panel(&file, &row.arm(), with_strategy, Place::Report);
            out.write_all(panel.into_string().as_bytes()).map_err(io)?;
        }
    }
    out.write_all(page_end().as_bytes()).map_err(io)
}

/// A run's own page (`runs/<run>/run.html`): its panel alone, with links to its files beside it
/// and back to the report's runs table.
pub fn run_page(file: &RunFile, name: &str) -> String {
    let r = &file.record;
    let arm = Arm::of(file);
    page(
        &format!(
            "{} {} e{} — harness report {name}",
            r.task_id,
            arm.label(true),
            r.epoch
        ),
        run_panel(file, &arm, true, Place::OwnPage),
    )
}

/// `compare.html`: the comparison of two report folders (or of the arms of one). Flips link to
/// `base_link` and `new_link` (relative paths of the two `report.html`), with the run's anchor.
pub fn compare_html(cmp: &Comparison<'_>, title: &str, base_link: &str, new_link: &str) -> String {
    let body = html! {
        header.top {
            h1 { "Harness comparison" }
            p { (title) }
            nav { a href=(base_link) { "base report" } a href=(new_link) { "new report" } }
        }
        main {
            section id="arms" { h2 { "Arms compared" } (comparison_view(cmp, true, &|r, side| {
                let page = match side { Side::Base => base_link, Side::New => new_link };
                format!("{page}#{}", run_anchor(r))
            })) }
        }
    };
    page("Harness comparison", body)
}

#[cfg(test)]
mod tests;
