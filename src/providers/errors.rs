//! The one place where an HTTP error status becomes a typed [`ProviderError`], for every provider
//! (and, later, the retry layer that reads `retry_after`).
//!
//! Depends on nothing but [`ProviderError`]; no provider-specific rules live here.

use std::time::Duration;

use super::ProviderError;
use super::transport::TransportError;

/// Error bodies longer than this many characters are cut (with a marker) in messages.
pub const MAX_ERROR_MESSAGE_CHARS: usize = 2000;

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
    }
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
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    if let Some(value) = get("retry-after") {
        if let Ok(secs) = value.parse::<f64>() {
            return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
        }
        let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
        let wait = date.with_timezone(&chrono::Utc) - now;
        return Some(wait.to_std().unwrap_or(Duration::ZERO));
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
                waits.push(
                    (at.with_timezone(&chrono::Utc) - now)
                        .to_std()
                        .unwrap_or_default(),
                );
            }
        }
    }
    waits.into_iter().max()
}

/// Parses a Go-style duration as OpenAI sends it: `1s`, `6m0s`, `20ms`, `1h2m3.5s`.
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
    Some(Duration::from_secs_f64(total))
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
    fn long_bodies_are_cut() {
        let long = "x".repeat(5000);
        let msg = trim_message(&long);
        assert!(msg.starts_with(&"x".repeat(MAX_ERROR_MESSAGE_CHARS)));
        assert!(msg.ends_with("(5000 bytes in all)"), "{msg}");
    }
}
