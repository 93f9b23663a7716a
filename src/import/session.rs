//! `harness import pi-session` and `harness import atif`: a recorded agent run (a Pi session
//! file, an ATIF trajectory) turned into a regression test, a task (the repository at the
//! session's commit, the user's messages as `prompts:`, the tools it used) and a cassette per
//! wire format holding the model's recorded turns.
//!
//! Each cassette request is what this harness's agent builds from the recorded conversation up
//! to that turn, recorded tool results included, and each response is the recorded reply in the
//! format's own stream. They are made through the same code a live run uses: the provider builds
//! every request and reads every rendered reply back, under the cassette recorder (paths, secret
//! scan, atomic write). A replay under today's tools therefore differs exactly where a tool
//! answers differently from the recording.
//!
//! What the replay cannot reproduce ends the import at that entry, with a note naming the line:
//! a compaction (the agent does not compact), a change of model, a message the user sent while
//! the agent was working, an extension's message, a `!` command or a branch summary in the
//! context, a user message with images, a tool call without its result. A reply the user
//! interrupted (Escape) or that failed is left out of later requests as Pi does: its response is
//! recorded as a stream the client stopped reading, which the replayed agent takes as the
//! interruption, and the next prompt goes on; a failed reply Pi retried at once is left out.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::tree::{OutFile, Tree};
use crate::cassettes::format::{
    CassetteHeader, RecordedCheck, RecordedEdits, RecordedOutcome, ResponseBody, StreamEnd,
};
use crate::cassettes::normalize::PathMap;
use crate::cassettes::{Recorder, WORKSPACE_PLACEHOLDER};
use crate::conversation::{
    AssistantBlock, AssistantMessage, Content, Context, Message, StopReason, ToolResultMessage,
    UserContent,
};
use crate::edits::sessions::{GitTree, SessionCorpus};
use crate::providers::catalog::{Catalog, ModelSelector};
use crate::providers::sse::{SseEvent, encode};
use crate::providers::transport::{
    BodyStream, HttpRequest, HttpResponse, Transport, TransportError,
};
use crate::providers::wire::RenderOptions;
use crate::providers::{ApiKind, RequestOptions};
use crate::record::Outcome;
use crate::sessions::SessionError;
use crate::sessions::pi::{PiEntryKind, PiMessage, PiSession, read_session};
use crate::tools::profile::ToolProfile;
use crate::tools::{ToolSet, ToolSetSpec};

/// The tools a Pi session has unless it says otherwise: Pi's default set.
const PI_DEFAULT_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];

/// What `harness import pi-session` was asked to do.
#[derive(Debug, Clone)]
pub struct SessionImportOptions {
    /// The repository the session worked in (a work tree or a bare git directory).
    pub repo: PathBuf,
    /// The commit the session started from; inferred from its first timestamp when `None`.
    pub commit: Option<String>,
    /// The entry to follow the session's tree to (the last entry of the file when `None`).
    pub leaf: Option<String>,
    /// The tasks folder.
    pub into: PathBuf,
    /// The cassettes folder.
    pub cassettes: PathBuf,
    /// The wire formats to write a cassette in; the session's own when empty.
    pub formats: Vec<ApiKind>,
    /// Checks to run after the replay (`--check CMD`); without any, the task checks that the
    /// files the session's edits and writes left are as it left them.
    pub checks: Vec<String>,
    /// The tool profile the requests are built under; guessed from the session's date when
    /// `None`.
    pub profile: Option<ToolProfile>,
}

/// One session imported.
#[derive(Debug, Clone)]
pub struct ImportedSession {
    pub file: PathBuf,
    pub task: String,
    /// The commit and why it was chosen.
    pub commit: String,
    pub commit_why: String,
    pub prompts: usize,
    pub turns: usize,
    /// Tool calls per tool name, over the turns imported.
    pub calls: BTreeMap<String, usize>,
    /// Where and why the import stopped before the end of the session.
    pub stopped: Option<String>,
    /// Replies left out of later requests: interrupted by the user, failed, or retried.
    pub interrupted: usize,
    pub change: super::tree::TreeChange,
    pub cassettes: Vec<PathBuf>,
    /// The tool profile the cassettes were made under, and why.
    pub profile: ToolProfile,
    pub profile_why: String,
    /// What the user should know (thinking level changes not replayed, ...).
    pub notes: Vec<String>,
    /// Lines of the session file that could not be read, each `file:line: why`.
    pub problems: Vec<String>,
}

