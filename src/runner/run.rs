//! One run, start to finish: the workspace and the tools, the cassette session of the mode in
//! use, the agent loop, the checks, the score, the run's folder, and what the session writes.
//!
//! Every failure becomes the run's record (an `error` outcome with its kind), never an `Err`.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::agent::{Agent, AgentRun, EventSink, StopCause};
use crate::cassettes::divergence;
use crate::cassettes::{CassetteHeader, CassettePlan};
use crate::edits::CorpusRecorder;
use crate::providers::oracle;
use crate::providers::retry::{RetryStats, Retrying};
use crate::providers::{OpenAiCompat, Provider, ProviderSettings};
use crate::record::{ErrorKind, RunFile, RunRecord};
use crate::reports;
use crate::sandbox::{Jail, Scratch};
use crate::scoring::{self, ScoreInputs};
use crate::tasks::Task;
use crate::tools::{ToolContext, ToolSet, edit};
use crate::workspace::Workspace;

use super::options::RunOptions;
use super::place::Place;
use super::plan::PlannedRun;
use super::session::{Finished, Session};
use super::state::SuiteState;
use crate::events::{Reporter, RunnerEvent};

pub(super) async fn run_one(
    index: usize,
    run: &PlannedRun,
    shared: &Arc<RunOptions>,
    suite: &Arc<SuiteState>,
    reporter: Arc<dyn Reporter>,
    place: &mut Place,
    prepared: impl Future<Output = Result<Prepared, String>>,
) -> RunRecord {
    let (options, state) = (&**shared, &**suite);
    let started = Instant::now();
    let task = run.task.clone();
    let (strategy_name, profile) = super::options::split_arm(&run.edit_strategy);
    let strategy = match edit::parse_strategy(strategy_name) {
        Ok(strategy) => strategy,
        Err(e) => return errored(run, ErrorKind::Setup, format!("{e}; {}", e.hint())),
    };
    let plan = options.mode.plan(run.cassette.exists());
    let goes_live = match plan {
        CassettePlan::Replay => false,
        CassettePlan::Rerecord => !options.ci,
        CassettePlan::Record | CassettePlan::Live => true,
    };
    let entry = match options.catalog.provider(&run.model.provider) {
        Ok(entry) => entry.clone(),
        Err(e) => return errored(run, ErrorKind::Setup, e.to_string()),
    };
    let spec = match options.catalog.resolve(
        &run.model,
        options.base_url.as_deref(),
        goes_live,
        &*options.key_env,
    ) {
        Ok(spec) => spec,
        Err(e) => return errored(run, ErrorKind::Authentication, e.to_string()),
    };
    let (workspace, scratch, jail) = match prepared.await {
        Ok(prepared) => prepared.claim(),
        Err(reason) => return errored(run, ErrorKind::Setup, reason),
    };
    // The key in use never reaches a transcript or a diff, whatever the sealed keys are.
    let redactor = options.redactor.with(spec.api_key.iter());
    let rules = || state.compare_rules(&run.task);
    let session = if oracle::is_oracle(&run.model.provider) {
        match oracle::OracleProvider::for_model(spec.clone(), task.solution.as_ref()) {
            Ok(oracle) => Session::InProcess(Arc::new(oracle)),
            Err(e) => return errored(run, ErrorKind::Setup, oracle_error(&task, &e)),
        }
    } else {
        match Session::open(
            plan,
            run,
            options,
            rules,
            (workspace.path(), &scratch),
            &spec.api_key,
            &state.live,
        ) {
            Ok(session) => session,
            Err((kind, reason)) => return errored(run, kind, reason),
        }
    };
    let mut notes: Vec<String> = Vec::new();
    for message in session.notices(profile.name(), strategy.name(), options.sandbox.name()) {
        reporter.event(&RunnerEvent::Notice {
            index,
            message: message.clone(),
        });
        notes.push(message);
    }
    let api = spec.api;
    let (provider, retry_stats) = provider_for(spec, &entry, &session, options, state);

    let tool_set = match ToolSet::new(&task.tools) {
        Ok(set) => Arc::new(set.with_profile(profile)),
        Err(e) => return errored(run, ErrorKind::Setup, e.to_string()),
    };
    // Under `isolated` the run's tmp folder is the commands' private /tmp.
    let tmpdir = if jail.tmp_is_private() {
        Path::new("/tmp")
    } else {
        scratch.tmp()
    };
    let command_env = Arc::new(crate::sandbox::env::run_env(
        &options.command_env,
        scratch.home(),
        tmpdir,
        &task.env,
    ));
    let mut ctx = ToolContext::new(workspace.path());
    // An interrupt aborts the tools at once (the run itself is dropped right after).
    ctx.cancel = state.interrupt.child_token();
    ctx.temp_dir = scratch.logs().to_path_buf();
    ctx.edit_strategy = strategy.clone();
    ctx.profile = profile;
    ctx.env = command_env.clone();
    ctx.jail = jail.clone();
    let edits = Arc::new(CorpusRecorder::new(
        task.id.clone(),
        crate::record::run_dir_for(
            &task.id,
            &run.model.provider,
            &run.model.model,
            &run.edit_strategy,
            run.epoch,
        )
        .trim_start_matches("runs/")
        .to_owned(),
    ));
    ctx.edit_observer = Some(edits.clone());

    let system_prompt = task
        .system_prompt
        .clone()
        .unwrap_or_else(|| crate::agent::system_prompt::default_system_prompt(&tool_set.names()));
    let agent = Agent {
        provider,
        tools: tool_set.clone(),
        system_prompt: Some(system_prompt.clone()),
        options: options.request.clone(),
        limits: task.limits.clone(),
        execution: Default::default(),
    };
    let sink: EventSink = {
        let reporter = reporter.clone();
        Arc::new(move |event| reporter.event(&RunnerEvent::Agent { index, event }))
    };
    // Each prompt when the agent stopped after the one before; then the checks, and while
    // attempts are left and a check failed, what failed as the next message.
    let agent_started = Instant::now();
    let mut agent_run = AgentRun::new(Vec::new());
    for prompt in &task.prompts {
        let went_on = matches!(
            agent_run.stop,
            StopCause::Completed | StopCause::Interrupted
        );
        if !agent_run.messages.is_empty() && !went_on {
            break;
        }
        agent
            .follow_up(&mut agent_run, prompt, agent_started, &ctx, &sink)
            .await;
    }
    // A check the harness could not start leaves the run without a verdict: an error of the
    // harness's, not a failed check counted against the model.
    let mut not_started = None;
    let mut checks = scoring::run_checks_in(&task, &jail, workspace.path(), &command_env)
        .await
        .unwrap_or_else(|e| {
            not_started = Some(e);
            Vec::new()
        });
    let mut attempt_outcomes = Vec::new();
    if task.attempts > 1 && not_started.is_none() {
        attempt_outcomes.push(scoring::attempt_outcome(1, &checks, agent_run.turns));
        for attempt in 2..=task.attempts {
            let last = attempt_outcomes.last().expect("one attempt");
            if last.passed || checks.is_empty() || agent_run.stop != StopCause::Completed {
                break;
            }
            let feedback = scoring::attempt_feedback(&checks);
            agent
                .follow_up(&mut agent_run, &feedback, agent_started, &ctx, &sink)
                .await;
            match scoring::run_checks_in(&task, &jail, workspace.path(), &command_env).await {
                Ok(now) => checks = now,
                Err(e) => {
                    not_started = Some(e);
                    break;
                }
            }
            attempt_outcomes.push(scoring::attempt_outcome(attempt, &checks, agent_run.turns));
        }
    }
    // The provider holds the transport; let it go before finishing a recording.
    drop(agent);
    // Nothing more runs in the run's sandbox: it ends now, before the workspace is diffed (and
    // before its folders go).
    drop(ctx);
    let ended = jail.end();

    let deadline = diff_deadline(started, &task.limits);
    let (workspace, diffed) = blocking_with(workspace, move |ws| ws.diff(deadline)).await;
    let diff = match diffed {
        Ok(diff) => diff,
        Err(e) => crate::workspace::WorkspaceDiff {
            unified: format!("(the diff could not be computed: {e})\n"),
            ..Default::default()
        },
    };
    let findings = session.findings(&agent_run.stop);
    let (error, error_kind) = match (&agent_run.stop, not_started) {
        (StopCause::Provider(e), _) if findings.stopped.is_none() => (
            Some(format!("provider error ({}): {e}", e.kind())),
            Some(e.kind().to_owned()),
        ),
        // A divergence says more about a replay than its checks do.
        (_, Some(not_started)) if findings.stopped.is_none() => {
            (Some(not_started.to_string()), Some(ErrorKind::Setup))
        }
        _ => (None, None),
    };
    let mut record = scoring::score(
        &task,
        &agent_run,
        checks,
        &diff,
        ScoreInputs {
            provider: run.model.provider.clone(),
            model: run.model.model.clone(),
            epoch: run.epoch,
            price: options.catalog.price(&run.model),
            wall_time: started.elapsed(),
            divergence: findings.stopped.clone(),
            error,
            error_kind,
            retries: u32::try_from(retry_stats.retries()).unwrap_or(u32::MAX),
            attempts: u32::try_from(retry_stats.attempts()).unwrap_or(u32::MAX),
            replay: findings.replay.clone(),
            edit_strategy: run.edit_strategy.clone(),
            attempt_outcomes,
        },
    );
    // Scored, its cost known: the run needs neither the model nor its sandbox any more, and the
    // next run takes its place while it writes its files.
    if let Some(cost) = record.cost {
        *state.spent.lock().expect("spent") += cost;
    }
    place.leave().await;
    let mut calls_per_tool = std::collections::BTreeMap::new();
    for record in &agent_run.tool_calls {
        *calls_per_tool
            .entry(record.call.name.clone())
            .or_insert(0usize) += 1;
    }
    if let Some(line) = divergence::drift_line(&findings.differences, &calls_per_tool) {
        add_note(&mut record, line);
    }
    if profile != Default::default() {
        add_note(&mut record, format!("tool profile {profile}"));
    }
    for note in notes {
        add_note(&mut record, note);
    }
    // Nothing the harness writes holds a key value: not the record (runs.csv, the summaries),
    // not the run folder (transcripts, trajectory, diff, run.json).
    record = redacted(&redactor, record);
    let file = redacted(
        &redactor,
        RunFile::new(
            record.clone(),
            agent_run.messages.clone(),
            agent_run.tool_calls.clone(),
            diff.unified.clone(),
            Some(system_prompt.clone()),
            Some(strategy.name().to_owned()),
        ),
    );
    let divergence_md = (!findings.differences.is_empty()).then(|| {
        redactor
            .redact(&divergence::markdown_with_calls(
                &run.label(),
                &findings.differences,
                &calls_per_tool,
            ))
            .into_owned()
    });
    let header = CassetteHeader {
        sandbox: Some(options.sandbox.name().to_owned()),
        ..CassetteHeader::new(
            task.id.clone(),
            run.model.provider.clone(),
            run.model.model.clone(),
            api,
            profile.name(),
            strategy.name(),
        )
    };
    // The run's file work, in order, on one blocking thread (one hand-off, not three): its files
    // (its edit calls, run.json and the views of it, divergence.md); the cassette, when
    // recording; then its folders emptied or removed, given back for a later run once every
    // process of the run has ended (by now, unless one is slow to die).
    let (mut record, finished, kept) = {
        let (suite, report_dir) = (suite.clone(), options.report_dir.clone());
        let calls = agent_run.tool_calls.clone();
        let run_folder = report_dir.join(run.run_dir());
        let (shared, planned, stop) = (shared.clone(), run.clone(), agent_run.stop.clone());
        let keep_workspace = options.keep_workspaces;
        blocking(move || {
            let mut record = record;
            let written = write_run_files(
                &suite,
                &edits,
                &calls,
                &run_folder,
                &report_dir,
                &file,
                &record,
                divergence_md,
            );
            for note in written {
                add_note(&mut record, note);
            }
            let finished = session.finish(header, &mut record, &stop, &planned, &shared);
            let (workspace, kept) = if keep_workspace {
                (None, Some(workspace.into_kept_path()))
            } else {
                (Some(workspace), None)
            };
            let ended = ended.everything_ended(RECYCLE_WAIT);
            scratch.recycle(ended);
            if let Some(workspace) = workspace {
                workspace.recycle(ended);
            }
            (record, finished, kept)
        })
        .await
    };
    if let Some(finished) = finished {
        report_finished(finished, &mut record, &*reporter, index);
    }
    if let Some(kept) = kept {
        add_note(&mut record, format!("workspace kept at {}", kept.display()));
    }
    redacted(&redactor, record)
}

