//! Retries with exponential backoff and jitter, in one place, around any [`Provider`].
//!
//! Only retryable failures are retried (rate limited, overloaded, server errors, connection
//! failures, cut or stalled streams), whether they came as an HTTP status or as an error event
//! inside a streamed reply; authentication, invalid requests and context-too-long fail at once.
//! A server's `Retry-After` wins over the computed delay; one longer than the cap is not waited
//! for, and the error returned says so. Each attempt holds a place in the provider's
//! [`Limiter`] while it is in flight, and a 429 shrinks that limit. Retrying above the
//! transport means a recording keeps every attempt, so a replay retries the same way.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use rand::Rng;

use super::limiter::Limiter;
use super::{ModelSpec, Provider, ProviderError, RequestOptions};
use crate::conversation::{AssistantMessage, Context};
use crate::record::ErrorKind;

/// When and how often to retry.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (so `max_retries + 1` attempts at most).
    pub max_retries: u32,
    /// Delay before the first retry; doubled for each further one.
    pub base_delay: Duration,
    /// No computed delay exceeds this (a server's `Retry-After` may, up to `max_retry_after`).
    pub max_delay: Duration,
    /// A `Retry-After` longer than this is not waited for: the error is returned instead.
    pub max_retry_after: Duration,
    /// Retry at once instead of sleeping (replaying a cassette: the recorded answers are there).
    pub no_wait: bool,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
            no_wait: false,
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..Default::default()
        }
    }

    /// The same policy, retrying without sleeping.
    pub fn without_waiting(mut self) -> Self {
        self.no_wait = true;
        self
    }

    /// The delay before retry number `retry` (0-based) after `error`, or `None` to give up.
    pub fn delay(&self, retry: u32, error: &ProviderError, jitter: f64) -> Option<Duration> {
        if retry >= self.max_retries || !error.is_retryable() {
            return None;
        }
        if self.no_wait {
            return Some(Duration::ZERO);
        }
        if let ProviderError::RateLimited {
            retry_after: Some(after),
            ..
        } = error
        {
            return (*after <= self.max_retry_after).then_some(*after);
        }
        let exp = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(retry))
            .min(self.max_delay);
        // Full jitter on the upper half: between half and all of the exponential delay.
        Some(exp.mul_f64(0.5 + 0.5 * jitter.clamp(0.0, 1.0)))
    }

    /// `error` as returned when [`RetryPolicy::delay`] gave up on it at retry number `retry`:
    /// when the only reason was a `Retry-After` longer than [`RetryPolicy::max_retry_after`],
    /// its message says so (else the run's reason would read as if retrying had been tried).
    pub fn gave_up(&self, retry: u32, error: ProviderError) -> ProviderError {
        match error {
            ProviderError::RateLimited {
                status,
                message,
                retry_after: Some(after),
            } if retry < self.max_retries && !self.no_wait && after > self.max_retry_after => {
                ProviderError::RateLimited {
                    status,
                    message: format!(
                        "{message}; not retried: the server asked to wait {} (Retry-After), \
                         more than the {} the harness waits at most",
                        seconds(after),
                        seconds(self.max_retry_after)
                    ),
                    retry_after: Some(after),
                }
            }
            other => other,
        }
    }
}

/// `12 s`, `1.5 s`.
fn seconds(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// Counts of what the retry layer saw, shared with the runner for the reports.
#[derive(Debug, Default)]
pub struct RetryStats {
    attempts: AtomicU64,
    retries: AtomicU64,
    by_kind: Mutex<Vec<(ErrorKind, u64)>>,
    delays: Mutex<Vec<Duration>>,
}

impl RetryStats {
    /// Requests sent, retries included.
    pub fn attempts(&self) -> u64 {
        self.attempts.load(Ordering::Relaxed)
    }

    /// Retries made.
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }

    /// Retried failures by kind (`rate_limited`, `server_error`, ...).
    pub fn by_kind(&self) -> Vec<(ErrorKind, u64)> {
        self.by_kind.lock().expect("retry stats").clone()
    }

    /// The wait before each retry, in order (zero when not waiting, as in a replay).
    pub fn delays(&self) -> Vec<Duration> {
        self.delays.lock().expect("retry stats").clone()
    }

    fn note_retry(&self, kind: ErrorKind, delay: Duration) {
        self.delays.lock().expect("retry stats").push(delay);
        self.retries.fetch_add(1, Ordering::Relaxed);
        let mut by_kind = self.by_kind.lock().expect("retry stats");
        match by_kind.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => by_kind.push((kind, 1)),
        }
    }
}

