//! A run's place among the `--jobs` runs in flight, and among the runs finishing.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A run's place among the `jobs` in flight. The run holds it while it uses the model and its
/// sandbox, and gives it back once it is scored ([`Place::leave`]), before it writes its files
/// and removes its folders: the next run starts meanwhile, on the cores the finishing one leaves
/// idle while the file system works (a twentieth of a run's time on `sandbox_overhead`'s workload,
/// `benches/README.md`). At most `jobs` runs finish at once, so finishing runs cannot pile up.
pub(super) struct Place {
    running: Option<OwnedSemaphorePermit>,
    finishing: Arc<Semaphore>,
    finish: Option<OwnedSemaphorePermit>,
}

impl Place {
    pub(super) fn new(running: OwnedSemaphorePermit, finishing: Arc<Semaphore>) -> Place {
        Place {
            running: Some(running),
            finishing,
            finish: None,
        }
    }

    /// Gives the place to the next run, once a place among the finishing runs is had.
    pub(super) async fn leave(&mut self) {
        if self.running.is_none() {
            return;
        }
        let finish = self.finishing.clone().acquire_owned().await;
        self.finish = Some(finish.expect("the finishing semaphore is never closed"));
        self.running = None;
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_run_that_leaves_its_place_lets_the_next_start_and_at_most_jobs_finish_at_once() {
        let (running, finishing) = (Arc::new(Semaphore::new(1)), Arc::new(Semaphore::new(1)));
        let take = || running.clone().try_acquire_owned();
        let mut first = Place::new(take().expect("a free place"), finishing.clone());
        assert!(take().is_err(), "one place for one job");
        first.leave().await;
        // Left, the first run is finishing: the next one starts at once.
        let mut second = Place::new(take().expect("the place left"), finishing.clone());
        // Leaving twice gives back nothing more.
        first.leave().await;
        assert!(take().is_err());
        // The second cannot leave while the first still finishes: one finishing run per job.
        let waited = tokio::time::timeout(Duration::from_millis(50), second.leave()).await;
        assert!(waited.is_err(), "left while the other run was finishing");
        assert!(
            take().is_err(),
            "a run that could not leave keeps its place"
        );
        drop(first);
        second.leave().await;
        assert!(take().is_ok());
    }
}
