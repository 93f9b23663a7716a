//! `harness cassettes check`: stale and broken cassettes, made visible before a replay trips on
//! them. A cassette whose task no longer exists, whose header does not match the task it sits
//! under (task id, file name, the tools and the prompt of its first request), a file that is
//! empty or does not parse, a recorded stream that ends before its reply does
//! ([`broken_streams`], which a replay refuses too), a stray file, a `.new` waiting for review,
//! and (from a replay's report) interactions a run never used.
//!
//! Reads headers only where that is enough; the tasks come in as plain [`TaskInfo`] so this
//! module never depends on task loading.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::format::{Cassette, RecordedEvent, ResponseBody, StreamEnd, read_header};
use super::{cassette_path, sanitize_component};
use crate::providers::ApiKind;

/// What the check needs to know of a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskInfo {
    pub id: String,
    /// The first user message (the one every recording starts from).
    pub prompt: String,
    /// The tool names the task gives the agent.
    pub tools: Vec<String>,
}

/// One problem with a cassette folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub path: PathBuf,
    pub problem: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.problem)
    }
}

/// A replayed run that left recorded interactions unused (from a report's `runs.csv`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unused {
    pub task: String,
    pub provider: String,
    pub model: String,
    /// The edit strategy the replay ran with: only a replay under the cassette's own strategy
    /// says anything about the recording (another arm's run is expected to go its own way).
    pub edit_strategy: String,
    pub unused: u32,
}

/// Checks every cassette under `dir` against `tasks`; `unused` are the runs of a replay that
/// did not use every interaction. Findings sorted by path.
pub fn check_dir(dir: &Path, tasks: &[TaskInfo], unused: &[Unused]) -> Vec<Finding> {
    let mut out = Vec::new();
    let find = |out: &mut Vec<Finding>, path: &Path, problem: String| {
        out.push(Finding {
            path: path.to_owned(),
            problem,
        })
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        find(
            &mut out,
            dir,
            "is not a readable folder of cassettes".to_owned(),
        );
        return out;
    };
    let by_folder: std::collections::BTreeMap<String, &TaskInfo> = tasks
        .iter()
        .map(|t| (sanitize_component(&t.id), t))
        .collect();
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if !path.is_dir() {
            continue;
        }
        let task = by_folder.get(&name).copied();
        if task.is_none() {
            find(
                &mut out,
                &path,
                format!(
                    "no task `{name}` in the suite: its cassettes are stale (delete the folder, or restore the task)"
                ),
            );
        }
        let Ok(files) = std::fs::read_dir(&path) else {
            continue;
        };
        for file in files.flatten() {
            let fpath = file.path();
            let fname = file.file_name().to_string_lossy().into_owned();
            if fname.ends_with(".new") {
                find(
                    &mut out,
                    &fpath,
                    "waits for review: `harness review` shows it, `--accept` or `--reject` finishes it".to_owned(),
                );
            } else if fname.ends_with(".yaml") {
                if let Some(task) = task {
                    check_file(&fpath, &fname, task, &mut out);
                }
            } else if fname != "README.md" && !fname.starts_with('.') {
                find(
                    &mut out,
                    &fpath,
                    "is not a cassette (cassettes end in `.yaml`)".to_owned(),
                );
            }
        }
    }
    for u in unused {
        let path = cassette_path(dir, &u.task, &u.provider, &u.model);
        if read_header(&path).is_ok_and(|h| h.edit_strategy != u.edit_strategy) {
            continue;
        }
        find(
            &mut out,
            &path,
            format!(
                "the last replay left {} recorded interaction{} unused: the recorded conversation went on (re-record it with `--cassette-mode rerecord`)",
                u.unused,
                if u.unused == 1 { "" } else { "s" }
            ),
        );
    }
    out.sort_by(|a, b| a.path.cmp(&b.path).then(a.problem.cmp(&b.problem)));
    out
}

