//! Conversation-aware divergence: every difference between the requests recorded in a cassette
//! and the requests the harness builds now, classified and located in conversation terms
//! ("turn 3: result of edit#2 changed") instead of JSON paths.
//!
//! The input is, for each request index, the recorded and the current request as JSON values
//! `{"method", "path", "headers", "body"}`, both already normalised (workspace placeholder,
//! built-in and task rules). Each body is read in its wire format (Anthropic Messages, OpenAI
//! Chat Completions, OpenAI Responses, Gemini) into one neutral view: request line and headers,
//! parameters, tool definitions, and the conversation as items (system prompt, user messages,
//! assistant turns with their parts, tool results), each with its turn. Both views are aligned
//! item by item and every difference becomes a [`Difference`] of one [`DivergenceKind`].
//!
//! Turns: request `i` (0-based) is sent before model turn `i + 1`. Turn `N` is the model's `N`-th
//! reply together with the results of its tool calls, so a tool result that first appears in
//! request `i` belongs to turn `i`; the system prompt, the tools and the task prompt are turn 0.
//! Calls are named `tool#n`: the `n`-th call of that tool in the conversation, 1-based.
//!
//! Every request repeats the whole history, so a change made in request 3 reappears in requests
//! 4, 5 and on: a [`DivergenceTracker`] reports each difference once, at the request where it
//! first appears.
//!
//! Pure: no I/O, no transport. Depends on serde_json, [`crate::providers::ApiKind`] and the
//! helpers of [`super::compare`] only.

use std::collections::HashSet;
use std::collections::hash_map::DefaultHasher;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};

use serde::Serialize;
use serde_json::{Map, Value};

use super::compare::{first_difference, sort_keys, text_diff, unified_diff};
use crate::providers::ApiKind;

pub use crate::record::DivergenceKind;

/// How the part differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// In both, with another content.
    Changed,
    /// Only in the request built now.
    Added,
    /// Only in the recorded request.
    Removed,
}

/// One difference, located in conversation terms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Difference {
    pub kind: DivergenceKind,
    pub change: Change,
    /// 0-based index of the request where it first appeared.
    pub request: usize,
    /// The conversation turn it belongs to (0: system prompt, tools, task prompt, parameters of
    /// the first request).
    pub turn: u32,
    /// What differs, short: `result of edit#2`, `tool edit: description`, `max_tokens`.
    pub subject: String,
    /// Where, in full: `result of edit#2 (call toolu_01, edit)`.
    pub location: String,
    /// A short addition to the summary: `32000 → 16000`, `now an error`.
    pub detail: Option<String>,
    /// The text of the changed part in the recording (`None`: not there).
    pub recorded: Option<String>,
    /// The text of the changed part now (`None`: not there).
    pub now: Option<String>,
    /// A unified diff of the two texts (capped; empty when neither has text).
    pub diff: String,
}

impl Difference {
    /// One phrase: `turn 3: result of edit#2 changed`, `tool edit: description changed`.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        if self.turn > 0 {
            let _ = write!(out, "turn {}: ", self.turn);
        }
        out.push_str(&self.subject);
        match self.kind {
            DivergenceKind::ExtraRequest | DivergenceKind::MissingRequests => {}
            _ => out.push_str(match self.change {
                Change::Changed => " changed",
                Change::Added => " added",
                Change::Removed => " removed",
            }),
        }
        if let Some(detail) = &self.detail {
            let _ = write!(out, " ({detail})");
        }
        out
    }
}

/// Tool profile, edit strategy and sandbox tier a cassette was recorded with, or a replay runs
/// with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplaySetup<'a> {
    pub tool_profile: &'a str,
    pub edit_strategy: &'a str,
    /// The sandbox tier (`isolated`, `workspace`, `none`); `None` when not known (a cassette
    /// recorded before tiers were recorded), which is never reported as a difference.
    pub sandbox: Option<&'a str>,
}

