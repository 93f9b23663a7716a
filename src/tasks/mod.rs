//! Task definitions (`task.yaml` plus a `repo/` fixture), their JSON Schema and validation.
//!
//! A suite is a folder: every subfolder not starting with `.` or `_` is one task (`task.yaml` and
//! a `repo/` fixture folder); an optional `defaults.yaml` beside them sets suite-wide defaults.
//! Loading is two-phase, the ripgrep way: the raw YAML is checked against the published JSON
//! Schema ([`task_schema`], by [`schema`]'s validator of the part of JSON Schema it uses) and
//! deserialised with `deny_unknown_fields`, then validated into a
//! [`Task`] (checks resolved, paths checked, regexes compiled, ids unique). Every problem of every
//! file is collected, each naming the file and the field, so one run shows them all.
//!
//! A fixture whose symlinks point outside `repo/` (or are absolute, so a workspace copy would
//! still point at the original) is refused.
//!
//! A task may carry a reference solution beside `task.yaml` ([`solution`]: a `solution/` folder
//! or a `solution.sh`), which the oracle applies; it is checked with the rest.
//!
//! Depends on `agent` (for [`crate::agent::Limits`]), `tools` (for [`crate::tools::ToolSetSpec`]),
//! `sandbox` (env names, symlink confinement) and the oracle's reference type only; never on the
//! workspace, scoring, reports or runner.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent::Limits;
use crate::tools::ToolSetSpec;

pub mod problem;
pub mod requires;
pub mod schema;
pub mod solution;

pub use problem::TaskProblem;
pub use requires::Requires;

use schema::{SchemaError, Segment, Validator};

/// The JSON Schema of `task.yaml` (draft 2020-12); `$defs/defaults` describes `defaults.yaml`.
const TASK_SCHEMA: &str = include_str!("task.schema.json");

/// The names of the tools a task may list.
pub const TOOL_NAMES: [&str; 7] = ["read", "write", "edit", "bash", "grep", "find", "ls"];

/// Timeout of a command check when neither the check nor the suite sets one.
pub const DEFAULT_CHECK_TIMEOUT: Duration = Duration::from_secs(300);

/// The most attempts a task may give the agent.
pub const MAX_ATTEMPTS: u32 = 10;

/// The file name of the suite defaults in the tasks folder.
pub const DEFAULTS_FILE: &str = "defaults.yaml";

/// The published JSON Schema of `task.yaml`, for `harness schema` and editors.
pub fn task_schema() -> &'static str {
    TASK_SCHEMA
}

// ---------------------------------------------------------------------------------------------
// Raw files (phase one): exactly what the YAML says.
// ---------------------------------------------------------------------------------------------

/// `task.yaml` as written.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TaskFile {
    pub id: String,
    /// The user message the agent starts from (or `prompts`).
    #[serde(default)]
    pub prompt: Option<String>,
    /// User messages sent one after the other, each when the agent stops (or `prompt`).
    #[serde(default)]
    pub prompts: Option<Vec<String>>,
    /// How many times the agent may try: after a failed try, the failing checks' output goes
    /// back as the next user message (default 1).
    #[serde(default)]
    pub attempts: Option<u32>,
    #[serde(default)]
    pub system_prompt: Option<String>,
    #[serde(default)]
    pub tools: Option<ToolsField>,
    pub checks: Vec<CheckFile>,
    #[serde(default)]
    pub limits: Option<LimitsFile>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub normalize: Vec<NormalizeSpec>,
    /// `false` turns off the built-in rules for volatile tool output (default: the suite's
    /// setting, else on).
    #[serde(default)]
    pub normalize_defaults: Option<bool>,
    /// Variables for the agent's commands and the checks, on top of the harness's allow-list.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// What the checks need on the machine (programs, Python modules, files).
    #[serde(default)]
    pub requires: Option<Requires>,
}

/// `defaults.yaml` as written. A task's own fields override these; tags and normalize rules add up.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteDefaults {
    #[serde(default)]
    pub system_prompt: Option<String>,
    #[serde(default)]
    pub tools: Option<ToolsField>,
    #[serde(default)]
    pub limits: Option<LimitsFile>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub normalize: Vec<NormalizeSpec>,
    /// `false` turns off the built-in rules for volatile tool output for every task that does
    /// not set `normalize_defaults` itself.
    #[serde(default)]
    pub normalize_defaults: Option<bool>,
    /// Timeout of command checks that set none.
    #[serde(default)]
    pub checks_timeout_seconds: Option<u64>,
}

