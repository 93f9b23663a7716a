//! The oracle: a built-in "model" that needs no key, no network and no cassette. `oracle/reference`
//! solves a task with its reference solution through the agent's own tools (one turn of `write`
//! calls for a solution folder, then `chmod +x` with `bash` for its executable files; or one
//! `bash` call running a solution script), then says it is done; `oracle/none` answers at once
//! and touches nothing. `harness validate --oracle` runs both to prove that every task can pass
//! and that every task's checks can fail.
//!
//! It decides each reply from the conversation alone, as a model would: the turns after the
//! first prompt apply the reference, and any later user message (a follow-up prompt, a failed
//! attempt's feedback) gets a text answer. Its usage is zero tokens. Depends on `conversation`
//! only: the runner turns a task's solution into a [`Reference`].

use async_trait::async_trait;
use serde_json::json;

use super::{ModelSpec, Provider, ProviderError, RequestOptions};
use crate::conversation::{
    AssistantBlock, AssistantMessage, Context, Message, StopReason, ToolCall, Usage,
};

/// The provider name of the oracle (`--model oracle/reference`, `--model oracle/none`).
pub const PROVIDER: &str = "oracle";

/// The model that applies the task's reference solution.
pub const REFERENCE_MODEL: &str = "reference";

/// The model that touches nothing.
pub const NONE_MODEL: &str = "none";

/// The oracle's models, as named after `oracle/`.
pub const MODELS: [&str; 2] = [REFERENCE_MODEL, NONE_MODEL];

/// The `api` of the oracle's replies, in transcripts (it speaks no wire format).
pub const API: &str = "in-process";

/// Whether `provider` names the oracle.
pub fn is_oracle(provider: &str) -> bool {
    provider == PROVIDER
}

/// A task's reference solution, as the oracle applies it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reference {
    /// Files laid over the workspace, each written whole with `write`.
    Files(Vec<ReferenceFile>),
    /// A bash script run in the workspace with `bash` (its text is the command).
    Script(String),
}

/// One file of a reference solution folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReferenceFile {
    /// Relative to the workspace, `/`-separated.
    pub path: String,
    pub content: String,
    /// Made executable (`chmod +x`) after it is written.
    pub executable: bool,
}

/// What the oracle does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OracleModel {
    /// Apply this reference, then stop.
    Reference(Reference),
    /// Touch nothing.
    None,
}

/// Why the oracle cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OracleError {
    #[error(
        "`{PROVIDER}/{model}` is not an oracle model: use `{PROVIDER}/{REFERENCE_MODEL}` (the \
         task's reference solution) or `{PROVIDER}/{NONE_MODEL}` (touches nothing)"
    )]
    UnknownModel { model: String },
    /// `oracle/reference` on a task without a reference solution (the runner names the task).
    #[error("the task has no reference solution")]
    NoReference,
}

/// The oracle model named `model` (after `oracle/`), if it is one.
pub fn check_model(model: &str) -> Result<(), OracleError> {
    if MODELS.contains(&model) {
        Ok(())
    } else {
        Err(OracleError::UnknownModel {
            model: model.to_owned(),
        })
    }
}

/// The oracle as a [`Provider`].
pub struct OracleProvider {
    spec: ModelSpec,
    model: OracleModel,
}

impl OracleProvider {
    /// The oracle `spec.model` names, on a task whose reference solution is `reference`.
    pub fn for_model(spec: ModelSpec, reference: Option<&Reference>) -> Result<Self, OracleError> {
        check_model(&spec.model)?;
        let model = if spec.model == NONE_MODEL {
            OracleModel::None
        } else {
            OracleModel::Reference(reference.ok_or(OracleError::NoReference)?.clone())
        };
        Ok(OracleProvider::new(spec, model))
    }

    /// The oracle of `spec` (provider `oracle`), doing what `model` says.
    pub fn new(spec: ModelSpec, model: OracleModel) -> Self {
        OracleProvider { spec, model }
    }

    /// The reply to the conversation `messages`.
    pub fn reply(&self, messages: &[Message]) -> AssistantMessage {
        let is_user = |m: &Message| matches!(m, Message::User { .. });
        let is_assistant = |m: &Message| matches!(m, Message::Assistant(_));
        let last_user = messages.iter().rposition(is_user).unwrap_or(0);
        let turn = messages.iter().filter(|m| is_assistant(m)).count() + 1;
        // Only the first prompt is solved; later prompts and feedback get words.
        if messages[..last_user].iter().any(is_assistant) {
            return self.text(match &self.model {
                OracleModel::Reference(_) => {
                    "The reference solution is applied; there is nothing more to do."
                }
                OracleModel::None => "I am leaving the workspace as it is.",
            });
        }
        let reference = match &self.model {
            OracleModel::None => return self.text("I am leaving the workspace as it is."),
            OracleModel::Reference(reference) => reference,
        };
        let since_prompt = &messages[last_user..];
        let done = since_prompt.iter().filter(|m| is_assistant(m)).count();
        match steps(reference).into_iter().nth(done) {
            Some(calls) => self.tool_calls(turn, calls),
            None => self.text(&summary(reference, since_prompt)),
        }
    }

