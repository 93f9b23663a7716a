//! A per-provider limit on requests in flight that backs off when the provider says 429.
//!
//! The limit starts at the configured maximum. A rate-limited answer halves it (never below 1);
//! every `max` successful requests in a row raise it by one again, up to the maximum (additive
//! increase, multiplicative decrease, as TCP does), so that hundreds of runs against one
//! rate-limited provider settle at the rate it allows instead of storming it.

use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

#[derive(Debug)]
struct State {
    limit: usize,
    in_flight: usize,
    successes: usize,
    peak_in_flight: usize,
}

/// Shared by every run that talks to one provider.
#[derive(Debug)]
pub struct Limiter {
    max: usize,
    state: Mutex<State>,
    freed: Notify,
}

/// A place in flight; released on drop.
pub struct Permit {
    limiter: Arc<Limiter>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        {
            let mut state = self.limiter.state.lock().expect("limiter state");
            state.in_flight -= 1;
        }
        self.limiter.freed.notify_waiters();
    }
}

impl Limiter {
    /// A limiter allowing at most `max` requests in flight (at least 1).
    pub fn new(max: usize) -> Arc<Self> {
        let max = max.max(1);
        Arc::new(Limiter {
            max,
            state: Mutex::new(State {
                limit: max,
                in_flight: 0,
                successes: 0,
                peak_in_flight: 0,
            }),
            freed: Notify::new(),
        })
    }

    /// Waits for a place in flight.
    pub async fn acquire(self: &Arc<Self>) -> Permit {
        loop {
            // Register interest before checking, so a release between the check and the wait
            // is not missed.
            let notified = self.freed.notified();
            {
                let mut state = self.state.lock().expect("limiter state");
                if state.in_flight < state.limit {
                    state.in_flight += 1;
                    state.peak_in_flight = state.peak_in_flight.max(state.in_flight);
                    return Permit {
                        limiter: self.clone(),
                    };
                }
            }
            notified.await;
        }
    }

    /// The provider answered normally: after enough successes, allow one more in flight.
    pub fn on_success(&self) {
        let mut state = self.state.lock().expect("limiter state");
        state.successes += 1;
        if state.limit < self.max && state.successes >= state.limit {
            state.limit += 1;
            state.successes = 0;
            drop(state);
            self.freed.notify_waiters();
        }
    }

    /// The provider said 429: halve the limit.
    pub fn on_rate_limited(&self) {
        let mut state = self.state.lock().expect("limiter state");
        state.limit = (state.limit / 2).max(1);
        state.successes = 0;
    }

    /// The current limit.
    pub fn limit(&self) -> usize {
        self.state.lock().expect("limiter state").limit
    }

    /// The most requests ever in flight at once.
    pub fn peak_in_flight(&self) -> usize {
        self.state.lock().expect("limiter state").peak_in_flight
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn never_more_than_the_limit_in_flight() {
        let limiter = Limiter::new(3);
        let current = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let mut handles = Vec::new();
        for _ in 0..20 {
            let limiter = limiter.clone();
            let current = current.clone();
            let peak = peak.clone();
            handles.push(tokio::spawn(async move {
                let _permit = limiter.acquire().await;
                let now = current.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(5)).await;
                current.fetch_sub(1, Ordering::SeqCst);
            }));
        }
        for h in handles {
            h.await.unwrap();
        }
        assert_eq!(peak.load(Ordering::SeqCst), 3);
        assert_eq!(limiter.peak_in_flight(), 3);
    }

    #[test]
    fn halves_on_429_and_recovers_additively() {
        let limiter = Limiter::new(8);
        limiter.on_rate_limited();
        assert_eq!(limiter.limit(), 4);
        limiter.on_rate_limited();
        limiter.on_rate_limited();
        limiter.on_rate_limited();
        assert_eq!(limiter.limit(), 1, "never below one");
        limiter.on_success();
        assert_eq!(limiter.limit(), 2);
        limiter.on_success();
        assert_eq!(limiter.limit(), 2, "needs `limit` successes to grow again");
        limiter.on_success();
        assert_eq!(limiter.limit(), 3);
    }
}