/// Why a session could not be imported at all.
#[derive(Debug, thiserror::Error)]
pub enum SessionImportError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("{file}: {message}")]
    Unusable { file: PathBuf, message: String },
}

impl SessionImportError {
    fn unusable(file: &Path, message: impl Into<String>) -> Self {
        SessionImportError::Unusable {
            file: file.to_path_buf(),
            message: message.into(),
        }
    }
}

/// The session as the replay will play it: prompts, replies and tool results, in order.
#[derive(Debug, Clone)]
pub(crate) enum Item {
    Prompt(String),
    Reply {
        message: AssistantMessage,
        interrupted: bool,
    },
    Results(Vec<ToolResultMessage>),
}

/// The playable part of a session.
pub(crate) struct Script {
    pub(crate) items: Vec<Item>,
    /// The model the replies came from: (provider, model, api).
    pub(crate) model: (String, String, String),
    pub(crate) stopped: Option<String>,
    pub(crate) thinking_changes: usize,
    pub(crate) interrupted: usize,
}

/// A recorded run read into what the import needs, whatever its format.
pub(crate) struct Source {
    pub(crate) file: PathBuf,
    /// The task id.
    pub(crate) task: String,
    /// The run's first timestamp (RFC 3339), for the commit.
    pub(crate) started: String,
    /// The folder the run worked in (its paths become the workspace's).
    pub(crate) cwd: String,
    /// What the file is, for the task's header comment (`Pi session file v3, session …`).
    pub(crate) described: String,
    pub(crate) tag: &'static str,
    pub(crate) script: Script,
    /// Every tool call with its result, for the files the run left.
    pub(crate) steps: Vec<crate::sessions::ToolStep>,
    /// Lines or entries that could not be read, each `file:line: why`.
    pub(crate) problems: Vec<String>,
}

/// Where the walk is.
#[derive(Debug, Clone, PartialEq)]
enum Expect {
    /// A user message (the agent has stopped).
    Prompt,
    /// A reply (after a user message or the results of every call).
    Reply,
    /// The results of these calls.
    Results(Vec<String>),
}

