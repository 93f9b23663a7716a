//! `harness cassettes check`: stale and broken cassettes, made visible before a replay trips on
//! them. A cassette whose task no longer exists, whose header does not match the task it sits
//! under (task id, file name, the tools and the prompt of its first request), a file that is
//! empty or does not parse, a stray file, a `.new` waiting for review, and (from a replay's
//! report) interactions a run never used.
//!
//! Reads headers only where that is enough; the tasks come in as plain [`TaskInfo`] so this
//! module never depends on task loading.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::format::{Cassette, read_header};
use super::{cassette_path, sanitize_component};

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