fn check_file(path: &Path, name: &str, task: &TaskInfo, out: &mut Vec<Finding>) {
    let mut find = |problem: String| {
        out.push(Finding {
            path: path.to_owned(),
            problem,
        })
    };
    let header = match read_header(path) {
        Ok(h) => h,
        Err(e) => return find(first_line(&e.to_string())),
    };
    if header.task != task.id {
        find(format!(
            "records task `{}` but sits under task `{}`",
            header.task, task.id
        ));
    }
    let expected = format!(
        "{}--{}.yaml",
        sanitize_component(&header.provider),
        sanitize_component(&header.model)
    );
    if name != expected {
        find(format!(
            "records {}/{} but is named `{name}` (expected `{expected}`): a replay of that model would not find it",
            header.provider, header.model
        ));
    }
    let cassette = match Cassette::load(path) {
        Ok(c) => c,
        Err(e) => return find(first_line(&e.to_string())),
    };
    for broken in broken_streams(&cassette) {
        find(format!(
            "is broken: {broken}; its replays fail until it is recorded again"
        ));
    }
    let Some(first) = cassette.interactions.first() else {
        return find("holds no interactions: nothing to replay".to_owned());
    };
    let recorded: BTreeSet<String> = tool_names(&first.request.body).into_iter().collect();
    let now: BTreeSet<String> = task.tools.iter().cloned().collect();
    if recorded != now {
        find(format!(
            "was recorded with the tools [{}] but the task now gives [{}]: the replay will diverge at the first request",
            recorded.into_iter().collect::<Vec<_>>().join(", "),
            now.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    let prompt = task.prompt.trim();
    if !prompt.is_empty() && !contains_string(&first.request.body, prompt) {
        find(
            "was recorded with another task prompt: the replay will diverge at the first request"
                .to_owned(),
        );
    }
}

/// A recorded stream that closed normally before its reply was whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokenStream {
    /// 0-based.
    pub interaction: usize,
    pub total: usize,
    /// What is missing: `its stream has no events`, `its stream ends without `message_stop``.
    pub why: String,
}

impl std::fmt::Display for BrokenStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "interaction {} of {}: {} (the file was cut short or edited)",
            self.interaction + 1,
            self.total,
            self.why
        )
    }
}

/// The successful event streams of `cassette` recorded as closed normally (`end: completed`)
/// that hold no event ending a reply in its API: no events at all, or no final event. Replayed,
/// such a stream makes the provider retry ("stream ended before ..."), and the retry meets the
/// next interaction, a request that differs: a broken file, never a divergence. A stream that
/// was really cut this way while recording is followed by its retry (the same request), and is
/// left alone.
pub fn broken_streams(cassette: &Cassette) -> Vec<BrokenStream> {
    let api = cassette.header.api;
    let all = &cassette.interactions;
    let mut out = Vec::new();
    for (i, it) in all.iter().enumerate() {
        let ResponseBody::Sse {
            events,
            end: StreamEnd::Completed,
            ..
        } = &it.response.body
        else {
            continue;
        };
        let retried = all
            .get(i + 1)
            .is_some_and(|next| next.request == it.request);
        if !(200..300).contains(&it.response.status) || retried {
            continue;
        }
        let why = if events.is_empty() {
            "its stream has no events".to_owned()
        } else if !events.iter().any(|e| ends_reply(api, e)) {
            format!("its stream ends without {}", final_event(api))
        } else {
            continue;
        };
        out.push(BrokenStream {
            interaction: i,
            total: all.len(),
            why,
        });
    }
    out
}

/// The event `api`'s provider reads a reply up to (see each provider's `read_stream`).
fn final_event(api: ApiKind) -> &'static str {
    match api {
        ApiKind::AnthropicMessages => "`message_stop`",
        ApiKind::OpenaiCompletions => "a `finish_reason` or `[DONE]`",
        ApiKind::OpenaiResponses => "`response.completed`",
        ApiKind::GoogleGenerativeAi => "a chunk with a `finishReason`",
    }
}

