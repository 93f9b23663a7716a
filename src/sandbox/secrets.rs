//! The secrets the harness holds, kept out of its own environment and out of every report.
//!
//! * Classification: [`is_secret_var`] says whether an environment variable is a secret, by the
//!   names the provider catalog reads keys from (passed in), a broad name heuristic
//!   ([`is_secret_name`]) and the value itself ([`is_secret_value`]: URLs with a password,
//!   key-shaped strings from [`key_shapes`]).
//! * Sealing: [`seal`] runs first thing in the binary. Every variable the harness does not read
//!   itself later ([`is_kept_var`]: `PATH`, `HOME`, the locale, the toolchain homes, `CI`,
//!   `NO_COLOR`, `HARNESS_*`, ...) and every secret is written into an anonymous in-memory file
//!   (memfd), removed from the environment, and the binary re-executes itself with the same
//!   arguments, passing the descriptor's number in [`SEALED_FD_VAR`]. The new process image
//!   reads the variables into a [`Vault`] (secrets, redacted from reports, apart from the other
//!   variables, only held) when it needs them, or just closes the descriptor when it does not
//!   (`harness tool` holds no key), so its `/proc/self/environ` holds neither a key nor an
//!   unknown variable (`MYSQL_PWD`, `SLACK_WEBHOOK`), in any sandbox tier. For `run`, the
//!   credentials of a URL among the arguments (`--base-url https://user:password@gateway/v1`,
//!   `?key=…`) go the same way: `/proc/<pid>/cmdline` is readable by every process on the
//!   machine, dumpable or not, so the new image is started with them masked ([`masked_url`]) and
//!   takes the arguments as given back from the vault ([`Vault::restore_args`]).
//! * Hiding: [`make_undumpable`] then makes the final process non-dumpable (`PR_SET_DUMPABLE`
//!   0): a process of the same user can no longer read its `/proc/<pid>/mem`, `environ` or
//!   `fd/`, nor ptrace it, and no core file is written; only a process with `CAP_SYS_PTRACE`
//!   (root) could, which is why a root harness runs the agent's commands as another user outside
//!   `isolated` ([`super::Sandbox::with_unprivileged_commands`]).
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

/// The variables the harness reads itself after it starts, or that shape how it runs, kept in
/// its environment by [`seal`] (everything else is sealed away): the command search path and
/// home, the locale and terminal, the temp folder, the toolchain homes the commands' environment
/// is built from ([`super::env`]), CI and colour settings, the report summary file, proxies and
/// certificates for the HTTP client, Rust's and the allocator's own settings.
const KEPT: [&str; 31] = [
    "PATH",
    "HOME",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TZ",
    "TMPDIR",
    "CI",
    "NO_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "GITHUB_STEP_SUMMARY",
    "RUSTUP_HOME",
    "CARGO_HOME",
    "PYENV_ROOT",
    "NVM_DIR",
    "RUSTUP_TOOLCHAIN",
    "PYENV_VERSION",
    "RUST_BACKTRACE",
    "RUST_LIB_BACKTRACE",
    "RUST_LOG",
    "RUST_MIN_STACK",
    "MALLOC_CONF",
    "_RJEM_MALLOC_CONF",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    SEALED_FD_VAR,
];

/// Prefixes of kept variables: the locale (`LC_*`), the harness's own settings (`HARNESS_*`),
/// the dynamic loader's (`LD_*`, which the re-executed binary needs as the first one did).
const KEPT_PREFIXES: [&str; 3] = ["LC_", "HARNESS_", "LD_"];

