//! The cassette file format: a header, then the interactions in order.
//!
//! YAML through serde_yaml_ng: multi-line strings (prompts, tool outputs, file contents) come out
//! as `|` block scalars, so a diff of a re-recorded cassette reads like a change to a
//! conversation. Every struct denies unknown fields, so a hand edit with a typo is an error.
//! Depends on serde only; no I/O here but [`read_header`].
//!
//! **Version 2** (written since delta storage) stores each request after the first as what it
//! adds to the previous one: an agent's request repeats the whole history, so storing it whole
//! makes a file grow with the square of the turns. A delta names the top-level arrays that grew
//! (`extend`: how many items of the previous array are kept, then the appended ones), the
//! top-level fields that changed (`set`) or went away (`unset`); `method`, `path` and `headers`
//! are written only when they change. In memory every request is whole again ([`Cassette`]), so
//! replaying and comparing never see deltas. **Version 1** files (every request whole) still
//! load; `harness cassettes upgrade` rewrites them.
//!
//! ```text
//! format_version: 2
//! harness_version: 0.1.0
//! recorded_at: 2026-11-30T12:00:00Z
//! task: fix-bug
//! provider: anthropic
//! model: claude-sonnet-4-5
//! api: anthropic-messages
//! tool_profile: pi
//! edit_strategy: pi
//! sandbox: isolated             # the tier of the recording run (absent: unknown)
//! workspace_placeholder: /workspace
//! outcome:                      # what the recording run scored (absent: unknown)
//!   outcome: passed
//!   checks: [{name: unit tests, passed: true}]
//!   edits: {calls: 1, exact: 1, fuzzy: 0, failed: 0}
//! interactions:
//! - request:
//!     method: POST
//!     path: /v1/messages
//!     headers: {anthropic-version: 2023-06-01, content-type: application/json}
//!     body:                     # the first request whole: structured JSON
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
//! - request:
//!     delta:                    # what this request adds to the previous one
//!       extend:
//!         messages:
//!           keep: 1             # the first item of the previous `messages`, then:
//!           append:
//!           - {role: assistant, content: [...]}
//!           - {role: user, content: [...]}
//!   response: ...
//! ```
//!
//! Limitation (libyaml's emitter): a multi-line string containing a tab or a line with trailing
//! spaces cannot be a block scalar and is written double-quoted with escapes instead.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::CassetteError;
use crate::providers::ApiKind;
use crate::providers::sse::SseEvent;
pub use crate::record::{RecordedCheck, RecordedEdits, RecordedOutcome};

/// The format version this harness writes.
pub const FORMAT_VERSION: u32 = 2;

/// The format versions this harness reads.
pub const READABLE_VERSIONS: [u32; 2] = [1, 2];

/// The default placeholder written in place of the workspace path.
pub const WORKSPACE_PLACEHOLDER: &str = "/workspace";

/// The placeholder written in place of the folder of bash's full-output files (a temp folder
/// per run), so `/tmp/harness-bash-Xy12/pi-bash-….log` is recorded as
/// `/tmp/harness-bash/pi-bash-….log`.
pub const BASH_OUTPUT_DIR_PLACEHOLDER: &str = "/tmp/harness-bash";

/// The placeholder written in place of the rest of a run's scratch folder (the commands' `HOME`
/// and `TMPDIR`, a temp folder per run).
pub const SCRATCH_PLACEHOLDER: &str = "/tmp/harness-run";

/// What a cassette was recorded with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CassetteHeader {
    /// [`FORMAT_VERSION`] when written by this harness.
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
    /// The sandbox tier the recording ran under (`isolated`, `workspace`, `none`); `None` in
    /// cassettes recorded before tiers were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// What replaced the workspace path in the recorded traffic.
    pub workspace_placeholder: String,
    /// What the recording run scored, so a replay can say whether the outcome held; `None` for
    /// cassettes recorded before outcomes were kept (the recorded outcome is unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<RecordedOutcome>,
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
            sandbox: None,
            workspace_placeholder: WORKSPACE_PLACEHOLDER.to_owned(),
            outcome: None,
        }
    }
}

