//! Pi's common message transforms (`transformMessages`, spec section 9), applied by every provider
//! before it converts the history to its wire format, plus the tool-call id normalisers of each
//! target API and Pi's lenient parsing of streamed tool arguments.
//!
//! * A message is "same model" when provider, api and model id all match the target. Other-model
//!   assistant messages lose their thinking (non-empty thinking becomes text, redacted thinking is
//!   dropped), their text signatures, and get their tool-call ids normalised; the matching tool
//!   results are remapped.
//! * Assistant messages that ended in `error` or `aborted` are dropped.
//! * Tool calls without a result before the next assistant or user message (or the end) get a
//!   synthetic error result `"No result provided"`.
//! * Pi strips lone UTF-16 surrogates from all text; Rust strings are valid UTF-8 and cannot hold
//!   them, so there is nothing to do here.
//! * Pi replaces images with placeholders for models without image input; our [`ModelSpec`] has no
//!   input capabilities yet, so every model is treated as image-capable.
//!
//! Depends on `conversation` and [`ModelSpec`] only.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::ModelSpec;
use crate::conversation::{
    AssistantBlock, AssistantMessage, Content, Message, StopReason, ToolCall, ToolResultMessage,
};

/// The text Pi sends for a tool result that has only images (the images go beside it, or after
/// the turn's results).
pub const IMAGE_ONLY_RESULT: &str = "(see attached image)";

/// Pi's `transformMessages`: returns the history as the target model must see it.
///
/// `normalize_id` turns a tool-call id of another model into one the target API accepts.
pub fn transform_messages(
    messages: &[Message],
    target: &ModelSpec,
    normalize_id: &dyn Fn(&str) -> String,
) -> Vec<Message> {
    transform_messages_from(messages, target, &|id, _| normalize_id(id))
}

/// [`transform_messages`] with a normaliser that also sees the assistant message the tool call
/// comes from (OpenAI Responses treats ids of other providers or APIs differently).
pub fn transform_messages_from(
    messages: &[Message],
    target: &ModelSpec,
    normalize_id: &dyn Fn(&str, &AssistantMessage) -> String,
) -> Vec<Message> {
    let mut id_map: HashMap<String, String> = HashMap::new();
    let mut transformed = Vec::with_capacity(messages.len());
    for msg in messages {
        match msg {
            Message::User { .. } => transformed.push(msg.clone()),
            Message::ToolResult(tr) => {
                let mut tr = tr.clone();
                if let Some(new_id) = id_map.get(&tr.tool_call_id) {
                    tr.tool_call_id = new_id.clone();
                }
                transformed.push(Message::ToolResult(tr));
            }
            Message::Assistant(source) => {
                let same = source.provider == target.provider
                    && source.api == target.api.as_str()
                    && source.model == target.model;
                let mut am = source.clone();
                am.content = am
                    .content
                    .into_iter()
                    .filter_map(|block| match block {
                        AssistantBlock::Thinking {
                            thinking,
                            signature,
                            redacted,
                        } => {
                            if redacted {
                                return same.then_some(AssistantBlock::Thinking {
                                    thinking,
                                    signature,
                                    redacted,
                                });
                            }
                            // Same model: kept exactly (empty ones too); the wire
                            // conversion decides what to send.
                            if same {
                                return Some(AssistantBlock::Thinking {
                                    thinking,
                                    signature,
                                    redacted,
                                });
                            }
                            if thinking.trim().is_empty() {
                                return None;
                            }
                            Some(AssistantBlock::Text {
                                text: thinking,
                                signature: None,
                            })
                        }
                        AssistantBlock::Text { text, signature } => Some(AssistantBlock::Text {
                            text,
                            signature: if same { signature } else { None },
                        }),
                        AssistantBlock::ToolCall(mut call) => {
                            if !same {
                                let new_id = normalize_id(&call.id, source);
                                if new_id != call.id {
                                    id_map.insert(call.id.clone(), new_id.clone());
                                    call.id = new_id;
                                }
                            }
                            Some(AssistantBlock::ToolCall(call))
                        }
                    })
                    .collect();
                transformed.push(Message::Assistant(am));
            }
        }
    }

    let mut result = Vec::with_capacity(transformed.len());
    let mut pending: Vec<ToolCall> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    let flush =
        |pending: &mut Vec<ToolCall>, answered: &mut HashSet<String>, result: &mut Vec<Message>| {
            for call in pending.drain(..) {
                if !answered.contains(&call.id) {
                    result.push(Message::ToolResult(ToolResultMessage {
                        tool_call_id: call.id,
                        tool_name: call.name,
                        content: vec![Content::text("No result provided")],
                        is_error: true,
                    }));
                }
            }
            answered.clear();
        };
    for msg in transformed {
        match &msg {
            Message::Assistant(am) => {
                flush(&mut pending, &mut answered, &mut result);
                if matches!(am.stop_reason, StopReason::Error | StopReason::Aborted) {
                    continue;
                }
                let calls: Vec<ToolCall> = am.tool_calls().cloned().collect();
                if !calls.is_empty() {
                    pending = calls;
                }
                result.push(msg);
            }
            Message::ToolResult(tr) => {
                answered.insert(tr.tool_call_id.clone());
                result.push(msg);
            }
            Message::User { .. } => {
                flush(&mut pending, &mut answered, &mut result);
                result.push(msg);
            }
        }
    }
    flush(&mut pending, &mut answered, &mut result);
    result
}