/// A provider that retries and limits the requests of the provider it wraps.
pub struct Retrying {
    inner: Arc<dyn Provider>,
    policy: RetryPolicy,
    limiter: Option<Arc<Limiter>>,
    stats: Arc<RetryStats>,
}

impl Retrying {
    pub fn new(
        inner: Arc<dyn Provider>,
        policy: RetryPolicy,
        limiter: Option<Arc<Limiter>>,
    ) -> Self {
        Retrying {
            inner,
            policy,
            limiter,
            stats: Arc::default(),
        }
    }

    /// What this wrapper has seen so far.
    pub fn stats(&self) -> Arc<RetryStats> {
        self.stats.clone()
    }
}

#[async_trait]
impl Provider for Retrying {
    fn spec(&self) -> &ModelSpec {
        self.inner.spec()
    }

    async fn complete(
        &self,
        context: &Context,
        options: &RequestOptions,
    ) -> Result<AssistantMessage, ProviderError> {
        let mut retry = 0;
        loop {
            self.stats.attempts.fetch_add(1, Ordering::Relaxed);
            let result = {
                let _permit = match &self.limiter {
                    Some(limiter) => Some(limiter.acquire().await),
                    None => None,
                };
                self.inner.complete(context, options).await
            };
            match result {
                Ok(reply) => {
                    if let Some(limiter) = &self.limiter {
                        limiter.on_success();
                    }
                    return Ok(reply);
                }
                Err(error) => {
                    if let (Some(limiter), ProviderError::RateLimited { .. }) =
                        (&self.limiter, &error)
                    {
                        limiter.on_rate_limited();
                    }
                    let jitter = rand::thread_rng().r#gen::<f64>();
                    let Some(delay) = self.policy.delay(retry, &error, jitter) else {
                        return Err(self.policy.gave_up(retry, error));
                    };
                    self.stats.note_retry(error.kind(), delay);
                    tokio::time::sleep(delay).await;
                    retry += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;
    use crate::conversation::{StopReason, Usage};
    use crate::providers::ApiKind;

    /// A provider answering from a queue of results, for testing the wrapper alone.
    struct Queue {
        spec: ModelSpec,
        results: Mutex<VecDeque<Result<AssistantMessage, ProviderError>>>,
    }

    fn reply() -> AssistantMessage {
        AssistantMessage {
            content: vec![],
            api: "openai-completions".into(),
            provider: "openai".into(),
            model: "m".into(),
            usage: Usage::default(),
            stop_reason: StopReason::Stop,
            error_message: None,
            response_id: None,
        }
    }

    fn queue(results: Vec<Result<AssistantMessage, ProviderError>>) -> Arc<Queue> {
        Arc::new(Queue {
            spec: ModelSpec {
                provider: "openai".into(),
                api: ApiKind::OpenaiCompletions,
                model: "m".into(),
                base_url: "http://127.0.0.1:9".into(),
                api_key: None,
                headers: vec![],
            },
            results: Mutex::new(results.into()),
        })
    }

    #[async_trait]
    impl Provider for Queue {
        fn spec(&self) -> &ModelSpec {
            &self.spec
        }
        async fn complete(
            &self,
            _: &Context,
            _: &RequestOptions,
        ) -> Result<AssistantMessage, ProviderError> {
            self.results
                .lock()
                .unwrap()
                .pop_front()
                .expect("no more results")
        }
    }

    fn fast() -> RetryPolicy {
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(4),
            max_retry_after: Duration::from_secs(1),
            no_wait: false,
        }
    }

    fn context() -> Context {
        Context {
            system_prompt: None,
            messages: vec![],
            tools: vec![],
        }
    }

    fn server_error() -> ProviderError {
        ProviderError::Server {
            status: 500,
            message: "boom".into(),
        }
    }

    #[tokio::test]
    async fn retries_server_errors_then_succeeds() {
        let inner = queue(vec![Err(server_error()), Err(server_error()), Ok(reply())]);
        let retrying = Retrying::new(inner, fast(), None);
        let out = retrying
            .complete(&context(), &RequestOptions::default())
            .await;
        assert!(out.is_ok());
        let stats = retrying.stats();
        assert_eq!(stats.attempts(), 3);
        assert_eq!(stats.retries(), 2);
        assert_eq!(
            stats
                .by_kind()
                .iter()
                .map(|(k, n)| (k.name(), *n))
                .collect::<Vec<_>>(),
            vec![("server_error", 2)]
        );
    }

    #[tokio::test]
    async fn does_not_retry_authentication() {
        let auth = ProviderError::Authentication {
            status: 401,
            message: "bad key".into(),
        };
        let inner = queue(vec![Err(auth.clone()), Ok(reply())]);
        let retrying = Retrying::new(inner, fast(), None);
        let out = retrying
            .complete(&context(), &RequestOptions::default())
            .await;
        assert_eq!(out.unwrap_err(), auth);
        assert_eq!(retrying.stats().retries(), 0);
    }

    #[tokio::test]
    async fn gives_up_after_max_retries() {
        let inner = queue((0..4).map(|_| Err(server_error())).collect());
        let retrying = Retrying::new(inner, fast(), None);
        let out = retrying
            .complete(&context(), &RequestOptions::default())
            .await;
        assert_eq!(out.unwrap_err(), server_error());
        assert_eq!(retrying.stats().attempts(), 4);
    }

    #[tokio::test]
    async fn rate_limit_shrinks_the_limiter() {
        let limited = ProviderError::RateLimited {
            status: 429,
            message: "slow down".into(),
            retry_after: Some(Duration::from_millis(2)),
        };
        let limiter = Limiter::new(8);
        let inner = queue(vec![Err(limited), Ok(reply())]);
        let retrying = Retrying::new(inner, fast(), Some(limiter.clone()));
        retrying
            .complete(&context(), &RequestOptions::default())
            .await
            .unwrap();
        assert_eq!(limiter.limit(), 4);
    }

    #[tokio::test]
    async fn a_retry_after_past_the_cap_says_why_it_was_not_waited_for() {
        let limited = |secs| ProviderError::RateLimited {
            status: 429,
            message: "slow down".into(),
            retry_after: Some(Duration::from_secs(secs)),
        };
        let inner = queue(vec![Err(limited(600)), Ok(reply())]);
        let retrying = Retrying::new(inner, fast(), None);
        let err = retrying
            .complete(&context(), &RequestOptions::default())
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "rate limited (429): slow down; not retried: the server asked to wait 600 s \
             (Retry-After), more than the 1 s the harness waits at most"
        );
        assert_eq!(retrying.stats().attempts(), 1);
        // Given up for another reason (no retries left), the error is as the server sent it.
        let policy = fast();
        assert_eq!(policy.gave_up(3, limited(600)), limited(600));
        assert_eq!(policy.gave_up(0, limited(1)), limited(1));
        assert_eq!(policy.gave_up(0, server_error()), server_error());
    }

    #[test]
    fn delay_honours_retry_after_and_backs_off_exponentially() {
        let policy = RetryPolicy::default();
        let limited = |secs| ProviderError::RateLimited {
            status: 429,
            message: String::new(),
            retry_after: Some(Duration::from_secs(secs)),
        };
        assert_eq!(
            policy.delay(0, &limited(7), 0.3),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            policy.delay(0, &limited(600), 0.3),
            None,
            "too long to wait"
        );
        assert_eq!(
            policy.delay(0, &server_error(), 1.0),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            policy.delay(2, &server_error(), 1.0),
            Some(Duration::from_millis(2000))
        );
        assert_eq!(
            policy.delay(2, &server_error(), 0.0),
            Some(Duration::from_millis(1000))
        );
        assert_eq!(policy.delay(4, &server_error(), 1.0), None);
        let replay = policy.without_waiting();
        assert_eq!(replay.delay(0, &limited(7), 0.3), Some(Duration::ZERO));
        assert_eq!(
            replay.delay(4, &server_error(), 1.0),
            None,
            "same retry count"
        );
    }
}
