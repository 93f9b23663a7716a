//! The output tail Pi's listing tools (`find`, `grep`, `ls`) share: the lines joined and cut to
//! the 50 KB byte limit (no line limit), then the notices in brackets (`[A. B]`) with their
//! `details` entries, in Pi's order: the count limit, the byte limit, then any tool-specific one.
//! Depends only on the tool seams and [`super::truncate`].

use serde_json::{Map, Value, json};

use super::truncate::{
    DEFAULT_MAX_BYTES, MAX_SAFE_INTEGER, TruncationResult, format_size, js_json_number, js_number,
    truncate_head,
};
use super::{Content, ToolOutput};

/// A tool's count limit (`limit` results, entries or matches).
pub struct CountLimit<'a> {
    /// Whether the listing stopped at the limit.
    pub reached: bool,
    pub limit: f64,
    /// What is counted: `results`, `entries`, `matches`.
    pub noun: &'a str,
    /// Appended to the notice (`, or refine pattern`), may be empty.
    pub hint: &'a str,
    /// The `details` key (`resultLimitReached`).
    pub key: &'a str,
}

/// A listing being finished into a [`ToolOutput`].
pub struct Listing {
    truncation: TruncationResult,
    notices: Vec<String>,
    details: Map<String, Value>,
}

impl Listing {
    /// `lines` joined with `\n` and cut to the byte limit; the count limit's notice
    /// (`"{limit} {noun} limit reached. Use limit={2 × limit} for more{hint}"`) when reached,
    /// then the byte limit's (`"50.0KB limit reached"`, the truncation in `details`).
    pub fn new(lines: &[String], count: CountLimit<'_>) -> Self {
        let truncation = truncate_head(&lines.join("\n"), MAX_SAFE_INTEGER, DEFAULT_MAX_BYTES);
        let mut listing = Listing {
            truncation,
            notices: Vec::new(),
            details: Map::new(),
        };
        if count.reached {
            listing.notice(
                format!(
                    "{} {} limit reached. Use limit={} for more{}",
                    js_number(count.limit),
                    count.noun,
                    js_number(count.limit * 2.0),
                    count.hint
                ),
                count.key,
                js_json_number(count.limit),
            );
        }
        if listing.truncation.truncated {
            let truncation = json!(listing.truncation);
            listing.notice(
                format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)),
                "truncation",
                truncation,
            );
        }
        listing
    }

    /// Adds a notice and its `details` entry.
    pub fn notice(&mut self, text: String, key: &str, value: Value) {
        self.notices.push(text);
        self.details.insert(key.into(), value);
    }

    /// The kept text with the notices, and the details when there are any.
    pub fn finish(self) -> ToolOutput {
        let mut output = self.truncation.content;
        if !self.notices.is_empty() {
            output.push_str(&format!("\n\n[{}]", self.notices.join(". ")));
        }
        ToolOutput {
            content: vec![Content::text(output)],
            details: (!self.details.is_empty()).then_some(Value::Object(self.details)),
            edit: None,
        }
    }
}

/// The text of a listing tool's successful output, for the tools' unit tests.
#[cfg(test)]
pub(crate) fn first_text(out: Result<ToolOutput, super::ToolError>) -> String {
    out.unwrap().content[0].as_text().unwrap().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(reached: bool) -> CountLimit<'static> {
        CountLimit {
            reached,
            limit: 2.0,
            noun: "entries",
            hint: ", or not",
            key: "entryLimitReached",
        }
    }

    #[test]
    fn notices_come_in_pi_order_with_their_details() {
        let lines = vec!["a".to_owned(), "b".to_owned()];
        assert_eq!(
            Listing::new(&lines, count(false)).finish(),
            ToolOutput::text("a\nb")
        );
        let mut listing = Listing::new(&lines, count(true));
        listing.notice("Extra".into(), "extra", json!(true));
        let out = listing.finish();
        assert_eq!(
            out.content[0].as_text(),
            Some("a\nb\n\n[2 entries limit reached. Use limit=4 for more, or not. Extra]")
        );
        assert_eq!(
            out.details,
            Some(json!({"entryLimitReached": 2, "extra": true}))
        );
        let long = vec!["x".repeat(DEFAULT_MAX_BYTES + 1)];
        let out = Listing::new(&long, count(false)).finish();
        assert_eq!(out.content[0].as_text(), Some("\n\n[50.0KB limit reached]"));
        assert!(out.details.unwrap()["truncation"]["truncated"] == json!(true));
    }
}
