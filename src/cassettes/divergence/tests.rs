//! Tests of divergence classification: requests built by the real providers' request builders
//! from one conversation in all four wire formats, changed one part at a time, and the shipped
//! cassettes with a tool's output changed.

use std::path::{Path, PathBuf};

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::*;
use crate::cassettes::format::{Cassette, REQUEST_HEADERS, filter_headers};
use crate::cassettes::normalize::map_strings;
use crate::conversation::{
    AssistantBlock, AssistantMessage, Content, Context, Message, StopReason, ToolCall,
    ToolDefinition, ToolResultMessage, Usage, UserContent,
};
use crate::providers::{ApiKind, ModelSpec, ProviderSettings, RequestOptions, ThinkingLevel};
use crate::tools::{ToolSet, ToolSetSpec};

const APIS: [ApiKind; 4] = ApiKind::ALL;

fn model_spec(api: ApiKind) -> ModelSpec {
    ModelSpec {
        provider: "p".into(),
        api,
        model: "m".into(),
        base_url: "http://127.0.0.1:1/v1".into(),
        api_key: Some("k".into()),
        headers: Vec::new(),
    }
}

/// A tool call: id, tool, arguments.
type Call = (String, String, Value);
/// A model turn: its text, its calls, and their results as (text, is_error).
type Turn = (String, Vec<Call>, Vec<(String, bool)>);

/// One conversation, as the agent keeps it.
#[derive(Clone)]
struct Conv {
    system: String,
    tools: Vec<ToolDefinition>,
    prompt: String,
    turns: Vec<Turn>,
    options: RequestOptions,
}

fn conv() -> Conv {
    let tools = ToolSet::new(&ToolSetSpec::Coding).unwrap().definitions();
    let edit = |old: &str, new: &str| json!({"path": "calc.py", "edits": [{"oldText": old, "newText": new}]});
    Conv {
        system: "You are a coding agent.\nUse the tools.\n".into(),
        tools,
        prompt: "The tests fail. Fix the bug.".into(),
        turns: vec![
            (
                "I'll read the code and list the files.".into(),
                vec![
                    ("call_01".into(), "read".into(), json!({"path": "calc.py"})),
                    ("call_02".into(), "bash".into(), json!({"command": "ls"})),
                ],
                vec![
                    ("def add(a, b):\n    return a - b\n".into(), false),
                    ("calc.py\ntest_calc.py\n".into(), false),
                ],
            ),
            (
                "The operator is wrong.".into(),
                vec![("call_03".into(), "edit".into(), edit("a - b", "a + b"))],
                vec![("Successfully replaced 1 block(s) in calc.py.".into(), false)],
            ),
            (
                String::new(),
                vec![(
                    "call_04".into(),
                    "bash".into(),
                    json!({"command": "python3 -m unittest -q"}),
                )],
                vec![("F.\nFAILED (failures=1)\n".into(), false)],
            ),
            (
                "One more case.".into(),
                vec![(
                    "call_05".into(),
                    "edit".into(),
                    edit("return", "return int"),
                )],
                vec![("Successfully replaced 1 block(s) in calc.py.".into(), false)],
            ),
        ],
        options: RequestOptions::default(),
    }
}

fn assistant(api: ApiKind, text: &str, calls: &[Call]) -> Message {
    let mut content = Vec::new();
    if !text.is_empty() {
        content.push(AssistantBlock::Text {
            text: text.into(),
            signature: None,
        });
    }
    for (id, name, arguments) in calls {
        content.push(AssistantBlock::ToolCall(ToolCall {
            id: id.clone(),
            name: name.clone(),
            arguments: arguments.clone(),
            thought_signature: None,
        }));
    }
    Message::Assistant(AssistantMessage {
        content,
        api: api.as_str().into(),
        provider: "p".into(),
        model: "m".into(),
        usage: Usage::default(),
        stop_reason: StopReason::ToolUse,
        error_message: None,
        response_id: None,
    })
}

