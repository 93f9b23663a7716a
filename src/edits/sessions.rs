//! Edit corpora from real sessions: every edit call of a Pi session or a Claude Code transcript
//! as an [`EditRecord`] of the same corpus a run writes, with the outcome the agent recorded.
//!
//! A corpus needs the file as it was before each call. It is rebuilt by replaying the session
//! in order on a per-file state:
//!
//! - a file starts as the repository has it (`git show COMMIT:PATH`, for a path under the
//!   session's working directory; none without `--repo`), or absent;
//! - a whole read (no offset or limit, not truncated) sets it to what the read returned;
//! - a successful write sets it to the content written; a successful edit to the file the
//!   edit left; Claude Code's `Edit` results also hold the file before the edit
//!   (`originalFile`), which is taken over the replayed state.
//!
//! Nothing else the agent or the user did is seen (a shell command, a manual edit between
//! turns), so every call is checked against its recorded outcome before it is kept: an edit
//! the agent applied must apply on the rebuilt file (exactly, or by Pi's own fuzzy matching for
//! a Pi session) and, where Pi kept its diff, change the lines the diff says; an edit the agent
//! refused must be refused by `exact`. A call that fails the check is counted and left out,
//! and its file becomes unknown until the next whole read or write.
//!
//! The arguments are kept as the model sent them for Pi (the edit tool reads every version's
//! form); Claude Code's `{file_path, old_string, new_string}` become `{path, edits: [{oldText,
//! newText}]}`, and a `MultiEdit`'s edits the same list. Claude Code applies a `MultiEdit`'s
//! edits one after another, each on the result of the one before; ours are all located in the
//! original file, so a `MultiEdit` is kept only when both give the same file. `replace_all`
//! has no counterpart in our arguments (every `oldText` must be unique): a call whose
//! `old_string` occurs once is an ordinary edit and is kept; one that replaced several
//! occurrences is counted under `replace_all` and left out (its result still updates the file).
//!
//! Gold answers come from [`super::gold`] as for a run: an edit applied exactly is its own
//! gold, a failed edit followed by a successful edit of the same file from the same content is
//! recovered with that gold.

use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};

use serde_json::{Value, json};

use super::corpus::{EditRecord, RecordedEditOutcome, blob_id};
use super::reapply::{Replayer, Written};
use crate::sessions::ToolStep;
use crate::tools::edit::{ExactStrategy, PiStrategy};
use crate::tools::{EditFailure, EditReport};

/// The `strategy` of a recorded outcome from a Pi session.
pub const PI_SESSION: &str = "pi-session";
/// The `strategy` of a recorded outcome from a Claude Code transcript.
pub const CLAUDE_CODE: &str = "claude-code";

/// A commit of a git repository: where files start.
#[derive(Debug, Clone)]
pub struct GitTree {
    repo: PathBuf,
    commit: String,
}

/// A repository or commit that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum GitTreeError {
    #[error("failed to run git in `{repo}`: {source}")]
    Spawn {
        repo: PathBuf,
        source: std::io::Error,
    },
    #[error("the repository `{repo}` has no commit `{commit}`{detail}")]
    NoCommit {
        repo: PathBuf,
        commit: String,
        detail: String,
    },
}

impl GitTree {
    /// `commit` of the repository at `repo` (a work tree or a bare git directory); an error if
    /// git cannot find it there.
    pub fn open(repo: &Path, commit: &str) -> Result<Self, GitTreeError> {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(["rev-parse", "--verify", "--quiet"])
            .arg(format!("{commit}^{{commit}}"))
            .output()
            .map_err(|source| GitTreeError::Spawn {
                repo: repo.to_path_buf(),
                source,
            })?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
            return Err(GitTreeError::NoCommit {
                repo: repo.to_path_buf(),
                commit: commit.to_owned(),
                detail: if stderr.is_empty() {
                    String::new()
                } else {
                    format!(" ({stderr})")
                },
            });
        }
        Ok(GitTree {
            repo: repo.to_path_buf(),
            commit: String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        })
    }

    /// The last commit of `HEAD` made at or before `timestamp` (ISO 8601), if any.
    pub fn commit_before(repo: &Path, timestamp: &str) -> Option<String> {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(repo)
            .args(["rev-list", "-1"])
            .arg(format!("--before={timestamp}"))
            .arg("HEAD")
            .output()
            .ok()?;
        let sha = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        (out.status.success() && !sha.is_empty()).then_some(sha)
    }

    /// The full id of the commit.
    pub fn commit(&self) -> &str {
        &self.commit
    }

    /// The text of `path` at the commit; `None` if it has no such file (or it is not UTF-8).
    fn show(&self, path: &str) -> Option<String> {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&self.repo)
            .args(["cat-file", "blob"])
            .arg(format!("{}:{path}", self.commit))
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        String::from_utf8(out.stdout).ok()
    }
}