/// How long a finished run waits for the last process of its sandbox to end before removing its
/// folders instead of giving them back for a later run.
const RECYCLE_WAIT: Duration = Duration::from_millis(50);

/// A run's workspace and scratch folders, and its jail, whose sandbox (under `isolated`) is being
/// made: what a run needs before its first model turn, made before it takes its place
/// ([`super::schedule`]). Dropped unclaimed (the run never started), its folders go, a workspace
/// to keep (`--keep-workspaces`) too: it holds nothing but the fixture.
pub(super) struct Prepared {
    parts: Option<(Workspace, Scratch, Jail)>,
}

impl Prepared {
    /// The run's workspace, scratch folders and jail, for the run to use.
    fn claim(mut self) -> (Workspace, Scratch, Jail) {
        self.parts.take().expect("claimed once")
    }
}

impl Drop for Prepared {
    fn drop(&mut self) {
        if let Some((workspace, scratch, jail)) = self.parts.take() {
            // The sandbox ends before its folders go.
            drop(jail);
            workspace.discard();
            drop(scratch);
        }
    }
}

/// Copies the fixture of `task` into a new workspace, makes the run's scratch folders, and
/// starts making its sandbox (under `isolated`: it is made in the background, and the run's
/// first command waits for it). Fails with the reason, for the run's `error` record.
pub(super) async fn prepare(task: Arc<Task>, options: Arc<RunOptions>) -> Result<Prepared, String> {
    // Copying the fixture and making the scratch folders is file work: on a blocking thread,
    // never on the runtime's workers (on some file systems a folder made right after many were
    // removed takes milliseconds). Made into a `Prepared` there: stopped meanwhile, its folders
    // go with it.
    blocking(move || {
        let workspace = Workspace::create(&task, options.keep_workspaces)
            .map_err(|e| format!("failed to create the workspace: {e}"))?;
        let scratch = Scratch::new().map_err(|e| format!("failed to create a temp dir: {e}"))?;
        let jail = options
            .sandbox
            .jail(workspace.path())
            .with_scratch(&scratch)
            .with_reads(task.requires.existing_files(&task.dir));
        jail.prepare();
        Ok(Prepared {
            parts: Some((workspace, scratch, jail)),
        })
    })
    .await
}