/// Says up front when a replay runs under another tool profile, edit strategy or sandbox tier
/// than the cassette's header records (`None` when they agree).
pub fn setup_mismatch(recorded: ReplaySetup<'_>, now: ReplaySetup<'_>) -> Option<String> {
    let mut parts = Vec::new();
    if recorded.tool_profile != now.tool_profile {
        parts.push(format!(
            "tool profile `{}` (recorded with `{}`)",
            now.tool_profile, recorded.tool_profile
        ));
    }
    if recorded.edit_strategy != now.edit_strategy {
        parts.push(format!(
            "edit strategy `{}` (recorded with `{}`)",
            now.edit_strategy, recorded.edit_strategy
        ));
    }
    if let (Some(then), Some(tier)) = (recorded.sandbox, now.sandbox) {
        if then != tier {
            parts.push(format!("sandbox tier `{tier}` (recorded with `{then}`)"));
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(format!(
        "this replay runs with {}; tool definitions and tool results may differ from the recording for that reason alone",
        parts.join(" and ")
    ))
}

// ---------------------------------------------------------------------------------------------
// The tracker.
// ---------------------------------------------------------------------------------------------

/// Compares request after request and reports each difference once, at the request where it
/// first appears.
#[derive(Debug, Clone)]
pub struct DivergenceTracker {
    api: ApiKind,
    seen: HashSet<u64>,
    all: Vec<Difference>,
}

impl DivergenceTracker {
    /// A tracker for one replayed run in wire format `api`.
    pub fn new(api: ApiKind) -> Self {
        DivergenceTracker {
            api,
            seen: HashSet::new(),
            all: Vec::new(),
        }
    }

    /// Compares request `index`, recorded and built now (both `{"method", "path", "headers",
    /// "body"}`, normalised); returns only the differences not reported for an earlier request
    /// (and keeps them for [`DivergenceTracker::all`]).
    pub fn compare(&mut self, index: usize, recorded: &Value, now: &Value) -> Vec<Difference> {
        let found = classify(self.api, index, recorded, now);
        let mut new = Vec::new();
        for (key, diff) in found {
            if self.seen.insert(key) {
                new.push(diff);
            }
        }
        self.all.extend(new.iter().cloned());
        new
    }

    /// The run sent request `index` (0-based) and the cassette has only `recorded` requests.
    pub fn extra_request(&mut self, index: usize, recorded: usize) -> Difference {
        let diff = Difference {
            kind: DivergenceKind::ExtraRequest,
            change: Change::Added,
            request: index,
            turn: turn_of_request(index),
            subject: format!("extra request {}", index + 1),
            location: format!("request {} (the cassette has {recorded})", index + 1),
            detail: Some(format!("the cassette has {recorded}")),
            recorded: None,
            now: None,
            diff: String::new(),
        };
        self.all.push(diff.clone());
        diff
    }

    /// The run ended after `served` requests of the cassette's `total`: a difference when some
    /// were never asked for, else `None`.
    pub fn missing_requests(&mut self, served: usize, total: usize) -> Option<Difference> {
        if served >= total {
            return None;
        }
        let unused = total - served;
        let range = if unused == 1 {
            format!("request {total}")
        } else {
            format!("requests {}-{total}", served + 1)
        };
        let diff = Difference {
            kind: DivergenceKind::MissingRequests,
            change: Change::Removed,
            request: served,
            turn: turn_of_request(served),
            subject: format!("{range} never made"),
            location: format!("{range}: the run ended after {served} of {total} recorded requests"),
            detail: Some(format!("the run ended after {served} of {total}")),
            recorded: None,
            now: None,
            diff: String::new(),
        };
        self.all.push(diff.clone());
        Some(diff)
    }

    /// Every difference reported so far, in the order found.
    pub fn all(&self) -> &[Difference] {
        &self.all
    }

    /// The differences, owned.
    pub fn into_all(self) -> Vec<Difference> {
        self.all
    }
}

/// Every difference between request `index` recorded and built now, without the tracker's
/// memory of earlier requests (a history change shows in every request that repeats it).
pub fn differences(api: ApiKind, index: usize, recorded: &Value, now: &Value) -> Vec<Difference> {
    classify(api, index, recorded, now)
        .into_iter()
        .map(|(_, d)| d)
        .collect()
}

fn turn_of_request(index: usize) -> u32 {
    u32::try_from(index).unwrap_or(u32::MAX)
}

// ---------------------------------------------------------------------------------------------
// Rendering.
// ---------------------------------------------------------------------------------------------

/// How many differences the one-line summary names before "and N more".
pub const SUMMARY_MAX: usize = 4;

/// One line for the terminal: `turn 3: result of edit#2 changed; turn 5: result of bash#4
/// changed`, after [`SUMMARY_MAX`] entries `; and N more`. Empty when there is no difference.
pub fn summary_line(diffs: &[Difference]) -> String {
    let mut parts: Vec<String> = diffs
        .iter()
        .take(SUMMARY_MAX)
        .map(Difference::summary)
        .collect();
    if diffs.len() > SUMMARY_MAX {
        parts.push(format!("and {} more", diffs.len() - SUMMARY_MAX));
    }
    parts.join("; ")
}

/// The kind of the first difference (`runs.csv` column `divergence_kind`).
pub fn first_kind(diffs: &[Difference]) -> Option<DivergenceKind> {
    diffs.first().map(|d| d.kind)
}

/// The turn of the first difference (`runs.csv` column `divergence_turn`).
pub fn first_turn(diffs: &[Difference]) -> Option<u32> {
    diffs.first().map(|d| d.turn)
}

/// The three `runs.csv` columns at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct DivergenceColumns {
    /// `divergence_kind`: the first difference's kind.
    pub kind: Option<DivergenceKind>,
    /// `divergence_turn`: the first difference's turn.
    pub turn: Option<u32>,
    /// `divergences`: how many.
    pub count: usize,
}

/// The `runs.csv` columns of a run's differences.
pub fn csv_columns(diffs: &[Difference]) -> DivergenceColumns {
    DivergenceColumns {
        kind: first_kind(diffs),
        turn: first_turn(diffs),
        count: diffs.len(),
    }
}

/// `divergence.md`: a table of every difference, then each with its diff. `title` names the
/// run (task, provider and model, epoch).
pub fn markdown(title: &str, diffs: &[Difference]) -> String {
    let mut out = format!("# Divergence: {title}\n\n");
    if diffs.is_empty() {
        out.push_str("Every request matched the cassette.\n");
        return out;
    }
    let n = diffs.len();
    let _ = writeln!(
        out,
        "{n} difference{} between the recorded requests and the requests built now, each at the request where it first appeared.\n",
        if n == 1 { "" } else { "s" }
    );
    out.push_str("| # | turn | request | kind | where | change |\n|---|---|---|---|---|---|\n");
    for (i, d) in diffs.iter().enumerate() {
        let _ = writeln!(
            out,
            "| {} | {} | {} | `{}` | {} | {} |",
            i + 1,
            d.turn,
            d.request + 1,
            d.kind,
            escape_cell(&d.location),
            match d.change {
                Change::Changed => "changed",
                Change::Added => "added",
                Change::Removed => "removed",
            }
        );
    }
    for (i, d) in diffs.iter().enumerate() {
        let _ = write!(out, "\n## {}. {}\n\n", i + 1, d.summary());
        let _ = writeln!(
            out,
            "- where: {}\n- kind: `{}`\n- first in request {} (turn {})",
            d.location,
            d.kind,
            d.request + 1,
            d.turn
        );
        if !d.diff.is_empty() {
            out.push('\n');
            out.push_str(&crate::markdown::fenced("diff", &d.diff));
        }
    }
    out
}

fn escape_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

// ---------------------------------------------------------------------------------------------
// The neutral view of one request.
// ---------------------------------------------------------------------------------------------

/// One request, read into wire-format-neutral parts.
struct View {
    method: Option<Value>,
    path: Option<Value>,
    /// The model named in a Gemini path, and the path without it.
    path_model: Option<(String, String)>,
    headers: Map<String, Value>,
    /// Top-level fields that are neither conversation nor tools (Gemini's `generationConfig`
    /// flattened to `generationConfig.maxOutputTokens`).
    params: Vec<(String, Value)>,
    tools: Vec<ToolDef>,
    items: Vec<Item>,
    /// The body with `cache_control` markers removed, for the safety net.
    body: Value,
    /// Whether the body is an object at all.
    body_ok: bool,
}

struct ToolDef {
    name: String,
    description: Option<Value>,
    schema: Option<Value>,
    other: Vec<(String, Value)>,
    raw: Value,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ItemKind {
    System,
    User,
    Assistant,
    ToolResult,
    /// Images a provider attaches after the tool results of a turn (a user message in Chat
    /// Completions and Gemini).
    ResultImages,
}

struct Item {
    kind: ItemKind,
    turn: u32,
    /// How many items of this kind came before it in its turn (0-based).
    nth_in_turn: usize,
    /// The alignment key: the kind, and the call id of a tool result.
    key: String,
    /// The item as sent, `cache_control` removed.
    raw: Value,
    /// Human-readable content (tool results, user and system text).
    text: String,
    /// Assistant parts.
    parts: Vec<Part>,
    /// Tool results: call id, tool name, `tool#n` label, error flag.
    call_id: Option<String>,
    tool: Option<String>,
    label: Option<String>,
    error: bool,
}

struct Part {
    /// `text`, `thinking`, `call bash#2`, or the block's type.
    label: String,
    /// `(call toolu_02, bash)` for a call.
    call: Option<String>,
    raw: Value,
    text: String,
}

fn strip_cache_control(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| k.as_str() != "cache_control")
                .map(|(k, v)| (k.clone(), strip_cache_control(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_cache_control).collect()),
        other => other.clone(),
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(&sort_keys(v)).unwrap_or_default()
}

fn compact(v: &Value) -> String {
    serde_json::to_string(&sort_keys(v)).unwrap_or_default()
}

fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The items of an array (none when it is missing or not an array).
fn array(v: Option<&Value>) -> impl Iterator<Item = &Value> {
    v.and_then(Value::as_array).into_iter().flatten()
}

/// The fields of an object except `skip`.
fn fields_except(v: &Value, skip: &[&str]) -> Vec<(String, Value)> {
    v.as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| !skip.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The text of a content value: a string, or an array of blocks (text of text blocks, a
/// placeholder for images, compact JSON for anything else), one block per line.
fn content_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Array(blocks) => blocks.iter().map(block_text).collect::<Vec<_>>().join("\n"),
        other => block_text(other),
    }
}

fn block_text(b: &Value) -> String {
    if let Some(s) = b.as_str() {
        return s.to_owned();
    }
    if let Some(t) = str_at(b, "text") {
        return t.to_owned();
    }
    let kind = str_at(b, "type").unwrap_or_default();
    let image = |mime: &str, data: usize| format!("[image {mime}, {data} base64 characters]");
    match kind {
        "image" => {
            let src = &b["source"];
            image(
                str_at(src, "media_type").unwrap_or("?"),
                str_at(src, "data").map_or(0, str::len),
            )
        }
        "image_url" => image("url", str_at(&b["image_url"], "url").map_or(0, str::len)),
        "input_image" => image("url", str_at(b, "image_url").map_or(0, str::len)),
        _ => {
            if let Some(d) = b.get("inlineData") {
                return image(
                    str_at(d, "mimeType").unwrap_or("?"),
                    str_at(d, "data").map_or(0, str::len),
                );
            }
            compact(b)
        }
    }
}

/// Call arguments as text: pretty JSON, parsed first when sent as a JSON string.
fn arguments_text(v: &Value) -> String {
    match v {
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(parsed) => pretty(&parsed),
            Err(_) => s.clone(),
        },
        other => pretty(other),
    }
}

/// Builds the items of one request in order, assigning turns and call labels.
struct ItemsBuilder {
    items: Vec<Item>,
    turn: u32,
    /// Calls so far: (call id, tool name, label), and per turn their order for id-less APIs.
    calls: Vec<(Option<String>, String, String, u32)>,
    counts: std::collections::HashMap<String, u32>,
    /// Results seen so far in the current turn (to match id-less results to calls by order).
    results_in_turn: usize,
}

impl ItemsBuilder {
    fn new() -> Self {
        ItemsBuilder {
            items: Vec::new(),
            turn: 0,
            calls: Vec::new(),
            counts: std::collections::HashMap::new(),
            results_in_turn: 0,
        }
    }

    fn nth(&self, kind: ItemKind) -> usize {
        self.items
            .iter()
            .filter(|i| i.turn == self.turn && i.kind == kind)
            .count()
    }

    fn push(&mut self, kind: ItemKind, raw: Value, text: String) {
        let nth_in_turn = self.nth(kind);
        let key = match kind {
            ItemKind::System => "system",
            ItemKind::User => "user",
            ItemKind::Assistant => "assistant",
            ItemKind::ToolResult => "result",
            ItemKind::ResultImages => "images",
        }
        .to_owned();
        self.items.push(Item {
            kind,
            turn: self.turn,
            nth_in_turn,
            key,
            raw: strip_cache_control(&raw),
            text,
            parts: Vec::new(),
            call_id: None,
            tool: None,
            label: None,
            error: false,
        });
    }

    fn system(&mut self, raw: Value, text: String) {
        self.push(ItemKind::System, raw, text);
    }

    fn user(&mut self, raw: Value, text: String) {
        // Images a provider attaches after the results of a turn belong to those results.
        let after_results = self
            .items
            .last()
            .is_some_and(|i| i.turn == self.turn && i.kind == ItemKind::ToolResult);
        let attached = text.starts_with("Attached image(s) from tool result:")
            || text.starts_with("Tool result image:");
        if self.turn > 0 && after_results && attached {
            self.push(ItemKind::ResultImages, raw, text);
        } else {
            self.push(ItemKind::User, raw, text);
        }
    }

    /// Starts a new model turn.
    fn assistant(&mut self, raw: Value) {
        self.turn += 1;
        self.results_in_turn = 0;
        self.push(ItemKind::Assistant, raw, String::new());
    }

    /// Adds a part to the current assistant item (starting one if the last item is not one).
    fn part(&mut self, raw: Value, label: &str, text: String) {
        if self
            .items
            .last()
            .is_none_or(|i| i.kind != ItemKind::Assistant)
        {
            self.assistant(Value::Array(Vec::new()));
        }
        let item = self.items.last_mut().expect("an assistant item");
        item.parts.push(Part {
            label: label.to_owned(),
            call: None,
            raw: strip_cache_control(&raw),
            text,
        });
    }

    /// Adds a tool call part, numbering it `name#n`.
    fn call(&mut self, raw: Value, id: Option<String>, name: &str, arguments: &Value) {
        let n = {
            let c = self.counts.entry(name.to_owned()).or_insert(0);
            *c += 1;
            *c
        };
        let label = format!("{name}#{n}");
        self.part(raw, &format!("call {label}"), arguments_text(arguments));
        let item = self.items.last_mut().expect("an assistant item");
        if let Some(part) = item.parts.last_mut() {
            part.call = Some(match &id {
                Some(id) => format!("call {id}, {name}"),
                None => name.to_owned(),
            });
        }
        self.calls.push((id, name.to_owned(), label, self.turn));
    }

    /// Adds a tool result; `id` when the API sends one, else the result is matched to the
    /// calls of the current turn by order (Gemini).
    fn result(
        &mut self,
        raw: Value,
        id: Option<String>,
        name: Option<&str>,
        text: String,
        error: bool,
    ) {
        let position = self.results_in_turn;
        self.results_in_turn += 1;
        let call = match &id {
            Some(id) => self
                .calls
                .iter()
                .find(|(cid, ..)| cid.as_deref() == Some(id.as_str())),
            None => self
                .calls
                .iter()
                .filter(|(.., turn)| *turn == self.turn)
                .nth(position),
        };
        let (tool, label) = match call {
            Some((_, tool, label, _)) => (Some(tool.clone()), Some(label.clone())),
            None => (name.map(str::to_owned), None),
        };
        let rendered = if error {
            format!("[error]\n{text}")
        } else {
            text
        };
        self.push(ItemKind::ToolResult, raw, rendered);
        let item = self.items.last_mut().expect("just pushed");
        item.key = match &id {
            Some(id) => format!("result:{id}"),
            None => format!(
                "result:{}:{}",
                tool.as_deref().or(name).unwrap_or("?"),
                label.as_deref().unwrap_or("?")
            ),
        };
        item.call_id = id;
        item.tool = tool.or_else(|| name.map(str::to_owned));
        item.label = label;
        item.error = error;
    }
}

/// Reads `value` (`{"method", "path", "headers", "body"}`, or a bare body) into a [`View`].
fn view(api: ApiKind, value: &Value) -> View {
    let (method, path, headers, body) = match value.get("body") {
        Some(body) if value.get("method").is_some() || value.get("path").is_some() => (
            value.get("method").cloned(),
            value.get("path").cloned(),
            value
                .get("headers")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            body,
        ),
        _ => (None, None, Map::new(), value),
    };
    let path_model = match (api, path.as_ref().and_then(Value::as_str)) {
        (ApiKind::GoogleGenerativeAi, Some(p)) => gemini_path_model(p),
        _ => None,
    };
    let mut v = View {
        method,
        path,
        path_model,
        headers,
        params: Vec::new(),
        tools: Vec::new(),
        items: Vec::new(),
        body: strip_cache_control(body),
        body_ok: body.is_object(),
    };
    let Some(obj) = body.as_object() else {
        return v;
    };
    let mut b = ItemsBuilder::new();
    match api {
        ApiKind::AnthropicMessages => anthropic(obj, &mut v, &mut b),
        ApiKind::OpenaiCompletions => openai_chat(obj, &mut v, &mut b),
        ApiKind::OpenaiResponses => openai_responses(obj, &mut v, &mut b),
        ApiKind::GoogleGenerativeAi => gemini(obj, &mut v, &mut b),
    }
    v.items = b.items;
    v
}

/// `(model, path without it)` of `/v1beta/models/{model}:streamGenerateContent?alt=sse`.
fn gemini_path_model(path: &str) -> Option<(String, String)> {
    let start = path.find("models/")? + "models/".len();
    let end = start + path[start..].find(':')?;
    Some((
        path[start..end].to_owned(),
        format!("{}{{model}}{}", &path[..start], &path[end..]),
    ))
}

fn params_except(obj: &Map<String, Value>, skip: &[&str], v: &mut View) {
    for (k, val) in obj {
        if !skip.contains(&k.as_str()) {
            v.params.push((k.clone(), val.clone()));
        }
    }
}

fn tool_def(
    name: &str,
    description: Option<&Value>,
    schema: Option<&Value>,
    rest: Vec<(String, Value)>,
    raw: &Value,
) -> ToolDef {
    ToolDef {
        name: name.to_owned(),
        description: description.cloned(),
        schema: schema.map(strip_cache_control),
        other: rest,
        raw: strip_cache_control(raw),
    }
}

fn anthropic(obj: &Map<String, Value>, v: &mut View, b: &mut ItemsBuilder) {
    params_except(obj, &["messages", "system", "tools"], v);
    if let Some(system) = obj.get("system") {
        b.system(system.clone(), content_text(system));
    }
    for t in array(obj.get("tools")) {
        let name = str_at(t, "name").unwrap_or("?");
        let rest = fields_except(t, &["name", "description", "input_schema", "cache_control"]);
        v.tools.push(tool_def(
            name,
            t.get("description"),
            t.get("input_schema"),
            rest,
            t,
        ));
    }
    for m in array(obj.get("messages")) {
        let content = m.get("content").cloned().unwrap_or(Value::Null);
        match str_at(m, "role") {
            Some("assistant") => {
                b.assistant(m.clone());
                let blocks = match &content {
                    Value::Array(a) => a.clone(),
                    other => vec![serde_json::json!({"type": "text", "text": content_text(other)})],
                };
                for block in blocks {
                    match str_at(&block, "type") {
                        Some("tool_use") => {
                            let id = str_at(&block, "id").map(str::to_owned);
                            let name = str_at(&block, "name").unwrap_or("?").to_owned();
                            let input = block.get("input").cloned().unwrap_or(Value::Null);
                            b.call(block, id, &name, &input);
                        }
                        Some("thinking") => {
                            let text = str_at(&block, "thinking").unwrap_or_default().to_owned();
                            b.part(block, "thinking", text);
                        }
                        Some("redacted_thinking") => {
                            b.part(block, "redacted thinking", String::new())
                        }
                        Some("text") => {
                            let text = str_at(&block, "text").unwrap_or_default().to_owned();
                            b.part(block, "text", text);
                        }
                        other => {
                            let label = other.unwrap_or("block").to_owned();
                            let text = compact(&block);
                            b.part(block, &label, text);
                        }
                    }
                }
            }
            _ => match &content {
                Value::Array(blocks) => {
                    // Tool results each on their own; other blocks grouped as user messages.
                    let mut group: Vec<Value> = Vec::new();
                    let flush = |group: &mut Vec<Value>, b: &mut ItemsBuilder| {
                        if !group.is_empty() {
                            let raw = Value::Array(std::mem::take(group));
                            let text = content_text(&raw);
                            b.user(raw, text);
                        }
                    };
                    for block in blocks {
                        if str_at(block, "type") == Some("tool_result") {
                            flush(&mut group, b);
                            let id = str_at(block, "tool_use_id").map(str::to_owned);
                            let error = block
                                .get("is_error")
                                .and_then(Value::as_bool)
                                .unwrap_or(false);
                            let text = content_text(block.get("content").unwrap_or(&Value::Null));
                            b.result(block.clone(), id, None, text, error);
                        } else {
                            group.push(block.clone());
                        }
                    }
                    flush(&mut group, b);
                }
                other => b.user(m.clone(), content_text(other)),
            },
        }
    }
}

fn openai_chat(obj: &Map<String, Value>, v: &mut View, b: &mut ItemsBuilder) {
    params_except(obj, &["messages", "tools"], v);
    for t in array(obj.get("tools")) {
        let f = t.get("function").unwrap_or(&Value::Null);
        let name = str_at(f, "name").unwrap_or("?");
        let mut rest = fields_except(t, &["function"]);
        rest.extend(fields_except(f, &["name", "description", "parameters"]));
        v.tools.push(tool_def(
            name,
            f.get("description"),
            f.get("parameters"),
            rest,
            t,
        ));
    }
    for m in array(obj.get("messages")) {
        let content = m.get("content").unwrap_or(&Value::Null);
        match str_at(m, "role") {
            Some("system") | Some("developer") => b.system(m.clone(), content_text(content)),
            Some("assistant") => {
                b.assistant(m.clone());
                for field in ["reasoning_content", "reasoning", "reasoning_text"] {
                    if let Some(text) = str_at(m, field) {
                        b.part(
                            serde_json::json!({field: text}),
                            "thinking",
                            text.to_owned(),
                        );
                    }
                }
                let text = content_text(content);
                if !content.is_null() {
                    b.part(content.clone(), "text", text);
                }
                for call in array(m.get("tool_calls")) {
                    let id = str_at(call, "id").map(str::to_owned);
                    let f = call.get("function").unwrap_or(&Value::Null);
                    let name = str_at(f, "name").unwrap_or("?").to_owned();
                    let args = f.get("arguments").cloned().unwrap_or(Value::Null);
                    b.call(call.clone(), id, &name, &args);
                }
            }
            Some("tool") => {
                let id = str_at(m, "tool_call_id").map(str::to_owned);
                b.result(
                    m.clone(),
                    id,
                    str_at(m, "name"),
                    content_text(content),
                    false,
                );
            }
            _ => b.user(m.clone(), content_text(content)),
        }
    }
}

fn openai_responses(obj: &Map<String, Value>, v: &mut View, b: &mut ItemsBuilder) {
    params_except(obj, &["input", "instructions", "tools"], v);
    if let Some(instructions) = obj.get("instructions") {
        b.system(instructions.clone(), content_text(instructions));
    }
    for t in array(obj.get("tools")) {
        let name = str_at(t, "name")
            .or_else(|| str_at(t, "type"))
            .unwrap_or("?");
        let rest = fields_except(t, &["name", "description", "parameters"]);
        v.tools.push(tool_def(
            name,
            t.get("description"),
            t.get("parameters"),
            rest,
            t,
        ));
    }
    let input = match obj.get("input") {
        Some(Value::Array(items)) => items.clone(),
        Some(Value::String(s)) => vec![serde_json::json!({"role": "user", "content": s})],
        _ => Vec::new(),
    };
    let mut in_assistant = false;
    for item in input {
        let kind = str_at(&item, "type");
        let role = str_at(&item, "role");
        let assistant_side = matches!(kind, Some("reasoning") | Some("function_call"))
            || (kind == Some("message") && role == Some("assistant"))
            || (kind.is_none() && role == Some("assistant"));
        if assistant_side && !in_assistant {
            b.assistant(Value::Array(Vec::new()));
        }
        in_assistant = assistant_side;
        if let Some(last) = b.items.last_mut().filter(|_| assistant_side) {
            if let Value::Array(a) = &mut last.raw {
                a.push(strip_cache_control(&item));
            }
        }
        match (kind, role) {
            (Some("function_call"), _) => {
                let id = str_at(&item, "call_id").map(str::to_owned);
                let name = str_at(&item, "name").unwrap_or("?").to_owned();
                let args = item.get("arguments").cloned().unwrap_or(Value::Null);
                b.call(item, id, &name, &args);
            }
            (Some("reasoning"), _) => {
                let text = item.get("summary").map(content_text).unwrap_or_default();
                b.part(item, "thinking", text);
            }
            _ if assistant_side => {
                let text = content_text(item.get("content").unwrap_or(&Value::Null));
                b.part(item, "text", text);
            }
            (Some("function_call_output"), _) => {
                let id = str_at(&item, "call_id").map(str::to_owned);
                let text = content_text(item.get("output").unwrap_or(&Value::Null));
                b.result(item, id, None, text, false);
            }
            (_, Some("system")) | (_, Some("developer")) => {
                let text = content_text(item.get("content").unwrap_or(&Value::Null));
                b.system(item, text);
            }
            _ => {
                let text = match item.get("content") {
                    Some(c) => content_text(c),
                    None => compact(&item),
                };
                b.user(item, text);
            }
        }
    }
}

fn gemini(obj: &Map<String, Value>, v: &mut View, b: &mut ItemsBuilder) {
    for (k, val) in obj {
        match k.as_str() {
            "contents" | "systemInstruction" | "tools" => {}
            "generationConfig" => match val.as_object() {
                Some(config) => {
                    for (ck, cv) in config {
                        v.params
                            .push((format!("generationConfig.{ck}"), cv.clone()));
                    }
                }
                None => v.params.push((k.clone(), val.clone())),
            },
            _ => v.params.push((k.clone(), val.clone())),
        }
    }
    if let Some(system) = obj.get("systemInstruction") {
        b.system(
            system.clone(),
            content_text(system.get("parts").unwrap_or(system)),
        );
    }
    for t in array(obj.get("tools")) {
        match t.get("functionDeclarations").and_then(Value::as_array) {
            Some(decls) => {
                for d in decls {
                    let name = str_at(d, "name").unwrap_or("?");
                    let schema = d
                        .get("parametersJsonSchema")
                        .or_else(|| d.get("parameters"));
                    let rest = fields_except(
                        d,
                        &["name", "description", "parameters", "parametersJsonSchema"],
                    );
                    v.tools
                        .push(tool_def(name, d.get("description"), schema, rest, d));
                }
            }
            // A built-in tool (`googleSearch`, `codeExecution`): named by its key.
            None => {
                let name = t
                    .as_object()
                    .and_then(|o| o.keys().next().cloned())
                    .unwrap_or_else(|| "?".to_owned());
                v.tools.push(tool_def(&name, None, None, Vec::new(), t));
            }
        }
    }
    for c in array(obj.get("contents")) {
        let parts = c
            .get("parts")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if str_at(c, "role") == Some("model") {
            b.assistant(c.clone());
            for p in parts {
                if let Some(call) = p.get("functionCall") {
                    let id = str_at(call, "id").map(str::to_owned);
                    let name = str_at(call, "name").unwrap_or("?").to_owned();
                    let args = call.get("args").cloned().unwrap_or(Value::Null);
                    b.call(p.clone(), id, &name, &args);
                } else if p.get("thought").and_then(Value::as_bool) == Some(true) {
                    let text = str_at(&p, "text").unwrap_or_default().to_owned();
                    b.part(p, "thinking", text);
                } else if let Some(text) = str_at(&p, "text") {
                    let text = text.to_owned();
                    b.part(p, "text", text);
                } else {
                    let text = compact(&p);
                    b.part(p, "part", text);
                }
            }
        } else {
            let mut group: Vec<Value> = Vec::new();
            let flush = |group: &mut Vec<Value>, b: &mut ItemsBuilder| {
                if !group.is_empty() {
                    let raw = serde_json::json!({"role": "user", "parts": std::mem::take(group)});
                    let text = content_text(&raw["parts"]);
                    b.user(raw, text);
                }
            };
            for p in parts {
                match p.get("functionResponse") {
                    Some(r) => {
                        flush(&mut group, b);
                        let id = str_at(r, "id").map(str::to_owned);
                        let response = r.get("response").unwrap_or(&Value::Null);
                        let (text, error) = match (response.get("output"), response.get("error")) {
                            (_, Some(e)) => (content_text(e), true),
                            (Some(o), None) => (content_text(o), false),
                            (None, None) => (pretty(response), false),
                        };
                        b.result(p.clone(), id, str_at(r, "name"), text, error);
                    }
                    None => group.push(p),
                }
            }
            flush(&mut group, b);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Comparing two views.
// ---------------------------------------------------------------------------------------------

/// Every difference between request `index` recorded and now, each with its dedup key (equal
/// for the same difference seen again in a later request). Stateless.
fn classify(api: ApiKind, index: usize, recorded: &Value, now: &Value) -> Vec<(u64, Difference)> {
    if recorded == now {
        return Vec::new();
    }
    let old = view(api, recorded);
    let new = view(api, now);
    let mut out = Out {
        index,
        found: Vec::new(),
    };
    compare_request(&old, &new, &mut out);
    compare_params(&old, &new, &mut out);
    compare_tools(&old, &new, &mut out);
    compare_items(&old, &new, &mut out);
    if out.found.is_empty() {
        safety_net(&old, &new, recorded, now, &mut out);
    }
    out.found
}

/// Shorthand to describe one difference.
struct Spec {
    kind: DivergenceKind,
    change: Change,
    turn: u32,
    subject: String,
    location: String,
    detail: Option<String>,
    recorded: Option<String>,
    now: Option<String>,
    /// Whether the dedup key holds the texts besides kind and location (the default).
    key_texts: bool,
}

struct Out {
    index: usize,
    found: Vec<(u64, Difference)>,
}

impl Out {
    fn add(&mut self, s: Spec) {
        let mut h = DefaultHasher::new();
        s.kind.hash(&mut h);
        s.location.hash(&mut h);
        if s.key_texts {
            s.change.hash(&mut h);
            s.recorded.hash(&mut h);
            s.now.hash(&mut h);
        }
        let diff = match (&s.recorded, &s.now) {
            (None, None) => String::new(),
            (a, b) => text_diff(
                a.as_deref().unwrap_or_default(),
                b.as_deref().unwrap_or_default(),
                "",
            ),
        };
        self.found.push((
            h.finish(),
            Difference {
                kind: s.kind,
                change: s.change,
                request: self.index,
                turn: s.turn,
                subject: s.subject,
                location: s.location,
                detail: s.detail,
                recorded: s.recorded,
                now: s.now,
                diff,
            },
        ));
    }

    fn turn(&self) -> u32 {
        turn_of_request(self.index)
    }
}

fn spec(kind: DivergenceKind, change: Change, turn: u32, subject: impl Into<String>) -> Spec {
    let subject = subject.into();
    Spec {
        kind,
        change,
        turn,
        location: subject.clone(),
        subject,
        detail: None,
        recorded: None,
        now: None,
        key_texts: true,
    }
}

fn change_of<T>(a: &Option<T>, b: &Option<T>) -> Change {
    match (a, b) {
        (Some(_), None) => Change::Removed,
        (None, Some(_)) => Change::Added,
        _ => Change::Changed,
    }
}

/// A value as the text shown for it: strings as they are, anything else as pretty JSON.
fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => pretty(other),
    }
}

/// `32000 → 16000` for two short scalars; `0.2` for one.
fn scalar_detail(a: Option<&Value>, b: Option<&Value>) -> Option<String> {
    let short = |v: &Value| {
        let s = match v {
            Value::Object(_) | Value::Array(_) => return None,
            other => compact(other),
        };
        (s.chars().count() <= 40).then_some(s)
    };
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{} → {}", short(a)?, short(b)?)),
        (Some(v), None) | (None, Some(v)) => short(v),
        (None, None) => None,
    }
}

fn compare_request(old: &View, new: &View, out: &mut Out) {
    let turn = out.turn();
    if old.method != new.method {
        let mut s = spec(
            DivergenceKind::Request,
            change_of(&old.method, &new.method),
            turn,
            "method",
        );
        s.detail = scalar_detail(old.method.as_ref(), new.method.as_ref());
        s.recorded = old.method.as_ref().map(value_text);
        s.now = new.method.as_ref().map(value_text);
        out.add(s);
    }
    if old.path != new.path {
        match (&old.path_model, &new.path_model) {
            (Some((ma, ra)), Some((mb, rb))) if ra == rb => {
                let mut s = spec(DivergenceKind::Params, Change::Changed, turn, "model");
                s.detail = Some(format!("{ma} → {mb}"));
                s.recorded = Some(ma.clone());
                s.now = Some(mb.clone());
                out.add(s);
            }
            _ => {
                let mut s = spec(
                    DivergenceKind::Request,
                    change_of(&old.path, &new.path),
                    turn,
                    "path",
                );
                s.recorded = old.path.as_ref().map(value_text);
                s.now = new.path.as_ref().map(value_text);
                out.add(s);
            }
        }
    }
    let mut names: Vec<&String> = old.headers.keys().chain(new.headers.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        let (a, b) = (old.headers.get(name), new.headers.get(name));
        if a != b {
            let mut s = spec(
                DivergenceKind::Request,
                change_of(&a, &b),
                turn,
                format!("header {name}"),
            );
            s.detail = scalar_detail(a, b);
            s.recorded = a.map(value_text);
            s.now = b.map(value_text);
            out.add(s);
        }
    }
}

fn compare_params(old: &View, new: &View, out: &mut Out) {
    let turn = out.turn();
    let get = |v: &View, k: &str| {
        v.params
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    let mut names: Vec<&String> = old.params.iter().map(|(k, _)| k).collect();
    for (k, _) in &new.params {
        if !names.contains(&k) {
            names.push(k);
        }
    }
    for name in names {
        let (a, b) = (get(old, name), get(new, name));
        if a != b {
            let mut s = spec(
                DivergenceKind::Params,
                change_of(&a, &b),
                turn,
                name.clone(),
            );
            s.detail = scalar_detail(a.as_ref(), b.as_ref());
            s.recorded = a.as_ref().map(value_text);
            s.now = b.as_ref().map(value_text);
            out.add(s);
        }
    }
}

fn compare_tools(old: &View, new: &View, out: &mut Out) {
    let turn = out.turn();
    let find = |v: &'_ View, name: &str| v.tools.iter().position(|t| t.name == name);
    for t in &old.tools {
        if find(new, &t.name).is_none() {
            let mut s = spec(
                DivergenceKind::Tools,
                Change::Removed,
                turn,
                format!("tool {}", t.name),
            );
            s.recorded = Some(pretty(&t.raw));
            out.add(s);
        }
    }
    for t in &new.tools {
        let Some(i) = find(old, &t.name) else {
            let mut s = spec(
                DivergenceKind::Tools,
                Change::Added,
                turn,
                format!("tool {}", t.name),
            );
            s.now = Some(pretty(&t.raw));
            out.add(s);
            continue;
        };
        compare_tool(&old.tools[i], t, turn, out);
    }
    fn order<'v>(v: &'v View, old: &View, new: &View) -> Vec<&'v str> {
        let has = |w: &View, n: &str| w.tools.iter().any(|t| t.name == n);
        v.tools
            .iter()
            .map(|t| t.name.as_str())
            .filter(|n| has(old, n) && has(new, n))
            .collect()
    }
    let (a, b) = (order(old, old, new), order(new, old, new));
    if a != b {
        let mut s = spec(DivergenceKind::Tools, Change::Changed, turn, "tool order");
        s.recorded = Some(a.join("\n"));
        s.now = Some(b.join("\n"));
        out.add(s);
    }
}

