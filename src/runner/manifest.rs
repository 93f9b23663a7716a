//! The manifest of a report folder, `report.json`: what the folder is a report of (the suite's
//! fingerprint, the options, the whole plan, the partition) and how far it got (interrupted or
//! complete, the counts). `harness run` writes it before the first run starts and again at the
//! end; `--resume` and `--rerun-errors` read it to run the same plan again, and `harness merge`
//! to check that shards belong together and to name the runs none of them has.
//!
//! ```json
//! {
//!   "format": 1,
//!   "harness_version": "0.1.0",
//!   "started_at": "2026-12-01T10:00:00.000Z",
//!   "updated_at": "2026-12-01T10:04:12.345Z",
//!   "interrupted": false,
//!   "complete": true,
//!   "sandbox": "isolated",
//!   "partition": "hash:1/3",
//!   "options": {"tasks": "tasks", "cassettes": "cassettes", "models": [], "mode": "replay", ...},
//!   "fingerprint": {"digest": "…", "harness_version": "0.1.0", "options": "…", "config": null,
//!                   "tasks": {"py-median": "…"}, "cassettes": {"py-median/anthropic--m.yaml": "…"}},
//!   "plan": ["py-median--anthropic--m--e1", …],
//!   "counts": {"planned": 12, "finished": 12, "interrupted": 0, "not_started": 0,
//!              "outcomes": {"passed": 12}}
//! }
//! ```
//!
//! `plan` lists every run of the whole suite (all shards), so a merge can name what is missing;
//! `counts.planned` is this folder's part. Hashes are hex SHA-256.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::record::{Outcome, RunRecord};

/// The manifest's file name in a report folder.
pub const MANIFEST_FILE: &str = "report.json";

/// The version of the manifest's layout.
pub const MANIFEST_FORMAT: u32 = 1;

/// `report.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    /// The harness that last wrote it.
    pub harness_version: String,
    pub started_at: String,
    pub updated_at: String,
    /// The last invocation on this folder was stopped by Ctrl-C or SIGTERM.
    pub interrupted: bool,
    /// Every run of this folder's part of the plan has finished.
    pub complete: bool,
    /// The sandbox tier the runs ran under (the one in force, after any fallback).
    pub sandbox: String,
    /// `hash:M/N` or `count:M/N` when this folder is one shard.
    pub partition: Option<String>,
    pub options: SuiteOptions,
    pub fingerprint: Fingerprint,
    /// The key of every run of the whole plan (every shard), in report order.
    pub plan: Vec<String>,
    pub counts: Counts,
    /// For a folder written by `harness merge`: the shards it was merged from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub merged_from: Vec<MergedShard>,
}

/// The options of `harness run` that decide which runs there are and what they do, as given
/// (`tasks` and `cassettes` say where the suite was; they are not fingerprinted, their contents
/// are).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteOptions {
    pub tasks: PathBuf,
    pub cassettes: PathBuf,
    /// `PROVIDER/MODEL`; empty: every recorded cassette.
    pub models: Vec<String>,
    /// The cassette mode in force (`replay`, `record`, ...).
    pub mode: String,
    pub on_divergence: String,
    pub epochs: u32,
    pub edit_strategies: Vec<String>,
    pub task_globs: Vec<String>,
    pub tags: Vec<String>,
    pub thinking: Option<String>,
    pub base_url: Option<String>,
    /// The tier asked for (`None`: the default).
    pub sandbox: Option<String>,
    pub max_cost: Option<f64>,
    /// The tool profiles (none: today's tools, the default).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_profiles: Vec<String>,
}

impl SuiteOptions {
    /// The differences from `now`, one `name: value in the report, value now` line each (the
    /// folders excepted).
    pub fn differences(&self, now: &SuiteOptions) -> Vec<String> {
        self.differences_as(now, ("in the report", "now"))
    }

