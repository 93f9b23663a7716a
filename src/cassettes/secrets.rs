//! The secret scan run before a cassette is written: the values of the keys in use and
//! key-shaped strings, anywhere in the file (tool outputs included: an agent that runs `env` puts
//! whatever it sees into its next request). A finding names where it is and never prints the
//! secret, only a masked prefix.
//!
//! Pure functions; depends on the cassette format and the sandbox's key shapes only.

use std::sync::LazyLock;

use serde_json::Value;

use crate::sandbox::secrets::key_shapes;

use super::format::{Cassette, ResponseBody};

/// Key values shorter than this are not scanned for (they would match everywhere).
pub use crate::sandbox::secrets::MIN_SECRET_LEN;

/// One secret found in a cassette.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretFinding {
    /// Where: `interaction 3 request.body.messages[2].content[0].content`, or `line 40`.
    pub location: String,
    /// What kind of secret (`an Anthropic key (sk-ant-…)`, `the value of an API key in use`).
    pub kind: String,
    /// The first characters only, then `…` and the length.
    pub masked: String,
}

impl std::fmt::Display for SecretFinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} ({})", self.location, self.kind, self.masked)
    }
}

/// All patterns at once: one pass rules out the common case (no key-shaped string at all).
static PATTERN_SET: LazyLock<regex::RegexSet> = LazyLock::new(|| {
    regex::RegexSet::new(key_shapes().iter().map(|(re, _)| re.as_str()))
        .expect("valid secret patterns")
});

/// Masks a secret: a short prefix, then its length.
pub fn mask(secret: &str) -> String {
    let prefix: String = if secret.starts_with("-----BEGIN") {
        "-----BEGIN".to_owned()
    } else {
        secret.chars().take(4).collect()
    };
    format!("{prefix}… {} chars", secret.chars().count())
}

/// Scans one string; `known` are the key values in use.
pub fn scan_str(s: &str, known: &[String], location: &str, out: &mut Vec<SecretFinding>) {
    // Byte ranges already reported, so one secret matching several patterns (a known key that
    // is also key-shaped, `sk-ant-…` that is also `sk-…`) is reported once.
    let mut covered: Vec<(usize, usize)> = Vec::new();
    for k in known.iter().filter(|k| k.len() >= MIN_SECRET_LEN) {
        let found: Vec<(usize, usize)> = s
            .match_indices(k.as_str())
            .map(|(i, m)| (i, i + m.len()))
            .collect();
        if !found.is_empty() {
            covered.extend(found);
            out.push(SecretFinding {
                location: location.to_owned(),
                kind: "the value of an API key in use".to_owned(),
                masked: mask(k),
            });
        }
    }
    let matched = PATTERN_SET.matches(s);
    if !matched.matched_any() {
        return;
    }
    for (re, kind) in matched.iter().map(|i| &key_shapes()[i]) {
        for m in re.find_iter(s) {
            if covered.iter().any(|&(a, b)| m.start() < b && a < m.end()) {
                continue;
            }
            covered.push((m.start(), m.end()));
            out.push(SecretFinding {
                location: location.to_owned(),
                kind: (*kind).to_owned(),
                masked: mask(m.as_str()),
            });
        }
    }
}