fn compare_tool(a: &ToolDef, b: &ToolDef, turn: u32, out: &mut Out) {
    if a.raw == b.raw {
        return;
    }
    let before = out.found.len();
    let name = &a.name;
    let field = |out: &mut Out, what: String, x: Option<&Value>, y: Option<&Value>| {
        if x != y {
            let mut s = spec(
                DivergenceKind::Tools,
                change_of(&x, &y),
                turn,
                format!("tool {name}: {what}"),
            );
            s.recorded = x.map(value_text);
            s.now = y.map(value_text);
            out.add(s);
        }
    };
    field(
        out,
        "description".into(),
        a.description.as_ref(),
        b.description.as_ref(),
    );
    let props = |t: &ToolDef| {
        t.schema
            .as_ref()
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let (pa, pb) = (props(a), props(b));
    let mut params: Vec<&String> = pa.keys().collect();
    for k in pb.keys() {
        if !params.contains(&k) {
            params.push(k);
        }
    }
    for p in params {
        field(out, format!("parameter {p}"), pa.get(p), pb.get(p));
    }
    let schema_get = |t: &ToolDef, k: &str| t.schema.as_ref().and_then(|s| s.get(k)).cloned();
    field(
        out,
        "required parameters".into(),
        schema_get(a, "required").as_ref(),
        schema_get(b, "required").as_ref(),
    );
    let rest = |t: &ToolDef| {
        t.schema.as_ref().and_then(Value::as_object).map(|o| {
            Value::Object(
                o.iter()
                    .filter(|(k, _)| !matches!(k.as_str(), "properties" | "required"))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            )
        })
    };
    field(
        out,
        "parameter schema".into(),
        rest(a).as_ref(),
        rest(b).as_ref(),
    );
    let get = |t: &ToolDef, k: &str| t.other.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let mut others: Vec<&String> = a.other.iter().map(|(k, _)| k).collect();
    for (k, _) in &b.other {
        if !others.contains(&k) {
            others.push(k);
        }
    }
    for k in others {
        field(out, k.clone(), get(a, k).as_ref(), get(b, k).as_ref());
    }
    if out.found.len() == before {
        // The definitions differ somewhere the fields above do not cover.
        field(out, "definition".into(), Some(&a.raw), Some(&b.raw));
    }
}

/// Ordinal words for the rare second user message of a turn.
fn nth_word(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => "2nd ".into(),
        2 => "3rd ".into(),
        n => format!("{}th ", n + 1),
    }
}