/// The requests of the conversation: request `i` carries the history up to the results of
/// turn `i`, as the provider of `api` builds it (method, path, allow-listed headers, body).
fn requests(api: ApiKind, c: &Conv) -> Vec<Value> {
    let spec = model_spec(api);
    let mut messages = vec![Message::User {
        content: UserContent::Text(c.prompt.clone()),
    }];
    let mut out = Vec::new();
    for i in 0..=c.turns.len() {
        if i > 0 {
            let (text, calls, results) = &c.turns[i - 1];
            messages.push(assistant(api, text, calls));
            for ((id, name, _), (output, error)) in calls.iter().zip(results) {
                messages.push(Message::ToolResult(ToolResultMessage {
                    tool_call_id: id.clone(),
                    tool_name: name.clone(),
                    content: vec![Content::text(output.clone())],
                    is_error: *error,
                }));
            }
        }
        let context = Context {
            system_prompt: Some(c.system.clone()),
            messages: messages.clone(),
            tools: c.tools.clone(),
        };
        let settings = ProviderSettings::default();
        let request = api
            .wire()
            .build_request(&spec, &context, &c.options, &settings);
        let headers = filter_headers(&request.headers, REQUEST_HEADERS);
        out.push(json!({
            "method": request.method,
            "path": request.path(),
            "headers": headers,
            "body": request.body,
        }));
    }
    out
}

/// Every difference the tracker reports over all requests, recorded `a` against now `b`.
fn track(api: ApiKind, a: &[Value], b: &[Value]) -> Vec<Difference> {
    let mut t = DivergenceTracker::new(api);
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        t.compare(i, x, y);
    }
    if b.len() > a.len() {
        t.extra_request(a.len(), a.len());
    }
    if a.len() > b.len() {
        t.missing_requests(b.len(), a.len());
    }
    t.into_all()
}

/// For each wire format: the summary line and every difference's location, one block per
/// format, after changing the conversation with `change`.
fn per_api(change: impl Fn(&mut Conv)) -> String {
    let mut out = String::new();
    for api in APIS {
        let recorded = conv();
        let mut now = conv();
        change(&mut now);
        let diffs = track(api, &requests(api, &recorded), &requests(api, &now));
        let _ = writeln!(out, "{}: {}", api.as_str(), summary_line(&diffs));
        for d in &diffs {
            let _ = writeln!(
                out,
                "  [{} {:?} request {} turn {}] {}",
                d.kind, d.change, d.request, d.turn, d.location
            );
        }
    }
    out
}

#[test]
fn identical_conversations_have_no_difference() {
    for api in APIS {
        let r = requests(api, &conv());
        assert_eq!(r.len(), 5);
        assert_eq!(track(api, &r, &r), vec![], "{api:?}");
    }
}

/// Objects with their keys in reverse order, everywhere.
fn reversed_keys(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            let mut m = Map::new();
            for (k, x) in o.iter().rev() {
                m.insert(k.clone(), reversed_keys(x));
            }
            Value::Object(m)
        }
        Value::Array(a) => Value::Array(a.iter().map(reversed_keys).collect()),
        other => other.clone(),
    }
}

#[test]
fn reordered_json_keys_are_not_a_difference() {
    for api in APIS {
        let r = requests(api, &conv());
        let shuffled: Vec<Value> = r.iter().map(reversed_keys).collect();
        assert_ne!(
            serde_json::to_string(&r[2]).unwrap(),
            serde_json::to_string(&shuffled[2]).unwrap()
        );
        assert_eq!(track(api, &r, &shuffled), vec![], "{api:?}");
    }
}

#[test]
fn tool_result_changes_are_located_by_turn_and_call() {
    insta::assert_snapshot!(per_api(|c| {
        c.turns[1].2[0].0 = "Replaced 1 block(s) in calc.py.".into();
        c.turns[3].2[0].0 = "Replaced 1 block(s) in calc.py.".into();
    }));
}

#[test]
fn a_result_that_becomes_an_error_says_so() {
    insta::assert_snapshot!(per_api(|c| {
        c.turns[2].2[0] = ("Command exited with code 1\nF.\n".into(), true);
    }));
}

#[test]
fn system_prompt_changes() {
    insta::assert_snapshot!(per_api(|c| c.system.push_str("Be brief.\n")));
}

#[test]
fn user_prompt_changes() {
    insta::assert_snapshot!(per_api(
        |c| c.prompt = "The tests fail. Fix the bug in calc.py.".into()
    ));
}