/// `tools:` as written: a named set or a list of tool names.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum ToolsField {
    /// `coding` or `readonly`.
    Set(String),
    List(Vec<String>),
}

/// One entry of `checks:` as written (a command check or a file check; validated later).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CheckFile {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub run: Option<String>,
    #[serde(default)]
    pub expect_exit: Option<i32>,
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub exists: Option<bool>,
    #[serde(default)]
    pub contains: Option<String>,
    #[serde(default)]
    pub not_contains: Option<String>,
    #[serde(default)]
    pub equals_file: Option<String>,
}

/// `limits:` as written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsFile {
    #[serde(default)]
    pub turns: Option<u32>,
    #[serde(default)]
    pub wall_seconds: Option<u64>,
    #[serde(default)]
    pub tokens: Option<u64>,
}

impl LimitsFile {
    /// The harness's own limits for a task and suite that set none. Pi has no limit at all; a
    /// harness that runs unattended against paid APIs must end every run, so a runaway model
    /// stops at 100 turns or 30 minutes (a task can raise both).
    pub const BUILT_IN: LimitsFile = LimitsFile {
        turns: Some(100),
        wall_seconds: Some(1800),
        tokens: None,
    };

    /// Field-wise: `self`'s values win, `base` fills the gaps.
    fn or(self, base: LimitsFile) -> LimitsFile {
        LimitsFile {
            turns: self.turns.or(base.turns),
            wall_seconds: self.wall_seconds.or(base.wall_seconds),
            tokens: self.tokens.or(base.tokens),
        }
    }
}

/// A request-normalisation rule for cassette comparison: every match of `pattern` becomes
/// `replacement` (regex crate syntax, `$1` groups allowed), on both sides of the comparison.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct NormalizeSpec {
    pub pattern: String,
    pub replacement: String,
}

// ---------------------------------------------------------------------------------------------
// Validated tasks (phase two).
// ---------------------------------------------------------------------------------------------

/// A validated task, defaults merged in.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub id: String,
    /// The task folder (`tasks/<folder>`), as reached from the suite folder given to the loader.
    pub dir: PathBuf,
    /// The fixture repository (`<dir>/repo`).
    pub repo: PathBuf,
    /// The user messages, sent one after the other, each when the agent stops: `prompt` alone,
    /// or `prompts`. Never empty.
    pub prompts: Vec<String>,
    /// How many times the agent may try (at least 1): after a try whose checks fail, their
    /// output goes back as the next user message and the agent goes on.
    pub attempts: u32,
    /// The task's or the suite's system prompt; `None` means the harness's built-in one.
    pub system_prompt: Option<String>,
    pub tools: ToolSetSpec,
    pub checks: Vec<Check>,
    pub limits: Limits,
    /// Suite tags first, then the task's, without duplicates.
    pub tags: Vec<String>,
    /// Suite rules first, then the task's; every pattern compiles.
    pub normalize: Vec<NormalizeSpec>,
    /// Whether the built-in rules for volatile tool output (`cassettes::noise`) apply before
    /// `normalize`: the task's `normalize_defaults`, else the suite's, else `true`.
    pub normalize_defaults: bool,
    /// Declared variables for the agent's commands and the checks, sorted by name.
    pub env: Vec<(String, String)>,
    /// The reference solution (`solution/` or `solution.sh` beside `task.yaml`), for the oracle.
    pub solution: Option<crate::providers::oracle::Reference>,
    /// What the checks need on the machine; the runner skips the task when something is missing.
    pub requires: Requires,
}

impl Task {
    /// A task named `id` in the folder `dir` and nothing more: no prompt, no checks, the coding
    /// tools, the default limits, no tags or rules of its own, the built-in rules on, no declared
    /// variables, its fixture at `dir/repo`. For code that builds tasks itself rather than
    /// loading them (tests, benchmarks); set the fields it needs on top.
    pub fn bare(id: &str, dir: impl Into<PathBuf>) -> Task {
        let dir = dir.into();
        Task {
            id: id.to_owned(),
            repo: dir.join("repo"),
            dir,
            prompts: vec![String::new()],
            attempts: 1,
            system_prompt: None,
            tools: ToolSetSpec::Coding,
            checks: vec![],
            limits: Limits::default(),
            tags: vec![],
            normalize: vec![],
            normalize_defaults: true,
            env: vec![],
            solution: None,
            requires: Requires::default(),
        }
    }
}

