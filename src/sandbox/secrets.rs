//! The secrets the harness holds, kept out of its own environment and out of every report.
//!
//! * Classification: [`is_secret_var`] says whether an environment variable is a secret, by the
//!   names the provider catalog reads keys from (passed in), a broad name heuristic
//!   ([`is_secret_name`]) and the value itself ([`is_secret_value`]: URLs with a password,
//!   key-shaped strings from [`key_shapes`]).
//! * Sealing: [`seal`] runs first thing in the binary. When the environment holds a secret, it
//!   writes every secret variable into an anonymous in-memory file (memfd), removes them from the
//!   environment and re-executes the binary with the same arguments, passing the descriptor's
//!   number in [`SEALED_FD_VAR`]. The new process image reads the variables into a [`Vault`] and
//!   closes the descriptor, so its `/proc/self/environ` (what `/proc/$PPID/environ` shows an
//!   agent's command) holds no key, in any sandbox tier.
//! * Redaction: [`Redactor`] replaces the values of the keys in use (and of every sealed secret)
//!   in text written to reports and transcripts.
//!
//! Depends on nothing else in the crate.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use regex::Regex;

/// The variable that tells a re-executed harness which descriptor holds its sealed secrets.
pub const SEALED_FD_VAR: &str = "HARNESS_SEALED_FD";

/// Values shorter than this are neither redacted nor scanned for: they would match everywhere.
pub const MIN_SECRET_LEN: usize = 8;

/// What replaces a secret in redacted text.
pub const REDACTED: &str = "[REDACTED]";

/// Variables that are never secrets, whatever the heuristic says (the harness and the agent's
/// commands need them; none of them holds a credential).
const NEVER_SECRET: [&str; 14] = [
    "PATH",
    "HOME",
    "PWD",
    "OLDPWD",
    "TMPDIR",
    "LANG",
    "LC_ALL",
    "TERM",
    "SHELL",
    "USER",
    "LOGNAME",
    "CARGO_HOME",
    "RUSTUP_HOME",
    SEALED_FD_VAR,
];

/// Whether an environment variable name looks like it holds a credential (case-insensitive):
/// any name containing KEY, TOKEN, SECRET, PASS (PASSWORD, PASSWD, PASSPHRASE, DOCKER_PASS...),
/// CREDENTIAL, AUTH, SESSION, COOKIE or PRIVATE; ending in `_PAT` or `_DSN` (or named `PAT` or
/// `DSN`); every `AWS_*` variable; and a few well-known credential variables that match none of
/// those (`NETRC`, `PGSERVICEFILE`, `SSH_AUTH_SOCK`'s kin are caught by AUTH).
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if NEVER_SECRET.contains(&upper.as_str()) {
        return false;
    }
    const WORDS: [&str; 9] = [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASS",
        "CREDENTIAL",
        "AUTH",
        "SESSION",
        "COOKIE",
        "PRIVATE",
    ];
    const SUFFIXES: [&str; 2] = ["_PAT", "_DSN"];
    const NAMES: [&str; 5] = ["PAT", "DSN", "NETRC", "PGSERVICEFILE", "KUBECONFIG"];
    WORDS.iter().any(|w| upper.contains(w))
        || SUFFIXES.iter().any(|s| upper.ends_with(s))
        || NAMES.contains(&upper.as_str())
        || upper.starts_with("AWS_")
}

/// A URL whose user-info has a password: `scheme://user:password@host`.
static URL_WITH_PASSWORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z][A-Za-z0-9+.\-]*://[^/@\s:]*:[^/@\s]+@").expect("valid URL pattern")
});

