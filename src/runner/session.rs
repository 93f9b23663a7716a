//! One run's cassette session: the small piece each cassette mode adds to a run.
//!
//! [`Session::open`] builds the transport the provider talks to (live, a recorder over live, a
//! player, or a re-recorder that replays the matched prefix and then goes live);
//! [`Session::findings`] says what a replay found once the agent has stopped (the divergence that
//! stopped it, or every difference a `continue` replay drove through, classified in conversation
//! terms); [`Session::finish`] writes what the mode writes (a cassette, a `.new` cassette for
//! review) and says so. The runner calls these three and knows nothing else of the modes.
//!
//! An in-process model (the oracle, [`crate::providers::oracle`]) has a session of its own that
//! neither reads nor writes a cassette: it needs none to run again the same way.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::agent::StopCause;
use crate::cassettes::divergence::{self, Difference, DivergenceTracker};
use crate::cassettes::format::{
    BASH_OUTPUT_DIR_PLACEHOLDER, Cassette, CassetteHeader, SCRATCH_PLACEHOLDER,
};
use crate::cassettes::normalize::{PathMap, Rules};
use crate::cassettes::recorder::write_cassette;
use crate::cassettes::{
    CassetteError, CassettePlan, OnDivergence, Player, Recorder, Rerecorder, WORKSPACE_PLACEHOLDER,
};
use crate::providers::live::LiveTransport;
use crate::providers::transport::Transport;
use crate::providers::{ModelSpec, Provider, ProviderSettings};
use crate::record::{ErrorKind, Outcome, RunRecord};
use crate::sandbox::Scratch;
use crate::scoring::ReplayInputs;

use super::options::RunOptions;
use super::plan::PlannedRun;

/// The transport of one run, kept to ask it afterwards.
pub(super) enum Session {
    Live(Arc<dyn Transport>),
    Record(Recorder),
    /// A replay; `preview` when it stands in for a re-recording under `CI` (nothing is written,
    /// the run says what would be re-recorded).
    Replay {
        player: Player,
        preview: bool,
    },
    Rerecord(Rerecorder),
    /// An in-process model: no transport, no cassette, whatever the mode.
    InProcess(Arc<dyn Provider>),
}

/// What a replay found once the agent stopped.
#[derive(Debug, Default)]
pub(super) struct Findings {
    /// The divergence that ended the conversation (a `stop` replay, or a request past the end
    /// of the cassette): the run is `diverged`.
    pub stopped: Option<String>,
    /// For the record: the differences, counted and summarised, and the recorded outcome.
    pub replay: Option<ReplayInputs>,
    /// Every difference, for `divergence.md`.
    pub differences: Vec<Difference>,
}

/// An error opening a session: the record's error kind and the message.
pub(super) type OpenError = (ErrorKind, String);

/// The placeholders of a run's host paths: the workspace, bash's output folder, and the rest of
/// the run's scratch folders (the commands' `HOME` and `TMPDIR`).
pub(super) fn path_map(workspace: &Path, scratch: &Scratch, placeholder: &str) -> PathMap {
    PathMap::new()
        .with(workspace, placeholder)
        .with(scratch.logs(), BASH_OUTPUT_DIR_PLACEHOLDER)
        .with(scratch.path(), SCRATCH_PLACEHOLDER)
}