/// A whole cassette, every request whole. On disk the header fields sit at the top level, then
/// `interactions` (requests after the first stored as deltas in version 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "CassetteFile", try_from = "CassetteFile")]
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sandbox: Option<String>,
    workspace_placeholder: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    outcome: Option<RecordedOutcome>,
    interactions: Vec<InteractionFile>,
}

/// The header alone, as [`read_header`] parses it from the lines before `interactions:`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HeaderFile {
    format_version: u32,
    harness_version: String,
    recorded_at: String,
    task: String,
    provider: String,
    model: String,
    api: ApiKind,
    tool_profile: String,
    edit_strategy: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sandbox: Option<String>,
    workspace_placeholder: String,
    #[serde(default)]
    outcome: Option<RecordedOutcome>,
}

/// One interaction on disk.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct InteractionFile {
    request: RequestFile,
    response: RecordedResponse,
}

/// A request on disk: whole (`body`), or a `delta` on the previous request; `method`, `path` and
/// `headers` may be left out of a delta request when they did not change.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    method: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    headers: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    body: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    delta: Option<BodyDelta>,
}

/// What a request's body adds to the previous request's body.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodyDelta {
    /// Top-level arrays that share a prefix with the previous request's: the conversation.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extend: BTreeMap<String, ArrayDelta>,
    /// Top-level fields with a new value (or new fields).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub set: Map<String, Value>,
    /// Top-level fields the previous request had and this one has not.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unset: Vec<String>,
}

/// An array as the first `keep` items of the previous request's array, then `append`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArrayDelta {
    pub keep: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub append: Vec<Value>,
}

impl BodyDelta {
    /// The delta that turns `previous` into `next` (both JSON objects; anything else is `None`,
    /// and the request is stored whole). Arrays keep their longest common prefix.
    pub fn between(previous: &Value, next: &Value) -> Option<BodyDelta> {
        let (Value::Object(prev), Value::Object(next)) = (previous, next) else {
            return None;
        };
        let mut delta = BodyDelta::default();
        for (key, value) in next {
            match (prev.get(key), value) {
                (Some(old), new) if old == new => {}
                (Some(Value::Array(old)), Value::Array(new)) => {
                    let keep = old.iter().zip(new).take_while(|(a, b)| a == b).count();
                    if keep == 0 {
                        delta.set.insert(key.clone(), value.clone());
                    } else {
                        delta.extend.insert(
                            key.clone(),
                            ArrayDelta {
                                keep,
                                append: new[keep..].to_vec(),
                            },
                        );
                    }
                }
                _ => {
                    delta.set.insert(key.clone(), value.clone());
                }
            }
        }
        delta.unset = prev
            .keys()
            .filter(|k| !next.contains_key(*k))
            .cloned()
            .collect();
        Some(delta)
    }

    /// Applies the delta to `previous`; an error says what does not fit (a hand edit that made
    /// the conversation inconsistent).
    pub fn apply(&self, previous: &Value) -> Result<Value, String> {
        let Value::Object(prev) = previous else {
            return Err("the previous request's body is not a JSON object".to_owned());
        };
        let mut out = prev.clone();
        for key in &self.unset {
            if out.shift_remove(key).is_none() {
                return Err(format!(
                    "`unset` names `{key}`, which the previous request does not have"
                ));
            }
        }
        for (key, array) in &self.extend {
            let Some(Value::Array(old)) = out.get_mut(key) else {
                return Err(format!(
                    "`extend` names `{key}`, which is not an array in the previous request"
                ));
            };
            if array.keep > old.len() {
                return Err(format!(
                    "`extend.{key}.keep` is {} but the previous request's `{key}` has {} items",
                    array.keep,
                    old.len()
                ));
            }
            old.truncate(array.keep);
            old.extend(array.append.iter().cloned());
        }
        for (key, value) in &self.set {
            if self.extend.contains_key(key) {
                return Err(format!("`{key}` is both in `extend` and in `set`"));
            }
            out.insert(key.clone(), value.clone());
        }
        Ok(Value::Object(out))
    }
}