    /// [`SuiteOptions::differences`] with other words for the two sides (`in the first shard`,
    /// `in this one`).
    pub fn differences_as(&self, now: &SuiteOptions, (this, that): (&str, &str)) -> Vec<String> {
        let mut out = Vec::new();
        let mut field = |name: &str, then: String, now: String| {
            if then != now {
                out.push(format!("`{name}`: {then} {this}, {now} {that}"));
            }
        };
        let list = |v: &[String]| {
            if v.is_empty() {
                "none".to_owned()
            } else {
                v.join(", ")
            }
        };
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".to_owned());
        field("--model", list(&self.models), list(&now.models));
        field("--cassette-mode", self.mode.clone(), now.mode.clone());
        field(
            "--on-divergence",
            self.on_divergence.clone(),
            now.on_divergence.clone(),
        );
        field("--epochs", self.epochs.to_string(), now.epochs.to_string());
        field(
            "--edit-strategy",
            list(&self.edit_strategies),
            list(&now.edit_strategies),
        );
        field("--task", list(&self.task_globs), list(&now.task_globs));
        field("--tag", list(&self.tags), list(&now.tags));
        field("--thinking", opt(&self.thinking), opt(&now.thinking));
        field(
            "--tool-profile",
            list(&self.tool_profiles),
            list(&now.tool_profiles),
        );
        field("--base-url", opt(&self.base_url), opt(&now.base_url));
        field("--sandbox", opt(&self.sandbox), opt(&now.sandbox));
        let cost = |c: Option<f64>| c.map_or_else(|| "none".to_owned(), |c| c.to_string());
        field("--max-cost", cost(self.max_cost), cost(now.max_cost));
        out
    }

    /// The options as fingerprinted: without the folders.
    pub fn fingerprinted(&self) -> SuiteOptions {
        SuiteOptions {
            tasks: PathBuf::new(),
            cassettes: PathBuf::new(),
            ..self.clone()
        }
    }
}

/// What a suite is made of, hashed: two folders with the same digest ran the same suite the
/// same way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// The hash of everything below.
    pub digest: String,
    pub harness_version: String,
    /// The hash of [`SuiteOptions::fingerprinted`].
    pub options: String,
    /// The hash of `harness.yaml`, when one was read.
    pub config: Option<String>,
    /// Per selected task: the hash of its folder (task.yaml, repo/, every file) and the suite's
    /// `defaults.yaml`.
    pub tasks: BTreeMap<String, String>,
    /// Per planned cassette (`task/provider--model.yaml` under the cassettes folder): the hash
    /// of its bytes, or `absent`. Empty in the modes that write cassettes (record, auto, live).
    pub cassettes: BTreeMap<String, String>,
}

/// What a cassette that does not exist hashes to.
pub const ABSENT: &str = "absent";

/// One way two fingerprints differ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FingerprintChange {
    HarnessVersion { then: String, now: String },
    Options,
    Config,
    TaskChanged(String),
    TaskAdded(String),
    TaskRemoved(String),
    CassetteChanged(String),
    CassetteAdded(String),
    CassetteRemoved(String),
}

impl std::fmt::Display for FingerprintChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FingerprintChange::HarnessVersion { then, now } => {
                write!(f, "harness version {then}, not {now}")
            }
            FingerprintChange::Options => f.write_str("the run options differ"),
            FingerprintChange::Config => f.write_str("harness.yaml changed"),
            FingerprintChange::TaskChanged(t) => write!(f, "task `{t}` changed"),
            FingerprintChange::TaskAdded(t) => write!(f, "task `{t}` is new"),
            FingerprintChange::TaskRemoved(t) => write!(f, "task `{t}` is gone (or not selected)"),
            FingerprintChange::CassetteChanged(c) => write!(f, "cassette `{c}` changed"),
            FingerprintChange::CassetteAdded(c) => write!(f, "cassette `{c}` is new"),
            FingerprintChange::CassetteRemoved(c) => write!(f, "cassette `{c}` is gone"),
        }
    }
}

impl FingerprintChange {
    /// Whether it is a change to the cassette at `path` (relative to the cassettes folder).
    pub fn cassette(&self) -> Option<&str> {
        match self {
            FingerprintChange::CassetteChanged(c)
            | FingerprintChange::CassetteAdded(c)
            | FingerprintChange::CassetteRemoved(c) => Some(c),
            _ => None,
        }
    }
}