/// Why calls were left out, and how many were kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtractCounts {
    /// Sessions read.
    pub sessions: usize,
    /// Edit calls with a result (`edit`; `Edit` and `MultiEdit`).
    pub edit_calls: usize,
    /// Kept: applied by the agent.
    pub applied: usize,
    /// Kept: refused by the agent.
    pub refused: usize,
    /// Of the applied, those `exact` applies too (their own gold).
    pub applied_exactly: usize,
    /// Left out: the file before the call was not known (outside the repository, unknown after
    /// a call that could not be reproduced, no `--repo`).
    pub unknown_file: usize,
    /// Left out: the agent applied it, but it does not apply on the rebuilt file, or changes
    /// other lines than the agent's diff says (the file was changed outside the session's
    /// tools).
    pub not_reproduced: usize,
    /// Left out: the agent refused it, but `exact` applies it on the rebuilt file (refused for
    /// another reason: the user said no, the file was not read first, or the file was stale).
    pub refused_otherwise: usize,
    /// Left out: `replace_all` over several occurrences.
    pub replace_all: usize,
    /// Left out: Claude Code's `userModified` (the user changed the edit before accepting it).
    pub user_modified: usize,
    /// Left out: a `MultiEdit` whose sequential result differs from ours.
    pub sequential: usize,
    /// Whole reads (and Claude Code's `originalFile`) that found a file other than the
    /// replay had it.
    pub read_corrections: usize,
}

/// What a file is known to hold.
#[derive(Debug, Clone)]
enum FileState {
    Known(String),
    Absent,
    Unknown,
}

/// The corpus being built.
#[derive(Default)]
pub struct SessionCorpus {
    pub records: Vec<EditRecord>,
    /// Blob id to content.
    pub blobs: BTreeMap<String, String>,
    pub counts: ExtractCounts,
    /// Every call left out: the session file, the call's line, and why.
    pub left_out: Vec<crate::sessions::SessionProblem>,
    replayer: Replayer,
}

/// One session's replay: where it ran, its file states, and the record fields it shares.
struct Replay<'a> {
    cwd: String,
    tree: Option<&'a GitTree>,
    files: HashMap<String, FileState>,
    task: String,
    run: String,
    source: &'static str,
    file: PathBuf,
}

impl Replay<'_> {
    /// The key of a path argument: relative to the working directory when under it.
    fn key(&self, path: &str) -> String {
        let path = path.strip_prefix('@').unwrap_or(path);
        let joined = if Path::new(path).is_absolute() || self.cwd.is_empty() {
            PathBuf::from(path)
        } else {
            Path::new(&self.cwd).join(path)
        };
        let mut parts: Vec<String> = Vec::new();
        let mut absolute = false;
        for c in joined.components() {
            match c {
                Component::RootDir => absolute = true,
                Component::ParentDir => {
                    parts.pop();
                }
                Component::Normal(p) => parts.push(p.to_string_lossy().into_owned()),
                _ => {}
            }
        }
        let full = format!("{}{}", if absolute { "/" } else { "" }, parts.join("/"));
        let cwd = self.cwd.trim_end_matches('/');
        match full.strip_prefix(cwd).and_then(|r| r.strip_prefix('/')) {
            Some(rel) if !cwd.is_empty() => rel.to_owned(),
            _ => full,
        }
    }

    fn state(&mut self, key: &str) -> FileState {
        if let Some(state) = self.files.get(key) {
            return state.clone();
        }
        let state = match self.tree {
            Some(tree) if !key.starts_with('/') => match tree.show(key) {
                Some(text) => FileState::Known(text),
                None => FileState::Absent,
            },
            _ => FileState::Unknown,
        };
        self.files.insert(key.to_owned(), state.clone());
        state
    }

    fn set(&mut self, key: String, state: FileState) {
        self.files.insert(key, state);
    }
}