/// The subject and location of an item.
fn item_place(item: &Item) -> (DivergenceKind, String, String) {
    let nth = nth_word(item.nth_in_turn);
    match item.kind {
        ItemKind::System => (
            DivergenceKind::SystemPrompt,
            format!("{nth}system prompt"),
            if item.turn == 0 {
                format!("{nth}system prompt")
            } else {
                format!("{nth}system message of turn {}", item.turn)
            },
        ),
        ItemKind::User => {
            let subject = if item.turn == 0 && item.nth_in_turn == 0 {
                "user prompt".to_owned()
            } else {
                format!("{nth}user message")
            };
            let location = if item.turn == 0 {
                format!("{subject} (before the first model turn)")
            } else {
                format!("{subject} after turn {}", item.turn)
            };
            (DivergenceKind::UserPrompt, subject, location)
        }
        ItemKind::Assistant => (
            DivergenceKind::AssistantHistory,
            "assistant message".to_owned(),
            format!("assistant message of turn {}", item.turn),
        ),
        ItemKind::ToolResult => {
            let tool = item.tool.as_deref().unwrap_or("?");
            let subject = match (&item.label, &item.call_id) {
                (Some(label), _) => format!("result of {label}"),
                (None, Some(id)) => format!("result of call {id}"),
                (None, None) => format!("result of {tool}"),
            };
            let location = match &item.call_id {
                Some(id) => format!("{subject} (call {id}, {tool})"),
                None => format!("{subject} ({tool})"),
            };
            (DivergenceKind::ToolResult, subject, location)
        }
        ItemKind::ResultImages => (
            DivergenceKind::ToolResult,
            "images of the tool results".to_owned(),
            format!("images attached to the tool results of turn {}", item.turn),
        ),
    }
}