/// A run's [`prepare`], started before the run has its place; stopped if the run never takes it
/// (a stop, a spent budget), and whatever it made then goes (its folders, its sandbox).
pub(super) struct Ahead(tokio::task::JoinHandle<Result<Prepared, String>>);

impl Ahead {
    pub(super) fn start(task: Arc<Task>, options: Arc<RunOptions>) -> Ahead {
        Ahead(tokio::spawn(prepare(task, options)))
    }

    /// What the preparation made, once it is done.
    pub(super) async fn take(mut self) -> Result<Prepared, String> {
        match (&mut self.0).await {
            Ok(prepared) => prepared,
            Err(e) => Err(format!("internal error: preparing the run failed: {e}")),
        }
    }
}

impl Drop for Ahead {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs `work` on a blocking thread (file work never runs on the runtime's workers). A panic
/// there is the run's panic, as it would have been on the run's own task.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(work).await {
        Ok(out) => out,
        Err(e) => match e.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(e) => panic!("a blocking job of the run was cancelled: {e}"),
        },
    }
}

/// Runs `work` on `value` on a blocking thread and gives `value` back with the result.
async fn blocking_with<V: Send + 'static, T: Send + 'static>(
    value: V,
    work: impl FnOnce(&mut V) -> T + Send + 'static,
) -> (V, T) {
    blocking(move || {
        let mut value = value;
        let out = work(&mut value);
        (value, out)
    })
    .await
}

