//! The one place where a provider failure becomes a typed [`ProviderError`], for every provider:
//! an HTTP error status ([`from_http_status`]), an error event inside a streamed reply
//! ([`from_stream_error`]), and the waits a server asks for ([`retry_after`]), each clamped so
//! that no number a provider or a cassette sends can make the harness panic or wait for ever.
//!
//! Depends on nothing but [`ProviderError`]; no provider-specific rules live here (a wire format
//! refines the result with its own, as Gemini does for its key errors and `RetryInfo`).

use std::time::Duration;

use super::transport::TransportError;
use crate::record::ErrorKind;

/// A typed provider failure, kept apart from model failures in the reports.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    #[error("authentication failed ({status}): {message}")]
    Authentication { status: u16, message: String },
    #[error("rate limited ({status}): {message}")]
    RateLimited {
        status: u16,
        message: String,
        retry_after: Option<Duration>,
    },
    #[error("provider overloaded ({status}): {message}")]
    Overloaded { status: u16, message: String },
    #[error("server error ({status}): {message}")]
    Server { status: u16, message: String },
    #[error("context too long: {message}")]
    ContextTooLong { message: String },
    #[error("invalid request ({status}): {message}")]
    InvalidRequest { status: u16, message: String },
    #[error("failed to connect: {message}")]
    Connection { message: String },
    #[error("stream cut before its end: {message}")]
    StreamCut { message: String },
    #[error("stream stalled: no data for {idle:?}")]
    StreamStalled { idle: Duration },
    /// The provider sent an error event or a reply we cannot parse.
    #[error("{message}")]
    Protocol { message: String },
    /// A cassette could not serve this request (replay mode): the run diverged or the cassette
    /// has no more interactions.
    #[error("{0}")]
    Cassette(String),
    /// The recorded reply was interrupted by its user (an imported session's Escape): the
    /// agent stops as Pi does after an abort and the next prompt goes on.
    #[error("the reply was interrupted: {message}")]
    Interrupted { message: String },
}

impl ProviderError {
    /// Whether retrying the same request may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ProviderError::RateLimited { .. }
                | ProviderError::Overloaded { .. }
                | ProviderError::Server { .. }
                | ProviderError::Connection { .. }
                | ProviderError::StreamCut { .. }
                | ProviderError::StreamStalled { .. }
        )
    }

    /// What kind of failure this is, as the reports name it.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ProviderError::Authentication { .. } => ErrorKind::Authentication,
            ProviderError::RateLimited { .. } => ErrorKind::RateLimited,
            ProviderError::Overloaded { .. } => ErrorKind::Overloaded,
            ProviderError::Server { .. } => ErrorKind::ServerError,
            ProviderError::ContextTooLong { .. } => ErrorKind::ContextTooLong,
            ProviderError::InvalidRequest { .. } => ErrorKind::InvalidRequest,
            ProviderError::Connection { .. } => ErrorKind::ConnectionFailed,
            ProviderError::StreamCut { .. } => ErrorKind::StreamCut,
            ProviderError::StreamStalled { .. } => ErrorKind::StreamStalled,
            ProviderError::Protocol { .. } => ErrorKind::Protocol,
            ProviderError::Cassette(_) => ErrorKind::Cassette,
            // Never an error of a run: the agent stops as after an abort.
            ProviderError::Interrupted { .. } => ErrorKind::StreamCut,
        }
    }
}

/// Error bodies longer than this many characters are cut (with a marker) in messages.
pub const MAX_ERROR_MESSAGE_CHARS: usize = 2000;

/// At most this many bytes of an error body are read; the rest is never buffered.
pub const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// The longest wait any server-sent figure can ask for: longer ones (`Retry-After: 1e300`) are
/// cut to this, which is far above any retry policy's limit, so the error is returned instead.
pub const MAX_SERVER_WAIT: Duration = Duration::from_secs(24 * 3600);