#[test]
fn tool_definition_changes_name_the_tool_and_the_field() {
    insta::assert_snapshot!(per_api(|c| {
        let edit = c.tools.iter_mut().find(|t| t.name == "edit").unwrap();
        edit.description = edit
            .description
            .replace("exact text replacement", "text replacement");
        let bash = c.tools.iter_mut().find(|t| t.name == "bash").unwrap();
        bash.parameters["properties"]["timeout"]["description"] = json!("Timeout in seconds");
        c.tools.retain(|t| t.name != "write");
    }));
}

#[test]
fn a_tool_added_and_the_order_of_tools() {
    insta::assert_snapshot!(per_api(|c| {
        let grep = ToolSet::new(&ToolSetSpec::Names(vec!["grep".into()]))
            .unwrap()
            .definitions();
        c.tools.extend(grep);
        c.tools.swap(0, 1);
    }));
}

#[test]
fn params_changes() {
    insta::assert_snapshot!(per_api(|c| {
        c.options.max_tokens = 4096;
        c.options.temperature = Some(0.2);
    }));
}

#[test]
fn thinking_is_a_param() {
    insta::assert_snapshot!(per_api(|c| c.options.thinking = Some(ThinkingLevel::Medium)));
}

#[test]
fn assistant_history_changes_name_the_part() {
    insta::assert_snapshot!(per_api(|c| {
        c.turns[1].0 = "The operator is wrong; fixing it.".into();
        c.turns[2].1[0].2 = json!({"command": "python3 -m unittest"});
    }));
}

#[test]
fn extra_and_missing_requests() {
    let mut out = String::new();
    for api in APIS {
        let r = requests(api, &conv());
        let extra = track(api, &r[..3], &r);
        let missing = track(api, &r, &r[..2]);
        let _ = writeln!(
            out,
            "{}: extra: {} | missing: {}",
            api.as_str(),
            summary_line(&extra),
            summary_line(&missing)
        );
        assert_eq!(first_kind(&extra), Some(DivergenceKind::ExtraRequest));
        assert_eq!(first_kind(&missing), Some(DivergenceKind::MissingRequests));
    }
    let mut t = DivergenceTracker::new(ApiKind::AnthropicMessages);
    assert_eq!(t.missing_requests(5, 5), None);
    let one = t.missing_requests(4, 5).unwrap();
    assert_eq!(
        one.summary(),
        "turn 4: request 5 never made (the run ended after 4 of 5)"
    );
    insta::assert_snapshot!(out);
}

#[test]
fn request_line_and_header_changes() {
    let mut out = String::new();
    for api in APIS {
        let r = requests(api, &conv());
        let mut now = r.clone();
        for v in &mut now {
            v["headers"]["anthropic-beta"] = json!("fine-grained-tool-streaming-2025-05-14");
            let path = v["path"].as_str().unwrap().to_owned();
            v["path"] = json!(path.replacen("/v1", "/v2", 1));
        }
        let diffs = track(api, &r, &now);
        let _ = writeln!(out, "{}: {}", api.as_str(), summary_line(&diffs));
    }
    // A Gemini path that names another model is a `model` parameter change.
    let api = ApiKind::GoogleGenerativeAi;
    let r = requests(api, &conv());
    let mut now = r.clone();
    for v in &mut now {
        let path = v["path"]
            .as_str()
            .unwrap()
            .replace("models/m:", "models/m2:");
        v["path"] = json!(path);
    }
    let diffs = track(api, &r, &now);
    let _ = writeln!(out, "gemini model: {}", summary_line(&diffs));
    assert_eq!(first_kind(&diffs), Some(DivergenceKind::Params));
    insta::assert_snapshot!(out);
}

#[test]
fn a_change_in_history_is_reported_once_at_the_request_where_it_first_appears() {
    for api in APIS {
        let recorded = requests(api, &conv());
        let mut c = conv();
        c.system.push_str("Extra.\n");
        c.turns[0].2[1].0 = "calc.py\n".into();
        let now = requests(api, &c);
        let mut t = DivergenceTracker::new(api);
        let per_request: Vec<Vec<DivergenceKind>> = (0..5)
            .map(|i| {
                t.compare(i, &recorded[i], &now[i])
                    .iter()
                    .map(|d| d.kind)
                    .collect()
            })
            .collect();
        assert_eq!(
            per_request,
            vec![
                vec![DivergenceKind::SystemPrompt],
                vec![DivergenceKind::ToolResult],
                vec![],
                vec![],
                vec![]
            ],
            "{api:?}"
        );
        assert_eq!(t.all().len(), 2);
        // Without the tracker, request 3 repeats both.
        assert_eq!(differences(api, 3, &recorded[3], &now[3]).len(), 2);
        assert_eq!(t.all()[1].subject, "result of bash#1");
        assert_eq!((t.all()[1].request, t.all()[1].turn), (1, 1));
    }
}