    fn message(&self, content: Vec<AssistantBlock>, stop_reason: StopReason) -> AssistantMessage {
        AssistantMessage {
            content,
            api: API.to_owned(),
            provider: self.spec.provider.clone(),
            model: self.spec.model.clone(),
            usage: Usage::default(),
            stop_reason,
            error_message: None,
            response_id: None,
        }
    }

    fn text(&self, text: &str) -> AssistantMessage {
        self.message(
            vec![AssistantBlock::Text {
                text: text.to_owned(),
                signature: None,
            }],
            StopReason::Stop,
        )
    }

    fn tool_calls(
        &self,
        turn: usize,
        calls: Vec<(&'static str, serde_json::Value)>,
    ) -> AssistantMessage {
        let content = calls
            .into_iter()
            .enumerate()
            .map(|(i, (name, arguments))| {
                AssistantBlock::ToolCall(ToolCall {
                    id: format!("oracle_{turn}_{}", i + 1),
                    name: name.to_owned(),
                    arguments,
                    thought_signature: None,
                })
            })
            .collect();
        self.message(content, StopReason::ToolUse)
    }
}

/// The tool-call turns that apply `reference`, in order: every file written in one turn (their
/// paths differ, so they may run in parallel), then the executable ones made so in another.
fn steps(reference: &Reference) -> Vec<Vec<(&'static str, serde_json::Value)>> {
    match reference {
        Reference::Script(script) => vec![vec![("bash", json!({ "command": script }))]],
        Reference::Files(files) => {
            let writes = files
                .iter()
                .map(|f| ("write", json!({ "path": f.path, "content": f.content })))
                .collect();
            let executables: Vec<String> = files
                .iter()
                .filter(|f| f.executable)
                .map(|f| shell_quote(&f.path))
                .collect();
            let mut steps = vec![writes];
            if !executables.is_empty() {
                let command = format!("chmod +x -- {}", executables.join(" "));
                steps.push(vec![("bash", json!({ "command": command }))]);
            }
            steps
        }
    }
}

/// The last words of a reference run: what was applied, and any tool call that failed.
fn summary(reference: &Reference, since_prompt: &[Message]) -> String {
    let failures: Vec<String> = since_prompt
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) if r.is_error => {
                let text = r
                    .content
                    .iter()
                    .filter_map(|c| c.as_text())
                    .collect::<Vec<_>>()
                    .join(" ");
                let first = text.lines().next().unwrap_or_default().to_owned();
                Some(format!("`{}` ({}): {first}", r.tool_name, r.tool_call_id))
            }
            _ => None,
        })
        .collect();
    let applied = match reference {
        Reference::Files(files) if files.len() == 1 => {
            "Wrote the reference solution (1 file).".to_owned()
        }
        Reference::Files(files) => format!("Wrote the reference solution ({} files).", files.len()),
        Reference::Script(_) => "Ran the reference solution script.".to_owned(),
    };
    if failures.is_empty() {
        applied
    } else {
        format!(
            "{applied} Some calls failed, so the reference may not be fully applied:\n- {}",
            failures.join("\n- ")
        )
    }
}