/// A number of seconds from a provider or a file as a wait: `None` for NaN or a negative number,
/// [`MAX_SERVER_WAIT`] for anything longer (infinity included). Never panics, unlike
/// [`Duration::from_secs_f64`].
pub fn clamp_secs(secs: f64) -> Option<Duration> {
    if secs.is_nan() || secs < 0.0 {
        return None;
    }
    if secs >= MAX_SERVER_WAIT.as_secs_f64() {
        return Some(MAX_SERVER_WAIT);
    }
    Some(Duration::from_secs_f64(secs))
}

/// Maps a non-success HTTP status, its headers (lower-case names) and body text to an error.
///
/// * 401, 403: authentication;
/// * 429: rate limited, with `retry-after-ms` or `retry-after` (seconds or an HTTP date);
/// * 529, 503, or any 5xx whose body says "overloaded": overloaded;
/// * other 5xx: server error;
/// * 400 or 413 whose body mentions the context ("context", "too long", "maximum context"):
///   context too long;
/// * any other status: invalid request.
pub fn from_http_status(status: u16, headers: &[(String, String)], body: &str) -> ProviderError {
    let message = trim_message(body);
    let lower = body.to_lowercase();
    match status {
        401 | 403 => ProviderError::Authentication { status, message },
        429 => ProviderError::RateLimited {
            status,
            message,
            retry_after: retry_after(headers, chrono::Utc::now()),
        },
        529 | 503 => ProviderError::Overloaded { status, message },
        500..=599 if lower.contains("overloaded") => ProviderError::Overloaded { status, message },
        500..=599 => ProviderError::Server { status, message },
        400 | 413
            if lower.contains("context")
                || lower.contains("too long")
                || lower.contains("maximum context") =>
        {
            ProviderError::ContextTooLong { message }
        }
        _ => ProviderError::InvalidRequest { status, message },
    }
}

/// A transport failure as a provider error.
pub fn from_transport(err: TransportError) -> ProviderError {
    match err {
        TransportError::Connect { .. } => ProviderError::Connection {
            message: err.to_string(),
        },
        TransportError::Body(message) => ProviderError::StreamCut { message },
        TransportError::Cassette(message) => ProviderError::Cassette(message),
        TransportError::Interrupted(message) => ProviderError::Interrupted { message },
    }
}

/// Maps an error event sent inside a streamed reply (after a 200 status) to a typed error, from
/// the provider's own name for the error (`code`: Anthropic's `error.type`, OpenAI's
/// `error.type` or `code`, Gemini's `error.status`) and its message. These are the provider's
/// failures, never the model's, so none of them is an error reply that counts against the model.
/// The name gives the HTTP status the provider documents for that error, which then maps as
/// [`from_http_status`] maps it:
///
/// * `overloaded…` (529), `…unavailable…` (503): overloaded (retried);
/// * `rate_limit…`, `resource_exhausted`, `too_many_requests` (429): rate limited (retried);
/// * `permission…` (403), `auth…`, `unauthenticated`, `invalid_api_key` (401): authentication;
/// * `context_length…` (400, context too long), `not_found…` (404), `…too_large` (413),
///   `invalid…`, `failed_precondition`, `out_of_range` (400): invalid request, or context too
///   long when the message says so;
/// * anything else (`api_error`, `server_error`, `internal`, a timeout, an unknown or missing
///   name): 500, a server error (retried), or overloaded when the message says so.
///
/// The message names the code.
pub fn from_stream_error(code: &str, message: &str) -> ProviderError {
    const STATUSES: [(&[&str], u16); 9] = [
        (&["overloaded"], 529),
        (&["unavailable"], 503),
        (
            &["rate_limit", "resource_exhausted", "too_many_requests"],
            429,
        ),
        (&["permission"], 403),
        (&["auth", "invalid_api_key"], 401),
        (&["context_length"], 400),
        (&["not_found"], 404),
        (&["too_large"], 413),
        (&["invalid", "failed_precondition", "out_of_range"], 400),
    ];
    let code = code.trim();
    let lower = code.to_ascii_lowercase();
    let status = STATUSES
        .iter()
        .find(|(words, _)| words.iter().any(|w| lower.contains(w)))
        .map_or(500, |(_, status)| *status);
    let message = if code.is_empty() {
        format!("error event in the stream: {message}")
    } else {
        format!("{code} in the stream: {message}")
    };
    from_http_status(status, &[], &message)
}