/// Whether [`seal`] keeps `name` in the environment (when its value is no secret).
pub fn is_kept_var(name: &str) -> bool {
    // The proxy variables are read in lower case too.
    let upper = name.to_ascii_uppercase();
    let proxy = upper.ends_with("_PROXY") && KEPT.contains(&upper.as_str());
    KEPT.contains(&name) || proxy || KEPT_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Whether an environment variable name looks like it holds a credential (case-insensitive):
/// any name containing KEY, TOKEN, SECRET, PASS (PASSWORD, PASSWD, PASSPHRASE, DOCKER_PASS...),
/// CREDENTIAL, AUTH, SESSION, COOKIE, PRIVATE or WEBHOOK; ending in `_PAT`, `_DSN` or `_PWD`
/// (or named `PAT` or `DSN`); every `AWS_*` variable; and a few well-known credential variables
/// that match none of those (`NETRC`, `PGSERVICEFILE`, `SSH_AUTH_SOCK`'s kin are caught by AUTH).
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    if NEVER_SECRET.contains(&upper.as_str()) {
        return false;
    }
    const WORDS: [&str; 10] = [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASS",
        "CREDENTIAL",
        "AUTH",
        "SESSION",
        "COOKIE",
        "PRIVATE",
        "WEBHOOK",
    ];
    const SUFFIXES: [&str; 3] = ["_PAT", "_DSN", "_PWD"];
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

/// The variables moved out of the environment at start, held in memory: the secrets (redacted
/// from every report) and the others the harness does not read itself (only held, so that a key
/// a provider names under an unusual variable is still found).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Vault {
    vars: BTreeMap<String, String>,
    held: BTreeMap<String, String>,
    /// Arguments started masked, by their index in the command line, as they were given.
    args: BTreeMap<usize, String>,
}