static KEY_SHAPES: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    [
        (
            r"\bsk-ant-[A-Za-z0-9_\-]{16,}",
            "an Anthropic key (sk-ant-…)",
        ),
        (r"\bsk-[A-Za-z0-9_\-]{20,}", "an OpenAI-style key (sk-…)"),
        (r"\bAIza[0-9A-Za-z_\-]{30,}", "a Google API key (AIza…)"),
        (r"\bgh[pousr]_[A-Za-z0-9]{30,}", "a GitHub token (ghp_…)"),
        (
            r"\bgithub_pat_[A-Za-z0-9_]{30,}",
            "a GitHub token (github_pat_…)",
        ),
        (
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            "an AWS access key id (AKIA…)",
        ),
        (
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----",
            "a private key block",
        ),
    ]
    .into_iter()
    .map(|(p, k)| (Regex::new(p).expect("valid secret pattern"), k))
    .collect()
});

/// Key-shaped strings (provider keys, GitHub tokens, AWS key ids, private key blocks), each with
/// what it is. Shared with the cassette scan.
pub fn key_shapes() -> &'static [(Regex, &'static str)] {
    &KEY_SHAPES
}

/// Whether a value is a secret on its face: a URL with a password, or a key-shaped string.
pub fn is_secret_value(value: &str) -> bool {
    URL_WITH_PASSWORD.is_match(value) || KEY_SHAPES.iter().any(|(re, _)| re.is_match(value))
}

/// Whether the variable `name=value` is a secret: `name` is one the provider catalog reads a key
/// from (`key_names`), or the name or the value looks like one.
pub fn is_secret_var(name: &str, value: &str, key_names: &[String]) -> bool {
    if key_names.iter().any(|k| k == name) {
        return true;
    }
    if NEVER_SECRET.contains(&name.to_ascii_uppercase().as_str()) {
        return false;
    }
    is_secret_name(name) || is_secret_value(value)
}

/// The secrets moved out of the environment at start, held in memory.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Vault {
    vars: BTreeMap<String, String>,
}

impl std::fmt::Debug for Vault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the values.
        f.debug_struct("Vault")
            .field("names", &self.vars.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Vault {
    /// A vault holding `vars` (tests, and what [`seal`] read back).
    pub fn from_vars(vars: impl IntoIterator<Item = (String, String)>) -> Self {
        Vault {
            vars: vars.into_iter().collect(),
        }
    }

    /// The value of a sealed variable.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// The sealed variables' names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.vars.keys().map(String::as_str)
    }

    /// How many variables are sealed.
    pub fn len(&self) -> usize {
        self.vars.len()
    }

    /// Whether nothing was sealed.
    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }

    /// Looks `name` up: the vault first, then the (sealed, so secret-free) environment.
    pub fn lookup(&self, name: &str) -> Option<String> {
        self.get(name)
            .map(str::to_owned)
            .or_else(|| std::env::var(name).ok())
    }

    /// A redactor for every sealed value.
    pub fn redactor(&self) -> Redactor {
        Redactor::new(self.vars.values())
    }
}

/// A failure to seal the environment.
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    #[error("could not create an in-memory file for the keys: {0}")]
    Memfd(#[source] std::io::Error),
    #[error("could not re-execute the harness without its keys in the environment: {0}")]
    Exec(#[source] std::io::Error),
    #[error("could not read the sealed keys from descriptor {fd}: {source}")]
    Read {
        fd: String,
        #[source]
        source: std::io::Error,
    },
}

/// Moves every secret variable out of the process environment (see the module docs). Returns the
/// vault when the environment is already free of secrets (nothing to seal, or this is the
/// re-executed image); otherwise it does not return: the process image is replaced. Call it first
/// thing in `main`, while the process has a single thread.
pub fn seal(key_names: &[String]) -> Result<Vault, SealError> {
    if let Some(fd) = std::env::var_os(SEALED_FD_VAR) {
        return unseal(&fd);
    }
    let (secret, kept): (Vec<_>, Vec<_>) = std::env::vars_os()
        .partition(|(k, v)| is_secret_var(&k.to_string_lossy(), &v.to_string_lossy(), key_names));
    if secret.is_empty() {
        return Ok(Vault::default());
    }
    let fd =
        nix::sys::memfd::memfd_create(c"harness-keys", nix::sys::memfd::MemFdCreateFlag::empty())
            .map_err(|e| SealError::Memfd(e.into()))?;
    let mut file = std::fs::File::from(fd);
    let mut records = Vec::new();
    for (k, v) in &secret {
        records.extend_from_slice(k.as_bytes());
        records.push(0);
        records.extend_from_slice(v.as_bytes());
        records.push(0);
    }
    file.write_all(&records).map_err(SealError::Memfd)?;
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| OsString::from("harness"));
    let err = std::process::Command::new("/proc/self/exe")
        .arg0(arg0)
        .args(args)
        .env_clear()
        .envs(kept)
        .env(SEALED_FD_VAR, file.as_raw_fd().to_string())
        .exec();
    Err(SealError::Exec(err))
}