/// A validated check.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// The given name, or one made from the command or the assertion.
    pub name: String,
    pub kind: CheckKind,
}

/// What a check asserts.
#[derive(Debug, Clone, PartialEq)]
pub enum CheckKind {
    /// `bash -c <run>` in the workspace must exit with `expect_exit` within `timeout`.
    Command {
        run: String,
        expect_exit: i32,
        timeout: Duration,
    },
    /// An assertion on a file of the workspace (`path` is relative and stays inside it).
    File { path: String, assert: FileAssert },
}

/// The assertion of a file check.
#[derive(Debug, Clone, PartialEq)]
pub enum FileAssert {
    /// `true`: the file must exist; `false`: it must not.
    Exists(bool),
    Contains(String),
    NotContains(String),
    /// Must equal this file (absolute, inside the task folder) byte for byte.
    EqualsFile(PathBuf),
}

/// A loaded suite: the folder, its defaults and its tasks (sorted by folder name).
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    pub dir: PathBuf,
    pub defaults: SuiteDefaults,
    pub tasks: Vec<Task>,
}

/// Every problem found while loading a suite.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct SuiteErrors {
    pub problems: Vec<TaskProblem>,
}

impl fmt::Display for SuiteErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        write!(
            f,
            "{n} problem{} in the task suite",
            if n == 1 { "" } else { "s" }
        )?;
        for problem in &self.problems {
            write!(f, "\n  {problem}")?;
        }
        Ok(())
    }
}

/// The one task folder `path` names, if it names one: a folder holding a `task.yaml`, or that
/// file itself. Such a path selects that task alone, of the suite in its parent folder (whose
/// `defaults.yaml` and `harness.yaml` apply), the way `harness run tasks/py-median` reads.
pub fn task_folder_of(path: &Path) -> Option<PathBuf> {
    if path.file_name().is_some_and(|n| n == "task.yaml") && path.is_file() {
        return Some(path.parent().map_or_else(PathBuf::new, Path::to_path_buf));
    }
    path.join("task.yaml").is_file().then(|| path.to_path_buf())
}

/// The suite folder of `path`: the parent of a task folder ([`task_folder_of`]), else `path`.
pub fn suite_dir_of(path: &Path) -> PathBuf {
    match task_folder_of(path) {
        Some(folder) => parent_or_here(&folder),
        None => path.to_path_buf(),
    }
}

/// The folder `folder` is in: `.` for a bare name (`harness run py-median` in the suite), `..`
/// for `.` (`harness run .` in the task's folder).
fn parent_or_here(folder: &Path) -> PathBuf {
    if folder.file_name().is_none() {
        return folder.join("..");
    }
    match folder.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Loads every task of the suite in `dir` (or the one task `dir` names, [`task_folder_of`]);
/// any problem anywhere fails the whole load, and the error lists all of them.
pub fn load_suite(dir: &Path) -> Result<Suite, SuiteErrors> {
    let (defaults, tasks, problems) = load(dir);
    if problems.is_empty() {
        Ok(Suite {
            dir: dir.to_path_buf(),
            defaults,
            tasks,
        })
    } else {
        Err(SuiteErrors { problems })
    }
}

/// Loads what can be loaded: the valid tasks, and every problem (a broken task is left out; a
/// broken `defaults.yaml` is reported and ignored; of tasks sharing an id, the one in the folder
/// named after it is kept, else the first folder's).
pub fn load_suite_lenient(dir: &Path) -> (Vec<Task>, Vec<TaskProblem>) {
    let (_, tasks, problems) = load(dir);
    (tasks, problems)
}

fn load(dir: &Path) -> (SuiteDefaults, Vec<Task>, Vec<TaskProblem>) {
    let mut problems = Vec::new();
    if let Some(folder) = task_folder_of(dir) {
        let defaults = load_suite_defaults(&parent_or_here(&folder), &mut problems);
        let task = load_task(&folder, &defaults, &mut problems);
        return (defaults, task.into_iter().collect(), problems);
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) => {
            problems.push(TaskProblem::new(
                dir,
                None,
                format!("failed to read the tasks folder: {err}"),
            ));
            return (SuiteDefaults::default(), Vec::new(), problems);
        }
    };
    let defaults = load_suite_defaults(dir, &mut problems);
    let mut folders: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            !name.starts_with('.') && !name.starts_with('_')
        })
        .map(|e| dir.join(e.file_name()))
        .collect();
    folders.sort();

    let loaded: Vec<(PathBuf, Task)> = folders
        .into_iter()
        .filter_map(|folder| {
            let task = load_task(&folder, &defaults, &mut problems)?;
            Some((folder, task))
        })
        .collect();
    let owners = id_owners(&loaded);
    let mut tasks: Vec<Task> = Vec::new();
    for (folder, task) in loaded {
        let owner = &owners[&task.id];
        if *owner != folder {
            problems.push(TaskProblem::new(
                &folder.join("task.yaml"),
                Some("id".into()),
                format!(
                    "duplicate id '{}': {} has it already; give this task an id of its own",
                    task.id,
                    owner.join("task.yaml").display()
                ),
            ));
            continue;
        }
        tasks.push(task);
    }
    (defaults, tasks, problems)
}