/// Writes a finished run's files: its edit calls to the report's `edits.jsonl` and its own
/// `edit-calls.jsonl`, `run.json` and the views of it, and `divergence.md` when there is one.
/// Returns a note for each that could not be written.
#[allow(clippy::too_many_arguments)]
fn write_run_files(
    state: &SuiteState,
    edits: &CorpusRecorder,
    calls: &[crate::agent::ToolCallRecord],
    run_folder: &Path,
    report_dir: &Path,
    file: &RunFile,
    record: &RunRecord,
    divergence_md: Option<String>,
) -> Vec<String> {
    let mut notes = Vec::new();
    if let Err(e) = keep_edits(state, edits, calls, run_folder) {
        notes.push(format!(
            "the run's edit calls were not added to edits.jsonl: {e}"
        ));
    }
    if let Err(e) = reports::write_run_artifacts(report_dir, file) {
        notes.push(format!("the run's transcript could not be written: {e}"));
    }
    if let Some(text) = divergence_md
        && let Err(e) = reports::write_run_file(report_dir, record, "divergence.md", text)
    {
        notes.push(format!("divergence.md could not be written: {e}"));
    }
    notes
}

/// When the workspace diff must be done: the run's wall-time limit, but at least a second from
/// now so a run that used its whole limit still gets a (possibly partial) diff.
fn diff_deadline(started: Instant, limits: &crate::agent::Limits) -> Instant {
    const MIN_DIFF_TIME: Duration = Duration::from_secs(1);
    const NO_LIMIT: Duration = Duration::from_secs(600);
    let end = started + limits.max_wall.unwrap_or(NO_LIMIT);
    end.max(Instant::now() + MIN_DIFF_TIME)
}