/// Whether `api`'s provider stops reading at `event` with an answer: the reply's final event,
/// an error event (a typed error, retried or not as its kind says), or data it cannot read (a
/// protocol error). Mirrors the providers' `read_stream`s; the tests hold the two together.
fn ends_reply(api: ApiKind, event: &RecordedEvent) -> bool {
    let name = event.event.as_deref();
    let text = event.text.as_deref().map(str::trim);
    let data = event.data.as_ref();
    let error = data.is_some_and(|d| d.get("error").is_some_and(|e| !e.is_null()));
    match api {
        ApiKind::AnthropicMessages => matches!(name, Some("message_stop" | "error")),
        ApiKind::OpenaiCompletions => {
            text.is_some_and(|t| !t.is_empty())
                || name == Some("error")
                || error
                || data.is_some_and(|d| d["choices"][0]["finish_reason"].is_string())
        }
        ApiKind::OpenaiResponses => {
            let kind = data.and_then(|d| d["type"].as_str()).or(name);
            (text.is_some_and(|t| !t.is_empty() && t != "[DONE]"))
                || matches!(
                    kind,
                    Some(
                        "response.completed" | "response.incomplete" | "response.failed" | "error"
                    )
                )
        }
        ApiKind::GoogleGenerativeAi => {
            text.is_some_and(|t| !t.is_empty())
                || error
                || data.is_some_and(|d| {
                    d["candidates"][0]["finishReason"].is_string()
                        || d["promptFeedback"]["blockReason"].is_string()
                })
        }
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or_default().to_owned()
}

/// The tool names a request offers, in any of the four wire formats: `tools[].name`
/// (Anthropic, Responses), `tools[].function.name` (Chat), `tools[].functionDeclarations[].name`
/// (Gemini).
pub fn tool_names(body: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for tool in body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(n) = tool.get("name").and_then(Value::as_str) {
            names.push(n.to_owned());
        } else if let Some(n) = tool.pointer("/function/name").and_then(Value::as_str) {
            names.push(n.to_owned());
        }
        for decl in tool
            .get("functionDeclarations")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(n) = decl.get("name").and_then(Value::as_str) {
                names.push(n.to_owned());
            }
        }
    }
    names
}