/// Reads the path of `session` into what a replay can play, up to the first entry it cannot.
fn script(session: &PiSession) -> Result<Script, SessionImportError> {
    let mut items: Vec<Item> = Vec::new();
    let mut expect = Expect::Prompt;
    let mut model: Option<(String, String, String)> = None;
    let mut model_fixed = false;
    let mut stopped = None;
    let mut thinking_changes = 0;
    // The items, interruptions counted, up to the last point where the agent had stopped.
    let mut clean = (0usize, 0usize);
    let mut interrupted = 0usize;
    let mut pending: Vec<ToolResultMessage> = Vec::new();
    let mut failed_at: Option<usize> = None;
    let stop_at = |line: usize, why: &str| format!("line {line}: {why}");
    for entry in session.path_entries() {
        let line = entry.line;
        // A failed reply followed at once by another reply was retried: leave it out.
        let is_message = matches!(
            entry.kind,
            PiEntryKind::Message(_)
                | PiEntryKind::Compaction { .. }
                | PiEntryKind::BranchSummary { .. }
                | PiEntryKind::CustomMessage { .. }
        );
        if let Some(at) = failed_at.take_if(|_| is_message) {
            let retried = matches!(&entry.kind, PiEntryKind::Message(PiMessage::Assistant(_)));
            if retried {
                items.truncate(at);
                interrupted += 1;
                expect = Expect::Reply;
            } else {
                interrupted += 1;
                clean = (items.len(), interrupted);
            }
        }
        match &entry.kind {
            PiEntryKind::Message(PiMessage::User(content)) => {
                if expect != Expect::Prompt {
                    stopped = Some(stop_at(
                        line,
                        "a message the user sent while the agent was working (the replay sends a prompt only when the agent has stopped)",
                    ));
                    break;
                }
                let Some(text) = plain_text(content) else {
                    stopped = Some(stop_at(
                        line,
                        "a user message with images or several parts (a task prompt is one text)",
                    ));
                    break;
                };
                items.push(Item::Prompt(text));
                expect = Expect::Reply;
            }
            PiEntryKind::Message(PiMessage::Assistant(reply)) => {
                if expect != Expect::Reply {
                    stopped = Some(stop_at(line, "a reply where none was asked for"));
                    break;
                }
                let this = (
                    reply.provider.clone(),
                    reply.model.clone(),
                    reply.api.clone(),
                );
                let failed = matches!(reply.stop_reason, StopReason::Error | StopReason::Aborted);
                // A failed reply is in no later request: it does not fix the cassette's model.
                if failed && !model_fixed {
                    model = Some(this.clone());
                }
                match &model {
                    Some(first) if *first != this && model_fixed => {
                        stopped = Some(stop_at(
                            line,
                            &format!(
                                "the model changes from {}/{} to {}/{} (a cassette holds one model)",
                                first.0, first.1, this.0, this.1
                            ),
                        ));
                        break;
                    }
                    _ => model = Some(this),
                }
                model_fixed |= !failed;
                items.push(Item::Reply {
                    message: reply.clone(),
                    interrupted: failed,
                });
                if failed {
                    failed_at = Some(items.len() - 1);
                    expect = Expect::Prompt;
                    continue;
                }
                let calls: Vec<String> = reply.tool_calls().map(|c| c.id.clone()).collect();
                if calls.is_empty() {
                    expect = Expect::Prompt;
                    clean = (items.len(), interrupted);
                } else {
                    expect = Expect::Results(calls);
                }
            }
            PiEntryKind::Message(PiMessage::ToolResult { result, .. }) => {
                let Expect::Results(waiting) = &mut expect else {
                    stopped = Some(stop_at(line, "a tool result no call on the path asked for"));
                    break;
                };
                let Some(at) = waiting.iter().position(|id| *id == result.tool_call_id) else {
                    stopped = Some(stop_at(
                        line,
                        &format!(
                            "the result of `{}`, which the reply before did not call",
                            result.tool_call_id
                        ),
                    ));
                    break;
                };
                waiting.remove(at);
                pending.push(result.clone());
                if waiting.is_empty() {
                    items.push(Item::Results(std::mem::take(&mut pending)));
                    expect = Expect::Reply;
                }
            }
            PiEntryKind::Message(PiMessage::BashExecution {
                exclude_from_context: true,
                ..
            })
            | PiEntryKind::Custom { .. }
            | PiEntryKind::Label { .. }
            | PiEntryKind::SessionInfo { .. } => {}
            PiEntryKind::ThinkingLevelChange { .. } => thinking_changes += 1,
            PiEntryKind::ModelChange { provider, model_id } => {
                if let Some(first) = model.as_ref().filter(|_| model_fixed)
                    && (first.0 != *provider || first.1 != *model_id)
                {
                    stopped = Some(stop_at(
                        line,
                        &format!(
                            "the model changes from {}/{} to {provider}/{model_id} (a cassette holds one model)",
                            first.0, first.1
                        ),
                    ));
                    break;
                }
            }
            PiEntryKind::Compaction { .. } => {
                stopped = Some(stop_at(
                    line,
                    "a compaction (Pi replaced the context by a summary; the replayed agent does not compact)",
                ));
                break;
            }
            PiEntryKind::Message(PiMessage::BashExecution { .. }) => {
                stopped = Some(stop_at(
                    line,
                    "a command the user ran with `!` (its output is part of the context, not a prompt)",
                ));
                break;
            }
            PiEntryKind::Message(PiMessage::Custom { .. }) | PiEntryKind::CustomMessage { .. } => {
                stopped = Some(stop_at(line, "an extension's message in the context"));
                break;
            }
            PiEntryKind::Message(PiMessage::BranchSummary { .. })
            | PiEntryKind::BranchSummary { .. }
            | PiEntryKind::Message(PiMessage::CompactionSummary { .. }) => {
                stopped = Some(stop_at(line, "a branch summary in the context"));
                break;
            }
            PiEntryKind::Unreadable => {
                stopped = Some(stop_at(line, "an entry that could not be read"));
                break;
            }
        }
    }
    if failed_at.is_some() {
        interrupted += 1;
        clean = (items.len(), interrupted);
    }
    if stopped.is_none() && matches!(expect, Expect::Results(_)) {
        stopped = Some("the end of the file: the last reply's calls have no results".to_owned());
    }
    if stopped.is_some() {
        items.truncate(clean.0);
        interrupted = clean.1;
    }
    let Some(model) = model else {
        return Err(SessionImportError::unusable(
            &session.file,
            "no reply of the model on the session's path: nothing to replay",
        ));
    };
    if !items.iter().any(|i| matches!(i, Item::Reply { .. })) {
        return Err(SessionImportError::unusable(
            &session.file,
            format!(
                "nothing to replay before {}",
                stopped.as_deref().unwrap_or("the end")
            ),
        ));
    }
    Ok(Script {
        items,
        model,
        stopped,
        thinking_changes,
        interrupted,
    })
}