impl From<Cassette> for CassetteFile {
    fn from(c: Cassette) -> Self {
        let h = c.header;
        let mut interactions = Vec::with_capacity(c.interactions.len());
        let mut previous: Option<RecordedRequest> = None;
        for it in c.interactions {
            let request = it.request;
            let delta = match &previous {
                Some(p) if h.format_version >= 2 => BodyDelta::between(&p.body, &request.body),
                _ => None,
            };
            let file = match (delta, &previous) {
                (Some(delta), Some(p)) => RequestFile {
                    method: (p.method != request.method).then(|| request.method.clone()),
                    path: (p.path != request.path).then(|| request.path.clone()),
                    headers: (p.headers != request.headers).then(|| request.headers.clone()),
                    body: None,
                    delta: Some(delta),
                },
                _ => RequestFile {
                    method: Some(request.method.clone()),
                    path: Some(request.path.clone()),
                    headers: (!request.headers.is_empty()).then(|| request.headers.clone()),
                    body: Some(request.body.clone()),
                    delta: None,
                },
            };
            interactions.push(InteractionFile {
                request: file,
                response: it.response,
            });
            previous = Some(request);
        }
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
            sandbox: h.sandbox,
            workspace_placeholder: h.workspace_placeholder,
            outcome: h.outcome,
            interactions,
        }
    }
}

impl TryFrom<CassetteFile> for Cassette {
    type Error = String;

    fn try_from(f: CassetteFile) -> Result<Self, String> {
        let mut interactions: Vec<Interaction> = Vec::with_capacity(f.interactions.len());
        for (i, it) in f.interactions.into_iter().enumerate() {
            let at = |what: String| format!("interaction {i} (request {}): {what}", i + 1);
            let r = it.request;
            let previous = interactions.last().map(|p| &p.request);
            let request = match (r.body, r.delta, previous) {
                (Some(_), Some(_), _) => {
                    return Err(at("a request has either `body` or `delta`, not both".into()));
                }
                (None, None, _) => return Err(at("the request has no `body`".into())),
                (None, Some(_), _) if f.format_version < 2 => {
                    return Err(at(format!(
                        "`delta` needs format_version 2 (this file says {})",
                        f.format_version
                    )));
                }
                (None, Some(_), None) => {
                    return Err(at(
                        "the first request must have a `body`, not a `delta`".into()
                    ));
                }
                (None, Some(delta), Some(p)) => RecordedRequest {
                    method: r.method.unwrap_or_else(|| p.method.clone()),
                    path: r.path.unwrap_or_else(|| p.path.clone()),
                    headers: r.headers.unwrap_or_else(|| p.headers.clone()),
                    body: delta.apply(&p.body).map_err(at)?,
                },
                (Some(body), None, _) => RecordedRequest {
                    method: r
                        .method
                        .ok_or_else(|| at("the request has no `method`".into()))?,
                    path: r
                        .path
                        .ok_or_else(|| at("the request has no `path`".into()))?,
                    headers: r.headers.unwrap_or_default(),
                    body,
                },
            };
            interactions.push(Interaction {
                request,
                response: it.response,
            });
        }
        Ok(Cassette {
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
                sandbox: f.sandbox,
                workspace_placeholder: f.workspace_placeholder,
                outcome: f.outcome,
            },
            interactions,
        })
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
        events: Vec<RecordedEvent>,
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
pub struct RecordedEvent {
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

impl RecordedEvent {
    /// An event as a cassette keeps it: its data parsed when it is JSON (a JSON string would read
    /// back as text, so it stays text), any other data as text, no data as neither.
    pub fn new(
        event: Option<String>,
        data: &str,
        id: Option<String>,
        retry: Option<String>,
    ) -> Self {
        let (data, text) = if data.is_empty() {
            (None, None)
        } else {
            match serde_json::from_str::<Value>(data) {
                Ok(v) if !v.is_string() => (Some(v), None),
                _ => (None, Some(data.to_owned())),
            }
        };
        RecordedEvent {
            event,
            data,
            text,
            id,
            retry,
        }
    }
}

impl RecordedResponse {
    /// A whole `text/event-stream` response of `events`, as a cassette keeps it: what a cassette
    /// written from a rendered reply holds ([`crate::providers::wire::WireFormat::render_turn`]).
    pub fn event_stream(events: &[SseEvent]) -> Self {
        RecordedResponse {
            status: 200,
            headers: BTreeMap::from([("content-type".to_owned(), "text/event-stream".to_owned())]),
            body: ResponseBody::Sse {
                events: events
                    .iter()
                    .map(|e| RecordedEvent::new(e.event.clone(), &e.data, None, None))
                    .collect(),
                end: StreamEnd::Completed,
                error: None,
            },
        }
    }
}

/// How a recorded event stream ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamEnd {
    /// The server closed the body normally.
    Completed,
    /// The connection broke mid-stream (see `error`); replay ends the body with that error.
    Cut,
    /// The client stopped reading before the end (an abort, a user's Escape); replay ends the
    /// body there, as an interruption the agent stops on as Pi does.
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
    /// Serialises to YAML, in the version of its header (deltas from version 2 on).
    pub fn to_yaml(&self) -> Result<String, serde_yaml_ng::Error> {
        serde_yaml_ng::to_string(self)
    }