impl Session {
    /// The session for `plan`. `rules` apply at compare time (made only for a replay: compiling
    /// them is most of a live run's setup); `api_key` is scanned for before a
    /// cassette is written; `shared` is the suite's one HTTP client, made by the first run that
    /// goes live (its connection pool serves every run: no handshake per run).
    pub(super) fn open(
        plan: CassettePlan,
        run: &PlannedRun,
        options: &RunOptions,
        rules: impl Fn() -> Result<Rules, String>,
        (workspace, scratch): (&Path, &Scratch),
        api_key: &Option<String>,
        shared: &OnceLock<Arc<LiveTransport>>,
    ) -> Result<Session, OpenError> {
        let secrets: Vec<String> = api_key.iter().cloned().collect();
        let live = || -> Result<Arc<dyn Transport>, OpenError> {
            if let Some(t) = shared.get() {
                return Ok(t.clone());
            }
            let made =
                Arc::new(LiveTransport::new().map_err(|e| (ErrorKind::Setup, e.to_string()))?);
            Ok(shared.get_or_init(|| made).clone())
        };
        let replay = |policy| -> Result<Player, OpenError> {
            let rules = rules().map_err(|e| (ErrorKind::Setup, e))?;
            let cassette = Cassette::load(&run.cassette).map_err(|e| {
                let e = match e {
                    // The file name only hints at the ids; the hint should name the real ones and
                    // the folders the user ran with.
                    CassetteError::Missing { .. } => CassetteError::Missing {
                        path: run.cassette.clone(),
                        hint: format!("record it with `{}`", record_hint(run, options)),
                    },
                    other => other,
                };
                (ErrorKind::Cassette, e.to_string())
            })?;
            let h = &cassette.header;
            if crate::cassettes::cassette_path(
                &options.cassettes_dir,
                &run.task.id,
                &h.provider,
                &h.model,
            ) != run.cassette
            {
                return Err((
                    ErrorKind::Cassette,
                    format!(
                        "cassette `{}` records {}/{} for task `{}`, not {} for `{}`\nhint: rename the file or fix its header (`harness cassettes check` lists such files)",
                        run.cassette.display(),
                        h.provider,
                        h.model,
                        h.task,
                        run.model,
                        run.task.id
                    ),
                ));
            }
            let paths = path_map(
                workspace,
                scratch,
                &cassette.header.workspace_placeholder.clone(),
            );
            Ok(Player::from_cassette(cassette, &run.cassette, rules, paths).with_policy(policy))
        };
        // A replay answers from the file alone, so a stream recorded short is the file's fault,
        // said before the run starts (a re-recording goes live there instead, which mends it).
        let whole = |player: Player| -> Result<Player, OpenError> {
            match crate::cassettes::check::broken_streams(player.cassette()).first() {
                None => Ok(player),
                Some(broken) => Err((
                    crate::record::ErrorKind::Cassette,
                    format!(
                        "cassette `{}` is broken: {broken}\nhint: record it again with `{}`",
                        run.cassette.display(),
                        record_hint(run, options)
                    ),
                )),
            }
        };
        Ok(match plan {
            CassettePlan::Live => Session::Live(live()?),
            CassettePlan::Record => Session::Record(Recorder::new(
                live()?,
                path_map(workspace, scratch, WORKSPACE_PLACEHOLDER),
                secrets,
            )),
            CassettePlan::Replay => Session::Replay {
                player: whole(replay(options.on_divergence)?)?,
                preview: false,
            },
            CassettePlan::Rerecord if options.ci => Session::Replay {
                player: whole(replay(OnDivergence::Stop)?)?,
                preview: true,
            },
            CassettePlan::Rerecord => {
                let recorder = Recorder::new(
                    live()?,
                    path_map(workspace, scratch, WORKSPACE_PLACEHOLDER),
                    secrets,
                );
                if run.cassette.exists() {
                    Session::Rerecord(Rerecorder::new(replay(OnDivergence::Stop)?, recorder))
                } else {
                    // Nothing recorded yet: the whole conversation is new.
                    Session::Record(recorder)
                }
            }
        })
    }

    /// The provider of the run: the in-process model, or the wire format of `spec` (with
    /// `settings`) over the session's transport.
    pub(super) fn provider(
        &self,
        spec: ModelSpec,
        settings: ProviderSettings,
    ) -> Arc<dyn Provider> {
        let transport: Arc<dyn Transport> = match self {
            Session::InProcess(provider) => return provider.clone(),
            Session::Live(t) => t.clone(),
            Session::Record(r) => Arc::new(r.clone()),
            Session::Replay { player, .. } => Arc::new(player.clone()),
            Session::Rerecord(r) => Arc::new(r.clone()),
        };
        crate::providers::build_with(spec, transport, settings)
    }

    /// Whether every answer comes without a network (retries then need no waiting, and no
    /// share of the provider's in-flight limit).
    pub(super) fn replays_only(&self) -> bool {
        matches!(self, Session::Replay { .. } | Session::InProcess(_))
    }