/// The body text trimmed of surrounding whitespace and cut to [`MAX_ERROR_MESSAGE_CHARS`].
pub fn trim_message(body: &str) -> String {
    let body = body.trim();
    match body.char_indices().nth(MAX_ERROR_MESSAGE_CHARS) {
        None => body.to_owned(),
        Some((cut, _)) => format!("{}… ({} bytes in all)", &body[..cut], body.len()),
    }
}

/// How long the server asks us to wait: `retry-after-ms` (milliseconds) first, then
/// `retry-after` as seconds (integer or decimal) or as an HTTP date relative to `now`.
pub fn retry_after(
    headers: &[(String, String)],
    now: chrono::DateTime<chrono::Utc>,
) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
    };
    if let Some(wait) = get("retry-after-ms")
        .and_then(|v| v.parse::<f64>().ok())
        .and_then(|ms| clamp_secs(ms / 1000.0))
    {
        return Some(wait);
    }
    if let Some(value) = get("retry-after") {
        if let Ok(secs) = value.parse::<f64>() {
            return clamp_secs(secs);
        }
        let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
        return Some(until(date.with_timezone(&chrono::Utc), now));
    }
    rate_limit_reset(&get, now)
}

/// The wait the providers' own rate-limit headers imply, when a limit is exhausted: OpenAI's
/// `x-ratelimit-remaining-*` / `x-ratelimit-reset-*` (durations like `6m0s`, `20ms`) and
/// Anthropic's `anthropic-ratelimit-*-remaining` / `-reset` (RFC 3339 times). The longest reset
/// among the exhausted limits wins.
fn rate_limit_reset<'a>(
    get: &dyn Fn(&str) -> Option<&'a str>,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<Duration> {
    let exhausted = |remaining: &str| get(remaining).is_some_and(|v| v == "0");
    let mut waits = Vec::new();
    for kind in ["requests", "tokens"] {
        if exhausted(&format!("x-ratelimit-remaining-{kind}")) {
            waits.extend(get(&format!("x-ratelimit-reset-{kind}")).and_then(go_duration));
        }
    }
    for kind in ["requests", "tokens", "input-tokens", "output-tokens"] {
        if exhausted(&format!("anthropic-ratelimit-{kind}-remaining")) {
            let reset = get(&format!("anthropic-ratelimit-{kind}-reset"))
                .and_then(|v| chrono::DateTime::parse_from_rfc3339(v).ok());
            if let Some(at) = reset {
                waits.push(until(at.with_timezone(&chrono::Utc), now));
            }
        }
    }
    waits.into_iter().max()
}

/// The wait until `at` (zero if it has passed), at most [`MAX_SERVER_WAIT`].
fn until(at: chrono::DateTime<chrono::Utc>, now: chrono::DateTime<chrono::Utc>) -> Duration {
    (at - now)
        .to_std()
        .unwrap_or(Duration::ZERO)
        .min(MAX_SERVER_WAIT)
}

