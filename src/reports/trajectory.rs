//! `trajectory.json`: a run as an ATIF trajectory (Harbor's Agent Trajectory Interchange Format,
//! version 1.4: `rfcs/0001-trajectory-format.md` of the Harbor project), so the runs of this
//! harness load in the tools built for Harbor's (viewers, SFT and RL pipelines).
//!
//! The mapping: the system prompt is a `system` step, each user message a `user` step, each
//! model reply an `agent` step with its text as `message`, its thinking as `reasoning_content`,
//! its tool calls as `tool_calls` and their results as the step's `observation` (each result
//! names its call in `source_call_id`), and its token counts as `metrics` (ATIF's
//! `prompt_tokens` counts every input token, cached or not; `cached_tokens` the cache reads; the
//! cache writes go to `metrics.extra`). The outcome, checks and edit strategy go to the root
//! `extra`. Images in tool results, which v1.4 cannot carry, are named in the text.
//!
//! Reads the run file only.

use serde_json::{Map, Value, json};

use crate::conversation::{AssistantBlock, Message, UserContent};
use crate::record::RunFile;

use super::cells::{UserTurn, user_turns};
use super::transcript::contents_text;

/// The file name in a run's folder.
pub const TRAJECTORY_JSON: &str = "trajectory.json";

/// The ATIF version written.
pub const SCHEMA_VERSION: &str = "ATIF-v1.4";

/// Appends `step`, numbered from 1 in order (`step_id` first).
fn push(steps: &mut Vec<Map<String, Value>>, mut step: Map<String, Value>) {
    let mut ordered = Map::new();
    ordered.insert("step_id".into(), json!(steps.len() + 1));
    ordered.append(&mut step);
    steps.push(ordered);
}

/// The ATIF trajectory of one run.
pub fn trajectory(file: &RunFile) -> Value {
    let r = &file.record;
    let mut steps: Vec<Map<String, Value>> = Vec::new();
    if let Some(system) = &file.system_prompt {
        let mut step = Map::new();
        step.insert("source".into(), json!("system"));
        step.insert("message".into(), json!(system));
        push(&mut steps, step);
    }
    let (mut prompt, mut completion, mut cached, mut cache_write) = (0u64, 0u64, 0u64, 0u64);
    let mut users = user_turns(r, &file.messages).into_iter();
    for message in &file.messages {
        match message {
            Message::User { content } => {
                let text = match content {
                    UserContent::Text(text) => text.clone(),
                    UserContent::Blocks(blocks) => contents_text(blocks),
                };
                let mut step = Map::new();
                step.insert("source".into(), json!("user"));
                step.insert("message".into(), json!(text));
                match users.next() {
                    Some(UserTurn::Prompt { index, of }) if of > 1 => {
                        step.insert("extra".into(), json!({ "prompt": index, "prompts": of }));
                    }
                    Some(UserTurn::Attempt(n)) => {
                        step.insert("extra".into(), json!({ "attempt": n }));
                    }
                    _ => {}
                }
                push(&mut steps, step);
            }
            Message::Assistant(reply) => {
                let mut text = Vec::new();
                let mut thinking = Vec::new();
                let mut calls = Vec::new();
                for block in &reply.content {
                    match block {
                        AssistantBlock::Text { text: t, .. } => text.push(t.as_str()),
                        AssistantBlock::Thinking {
                            thinking: t,
                            redacted,
                            ..
                        } => thinking.push(if *redacted { "(redacted)" } else { t.as_str() }),
                        AssistantBlock::ToolCall(call) => {
                            // ATIF wants an object; a model may send anything.
                            let arguments = match &call.arguments {
                                Value::Object(_) => call.arguments.clone(),
                                other => json!({ "value": other }),
                            };
                            calls.push(json!({
                                "tool_call_id": call.id,
                                "function_name": call.name,
                                "arguments": arguments,
                            }));
                        }
                    }
                }
                let u = &reply.usage;
                let step_prompt = u.input + u.cache_read + u.cache_write;
                prompt += step_prompt;
                completion += u.output;
                cached += u.cache_read;
                cache_write += u.cache_write;
                let mut step = Map::new();
                step.insert("source".into(), json!("agent"));
                step.insert("model_name".into(), json!(reply.model));
                step.insert("message".into(), json!(text.join("")));
                if !thinking.is_empty() {
                    step.insert("reasoning_content".into(), json!(thinking.join("\n")));
                }
                if !calls.is_empty() {
                    step.insert("tool_calls".into(), Value::Array(calls));
                }
                step.insert(
                    "metrics".into(),
                    json!({
                        "prompt_tokens": step_prompt,
                        "completion_tokens": u.output,
                        "cached_tokens": u.cache_read,
                        "extra": {
                            "cache_write_tokens": u.cache_write,
                            "stop_reason": reply.stop_reason,
                        },
                    }),
                );
                if let Some(error) = &reply.error_message {
                    step.insert("extra".into(), json!({ "error_message": error }));
                }
                push(&mut steps, step);
            }
            Message::ToolResult(result) => {
                let Some(step) = steps
                    .last_mut()
                    .filter(|s| s.get("source") == Some(&json!("agent")))
                else {
                    continue;
                };
                let observation = step
                    .entry("observation")
                    .or_insert_with(|| json!({ "results": [] }));
                let mut entry = json!({
                    "source_call_id": result.tool_call_id,
                    "content": contents_text(&result.content),
                });
                if result.is_error {
                    entry["content"] = json!(format!(
                        "[error] {}",
                        entry["content"].as_str().unwrap_or_default()
                    ));
                }
                if let Some(results) = observation["results"].as_array_mut() {
                    results.push(entry);
                }
            }
        }
    }
    let mut final_metrics = json!({
        "total_prompt_tokens": prompt,
        "total_completion_tokens": completion,
        "total_cached_tokens": cached,
        "total_steps": steps.len(),
        "extra": { "total_cache_write_tokens": cache_write },
    });
    if let Some(cost) = r.cost {
        final_metrics["total_cost_usd"] = json!(cost);
    }
    let checks: Vec<Value> = r
        .checks
        .iter()
        .map(|c| json!({ "name": c.name, "passed": c.passed, "detail": c.detail }))
        .collect();
    json!({
        "schema_version": SCHEMA_VERSION,
        "session_id": r.run_dir().trim_start_matches("runs/"),
        "agent": {
            "name": "harness",
            "version": env!("CARGO_PKG_VERSION"),
            "model_name": r.model,
            "extra": {
                "provider": r.provider,
                "edit_strategy": file.edit_strategy,
                "loop": "Pi coding agent 0.73.1 (Rust port)",
            },
        },
        "steps": steps,
        "notes": "Written by harness from runs/<run>/run.json. Tool results that were errors start with [error]; images in tool results are named, not embedded (ATIF v1.4 carries text only).",
        "final_metrics": final_metrics,
        "extra": {
            "task_id": r.task_id,
            "epoch": r.epoch,
            "outcome": r.outcome,
            "reason": r.reason,
            "stop": r.stop,
            "checks": checks,
            "attempts": r.attempt_outcomes,
        },
    })
}

