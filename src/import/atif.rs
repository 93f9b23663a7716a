//! `harness import atif`: an ATIF trajectory (versions 1.4 to 1.8, as Harbor, Terminal-Bench
//! and this harness write them) read into what [`super::session`] imports: the user steps as
//! prompts, each agent step as a recorded reply (its `message`, `reasoning_content`,
//! `tool_calls` and `metrics`) followed by its `observation` as the calls' results.
//!
//! A trajectory is replayable when its tools are ours (`read`, `bash`, `edit`, `write`, `grep`,
//! `find`, `ls`); otherwise the import lists the tools it cannot replay and writes nothing for
//! that file. ATIF keeps no working folder (`--cwd` names it, so absolute paths in the calls
//! become the workspace's) and no error flag on a result (a result this harness wrote starting
//! `[error] ` is read as an error, as it wrote it); system steps are left out, since the
//! replayed agent sends its own system prompt.

use std::path::Path;

use serde_json::Value;

use super::session::{Item, Script, SessionImportError, Source};
use crate::conversation::{
    AssistantBlock, AssistantMessage, Content, StopReason, ToolCall, ToolResultMessage, Usage,
};
use crate::providers::ApiKind;
use crate::sessions::ToolStep;

/// The versions read.
const VERSIONS: std::ops::RangeInclusive<u32> = 4..=8;

/// What the trajectory's model is served by: `(provider, api)`, from what the trajectory says
/// (this harness writes `agent.extra.provider`), else the model's name; `None` when neither
/// tells.
fn provider_of(doc: &Value, model: &str) -> Option<(String, ApiKind)> {
    let named = doc
        .pointer("/agent/extra/provider")
        .and_then(Value::as_str)
        .map(str::to_owned);
    // The API of a provider the harness knows by that name (Google's also called `gemini`).
    let by_name = |provider: &str| {
        let name = if provider == "gemini" {
            "google"
        } else {
            provider
        };
        crate::providers::catalog::builtin_providers()
            .into_iter()
            .find(|e| e.name == name)
            .map(|e| e.api)
    };
    if let Some(provider) = named
        && let Some(api) = by_name(&provider)
    {
        return Some((provider, api));
    }
    let model = model.rsplit('/').next().unwrap_or(model);
    if model.starts_with("claude") {
        Some(("anthropic".into(), ApiKind::AnthropicMessages))
    } else if model.starts_with("gpt")
        || model.starts_with('o') && model[1..].starts_with(char::is_numeric)
    {
        Some(("openai".into(), ApiKind::OpenaiCompletions))
    } else if model.starts_with("gemini") {
        Some(("google".into(), ApiKind::GoogleGenerativeAi))
    } else {
        None
    }
}

/// A step's text: a string, or (later versions) a list of parts whose text parts are joined;
/// `None` when a part is not text (an image).
fn text_of(value: Option<&Value>) -> Option<String> {
    match value {
        None | Some(Value::Null) => Some(String::new()),
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(parts)) => {
            let mut out = String::new();
            for part in parts {
                match (part.get("type").and_then(Value::as_str), part.get("text")) {
                    (Some("text") | None, Some(Value::String(t))) => out.push_str(t),
                    _ => return None,
                }
            }
            Some(out)
        }
        Some(_) => None,
    }
}