    /// Reads and parses the cassette at `path` (a missing file is [`CassetteError::Missing`]).
    pub fn load(path: &Path) -> Result<Cassette, CassetteError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                CassetteError::missing_unknown(path)
            } else {
                CassetteError::Io {
                    action: "read",
                    path: path.to_owned(),
                    source: e,
                }
            }
        })?;
        Cassette::from_yaml(&text, path)
    }

    /// Parses a cassette of any readable version; `path` is only used in error messages.
    pub fn from_yaml(text: &str, path: &Path) -> Result<Cassette, CassetteError> {
        if text.trim().is_empty() {
            return Err(CassetteError::Empty {
                path: path.to_owned(),
            });
        }
        // Check the version first, so a newer file says so instead of failing on a new field.
        check_version(header_prefix(text), path)?;
        let cassette: Cassette = crate::yaml::from_str(text).map_err(|e| malformed(e, path))?;
        check_recorded_at(&cassette.header.recorded_at, path)?;
        Ok(cassette)
    }
}

fn malformed(e: crate::yaml::YamlError, path: &Path) -> CassetteError {
    CassetteError::Malformed {
        path: path.to_owned(),
        location: e
            .location()
            .map(|(line, column)| format!("line {line} column {column}"))
            .unwrap_or_else(|| "an unknown location".to_owned()),
        message: e.to_string(),
    }
}

fn check_recorded_at(recorded_at: &str, path: &Path) -> Result<(), CassetteError> {
    if chrono::DateTime::parse_from_rfc3339(recorded_at).is_err() {
        return Err(CassetteError::Malformed {
            path: path.to_owned(),
            location: "recorded_at".to_owned(),
            message: format!("`{recorded_at}` is not an RFC 3339 timestamp"),
        });
    }
    Ok(())
}

/// The lines before the top-level `interactions:` key (the whole text if there is none).
fn header_prefix(text: &str) -> &str {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if is_interactions_line(line) {
            return &text[..offset];
        }
        offset += line.len();
    }
    text
}

fn is_interactions_line(line: &str) -> bool {
    line.strip_prefix("interactions:")
        .is_some_and(|rest| rest.trim().is_empty() || rest.trim_start().starts_with('['))
}

/// Reads `format_version` from the header text and refuses versions this harness cannot read.
fn check_version(header: &str, path: &Path) -> Result<u32, CassetteError> {
    let probe: serde_yaml_ng::Value =
        crate::yaml::from_str(header).map_err(|e| malformed(e, path))?;
    let found = probe.get("format_version");
    match found.and_then(serde_yaml_ng::Value::as_u64) {
        Some(v) if READABLE_VERSIONS.iter().any(|r| u64::from(*r) == v) => Ok(v as u32),
        Some(v) => Err(CassetteError::Version {
            path: path.to_owned(),
            found: v.to_string(),
        }),
        None if found.is_none() => Err(CassetteError::Malformed {
            path: path.to_owned(),
            location: "the header".to_owned(),
            message: "there is no `format_version`; is this a cassette?".to_owned(),
        }),
        None => Err(CassetteError::Version {
            path: path.to_owned(),
            found: format!("{:?}", found),
        }),
    }
}

