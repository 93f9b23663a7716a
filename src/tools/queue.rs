//! The per-file mutation queue shared by `write` and `edit` (spec section 2): operations on the
//! same real path run one after another in call order; different files run in parallel.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One FIFO lock per real path. Cheap to clone; clones share the queues.
#[derive(Clone, Default)]
pub struct FileMutationQueue {
    locks: Arc<Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>>,
}

impl FileMutationQueue {
    /// The queue key: the real path if it exists, else the path as given (already absolute).
    pub fn key(path: &Path) -> PathBuf {
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
    }

    /// Takes a place in the queue for `path` now (call order), then runs `op` when it is its turn.
    ///
    /// The place is taken synchronously, before the returned future is first polled, so calls
    /// started in source order apply in source order even when they are awaited together.
    pub fn run<'a, T, F>(&self, path: &Path, op: F) -> impl Future<Output = T> + 'a
    where
        F: Future<Output = T> + 'a,
    {
        let lock = {
            let mut locks = self.locks.lock().expect("queue map poisoned");
            locks.entry(Self::key(path)).or_default().clone()
        };
        // tokio's Mutex is fair (FIFO), so waiters are served in the order they asked.
        let acquire = lock.clone().lock_owned();
        async move {
            let _guard = acquire.await;
            op.await
        }
    }
}