/// For each id, the folder whose task keeps it when several tasks have it: the folder named
/// after the id (a copied folder whose id was not changed is the duplicate, wherever it sorts),
/// else the first folder.
fn id_owners(loaded: &[(PathBuf, Task)]) -> BTreeMap<String, PathBuf> {
    let named = |folder: &Path, id: &str| folder.file_name().is_some_and(|n| n == id);
    let mut owners: BTreeMap<String, PathBuf> = BTreeMap::new();
    for (folder, task) in loaded {
        match owners.get(&task.id) {
            Some(owner) if named(owner, &task.id) || !named(folder, &task.id) => {}
            _ => {
                owners.insert(task.id.clone(), folder.clone());
            }
        }
    }
    owners
}

/// The `defaults.yaml` of the suite in `dir`, if it has one (a broken one is reported and
/// ignored).
fn load_suite_defaults(dir: &Path, problems: &mut Vec<TaskProblem>) -> SuiteDefaults {
    let path = dir.join(DEFAULTS_FILE);
    if path.exists() {
        load_defaults(&path, problems).unwrap_or_default()
    } else {
        SuiteDefaults::default()
    }
}

fn load_defaults(path: &Path, problems: &mut Vec<TaskProblem>) -> Option<SuiteDefaults> {
    let value = read_yaml(path, problems)?;
    let before = problems.len();
    schema_problems(
        defaults_validator(),
        &schema_value()["$defs"]["defaults"]["properties"],
        &value,
        path,
        problems,
    );
    if problems.len() > before {
        return None;
    }
    match serde_json::from_value::<SuiteDefaults>(value) {
        Ok(defaults) => {
            let before = problems.len();
            for (i, rule) in defaults.normalize.iter().enumerate() {
                check_regex(rule, &format!("normalize[{i}].pattern"), path, problems);
            }
            (problems.len() == before).then_some(defaults)
        }
        Err(err) => {
            problems.push(TaskProblem::new(path, None, err.to_string()));
            None
        }
    }
}

/// Loads and validates one task folder, pushing every problem found.
pub fn load_task(
    folder: &Path,
    defaults: &SuiteDefaults,
    problems: &mut Vec<TaskProblem>,
) -> Option<Task> {
    let file = folder.join("task.yaml");
    let before = problems.len();
    let repo = folder.join("repo");
    if !repo.is_dir() {
        problems.push(TaskProblem::new(
            folder,
            None,
            "missing repo/ folder (the fixture repository)",
        ));
    }
    if !file.is_file() {
        problems.push(TaskProblem::new(&file, None, "missing task.yaml"));
        return None;
    }
    let value = read_yaml(&file, problems)?;
    let schema_before = problems.len();
    schema_problems(
        task_validator(),
        &schema_value()["properties"],
        &value,
        &file,
        problems,
    );
    prompt_problems(&value, &file, problems);
    if problems.len() > schema_before {
        return None;
    }
    let raw: TaskFile = match serde_json::from_value(value) {
        Ok(raw) => raw,
        Err(err) => {
            problems.push(TaskProblem::new(&file, None, err.to_string()));
            return None;
        }
    };
    let task = validate(raw, folder, &file, defaults, problems);
    if problems.len() > before {
        return None;
    }
    task
}