/// The text of a user message made of text only (several text blocks are joined as Pi's
/// prompt box would have them, which is one block; several are refused).
fn plain_text(content: &UserContent) -> Option<String> {
    match content {
        UserContent::Text(text) => Some(text.clone()),
        UserContent::Blocks(blocks) => match blocks.as_slice() {
            [Content::Text { text }] => Some(text.clone()),
            _ => None,
        },
    }
}

/// How the session's folder `cwd` is written in a cassette: the workspace placeholder.
fn workspace_paths(cwd: &str) -> PathMap {
    if cwd.is_empty() {
        PathMap::new()
    } else {
        PathMap::new().with(Path::new(cwd), WORKSPACE_PLACEHOLDER)
    }
}

impl Script {
    /// The script with the session's folder replaced by the workspace placeholder in every
    /// string of every reply (text, thinking, tool call arguments), which a replay restores to
    /// its own workspace. The recorded tool results stay as they are: the recorder maps the
    /// requests.
    fn in_workspace(mut self, paths: &PathMap) -> Script {
        for item in &mut self.items {
            if let Item::Reply { message, .. } = item
                && let Ok(mut value) = serde_json::to_value(&*message)
            {
                crate::cassettes::normalize::map_strings(&mut value, &|s| paths.to_placeholders(s));
                if let Ok(mapped) = serde_json::from_value(value) {
                    *message = mapped;
                }
            }
        }
        self
    }
}

/// A transport that answers each request with the next rendered reply (or an empty stream for
/// an interrupted one): what the provider reads back is what a replay will read.
struct Replies {
    queue: Mutex<VecDeque<Vec<SseEvent>>>,
}

#[async_trait]
impl Transport for Replies {
    async fn send(&self, _request: HttpRequest) -> Result<HttpResponse, TransportError> {
        let events = self
            .queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front()
            .ok_or_else(|| TransportError::Cassette("no reply left to import".to_owned()))?;
        let body = encode(&events);
        Ok(HttpResponse {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: Box::pin(futures::stream::iter([Ok(body)])) as BodyStream,
        })
    }
}

/// The provider entry to record `api` under: the session's own when it speaks that format,
/// else the first built-in provider that does.
fn provider_for(catalog: &Catalog, session_provider: &str, api: ApiKind) -> Option<String> {
    if catalog
        .provider(session_provider)
        .is_ok_and(|e| e.api == api)
    {
        return Some(session_provider.to_owned());
    }
    crate::providers::catalog::builtin_providers()
        .into_iter()
        .find(|e| e.api == api)
        .map(|e| e.name)
}