/// The texts shown for two differing values: their own texts, or (when those are equal and the
/// difference is elsewhere in the value) their JSON.
fn shown(a_text: &str, a_raw: &Value, b_text: &str, b_raw: &Value) -> (String, String) {
    if a_text == b_text {
        (pretty(a_raw), pretty(b_raw))
    } else {
        (a_text.to_owned(), b_text.to_owned())
    }
}

fn compare_items(old: &View, new: &View, out: &mut Out) {
    let keys = |v: &View| v.items.iter().map(|i| i.key.clone()).collect::<Vec<_>>();
    let (ka, kb) = (keys(old), keys(new));
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &ka, &kb);
    for op in ops {
        let (tag, ra, rb) = op.as_tag_tuple();
        match tag {
            similar::DiffTag::Equal | similar::DiffTag::Replace => {
                let paired = ra.len().min(rb.len());
                for k in 0..paired {
                    compare_item(&old.items[ra.start + k], &new.items[rb.start + k], out);
                }
                for a in &old.items[ra.start + paired..ra.end] {
                    item_only(a, Change::Removed, out);
                }
                for b in &new.items[rb.start + paired..rb.end] {
                    item_only(b, Change::Added, out);
                }
            }
            similar::DiffTag::Delete => {
                for a in &old.items[ra] {
                    item_only(a, Change::Removed, out);
                }
            }
            similar::DiffTag::Insert => {
                for b in &new.items[rb] {
                    item_only(b, Change::Added, out);
                }
            }
        }
    }
}