/// Exactly one of `prompt` and `prompts`: said with the schema's problems, so a file with both
/// (or neither) and another problem hears of all of them at once.
fn prompt_problems(value: &Value, file: &Path, problems: &mut Vec<TaskProblem>) {
    let Some(fields) = value.as_object() else {
        return;
    };
    match (
        fields.contains_key("prompt"),
        fields.contains_key("prompts"),
    ) {
        (true, true) => problems.push(TaskProblem::new(
            file,
            Some("prompts".to_owned()),
            "give `prompt` or `prompts`, not both (`prompts` is a list of user messages sent one \
             after the other)",
        )),
        (false, false) => problems.push(TaskProblem::new(
            file,
            Some("prompt".to_owned()),
            "missing: give `prompt`, or `prompts` (a list of user messages sent one after the \
             other)",
        )),
        _ => {}
    }
}

fn read_yaml(path: &Path, problems: &mut Vec<TaskProblem>) -> Option<Value> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) => {
            problems.push(TaskProblem::new(
                path,
                None,
                format!("failed to read: {err}"),
            ));
            return None;
        }
    };
    match crate::yaml::from_str::<Value>(&text) {
        Ok(Value::Null) => {
            problems.push(TaskProblem::new(path, None, "the file is empty"));
            None
        }
        Ok(value) => Some(value),
        Err(err) => {
            problems.push(TaskProblem::new(path, None, format!("invalid YAML: {err}")));
            None
        }
    }
}

fn validate(
    raw: TaskFile,
    folder: &Path,
    file: &Path,
    defaults: &SuiteDefaults,
    problems: &mut Vec<TaskProblem>,
) -> Option<Task> {
    let field = |f: &str| Some(f.to_owned());
    let mut checks: Vec<Check> = Vec::new();
    let mut named: BTreeMap<String, usize> = BTreeMap::new();
    for (i, check) in raw.checks.iter().enumerate() {
        if let Some(check) = validate_check(check, i, folder, file, defaults, problems) {
            // The reports and a replay's outcome changes tell checks apart by name.
            if let Some(first) = named.insert(check.name.clone(), i) {
                problems.push(TaskProblem::new(
                    file,
                    Some(format!("checks[{i}].name")),
                    format!(
                        "'{}' names checks[{first}] too: give each check a name of its own (the \
                         reports tell checks apart by name)",
                        check.name
                    ),
                ));
            }
            checks.push(check);
        }
    }
    let mut normalize = defaults.normalize.clone();
    for (i, rule) in raw.normalize.iter().enumerate() {
        check_regex(rule, &format!("normalize[{i}].pattern"), file, problems);
        normalize.push(rule.clone());
    }
    // `prompt_problems` made sure there is exactly one of the two.
    let listed = raw.prompts.is_some();
    let prompts = raw
        .prompts
        .or(raw.prompt.map(|p| vec![p]))
        .unwrap_or_default();
    for (i, prompt) in prompts.iter().enumerate() {
        if prompt.trim().is_empty() {
            let name = if listed {
                format!("prompts[{i}]")
            } else {
                "prompt".to_owned()
            };
            problems.push(TaskProblem::new(file, field(&name), "the prompt is blank"));
        }
    }
    let attempts = raw.attempts.unwrap_or(1);
    if attempts > MAX_ATTEMPTS {
        problems.push(TaskProblem::new(
            file,
            field("attempts"),
            format!("{attempts} is more than a task may give ({MAX_ATTEMPTS})"),
        ));
    }
    let tools = match raw.tools.as_ref().or(defaults.tools.as_ref()) {
        None => ToolSetSpec::Coding,
        Some(tools) => tools_spec(tools),
    };
    let limits = raw
        .limits
        .unwrap_or_default()
        .or(defaults.limits.unwrap_or_default())
        .or(LimitsFile::BUILT_IN);
    for name in raw.env.keys() {
        if !crate::sandbox::env::is_valid_name(name) {
            problems.push(TaskProblem::new(
                file,
                Some(format!("env.{name}")),
                "not a valid variable name (letters, digits and `_`, not starting with a digit)",
            ));
        } else if crate::sandbox::env::RESERVED.contains(&name.as_str()) {
            problems.push(TaskProblem::new(
                file,
                Some(format!("env.{name}")),
                "set by the harness for every run; a task cannot declare it",
            ));
        }
    }
    for link in crate::sandbox::confine::escaping_links(&folder.join("repo")) {
        problems.push(TaskProblem::new(
            &folder.join("repo").join(&link.link),
            None,
            format!(
                "this symlink points outside the fixture (-> {}); a workspace copy would reach \
                 the original files (make it relative, inside repo/, or copy the file in)",
                link.target.display()
            ),
        ));
    }
    let solution = solution::load(folder, &tools.names(), problems);
    let mut tags = defaults.tags.clone();
    for tag in raw.tags {
        if !tags.contains(&tag) {
            tags.push(tag);
        }
    }
    Some(Task {
        id: raw.id,
        dir: folder.to_path_buf(),
        repo: folder.join("repo"),
        prompts,
        attempts,
        system_prompt: raw.system_prompt.or_else(|| defaults.system_prompt.clone()),
        tools,
        checks,
        limits: Limits {
            max_turns: limits.turns,
            max_wall: limits.wall_seconds.map(Duration::from_secs),
            max_tokens: limits.tokens,
        },
        tags,
        normalize,
        normalize_defaults: raw
            .normalize_defaults
            .or(defaults.normalize_defaults)
            .unwrap_or(true),
        env: raw.env.into_iter().collect(),
        solution,
        requires: raw.requires.unwrap_or_default(),
    })
}

