//! Cassettes: recorded provider traffic (`../shared/design/cassettes.md`), a transport that
//! records or replays.
//!
//! A [`Recorder`] wraps the live transport and writes what passes (secrets refused, the workspace
//! path replaced by a placeholder); a [`Player`] answers from a file and reports a structured
//! [`Divergence`] when the request the harness builds now differs from the recorded one. Both
//! implement [`crate::providers::transport::Transport`], so providers never know which one they
//! talk to. [`noise`] holds the built-in normalisation rules for volatile tool output applied
//! before comparing, and [`divergence`] classifies what differs between the recorded and the
//! current requests in conversation terms (a pure function over two conversations). Depends on
//! `providers` (the transport seam and `ApiKind`) only; never on the agent, the runner or the
//! reports.
//!
//! How a runner uses it (both types are cheap clones sharing state, so keep one clone and hand
//! the provider an `Arc` of another):
//!
//! ```text
//! let mode = resolve_mode(cli_flag, |k| std::env::var(k).ok())?;
//! let path = cassette_path(&root, &task.id, &spec.provider, &spec.model);
//! match mode.plan(path.exists()) {
//!     CassettePlan::Replay => {
//!         let player = Player::load(&path, task_rules, &workspace)?;   // Missing -> hint to record
//!         let provider = providers::build(spec, Arc::new(player.clone()));
//!         /* run */  player.divergence()  /  player.unused_interactions()
//!     }
//!     CassettePlan::Record => {
//!         let recorder = Recorder::new(live, workspace.clone(), keys_in_use);
//!         let provider = providers::build(spec, Arc::new(recorder.clone()));
//!         /* run; only if it finished */ recorder.finish(CassetteHeader::new(..), &path)?;
//!     }
//!     CassettePlan::Live => { /* the live transport directly */ }
//! }
//! ```

pub mod check;
pub mod divergence;
pub mod format;
pub mod noise;
pub mod normalize;
pub mod player;
pub mod recorder;
pub mod rerecorder;
pub mod review;
pub mod secrets;
pub mod sse_capture;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use format::{Cassette, CassetteHeader, WORKSPACE_PLACEHOLDER};
pub use normalize::NormalizeRule;
pub use player::{Divergence, Mismatch, OnDivergence, Player};
pub use recorder::Recorder;
pub use rerecorder::Rerecorder;
pub use secrets::SecretFinding;

/// How the harness uses cassettes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum CassetteMode {
    /// Answer from cassettes only; never touch the network. A missing cassette is an error.
    Replay,
    /// Call the live provider and (re)write the cassette.
    Record,
    /// Replay what exists, record what is missing. Behaves as `replay` under `CI`.
    Auto,
    /// Call the live provider, no cassette read or written.
    Live,
    /// Replay the matched prefix, go live at the first request that differs, and write the new
    /// conversation beside the old cassette as `NAME.yaml.new` for `harness review`. Under `CI`
    /// it goes no further than a replay and says what would be re-recorded.
    Rerecord,
}

/// The environment variable naming the mode when no flag is given.
pub const MODE_ENV: &str = "HARNESS_CASSETTE_MODE";

/// What to do for one task, once the mode and the cassette's existence are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CassettePlan {
    Replay,
    Record,
    Live,
    Rerecord,
}

impl CassetteMode {
    /// The plan for one task: `auto` records only when the cassette does not exist.
    pub fn plan(self, cassette_exists: bool) -> CassettePlan {
        match self {
            CassetteMode::Replay => CassettePlan::Replay,
            CassetteMode::Record => CassettePlan::Record,
            CassetteMode::Live => CassettePlan::Live,
            // Nothing to replay: the whole conversation is new, and still goes to review.
            CassetteMode::Rerecord => CassettePlan::Rerecord,
            CassetteMode::Auto if cassette_exists => CassettePlan::Replay,
            CassetteMode::Auto => CassettePlan::Record,
        }
    }
}

/// Whether `CI` is set in the sense of the spec: to anything but empty, `0` or `false`.
pub fn ci_set(value: Option<&str>) -> bool {
    match value.map(str::trim) {
        None | Some("") | Some("0") => false,
        Some(v) => !v.eq_ignore_ascii_case("false"),
    }
}