fn item_text(item: &Item) -> String {
    if item.kind == ItemKind::Assistant {
        item.parts
            .iter()
            .map(|p| format!("[{}]\n{}", p.label, p.text))
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        item.text.clone()
    }
}

fn item_only(item: &Item, change: Change, out: &mut Out) {
    let (kind, subject, location) = item_place(item);
    let mut s = spec(kind, change, item.turn, subject);
    s.location = location;
    let text = Some(item_text(item));
    match change {
        Change::Removed => s.recorded = text,
        _ => s.now = text,
    }
    out.add(s);
}

fn compare_item(a: &Item, b: &Item, out: &mut Out) {
    if a.raw == b.raw
        && a.parts.len() == b.parts.len()
        && a.parts.iter().zip(&b.parts).all(|(x, y)| x.raw == y.raw)
    {
        return;
    }
    if a.kind == ItemKind::Assistant && b.kind == ItemKind::Assistant {
        return compare_assistant(a, b, out);
    }
    // Name the place from the recorded item (its call numbering is the recording's).
    let (kind, subject, location) = item_place(a);
    let mut s = spec(kind, Change::Changed, a.turn, subject);
    s.location = location;
    if a.kind == ItemKind::ToolResult && a.error != b.error {
        s.detail = Some(
            if b.error {
                "now an error"
            } else {
                "no longer an error"
            }
            .to_owned(),
        );
    }
    let role = |i: &Item| str_at(&i.raw, "role").map(str::to_owned);
    if a.kind == ItemKind::System && a.text == b.text && role(a) != role(b) {
        // OpenAI sends the system prompt as `developer` to reasoning models.
        s.detail = Some(format!(
            "role {} → {}",
            role(a).unwrap_or_else(|| "none".into()),
            role(b).unwrap_or_else(|| "none".into())
        ));
    }
    let (ra, rb) = shown(&a.text, &a.raw, &b.text, &b.raw);
    s.recorded = Some(ra);
    s.now = Some(rb);
    out.add(s);
}