impl Fingerprint {
    /// How `now` differs from this (the report's) fingerprint; empty when the digests agree.
    pub fn differences(&self, now: &Fingerprint) -> Vec<FingerprintChange> {
        let mut out = Vec::new();
        if self.digest == now.digest {
            return out;
        }
        if self.harness_version != now.harness_version {
            out.push(FingerprintChange::HarnessVersion {
                then: self.harness_version.clone(),
                now: now.harness_version.clone(),
            });
        }
        if self.options != now.options {
            out.push(FingerprintChange::Options);
        }
        if self.config != now.config {
            out.push(FingerprintChange::Config);
        }
        map_differences(
            &self.tasks,
            &now.tasks,
            &mut out,
            [
                FingerprintChange::TaskChanged,
                FingerprintChange::TaskAdded,
                FingerprintChange::TaskRemoved,
            ],
        );
        let mut cassettes = Vec::new();
        map_differences(
            &self.cassettes,
            &now.cassettes,
            &mut cassettes,
            [
                FingerprintChange::CassetteChanged,
                FingerprintChange::CassetteAdded,
                FingerprintChange::CassetteRemoved,
            ],
        );
        // A task that came or went takes its cassettes with it: saying so once is enough.
        let moved: Vec<String> = out
            .iter()
            .filter_map(|d| match d {
                FingerprintChange::TaskAdded(t) | FingerprintChange::TaskRemoved(t) => {
                    Some(format!("{t}/"))
                }
                _ => None,
            })
            .collect();
        out.extend(cassettes.into_iter().filter(|d| {
            d.cassette()
                .is_none_or(|c| !moved.iter().any(|t| c.starts_with(t.as_str())))
        }));
        out
    }
}

fn map_differences(
    then: &BTreeMap<String, String>,
    now: &BTreeMap<String, String>,
    out: &mut Vec<FingerprintChange>,
    [changed, added, removed]: [fn(String) -> FingerprintChange; 3],
) {
    for (k, v) in then {
        match now.get(k) {
            Some(w) if w == v => {}
            Some(_) => out.push(changed(k.clone())),
            None => out.push(removed(k.clone())),
        }
    }
    for k in now.keys().filter(|k| !then.contains_key(*k)) {
        out.push(added(k.clone()));
    }
}

/// How far a folder got.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Runs in this folder's part of the plan.
    pub planned: usize,
    /// Runs with a journal entry.
    pub finished: usize,
    /// Runs stopped mid-way by the interrupt (their workspaces removed, nothing kept).
    pub interrupted: usize,
    /// Runs never started (the interrupt came first, or the `--max-cost` budget was spent).
    pub not_started: usize,
    /// Finished runs per outcome.
    pub outcomes: BTreeMap<String, usize>,
}

impl Counts {
    /// The counts of a folder part whose plan has `planned` runs, of which `records` ended
    /// (a skipped run never started) and `interrupted` were stopped mid-run.
    pub fn tally(planned: usize, records: &[RunRecord], interrupted: usize) -> Counts {
        let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
        let mut finished = 0;
        for r in records.iter().filter(|r| r.outcome != Outcome::Skipped) {
            finished += 1;
            *outcomes.entry(r.outcome.name().to_owned()).or_default() += 1;
        }
        Counts {
            planned,
            finished,
            interrupted,
            not_started: planned.saturating_sub(finished + interrupted),
            outcomes,
        }
    }
}

/// A shard a merged folder was made from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergedShard {
    /// The folder as given to `harness merge`.
    pub dir: PathBuf,
    pub partition: Option<String>,
    /// Runs this merge took from it.
    pub runs: usize,
}

/// A failure to read or write a manifest.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error(
        "{0} has no report.json\nhint: pass a report folder written by `harness run` (an older harness wrote none; run the suite again)"
    )]
    Missing(PathBuf),
    #[error(
        "{0} does not exist\nhint: pass a report folder written by `harness run` (reports/<timestamp>)"
    )]
    NoFolder(PathBuf),
    #[error("failed to read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to read {path}: {source}\nhint: is it a report.json written by `harness run`?")]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("failed to write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Manifest {
    /// Reads `dir/report.json`.
    pub fn read(dir: &Path) -> Result<Manifest, ManifestError> {
        let path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&path).map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound && !dir.exists() {
                ManifestError::NoFolder(dir.to_path_buf())
            } else if source.kind() == std::io::ErrorKind::NotFound {
                ManifestError::Missing(dir.to_path_buf())
            } else {
                ManifestError::Read {
                    path: path.clone(),
                    source,
                }
            }
        })?;
        serde_json::from_str(&text).map_err(|source| ManifestError::Parse { path, source })
    }

    /// Writes `dir/report.json` atomically (a kill leaves the old one or the new one).
    pub fn write(&self, dir: &Path) -> Result<(), ManifestError> {
        let path = dir.join(MANIFEST_FILE);
        let err = |source| ManifestError::Write {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(err)?;
        let text = serde_json::to_string_pretty(self).map_err(|e| err(std::io::Error::other(e)))?;
        let tmp = dir.join(format!(".{MANIFEST_FILE}.tmp"));
        std::fs::write(&tmp, text + "\n").map_err(err)?;
        std::fs::rename(&tmp, &path).map_err(err)
    }
}