/// Reads `file` into an import [`Source`]; `cwd` is the folder the run worked in, when known.
pub(crate) fn read_atif(
    file: &Path,
    cwd: Option<&str>,
    format: Option<ApiKind>,
) -> Result<Source, SessionImportError> {
    let unusable = |m: String| SessionImportError::Unusable {
        file: file.to_path_buf(),
        message: m,
    };
    let text = std::fs::read_to_string(file)
        .map_err(|e| unusable(format!("failed to read the file: {e}")))?;
    // A byte-order mark (as Windows editors save files) is no part of the JSON.
    let doc: Value =
        serde_json::from_str(text.strip_prefix('\u{feff}').unwrap_or(&text)).map_err(|e| {
            unusable(format!(
                "not JSON ({e}); an ATIF trajectory is one JSON document"
            ))
        })?;
    let version = doc
        .get("schema_version")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let minor = version
        .trim_start_matches("ATIF-")
        .trim_start_matches('v')
        .strip_prefix("1.")
        .and_then(|m| m.parse::<u32>().ok());
    if !minor.is_some_and(|m| VERSIONS.contains(&m)) {
        return Err(unusable(format!(
            "schema_version `{version}` is not ATIF-v1.4 to ATIF-v1.8"
        )));
    }
    let steps = doc
        .get("steps")
        .and_then(Value::as_array)
        .ok_or_else(|| unusable("no `steps` list".into()))?;
    let model = doc
        .pointer("/agent/model_name")
        .and_then(Value::as_str)
        .or_else(|| {
            steps
                .iter()
                .find_map(|s| s.get("model_name").and_then(Value::as_str))
        })
        .unwrap_or_default()
        .to_owned();
    let (provider, api) = match (provider_of(&doc, &model), format) {
        (Some((p, a)), _) => (p, a),
        (None, Some(api)) => (String::new(), api),
        (None, None) => {
            return Err(unusable(format!(
                "the trajectory does not say which API served `{model}`; name one with --format"
            )));
        }
    };
    let ours_wrote_it = doc.pointer("/agent/name").and_then(Value::as_str) == Some("harness");

    // Every tool the trajectory calls must be one of ours.
    let mut foreign: Vec<String> = steps
        .iter()
        .flat_map(|s| {
            s.get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .filter_map(|c| c.get("function_name").and_then(Value::as_str))
        .filter(|name| !crate::tools::registry::all_tool_names().contains(name))
        .map(str::to_owned)
        .collect();
    foreign.sort();
    foreign.dedup();
    if !foreign.is_empty() {
        return Err(unusable(format!(
            "its tools are not the harness's, so it cannot be replayed: {}; nothing written",
            foreign.join(", ")
        )));
    }

    let mut items = Vec::new();
    let mut tool_steps = Vec::new();
    let mut stopped = None;
    let mut waiting_for_prompt = true;
    let mut turn = 0u32;
    for (i, step) in steps.iter().enumerate() {
        let at = format!("step {}", i + 1);
        let source = step
            .get("source")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match source {
            "system" => {}
            "user" => {
                if !waiting_for_prompt {
                    stopped = Some(format!(
                        "{at}: a user message while the agent was working (the replay sends a prompt only when the agent has stopped)"
                    ));
                    break;
                }
                let Some(text) = text_of(step.get("message")) else {
                    stopped = Some(format!("{at}: a user message with images"));
                    break;
                };
                items.push(Item::Prompt(text));
                waiting_for_prompt = false;
            }
            "agent" => {
                if waiting_for_prompt && !items.is_empty() {
                    stopped = Some(format!("{at}: a reply where none was asked for"));
                    break;
                }
                turn += 1;
                let mut content = Vec::new();
                if let Some(thinking) = step
                    .get("reasoning_content")
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                {
                    content.push(AssistantBlock::Thinking {
                        thinking: thinking.to_owned(),
                        signature: None,
                        redacted: false,
                    });
                }
                match text_of(step.get("message")) {
                    Some(text) if !text.is_empty() => {
                        content.push(AssistantBlock::Text {
                            text,
                            signature: None,
                        });
                    }
                    Some(_) => {}
                    None => {
                        stopped = Some(format!("{at}: a reply with images"));
                        break;
                    }
                }
                let calls: Vec<ToolCall> = step
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|c| ToolCall {
                        id: c
                            .get("tool_call_id")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                        name: c
                            .get("function_name")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                        arguments: c.get("arguments").cloned().unwrap_or(Value::Null),
                        thought_signature: None,
                    })
                    .collect();
                let metric = |name: &str| {
                    step.pointer(&format!("/metrics/{name}"))
                        .and_then(Value::as_u64)
                        .unwrap_or(0)
                };
                let cached = metric("cached_tokens");
                let usage = Usage {
                    input: metric("prompt_tokens").saturating_sub(cached),
                    output: metric("completion_tokens"),
                    cache_read: cached,
                    cache_write: 0,
                    total_tokens: metric("prompt_tokens") + metric("completion_tokens"),
                };
                content.extend(calls.iter().cloned().map(AssistantBlock::ToolCall));
                items.push(Item::Reply {
                    message: AssistantMessage {
                        content,
                        api: api.as_str().to_owned(),
                        provider: provider.clone(),
                        model: model.clone(),
                        usage,
                        stop_reason: if calls.is_empty() {
                            StopReason::Stop
                        } else {
                            StopReason::ToolUse
                        },
                        error_message: None,
                        response_id: None,
                    },
                    interrupted: false,
                });
                if calls.is_empty() {
                    waiting_for_prompt = true;
                    continue;
                }
                let results: Vec<&Value> = step
                    .pointer("/observation/results")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .collect();
                let mut answered = Vec::new();
                for call in &calls {
                    let Some(result) = results.iter().find(|r| {
                        r.get("source_call_id").and_then(Value::as_str) == Some(call.id.as_str())
                    }) else {
                        break;
                    };
                    let text = result
                        .get("content")
                        .and_then(|c| text_of(Some(c)))
                        .unwrap_or_default();
                    let (is_error, text) = match text.strip_prefix("[error] ") {
                        Some(rest) if ours_wrote_it => (true, rest.to_owned()),
                        _ => (false, text),
                    };
                    tool_steps.push(ToolStep {
                        line: i + 1,
                        result_line: i + 1,
                        turn,
                        id: call.id.clone(),
                        name: call.name.clone(),
                        arguments: call.arguments.clone(),
                        is_error,
                        text: text.clone(),
                        details: None,
                    });
                    answered.push(ToolResultMessage {
                        tool_call_id: call.id.clone(),
                        tool_name: call.name.clone(),
                        content: vec![Content::Text { text }],
                        is_error,
                    });
                }
                if answered.len() < calls.len() {
                    // The reply stays out too: the replay would run its calls with nothing
                    // recorded to compare.
                    items.pop();
                    stopped = Some(format!("{at}: a tool call without its result"));
                    break;
                }
                items.push(Item::Results(answered));
            }
            other => {
                stopped = Some(format!("{at}: a step of unknown source `{other}`"));
                break;
            }
        }
    }
    // The replay ends where the agent had stopped.
    if stopped.is_some() || !waiting_for_prompt {
        let clean = items
            .iter()
            .rposition(|i| matches!(i, Item::Reply { message, .. } if message.tool_calls().next().is_none()))
            .map_or(0, |p| p + 1);
        items.truncate(clean);
        stopped.get_or_insert_with(|| "the end of the file: the agent had not stopped".to_owned());
    }
    if !items.iter().any(|i| matches!(i, Item::Reply { .. })) {
        return Err(unusable(format!(
            "nothing to replay before {}",
            stopped.as_deref().unwrap_or("the end")
        )));
    }
    let session = doc
        .get("session_id")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let started = steps
        .iter()
        .find_map(|s| s.get("timestamp").and_then(Value::as_str))
        .unwrap_or_default()
        .to_owned();
    Ok(Source {
        file: file.to_path_buf(),
        // The first eight letters and digits of the session id.
        task: super::session::task_id(
            "atif",
            &session
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .take(8)
                .collect::<String>(),
            file,
        ),
        started,
        cwd: cwd.unwrap_or_default().to_owned(),
        described: format!("{version} trajectory, session {session}"),
        tag: "atif",
        script: Script {
            items,
            model: (provider, model, api.as_str().to_owned()),
            stopped,
            thinking_changes: 0,
            interrupted: 0,
        },
        steps: tool_steps,
        problems: Vec::new(),
    })
}