/// Reads only the header of the cassette at `path`: the lines before `interactions:`, so the
/// planner never parses the recorded traffic. Errors as [`Cassette::from_yaml`] would give for
/// the header (an empty file says so).
pub fn read_header(path: &Path) -> Result<CassetteHeader, CassetteError> {
    let io = |source| CassetteError::Io {
        action: "read",
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            CassetteError::missing_unknown(path)
        } else {
            io(e)
        }
    })?;
    let mut reader = std::io::BufReader::new(file);
    let mut header = String::new();
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).map_err(io)? == 0 || is_interactions_line(&line) {
            break;
        }
        header.push_str(&line);
    }
    if header.trim().is_empty() {
        return Err(CassetteError::Empty {
            path: path.to_owned(),
        });
    }
    check_version(&header, path)?;
    let h: HeaderFile = crate::yaml::from_str(&header).map_err(|e| malformed(e, path))?;
    check_recorded_at(&h.recorded_at, path)?;
    Ok(CassetteHeader {
        format_version: h.format_version,
        harness_version: h.harness_version,
        recorded_at: h.recorded_at,
        task: h.task,
        provider: h.provider,
        model: h.model,
        api: h.api,
        tool_profile: h.tool_profile,
        edit_strategy: h.edit_strategy,
        sandbox: h.sandbox,
        workspace_placeholder: h.workspace_placeholder,
        outcome: h.outcome,
    })
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
                            RecordedEvent {
                                event: Some("ping".into()),
                                data: Some(json!({"type": "ping"})),
                                text: None,
                                id: None,
                                retry: None,
                            },
                            RecordedEvent {
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
    fn the_sandbox_tier_is_kept_and_optional() {
        let mut c = sample();
        assert!(
            !c.to_yaml().unwrap().contains("sandbox:"),
            "absent when unknown"
        );
        c.header.sandbox = Some("isolated".into());
        let yaml = c.to_yaml().unwrap();
        assert!(
            yaml.contains("edit_strategy: replace\nsandbox: isolated\n"),
            "{yaml}"
        );
        assert_eq!(Cassette::from_yaml(&yaml, Path::new("x.yaml")).unwrap(), c);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.yaml");
        std::fs::write(&path, &yaml).unwrap();
        assert_eq!(
            read_header(&path).unwrap().sandbox.as_deref(),
            Some("isolated")
        );
        // A file written before tiers were recorded still loads, tier unknown.
        let old = yaml.replace("sandbox: isolated\n", "");
        assert_eq!(
            Cassette::from_yaml(&old, Path::new("x.yaml"))
                .unwrap()
                .header
                .sandbox,
            None
        );
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
            .replace("format_version: 2", "format_version: 3");
        let msg = Cassette::from_yaml(&yaml, Path::new("x.yaml"))
            .unwrap_err()
            .to_string();
        assert!(msg.contains("format_version 3"), "{msg}");
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

    /// A conversation of `turns` requests as an agent builds them: each repeats the history.
    fn conversation(turns: usize, version: u32) -> Cassette {
        let mut c = sample();
        c.header.format_version = version;
        let first = c.interactions[0].clone();
        c.interactions.clear();
        let mut messages = vec![json!({"role": "user", "content": "fix the bug"})];
        for turn in 0..turns {
            let mut body = json!({
                "model": "m",
                "system": "You are a coding agent.\n",
                "messages": messages.clone(),
                "max_tokens": 100,
            });
            if turn == 2 {
                body["temperature"] = json!(0.5);
            }
            c.interactions.push(Interaction {
                request: RecordedRequest {
                    body,
                    ..first.request.clone()
                },
                response: first.response.clone(),
            });
            // The marker on the last message moves, as Anthropic's cache_control does.
            if let Some(last) = messages.last_mut() {
                last.as_object_mut().unwrap().remove("cache");
            }
            messages.push(
                json!({"role": "assistant", "content": format!("calling a tool, turn {turn}")}),
            );
            messages.push(json!({"role": "user", "content": format!("result {turn}\nline two\n"), "cache": true}));
        }
        c
    }

    #[test]
    fn version_2_stores_deltas_and_round_trips() {
        let c = conversation(6, 2);
        let yaml = c.to_yaml().unwrap();
        assert_eq!(yaml.matches("delta:").count(), 5, "{yaml}");
        assert_eq!(yaml.matches("body:\n      model: m").count(), 1, "{yaml}");
        assert!(yaml.contains("keep: 2"), "{yaml}");
        assert!(yaml.contains("unset:\n      - temperature"), "{yaml}");
        assert_eq!(yaml.matches("method: POST").count(), 1, "{yaml}");
        let back = Cassette::from_yaml(&yaml, Path::new("x.yaml")).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn version_2_grows_linearly_and_version_1_still_loads() {
        let size = |turns, version| conversation(turns, version).to_yaml().unwrap().len();
        let (v1_10, v1_40) = (size(10, 1), size(40, 1));
        let (v2_10, v2_40) = (size(10, 2), size(40, 2));
        assert!(
            v1_40 > 10 * v1_10,
            "v1 grows with the square: {v1_10} -> {v1_40}"
        );
        assert!(v2_40 < 5 * v2_10, "v2 grows linearly: {v2_10} -> {v2_40}");
        let v1 = conversation(5, 1);
        let yaml = v1.to_yaml().unwrap();
        assert!(!yaml.contains("delta:"), "{yaml}");
        assert_eq!(Cassette::from_yaml(&yaml, Path::new("x.yaml")).unwrap(), v1);
    }

    #[test]
    fn inconsistent_deltas_name_the_interaction() {
        let yaml = conversation(3, 2).to_yaml().unwrap();
        let bad = yaml.replacen("keep: 2", "keep: 7", 1);
        let msg = Cassette::from_yaml(&bad, Path::new("c/x.yaml"))
            .unwrap_err()
            .to_string();
        assert!(msg.contains("c/x.yaml"), "{msg}");
        assert!(msg.contains("interaction 2 (request 3)"), "{msg}");
        assert!(msg.contains("`extend.messages.keep` is 7"), "{msg}");
        let v1 = yaml.replace("format_version: 2", "format_version: 1");
        let msg = Cassette::from_yaml(&v1, Path::new("x.yaml"))
            .unwrap_err()
            .to_string();
        assert!(msg.contains("`delta` needs format_version 2"), "{msg}");
    }

    #[test]
    fn empty_and_headerless_files_say_so() {
        let msg = Cassette::from_yaml("\n  \n", Path::new("e.yaml"))
            .unwrap_err()
            .to_string();
        assert!(msg.contains("`e.yaml` is an empty file"), "{msg}");
        let msg = Cassette::from_yaml("task: x\n", Path::new("e.yaml"))
            .unwrap_err()
            .to_string();
        assert!(msg.contains("no `format_version`"), "{msg}");
    }

    #[test]
    fn the_header_is_read_without_the_interactions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.yaml");
        let mut c = conversation(3, 2);
        c.header.outcome = Some(RecordedOutcome {
            outcome: crate::record::Outcome::Passed,
            checks: vec![RecordedCheck {
                name: "unit tests".into(),
                passed: true,
            }],
            edits: RecordedEdits {
                calls: 2,
                exact: 1,
                fuzzy: 1,
                failed: 0,
            },
        });
        let mut yaml = c.to_yaml().unwrap();
        // Garbage after the header: only a full parse would trip over it.
        yaml.push_str("- this is not an interaction: [\n");
        std::fs::write(&path, &yaml).unwrap();
        assert_eq!(read_header(&path).unwrap(), c.header);
        assert!(Cassette::from_yaml(&yaml, &path).is_err());
        std::fs::write(&path, "").unwrap();
        assert!(
            read_header(&path)
                .unwrap_err()
                .to_string()
                .contains("empty file")
        );
    }
}