/// The effective mode: an explicit flag beats `HARNESS_CASSETTE_MODE` beats the default
/// (`replay`); then, under `CI`, `auto` becomes `replay`. `env` looks a variable up (pass
/// `|k| std::env::var(k).ok()` in the binary).
pub fn resolve_mode(
    flag: Option<CassetteMode>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<CassetteMode, CassetteError> {
    let mode = match flag {
        Some(m) => m,
        None => match env(MODE_ENV).filter(|v| !v.trim().is_empty()) {
            Some(v) => <CassetteMode as clap::ValueEnum>::from_str(v.trim(), true)
                .map_err(|_| CassetteError::BadMode { value: v.clone() })?,
            None => CassetteMode::Replay,
        },
    };
    if mode == CassetteMode::Auto && ci_set(env("CI").as_deref()) {
        return Ok(CassetteMode::Replay);
    }
    Ok(mode)
}

/// Makes a name safe as one file-name component: anything but `[A-Za-z0-9._-]` becomes `_`,
/// and a leading `.` becomes `_` (`openai/gpt-4o:latest` -> `openai_gpt-4o_latest`).
pub fn sanitize_component(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.starts_with('.') || s.is_empty() {
        s.insert(0, '_');
    }
    s
}

/// The longest name a cassette file gets: file systems take names of up to 255 bytes, and a
/// long model id (a Bedrock ARN, a fine-tune's full name) would pass that.
const MAX_CASSETTE_FILE_NAME: usize = 200;

/// `<root>/<task-id>/<provider>--<model>.yaml`, provider and model sanitised for file names,
/// and fitted to [`MAX_CASSETTE_FILE_NAME`] bytes ([`fit_name`]).
pub fn cassette_path(root: &Path, task: &str, provider: &str, model: &str) -> PathBuf {
    let name = format!(
        "{}--{}",
        sanitize_component(provider),
        sanitize_component(model)
    );
    root.join(sanitize_component(task))
        .join(fit_name(&name, ".yaml", MAX_CASSETTE_FILE_NAME))
}

/// `name` then `tail`, in at most `max` bytes: a `name` too long keeps its start and ends in the
/// first 16 hex digits of its SHA-256, so that different names still get different files (the
/// same ones in every harness version). `name` is ASCII ([`sanitize_component`]'s), and `max`
/// leaves room for the tail and the digest.
pub fn fit_name(name: &str, tail: &str, max: usize) -> String {
    if name.len() + tail.len() <= max {
        return format!("{name}{tail}");
    }
    use sha2::Digest;
    let digest = sha2::Sha256::digest(name.as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    let mut end = max - tail.len() - hex.len() - 1;
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}-{hex}{tail}", &name[..end])
}

/// Every cassette file under `root` (`<root>/<task>/*.yaml`), sorted.
pub fn cassette_files(root: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_dir(e.path()).ok())
        .flatten()
        .flatten()
        .map(|f| f.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
}

/// The command that records a task's cassette (with the default folders).
pub fn record_hint(task: &str, provider: &str, model: &str) -> String {
    record_hint_in(
        Path::new("tasks/"),
        Path::new("cassettes"),
        task,
        provider,
        model,
    )
}

/// The command that records a task's cassette, naming the tasks and cassettes folders the user
/// ran with (`--cassettes` only when it is not the default).
pub fn record_hint_in(
    tasks: &Path,
    cassettes: &Path,
    task: &str,
    provider: &str,
    model: &str,
) -> String {
    let cassettes_flag = if cassettes == Path::new("cassettes") {
        String::new()
    } else {
        format!(" --cassettes {}", cassettes.display())
    };
    format!(
        "harness run {}{cassettes_flag} --task {task} --cassette-mode record --model {provider}/{model}",
        tasks.display()
    )
}

/// Why a cassette could not be read, written or used.
#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    /// Replay mode and no cassette for this task and model.
    #[error("no cassette at `{}`\nhint: record it with `{hint}`", path.display())]
    Missing { path: PathBuf, hint: String },
    /// The file is not valid cassette YAML.
    #[error("failed to parse cassette `{}` at {location}: {message}", path.display())]
    Malformed {
        path: PathBuf,
        location: String,
        message: String,
    },
    /// The file exists but holds nothing.
    #[error("cassette `{}` is an empty file\nhint: delete it and record it again, or restore it from version control", path.display())]
    Empty { path: PathBuf },
    /// The file has another format version.
    #[error("cassette `{}` has format_version {found}; this harness reads format_version 1 and 2\nhint: a newer harness wrote it; upgrade harness", path.display())]
    Version { path: PathBuf, found: String },
    /// Reading or writing failed.
    #[error("failed to {action} cassette `{}`: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// The secret scan found something: nothing was written, any existing file was kept.
    #[error("refused to write cassette `{}`: it would contain {} secret(s); the existing file, if any, is unchanged:\n{}",
        path.display(), findings.len(),
        findings.iter().map(|f| format!("  {f}")).collect::<Vec<_>>().join("\n"))]
    Secret {
        path: PathBuf,
        findings: Vec<SecretFinding>,
    },
    /// Serialisation failed (should not happen).
    #[error("failed to serialise cassette `{}`: {message}", path.display())]
    Serialize { path: PathBuf, message: String },
    /// `HARNESS_CASSETTE_MODE` holds something else than a mode.
    #[error("{MODE_ENV}={value:?} is not a cassette mode (replay, record, auto, live, rerecord)")]
    BadMode { value: String },
}

impl CassetteError {
    /// A `Missing` error whose hint is the command that records it.
    pub fn missing(path: &Path, task: &str, provider: &str, model: &str) -> Self {
        CassetteError::Missing {
            path: path.to_owned(),
            hint: record_hint(task, provider, model),
        }
    }

