//! Normalising and comparing requests: the workspace placeholder, task-declared regex rules,
//! key order; the first differing JSON path and a short unified diff for a divergence report.
//!
//! Pure functions over `serde_json::Value`; no I/O, no transport.

use std::sync::Arc;

use regex::Regex;
use serde_json::{Map, Value};

/// A set of rules shared by every run that compares with it (compiled once: a clone of a
/// `Regex` would start with empty match caches on each run).
pub type Rules = Arc<[NormalizeRule]>;

/// A task-declared normalisation rule: every match of `regex` in any string becomes
/// `replacement` (regex replacement syntax, `$1` allowed). Applied to both the recorded and the
/// new request at compare time, so adding a rule never forces a re-record.
#[derive(Debug, Clone)]
pub struct NormalizeRule {
    pub regex: Regex,
    pub replacement: String,
}

impl NormalizeRule {
    /// Compiles a rule.
    pub fn new(pattern: &str, replacement: impl Into<String>) -> Result<Self, regex::Error> {
        Ok(NormalizeRule {
            regex: Regex::new(pattern)?,
            replacement: replacement.into(),
        })
    }
}

/// Whether `after` continues the path segment just matched (so `/tmp/ws1` does not match inside
/// `/tmp/ws10` or `/tmp/ws1.bak`, but does before `/`, a quote, a space or a final `.`).
fn continues_name(after: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-');
    let mut chars = after.chars();
    match chars.next() {
        Some('.') => chars.next().is_some_and(|c| word(c) || c == '.'),
        Some(c) => word(c),
        None => false,
    }
}

/// Replaces every occurrence of `from` that ends at a path-segment boundary by `to`.
pub fn replace_path(s: &str, from: &str, to: &str) -> String {
    if from.is_empty() || !s.contains(from) {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(from) {
        let after = &rest[i + from.len()..];
        out.push_str(&rest[..i]);
        if continues_name(after) {
            out.push_str(from);
        } else {
            out.push_str(to);
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Host paths that vary from run to run (the workspace, bash's full-output folder) and the fixed
/// placeholders written for them in cassettes. Each path is matched as given and canonicalised
/// (longest first, so a canonical path that extends the given one is replaced whole), and only at
/// path-segment boundaries.
#[derive(Debug, Clone, Default)]
pub struct PathMap {
    /// `(host spelling, placeholder)`, longest host spelling first.
    pairs: Vec<(String, String)>,
    /// `(placeholder, the host path it stands for in this run)`, in insertion order.
    restore: Vec<(String, String)>,
}

impl PathMap {
    /// An empty map.
    pub fn new() -> Self {
        PathMap::default()
    }

    /// Maps a workspace to [`super::WORKSPACE_PLACEHOLDER`].
    pub fn workspace(path: &std::path::Path) -> Self {
        PathMap::new().with(path, super::WORKSPACE_PLACEHOLDER)
    }

    /// Maps `path` (and its canonical form) to `placeholder`.
    pub fn with(mut self, path: &std::path::Path, placeholder: &str) -> Self {
        let given = path.to_string_lossy().into_owned();
        let mut spellings = vec![given.clone()];
        if let Ok(canon) = path.canonicalize() {
            let canon = canon.to_string_lossy().into_owned();
            if canon != given {
                spellings.push(canon);
            }
        }
        for s in spellings {
            if !s.is_empty() && s != "/" {
                self.pairs.push((s, placeholder.to_owned()));
            }
        }
        self.pairs.sort_by_key(|(w, _)| std::cmp::Reverse(w.len()));
        if !given.is_empty() && given != "/" {
            self.restore.push((placeholder.to_owned(), given));
        }
        self
    }

    /// `s` with every host path replaced by its placeholder.
    pub fn to_placeholders(&self, s: &str) -> String {
        let mut out = s.to_owned();
        for (path, placeholder) in &self.pairs {
            out = replace_path(&out, path, placeholder);
        }
        out
    }

    /// `s` with every placeholder replaced by this run's host path (for served responses, so
    /// recorded tool calls name real files).
    pub fn to_host(&self, s: &str) -> String {
        let mut out = s.to_owned();
        for (placeholder, path) in &self.restore {
            out = replace_path(&out, placeholder, path);
        }
        out
    }
}

/// Applies `f` to every string (not keys) in `v`.
pub fn map_strings(v: &mut Value, f: &dyn Fn(&str) -> String) {
    match v {
        Value::String(s) => *s = f(s),
        Value::Array(a) => a.iter_mut().for_each(|x| map_strings(x, f)),
        Value::Object(o) => o.values_mut().for_each(|x| map_strings(x, f)),
        _ => {}
    }
}

/// Applies the rules to a string, in order.
pub fn apply_rules(s: &str, rules: &[NormalizeRule]) -> String {
    let mut out = s.to_owned();
    for r in rules {
        if r.regex.is_match(&out) {
            out = r
                .regex
                .replace_all(&out, r.replacement.as_str())
                .into_owned();
        }
    }
    out
}

/// A copy of `v` with object keys sorted recursively (for stable pretty-printing and diffs).
pub fn sort_keys(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.iter().map(sort_keys).collect()),
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            let mut m = Map::new();
            for k in keys {
                m.insert(k.clone(), sort_keys(&o[k]));
            }
            Value::Object(m)
        }
        other => other.clone(),
    }
}

/// Formats a key as a path step: `.name` or `["odd key"]`.
fn key_step(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        format!(".{k}")
    } else {
        format!("[{}]", Value::String(k.to_owned()))
    }
}

/// The first path (in document order) where `a` and `b` differ, starting from `prefix`; `None`
/// if they are equal. Object key order is ignored.
pub fn first_difference(a: &Value, b: &Value, prefix: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                let p = format!("{prefix}{}", key_step(k));
                match y.get(k) {
                    None => return Some(format!("{p} (only in the recorded request)")),
                    Some(vb) => {
                        if let Some(d) = first_difference(va, vb, &p) {
                            return Some(d);
                        }
                    }
                }
            }
            y.keys()
                .find(|k| !x.contains_key(*k))
                .map(|k| format!("{prefix}{} (only in the new request)", key_step(k)))
        }
        (Value::Array(x), Value::Array(y)) => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                if let Some(d) = first_difference(va, vb, &format!("{prefix}[{i}]")) {
                    return Some(d);
                }
            }
            match x.len().cmp(&y.len()) {
                std::cmp::Ordering::Equal => None,
                std::cmp::Ordering::Greater => Some(format!(
                    "{prefix}[{}] (only in the recorded request: {} items recorded, {} now)",
                    y.len(),
                    x.len(),
                    y.len()
                )),
                std::cmp::Ordering::Less => Some(format!(
                    "{prefix}[{}] (only in the new request: {} items recorded, {} now)",
                    x.len(),
                    x.len(),
                    y.len()
                )),
            }
        }
        _ if a == b => None,
        _ => Some(prefix.to_owned()),
    }
}