    /// The player of a replay or of a re-recording's prefix.
    fn player(&self) -> Option<&Player> {
        match self {
            Session::Replay { player, .. } => Some(player),
            Session::Rerecord(r) => Some(r.player()),
            Session::Live(_) | Session::Record(_) | Session::InProcess(_) => None,
        }
    }

    /// Said before the run starts: the replay runs with other settings (edit strategy, sandbox
    /// tier) than the recording.
    pub(super) fn notices(
        &self,
        tool_profile: &str,
        edit_strategy: &str,
        sandbox: &str,
    ) -> Vec<String> {
        let Some(player) = self.player() else {
            return Vec::new();
        };
        let header = &player.cassette().header;
        divergence::setup_mismatch(
            divergence::ReplaySetup {
                tool_profile: &header.tool_profile,
                edit_strategy: &header.edit_strategy,
                sandbox: header.sandbox.as_deref(),
            },
            divergence::ReplaySetup {
                tool_profile,
                edit_strategy,
                sandbox: Some(sandbox),
            },
        )
        .into_iter()
        .collect()
    }

    /// What the replay found, once the agent stopped with `stop`.
    pub(super) fn findings(&self, stop: &StopCause) -> Findings {
        let (player, stops) = match self {
            Session::Replay { player, .. } => (player, player_policy_stops(player)),
            // A re-recording goes live at the divergence: the new conversation is the verdict.
            Session::Rerecord(_)
            | Session::Live(_)
            | Session::Record(_)
            | Session::InProcess(_) => {
                return Findings::default();
            }
        };
        let cassette = player.cassette();
        let mut tracker = DivergenceTracker::new(cassette.header.api);
        let mut differences = Vec::new();
        for m in player.mismatches() {
            differences.extend(tracker.compare(m.interaction, &m.recorded, &m.now));
        }
        if let Some(index) = player.extra_request() {
            differences.push(tracker.extra_request(index, cassette.interactions.len()));
        }
        let unused = player.unused_interactions();
        // A provider failure (the cassette's own error included) explains a short run; any other
        // end with recorded interactions left means the recorded conversation went on.
        let ran_out = !matches!(stop, StopCause::Provider(_)) && unused > 0;
        if ran_out {
            differences
                .extend(tracker.missing_requests(player.served(), cassette.interactions.len()));
        }
        // The first line says where in conversation terms; then the JSON location and diff.
        let stopped_at = |d: &crate::cassettes::Divergence| {
            let what = divergence::summary_line(&differences);
            let first = if d.interaction >= d.total || what.is_empty() {
                d.summary()
            } else {
                format!(
                    "request {} of {} differs from the cassette: {what}",
                    d.interaction + 1,
                    d.total
                )
            };
            format!("{first}\ncassette `{}`: {d}", player.path().display())
        };
        let stopped = match (player.divergence(), stops) {
            (Some(d), true) => Some(stopped_at(&d)),
            (Some(d), false) if player.extra_request().is_some() => Some(stopped_at(&d)),
            _ if ran_out && stops => Some(format!(
                "the run ended after {} requests but the cassette `{}` has {} more; the recorded conversation went on",
                player.served(),
                player.path().display(),
                unused
            )),
            _ => None,
        };
        let replay = ReplayInputs {
            divergences: u32::try_from(differences.len()).unwrap_or(u32::MAX),
            first_kind: divergence::first_kind(&differences),
            first_turn: divergence::first_turn(&differences),
            summary: (!differences.is_empty()).then(|| divergence::summary_line(&differences)),
            recorded: cassette.header.outcome.clone(),
            unused_interactions: u32::try_from(unused).unwrap_or(u32::MAX),
        };
        Findings {
            stopped,
            replay: Some(replay),
            differences,
        }
    }