pub mod atif;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reports::tests::{records, run_file};

    #[test]
    fn the_trajectory_of_a_run_is_valid_atif_1_4() {
        let records = records();
        let file = run_file(&records[0], Some("You are an expert coding assistant."), "");
        let t = trajectory(&file);
        assert_eq!(atif::validate(&t), Vec::<String>::new(), "{t:#}");
        let steps = t["steps"].as_array().unwrap();
        let sources: Vec<&str> = steps
            .iter()
            .map(|s| s["source"].as_str().unwrap())
            .collect();
        assert_eq!(sources, ["system", "user", "agent", "agent"]);
        let first = &steps[2];
        assert_eq!(first["message"], "Let me fix it.");
        assert_eq!(first["reasoning_content"], "The bug is in calc.py.");
        assert_eq!(first["tool_calls"][0]["function_name"], "edit");
        assert_eq!(first["tool_calls"][0]["tool_call_id"], "toolu_1");
        let result = &first["observation"]["results"][0];
        assert_eq!(result["source_call_id"], "toolu_1");
        assert!(
            result["content"]
                .as_str()
                .unwrap()
                .starts_with("[error] Could not find")
        );
        assert_eq!(first["metrics"]["prompt_tokens"], 100);
        assert_eq!(first["metrics"]["completion_tokens"], 20);
        assert_eq!(t["final_metrics"]["total_steps"], 4);
        assert_eq!(t["final_metrics"]["total_prompt_tokens"], 100);
        assert_eq!(t["final_metrics"]["total_cost_usd"], 0.1065);
        assert_eq!(t["session_id"], "py-fix-median--openai--gpt-x--e1");
        assert_eq!(t["agent"]["extra"]["edit_strategy"], "pi");
        assert_eq!(t["extra"]["outcome"], "failed");
    }

    #[test]
    fn arguments_that_are_no_object_are_wrapped() {
        let records = records();
        let mut file = run_file(&records[0], None, "");
        if let Message::Assistant(reply) = &mut file.messages[1] {
            for block in &mut reply.content {
                if let AssistantBlock::ToolCall(call) = block {
                    call.arguments = json!("not an object");
                }
            }
        }
        let t = trajectory(&file);
        assert_eq!(atif::validate(&t), Vec::<String>::new());
        assert_eq!(
            t["steps"][1]["tool_calls"][0]["arguments"]["value"],
            "not an object"
        );
    }
}
