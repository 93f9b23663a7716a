//! The cassette file format, version 1: a header, then the interactions in order.
//!
//! YAML through serde_yaml_ng: multi-line strings (prompts, tool outputs, file contents) come out
//! as `|` block scalars, so a diff of a re-recorded cassette reads like a change to a
//! conversation. Every struct denies unknown fields, so a hand edit with a typo is an error.
//! Depends on serde only; no I/O here except [`Cassette::from_yaml`] error locations.
//!
//! ```text
//! format_version: 1
//! harness_version: 0.1.0
//! recorded_at: 2026-11-30T12:00:00Z
//! task: fix-bug
//! provider: anthropic
//! model: claude-sonnet-4-5
//! api: anthropic-messages
//! tool_profile: pi
//! edit_strategy: replace
//! workspace_placeholder: /workspace
//! interactions:
//! - request:
//!     method: POST
//!     path: /v1/messages
//!     headers: {anthropic-version: 2023-06-01, content-type: application/json}
//!     body:                     # the JSON body, structured; multi-line strings as `|` blocks
//!       system: |
//!         You are a coding agent working in /workspace.
//!   response:
//!     status: 200
//!     headers: {content-type: text/event-stream}
//!     body:
//!       kind: sse               # or `kind: json` + `json:`, or `kind: text` + `text:`
//!       events:
//!       - event: message_start
//!         data: {type: message_start}   # parsed JSON; non-JSON data goes in `text:`
//!       end: completed          # or `cut` (+ `error:`), or `abandoned`
//! ```
//!
//! Limitation (libyaml's emitter): a multi-line string containing a tab or a line with trailing
//! spaces cannot be a block scalar and is written double-quoted with escapes instead.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::CassetteError;
use crate::providers::ApiKind;

/// The format version this harness reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// The default placeholder written in place of the workspace path.
pub const WORKSPACE_PLACEHOLDER: &str = "/workspace";

/// What a cassette was recorded with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CassetteHeader {
    /// Always [`FORMAT_VERSION`] when written by this harness.
    pub format_version: u32,
    /// `CARGO_PKG_VERSION` of the harness that recorded it.
    pub harness_version: String,
    /// One RFC 3339 timestamp for the whole file (when recording finished).
    pub recorded_at: String,
    /// The task id.
    pub task: String,
    /// Provider name as the user calls it (`anthropic`).
    pub provider: String,
    /// Model id as sent on the wire.
    pub model: String,
    /// Wire format.
    pub api: ApiKind,
    /// Tool profile in use (e.g. `pi`).
    pub tool_profile: String,
    /// Edit strategy in use.
    pub edit_strategy: String,
    /// What replaced the workspace path in the recorded traffic.
    pub workspace_placeholder: String,
}

impl CassetteHeader {
    /// A header stamped now, with this harness's version and the default placeholder.
    pub fn new(
        task: impl Into<String>,
        provider: impl Into<String>,
        model: impl Into<String>,
        api: ApiKind,
        tool_profile: impl Into<String>,
        edit_strategy: impl Into<String>,
    ) -> Self {
        CassetteHeader {
            format_version: FORMAT_VERSION,
            harness_version: env!("CARGO_PKG_VERSION").to_owned(),
            recorded_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            task: task.into(),
            provider: provider.into(),
            model: model.into(),
            api,
            tool_profile: tool_profile.into(),
            edit_strategy: edit_strategy.into(),
            workspace_placeholder: WORKSPACE_PLACEHOLDER.to_owned(),
        }
    }
}

/// A whole cassette file. On disk the header fields sit at the top level, then `interactions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "CassetteFile", from = "CassetteFile")]
pub struct Cassette {
    pub header: CassetteHeader,
    pub interactions: Vec<Interaction>,
}

/// The on-disk layout (serde's `flatten` would lose `deny_unknown_fields`).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct CassetteFile {
    format_version: u32,
    harness_version: String,
    recorded_at: String,
    task: String,
    provider: String,
    model: String,
    api: ApiKind,
    tool_profile: String,
    edit_strategy: String,
    workspace_placeholder: String,
    interactions: Vec<Interaction>,
}

impl From<Cassette> for CassetteFile {
    fn from(c: Cassette) -> Self {
        let h = c.header;
        CassetteFile {
            format_version: h.format_version,
            harness_version: h.harness_version,
            recorded_at: h.recorded_at,
            task: h.task,
            provider: h.provider,
            model: h.model,
            api: h.api,
            tool_profile: h.tool_profile,
            edit_strategy: h.edit_strategy,
            workspace_placeholder: h.workspace_placeholder,
            interactions: c.interactions,
        }
    }
}