/// `text` as one shell word.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[async_trait]
impl Provider for OracleProvider {
    fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    async fn complete(
        &self,
        context: &Context,
        _options: &RequestOptions,
    ) -> Result<AssistantMessage, ProviderError> {
        Ok(self.reply(&context.messages))
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::conversation::{Content, ToolResultMessage, UserContent};
    use crate::providers::ApiKind;

    fn oracle(model: OracleModel) -> OracleProvider {
        let name = match model {
            OracleModel::Reference(_) => "reference",
            OracleModel::None => "none",
        };
        OracleProvider::new(
            ModelSpec {
                provider: PROVIDER.into(),
                api: ApiKind::OpenaiCompletions,
                model: name.into(),
                base_url: String::new(),
                api_key: None,
                headers: vec![],
            },
            model,
        )
    }

    fn user(text: &str) -> Message {
        Message::User {
            content: UserContent::Text(text.into()),
        }
    }

    fn results(reply: &AssistantMessage, error: Option<&str>) -> Vec<Message> {
        reply
            .tool_calls()
            .map(|call| {
                Message::ToolResult(ToolResultMessage {
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    content: vec![Content::text(error.unwrap_or("ok"))],
                    is_error: error.is_some(),
                })
            })
            .collect()
    }

    /// The calls of a reply as `(id, name, arguments)`.
    fn calls(reply: &AssistantMessage) -> Vec<(String, String, serde_json::Value)> {
        reply
            .tool_calls()
            .map(|c| (c.id.clone(), c.name.clone(), c.arguments.clone()))
            .collect()
    }

    fn file(path: &str, content: &str, executable: bool) -> ReferenceFile {
        ReferenceFile {
            path: path.into(),
            content: content.into(),
            executable,
        }
    }

    #[test]
    fn a_solution_folder_is_written_in_one_turn_then_made_executable_then_done() {
        let oracle = oracle(OracleModel::Reference(Reference::Files(vec![
            file("src/lib.rs", "pub fn f() {}\n", false),
            file("bin/it's.sh", "#!/bin/sh\n", true),
        ])));
        let mut history = vec![user("Fix it.")];
        let first = oracle.reply(&history);
        assert_eq!(first.stop_reason, StopReason::ToolUse);
        assert_eq!(first.usage, Usage::default());
        assert_eq!(
            (first.api.as_str(), first.provider.as_str()),
            (API, "oracle")
        );
        assert_eq!(
            calls(&first),
            vec![
                (
                    "oracle_1_1".to_owned(),
                    "write".to_owned(),
                    json!({"path": "src/lib.rs", "content": "pub fn f() {}\n"})
                ),
                (
                    "oracle_1_2".to_owned(),
                    "write".to_owned(),
                    json!({"path": "bin/it's.sh", "content": "#!/bin/sh\n"})
                ),
            ]
        );
        history.push(Message::Assistant(first.clone()));
        history.extend(results(&first, None));
        let second = oracle.reply(&history);
        assert_eq!(
            calls(&second),
            vec![(
                "oracle_2_1".to_owned(),
                "bash".to_owned(),
                json!({"command": r"chmod +x -- 'bin/it'\''s.sh'"})
            )]
        );
        history.push(Message::Assistant(second.clone()));
        history.extend(results(&second, None));
        let last = oracle.reply(&history);
        assert_eq!(last.stop_reason, StopReason::Stop);
        assert_eq!(last.tool_calls().count(), 0);
        assert_eq!(last.text(), "Wrote the reference solution (2 files).");
    }

    #[test]
    fn a_script_is_one_bash_call_and_a_failed_call_is_said() {
        let oracle = oracle(OracleModel::Reference(Reference::Script(
            "sed -i 's/a/b/' x.txt\n".into(),
        )));
        let mut history = vec![user("Fix it.")];
        let first = oracle.reply(&history);
        assert_eq!(
            calls(&first),
            vec![(
                "oracle_1_1".to_owned(),
                "bash".to_owned(),
                json!({"command": "sed -i 's/a/b/' x.txt\n"})
            )]
        );
        history.push(Message::Assistant(first.clone()));
        history.extend(results(
            &first,
            Some("sed: can't read x.txt\n\nCommand exited with code 2"),
        ));
        let last = oracle.reply(&history);
        assert_eq!(
            last.text(),
            "Ran the reference solution script. Some calls failed, so the reference may not be \
             fully applied:\n- `bash` (oracle_1_1): sed: can't read x.txt"
        );
    }

    #[test]
    fn none_answers_at_once() {
        let oracle = oracle(OracleModel::None);
        let reply = oracle.reply(&[user("Fix it.")]);
        assert_eq!(reply.stop_reason, StopReason::Stop);
        assert_eq!(reply.tool_calls().count(), 0);
        assert_eq!(reply.text(), "I am leaving the workspace as it is.");
        assert_eq!(reply.usage, Usage::default());
    }

    #[test]
    fn a_later_user_message_gets_words_not_the_solution_again() {
        let oracle = oracle(OracleModel::Reference(Reference::Files(vec![file(
            "a.txt", "a\n", false,
        )])));
        let mut history = vec![user("Fix it.")];
        let first = oracle.reply(&history);
        history.push(Message::Assistant(first.clone()));
        history.extend(results(&first, None));
        history.push(Message::Assistant(oracle.reply(&history)));
        // A follow-up prompt, or the failing checks of an attempt.
        history.push(user("The tests still fail:\n..."));
        let again = oracle.reply(&history);
        assert_eq!(again.tool_calls().count(), 0);
        assert_eq!(
            again.text(),
            "The reference solution is applied; there is nothing more to do."
        );
        let none = self::oracle(OracleModel::None);
        let history = vec![
            user("Fix it."),
            Message::Assistant(none.reply(&[user("Fix it.")])),
            user("And now?"),
        ];
        assert_eq!(none.reply(&history).tool_calls().count(), 0);
    }
}