    /// Writes what the mode writes once the run is scored, and says what happened: a cassette
    /// written (record), a `.new` cassette proposed (rerecord), or why nothing was written.
    pub(super) fn finish(
        &self,
        mut header: CassetteHeader,
        record: &mut RunRecord,
        stop: &StopCause,
        run: &PlannedRun,
        options: &RunOptions,
    ) -> Option<Finished> {
        header.outcome = Some(crate::scoring::recorded_outcome(record));
        let complete = matches!(
            stop,
            StopCause::Completed | StopCause::Interrupted | StopCause::Limit(_)
        );
        match self {
            Session::Live(_) => None,
            Session::InProcess(_) => {
                use crate::cassettes::CassetteMode::{Record, Rerecord};
                matches!(options.mode, Record | Rerecord).then(|| {
                    Finished::Note(format!(
                        "no cassette for {}: it runs in-process and needs none to run again",
                        run.model
                    ))
                })
            }
            Session::Replay { player, preview } => {
                if !*preview {
                    return None;
                }
                let d = player.divergence();
                let unused = player.unused_interactions();
                Some(Finished::Note(match d {
                    Some(d) => format!(
                        "under CI nothing is re-recorded: `{}` would be re-recorded from request {} ({})",
                        run.cassette.display(),
                        d.interaction + 1,
                        d.summary()
                    ),
                    None if unused > 0 => format!(
                        "under CI nothing is re-recorded: `{}` would be re-recorded (the run used {} of its {} interactions)",
                        run.cassette.display(),
                        player.served(),
                        player.served() + unused
                    ),
                    None => format!(
                        "`{}` replays clean; nothing to re-record",
                        run.cassette.display()
                    ),
                }))
            }
            Session::Record(recorder) => {
                // In rerecord mode a cassette that did not exist is proposed, not written.
                let proposed = options.mode == crate::cassettes::CassetteMode::Rerecord;
                let target = if proposed {
                    pending_path(&run.cassette)
                } else {
                    run.cassette.clone()
                };
                if !complete {
                    return Some(Finished::NotWritten(format!(
                        "the run ended with {}, so its cassette was not written",
                        stop.label()
                    )));
                }
                Some(match recorder.finish(header, &target) {
                    Ok(path) if proposed => Finished::Proposed(path),
                    Ok(path) => Finished::Written(path),
                    Err(e) => fail_run(record, e),
                })
            }
            Session::Rerecord(rerecorder) => {
                if !rerecorder.changed() {
                    return Some(Finished::Note(format!(
                        "`{}` replays clean; nothing to re-record",
                        run.cassette.display()
                    )));
                }
                if !complete {
                    return Some(Finished::NotWritten(format!(
                        "the run ended with {}, so nothing was re-recorded and `{}` is unchanged",
                        stop.label(),
                        run.cassette.display()
                    )));
                }
                let cassette = rerecorder.recorder().cassette(header);
                let target = pending_path(&run.cassette);
                Some(
                    match write_cassette(&cassette, &target, &rerecorder.recorder().secrets()) {
                        Ok(()) => Finished::Proposed(target),
                        Err(e) => fail_run(record, e),
                    },
                )
            }
        }
    }
}

/// Whether the player stops at the first divergence.
fn player_policy_stops(player: &Player) -> bool {
    player.policy() == OnDivergence::Stop
}

/// A cassette write that failed (a secret found, the disk full) fails a run that had passed: the
/// recording it was made for is lost, which is an infrastructure error.
fn fail_run(record: &mut RunRecord, e: CassetteError) -> Finished {
    let reason = e.to_string();
    if record.outcome != Outcome::Error {
        record.outcome = Outcome::Error;
        record.error_kind = Some(ErrorKind::Cassette);
        record.reason = format!(
            "error: cassette not written: {}",
            reason.lines().next().unwrap_or_default()
        );
    }
    Finished::NotWritten(reason)
}

/// What [`Session::finish`] did.
#[derive(Debug)]
pub(super) enum Finished {
    Written(PathBuf),
    /// A `.new` cassette, waiting for `harness review`.
    Proposed(PathBuf),
    NotWritten(String),
    Note(String),
}

/// `NAME.yaml.new`, where a re-recorded cassette waits for review.
pub fn pending_path(cassette: &Path) -> PathBuf {
    let mut name = cassette.as_os_str().to_owned();
    name.push(".new");
    PathBuf::from(name)
}

/// The command that records `run`'s cassette, with the folders the user ran with.
pub(super) fn record_hint(run: &PlannedRun, options: &RunOptions) -> String {
    crate::cassettes::record_hint_in(
        &options.tasks_dir,
        &options.cassettes_dir,
        &run.task.id,
        &run.model.provider,
        &run.model.model,
    )
}