fn tools_spec(tools: &ToolsField) -> ToolSetSpec {
    match tools {
        ToolsField::Set(name) if name == "readonly" => ToolSetSpec::ReadOnly,
        ToolsField::Set(_) => ToolSetSpec::Coding,
        ToolsField::List(names) => ToolSetSpec::Names(names.clone()),
    }
}

fn check_regex(rule: &NormalizeSpec, field: &str, file: &Path, problems: &mut Vec<TaskProblem>) {
    if let Err(err) = regex::Regex::new(&rule.pattern) {
        let first = err.to_string();
        let first = first.lines().last().unwrap_or_default().trim().to_owned();
        problems.push(TaskProblem::new(
            file,
            Some(field.to_owned()),
            format!("invalid regex: {first}"),
        ));
    }
}

fn validate_check(
    raw: &CheckFile,
    i: usize,
    folder: &Path,
    file: &Path,
    defaults: &SuiteDefaults,
    problems: &mut Vec<TaskProblem>,
) -> Option<Check> {
    let at = |f: &str| {
        Some(if f.is_empty() {
            format!("checks[{i}]")
        } else {
            format!("checks[{i}].{f}")
        })
    };
    let before = problems.len();
    match (&raw.run, &raw.file) {
        (Some(_), Some(_)) => {
            problems.push(TaskProblem::new(
                file,
                at(""),
                "a check has either `run` or `file`, not both",
            ));
            None
        }
        (None, None) => {
            problems.push(TaskProblem::new(
                file,
                at(""),
                "a check needs `run` (a command) or `file` (a file assertion)",
            ));
            None
        }
        (Some(run), None) => {
            for (present, name) in [
                (raw.exists.is_some(), "exists"),
                (raw.contains.is_some(), "contains"),
                (raw.not_contains.is_some(), "not_contains"),
                (raw.equals_file.is_some(), "equals_file"),
            ] {
                if present {
                    problems.push(TaskProblem::new(
                        file,
                        at(name),
                        "only file checks take this field",
                    ));
                }
            }
            if problems.len() > before {
                return None;
            }
            let timeout = raw
                .timeout_seconds
                .or(defaults.checks_timeout_seconds)
                .map(Duration::from_secs)
                .unwrap_or(DEFAULT_CHECK_TIMEOUT);
            let expect_exit = raw.expect_exit.unwrap_or(0);
            if !(0..=255).contains(&expect_exit) {
                problems.push(TaskProblem::new(
                    file,
                    at("expect_exit"),
                    format!(
                        "{expect_exit} is no exit status (0 to 255): the check could never pass"
                    ),
                ));
                return None;
            }
            let name = raw.name.clone().unwrap_or_else(|| {
                let first = run.lines().next().unwrap_or_default().trim();
                let short: String = first.chars().take(60).collect();
                if short.len() < run.trim().len() {
                    format!("{short}…")
                } else {
                    short
                }
            });
            Some(Check {
                name,
                kind: CheckKind::Command {
                    run: run.clone(),
                    expect_exit,
                    timeout,
                },
            })
        }
        (None, Some(path)) => {
            for (present, name) in [
                (raw.expect_exit.is_some(), "expect_exit"),
                (raw.timeout_seconds.is_some(), "timeout_seconds"),
            ] {
                if present {
                    problems.push(TaskProblem::new(
                        file,
                        at(name),
                        "only command checks take this field",
                    ));
                }
            }
            if let Err(why) = relative_inside(path) {
                problems.push(TaskProblem::new(file, at("file"), why));
            }
            let mut asserts = Vec::new();
            if let Some(exists) = raw.exists {
                asserts.push(FileAssert::Exists(exists));
            }
            if let Some(text) = &raw.contains {
                asserts.push(FileAssert::Contains(text.clone()));
            }
            if let Some(text) = &raw.not_contains {
                asserts.push(FileAssert::NotContains(text.clone()));
            }
            if let Some(expected) = &raw.equals_file {
                match relative_inside(expected) {
                    Err(why) => problems.push(TaskProblem::new(file, at("equals_file"), why)),
                    Ok(()) if !folder.join(expected).is_file() => problems.push(TaskProblem::new(
                        file,
                        at("equals_file"),
                        format!(
                            "no file '{expected}' in the task folder {}",
                            folder.display()
                        ),
                    )),
                    Ok(()) => {}
                }
                asserts.push(FileAssert::EqualsFile(folder.join(expected)));
            }
            if asserts.len() != 1 {
                problems.push(TaskProblem::new(
                    file,
                    at(""),
                    "a file check needs exactly one of `exists`, `contains`, `not_contains`, `equals_file`",
                ));
            }
            if problems.len() > before {
                return None;
            }
            let assert = asserts.pop()?;
            let name = raw.name.clone().unwrap_or_else(|| match &assert {
                FileAssert::Exists(true) => format!("{path} exists"),
                FileAssert::Exists(false) => format!("{path} does not exist"),
                FileAssert::Contains(_) => format!("{path} contains the text"),
                FileAssert::NotContains(_) => format!("{path} lacks the text"),
                FileAssert::EqualsFile(_) => {
                    format!("{path} equals {}", raw.equals_file.as_deref().unwrap_or(""))
                }
            });
            Some(Check {
                name,
                kind: CheckKind::File {
                    path: path.clone(),
                    assert,
                },
            })
        }
    }
}