/// Reads the records back from the inherited descriptor and closes it.
fn unseal(fd: &OsStr) -> Result<Vault, SealError> {
    let text = fd.to_string_lossy().into_owned();
    let read_err = |source| SealError::Read {
        fd: text.clone(),
        source,
    };
    let number: i32 = text
        .parse()
        .map_err(|_| read_err(std::io::Error::other("not a descriptor number")))?;
    // A fresh open of the memfd starts at offset 0 (the inherited description is at its end).
    let mut bytes = Vec::new();
    std::fs::File::open(format!("/proc/self/fd/{number}"))
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(read_err)?;
    // Close the inherited descriptor so no child of the harness inherits it.
    let _closed = nix::unistd::close(number);
    let mut vars = BTreeMap::new();
    let mut fields = bytes.split(|b| *b == 0);
    while let (Some(k), Some(v)) = (fields.next(), fields.next()) {
        if k.is_empty() {
            continue;
        }
        let k = OsString::from_vec(k.to_vec())
            .to_string_lossy()
            .into_owned();
        let v = OsString::from_vec(v.to_vec())
            .to_string_lossy()
            .into_owned();
        vars.insert(k, v);
    }
    Ok(Vault { vars })
}

/// Replaces secret values in text with [`REDACTED`]. Cheap to clone; the default redacts nothing.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    matcher: Option<AhoCorasick>,
    secrets: Vec<String>,
}

impl Redactor {
    /// A redactor for `secrets` (values shorter than [`MIN_SECRET_LEN`] are skipped).
    pub fn new(secrets: impl IntoIterator<Item = impl AsRef<str>>) -> Self {
        let mut list: Vec<String> = secrets
            .into_iter()
            .map(|s| s.as_ref().to_owned())
            .filter(|s| s.len() >= MIN_SECRET_LEN)
            .collect();
        // Longest first, so a secret containing another is replaced whole.
        list.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        list.dedup();
        let matcher = (!list.is_empty()).then(|| {
            AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                .build(&list)
                .expect("literal patterns build")
        });
        Redactor {
            matcher,
            secrets: list,
        }
    }

    /// This redactor plus `more` secrets: itself (its matcher shared, nothing built again)
    /// when it holds them all already, as it does a sealed key a run uses.
    pub fn with(&self, more: impl IntoIterator<Item = impl AsRef<str>>) -> Self {
        let new: Vec<String> = more
            .into_iter()
            .map(|s| s.as_ref().to_owned())
            .filter(|s| s.len() >= MIN_SECRET_LEN && !self.secrets.contains(s))
            .collect();
        if new.is_empty() {
            return self.clone();
        }
        let mut all = self.secrets.clone();
        all.extend(new);
        Redactor::new(all)
    }

    /// Whether it redacts nothing.
    pub fn is_empty(&self) -> bool {
        self.matcher.is_none()
    }

    /// Whether no string of the JSON document `json` can hold a secret: none appears in its
    /// text, and none has a character JSON escapes (which would hide it from that search).
    pub fn is_absent_from_json(&self, json: &str) -> bool {
        let Some(m) = &self.matcher else {
            return true;
        };
        let escaped = |s: &String| s.chars().any(|c| c == '"' || c == '\\' || c < ' ');
        !m.is_match(json) && !self.secrets.iter().any(escaped)
    }