/// Parses a Go-style duration as OpenAI sends it: `1s`, `6m0s`, `20ms`, `1h2m3.5s`; clamped as
/// [`clamp_secs`] clamps.
fn go_duration(text: &str) -> Option<Duration> {
    let mut total = 0.0;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let split = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..split].parse().ok()?;
        rest = &rest[split..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let factor = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return None,
        };
        total += number * factor;
        rest = &rest[unit_len..];
    }
    clamp_secs(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_rate_limit_headers_give_the_wait_when_a_limit_is_exhausted() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-12-01T00:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let openai = h(&[
            ("x-ratelimit-remaining-requests", "0"),
            ("x-ratelimit-reset-requests", "1m30s"),
            ("x-ratelimit-remaining-tokens", "5000"),
            ("x-ratelimit-reset-tokens", "9m0s"),
        ]);
        assert_eq!(retry_after(&openai, now), Some(Duration::from_secs(90)));
        let anthropic = h(&[
            ("anthropic-ratelimit-tokens-remaining", "0"),
            ("anthropic-ratelimit-tokens-reset", "2026-12-01T00:00:12Z"),
        ]);
        assert_eq!(retry_after(&anthropic, now), Some(Duration::from_secs(12)));
        let nothing_exhausted = h(&[
            ("x-ratelimit-remaining-requests", "3"),
            ("x-ratelimit-reset-requests", "1s"),
        ]);
        assert_eq!(retry_after(&nothing_exhausted, now), None);
        // Retry-After still wins.
        let both = h(&[
            ("retry-after", "2"),
            ("x-ratelimit-remaining-requests", "0"),
            ("x-ratelimit-reset-requests", "1m"),
        ]);
        assert_eq!(retry_after(&both, now), Some(Duration::from_secs(2)));
        assert_eq!(go_duration("20ms"), Some(Duration::from_millis(20)));
        assert_eq!(
            go_duration("1h2m3.5s"),
            Some(Duration::from_secs_f64(3723.5))
        );
        assert_eq!(go_duration("soon"), None);
    }

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn maps_statuses() {
        assert_eq!(
            from_http_status(401, &[], " bad key \n").kind(),
            "authentication"
        );
        assert_eq!(from_http_status(403, &[], "").kind(), "authentication");
        assert_eq!(from_http_status(429, &[], "").kind(), "rate_limited");
        assert_eq!(from_http_status(529, &[], "").kind(), "overloaded");
        assert_eq!(from_http_status(503, &[], "").kind(), "overloaded");
        assert_eq!(
            from_http_status(502, &[], "Overloaded").kind(),
            "overloaded"
        );
        assert_eq!(from_http_status(500, &[], "boom").kind(), "server_error");
        assert_eq!(
            from_http_status(400, &[], "prompt is too long: 210000 tokens").kind(),
            "context_too_long"
        );
        assert_eq!(
            from_http_status(400, &[], "bad field").kind(),
            "invalid_request"
        );
        assert_eq!(from_http_status(404, &[], "").kind(), "invalid_request");
        assert_eq!(
            from_http_status(401, &[], " bad key \n"),
            ProviderError::Authentication {
                status: 401,
                message: "bad key".into()
            }
        );
    }

    #[test]
    fn parses_retry_after_forms() {
        let now = chrono::DateTime::parse_from_rfc2822("Wed, 21 Oct 2015 07:28:00 GMT")
            .unwrap()
            .with_timezone(&chrono::Utc);
        assert_eq!(
            retry_after(&h(&[("retry-after", "3")]), now),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            retry_after(&h(&[("retry-after", "1.5")]), now),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            retry_after(&h(&[("retry-after", "Wed, 21 Oct 2015 07:28:07 GMT")]), now),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            retry_after(&h(&[("retry-after", "3"), ("retry-after-ms", "250")]), now),
            Some(Duration::from_millis(250))
        );
        assert_eq!(retry_after(&h(&[("retry-after", "soon")]), now), None);
        assert_eq!(retry_after(&[], now), None);
    }

    #[test]
    fn absurd_waits_are_clamped_not_panics() {
        let now = chrono::Utc::now();
        for (name, value, expected) in [
            ("retry-after", "1e300", Some(MAX_SERVER_WAIT)),
            ("retry-after", "inf", Some(MAX_SERVER_WAIT)),
            ("retry-after", "-3", None),
            ("retry-after", "NaN", None),
            ("retry-after-ms", "1e300", Some(MAX_SERVER_WAIT)),
            (
                "retry-after",
                "Fri, 31 Dec 9999 23:59:59 GMT",
                Some(MAX_SERVER_WAIT),
            ),
            (
                "retry-after",
                "Thu, 01 Jan 1970 00:00:00 GMT",
                Some(Duration::ZERO),
            ),
        ] {
            assert_eq!(
                retry_after(&h(&[(name, value)]), now),
                expected,
                "{name}: {value}"
            );
        }
        // A negative or NaN `retry-after-ms` is ignored in favour of `retry-after`.
        assert_eq!(
            retry_after(&h(&[("retry-after-ms", "-1"), ("retry-after", "2")]), now),
            Some(Duration::from_secs(2))
        );
        let huge = h(&[
            ("x-ratelimit-remaining-requests", "0"),
            ("x-ratelimit-reset-requests", "99999999999999999999999h"),
            ("anthropic-ratelimit-requests-remaining", "0"),
            ("anthropic-ratelimit-requests-reset", "9999-12-31T23:59:59Z"),
        ]);
        assert_eq!(retry_after(&huge, now), Some(MAX_SERVER_WAIT));
        assert_eq!(clamp_secs(f64::MAX), Some(MAX_SERVER_WAIT));
        assert_eq!(clamp_secs(0.25), Some(Duration::from_millis(250)));
        let err = from_http_status(429, &h(&[("retry-after", "1e300")]), "");
        assert!(
            matches!(err, ProviderError::RateLimited { retry_after: Some(w), .. } if w == MAX_SERVER_WAIT),
            "{err:?}"
        );
    }

    #[test]
    fn stream_error_events_are_typed_by_the_providers_own_names() {
        let kind = |code: &str, message: &str| from_stream_error(code, message).kind();
        // Anthropic's error types.
        assert_eq!(kind("overloaded_error", "Overloaded"), "overloaded");
        assert_eq!(kind("api_error", "Internal server error"), "server_error");
        assert_eq!(kind("rate_limit_error", "slow"), "rate_limited");
        assert_eq!(kind("authentication_error", "bad key"), "authentication");
        assert_eq!(kind("permission_error", "no"), "authentication");
        assert_eq!(kind("invalid_request_error", "bad"), "invalid_request");
        assert_eq!(
            kind("invalid_request_error", "prompt exceeds the context window"),
            "context_too_long"
        );
        assert_eq!(kind("not_found_error", "no model"), "invalid_request");
        // OpenAI's.
        assert_eq!(kind("server_error", "boom"), "server_error");
        assert_eq!(kind("rate_limit_exceeded", "slow"), "rate_limited");
        assert_eq!(kind("context_length_exceeded", "long"), "context_too_long");
        assert_eq!(kind("invalid_api_key", "bad"), "authentication");
        // Gemini's statuses.
        assert_eq!(kind("INTERNAL", "boom"), "server_error");
        assert_eq!(kind("UNAVAILABLE", "busy"), "overloaded");
        assert_eq!(kind("RESOURCE_EXHAUSTED", "quota"), "rate_limited");
        assert_eq!(kind("UNAUTHENTICATED", "bad"), "authentication");
        assert_eq!(kind("INVALID_ARGUMENT", "bad"), "invalid_request");
        assert_eq!(kind("DEADLINE_EXCEEDED", "slow"), "server_error");
        // Nothing to go on: the provider failed.
        assert_eq!(kind("", "upstream went away"), "server_error");
        assert_eq!(
            from_stream_error("overloaded_error", "Overloaded"),
            ProviderError::Overloaded {
                status: 529,
                message: "overloaded_error in the stream: Overloaded".into()
            }
        );
        assert!(from_stream_error("x", &"y".repeat(9000)).to_string().len() < 2200);
    }

    #[test]
    fn long_bodies_are_cut() {
        let long = "x".repeat(5000);
        let msg = trim_message(&long);
        assert!(msg.starts_with(&"x".repeat(MAX_ERROR_MESSAGE_CHARS)));
        assert!(msg.ends_with("(5000 bytes in all)"), "{msg}");
    }
}