/// Replaces every char outside `[a-zA-Z0-9_-]` with `_`.
pub fn sanitize_id(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn cut(s: &str, max: usize) -> String {
    // Pi cuts UTF-16 units; sanitised ids are ASCII, where the two agree.
    s.chars().take(max).collect()
}

/// Anthropic's tool-call id rule: sanitise, cut to 64.
pub fn normalize_id_anthropic(id: &str) -> String {
    cut(&sanitize_id(id), 64)
}

/// OpenAI Chat Completions' rule: `call|item` ids keep the sanitised call part cut to 40; other
/// ids are cut to 40 for the provider `openai` only.
pub fn normalize_id_openai_completions(id: &str, provider: &str) -> String {
    if let Some((call, _)) = id.split_once('|') {
        return cut(&sanitize_id(call), 40);
    }
    if provider == "openai" && id.chars().count() > 40 {
        return cut(id, 40);
    }
    id.to_owned()
}

/// One part of an OpenAI Responses id: sanitised, cut to 64, trailing `_` stripped.
fn responses_id_part(part: &str) -> String {
    cut(&sanitize_id(part), 64).trim_end_matches('_').to_owned()
}

/// OpenAI Responses' rule (providers `openai`, `openai-codex`, `opencode`): an id without `|` is
/// sanitised, cut to 64 and loses trailing `_`; a `call|item` id gets both halves so treated,
/// where the item id of a call from another provider or API becomes `fc_<shortHash(item)>`, and
/// an item id must start with `fc_`. Other providers on this API get only the first treatment
/// of the whole id.
pub fn normalize_id_openai_responses(
    id: &str,
    target: &ModelSpec,
    source: &AssistantMessage,
) -> String {
    // `openai-responses` is the built-in catalog's name for OpenAI behind this API (Pi calls it `openai`).
    let allowed = ["openai", "openai-responses", "openai-codex", "opencode"]
        .contains(&target.provider.as_str());
    let Some((call, rest)) = id.split_once('|').filter(|_| allowed) else {
        return responses_id_part(id);
    };
    // JavaScript's `split("|")` destructuring keeps only the text up to a second `|`.
    let item = rest.split('|').next().unwrap_or("");
    let foreign = source.provider != target.provider || source.api != target.api.as_str();
    let mut item = if foreign {
        cut(&format!("fc_{}", short_hash(item)), 64)
    } else {
        responses_id_part(item)
    };
    if !item.starts_with("fc_") {
        item = responses_id_part(&format!("fc_{item}"));
    }
    format!("{}|{item}", responses_id_part(call))
}

/// Google's rule: ids are sent (and so normalised: sanitised, cut to 64) only for models whose
/// id starts with `claude-` or `gpt-oss-`; other ids pass unchanged.
pub fn normalize_id_google(id: &str, model: &str) -> String {
    if google_requires_tool_call_id(model) {
        cut(&sanitize_id(id), 64)
    } else {
        id.to_owned()
    }
}

/// Whether a model behind the Gemini API needs tool-call ids on the wire.
pub fn google_requires_tool_call_id(model: &str) -> bool {
    model.starts_with("claude-") || model.starts_with("gpt-oss-")
}

/// Pi's `shortHash`: two 32-bit multiplicative hashes over the UTF-16 units of `s`, finished and
/// written in base 36 (`h2` then `h1`).
pub fn short_hash(s: &str) -> String {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    for ch in s.encode_utf16() {
        let ch = u32::from(ch);
        h1 = (h1 ^ ch).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ ch).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507)
        ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    format!("{}{}", base36(h2), base36(h1))
}

fn base36(mut n: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ascii digits")
}