    /// `text` with every secret replaced.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match &self.matcher {
            Some(m) if m.is_match(text) => {
                Cow::Owned(m.replace_all(text, &vec![REDACTED; self.secrets.len()]))
            }
            _ => Cow::Borrowed(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names() {
        for name in [
            "ANTHROPIC_API_KEY",
            "OPENAI_API_KEY",
            "GEMINI_API_KEY",
            "GITHUB_TOKEN",
            "aws_secret_access_key",
            "AWS_SESSION_TOKEN",
            "AWS_REGION",
            "DB_PASSWORD",
            "DOCKER_PASS",
            "GH_PAT",
            "SENTRY_DSN",
            "MY_SECRET",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "HTTP_AUTHORIZATION",
            "NETRC",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "PWD",
            "LANG",
            "TERM",
            "CARGO_HOME",
            "USER",
            "DATABASE_URL",
            "LLM_ACCESS",
            SEALED_FD_VAR,
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn secret_values_and_catalog_names() {
        assert!(is_secret_var(
            "DATABASE_URL",
            "postgres://app:hunter2@db:5432/x",
            &[]
        ));
        assert!(!is_secret_var(
            "DATABASE_URL",
            "postgres://app@db:5432/x",
            &[]
        ));
        assert!(is_secret_var(
            "LLM_ACCESS",
            "anything",
            &["LLM_ACCESS".into()]
        ));
        assert!(!is_secret_var("LLM_ACCESS", "anything", &[]));
        assert!(is_secret_var(
            "X",
            "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz",
            &[]
        ));
        assert!(!is_secret_var("PATH", "/usr/bin:/bin", &[]));
        // A catalog name always counts, even one on the never list would be odd but honoured.
        assert!(!is_secret_var("HOME", "/root", &[]));
    }

    #[test]
    fn redaction_replaces_every_occurrence_longest_first() {
        let r = Redactor::new(["local-test-key-0123", "local-test-key-0123456", "short"]);
        assert_eq!(
            r.redact("a local-test-key-0123456 b local-test-key-0123 c short"),
            "a [REDACTED] b [REDACTED] c short"
        );
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
        assert!(Redactor::default().is_empty());
        assert_eq!(Redactor::default().redact("x"), "x");
        let json = |s: &str| serde_json::to_string(&serde_json::json!({"k": [s]})).unwrap();
        assert!(r.is_absent_from_json(&json("nothing here")));
        assert!(!r.is_absent_from_json(&json("x local-test-key-0123 y")));
        // A secret JSON escapes cannot be searched for in the text: never called absent.
        let quoted = Redactor::new(["quote\"in-the-secret"]);
        assert!(!quoted.is_absent_from_json(&json("nothing here")));
        assert!(Redactor::default().is_absent_from_json(&json("local-test-key-0123")));
        let more = Redactor::default().with(["another-secret-value"]);
        assert_eq!(more.redact("[another-secret-value]"), "[[REDACTED]]");
        // Secrets it holds already (or too short to count): the same list; a new one joins it.
        let same = r.with(["local-test-key-0123", "tiny"]);
        assert_eq!(same.secrets, r.secrets);
        assert_eq!(same.redact("local-test-key-0123456"), REDACTED);
        let grown = r.with(["local-test-key-0123", "yet-another-secret"]);
        assert_eq!(grown.secrets.len(), r.secrets.len() + 1);
        assert_eq!(
            grown.redact("yet-another-secret local-test-key-0123"),
            "[REDACTED] [REDACTED]"
        );
    }

    #[test]
    fn the_vault_never_prints_values() {
        let v = Vault::from_vars([("A_KEY".to_owned(), "value-of-the-key".to_owned())]);
        assert!(!format!("{v:?}").contains("value-of"));
        assert_eq!(v.get("A_KEY"), Some("value-of-the-key"));
        assert_eq!(v.lookup("A_KEY").as_deref(), Some("value-of-the-key"));
        assert_eq!(v.redactor().redact("value-of-the-key"), REDACTED);
    }
}
