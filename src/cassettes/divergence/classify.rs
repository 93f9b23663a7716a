//! Classifying the differences of one request: both sides read into their neutral
//! [`View`]s, compared part by part (request line and headers, parameters, tools, then the
//! conversation aligned item by item), each difference located in conversation terms; what none
//! of that explains falls to a safety net that names the JSON path.
//!
//! Pure and stateless. Depends on [`super::view`], [`super::types`] and the helpers of
//! [`crate::cassettes::normalize`] only.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use serde_json::Value;

use super::types::{Change, Difference, DivergenceKind, turn_of_request};
use super::view::{Item, ItemKind, ToolDef, View, compact, pretty, view};
use crate::cassettes::normalize::{first_difference, text_diff, unified_diff};
use crate::providers::ApiKind;

/// Every difference between request `index` recorded and now, each with its dedup key (equal
/// for the same difference seen again in a later request). Stateless.
pub(super) fn classify(
    api: ApiKind,
    index: usize,
    recorded: &Value,
    now: &Value,
) -> Vec<(u64, Difference)> {
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
    let role = |i: &Item| i.role.clone();
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