impl std::fmt::Debug for Vault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the values.
        f.debug_struct("Vault")
            .field("names", &self.vars.keys().collect::<Vec<_>>())
            .field("held", &self.held.keys().collect::<Vec<_>>())
            .field("masked_args", &self.args.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Vault {
    /// A vault holding `vars` (tests, and what [`seal`] read back).
    pub fn from_vars(vars: impl IntoIterator<Item = (String, String)>) -> Self {
        Vault {
            vars: vars.into_iter().collect(),
            held: BTreeMap::new(),
            args: BTreeMap::new(),
        }
    }

    /// Whether arguments of the command line were masked by [`seal`] (and so the process's
    /// own arguments are not the ones given).
    pub fn masked_args(&self) -> bool {
        !self.args.is_empty()
    }

    /// `args` (this process's command line) with the arguments [`seal`] masked as they were
    /// given.
    pub fn restore_args(&self, mut args: Vec<OsString>) -> Vec<OsString> {
        for (i, given) in &self.args {
            if let Some(arg) = args.get_mut(*i) {
                *arg = OsString::from(given);
            }
        }
        args
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

    /// The names of the variables held that are no secrets, sorted.
    pub fn held_names(&self) -> impl Iterator<Item = &str> {
        self.held.keys().map(String::as_str)
    }

    /// Looks `name` up: the secrets, the other sealed variables, then the (sealed, so
    /// secret-free) environment.
    pub fn lookup(&self, name: &str) -> Option<String> {
        self.get(name)
            .or_else(|| self.held.get(name).map(String::as_str))
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
    #[error("failed to create an in-memory file for the keys: {0}")]
    Memfd(#[source] std::io::Error),
    #[error("failed to re-execute the harness without its keys in the environment: {0}")]
    Exec(#[source] std::io::Error),
    #[error("failed to read the sealed keys from descriptor {fd}: {source}")]
    Read {
        fd: String,
        #[source]
        source: std::io::Error,
    },
}

/// Whether the final process reads the sealed variables back ([`seal`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unseal {
    /// Into the vault (`harness run`: the keys of the providers).
    Read,
    /// Not at all: the descriptor is closed unread, the process holds no key (`harness tool`).
    Discard,
}

/// Moves every secret, and every variable the harness does not read itself, out of the process
/// environment (see the module docs). Returns the vault when the environment holds nothing to
/// seal (nothing to move, or this is the re-executed image); otherwise it does not return: the
/// process image is replaced. Call it first thing in `main`, while the process has a single
/// thread, then [`make_undumpable`].
pub fn seal(key_names: &[String], unseal: Unseal) -> Result<Vault, SealError> {
    if let Some(fd) = std::env::var_os(SEALED_FD_VAR) {
        return match unseal {
            Unseal::Read => read_sealed(&fd),
            Unseal::Discard => {
                discard_sealed(&fd);
                Ok(Vault::default())
            }
        };
    }
    let mut records = Vec::new();
    let mut kept = Vec::new();
    let mut args: Vec<OsString> = std::env::args_os().collect();
    if unseal == Unseal::Read {
        for (i, arg) in args.iter_mut().enumerate().skip(1) {
            let Some(given) = arg.to_str().filter(|a| a.contains("://")) else {
                continue;
            };
            let masked = masked_url(given);
            if masked != given {
                for field in [b"a".as_slice(), i.to_string().as_bytes(), given.as_bytes()] {
                    records.extend_from_slice(field);
                    records.push(0);
                }
                *arg = OsString::from(masked);
            }
        }
    }
    for (k, v) in std::env::vars_os() {
        let (name, value) = (k.to_string_lossy(), v.to_string_lossy());
        let kind: &[u8] = if is_secret_var(&name, &value, key_names) {
            b"s"
        } else if is_kept_var(&name) {
            kept.push((k, v));
            continue;
        } else {
            b"h"
        };
        for field in [kind, k.as_bytes(), v.as_bytes()] {
            records.extend_from_slice(field);
            records.push(0);
        }
    }
    if records.is_empty() {
        return Ok(Vault::default());
    }
    let fd =
        nix::sys::memfd::memfd_create(c"harness-keys", nix::sys::memfd::MemFdCreateFlag::empty())
            .map_err(|e| SealError::Memfd(e.into()))?;
    let mut file = std::fs::File::from(fd);
    file.write_all(&records).map_err(SealError::Memfd)?;
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let mut args = args.into_iter();
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

/// Makes this process non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`): processes of the same user
/// can no longer read its memory, environment or descriptors through `/proc`, nor ptrace it.
/// Call it in the final process image, after [`seal`] (an `exec` makes a process dumpable again).
pub fn make_undumpable() -> std::io::Result<()> {
    nix::sys::prctl::set_dumpable(false).map_err(std::io::Error::from)
}

/// The inherited descriptor's number.
fn sealed_fd(fd: &OsStr) -> Result<i32, SealError> {
    let text = fd.to_string_lossy().into_owned();
    text.parse().map_err(|_| SealError::Read {
        fd: text,
        source: std::io::Error::other("not a descriptor number"),
    })
}

/// Closes the inherited descriptor without reading it.
fn discard_sealed(fd: &OsStr) {
    if let Ok(number) = sealed_fd(fd) {
        let _closed = nix::unistd::close(number);
    }
}

/// Reads the records back from the inherited descriptor and closes it.
fn read_sealed(fd: &OsStr) -> Result<Vault, SealError> {
    let number = sealed_fd(fd)?;
    let read_err = |source| SealError::Read {
        fd: number.to_string(),
        source,
    };
    // A fresh open of the memfd starts at offset 0 (the inherited description is at its end).
    let mut bytes = Vec::new();
    std::fs::File::open(format!("/proc/self/fd/{number}"))
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(read_err)?;
    // Close the inherited descriptor so no child of the harness inherits it.
    let _closed = nix::unistd::close(number);
    let mut vault = Vault::default();
    let text = |b: &[u8]| {
        OsString::from_vec(b.to_vec())
            .to_string_lossy()
            .into_owned()
    };
    let mut fields = bytes.split(|b| *b == 0);
    while let (Some(kind), Some(k), Some(v)) = (fields.next(), fields.next(), fields.next()) {
        if k.is_empty() {
            continue;
        }
        let map = match kind {
            b"s" => &mut vault.vars,
            b"a" => {
                if let Ok(i) = text(k).parse() {
                    vault.args.insert(i, text(v));
                }
                continue;
            }
            _ => &mut vault.held,
        };
        map.insert(text(k), text(v));
    }
    Ok(vault)
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

    /// The JSON document `json` with every secret replaced in each of its strings (as it is when
    /// it can hold none; unchanged when it is not JSON).
    pub fn redact_json<'a>(&self, json: &'a str) -> Cow<'a, str> {
        if self.is_absent_from_json(json) {
            return Cow::Borrowed(json);
        }
        fn each(value: &mut serde_json::Value, redactor: &Redactor) {
            match value {
                serde_json::Value::String(s) => {
                    if let Cow::Owned(redacted) = redactor.redact(s) {
                        *s = redacted;
                    }
                }
                serde_json::Value::Array(items) => items.iter_mut().for_each(|v| each(v, redactor)),
                serde_json::Value::Object(fields) => {
                    fields.values_mut().for_each(|v| each(v, redactor));
                }
                _ => {}
            }
        }
        let Ok(mut value) = serde_json::from_str::<serde_json::Value>(json) else {
            return Cow::Borrowed(json);
        };
        each(&mut value, self);
        serde_json::to_string(&value).map_or(Cow::Borrowed(json), Cow::Owned)
    }
}

/// The parts of `url` that are credentials: the user-info's password (or the whole user-info
/// when it has none, as in `https://TOKEN@host`), and the value of every query parameter whose
/// name looks like a secret's (`key`, `api_key`, `token`, `sig`, ...; see [`is_secret_name`]),
/// each as written and percent-decoded. A base URL is where some proxies and gateways take
/// their key; these are redacted from reports like the sealed keys.
pub fn url_secrets(url: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in secret_ranges(url).into_iter().map(|r| &url[r]) {
        if raw.is_empty() {
            continue;
        }
        let decoded = percent_decoded(raw);
        if decoded != raw {
            out.push(decoded);
        }
        out.push(raw.to_owned());
    }
    out
}

/// `url` as a report may show it: every part [`url_secrets`] finds replaced with [`REDACTED`],
/// whatever its length.
pub fn masked_url(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    let mut at = 0;
    for range in secret_ranges(url) {
        out.push_str(&url[at..range.start]);
        out.push_str(REDACTED);
        at = range.end;
    }
    out.push_str(&url[at..]);
    out
}

/// Where the credentials of `url` are, as byte ranges of it, in order.
fn secret_ranges(url: &str) -> Vec<std::ops::Range<usize>> {
    let mut secret_ranges = Vec::new();
    let start = url.find("://").map_or(0, |i| i + 3);
    let authority_end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    if let Some(at) = url[start..authority_end].rfind('@') {
        let userinfo = start..start + at;
        match url[userinfo.clone()].find(':') {
            Some(colon) => secret_ranges.push(userinfo.start + colon + 1..userinfo.end),
            None => secret_ranges.push(userinfo),
        }
    }
    if let Some(q) = url[authority_end..].find('?') {
        let query_start = authority_end + q + 1;
        let query_end = url[query_start..]
            .find('#')
            .map_or(url.len(), |i| query_start + i);
        let mut pair_start = query_start;
        for pair in url[query_start..query_end].split('&') {
            if let Some(eq) = pair.find('=') {
                let name = percent_decoded(&pair[..eq]);
                if is_secret_name(&name) || SECRET_QUERY_NAMES.contains(&name.as_str()) {
                    secret_ranges.push(pair_start + eq + 1..pair_start + pair.len());
                }
            }
            pair_start += pair.len() + 1;
        }
    }
    secret_ranges
}

/// Query parameter names that hold a credential though [`is_secret_name`] does not say so:
/// signed URLs' signatures (`sig` in Azure's shared access signatures, `sas`, `signature`),
/// Azure Functions' `code`, and `pwd`.
const SECRET_QUERY_NAMES: [&str; 5] = ["sig", "signature", "code", "pwd", "sas"];

/// `text` with its `%XX` escapes decoded (bytes that are not UTF-8 replaced).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_s_credentials_are_found_and_masked() {
        let url = "https://alice:hunter2%21pw@gw.example.com:8443/v1?api-version=2024-02-01\
                   &key=AIzaSyA-0123456789&sig=abc%2Fdef#frag";
        assert_eq!(
            url_secrets(url),
            [
                "hunter2!pw",
                "hunter2%21pw",
                "AIzaSyA-0123456789",
                "abc/def",
                "abc%2Fdef"
            ]
        );
        assert_eq!(
            masked_url(url),
            "https://alice:[REDACTED]@gw.example.com:8443/v1?api-version=2024-02-01\
             &key=[REDACTED]&sig=[REDACTED]#frag"
        );
        // A token given as the user name; an at-sign in the path is not user-info.
        assert_eq!(
            masked_url("http://sk-live-token@127.0.0.1:1/v1/@x?token=t"),
            "http://[REDACTED]@127.0.0.1:1/v1/@x?token=[REDACTED]"
        );
        for plain in [
            "http://127.0.0.1:8000/v1",
            "https://api.openai.com/v1?api-version=1",
            "http://[::1]:8080/v1",
            "not a url",
        ] {
            assert_eq!(masked_url(plain), plain);
            assert!(url_secrets(plain).is_empty(), "{plain}");
        }
    }

    #[test]
    fn json_is_redacted_string_by_string() {
        let r = Redactor::new(["key=\"quoted\"value", "plain-secret-1"]);
        let json = r#"{"a":"x key=\"quoted\"value y","b":["plain-secret-1"],"n":1}"#;
        assert_eq!(
            r.redact_json(json),
            r#"{"a":"x [REDACTED] y","b":["[REDACTED]"],"n":1}"#
        );
        assert!(matches!(
            Redactor::new(["plain-secret-1"]).redact_json(r#"{"a":"nothing"}"#),
            Cow::Borrowed(_)
        ));
    }

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