/// The cassette of `script` in `api`: returns the cassette written (path) or why not.
#[allow(clippy::too_many_arguments)]
async fn record_cassette(
    script: &Script,
    task: &str,
    tools: &ToolSet,
    system_prompt: &str,
    cwd: &str,
    api: ApiKind,
    options: &SessionImportOptions,
    catalog: &Catalog,
    outcome: Option<RecordedOutcome>,
    profile: ToolProfile,
) -> Result<(PathBuf, crate::cassettes::Cassette), String> {
    let provider_name = provider_for(catalog, &script.model.0, api)
        .ok_or_else(|| format!("no provider speaks {}", api.as_str()))?;
    let selector = ModelSelector {
        provider: provider_name.clone(),
        model: script.model.1.clone(),
    };
    let spec = catalog
        .resolve(&selector, None, false, |_| None)
        .map_err(|e| e.to_string())?;
    let wire = api.wire();
    // The session's folder is the replay's workspace in the requests too (what the recorder
    // writes); the replies have it already.
    let paths = workspace_paths(cwd);
    // Every reply rendered in the format, numbered as in its conversation.
    let mut queue = VecDeque::new();
    let (mut turn_no, mut call_no) = (0usize, 0usize);
    for item in &script.items {
        if let Item::Reply {
            message,
            interrupted,
        } = item
        {
            turn_no += 1;
            if *interrupted {
                queue.push_back(Vec::new());
                continue;
            }
            let rendered = wire.render_turn(
                message,
                &RenderOptions {
                    turn_no,
                    first_call_no: call_no + 1,
                    ..Default::default()
                },
            );
            call_no += message.tool_calls().count();
            queue.push_back(rendered);
        }
    }
    let replies: Arc<dyn Transport> = Arc::new(Replies {
        queue: Mutex::new(queue),
    });
    let recorder = Recorder::new(replies, paths.clone(), Vec::new());
    let provider = crate::providers::build(spec.clone(), Arc::new(recorder.clone()));
    let request = RequestOptions::default();
    let mut context = Context {
        system_prompt: Some(system_prompt.to_owned()),
        messages: Vec::new(),
        tools: tools.definitions(),
    };
    // Call ids as the replay will hold them (a format may mint its own).
    let mut ids: HashMap<String, String> = HashMap::new();
    let mut interrupted_turns = Vec::new();
    let mut turn = 0usize;
    for item in &script.items {
        match item {
            Item::Prompt(text) => context.messages.push(Message::User {
                content: UserContent::Text(text.clone()),
            }),
            Item::Results(results) => {
                for r in results {
                    let mut r = r.clone();
                    if let Some(id) = ids.get(&r.tool_call_id) {
                        r.tool_call_id = id.clone();
                    }
                    context.messages.push(Message::ToolResult(r));
                }
            }
            Item::Reply {
                message,
                interrupted,
            } => {
                turn += 1;
                let reply = provider.complete(&context, &request).await;
                if *interrupted {
                    interrupted_turns.push(turn - 1);
                    context
                        .messages
                        .push(Message::Assistant(AssistantMessage::interrupted(
                        spec.api.as_str(),
                        &spec.provider,
                        &spec.model,
                        "the reply was interrupted: the recording stopped reading the reply here"
                            .to_owned(),
                    )));
                    continue;
                }
                let mut reply = reply.map_err(|e| {
                    format!("turn {turn}: the rendered reply does not read back: {e}")
                })?;
                let recorded: Vec<_> = message.tool_calls().collect();
                let read: Vec<_> = reply.tool_calls().collect();
                if recorded.len() != read.len()
                    || recorded
                        .iter()
                        .zip(&read)
                        .any(|(a, b)| a.name != b.name || a.arguments != b.arguments)
                {
                    return Err(format!(
                        "turn {turn}: the reply's tool calls do not survive the {} stream",
                        api.as_str()
                    ));
                }
                for (a, b) in recorded.iter().zip(&read) {
                    ids.insert(a.id.clone(), b.id.clone());
                }
                for block in &mut reply.content {
                    if let AssistantBlock::ToolCall(call) = block {
                        tools.rewrite_history_arguments(&call.name, &mut call.arguments);
                    }
                }
                context.messages.push(Message::Assistant(reply));
            }
        }
    }
    drop(provider);
    let header = CassetteHeader {
        outcome,
        ..CassetteHeader::new(
            task,
            provider_name.clone(),
            spec.model.clone(),
            api,
            profile.name(),
            "pi",
        )
    };
    let mut cassette = recorder.cassette(header);
    for i in interrupted_turns {
        if let Some(interaction) = cassette.interactions.get_mut(i) {
            interaction.response.body = ResponseBody::Sse {
                events: Vec::new(),
                end: StreamEnd::Abandoned,
                error: None,
            };
        }
    }
    let path =
        crate::cassettes::cassette_path(&options.cassettes, task, &provider_name, &spec.model);
    Ok((path, cassette))
}