#[test]
fn a_difference_the_views_do_not_cover_still_shows() {
    // Only Anthropic's prompt-caching markers moved: a params difference, reported once.
    let api = ApiKind::AnthropicMessages;
    let r = requests(api, &conv());
    let now: Vec<Value> = r
        .iter()
        .map(|v| {
            let mut v = v.clone();
            v["body"]["system"][0]["cache_control"] = json!({"type": "ephemeral", "ttl": "1h"});
            v
        })
        .collect();
    let diffs = track(api, &r, &now);
    assert_eq!(diffs.len(), 1, "{diffs:#?}");
    assert_eq!(diffs[0].summary(), "prompt caching markers changed");
    assert!(
        diffs[0].diff.contains("\"ttl\": \"1h\""),
        "{}",
        diffs[0].diff
    );
    // A body that is not an object is a request difference.
    let diffs = track(
        api,
        &[json!({"method": "POST", "path": "/", "headers": {}, "body": "x"})],
        &[json!({"method": "POST", "path": "/", "headers": {}, "body": "y"})],
    );
    assert_eq!(diffs.len(), 1);
    assert_eq!(diffs[0].kind, DivergenceKind::Request);
    assert_eq!(diffs[0].summary(), "request at body changed");
}

#[test]
fn the_summary_line_is_shortened_and_the_csv_columns_come_from_the_first() {
    let api = ApiKind::OpenaiCompletions;
    let mut c = conv();
    for (i, turn) in c.turns.iter_mut().enumerate() {
        for result in &mut turn.2 {
            result.0 = format!("changed {i}");
        }
    }
    let diffs = track(api, &requests(api, &conv()), &requests(api, &c));
    assert_eq!(diffs.len(), 5);
    assert_eq!(
        summary_line(&diffs),
        "turn 1: result of read#1 changed; turn 1: result of bash#1 changed; turn 2: result of edit#1 changed; turn 3: result of bash#2 changed; and 1 more"
    );
    assert_eq!(
        csv_columns(&diffs),
        DivergenceColumns {
            kind: Some(DivergenceKind::ToolResult),
            turn: Some(1),
            count: 5
        }
    );
    assert_eq!(csv_columns(&[]), DivergenceColumns::default());
    assert_eq!(summary_line(&[]), "");
}

#[test]
fn divergence_md_shows_each_difference_with_its_diff() {
    let api = ApiKind::AnthropicMessages;
    let mut c = conv();
    c.turns[1].2[0].0 = "Replaced 1 block in calc.py.\nSee ```the docs```.".into();
    let edit = c.tools.iter_mut().find(|t| t.name == "edit").unwrap();
    edit.description = "Edit a file.".into();
    let diffs = track(api, &requests(api, &conv()), &requests(api, &c));
    let md = markdown("py-median — anthropic/scripted-claude, epoch 1", &diffs);
    insta::assert_snapshot!(md);
    assert_eq!(
        markdown("t", &[]),
        "# Divergence: t\n\nEvery request matched the cassette.\n"
    );
}

#[test]
fn a_replay_under_another_setup_says_so() {
    let rec = ReplaySetup {
        tool_profile: "pi",
        edit_strategy: "pi",
        sandbox: Some("isolated"),
    };
    assert_eq!(setup_mismatch(rec, rec), None);
    let now = ReplaySetup {
        edit_strategy: "exact",
        ..rec
    };
    insta::assert_snapshot!(setup_mismatch(rec, now).unwrap(), @"this replay runs with edit strategy `exact` (recorded with `pi`); tool definitions and tool results may differ from the recording for that reason alone");
    let both = ReplaySetup {
        tool_profile: "minimal",
        edit_strategy: "exact",
        sandbox: Some("isolated"),
    };
    assert!(
        setup_mismatch(rec, both)
            .unwrap()
            .starts_with("this replay runs with tool profile `minimal` (recorded with `pi`) and edit strategy `exact`")
    );
    // Another sandbox tier is said up front; an unknown recorded tier (an older cassette) is not.
    let tier = ReplaySetup {
        sandbox: Some("none"),
        ..rec
    };
    insta::assert_snapshot!(setup_mismatch(rec, tier).unwrap(), @"this replay runs with sandbox tier `none` (recorded with `isolated`); tool definitions and tool results may differ from the recording for that reason alone");
    let unknown = ReplaySetup {
        sandbox: None,
        ..rec
    };
    assert_eq!(setup_mismatch(unknown, tier), None);
}