/// A call's recorded outcome, to be checked against the rebuilt file.
struct Recorded<'a> {
    step: &'a ToolStep,
    path: String,
    arguments: Value,
    /// Pi's diff of the edit, if it kept one.
    diff: Option<&'a str>,
    /// Whether an applied edit that `exact` does not reproduce may be reproduced by Pi's
    /// fuzzy matching (Pi sessions; Claude Code matches exactly).
    fuzzy: bool,
}

/// True if Pi's diff (`+NN text` added, `-NN text` removed, with old and new line numbers)
/// agrees with `before` and `after`.
fn diff_agrees(diff: &str, before: &str, after: &str) -> bool {
    let lf = |t: &str| t.replace("\r\n", "\n");
    let (before, after) = (lf(before), lf(after));
    let old: Vec<&str> = before.split('\n').collect();
    let new: Vec<&str> = after.split('\n').collect();
    for line in diff.split('\n') {
        let mut chars = line.chars();
        let sign = chars.next();
        let side = match sign {
            Some('+') => &new,
            Some('-') => &old,
            _ => continue,
        };
        let rest = chars.as_str().trim_start_matches(' ');
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let Ok(number) = rest[..digits].parse::<usize>() else {
            continue;
        };
        let text = rest[digits..].strip_prefix(' ').unwrap_or(&rest[digits..]);
        if number == 0 || side.get(number - 1) != Some(&text) {
            return false;
        }
    }
    true
}

impl SessionCorpus {
    fn leave_out(&mut self, replay: &Replay<'_>, step: &ToolStep, why: &str) {
        self.left_out.push(crate::sessions::SessionProblem {
            file: replay.file.clone(),
            line: step.line,
            message: format!("the `{}` call `{}` is left out: {why}", step.name, step.id),
        });
    }

    fn blob(&mut self, text: &str) -> String {
        let id = blob_id(text);
        self.blobs
            .entry(id.clone())
            .or_insert_with(|| text.to_owned());
        id
    }

    fn push(
        &mut self,
        replay: &Replay<'_>,
        recorded: &Recorded<'_>,
        before: Option<&str>,
        report: EditReport,
        after: Option<&str>,
    ) {
        let before = before.map(|t| self.blob(t));
        let after = after.map(|t| self.blob(t));
        let is_error = recorded.step.is_error;
        if is_error {
            self.counts.refused += 1;
        } else {
            self.counts.applied += 1;
        }
        self.records.push(EditRecord {
            task: replay.task.clone(),
            run: replay.run.clone(),
            turn: recorded.step.turn,
            call_id: recorded.step.id.clone(),
            path: recorded.path.clone(),
            before,
            arguments: recorded.arguments.clone(),
            outcome: Some(RecordedEditOutcome {
                strategy: replay.source.to_owned(),
                is_error,
                message: recorded.step.text.clone(),
                report: Some(report),
                after,
            }),
            kind: None,
            gold: None,
        });
    }

