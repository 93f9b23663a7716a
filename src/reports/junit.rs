//! `junit.xml`: one test case per run, in the JUnit XML dialect CI systems read (Jenkins, GitLab,
//! GitHub test reporters: the Ant/Surefire schema, `junit-10.xsd`). One test suite per provider
//! and model; a test case is named after its task and epoch.
//!
//! A run that did not pass is a `<failure>` with its reason as the message and, as the body, the
//! output of each failed check (or the divergence, the limit, the model's error); an
//! infrastructure error is an `<error>` of its error kind, and a skipped run is `<skipped>`.
//! Every text goes through [`xml_text`]: tool and check output are untrusted, and XML 1.0 cannot
//! carry most control characters at all (they become U+FFFD).
//!
//! Reads run records only.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::record::{Outcome, RunRecord};

/// The file name in a report folder.
pub const JUNIT_XML: &str = "junit.xml";

/// Escapes `text` for XML character data and attribute values (quotes and newlines included, so
/// an attribute keeps its line breaks); characters XML 1.0 does not allow become U+FFFD.
pub fn xml_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if allowed_in_xml(c) => out.push(c),
            _ => out.push('\u{FFFD}'),
        }
    }
    out
}

/// The `Char` production of XML 1.0: tab, newline, carriage return and everything from U+0020 but
/// the surrogates (which a `char` cannot be) and U+FFFE, U+FFFF.
fn allowed_in_xml(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Seconds with 3 decimals, as the schema's `SUREFIRE_TIME` wants them.
fn seconds(secs: f64) -> String {
    format!("{secs:.3}")
}

/// What a test case holds besides its name.
enum Verdict {
    Passed,
    Failure { kind: String, body: String },
    Error { kind: String, body: String },
    Skipped,
}

fn verdict(r: &RunRecord) -> Verdict {
    match r.outcome {
        Outcome::Passed => Verdict::Passed,
        Outcome::Skipped => Verdict::Skipped,
        _ if r.is_infrastructure_error() => Verdict::Error {
            kind: r
                .error_kind
                .map_or_else(|| "error".to_owned(), |k| k.name().to_owned()),
            body: r.detail.clone().unwrap_or_default(),
        },
        _ => {
            let mut body = String::new();
            if let Some(detail) = &r.detail {
                let _ = writeln!(body, "{detail}\n");
            }
            for check in r.checks.iter().filter(|c| !c.passed) {
                let _ = writeln!(body, "check '{}' failed:\n{}\n", check.name, check.detail);
            }
            let kind = match (&r.outcome, &r.error_kind) {
                (Outcome::Error, Some(kind)) => kind.name().to_owned(),
                (outcome, _) => outcome.name().to_owned(),
            };
            Verdict::Failure { kind, body }
        }
    }
}

/// `junit.xml` for records already in report order; `name` names the whole report (the report
/// folder's timestamp).
pub fn junit_xml(records: &[&RunRecord], name: &str) -> String {
    let mut suites: BTreeMap<(&str, &str), Vec<&RunRecord>> = BTreeMap::new();
    for r in records {
        suites
            .entry((r.provider.as_str(), r.model.as_str()))
            .or_default()
            .push(r);
    }
    let count = |rs: &[&RunRecord], pick: fn(&Verdict) -> bool| {
        rs.iter().filter(|r| pick(&verdict(r))).count()
    };
    let failures = |v: &Verdict| matches!(v, Verdict::Failure { .. });
    let errors = |v: &Verdict| matches!(v, Verdict::Error { .. });
    let skipped = |v: &Verdict| matches!(v, Verdict::Skipped);
    let time = |rs: &[&RunRecord]| seconds(rs.iter().map(|r| r.wall_time.as_secs_f64()).sum());
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"harness {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{}\">",
        xml_text(name),
        records.len(),
        count(records, failures),
        count(records, errors),
        time(records)
    );
    for ((provider, model), runs) in &suites {
        let suite = format!("{provider}/{model}");
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">",
            xml_text(&suite),
            runs.len(),
            count(runs, failures),
            count(runs, errors),
            count(runs, skipped),
            time(runs)
        );
        for r in runs {
            let _ = write!(
                out,
                "    <testcase name=\"{}\" classname=\"{}\" time=\"{}\">",
                xml_text(&format!("{} (epoch {})", r.task_id, r.epoch)),
                xml_text(&suite),
                seconds(r.wall_time.as_secs_f64())
            );
            let message = xml_text(&r.reason);
            let (element, kind, body) = match verdict(r) {
                Verdict::Passed => (None, String::new(), String::new()),
                Verdict::Skipped => {
                    let _ = write!(out, "\n      <skipped message=\"{message}\"/>");
                    (None, String::new(), String::new())
                }
                Verdict::Failure { kind, body } => (Some("failure"), kind, body),
                Verdict::Error { kind, body } => (Some("error"), kind, body),
            };
            if let Some(element) = element {
                let _ = write!(
                    out,
                    "\n      <{element} type=\"{}\" message=\"{message}\">{}</{element}>",
                    xml_text(&kind),
                    xml_text(&body)
                );
            }
            let _ = write!(
                out,
                "\n      <system-out>{}</system-out>\n    </testcase>\n",
                xml_text(&format!(
                    "outcome: {}\nstop: {}\nturns: {}, tool calls: {}, checks: {}/{}\ntranscript: {}\n",
                    r.outcome.name(),
                    r.stop,
                    r.turns,
                    r.tool_call_count(),
                    r.checks_passed,
                    r.checks_total,
                    r.transcript_path
                ))
            );
        }
        let _ = writeln!(out, "  </testsuite>");
    }
    out.push_str("</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_text_escapes_markup_and_replaces_what_xml_cannot_hold() {
        assert_eq!(
            xml_text("a<b>&\"c'\n\u{1b}[31m\u{0}"),
            "a&lt;b&gt;&amp;&quot;c&apos;&#10;\u{FFFD}[31m\u{FFFD}"
        );
        assert_eq!(xml_text("]]> ok ✓"), "]]&gt; ok ✓");
    }

    #[test]
    fn one_test_case_per_run_with_failures_errors_and_skips() {
        let records = crate::reports::tests::records();
        let sorted = crate::reports::sorted(&records);
        let xml = junit_xml(&sorted, "20260101-000000");
        assert_eq!(xml.matches("<testcase ").count(), records.len());
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"harness 20260101-000000\" tests=\"8\" failures=\"3\" errors=\"1\" time=\""), "{xml}");
        assert!(xml.contains("<testsuite name=\"openai/gpt-x\" tests=\"3\" failures=\"2\" errors=\"0\" skipped=\"1\""), "{xml}");
        // A failed check: the reason as the message, the check's output as the body.
        assert!(xml.contains("<failure type=\"failed\" message=\"check &apos;unit tests&apos; failed: exit 1 (expected 0): FAILED (failures=1)\">check &apos;unit tests&apos; failed:&#10;exit 1 (expected 0)&#10;--- stdout ---&#10;FAILED (failures=1)"), "{xml}");
        // An infrastructure error is an error of its kind; a limit is a failure of its own type.
        assert!(xml.contains("<error type=\"rate_limited\" message=\"provider error (rate_limited): rate limited (429): Too Many Requests\">"), "{xml}");
        assert!(xml.contains("<failure type=\"limit_reached\""), "{xml}");
        assert!(
            xml.contains("<skipped message=\"not started: the --max-cost budget of $0.10 is spent ($0.12)\"/>"),
            "{xml}"
        );
    }
}
