//! A checker of ATIF v1.4 documents against the published field list (Harbor's
//! `rfcs/0001-trajectory-format.md`, section II, and the rules its reference validator states:
//! required fields, field types, `step_id` counting from 1, `source` one of system/user/agent,
//! the agent-only fields only on agent steps, every `source_call_id` naming a tool call of its
//! step, and no field outside the list). The tests check the trajectories this harness writes
//! with it (every run of the shipped suite among them), and documents that break each rule.

use serde_json::{Map, Value};

/// The type a field must have.
#[derive(Clone, Copy)]
enum Kind {
    String,
    Integer,
    Number,
    Object,
    Array,
    /// `reasoning_effort`: a string or a number.
    StringOrNumber,
}

impl Kind {
    fn accepts(self, v: &Value) -> bool {
        match self {
            Kind::String => v.is_string(),
            Kind::Integer => v.is_u64() || v.is_i64(),
            Kind::Number => v.is_number(),
            Kind::Object => v.is_object(),
            Kind::Array => v.is_array(),
            Kind::StringOrNumber => v.is_string() || v.is_number(),
        }
    }
}

/// `(field, kind, required)` of each object of the format.
const ROOT: &[(&str, Kind, bool)] = &[
    ("schema_version", Kind::String, true),
    ("session_id", Kind::String, true),
    ("agent", Kind::Object, true),
    ("steps", Kind::Array, true),
    ("notes", Kind::String, false),
    ("final_metrics", Kind::Object, false),
    ("extra", Kind::Object, false),
];
const AGENT: &[(&str, Kind, bool)] = &[
    ("name", Kind::String, true),
    ("version", Kind::String, true),
    ("model_name", Kind::String, false),
    ("extra", Kind::Object, false),
];
const FINAL_METRICS: &[(&str, Kind, bool)] = &[
    ("total_prompt_tokens", Kind::Integer, false),
    ("total_completion_tokens", Kind::Integer, false),
    ("total_cached_tokens", Kind::Integer, false),
    ("total_cost_usd", Kind::Number, false),
    ("total_steps", Kind::Integer, false),
    ("extra", Kind::Object, false),
];
const STEP: &[(&str, Kind, bool)] = &[
    ("step_id", Kind::Integer, true),
    ("timestamp", Kind::String, false),
    ("source", Kind::String, true),
    ("model_name", Kind::String, false),
    ("reasoning_effort", Kind::StringOrNumber, false),
    ("message", Kind::String, true),
    ("reasoning_content", Kind::String, false),
    ("tool_calls", Kind::Array, false),
    ("observation", Kind::Object, false),
    ("metrics", Kind::Object, false),
    ("extra", Kind::Object, false),
];
/// Step fields the RFC marks "only applicable when source is agent".
const AGENT_ONLY: &[&str] = &[
    "model_name",
    "reasoning_effort",
    "reasoning_content",
    "tool_calls",
    "metrics",
];
const TOOL_CALL: &[(&str, Kind, bool)] = &[
    ("tool_call_id", Kind::String, true),
    ("function_name", Kind::String, true),
    ("arguments", Kind::Object, true),
];
const METRICS: &[(&str, Kind, bool)] = &[
    ("prompt_tokens", Kind::Integer, false),
    ("completion_tokens", Kind::Integer, false),
    ("cached_tokens", Kind::Integer, false),
    ("cost_usd", Kind::Number, false),
    ("prompt_token_ids", Kind::Array, false),
    ("completion_token_ids", Kind::Array, false),
    ("logprobs", Kind::Array, false),
    ("extra", Kind::Object, false),
];
const OBSERVATION: &[(&str, Kind, bool)] = &[("results", Kind::Array, true)];
const RESULT: &[(&str, Kind, bool)] = &[
    ("source_call_id", Kind::String, false),
    ("content", Kind::String, false),
    ("subagent_trajectory_ref", Kind::Array, false),
];
const SUBAGENT_REF: &[(&str, Kind, bool)] = &[
    ("session_id", Kind::String, true),
    ("trajectory_path", Kind::String, false),
    ("extra", Kind::Object, false),
];

fn object<'a>(
    v: &'a Value,
    fields: &[(&str, Kind, bool)],
    at: &str,
    errors: &mut Vec<String>,
) -> Option<&'a Map<String, Value>> {
    let Some(map) = v.as_object() else {
        errors.push(format!("{at}: not an object"));
        return None;
    };
    for (name, kind, required) in fields {
        match map.get(*name) {
            // `null` is how an optional field is left out in the reference models.
            Some(Value::Null) if !required => {}
            Some(value) if !kind.accepts(value) => {
                errors.push(format!("{at}.{name}: wrong type"));
            }
            Some(_) => {}
            None if *required => errors.push(format!("{at}.{name}: missing")),
            None => {}
        }
    }
    for key in map.keys() {
        if !fields.iter().any(|(name, _, _)| name == key) {
            errors.push(format!("{at}.{key}: not an ATIF v1.4 field"));
        }
    }
    Some(map)
}