/// The provider of one run over the session's transport: the wire format, then retries with the
/// provider's shared in-flight limit (without waiting when every answer comes from a cassette,
/// so a replay retries exactly as the recording did).
fn provider_for(
    spec: crate::providers::ModelSpec,
    entry: &crate::providers::catalog::ProviderEntry,
    session: &Session,
    options: &RunOptions,
    state: &SuiteState,
) -> (Arc<dyn Provider>, Arc<RetryStats>) {
    let settings = ProviderSettings {
        openai_compat: Some(OpenAiCompat::from_config(&spec, &entry.compat)),
        ..Default::default()
    };
    let inner = session.provider(spec, settings);
    let in_process = matches!(session, Session::InProcess(_));
    let retry = if session.replays_only() {
        options.retry.clone().without_waiting()
    } else {
        options.retry.clone()
    };
    let retrying = Retrying::new(
        inner,
        retry,
        (!in_process).then(|| state.limiter(&entry.name, entry.max_in_flight)),
    );
    let stats = retrying.stats();
    (Arc::new(retrying), stats)
}

/// Why the oracle cannot run on `task`, with what to do about it.
fn oracle_error(task: &Task, e: &oracle::OracleError) -> String {
    match e {
        oracle::OracleError::NoReference => format!(
            "task `{}` has no reference solution for {}/{}: add {} (files laid over repo/) or {}",
            task.id,
            oracle::PROVIDER,
            oracle::REFERENCE_MODEL,
            task.dir
                .join(crate::tasks::solution::SOLUTION_DIR)
                .display(),
            task.dir
                .join(crate::tasks::solution::SOLUTION_SCRIPT)
                .display()
        ),
        other => other.to_string(),
    }
}

/// Notes in the record and tells the reporter what the session wrote (or did not).
fn report_finished(
    finished: Finished,
    record: &mut RunRecord,
    reporter: &dyn Reporter,
    index: usize,
) {
    match finished {
        Finished::Written(path) => reporter.event(&RunnerEvent::CassetteWritten { index, path }),
        Finished::Proposed(path) => {
            add_note(
                record,
                format!(
                    "re-recorded cassette written to {} for `{}`",
                    path.display(),
                    crate::cassettes::review::review_command_for(&path)
                ),
            );
            reporter.event(&RunnerEvent::CassetteProposed { index, path });
        }
        Finished::NotWritten(reason) => {
            add_note(record, format!("cassette not written: {reason}"));
            reporter.event(&RunnerEvent::CassetteNotWritten { index, reason });
        }
        Finished::Note(message) => {
            add_note(record, message.clone());
            reporter.event(&RunnerEvent::Notice { index, message });
        }
    }
}

/// Adds the run's edit calls to the report folder's edit corpus, and flushes it, so the corpus
/// holds every finished run; the same lines go to the run's own `edit-calls.jsonl`, from which a
/// resumed or merged report rebuilds its corpus.
fn keep_edits(
    state: &SuiteState,
    edits: &CorpusRecorder,
    calls: &[crate::agent::ToolCallRecord],
    run_folder: &Path,
) -> Result<(), String> {
    if edits.is_empty() {
        return Ok(());
    }
    let mut corpus = state.corpus.lock().unwrap_or_else(|e| e.into_inner());
    let Some(writer) = corpus.as_mut() else {
        return Err("edits.jsonl could not be created in the report folder".to_owned());
    };
    let records = edits.records(calls, writer).map_err(|e| e.to_string())?;
    for record in &records {
        writer.record(record).map_err(|e| e.to_string())?;
    }
    writer.flush().map_err(|e| e.to_string())?;
    crate::edits::corpus::write_run_edits(run_folder, &records).map_err(|e| e.to_string())
}