/// A path must be relative and stay inside its folder.
fn relative_inside(path: &str) -> Result<(), String> {
    let p = Path::new(path);
    if p.is_absolute() {
        return Err(format!("'{path}' must be a relative path"));
    }
    if p.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(format!("'{path}' must not leave its folder (`..`)"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// JSON Schema validation.
// ---------------------------------------------------------------------------------------------

fn schema_value() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA
        .get_or_init(|| serde_json::from_str(TASK_SCHEMA).expect("task.schema.json is valid JSON"))
}

fn task_validator() -> &'static Validator {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        Validator::new(schema_value().clone()).expect("task.schema.json is a valid schema")
    })
}

fn defaults_validator() -> &'static Validator {
    static VALIDATOR: OnceLock<Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let mut schema = schema_value().clone();
        let obj = schema.as_object_mut().expect("the schema is an object");
        for key in [
            "type",
            "additionalProperties",
            "required",
            "properties",
            "title",
            "description",
        ] {
            obj.remove(key);
        }
        obj.insert("$ref".into(), Value::String("#/$defs/defaults".into()));
        Validator::new(schema).expect("the defaults schema is valid")
    })
}

/// Turns every schema error into a problem naming the field in `checks[0].expect_exit` form.
fn schema_problems(
    validator: &Validator,
    root: &Value,
    value: &Value,
    file: &Path,
    problems: &mut Vec<TaskProblem>,
) {
    let mut found: Vec<TaskProblem> = validator
        .errors(value)
        .into_iter()
        .map(|err| {
            let field = field_name(&err.path);
            let message = schema_message(&err, root, &field);
            TaskProblem::new(file, (!field.is_empty()).then_some(field), message)
        })
        .collect();
    found.sort_by(|a, b| (&a.field, &a.message).cmp(&(&b.field, &b.message)));
    found.dedup();
    problems.extend(found);
}