    /// Checks one edit call against the rebuilt file `before` and keeps it if it holds;
    /// returns the file's state after the call.
    fn edit(
        &mut self,
        replay: &Replay<'_>,
        recorded: &Recorded<'_>,
        before: FileState,
    ) -> FileState {
        let text = match &before {
            FileState::Known(text) => text.as_str(),
            FileState::Absent if recorded.step.is_error => {
                self.push(
                    replay,
                    recorded,
                    None,
                    EditReport::new("exact", Vec::new(), Some(EditFailure::File)),
                    None,
                );
                return before;
            }
            FileState::Absent | FileState::Unknown => {
                self.counts.unknown_file += 1;
                self.leave_out(
                    replay,
                    recorded.step,
                    &format!("the file before it (`{}`) is not known", recorded.path),
                );
                return FileState::Unknown;
            }
        };
        let exact = self
            .replayer
            .write(&recorded.arguments, text, &ExactStrategy);
        if recorded.step.is_error {
            return match exact {
                None => {
                    self.push(
                        replay,
                        recorded,
                        Some(text),
                        EditReport::new("exact", Vec::new(), Some(EditFailure::InvalidArguments)),
                        None,
                    );
                    before
                }
                Some(Written::Refused {
                    failure, located, ..
                }) => {
                    self.push(
                        replay,
                        recorded,
                        Some(text),
                        EditReport::new("exact", located, Some(failure)),
                        None,
                    );
                    before
                }
                Some(Written::Applied { .. }) => {
                    self.counts.refused_otherwise += 1;
                    self.leave_out(
                        replay,
                        recorded.step,
                        "the agent refused it but `exact` applies it on the rebuilt file",
                    );
                    FileState::Unknown
                }
            };
        }
        let applied = match exact {
            Some(Written::Applied {
                text: after,
                located,
            }) => Some(("exact", after, located)),
            _ if recorded.fuzzy => {
                match self.replayer.write(&recorded.arguments, text, &PiStrategy) {
                    Some(Written::Applied {
                        text: after,
                        located,
                    }) => Some(("pi", after, located)),
                    _ => None,
                }
            }
            _ => None,
        };
        let Some((strategy, after, located)) = applied else {
            self.counts.not_reproduced += 1;
            self.leave_out(
                replay,
                recorded.step,
                "the agent applied it but it does not apply on the rebuilt file",
            );
            return FileState::Unknown;
        };
        if recorded.diff.is_some_and(|d| !diff_agrees(d, text, &after)) {
            self.counts.not_reproduced += 1;
            self.leave_out(
                replay,
                recorded.step,
                "on the rebuilt file it changes other lines than the agent's diff says",
            );
            return FileState::Unknown;
        }
        if strategy == "exact" {
            self.counts.applied_exactly += 1;
        }
        self.push(
            replay,
            recorded,
            Some(text),
            EditReport::new(strategy, located, None),
            Some(&after),
        );
        FileState::Known(after)
    }

    /// Adds the edit calls of a Pi session (its tool steps, from
    /// [`crate::sessions::pi::PiSession::tool_steps`]).
    pub fn add_pi(
        &mut self,
        session: &crate::sessions::pi::PiSession,
        steps: &[ToolStep],
        tree: Option<&GitTree>,
    ) -> BTreeMap<String, String> {
        self.add_run(
            Replay {
                cwd: session.header.cwd.clone(),
                tree,
                files: HashMap::new(),
                task: stem(&session.file),
                run: session.header.id.clone(),
                source: PI_SESSION,
                file: session.file.clone(),
            },
            steps,
        )
    }

    /// Adds the edit calls of a run in Pi's tools recorded in another format (an ATIF
    /// trajectory) whose folder was `cwd`; returns the files its edits and writes left, as
    /// [`SessionCorpus::add_pi`] does.
    pub fn add_steps(
        &mut self,
        cwd: &str,
        file: &Path,
        steps: &[ToolStep],
        tree: Option<&GitTree>,
    ) -> BTreeMap<String, String> {
        self.add_run(
            Replay {
                cwd: cwd.to_owned(),
                tree,
                files: HashMap::new(),
                task: stem(file),
                run: stem(file),
                source: PI_SESSION,
                file: file.to_path_buf(),
            },
            steps,
        )
    }