impl From<CassetteFile> for Cassette {
    fn from(f: CassetteFile) -> Self {
        Cassette {
            header: CassetteHeader {
                format_version: f.format_version,
                harness_version: f.harness_version,
                recorded_at: f.recorded_at,
                task: f.task,
                provider: f.provider,
                model: f.model,
                api: f.api,
                tool_profile: f.tool_profile,
                edit_strategy: f.edit_strategy,
                workspace_placeholder: f.workspace_placeholder,
            },
            interactions: f.interactions,
        }
    }
}

/// One request and the response it got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interaction {
    pub request: RecordedRequest,
    pub response: RecordedResponse,
}

/// A request as recorded: no host, no auth, the body as structured JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedRequest {
    pub method: String,
    /// Path and query (`/v1/messages`).
    pub path: String,
    /// Allow-listed headers only ([`REQUEST_HEADERS`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    pub body: Value,
}

/// A response as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedResponse {
    pub status: u16,
    /// Allow-listed headers only ([`RESPONSE_HEADERS`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    pub body: ResponseBody,
}

/// A response body: JSON, text, or a server-sent event stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum ResponseBody {
    /// A body that parsed as JSON.
    Json { json: Value },
    /// Any other body; `error` if the connection broke after `text`.
    Text {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A `text/event-stream` body, as parsed events.
    Sse {
        events: Vec<SseEvent>,
        end: StreamEnd,
        /// The error that cut the stream, when `end` is `cut`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
}

/// One server-sent event. Exactly one of `data` (the data parsed as JSON) and `text` (data that
/// is not JSON, such as `[DONE]`) is present, or neither for an event with empty data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SseEvent {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<String>,
}

/// How a recorded event stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamEnd {
    /// The server closed the body normally.
    Completed,
    /// The connection broke mid-stream (see `error`); replay ends the body with that error.
    Cut,
    /// The client stopped reading before the end (an abort); replay ends the body there.
    Abandoned,
}

/// Request headers worth keeping: they shape what the model does. Never auth headers.
pub const REQUEST_HEADERS: &[&str] = &[
    "content-type",
    "accept",
    "anthropic-version",
    "anthropic-beta",
    "openai-beta",
];

/// Response headers worth keeping: what providers read (retry hints) and what helps a reviewer.
pub const RESPONSE_HEADERS: &[&str] = &[
    "content-type",
    "retry-after",
    "retry-after-ms",
    "request-id",
    "x-request-id",
];

/// Keeps the allow-listed headers (names lower-cased); repeated headers are joined with `, `.
pub fn filter_headers(headers: &[(String, String)], allow: &[&str]) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in headers {
        let name = name.to_ascii_lowercase();
        if allow.contains(&name.as_str()) {
            out.entry(name)
                .and_modify(|v| {
                    v.push_str(", ");
                    v.push_str(value);
                })
                .or_insert_with(|| value.clone());
        }
    }
    out
}

impl Cassette {
    /// Serialises to YAML.
    pub fn to_yaml(&self) -> Result<String, serde_yaml_ng::Error> {
        serde_yaml_ng::to_string(self)
    }

    /// Parses a cassette; `path` is only used in error messages.
    pub fn from_yaml(text: &str, path: &Path) -> Result<Cassette, CassetteError> {
        let malformed = |e: serde_yaml_ng::Error| CassetteError::Malformed {
            path: path.to_owned(),
            location: e
                .location()
                .map(|l| format!("line {} column {}", l.line(), l.column()))
                .unwrap_or_else(|| "an unknown location".to_owned()),
            message: e.to_string(),
        };
        // Check the version first, so a newer file says so instead of failing on a new field.
        let probe: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).map_err(malformed)?;
        match probe
            .get("format_version")
            .and_then(serde_yaml_ng::Value::as_u64)
        {
            Some(v) if v == u64::from(FORMAT_VERSION) => {}
            found => {
                return Err(CassetteError::Version {
                    path: path.to_owned(),
                    found: found.map_or_else(|| "none".to_owned(), |v| v.to_string()),
                });
            }
        }
        let cassette: Cassette = serde_yaml_ng::from_str(text).map_err(malformed)?;
        if chrono::DateTime::parse_from_rfc3339(&cassette.header.recorded_at).is_err() {
            return Err(CassetteError::Malformed {
                path: path.to_owned(),
                location: "recorded_at".to_owned(),
                message: format!(
                    "`{}` is not an RFC 3339 timestamp",
                    cassette.header.recorded_at
                ),
            });
        }
        Ok(cassette)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Cassette {
        Cassette {
            header: CassetteHeader {
                recorded_at: "2026-01-02T03:04:05Z".into(),
                ..CassetteHeader::new(
                    "t1",
                    "anthropic",
                    "m",
                    ApiKind::AnthropicMessages,
                    "pi",
                    "replace",
                )
            },
            interactions: vec![Interaction {
                request: RecordedRequest {
                    method: "POST".into(),
                    path: "/v1/messages".into(),
                    headers: BTreeMap::from([("content-type".into(), "application/json".into())]),
                    body: json!({"system": "line one\nline two\n", "n": 1}),
                },
                response: RecordedResponse {
                    status: 200,
                    headers: BTreeMap::new(),
                    body: ResponseBody::Sse {
                        events: vec![
                            SseEvent {
                                event: Some("ping".into()),
                                data: Some(json!({"type": "ping"})),
                                text: None,
                                id: None,
                                retry: None,
                            },
                            SseEvent {
                                event: None,
                                data: None,
                                text: Some("[DONE]".into()),
                                id: None,
                                retry: None,
                            },
                        ],
                        end: StreamEnd::Cut,
                        error: Some("reset".into()),
                    },
                },
            }],
        }
    }