/// Lines of context around each change in a divergence diff.
pub const DIFF_CONTEXT: usize = 3;
/// At most this many diff lines are shown; the rest is summarised.
pub const DIFF_MAX_LINES: usize = 80;

/// A short unified diff of two values, pretty-printed with sorted keys.
pub fn unified_diff(recorded: &Value, now: &Value) -> String {
    let a = pretty(recorded);
    let b = pretty(now);
    let diff = similar::TextDiff::from_lines(&a, &b);
    let text = diff
        .unified_diff()
        .context_radius(DIFF_CONTEXT)
        .header("recorded", "now")
        .to_string();
    cap_lines(text)
}

/// The first pair of values (in document order) that differ, descending into objects and arrays
/// as [`first_difference`] does; `None` if equal.
fn first_differing_values<'a>(a: &'a Value, b: &'a Value) -> Option<(&'a Value, &'a Value)> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
            for (k, va) in x {
                let vb = y.get(k)?;
                if let Some(d) = first_differing_values(va, vb) {
                    return Some(d);
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .find_map(|(va, vb)| first_differing_values(va, vb)),
        _ if a == b => None,
        _ => Some((a, b)),
    }
}

/// The diff shown for a divergence. When the first difference is inside a multi-line string
/// (a tool result, a system prompt), its lines are diffed as text, which reads like the change
/// to the file or output that caused it; otherwise the two whole requests are diffed as JSON.
pub fn divergence_diff(recorded: &Value, now: &Value, what: &str) -> String {
    if let Some((Value::String(a), Value::String(b))) = first_differing_values(recorded, now) {
        if a.contains('\n') || b.contains('\n') {
            return text_diff(a, b, what);
        }
    }
    unified_diff(recorded, now)
}

/// A unified diff of two texts line by line (headers `recorded WHAT` and `now WHAT`, or just
/// `recorded` and `now`), [`DIFF_CONTEXT`] lines of context, at most [`DIFF_MAX_LINES`] lines.
pub fn text_diff(recorded: &str, now: &str, what: &str) -> String {
    let mut a = recorded.to_owned();
    let mut b = now.to_owned();
    for s in [&mut a, &mut b] {
        if !s.is_empty() && !s.ends_with('\n') {
            s.push('\n');
        }
    }
    let (ha, hb) = if what.is_empty() {
        ("recorded".to_owned(), "now".to_owned())
    } else {
        (format!("recorded {what}"), format!("now {what}"))
    };
    let text = similar::TextDiff::from_lines(&a, &b)
        .unified_diff()
        .context_radius(DIFF_CONTEXT)
        .header(&ha, &hb)
        .to_string();
    cap_lines(text)
}

fn cap_lines(text: String) -> String {
    cap_lines_at(text, DIFF_MAX_LINES)
}