pub use crate::edits::corpus::sha256_hex;

#[cfg(test)]
mod tests {
    use super::*;

    fn fingerprint(tasks: &[(&str, &str)], cassettes: &[(&str, &str)]) -> Fingerprint {
        let mut f = Fingerprint {
            digest: String::new(),
            harness_version: "1".into(),
            options: "o".into(),
            config: None,
            tasks: tasks
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            cassettes: cassettes
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        f.digest = sha256_hex(format!("{f:?}").as_bytes());
        f
    }

    #[test]
    fn fingerprints_name_what_differs() {
        let then = fingerprint(&[("a", "1"), ("b", "2")], &[("a/p--m.yaml", "x")]);
        assert!(then.differences(&then.clone()).is_empty());
        let now = fingerprint(
            &[("a", "1"), ("b", "3"), ("c", "4")],
            &[("a/p--m.yaml", "y"), ("c/p--m.yaml", "z")],
        );
        let found: Vec<String> = then
            .differences(&now)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            found,
            [
                "task `b` changed",
                "task `c` is new",
                "cassette `a/p--m.yaml` changed"
            ]
        );
    }

    #[test]
    fn option_differences_name_the_flag() {
        let then = SuiteOptions {
            tasks: "tasks".into(),
            cassettes: "cassettes".into(),
            models: vec![],
            mode: "replay".into(),
            on_divergence: "stop".into(),
            epochs: 3,
            edit_strategies: vec!["pi".into()],
            task_globs: vec![],
            tags: vec![],
            thinking: None,
            base_url: None,
            sandbox: None,
            max_cost: None,
            tool_profiles: Vec::new(),
        };
        let now = SuiteOptions {
            tasks: "elsewhere/tasks".into(),
            epochs: 1,
            edit_strategies: vec!["pi".into(), "exact".into()],
            ..then.clone()
        };
        assert_eq!(
            then.differences(&now),
            [
                "`--epochs`: 3 in the report, 1 now",
                "`--edit-strategy`: pi in the report, pi, exact now"
            ]
        );
        assert_eq!(then.fingerprinted(), then.fingerprinted());
        assert_eq!(
            then.fingerprinted(),
            SuiteOptions {
                tasks: "other".into(),
                ..then.clone()
            }
            .fingerprinted(),
            "the folders are not fingerprinted"
        );
    }

    #[test]
    fn a_manifest_round_trips_and_a_missing_one_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let err = Manifest::read(dir.path()).unwrap_err();
        assert!(err.to_string().contains("has no report.json"), "{err}");
        let gone = dir.path().join("gone");
        let err = Manifest::read(&gone).unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("{} does not exist\n", gone.display())),
            "{err}"
        );
        let m = Manifest {
            format: MANIFEST_FORMAT,
            harness_version: "1".into(),
            started_at: "s".into(),
            updated_at: "u".into(),
            interrupted: true,
            complete: false,
            sandbox: "none".into(),
            partition: Some("hash:1/2".into()),
            options: SuiteOptions {
                tasks: "tasks".into(),
                cassettes: "cassettes".into(),
                models: vec!["p/m".into()],
                mode: "replay".into(),
                on_divergence: "stop".into(),
                epochs: 1,
                edit_strategies: vec![],
                task_globs: vec![],
                tags: vec![],
                thinking: None,
                base_url: None,
                sandbox: Some("none".into()),
                max_cost: Some(1.5),
                tool_profiles: Vec::new(),
            },
            fingerprint: fingerprint(&[("a", "1")], &[]),
            plan: vec!["a--p--m--e1".into()],
            counts: Counts {
                planned: 1,
                ..Counts::default()
            },
            merged_from: vec![],
        };
        m.write(dir.path()).unwrap();
        assert_eq!(Manifest::read(dir.path()).unwrap(), m);
        let text = std::fs::read_to_string(dir.path().join(MANIFEST_FILE)).unwrap();
        assert!(text.contains("\"interrupted\": true"), "{text}");
        assert!(!text.contains("merged_from"), "{text}");
    }
}