    #[test]
    fn round_trips_and_uses_block_scalars() {
        let c = sample();
        let yaml = c.to_yaml().unwrap();
        assert!(yaml.contains("system: |\n"), "{yaml}");
        assert!(yaml.contains("kind: sse"), "{yaml}");
        assert!(yaml.contains("end: cut"), "{yaml}");
        let back = Cassette::from_yaml(&yaml, Path::new("x.yaml")).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn tricky_json_values_survive_the_yaml_round_trip() {
        let tricky = json!({
            "strings": ["yes", "no", "on", "null", "~", "", "1.0", "0x10", "1e3", ".inf", "2023-06-01",
                " leading", "trailing ", "a: b", "- x", "#c", "'q'", "\"dq\"", "tab\tx", "multi\nline\n",
                "no final newline\nx", "  indented\nfirst", "\u{1F600} émoji", "crlf\r\nline", "\u{0}nul",
                "line with trailing space \nnext"],
            "numbers": [0, -1, 9007199254740993_u64, 18446744073709551615_u64, -9223372036854775808_i64, 0.1, 1.5e300, -0.0],
            "other": [true, false, null, {}, []],
            "weird keys": {"": 1, "yes": 2, "1": 3, "a b": 4, "null": 5}
        });
        let mut c = sample();
        c.interactions[0].request.body = tricky.clone();
        let yaml = c.to_yaml().unwrap();
        let back = Cassette::from_yaml(&yaml, Path::new("x.yaml")).unwrap();
        assert_eq!(back.interactions[0].request.body, tricky, "{yaml}");
        assert_eq!(
            serde_json::to_string(&back.interactions[0].request.body).unwrap(),
            serde_json::to_string(&tricky).unwrap(),
            "key order and number formatting kept"
        );
    }

    #[test]
    fn unknown_field_is_an_error_with_a_location() {
        let yaml = sample()
            .to_yaml()
            .unwrap()
            .replace("status: 200", "status: 200\n    stauts: 1");
        let err = Cassette::from_yaml(&yaml, Path::new("c/t.yaml")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("c/t.yaml"), "{msg}");
        assert!(msg.contains("stauts"), "{msg}");
        assert!(msg.contains("line "), "{msg}");
    }

    #[test]
    fn other_version_is_refused() {
        let yaml = sample()
            .to_yaml()
            .unwrap()
            .replace("format_version: 1", "format_version: 2");
        let msg = Cassette::from_yaml(&yaml, Path::new("x.yaml"))
            .unwrap_err()
            .to_string();
        assert!(msg.contains("format_version 2"), "{msg}");
    }

    #[test]
    fn filter_headers_keeps_only_allowed() {
        let h = vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            ("x-api-key".to_owned(), "secret".to_owned()),
            ("authorization".to_owned(), "Bearer x".to_owned()),
            ("anthropic-beta".to_owned(), "a".to_owned()),
            ("anthropic-beta".to_owned(), "b".to_owned()),
        ];
        let f = filter_headers(&h, REQUEST_HEADERS);
        assert_eq!(
            f,
            BTreeMap::from([
                ("anthropic-beta".to_owned(), "a, b".to_owned()),
                ("content-type".to_owned(), "application/json".to_owned()),
            ])
        );
    }
}
