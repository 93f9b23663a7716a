//! [`CorpusRecorder`]: the [`EditObserver`] a run installs in its tool context to build its edit
//! corpus. It keeps every observed `edit` call in memory (thread-safe: calls on different files
//! run at the same time); when the run is over, [`CorpusRecorder::write`] gives each call its
//! turn and call id from the run's tool-call records and writes the records and blobs.

use std::sync::Mutex;

use serde_json::Value;

use super::corpus::{CorpusError, CorpusWriter, EditRecord, RecordedEditOutcome};
use crate::agent::ToolCallRecord;
use crate::conversation::Content;
use crate::tools::{EditObservation, EditObserver, EditReport};

/// One observed call, owned.
#[derive(Debug, Clone)]
struct Observed {
    arguments: Value,
    path: String,
    before: Option<String>,
    after: Option<String>,
    is_error: bool,
    message: String,
    report: Option<EditReport>,
}

/// Collects the `edit` calls of one run.
#[derive(Debug)]
pub struct CorpusRecorder {
    task: String,
    run: String,
    observed: Mutex<Vec<Observed>>,
}

impl CorpusRecorder {
    /// A recorder for run `run` of task `task` (the names written in every record).
    pub fn new(task: impl Into<String>, run: impl Into<String>) -> Self {
        CorpusRecorder {
            task: task.into(),
            run: run.into(),
            observed: Mutex::new(Vec::new()),
        }
    }

    /// How many calls were observed.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Observed>> {
        self.observed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The records of the observed calls, in the order they finished. Each takes the turn and
    /// call id of the first `edit` record in `calls` with the same arguments not yet taken
    /// (turn 0 and an empty id if there is none); contents go to `writer` as blobs.
    pub fn records(
        &self,
        calls: &[ToolCallRecord],
        writer: &mut CorpusWriter,
    ) -> Result<Vec<EditRecord>, CorpusError> {
        let observed = self.lock().clone();
        let mut taken = vec![false; calls.len()];
        let mut out = Vec::with_capacity(observed.len());
        for call in observed {
            let matched = calls.iter().enumerate().position(|(i, c)| {
                !taken[i] && c.call.name == "edit" && c.call.arguments == call.arguments
            });
            let (turn, call_id) = match matched {
                Some(i) => {
                    taken[i] = true;
                    (calls[i].turn, calls[i].call.id.clone())
                }
                None => (0, String::new()),
            };
            let before = call.before.as_deref().map(|t| writer.blob(t)).transpose()?;
            let after = call.after.as_deref().map(|t| writer.blob(t)).transpose()?;
            out.push(EditRecord {
                task: self.task.clone(),
                run: self.run.clone(),
                turn,
                call_id,
                path: call.path,
                before,
                arguments: call.arguments,
                outcome: Some(RecordedEditOutcome {
                    strategy: call
                        .report
                        .as_ref()
                        .map(|r| r.strategy.clone())
                        .unwrap_or_default(),
                    is_error: call.is_error,
                    message: call.message,
                    report: call.report,
                    after,
                }),
                kind: None,
                gold: None,
            });
        }
        Ok(out)
    }

    /// Writes the records of [`CorpusRecorder::records`] to `writer`; returns how many.
    pub fn write(
        &self,
        calls: &[ToolCallRecord],
        writer: &mut CorpusWriter,
    ) -> Result<usize, CorpusError> {
        let records = self.records(calls, writer)?;
        for record in &records {
            writer.record(record)?;
        }
        Ok(records.len())
    }
}