fn field_name(path: &[Segment]) -> String {
    let mut out = String::new();
    for segment in path {
        match segment {
            Segment::Property(name) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(name);
            }
            Segment::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// The schema object describing the value at `field` (top level, a check, limits, ...), for
/// naming the expected fields of an object.
fn expected_fields(root: &Value, field: &str) -> Vec<String> {
    let schema = schema_value();
    let defs = &schema["$defs"];
    let last = field.rsplit('.').next().unwrap_or_default();
    let node = if field.is_empty() {
        root
    } else if last.starts_with("checks[") {
        &defs["check"]["properties"]
    } else if last == "limits" {
        &defs["limits"]["properties"]
    } else if last.starts_with("normalize[") {
        &defs["normalize"]["items"]["properties"]
    } else {
        return Vec::new();
    };
    node.as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default()
}

fn schema_message(err: &SchemaError<'_>, root: &Value, field: &str) -> String {
    use schema::SchemaErrorKind as K;
    match &err.kind {
        K::AdditionalProperties { unexpected } => {
            let expected = expected_fields(root, field);
            let names = unexpected
                .iter()
                .map(|u| format!("'{u}'"))
                .collect::<Vec<_>>()
                .join(", ");
            let word = if unexpected.len() == 1 {
                "field"
            } else {
                "fields"
            };
            if expected.is_empty() {
                format!("unknown {word} {names}")
            } else {
                format!(
                    "unknown {word} {names}, expected one of {}",
                    expected.join(", ")
                )
            }
        }
        K::Required { property } => format!("missing field '{property}'"),
        K::MinItems { .. } if field == "checks" => "at least one check is required".to_owned(),
        K::Type { expected } => format!("expected {expected}, got {}", short_json(&err.instance)),
        K::OneOfNotValid | K::OneOfMultipleValid if field.ends_with("tools") => {
            format!(
                "expected `coding`, `readonly` or a list of tool names ({}), got {}",
                TOOL_NAMES.join(", "),
                short_json(&err.instance)
            )
        }
        K::Enum { options } => format!(
            "expected one of {options}, got {}",
            short_json(&err.instance)
        ),
        K::Pattern { pattern } if field == "id" => format!(
            "{} is not a valid id: use at most 100 lowercase letters, digits, '-' and '_' (pattern \
             {pattern})",
            short_json(&err.instance)
        ),
        _ => err.to_string(),
    }
}

fn short_json(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}

// ---------------------------------------------------------------------------------------------
// Filters.
// ---------------------------------------------------------------------------------------------

/// A bad `--task` glob.
#[derive(Debug, thiserror::Error)]
#[error("invalid task pattern '{pattern}': {source}")]
pub struct FilterError {
    pub pattern: String,
    #[source]
    pub source: globset::Error,
}

/// The tasks whose id matches any of `globs` (all when empty) and that carry any of `tags` (all
/// when empty), in their order.
pub fn filter(
    tasks: Vec<Task>,
    globs: &[String],
    tags: &[String],
) -> Result<Vec<Task>, FilterError> {
    let mut builder = globset::GlobSetBuilder::new();
    for pattern in globs {
        let glob = globset::Glob::new(pattern).map_err(|source| FilterError {
            pattern: pattern.clone(),
            source,
        })?;
        builder.add(glob);
    }
    let set = builder.build().map_err(|source| FilterError {
        pattern: globs.join(","),
        source,
    })?;
    Ok(tasks
        .into_iter()
        .filter(|t| globs.is_empty() || set.is_match(&t.id))
        .filter(|t| tags.is_empty() || t.tags.iter().any(|tag| tags.contains(tag)))
        .collect())
}

#[cfg(test)]
mod tests;
