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
    let value = get("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let wait = date.with_timezone(&chrono::Utc) - now;
    Some(wait.to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

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