    /// The edit calls of one run in Pi's tools; returns the files (relative to the run's
    /// folder) its edits and writes changed, with what they hold after the run, where known.
    fn add_run(&mut self, mut replay: Replay<'_>, steps: &[ToolStep]) -> BTreeMap<String, String> {
        self.counts.sessions += 1;
        // The files the session's edits and writes changed, inside the repository.
        let mut changed: Vec<String> = Vec::new();
        for step in steps {
            let path_arg = step
                .arguments
                .get("path")
                .or_else(|| step.arguments.get("file_path"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let key = replay.key(&path_arg);
            match step.name.as_str() {
                "read" if !step.is_error => {
                    let partial = step.arguments.get("offset").is_some()
                        || step.arguments.get("limit").is_some()
                        || step
                            .details
                            .as_ref()
                            .and_then(|d| d.pointer("/truncation/truncated"))
                            .and_then(Value::as_bool)
                            .unwrap_or(false)
                        || step.text.ends_with("to continue.]");
                    if !partial {
                        self.read(&mut replay, key, step.text.clone());
                    }
                }
                "write" if !step.is_error => {
                    if let Some(content) = step.arguments.get("content").and_then(Value::as_str) {
                        changed.push(key.clone());
                        replay.set(key, FileState::Known(content.to_owned()));
                    }
                }
                "edit" => {
                    self.counts.edit_calls += 1;
                    let before = replay.state(&key);
                    let recorded = Recorded {
                        step,
                        path: path_arg,
                        arguments: step.arguments.clone(),
                        diff: step
                            .details
                            .as_ref()
                            .and_then(|d| d.get("diff"))
                            .and_then(Value::as_str),
                        fuzzy: true,
                    };
                    let after = self.edit(&replay, &recorded, before);
                    if !step.is_error {
                        changed.push(key.clone());
                    }
                    replay.set(key, after);
                }
                _ => {}
            }
        }
        changed
            .into_iter()
            .filter(|key| !key.starts_with('/'))
            .filter_map(|key| match replay.files.get(&key) {
                Some(FileState::Known(text)) => Some((key, text.clone())),
                _ => None,
            })
            .collect()
    }

    fn read(&mut self, replay: &mut Replay<'_>, key: String, text: String) {
        if let FileState::Known(known) = replay.state(&key)
            && known != text
        {
            self.counts.read_corrections += 1;
        }
        replay.set(key, FileState::Known(text));
    }

    /// Adds the edit calls of a Claude Code transcript.
    pub fn add_claude_code(
        &mut self,
        transcript: &crate::sessions::claude_code::Transcript,
        tree: Option<&GitTree>,
    ) {
        self.counts.sessions += 1;
        let mut replay = Replay {
            cwd: transcript.cwd.clone(),
            tree,
            files: HashMap::new(),
            task: stem(&transcript.file),
            run: transcript.session_id.clone(),
            source: CLAUDE_CODE,
            file: transcript.file.clone(),
        };
        for step in &transcript.steps {
            let input = &step.arguments;
            let path_arg = input
                .get("file_path")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let key = replay.key(&path_arg);
            let details = step.details.as_ref().filter(|d| d.is_object());
            match step.name.as_str() {
                "Read" if !step.is_error => {
                    let file = details.and_then(|d| d.get("file"));
                    let number = |k: &str| file.and_then(|f| f.get(k)).and_then(Value::as_u64);
                    let whole = number("startLine").unwrap_or(1) <= 1
                        && number("numLines") == number("totalLines")
                        && input.get("offset").is_none()
                        && input.get("limit").is_none();
                    if let Some(content) = file
                        .and_then(|f| f.get("content"))
                        .and_then(Value::as_str)
                        .filter(|_| whole)
                    {
                        self.read(&mut replay, key, content.to_owned());
                    }
                }
                "Write" if !step.is_error => {
                    if let Some(content) = input.get("content").and_then(Value::as_str) {
                        replay.set(key, FileState::Known(content.to_owned()));
                    }
                }
                "Edit" | "MultiEdit" => {
                    self.counts.edit_calls += 1;
                    let pairs: Vec<(String, String, bool)> = if step.name == "Edit" {
                        vec![claude_pair(input)]
                    } else {
                        input
                            .get("edits")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .map(claude_pair)
                            .collect()
                    };
                    let original = details
                        .and_then(|d| {
                            d.get("originalFile")
                                .or_else(|| d.get("originalFileContents"))
                        })
                        .and_then(Value::as_str)
                        .filter(|_| !step.is_error);
                    let before = match original {
                        Some(text) => {
                            self.read(&mut replay, key.clone(), text.to_owned());
                            FileState::Known(text.to_owned())
                        }
                        None => replay.state(&key),
                    };
                    let after = self.claude_edit(&replay, step, path_arg, &pairs, details, before);
                    replay.set(key, after);
                }
                _ => {}
            }
        }
    }

    fn claude_edit(
        &mut self,
        replay: &Replay<'_>,
        step: &ToolStep,
        path: String,
        pairs: &[(String, String, bool)],
        details: Option<&Value>,
        before: FileState,
    ) -> FileState {
        let sequential = match &before {
            FileState::Known(text) => sequential(text, pairs),
            _ => None,
        };
        if let FileState::Known(text) = &before
            && pairs.iter().any(|(old, _, all)| {
                *all && !old.is_empty() && text.matches(old.as_str()).count() > 1
            })
        {
            self.counts.replace_all += 1;
            self.leave_out(replay, step, "`replace_all` over several occurrences");
            return match (step.is_error, sequential) {
                (false, Some(after)) => FileState::Known(after),
                (false, None) => FileState::Unknown,
                (true, _) => before,
            };
        }
        if !step.is_error
            && details
                .and_then(|d| d.get("userModified"))
                .and_then(Value::as_bool)
                == Some(true)
        {
            self.counts.user_modified += 1;
            self.leave_out(replay, step, "the user changed it before accepting it");
            return FileState::Unknown;
        }
        let arguments = json!({
            "path": path,
            "edits": pairs
                .iter()
                .map(|(old, new, _)| json!({"oldText": old, "newText": new}))
                .collect::<Vec<_>>(),
        });
        if !step.is_error
            && pairs.len() > 1
            && let (FileState::Known(text), Some(expected)) = (&before, &sequential)
            && !matches!(
                self.replayer.write(&arguments, text, &ExactStrategy),
                Some(Written::Applied { text: ours, .. }) if ours == *expected
            )
        {
            self.counts.sequential += 1;
            self.leave_out(replay, step, "its edits build on each other (applied one after another, they give another file than ours)");
            return FileState::Known(expected.clone());
        }
        let recorded = Recorded {
            step,
            path,
            arguments,
            diff: None,
            fuzzy: false,
        };
        self.edit(replay, &recorded, before)
    }
}

/// Claude Code's `{old_string, new_string, replace_all}`.
fn claude_pair(edit: &Value) -> (String, String, bool) {
    let text = |k: &str| {
        edit.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    (
        text("old_string"),
        text("new_string"),
        edit.get("replace_all")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    )
}

/// Claude Code's result of edits applied one after another, each to the result of the one
/// before (the first occurrence, or every one with `replace_all`); `None` if one is not found.
fn sequential(text: &str, pairs: &[(String, String, bool)]) -> Option<String> {
    let mut out = text.to_owned();
    for (old, new, all) in pairs {
        if old.is_empty() || !out.contains(old.as_str()) {
            return None;
        }
        out = if *all {
            out.replace(old.as_str(), new)
        } else {
            out.replacen(old.as_str(), new, 1)
        };
    }
    Some(out)
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Writes the corpus to `dir` (`edits.jsonl` and `edits/blobs`), the blobs first and
/// `edits.jsonl` last by a rename, so that a corpus is never half written.
pub fn write_session_corpus(
    dir: &Path,
    corpus: &SessionCorpus,
) -> Result<(), super::corpus::CorpusError> {
    use super::corpus::{BLOBS_DIR, CORPUS_FILE, CorpusError};
    let write_err = |path: PathBuf| move |source| CorpusError::Write { path, source };
    let blobs = dir.join(BLOBS_DIR);
    std::fs::create_dir_all(&blobs).map_err(write_err(blobs.clone()))?;
    for (id, text) in &corpus.blobs {
        let path = blobs.join(id);
        if !path.exists() {
            std::fs::write(&path, text).map_err(write_err(path.clone()))?;
        }
    }
    let mut text = String::new();
    for r in &corpus.records {
        text.push_str(&serde_json::to_string(r).unwrap_or_default());
        text.push('\n');
    }
    let file = dir.join(CORPUS_FILE);
    let tmp = dir.join(format!(".{CORPUS_FILE}.tmp"));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, &file))
        .map_err(write_err(file))
}

#[cfg(test)]
mod tests;
