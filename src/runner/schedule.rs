//! Running the planned runs of a suite in parallel: at most `jobs` at once, in plan order, each
//! run's outcome settled as it ends; an interrupt starts nothing more and cancels what runs. A
//! panic or a failure to start is that run's `error` record, never the suite's. The next run to
//! start has its workspace and sandbox made while it waits for its place, and a run gives its
//! place back once scored ([`super::place`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;
use tokio::task::{JoinError, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::edits::CorpusWriter;
use crate::events::{Reporter, RunnerEvent};
use crate::record::{ErrorKind, RunRecord};

use super::options::RunOptions;
use super::place::Place;
use super::plan::PlannedRun;
use super::run::{self, errored};
use super::state::SuiteState;

/// Runs every planned run, at most `options.jobs` at once; returns the records in plan order.
pub async fn execute(
    planned: Vec<PlannedRun>,
    options: &RunOptions,
    reporter: Arc<dyn Reporter>,
) -> Vec<RunRecord> {
    execute_until(planned, options, reporter, CancellationToken::new())
        .await
        .records
}

/// What [`execute_until`] got done.
#[derive(Debug, Default)]
pub struct Execution {
    /// The records of the runs that finished (or were skipped for the budget), in plan order.
    pub records: Vec<RunRecord>,
    /// Runs that had started when the stop came: cancelled, their processes killed, their
    /// workspaces removed, nothing of them kept.
    pub interrupted: usize,
    /// Runs the stop came before.
    pub not_started: usize,
    /// The removal of the folders the runs left for later ones, under way.
    pub cleanup: Cleanup,
}

/// The removal of the folders a suite's runs gave back for later ones
/// ([`crate::workspace::remove_idle`], [`crate::sandbox::remove_idle_scratch`]), on a thread of
/// its own, so that the suite's reports are written meanwhile: over by [`Cleanup::done`], or at
/// the latest when dropped.
#[derive(Debug, Default)]
pub struct Cleanup(Option<std::thread::JoinHandle<()>>);

impl Cleanup {
    /// Starts removing the idle folders (at once, here, when no thread can be started).
    fn start() -> Cleanup {
        fn remove() {
            crate::workspace::remove_idle();
            crate::sandbox::remove_idle_scratch();
        }
        match std::thread::Builder::new()
            .name("harness-cleanup".to_owned())
            .spawn(remove)
        {
            Ok(handle) => Cleanup(Some(handle)),
            Err(_) => {
                remove();
                Cleanup(None)
            }
        }
    }

    /// Waits, off the async workers, until the folders are gone.
    pub async fn done(mut self) {
        if let Some(handle) = self.0.take() {
            let _joined = tokio::task::spawn_blocking(move || handle.join()).await;
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            let _joined = handle.join();
        }
    }
}

/// How one run's task ended.
enum Ended {
    Finished(Box<RunRecord>),
    Interrupted,
    NotStarted,
}

/// [`execute`] until `stop` is cancelled (Ctrl-C, SIGTERM): from then on no run starts, and
/// every running one is cancelled at once (its tools' cancellation fires, the agent loop and
/// the checks are dropped, which kills every process they started through the sandbox and
/// removes the workspace and scratch folders) and reported as neither finished nor recorded.
pub async fn execute_until(
    planned: Vec<PlannedRun>,
    options: &RunOptions,
    reporter: Arc<dyn Reporter>,
    stop: CancellationToken,
) -> Execution {
    reporter.event(&RunnerEvent::SuiteStarted {
        runs: planned.len(),
    });
    let semaphore = Arc::new(Semaphore::new(options.jobs.max(1)));
    let finishing = Arc::new(Semaphore::new(options.jobs.max(1)));
    let options = Arc::new(options.clone());
    let state = Arc::new(SuiteState {
        limiters: Mutex::new(HashMap::new()),
        spent: Mutex::new(0.0),
        corpus: Mutex::new(CorpusWriter::append(&options.report_dir).ok()),
        interrupt: stop.clone(),
        live: std::sync::OnceLock::new(),
        rules: Mutex::new(HashMap::new()),
    });
    // Each run's outcome is put in its place as soon as its task ends, so that a finished run
    // holds only its record: a task's cell (sized for the whole run's future) is freed when it
    // is joined, and at most `jobs` tasks are alive at once, however many runs are planned.
    let mut ended: Vec<Option<Ended>> = Vec::new();
    ended.resize_with(planned.len(), || None);
    let mut running = JoinSet::new();
    let mut started: HashMap<tokio::task::Id, (usize, PlannedRun)> = HashMap::new();
    let settle = |done: Result<(tokio::task::Id, Ended), JoinError>,
                  started: &mut HashMap<tokio::task::Id, (usize, PlannedRun)>,
                  ended: &mut Vec<Option<Ended>>| {
        let (index, outcome) = match done {
            Ok((id, outcome)) => (started.remove(&id).expect("a started run").0, outcome),
            // A panic in one run is that run's error, never the suite's.
            Err(join) => {
                let (index, run) = started.remove(&join.id()).expect("a started run");
                let record = errored(
                    &run,
                    ErrorKind::Setup,
                    format!("internal error: the run panicked: {join}"),
                );
                reporter.event(&RunnerEvent::RunFinished {
                    index,
                    record: Box::new(record.clone()),
                });
                (index, Ended::Finished(Box::new(record)))
            }
        };
        ended[index] = Some(outcome);
    };
    for (index, run) in planned.into_iter().enumerate() {
        // The run's folders and sandbox are made while it waits for its place: its first
        // command waited for its sandbox otherwise, 1.6–1.8 ms of every run on
        // `sandbox_overhead`'s workload. Dropped unused (a stop), they go.
        let prepared = run::Ahead::start(run.task.clone(), options.clone());
        // Taking the place here, before spawning, starts the runs in plan order; runs that end
        // while this one waits for its place are settled meanwhile. A stop starts nothing more.
        let permit = loop {
            tokio::select! {
                biased;
                () = stop.cancelled() => break None,
                permit = semaphore.clone().acquire_owned() => break Some(permit.expect("semaphore closed")),
                Some(done) = running.join_next_with_id() => settle(done, &mut started, &mut ended),
            }
        };
        let Some(permit) = permit else { break };
        let options = options.clone();
        let reporter = reporter.clone();
        let state = state.clone();
        let fallback = run.clone();
        let stop = stop.clone();
        let mut place = Place::new(permit, finishing.clone());
        let handle = running.spawn(async move {
            if stop.is_cancelled() {
                return Ended::NotStarted;
            }
            if let Some(budget) = options.max_cost {
                let spent = *state.spent.lock().expect("spent");
                if spent >= budget {
                    let mut record = crate::record::RunRecord::skipped(
                        &run.task.id,
                        &run.model.provider,
                        &run.model.model,
                        run.epoch,
                        &format!(
                            "not started: the --max-cost budget of ${budget:.2} is spent (${spent:.2})"
                        ),
                    );
                    record.set_edit_strategy(&run.edit_strategy);
                    return Ended::Finished(Box::new(record));
                }
            }
            reporter.event(&RunnerEvent::RunStarted {
                index,
                label: run.label(),
            });
            // A run starts from nothing: an earlier attempt's folder (a resumed report) goes.
            let _fresh = std::fs::remove_dir_all(options.report_dir.join(run.run_dir()));
            let record = tokio::select! {
                biased;
                () = stop.cancelled() => return Ended::Interrupted,
                record = run::run_one(index, &run, &options, &state, reporter.clone(), &mut place, prepared.take()) => record,
            };
            // Said as each run ends, not in plan order: progress must not wait for slow runs.
            reporter.event(&RunnerEvent::RunFinished {
                index,
                record: Box::new(record.clone()),
            });
            Ended::Finished(Box::new(record))
        });
        started.insert(handle.id(), (index, fallback));
    }
    while let Some(done) = running.join_next_with_id().await {
        settle(done, &mut started, &mut ended);
    }
    // The folders the runs gave back for later ones: no run is left to take them. They go
    // while the caller writes its reports.
    let mut out = Execution {
        cleanup: Cleanup::start(),
        ..Execution::default()
    };
    for outcome in ended {
        match outcome {
            Some(Ended::Finished(record)) => out.records.push(*record),
            Some(Ended::Interrupted) => out.interrupted += 1,
            Some(Ended::NotStarted) | None => out.not_started += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_idle_folders_are_gone_once_the_cleanup_is_done() {
        // Folders in a base of their own: no other test's run can take them.
        let base = tempfile::tempdir().unwrap();
        let scratch = crate::sandbox::Scratch::new_in(base.path()).unwrap();
        let root = scratch.path().to_path_buf();
        scratch.recycle(true);
        assert!(root.exists(), "given back, kept for a later run");
        Cleanup::start().done().await;
        assert!(!root.exists(), "{} is left", root.display());
        // Dropped without waiting: gone all the same by then.
        let scratch = crate::sandbox::Scratch::new_in(base.path()).unwrap();
        let root = scratch.path().to_path_buf();
        scratch.recycle(true);
        drop(Cleanup::start());
        assert!(!root.exists(), "{} is left", root.display());
    }
}