/// `text` cut to its first `max` lines, with a line saying how many more there were.
pub fn cap_lines_at(text: String, max: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= max {
        return text;
    }
    let mut out = lines[..max].join("\n");
    out.push_str(&format!("\n... ({} more diff lines)\n", lines.len() - max));
    out
}

fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(&sort_keys(v)).unwrap_or_else(|e| e.to_string());
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_changed_multi_line_string_is_diffed_as_text() {
        let old = json!({"messages": [{"content": "a\nb\nc\n"}], "model": "m"});
        let new = json!({"messages": [{"content": "a\nB\nc\n"}], "model": "m"});
        let what = first_difference(&old, &new, "").unwrap();
        let diff = divergence_diff(&old, &new, what.trim_start_matches('.'));
        assert!(diff.contains("--- recorded messages[0].content"), "{diff}");
        assert!(diff.contains("\n-b\n+B\n"), "{diff}");
        // A one-line value falls back to the JSON diff of the requests.
        let old = json!({"model": "m1"});
        let new = json!({"model": "m2"});
        let diff = divergence_diff(&old, &new, "model");
        assert!(diff.contains("-  \"model\": \"m1\""), "{diff}");
    }

    #[test]
    fn replace_path_respects_segment_boundaries() {
        assert_eq!(
            replace_path(
                "cd /tmp/ws1 && ls /tmp/ws1/src /tmp/ws10 /tmp/ws1.x in /tmp/ws1.",
                "/tmp/ws1",
                "/workspace"
            ),
            "cd /workspace && ls /workspace/src /tmp/ws10 /tmp/ws1.x in /workspace."
        );
        assert_eq!(replace_path("\"/tmp/ws1\"", "/tmp/ws1", "/w"), "\"/w\"");
        assert_eq!(replace_path("nothing", "", "/w"), "nothing");
    }

    #[test]
    fn key_order_is_irrelevant_and_first_difference_is_found() {
        let a = json!({"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]});
        let b = json!({"messages": [{"content": [{"text": "hi", "type": "text"}], "role": "user"}], "model": "m"});
        assert_eq!(first_difference(&a, &b, "body"), None);
        assert_eq!(a, b, "serde_json maps compare regardless of order");

        let c = json!({"messages": [{"content": [{"text": "hello", "type": "text"}], "role": "user"}], "model": "m"});
        assert_eq!(
            first_difference(&a, &c, "body").as_deref(),
            Some("body.messages[0].content[0].text")
        );
    }

    #[test]
    fn first_difference_reports_missing_and_extra() {
        let a = json!({"a": [1, 2], "b": 1});
        assert_eq!(
            first_difference(&a, &json!({"a": [1, 2, 3], "b": 1}), "body").as_deref(),
            Some("body.a[2] (only in the new request: 2 items recorded, 3 now)")
        );
        assert_eq!(
            first_difference(&a, &json!({"a": [1, 2]}), "body").as_deref(),
            Some("body.b (only in the recorded request)")
        );
        assert_eq!(
            first_difference(&a, &json!({"a": [1, 2], "b": 1, "c d": 0}), "body").as_deref(),
            Some("body[\"c d\"] (only in the new request)")
        );
        assert_eq!(
            first_difference(&json!(1), &json!("1"), "x").as_deref(),
            Some("x")
        );
    }

    #[test]
    fn rules_normalise_both_sides() {
        let rules = vec![NormalizeRule::new(r"\d{4}-\d{2}-\d{2}", "<date>").unwrap()];
        let mut a = json!({"t": "today is 2026-01-01", "n": ["2025-12-31"]});
        let mut b = json!({"t": "today is 2026-11-30", "n": ["2026-11-30"]});
        assert!(first_difference(&a, &b, "body").is_some());
        map_strings(&mut a, &|s| apply_rules(s, &rules));
        map_strings(&mut b, &|s| apply_rules(s, &rules));
        assert_eq!(first_difference(&a, &b, "body"), None);
        assert_eq!(a["t"], "today is <date>");
    }

    #[test]
    fn diff_shows_the_changed_line_with_limited_context() {
        let items: Vec<Value> = (0..40).map(|i| json!(format!("item {i}"))).collect();
        let a = json!({"list": items});
        let mut b = a.clone();
        b["list"][20] = json!("changed");
        let d = unified_diff(&a, &b);
        assert!(d.starts_with("--- recorded\n+++ now\n"), "{d}");
        assert!(d.contains("-    \"item 20\",\n+    \"changed\",\n"), "{d}");
        assert!(
            d.contains("\"item 17\"") && !d.contains("\"item 16\""),
            "{d}"
        );
        assert!(!d.contains("\"item 24\""), "{d}");
    }

    #[test]
    fn long_diffs_are_cut() {
        let a = json!((0..200).collect::<Vec<_>>());
        let b = json!((0..200).map(|i| i + 1000).collect::<Vec<_>>());
        let d = unified_diff(&a, &b);
        assert!(d.contains("more diff lines"), "{d}");
        assert!(d.lines().count() <= DIFF_MAX_LINES + 1);
    }
}