/// Walks `v`; `path` is a reused buffer holding the current location.
fn scan_value(v: &Value, known: &[String], path: &mut String, out: &mut Vec<SecretFinding>) {
    use std::fmt::Write as _;
    let len = path.len();
    match v {
        Value::String(s) => scan_str(s, known, path, out),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let _ = write!(path, "[{i}]");
                scan_value(x, known, path, out);
                path.truncate(len);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                path.push_str(" (a key)");
                scan_str(k, known, path, out);
                path.truncate(len);
                path.push('.');
                path.push_str(k);
                scan_value(x, known, path, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// Scans a cassette, structure first (precise locations), then its serialised text (line
/// numbers) for anything the structure walk could not see. Empty when clean.
pub fn scan_cassette(cassette: &Cassette, yaml: &str, known: &[String]) -> Vec<SecretFinding> {
    let mut out = Vec::new();
    for (i, it) in cassette.interactions.iter().enumerate() {
        let at = format!(
            "interaction {} (request {} of {})",
            i,
            i + 1,
            cassette.interactions.len()
        );
        let req = &it.request;
        scan_str(&req.path, known, &format!("{at} request.path"), &mut out);
        for (k, v) in &req.headers {
            scan_str(v, known, &format!("{at} request.headers.{k}"), &mut out);
        }
        scan_value(
            &req.body,
            known,
            &mut format!("{at} request.body"),
            &mut out,
        );
        let resp = &it.response;
        for (k, v) in &resp.headers {
            scan_str(v, known, &format!("{at} response.headers.{k}"), &mut out);
        }
        match &resp.body {
            ResponseBody::Json { json } => scan_value(
                json,
                known,
                &mut format!("{at} response.body.json"),
                &mut out,
            ),
            ResponseBody::Text { text, error } => {
                scan_str(text, known, &format!("{at} response.body.text"), &mut out);
                if let Some(e) = error {
                    scan_str(e, known, &format!("{at} response.body.error"), &mut out);
                }
            }
            ResponseBody::Sse { events, error, .. } => {
                for (j, e) in events.iter().enumerate() {
                    let p = format!("{at} response.body.events[{j}]");
                    if let Some(d) = &e.data {
                        scan_value(d, known, &mut format!("{p}.data"), &mut out);
                    }
                    if let Some(t) = &e.text {
                        scan_str(t, known, &format!("{p}.text"), &mut out);
                    }
                }
                if let Some(e) = error {
                    scan_str(e, known, &format!("{at} response.body.error"), &mut out);
                }
            }
        }
    }
    if out.is_empty() {
        // Backstop: header fields, and anything serialisation might have produced.
        for (n, line) in yaml.lines().enumerate() {
            scan_str(line, known, &format!("line {}", n + 1), &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(s: &str, known: &[&str]) -> Vec<SecretFinding> {
        let known: Vec<String> = known.iter().map(|s| (*s).to_owned()).collect();
        let mut out = Vec::new();
        scan_str(s, &known, "here", &mut out);
        out
    }

    #[test]
    fn each_key_shape_is_found_and_masked() {
        let cases = [
            (
                "key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 end",
                "Anthropic",
            ),
            ("OPENAI_API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUvWx", "OpenAI"),
            ("AIzaSyAbCdEfGhIjKlMnOpQrStUvWxYz0123456", "Google"),
            ("token ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "GitHub"),
            ("AWS_ACCESS_KEY_ID=AKIAABCDEFGHIJKLMNOP", "AWS"),
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END",
                "private key",
            ),
            ("-----BEGIN PRIVATE KEY-----", "private key"),
        ];
        for (text, kind) in cases {
            let h = hits(text, &[]);
            assert_eq!(h.len(), 1, "{text}: {h:?}");
            assert!(h[0].kind.contains(kind), "{text}: {h:?}");
            assert!(
                !h[0].masked.contains(&text[text.len() - 8..]),
                "unmasked: {h:?}"
            );
        }
    }

    #[test]
    fn ordinary_text_is_not_a_secret() {
        for text in [
            "task-abcdefghijklmnopqrstuvwxyz0123",
            "disk-usage-report-generator-tool-v2",
            "sk-short",
            "AKIA lowercase akiaabcdefghijklmnop",
            "-----BEGIN PUBLIC KEY-----",
            "the ghp_ prefix alone",
            "",
        ] {
            assert_eq!(hits(text, &[]), vec![], "{text}");
        }
    }

    #[test]
    fn known_key_value_is_found_even_when_not_key_shaped() {
        let key = "local-test-key-0123456789";
        let h = hits(&format!("$ env\nHOME=/root\nMY_KEY={key}\n"), &[key]);
        assert_eq!(h.len(), 1, "{h:?}");
        assert_eq!(h[0].kind, "the value of an API key in use");
        assert_eq!(h[0].masked, "loca… 25 chars");
        assert!(
            hits("short", &["short"]).is_empty(),
            "too-short values are skipped"
        );
    }

    #[test]
    fn known_key_shaped_value_is_reported_once() {
        let key = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
        let h = hits(key, &[key]);
        assert_eq!(h.len(), 1, "{h:?}");
    }
}