/// Every way `doc` breaks ATIF v1.4; empty when it is a valid trajectory.
pub fn validate(doc: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let Some(root) = object(doc, ROOT, "$", &mut errors) else {
        return errors;
    };
    if root.get("schema_version").and_then(Value::as_str) != Some("ATIF-v1.4") {
        errors.push("$.schema_version: not ATIF-v1.4".into());
    }
    if let Some(agent) = root.get("agent") {
        object(agent, AGENT, "$.agent", &mut errors);
    }
    if let Some(m) = root.get("final_metrics").filter(|v| !v.is_null()) {
        object(m, FINAL_METRICS, "$.final_metrics", &mut errors);
    }
    let steps = root.get("steps").and_then(Value::as_array);
    for (i, step) in steps.into_iter().flatten().enumerate() {
        let at = format!("$.steps[{i}]");
        let Some(map) = object(step, STEP, &at, &mut errors) else {
            continue;
        };
        if map.get("step_id").and_then(Value::as_u64) != Some(i as u64 + 1) {
            errors.push(format!("{at}.step_id: steps must count from 1 in order"));
        }
        let source = map.get("source").and_then(Value::as_str).unwrap_or("");
        if !matches!(source, "system" | "user" | "agent") {
            errors.push(format!(
                "{at}.source: `{source}` is not system, user or agent"
            ));
        }
        if source != "agent" {
            for field in AGENT_ONLY {
                if map.get(*field).is_some_and(|v| !v.is_null()) {
                    errors.push(format!("{at}.{field}: only agent steps have it"));
                }
            }
        }
        let mut ids = Vec::new();
        for (j, call) in map
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            if let Some(call) = object(
                call,
                TOOL_CALL,
                &format!("{at}.tool_calls[{j}]"),
                &mut errors,
            ) && let Some(id) = call.get("tool_call_id").and_then(Value::as_str)
            {
                ids.push(id.to_owned());
            }
        }
        if let Some(m) = map.get("metrics").filter(|v| !v.is_null()) {
            object(m, METRICS, &format!("{at}.metrics"), &mut errors);
        }
        if let Some(o) = map.get("observation").filter(|v| !v.is_null())
            && let Some(o) = object(o, OBSERVATION, &format!("{at}.observation"), &mut errors)
        {
            for (j, result) in o
                .get("results")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let rat = format!("{at}.observation.results[{j}]");
                let Some(result) = object(result, RESULT, &rat, &mut errors) else {
                    continue;
                };
                if let Some(id) = result.get("source_call_id").and_then(Value::as_str)
                    && !ids.iter().any(|i| i == id)
                {
                    errors.push(format!(
                        "{rat}.source_call_id: `{id}` is no tool call of the step"
                    ));
                }
                for (k, r) in result
                    .get("subagent_trajectory_ref")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    object(
                        r,
                        SUBAGENT_REF,
                        &format!("{rat}.subagent_trajectory_ref[{k}]"),
                        &mut errors,
                    );
                }
            }
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::validate;

    fn minimal() -> serde_json::Value {
        json!({
            "schema_version": "ATIF-v1.4",
            "session_id": "s-1",
            "agent": {"name": "a", "version": "1"},
            "steps": [
                {"step_id": 1, "source": "user", "message": "hello"},
                {"step_id": 2, "source": "agent", "message": "",
                 "tool_calls": [{"tool_call_id": "c1", "function_name": "ls", "arguments": {}}],
                 "observation": {"results": [{"source_call_id": "c1", "content": "a.txt"}]},
                 "metrics": {"prompt_tokens": 10, "completion_tokens": 2, "cached_tokens": 0}}
            ]
        })
    }

    #[test]
    fn a_minimal_trajectory_is_valid() {
        assert_eq!(validate(&minimal()), Vec::<String>::new());
    }

    /// Breaks one rule of a document.
    type Breaker = fn(&mut serde_json::Value);

    #[test]
    fn the_checker_catches_every_rule() {
        let cases: Vec<(Breaker, &str)> = vec![
            (
                |d| d["schema_version"] = json!("ATIF-v1.3"),
                "not ATIF-v1.4",
            ),
            (
                |d| {
                    d.as_object_mut().unwrap().remove("session_id");
                },
                "session_id: missing",
            ),
            (|d| d["agent"]["version"] = json!(1), "version: wrong type"),
            (|d| d["steps"][1]["step_id"] = json!(3), "count from 1"),
            (
                |d| d["steps"][0]["source"] = json!("tool"),
                "not system, user or agent",
            ),
            (
                |d| d["steps"][0]["reasoning_content"] = json!("x"),
                "only agent steps",
            ),
            (
                |d| d["steps"][1]["observation"]["results"][0]["source_call_id"] = json!("c9"),
                "no tool call",
            ),
            (
                |d| d["steps"][1]["tool_calls"][0]["arguments"] = json!([1]),
                "arguments: wrong type",
            ),
            (
                |d| d["steps"][1]["colour"] = json!("red"),
                "not an ATIF v1.4 field",
            ),
            (
                |d| d["steps"][1]["metrics"]["prompt_tokens"] = json!("10"),
                "prompt_tokens: wrong type",
            ),
        ];
        for (break_it, expected) in cases {
            let mut doc = minimal();
            break_it(&mut doc);
            let errors = validate(&doc);
            assert!(
                errors.iter().any(|e| e.contains(expected)),
                "expected `{expected}` in {errors:?}"
            );
        }
    }
}