impl EditObserver for CorpusRecorder {
    fn observe(&self, call: &EditObservation<'_>) {
        let message = call
            .result
            .content
            .iter()
            .filter_map(|c| match c {
                Content::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let observed = Observed {
            arguments: call.arguments.clone(),
            path: call.path.unwrap_or_default().to_owned(),
            before: call.before.map(str::to_owned),
            after: call.after.map(str::to_owned),
            is_error: call.result.is_error,
            message,
            report: call.result.edit.clone(),
        };
        self.lock().push(observed);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::conversation::ToolCall;
    use crate::edits::corpus::read_corpus;
    use crate::edits::reapply::{Correct, cases, compare, summarize};
    use crate::tools::edit::parse_strategy;
    use crate::tools::{ToolContext, ToolSet, ToolSetSpec};

    #[tokio::test]
    async fn a_run_with_a_recorder_becomes_a_corpus_with_gold() {
        let work = tempfile::tempdir().unwrap();
        std::fs::write(work.path().join("a.py"), "x = 1  \ny = 2\n").unwrap();
        let recorder = Arc::new(CorpusRecorder::new("task", "task#1"));
        let mut ctx = ToolContext::new(work.path());
        ctx.edit_observer = Some(recorder.clone());
        let tools = ToolSet::new(&ToolSetSpec::Coding).unwrap();
        let calls = [
            // Fails: no such text.
            json!({"path": "a.py", "edits": [{"oldText": "y = 3", "newText": "y = 4"}]}),
            // The model's correction: exact, so the failed call is recovered.
            json!({"path": "a.py", "edits": [{"oldText": "y = 2", "newText": "y = 4"}]}),
            // Needs Pi's fuzzy tier (the file has trailing spaces): applied, no gold.
            json!({"path": "a.py", "oldText": "x = 1\n", "newText": "x = 10\n"}),
            // Invalid arguments are recorded too.
            json!({"path": "a.py"}),
        ];
        let mut records = Vec::new();
        for (i, args) in calls.iter().enumerate() {
            let result = tools.call("edit", args.clone(), &ctx).await;
            records.push(ToolCallRecord {
                turn: i as u32 + 1,
                call: ToolCall {
                    id: format!("call_{i}"),
                    name: "edit".into(),
                    arguments: args.clone(),
                    thought_signature: None,
                },
                result,
                duration: Duration::ZERO,
            });
        }
        assert_eq!(recorder.len(), 4);

        let out = tempfile::tempdir().unwrap();
        let mut writer = CorpusWriter::create(out.path()).unwrap();
        assert_eq!(recorder.write(&records, &mut writer).unwrap(), 4);
        writer.finish().unwrap();
        let corpus = read_corpus(out.path()).unwrap();
        assert_eq!(corpus.problems, vec![]);
        let ids: Vec<(u32, &str)> = corpus
            .records
            .iter()
            .map(|(_, r)| (r.turn, r.call_id.as_str()))
            .collect();
        assert_eq!(
            ids,
            vec![(1, "call_0"), (2, "call_1"), (3, "call_2"), (4, "call_3")]
        );
        let legacy = &corpus.records[2].1;
        // The arguments exactly as sent (the legacy pair, not Pi's rewritten `edits`).
        assert_eq!(legacy.arguments, calls[2]);
        let outcome = legacy.outcome.as_ref().unwrap();
        assert_eq!(outcome.report.as_ref().unwrap().located[0].tier, "fuzzy");
        assert_eq!(
            corpus.blob(legacy.before.as_ref().unwrap()).map(|b| &**b),
            Some("x = 1  \ny = 4\n")
        );
        assert_eq!(
            corpus.blob(outcome.after.as_ref().unwrap()).map(|b| &**b),
            Some("x = 10\ny = 4\n")
        );
        assert_eq!(corpus.records[3].1.before, None);

        let cases = cases(&corpus);
        let strategies = vec![
            parse_strategy("exact").unwrap(),
            parse_strategy("pi").unwrap(),
        ];
        let names = vec!["exact".to_owned(), "pi".to_owned()];
        let results = compare(&cases, &strategies, 1).unwrap();
        // The failed call's gold is the retry's result: both strategies miss it the same way.
        assert_eq!(results[0][0].correct, Correct::Missed);
        let summary = summarize(&cases, &names, &results);
        // Exact and pi differ on the fuzzy call only.
        assert_eq!(summary.pairs[0].disagree, vec![2]);
    }
}