#[derive(Serialize)]
struct TaskYaml<'a> {
    id: &'a str,
    prompts: &'a [String],
    tools: Vec<&'a str>,
    checks: Vec<CheckYaml>,
    limits: LimitsYaml,
    tags: Vec<&'a str>,
}

#[derive(Serialize)]
struct CheckYaml {
    name: String,
    run: String,
}

#[derive(Serialize)]
struct LimitsYaml {
    turns: usize,
    wall_seconds: u64,
}

/// The task id of a recorded run: `prefix`, a dash and `key` (an id's first part) in lower-case
/// letters and digits, or the file's name when that leaves nothing; at most the 100 characters
/// a task id may have.
pub(crate) fn task_id(prefix: &str, key: &str, file: &Path) -> String {
    let key: String = key
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    let id = if key.is_empty() {
        let stem = file.file_stem().unwrap_or_default().to_string_lossy();
        format!("{prefix}-{}", crate::cassettes::sanitize_component(&stem))
    } else {
        format!("{prefix}-{key}")
    };
    id.chars().take(100).collect()
}

/// The files of the repository at `commit`, by path.
fn repo_files(repo: &Path, commit: &str) -> Result<Tree, String> {
    let scratch = tempfile::tempdir().map_err(|e| format!("failed to make a temp folder: {e}"))?;
    let archive = std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["archive", "--format=tar", commit])
        .output()
        .map_err(|e| format!("failed to run git in {}: {e}", repo.display()))?;
    if !archive.status.success() {
        return Err(format!(
            "git archive {commit} in {} failed: {}",
            repo.display(),
            String::from_utf8_lossy(&archive.stderr).trim()
        ));
    }
    let mut tar = std::process::Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(scratch.path())
        .stdin(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("failed to run tar: {e}"))?;
    if let Some(mut stdin) = tar.stdin.take() {
        std::io::Write::write_all(&mut stdin, &archive.stdout)
            .map_err(|e| format!("failed to unpack the commit: {e}"))?;
    }
    let status = tar.wait().map_err(|e| format!("tar: {e}"))?;
    if !status.success() {
        return Err(format!("failed to unpack {commit} of {}", repo.display()));
    }
    let mut tree = Tree::new();
    for (rel, full) in super::tree::list_files(scratch.path(), &[])
        .map_err(|e| format!("failed to list the commit's files: {e}"))?
    {
        let meta = std::fs::symlink_metadata(&full).map_err(|e| e.to_string())?;
        if !meta.is_file() {
            continue;
        }
        let bytes = std::fs::read(&full).map_err(|e| e.to_string())?;
        let executable = std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 != 0;
        tree.insert(format!("repo/{rel}"), OutFile { bytes, executable });
    }
    Ok(tree)
}

/// The check that the files the session's edits and writes left (inside the repository, in a
/// state the session's own results establish) are as it left them.
fn final_state_check(
    cwd: &str,
    file: &Path,
    steps: &[crate::sessions::ToolStep],
    tree: &GitTree,
    script: &Script,
) -> Option<String> {
    let imported: std::collections::HashSet<&str> = script
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Reply {
                message,
                interrupted: false,
            } => Some(message.tool_calls().map(|c| c.id.as_str())),
            _ => None,
        })
        .flatten()
        .collect();
    let steps: Vec<_> = steps
        .iter()
        .filter(|step| imported.contains(step.id.as_str()))
        .cloned()
        .collect();
    let mut corpus = SessionCorpus::default();
    let finals = corpus.add_steps(cwd, file, &steps, Some(tree));
    let mut sums = String::new();
    for (path, text) in finals {
        sums.push_str(&format!("{:x}  {path}\n", Sha256::digest(text.as_bytes())));
    }
    (!sums.is_empty()).then(|| format!("sha256sum --quiet --check - <<'EOF'\n{sums}EOF"))
}