fn contains_string(v: &Value, needle: &str) -> bool {
    match v {
        Value::String(s) => s.contains(needle),
        Value::Array(a) => a.iter().any(|x| contains_string(x, needle)),
        Value::Object(o) => o.values().any(|x| contains_string(x, needle)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::cassettes::format::Interaction;

    /// Every shipped cassette (all four APIs).
    fn shipped() -> Vec<(PathBuf, Cassette)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("cassettes");
        let mut out = Vec::new();
        for task in std::fs::read_dir(root).unwrap().flatten() {
            let Ok(files) = std::fs::read_dir(task.path()) else {
                continue;
            };
            for file in files.flatten() {
                let path = file.path();
                if path.extension().is_some_and(|e| e == "yaml") {
                    let cassette = Cassette::load(&path).unwrap();
                    out.push((path, cassette));
                }
            }
        }
        assert!(out.len() >= 4, "{out:?}");
        out
    }

    fn events_mut(it: &mut Interaction) -> &mut Vec<RecordedEvent> {
        match &mut it.response.body {
            ResponseBody::Sse { events, .. } => events,
            other => panic!("not a stream: {other:?}"),
        }
    }

    #[test]
    fn a_stream_cut_short_or_emptied_is_broken_unless_the_recording_retried_it() {
        for (path, whole) in shipped() {
            assert_eq!(broken_streams(&whole), [], "{}", path.display());
            let total = whole.interactions.len();
            let last = total - 1;
            let want = match whole.header.api {
                ApiKind::AnthropicMessages => "`message_stop`",
                ApiKind::OpenaiCompletions => "a `finish_reason` or `[DONE]`",
                ApiKind::OpenaiResponses => "`response.completed`",
                ApiKind::GoogleGenerativeAi => "a chunk with a `finishReason`",
            };
            // The last stream cut before its final event (the file cut at the end).
            let mut cut = whole.clone();
            let api = whole.header.api;
            let events = events_mut(&mut cut.interactions[last]);
            let end = events.iter().position(|e| ends_reply(api, e)).unwrap();
            events.truncate(end);
            assert_eq!(
                broken_streams(&cut),
                [BrokenStream {
                    interaction: last,
                    total,
                    why: format!("its stream ends without {want}"),
                }],
                "{}",
                path.display()
            );
            // No events in the first.
            let mut empty = whole.clone();
            events_mut(&mut empty.interactions[0]).clear();
            let found = broken_streams(&empty);
            assert_eq!(found.len(), 1, "{}", path.display());
            assert_eq!(
                found[0].to_string(),
                format!(
                    "interaction 1 of {total}: its stream has no events (the file was cut short \
                     or edited)"
                )
            );
            // Recorded as the server sent it, followed by the provider's retry: not broken.
            let mut retried = empty.clone();
            let again = whole.interactions[0].clone();
            retried.interactions.insert(1, again);
            assert_eq!(broken_streams(&retried), [], "{}", path.display());
        }
    }

    /// What `api`'s provider makes of `events` sent as a whole stream: `false` when it says the
    /// stream was cut (and so retries), `true` when it stops with an answer or an error.
    async fn provider_reads_a_whole_reply(api: ApiKind, events: &[RecordedEvent]) -> bool {
        use crate::cassettes::sse_capture::{RawEvent, encode};
        use crate::providers::sse::SseStream;
        use crate::providers::{ProviderError, anthropic, gemini, openai_chat, openai_responses};
        let wire: String = events
            .iter()
            .map(|e| {
                encode(&RawEvent {
                    event: e.event.clone(),
                    data: match (&e.data, &e.text) {
                        (Some(v), _) => v.to_string(),
                        (None, Some(t)) => t.clone(),
                        (None, None) => String::new(),
                    },
                    id: e.id.clone(),
                    retry: e.retry.clone(),
                })
            })
            .collect();
        let mut stream = SseStream::new(
            Box::pin(futures::stream::iter(vec![Ok(bytes::Bytes::from(wire))])),
            std::time::Duration::from_secs(5),
        );
        let spec = crate::providers::stream::test_spec("p", api, "m", "http://localhost");
        let result = match api {
            ApiKind::AnthropicMessages => anthropic::read_stream(&spec, &mut stream).await,
            ApiKind::OpenaiCompletions => openai_chat::read_stream(&spec, &mut stream).await,
            ApiKind::OpenaiResponses => openai_responses::read_stream(&spec, &mut stream).await,
            ApiKind::GoogleGenerativeAi => {
                let counter = std::sync::atomic::AtomicU64::new(0);
                gemini::read_stream(&spec, &mut stream, &counter).await
            }
        };
        !matches!(result, Err(ProviderError::StreamCut { .. }))
    }

    #[tokio::test]
    async fn broken_means_what_the_providers_call_a_cut_stream() {
        // Every prefix of every recorded stream, and each stream with one event left out: the
        // check calls it broken exactly when the provider would say the stream was cut.
        let mut compared = 0;
        for (path, cassette) in shipped() {
            let api = cassette.header.api;
            // The cassette with no interactions, cloned once: each variant holds one.
            let mut bare = cassette.clone();
            bare.interactions.clear();
            for (i, it) in cassette.interactions.iter().enumerate() {
                let ResponseBody::Sse { events, .. } = &it.response.body else {
                    continue;
                };
                let mut variants: Vec<Vec<RecordedEvent>> =
                    (0..=events.len()).map(|n| events[..n].to_vec()).collect();
                for skip in 0..events.len() {
                    let mut v = events.clone();
                    v.remove(skip);
                    variants.push(v);
                }
                for variant in variants {
                    let mut one = bare.clone();
                    one.interactions = vec![it.clone()];
                    *events_mut(&mut one.interactions[0]) = variant.clone();
                    let broken = !broken_streams(&one).is_empty();
                    let whole = provider_reads_a_whole_reply(api, &variant).await;
                    assert_eq!(
                        broken,
                        !whole,
                        "{} interaction {}: {} of {} events",
                        path.display(),
                        i + 1,
                        variant.len(),
                        events.len()
                    );
                    compared += 1;
                }
            }
        }
        assert!(compared > 1000, "{compared}");
    }

    #[test]
    fn tool_names_in_every_wire_format() {
        let anthropic = json!({"tools": [{"name": "read"}, {"name": "bash"}]});
        let chat = json!({"tools": [{"type": "function", "function": {"name": "read"}}]});
        let gemini =
            json!({"tools": [{"functionDeclarations": [{"name": "read"}, {"name": "ls"}]}]});
        assert_eq!(tool_names(&anthropic), ["read", "bash"]);
        assert_eq!(tool_names(&chat), ["read"]);
        assert_eq!(tool_names(&gemini), ["read", "ls"]);
        assert!(tool_names(&json!({})).is_empty());
    }
}