// ---------------------------------------------------------------------------------------------
// The shipped cassettes: real bodies, recorded through the real HTTP and SSE code.
// ---------------------------------------------------------------------------------------------

fn shipped() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("cassettes");
    let mut out = Vec::new();
    for task in std::fs::read_dir(&root).unwrap() {
        let task = task.unwrap().path();
        if !task.is_dir() {
            continue; // the suite's snapshot
        }
        for file in std::fs::read_dir(task).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|e| e == "yaml") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn recorded_requests(path: &Path) -> (ApiKind, Vec<Value>) {
    let text = std::fs::read_to_string(path).unwrap();
    let cassette = Cassette::from_yaml(&text, path).unwrap();
    let requests = cassette
        .interactions
        .iter()
        .map(|it| {
            let r = &it.request;
            json!({"method": r.method, "path": r.path, "headers": r.headers, "body": r.body})
        })
        .collect();
    (cassette.header.api, requests)
}

#[test]
fn a_changed_edit_success_text_in_the_shipped_cassettes_is_one_tool_result_per_edit() {
    const PHRASE: &str = "Successfully replaced";
    let mut checked = 0;
    for path in shipped() {
        let (api, recorded) = recorded_requests(&path);
        assert_eq!(
            track(api, &recorded, &recorded),
            vec![],
            "{}",
            path.display()
        );
        // What today's edit tool would answer after a one-word change of its success text.
        let now: Vec<Value> = recorded
            .iter()
            .map(|r| {
                let mut r = r.clone();
                map_strings(&mut r, &|s| s.replace(PHRASE, "Replaced"));
                r
            })
            .collect();
        let diffs = track(api, &recorded, &now);
        // Each successful edit's result appears once in the last request.
        let last = serde_json::to_string(&recorded.last().unwrap()["body"]).unwrap();
        let expected = last.matches(PHRASE).count();
        assert_eq!(diffs.len(), expected, "{}: {diffs:#?}", path.display());
        for d in &diffs {
            assert_eq!(d.kind, DivergenceKind::ToolResult, "{}", path.display());
            assert!(
                d.subject.starts_with("result of edit#"),
                "{}: {}",
                path.display(),
                d.subject
            );
            assert!(
                d.turn >= 1 && d.request == d.turn as usize,
                "{}: {d:?}",
                path.display()
            );
            assert!(d.diff.contains(&format!("-{PHRASE}")), "{}", d.diff);
        }
        checked += usize::from(expected > 0);
    }
    // Seven of the nine shipped tasks edit a file, in four wire formats each.
    assert!(
        checked >= 20,
        "only {checked} shipped cassettes have a successful edit"
    );
}

#[test]
fn py_median_in_every_wire_format() {
    let mut out = String::new();
    for api in APIS {
        let name = match api {
            ApiKind::AnthropicMessages => "anthropic--scripted-claude",
            ApiKind::OpenaiCompletions => "openai--scripted-gpt",
            ApiKind::OpenaiResponses => "openai-responses--scripted-gpt",
            ApiKind::GoogleGenerativeAi => "google--scripted-gemini",
        };
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("cassettes/py-median/{name}.yaml"));
        let (kind, recorded) = recorded_requests(&path);
        assert_eq!(kind, api);
        let now: Vec<Value> = recorded
            .iter()
            .map(|r| {
                let mut r = r.clone();
                map_strings(&mut r, &|s| s.replace("Successfully replaced", "Replaced"));
                r
            })
            .collect();
        let diffs = track(api, &recorded, &now);
        let _ = writeln!(out, "{}: {}", api.as_str(), summary_line(&diffs));
        for d in &diffs {
            let _ = writeln!(out, "  {}", d.location);
        }
    }
    insta::assert_snapshot!(out);
}