fn compare_assistant(a: &Item, b: &Item, out: &mut Out) {
    let before = out.found.len();
    let n = a.parts.len().max(b.parts.len());
    for k in 0..n {
        let (pa, pb) = (a.parts.get(k), b.parts.get(k));
        if let (Some(x), Some(y)) = (pa, pb) {
            if x.raw == y.raw {
                continue;
            }
        }
        let part = pa.or(pb).expect("one side has the part");
        let subject = match part.label.as_str() {
            "text" => "assistant text".to_owned(),
            other => other.to_owned(),
        };
        let location = match &part.call {
            Some(call) => format!(
                "{subject} ({call}) in the assistant message of turn {}",
                a.turn
            ),
            None => format!("{subject} in the assistant message of turn {}", a.turn),
        };
        let mut s = spec(
            DivergenceKind::AssistantHistory,
            change_of(&pa, &pb),
            a.turn,
            subject,
        );
        s.location = location;
        match (pa, pb) {
            (Some(x), Some(y)) => {
                let (ra, rb) = shown(&x.text, &x.raw, &y.text, &y.raw);
                s.recorded = Some(ra);
                s.now = Some(rb);
            }
            (Some(x), None) => s.recorded = Some(x.text.clone()),
            (None, Some(y)) => s.now = Some(y.text.clone()),
            (None, None) => {}
        }
        out.add(s);
    }
    if out.found.len() == before {
        // Same parts, another envelope (an id, a status, the role).
        let (kind, subject, location) = item_place(a);
        let mut s = spec(kind, Change::Changed, a.turn, subject);
        s.location = location;
        s.recorded = Some(pretty(&a.raw));
        s.now = Some(pretty(&b.raw));
        out.add(s);
    }
}

/// Nothing above explains why the two requests differ: say where, with the JSON diff of the
/// whole requests.
fn safety_net(old: &View, new: &View, recorded: &Value, now: &Value, out: &mut Out) {
    let turn = out.turn();
    let mut s = if !old.body_ok || !new.body_ok || old.body != new.body {
        let what = first_difference(recorded, now, "")
            .map(|p| p.trim_start_matches('.').to_owned())
            .unwrap_or_else(|| "body".to_owned());
        let mut s = spec(
            DivergenceKind::Request,
            Change::Changed,
            turn,
            format!("request at {what}"),
        );
        s.location = format!("the request at {what}");
        s
    } else {
        // Only prompt-caching markers differ (every other comparison leaves them out).
        let mut s = spec(
            DivergenceKind::Params,
            Change::Changed,
            turn,
            "prompt caching markers",
        );
        s.location = "prompt caching markers (cache_control)".to_owned();
        s
    };
    // The same kind of leftover in a later request is the same difference.
    s.key_texts = false;
    out.add(s);
    if let Some((_, d)) = out.found.last_mut() {
        d.diff = unified_diff(recorded, now);
    }
}

#[cfg(test)]
mod tests;