    /// A `Missing` error whose ids are guessed from `<root>/<task>/<provider>--<model>.yaml`.
    pub fn missing_unknown(path: &Path) -> Self {
        let task = path
            .parent()
            .and_then(Path::file_name)
            .map_or_else(|| "<task>".to_owned(), |s| s.to_string_lossy().into_owned());
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (provider, model) = stem.split_once("--").unwrap_or(("<provider>", "<model>"));
        CassetteError::missing(path, &task, provider, model)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use CassetteMode::*;

    fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    #[test]
    fn mode_resolution_table() {
        type Row<'a> = (Option<CassetteMode>, &'a [(&'a str, &'a str)], CassetteMode);
        let table: &[Row] = &[
            (None, &[], Replay),
            (None, &[("HARNESS_CASSETTE_MODE", "record")], Record),
            (None, &[("HARNESS_CASSETTE_MODE", "LIVE")], Live),
            (None, &[("HARNESS_CASSETTE_MODE", "")], Replay),
            (Some(Live), &[("HARNESS_CASSETTE_MODE", "record")], Live),
            (Some(Auto), &[], Auto),
            (Some(Auto), &[("CI", "true")], Replay),
            (Some(Auto), &[("CI", "1")], Replay),
            (Some(Auto), &[("CI", "0")], Auto),
            (Some(Auto), &[("CI", "false")], Auto),
            (Some(Auto), &[("CI", "FALSE")], Auto),
            (Some(Auto), &[("CI", "")], Auto),
            (
                None,
                &[("HARNESS_CASSETTE_MODE", "auto"), ("CI", "yes")],
                Replay,
            ),
            (None, &[("HARNESS_CASSETTE_MODE", "auto")], Auto),
            (Some(Record), &[("CI", "true")], Record),
            (
                None,
                &[("HARNESS_CASSETTE_MODE", "live"), ("CI", "true")],
                Live,
            ),
        ];
        for (flag, vars, want) in table {
            assert_eq!(
                resolve_mode(*flag, env_of(vars)).unwrap(),
                *want,
                "flag {flag:?} env {vars:?}"
            );
        }
    }

    #[test]
    fn bad_env_mode_is_an_error() {
        let err = resolve_mode(None, env_of(&[("HARNESS_CASSETTE_MODE", "recrod")])).unwrap_err();
        assert!(err.to_string().contains("\"recrod\""), "{err}");
        // An explicit flag wins even over a bad variable.
        assert_eq!(
            resolve_mode(Some(Live), env_of(&[("HARNESS_CASSETTE_MODE", "recrod")])).unwrap(),
            Live
        );
    }

    #[test]
    fn auto_plans() {
        assert_eq!(Auto.plan(true), CassettePlan::Replay);
        assert_eq!(Auto.plan(false), CassettePlan::Record);
        assert_eq!(Replay.plan(false), CassettePlan::Replay);
    }

    #[test]
    fn paths_are_sanitised() {
        assert_eq!(
            cassette_path(
                Path::new("cassettes"),
                "fix-bug",
                "openrouter",
                "anthropic/claude-3.5:beta"
            ),
            PathBuf::from("cassettes/fix-bug/openrouter--anthropic_claude-3.5_beta.yaml")
        );
        assert_eq!(sanitize_component("../x"), "_.._x");
        assert_eq!(sanitize_component(""), "_");
    }

    #[test]
    fn a_model_id_too_long_for_a_file_name_is_fitted_and_kept_apart_by_its_digest() {
        let dir = tempfile::tempdir().unwrap();
        let long = |end: &str| format!("arn:aws:bedrock:{}{end}", "x".repeat(300));
        let paths: Vec<PathBuf> = ["a", "b"]
            .iter()
            .map(|end| cassette_path(dir.path(), "t", "bedrock", &long(end)))
            .collect();
        assert_ne!(paths[0], paths[1]);
        for path in &paths {
            let name = path.file_name().unwrap().to_str().unwrap();
            assert_eq!(name.len(), MAX_CASSETTE_FILE_NAME, "{name}");
            assert!(name.starts_with("bedrock--arn_aws_bedrock_xxx"), "{name}");
            assert!(name.ends_with(".yaml"), "{name}");
            // The file system takes it.
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        // The same id gives the same file every time.
        assert_eq!(
            cassette_path(dir.path(), "t", "bedrock", &long("a")),
            paths[0]
        );
        // Multi-byte text is cut on a character boundary.
        assert_eq!(fit_name(&"é".repeat(20), ".y", 30).len(), 29);
    }

    #[test]
    fn missing_error_names_the_record_command() {
        let e = CassetteError::missing(Path::new("c/t/a--m.yaml"), "t", "anthropic", "m");
        assert_eq!(
            e.to_string(),
            "no cassette at `c/t/a--m.yaml`\nhint: record it with `harness run tasks/ --task t --cassette-mode record --model anthropic/m`"
        );
    }
}