/// Pi's `parseStreamingJson`: the arguments of a tool call from its (possibly partial) JSON text.
/// Empty text is `{}`; valid JSON is parsed; a truncated object or array is closed and parsed;
/// anything else is `{}`.
pub fn parse_streaming_json(text: &str) -> Value {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Value::Object(Default::default());
    }
    if let Ok(v) = serde_json::from_str::<Value>(trimmed) {
        return v;
    }
    repair_json(trimmed)
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_else(|| Value::Object(Default::default()))
}

/// Closes an unterminated JSON text: an open string, a dangling `,` or `:` / key, open brackets.
fn repair_json(text: &str) -> Option<String> {
    let mut stack = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' => stack.push('}'),
            '[' => stack.push(']'),
            '}' | ']' if stack.pop() != Some(c) => return None,
            _ => {}
        }
    }
    let mut s = text.to_owned();
    if in_string {
        if escaped {
            s.pop();
        }
        s.push('"');
    }
    // Drop a dangling separator or an object key without a value.
    loop {
        let t = s.trim_end();
        if t.ends_with(',') || t.ends_with(':') {
            let t = t[..t.len() - 1].to_owned();
            if s.trim_end().ends_with(':') {
                // remove the key too: `{"a": 1, "b":` -> `{"a": 1`
                if let Some(pos) = t.trim_end().rfind('"') {
                    if let Some(start) = t[..pos].rfind('"') {
                        s = t[..start].to_owned();
                        continue;
                    }
                }
            }
            s = t;
            continue;
        }
        break;
    }
    while let Some(close) = stack.pop() {
        s.push(close);
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conversation::{AssistantMessage, Usage, UserContent};
    use crate::providers::ApiKind;
    use serde_json::json;

    fn spec() -> ModelSpec {
        ModelSpec {
            provider: "anthropic".into(),
            api: ApiKind::AnthropicMessages,
            model: "claude-test".into(),
            base_url: String::new(),
            api_key: None,
            headers: vec![],
        }
    }

    fn assistant(provider: &str, content: Vec<AssistantBlock>, stop: StopReason) -> Message {
        Message::Assistant(AssistantMessage {
            content,
            api: "anthropic-messages".into(),
            provider: provider.into(),
            model: "claude-test".into(),
            usage: Usage::default(),
            stop_reason: stop,
            error_message: None,
            response_id: None,
        })
    }

    fn call(id: &str) -> AssistantBlock {
        AssistantBlock::ToolCall(ToolCall {
            id: id.into(),
            name: "read".into(),
            arguments: json!({}),
            thought_signature: None,
        })
    }

    fn result(id: &str) -> Message {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "read".into(),
            content: vec![Content::text("ok")],
            is_error: false,
        })
    }

    #[test]
    fn normalises_ids_like_pi() {
        assert_eq!(
            normalize_id_anthropic("call_Z9|fc_ABC+/=very/long=="),
            "call_Z9_fc_ABC___very_long__"
        );
        assert_eq!(normalize_id_anthropic(&"a".repeat(80)).len(), 64);
        assert_eq!(
            normalize_id_openai_completions("call_Z9|fc_ABC+/=very/long==", "openai"),
            "call_Z9"
        );
        assert_eq!(
            normalize_id_openai_completions(&"b".repeat(50), "openai").len(),
            40
        );
        assert_eq!(
            normalize_id_openai_completions(&"b".repeat(50), "mock").len(),
            50
        );
    }

    #[test]
    fn normalises_responses_and_google_ids_like_pi() {
        let target = ModelSpec {
            provider: "openai".into(),
            api: ApiKind::OpenaiResponses,
            model: "gpt-resp-test".into(),
            base_url: String::new(),
            api_key: None,
            headers: vec![],
        };
        let Message::Assistant(same_api) = assistant("openai", vec![], StopReason::Stop) else {
            panic!()
        };
        let mut same_api = same_api;
        same_api.api = "openai-responses".into();
        assert_eq!(
            normalize_id_openai_responses("call_Z9|fc_ABC+/=very/long==", &target, &same_api),
            "call_Z9|fc_ABC___very_long"
        );
        assert_eq!(
            normalize_id_openai_responses("call_1|item_1", &target, &same_api),
            "call_1|fc_item_1"
        );
        assert_eq!(
            normalize_id_openai_responses("toolu_01+__", &target, &same_api),
            "toolu_01"
        );
        let Message::Assistant(foreign) = assistant("anthropic", vec![], StopReason::Stop) else {
            panic!()
        };
        let id = normalize_id_openai_responses("call_1|fc_1", &target, &foreign);
        assert_eq!(id, format!("call_1|fc_{}", short_hash("fc_1")));
        assert_eq!(normalize_id_google("a|b", "gemini-2.5-flash"), "a|b");
        assert_eq!(normalize_id_google("a|b", "claude-x"), "a_b");
    }

    #[test]
    fn short_hash_matches_pi() {
        // Computed with Pi's shortHash in node 20.
        assert_eq!(short_hash(""), "k4n83c7h0j2b");
        assert_eq!(short_hash("fc_1"), "lxmq3j1alksqn");
        assert_eq!(short_hash("fc_ABC+/=very/long=="), "1aka2az1mnd0tl");
        assert_eq!(short_hash("h\u{e9}llo\u{1f600}"), "1olj6nu1frhbfw");
    }

    #[test]
    fn other_model_thinking_becomes_text_and_ids_are_remapped() {
        let msgs = vec![
            assistant(
                "openai",
                vec![
                    AssistantBlock::Thinking {
                        thinking: "hmm".into(),
                        signature: Some("sig".into()),
                        redacted: false,
                    },
                    AssistantBlock::Thinking {
                        thinking: " ".into(),
                        signature: None,
                        redacted: false,
                    },
                    AssistantBlock::Thinking {
                        thinking: "x".into(),
                        signature: Some("d".into()),
                        redacted: true,
                    },
                    call("a|b"),
                ],
                StopReason::ToolUse,
            ),
            result("a|b"),
        ];
        let out = transform_messages(&msgs, &spec(), &normalize_id_anthropic);
        let Message::Assistant(am) = &out[0] else {
            panic!()
        };
        assert_eq!(
            am.content,
            vec![
                AssistantBlock::Text {
                    text: "hmm".into(),
                    signature: None
                },
                call("a_b")
            ]
        );
        let Message::ToolResult(tr) = &out[1] else {
            panic!()
        };
        assert_eq!(tr.tool_call_id, "a_b");
    }

    #[test]
    fn same_model_passes_through() {
        let blocks = vec![
            AssistantBlock::Thinking {
                thinking: "hmm".into(),
                signature: Some("sig".into()),
                redacted: false,
            },
            call("a|b"),
        ];
        let msgs = vec![
            assistant("anthropic", blocks.clone(), StopReason::ToolUse),
            result("a|b"),
        ];
        let out = transform_messages(&msgs, &spec(), &normalize_id_anthropic);
        assert_eq!(out, msgs);
    }

    #[test]
    fn drops_failed_replies_and_answers_orphans() {
        let msgs = vec![
            Message::User {
                content: UserContent::Text("hi".into()),
            },
            assistant(
                "anthropic",
                vec![call("t1"), call("t2")],
                StopReason::ToolUse,
            ),
            result("t1"),
            Message::User {
                content: UserContent::Text("again".into()),
            },
            assistant("anthropic", vec![call("t3")], StopReason::Error),
            assistant("anthropic", vec![call("t4")], StopReason::ToolUse),
        ];
        let out = transform_messages(&msgs, &spec(), &normalize_id_anthropic);
        let summary: Vec<String> = out
            .iter()
            .map(|m| match m {
                Message::User { .. } => "user".to_string(),
                Message::Assistant(a) => format!("assistant {}", a.tool_calls().next().unwrap().id),
                Message::ToolResult(t) => format!(
                    "result {} {} {:?}",
                    t.tool_call_id,
                    t.is_error,
                    t.content[0].as_text().unwrap()
                ),
            })
            .collect();
        assert_eq!(
            summary,
            [
                "user",
                "assistant t1",
                "result t1 false \"ok\"",
                "result t2 true \"No result provided\"",
                "user",
                "assistant t4",
                "result t4 true \"No result provided\"",
            ]
        );
    }

    #[test]
    fn parses_partial_tool_arguments() {
        assert_eq!(parse_streaming_json(""), json!({}));
        assert_eq!(parse_streaming_json("{\"a\":1}"), json!({"a":1}));
        assert_eq!(
            parse_streaming_json("{\"path\":\"a.t"),
            json!({"path":"a.t"})
        );
        assert_eq!(parse_streaming_json("{\"a\":[1,2"), json!({"a":[1,2]}));
        assert_eq!(parse_streaming_json("{\"a\":1,\"b\":"), json!({"a":1}));
        assert_eq!(parse_streaming_json("{\"a\":1,"), json!({"a":1}));
        assert_eq!(parse_streaming_json("nonsense"), json!({}));
    }
}