/// Imports one session file.
pub async fn import_session(
    file: &Path,
    options: &SessionImportOptions,
    catalog: &Catalog,
) -> Result<ImportedSession, SessionImportError> {
    let session = read_session(file, options.leaf.as_deref())?;
    let script = script(&session)?;
    let (steps, _) = session.tool_steps();
    let source = Source {
        file: file.to_path_buf(),
        task: task_id(
            "pi",
            session.header.id.split('-').next().unwrap_or_default(),
            file,
        ),
        started: session.started(),
        cwd: session.header.cwd.clone(),
        described: format!(
            "Pi session file v{}, session {}",
            session.version, session.header.id
        ),
        tag: "pi-session",
        script,
        steps,
        problems: session.problems.iter().map(ToString::to_string).collect(),
    };
    import_source(source, options, catalog).await
}

/// Imports one recorded run read into a [`Source`]: the task folder and the cassettes, whole
/// or not at all.
pub(crate) async fn import_source(
    source: Source,
    options: &SessionImportOptions,
    catalog: &Catalog,
) -> Result<ImportedSession, SessionImportError> {
    let Source {
        file,
        task,
        started,
        cwd,
        described,
        tag,
        script,
        steps,
        problems,
    } = source;
    let file = file.as_path();
    let unusable = |m: String| SessionImportError::unusable(file, m);
    let script = script.in_workspace(&workspace_paths(&cwd));
    // The commit: given, or the last one made before the session began.
    let (commit, commit_why) = match &options.commit {
        Some(c) => (c.clone(), "given with --commit".to_owned()),
        None if started.is_empty() => {
            return Err(unusable(
                "the file has no timestamps to find the commit it started from; name it with --commit"
                    .to_owned(),
            ));
        }
        None => match GitTree::commit_before(&options.repo, &started) {
            Some(c) => (
                c,
                format!("the last commit of HEAD made before the session began ({started})"),
            ),
            None => {
                return Err(unusable(format!(
                    "no commit of {} made before the session began ({started}); name one with --commit",
                    options.repo.display()
                )));
            }
        },
    };
    let git = GitTree::open(&options.repo, &commit).map_err(|e| unusable(e.to_string()))?;
    let commit = git.commit().to_owned();

    // The tools: Pi's default set, and any other of ours the session called.
    let mut calls: BTreeMap<String, usize> = BTreeMap::new();
    for item in &script.items {
        if let Item::Reply {
            message,
            interrupted: false,
        } = item
        {
            for call in message.tool_calls() {
                *calls.entry(call.name.clone()).or_default() += 1;
            }
        }
    }
    let mut names: Vec<String> = PI_DEFAULT_TOOLS.iter().map(|s| (*s).to_owned()).collect();
    let mut unknown = Vec::new();
    for name in calls.keys() {
        if names.contains(name) {
            continue;
        }
        if crate::tools::registry::all_tool_names().contains(&name.as_str()) {
            names.push(name.clone());
        } else {
            unknown.push(name.clone());
        }
    }
    if !unknown.is_empty() {
        return Err(unusable(format!(
            "the session calls tools the harness does not have ({}); nothing written",
            unknown.join(", ")
        )));
    }
    let (profile, profile_why) = match options.profile {
        Some(p) => (p, "given with --tool-profile".to_owned()),
        None if started.is_empty() => (
            ToolProfile::default(),
            "the file has no date; today's tools".to_owned(),
        ),
        None => ToolProfile::for_date(&started),
    };
    let tools = ToolSet::new(&ToolSetSpec::Names(names.clone()))
        .map_err(|e| unusable(e.to_string()))?
        .with_profile(profile);
    let system_prompt = crate::agent::system_prompt::default_system_prompt(&tools.names());

    let prompts: Vec<String> = script
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Prompt(p) => Some(p.clone()),
            _ => None,
        })
        .collect();
    let turns = script
        .items
        .iter()
        .filter(|i| matches!(i, Item::Reply { .. }))
        .count();
    let (checks, outcome) = if options.checks.is_empty() {
        match final_state_check(&cwd, file, &steps, &git, &script) {
            Some(run) => {
                let name = "files as the session left them".to_owned();
                let outcome = RecordedOutcome {
                    outcome: Outcome::Passed,
                    checks: vec![RecordedCheck {
                        name: name.clone(),
                        passed: true,
                    }],
                    edits: RecordedEdits::default(),
                };
                (vec![CheckYaml { name, run }], Some(outcome))
            }
            None => (
                vec![CheckYaml {
                    name: "the replay ran".to_owned(),
                    run: "true".to_owned(),
                }],
                None,
            ),
        }
    } else {
        let checks = options
            .checks
            .iter()
            .enumerate()
            .map(|(i, run)| CheckYaml {
                name: format!("check {}", i + 1),
                run: run.clone(),
            })
            .collect();
        (checks, None)
    };
    let yaml = TaskYaml {
        id: &task,
        prompts: &prompts,
        tools: names.iter().map(String::as_str).collect(),
        checks,
        limits: LimitsYaml {
            turns: turns + 10,
            wall_seconds: 3600,
        },
        tags: vec![tag],
    };
    let body = serde_yaml_ng::to_string(&yaml).map_err(|e| unusable(e.to_string()))?;
    let header = format!(
        "# Imported by `harness import {tag}` from {} ({described}) at commit {commit} ({commit_why}).\n",
        file.display(),
    );
    let mut tree = repo_files(&options.repo, &commit).map_err(unusable)?;
    tree.insert(
        "task.yaml".into(),
        OutFile {
            bytes: format!("{header}{body}").into_bytes(),
            executable: false,
        },
    );

    // The cassettes, each whole in memory before anything is written.
    let session_api = ApiKind::ALL
        .into_iter()
        .find(|api| api.as_str() == script.model.2)
        .ok_or_else(|| {
            unusable(format!(
                "the replies' API `{}` is not one the harness speaks; choose one with --format",
                script.model.2
            ))
        });
    let session_api = match (session_api, options.formats.first()) {
        (Ok(api), _) => api,
        (Err(_), Some(api)) => *api,
        (Err(e), None) => return Err(e),
    };
    let formats = if options.formats.is_empty() {
        vec![session_api]
    } else {
        options.formats.clone()
    };
    let mut cassettes = Vec::new();
    for api in formats {
        let made = record_cassette(
            &script,
            &task,
            &tools,
            &system_prompt,
            &cwd,
            api,
            options,
            catalog,
            if options.checks.is_empty() {
                outcome.clone()
            } else {
                None
            },
            profile,
        )
        .await
        .map_err(|e| {
            unusable(format!(
                "failed to make the {} cassette: {e}; nothing written",
                api.as_str()
            ))
        })?;
        cassettes.push(made);
    }

    // Written: the cassettes (each atomically, refused on a secret), then the task folder
    // (whole); a failure removes what this import wrote.
    let mut written: Vec<PathBuf> = Vec::new();
    for (path, cassette) in &cassettes {
        if let Err(e) = crate::cassettes::recorder::write_cassette(cassette, path, &[]) {
            for done in &written {
                let _ = std::fs::remove_file(done);
            }
            return Err(unusable(format!("{e}; nothing written")));
        }
        written.push(path.clone());
    }
    let change = match super::tree::replace_dir(&options.into.join(&task), &tree) {
        Ok(change) => change,
        Err(e) => {
            for done in &written {
                let _ = std::fs::remove_file(done);
            }
            return Err(unusable(format!(
                "failed to write the task folder {}: {e}; nothing written",
                options.into.join(&task).display()
            )));
        }
    };
    let mut notes = Vec::new();
    if script.thinking_changes > 0 {
        notes.push(format!(
            "{} thinking level change(s) in the session are not replayed: requests carry the run's own --thinking",
            script.thinking_changes
        ));
    }
    Ok(ImportedSession {
        file: file.to_path_buf(),
        task,
        commit,
        commit_why,
        prompts: prompts.len(),
        turns,
        calls,
        stopped: script.stopped,
        interrupted: script.interrupted,
        change,
        cassettes: written,
        profile,
        profile_why,
        notes,
        problems,
    })
}