/// `value` with every secret `redactor` knows replaced in every string it holds (a round trip
/// through its JSON form; `value` as it is when there is nothing to redact).
fn redacted<T: serde::Serialize + serde::de::DeserializeOwned>(
    redactor: &crate::sandbox::secrets::Redactor,
    value: T,
) -> T {
    if redactor.is_empty() {
        return value;
    }
    let Ok(text) = serde_json::to_string(&value) else {
        return value;
    };
    // One scan of the text settles the common case: no secret anywhere.
    match redactor.redact_json(&text) {
        std::borrow::Cow::Borrowed(_) => value,
        std::borrow::Cow::Owned(redacted) => serde_json::from_str(&redacted).unwrap_or(value),
    }
}

/// Appends a line to the record's detail text.
fn add_note(record: &mut RunRecord, note: String) {
    match &mut record.detail {
        Some(detail) => {
            detail.push('\n');
            detail.push_str(&note);
        }
        None => record.detail = Some(note),
    }
}

/// The record of a run that could not start or crashed.
pub(crate) fn errored(run: &PlannedRun, kind: ErrorKind, reason: String) -> RunRecord {
    scoring::score_without_run(
        &run.task,
        ScoreInputs {
            provider: run.model.provider.clone(),
            model: run.model.model.clone(),
            epoch: run.epoch,
            edit_strategy: run.edit_strategy.clone(),
            error: Some(reason),
            error_kind: Some(kind),

            ..Default::default()
        },
    )
}

/// The record of a task that has no cassette to replay (no run was planned for it).
pub fn missing_cassette_record(task: &Task, tasks_dir: &Path, cassettes_dir: &Path) -> RunRecord {
    let folder = cassettes_dir.join(crate::cassettes::sanitize_component(&task.id));
    scoring::score_without_run(
        task,
        ScoreInputs {
            provider: "-".into(),
            model: "-".into(),
            epoch: 1,
            error: Some(format!(
                "no cassette recorded for task `{}` in {}; record one with `{}`",
                task.id,
                folder.display(),
                crate::cassettes::record_hint_in(
                    tasks_dir,
                    cassettes_dir,
                    &task.id,
                    "PROVIDER",
                    "MODEL"
                )
            )),
            error_kind: Some(ErrorKind::Cassette),

            ..Default::default()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::Sandbox;

    #[tokio::test]
    async fn a_prepared_run_that_never_starts_leaves_no_folder_even_one_to_keep() {
        let dir = tempfile::tempdir().unwrap();
        let suite = dir.path().join("tasks");
        std::fs::create_dir_all(suite.join("t/repo")).unwrap();
        std::fs::write(suite.join("t/repo/README.md"), "A fixture.\n").unwrap();
        std::fs::write(
            suite.join("t/task.yaml"),
            "id: t\nprompt: Do nothing.\nchecks:\n  - name: ok\n    run: \"true\"\n",
        )
        .unwrap();
        let task = Arc::new(crate::tasks::load_suite(&suite).unwrap().tasks.remove(0));
        let mut options =
            RunOptions::with_sandbox(dir.path().join("c"), dir.path().join("r"), Sandbox::none());
        options.keep_workspaces = true;
        let options = Arc::new(options);

        let unclaimed = prepare(task.clone(), options.clone()).await.unwrap();
        let (workspace, scratch) = {
            let (workspace, scratch, _) = unclaimed.parts.as_ref().unwrap();
            (workspace.path().to_path_buf(), scratch.path().to_path_buf())
        };
        assert!(workspace.join("README.md").is_file());
        assert!(scratch.is_dir());
        drop(unclaimed);
        assert!(!workspace.exists(), "{} was left", workspace.display());
        assert!(!scratch.exists(), "{} was left", scratch.display());

        // Claimed by its run, a workspace to keep is kept.
        let (claimed, scratch, jail) = prepare(task, options).await.unwrap().claim();
        assert_eq!(jail.root_if_confined(), None);
        drop(scratch);
        let kept = claimed.into_kept_path();
        assert!(kept.join("README.md").is_file());
        std::fs::remove_dir_all(kept.parent().unwrap()).unwrap();
    }
}
