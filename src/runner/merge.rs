//! `harness merge`: one report folder from the report folders of the shards of one suite
//! (`harness run --partition`), written as if one machine had run everything.
//!
//! Every shard must carry the same suite fingerprint (its manifest's digest) and the same plan;
//! a shard that does not is refused by name, with what differs. For each run of the plan the
//! last finished attempt wins (the latest `finished_at` of its journal entries, across shards),
//! so merging again as shards arrive, or after a shard was run again, is safe: the folder
//! merged into is itself one of the sources when it already holds a merge. A run finished by
//! more than one shard is reported as duplicated; runs no shard finished are reported as
//! missing, and a shard that was never merged is named when the shards are partitions of one
//! kind and count. The result is a complete report folder: the run folders, `journal.jsonl`,
//! `report.json` (without a partition, with the whole plan, so `harness run --resume` can run
//! the missing runs anywhere), `runs.csv`, the summaries, `report.html`, `junit.xml` and
//! `edits.jsonl` with its blobs. `events.jsonl` stays with each shard.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::record::RunRecord;

use super::journal::{self, JournalEntry, JournalError};
use super::manifest::{
    Counts, FingerprintChange, MANIFEST_FORMAT, Manifest, ManifestError, MergedShard,
};
use super::partition::Partition;
use super::suite::{FinishOptions, SuiteOutcome, finish_blocking};

/// Why a merge could not be made.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("nothing to merge: name at least one shard's report folder")]
    NoShards,
    #[error("`--into {0}` is also one of the shards; merge into another folder")]
    IntoIsAShard(PathBuf),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error("the shards ran different suites:\n{0}")]
    Fingerprints(String),
    #[error("failed to copy {from} to {to}: {source}")]
    Copy {
        from: PathBuf,
        to: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl MergeError {
    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            MergeError::NoShards | MergeError::IntoIsAShard(_) => {
                "harness merge SHARD_DIR... --into DIR"
            }
            MergeError::Fingerprints(_) => {
                "merge only shards of one suite run with the same options and harness; run the \
                 odd shards again from the same checkout"
            }
            _ => "pass report folders written by `harness run`",
        }
    }
}

/// What a merge found and wrote.
#[derive(Debug)]
pub struct Merged {
    /// The merged folder as a suite's outcome: the winning record of every finished run in
    /// report order, its manifest, the report files written; its warnings say which journal
    /// lines were skipped and whether the shards ran under different sandbox tiers.
    pub outcome: SuiteOutcome,
    /// Runs of the plan no shard finished, in report order.
    pub missing: Vec<String>,
    /// Runs finished by more than one source, with the folders that hold them.
    pub duplicated: Vec<(String, Vec<PathBuf>)>,
    /// Shards of the partition that were not given (`hash:2/3`), when that can be told.
    pub missing_shards: Vec<String>,
}

/// One folder read.
struct Source {
    dir: PathBuf,
    manifest: Manifest,
    entries: Vec<JournalEntry>,
}

/// Merges the report folders `shards` into `into` (created, or merged again when it holds an
/// earlier merge); `options` for the report files.
pub fn merge(
    shards: &[PathBuf],
    into: &Path,
    options: &FinishOptions,
) -> Result<Merged, MergeError> {
    if shards.is_empty() {
        return Err(MergeError::NoShards);
    }
    let same_dir = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if shards.iter().any(|s| same_dir(s, into)) {
        return Err(MergeError::IntoIsAShard(into.to_path_buf()));
    }
    let mut warnings = Vec::new();
    let mut sources = Vec::new();
    // An earlier merge in `into` first: a shard's copy of the same attempt wins the tie.
    let earlier = into.join(super::manifest::MANIFEST_FILE).is_file();
    let dirs: Vec<PathBuf> = earlier
        .then(|| into.to_path_buf())
        .into_iter()
        .chain(shards.iter().cloned())
        .collect();
    for dir in dirs {
        let manifest = Manifest::read(&dir)?;
        let journal = journal::read_journal(&dir)?;
        for (line, why) in &journal.skipped {
            warnings.push(format!(
                "{}: line {line} skipped: {why}",
                dir.join(journal::JOURNAL_FILE).display()
            ));
        }
        sources.push(Source {
            dir,
            manifest,
            entries: journal.entries,
        });
    }
    check_fingerprints(&sources)?;
    let first = &sources[0].manifest;
    let plan = first.plan.clone();
    let in_plan: BTreeSet<&str> = plan.iter().map(String::as_str).collect();

    // The last attempt of each run, and who else finished it.
    let mut winners: HashMap<String, (usize, JournalEntry)> = HashMap::new();
    let mut holders: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, source) in sources.iter().enumerate() {
        let is_shard = !(earlier && i == 0);
        let mut latest: HashMap<&str, &JournalEntry> = HashMap::new();
        for e in &source.entries {
            latest.insert(e.run.as_str(), e);
        }
        for (key, e) in latest {
            if !in_plan.contains(key) {
                warnings.push(format!(
                    "{}: run `{key}` is not in the plan; left out",
                    source.dir.display()
                ));
                continue;
            }
            if is_shard {
                holders.entry(key.to_owned()).or_default().push(i);
            }
            let wins = winners
                .get(key)
                .is_none_or(|(_, w)| e.finished_at >= w.finished_at);
            if wins {
                winners.insert(key.to_owned(), (i, e.clone()));
            }
        }
    }
    // Duplicated: finished by more than one of the shards given (an earlier merge holding a
    // shard's attempt is not a second attempt).
    let duplicated: Vec<(String, Vec<PathBuf>)> = holders
        .into_iter()
        .filter(|(_, held)| held.len() > 1)
        .map(|(key, held)| {
            let dirs = held.iter().map(|i| sources[*i].dir.clone()).collect();
            (key, dirs)
        })
        .collect();
    let missing: Vec<String> = plan
        .iter()
        .filter(|k| !winners.contains_key(k.as_str()))
        .cloned()
        .collect();
    let missing_shards = missing_shards(&sources[usize::from(earlier)..]);

    // The run folders: each from the source of its winning attempt; nothing else stays.
    let runs_dir = into.join("runs");
    std::fs::create_dir_all(&runs_dir).map_err(|source| MergeError::Copy {
        from: runs_dir.clone(),
        to: runs_dir.clone(),
        source,
    })?;
    for key in &plan {
        let to = runs_dir.join(key);
        match winners.get(key) {
            Some((i, _)) if earlier && *i == 0 => {}
            Some((i, _)) => {
                let from = sources[*i].dir.join("runs").join(key);
                let _old = std::fs::remove_dir_all(&to);
                if from.is_dir() {
                    copy_tree(&from, &to)?;
                }
            }
            None => {
                let _gone = std::fs::remove_dir_all(&to);
            }
        }
    }
    if let Ok(entries) = std::fs::read_dir(&runs_dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !in_plan.contains(name.as_str()) {
                let _stray = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let entries: Vec<&JournalEntry> = plan
        .iter()
        .filter_map(|k| winners.get(k).map(|(_, e)| e))
        .collect();
    journal::write_journal(into, &entries)?;
    let records: Vec<RunRecord> = entries.iter().map(|e| e.record.clone()).collect();

    let mut tiers: Vec<&str> = sources
        .iter()
        .map(|s| s.manifest.sandbox.as_str())
        .collect();
    tiers.sort_unstable();
    tiers.dedup();
    if tiers.len() > 1 {
        warnings.push(format!(
            "the shards ran under different sandbox tiers ({}); their outcomes may differ for \
             that reason",
            tiers.join(", ")
        ));
    }
    let counts = Counts::tally(plan.len(), &records, 0);
    let mut merged_from: Vec<MergedShard> = shards
        .iter()
        .enumerate()
        .map(|(i, dir)| {
            let index = i + usize::from(earlier);
            MergedShard {
                dir: dir.clone(),
                partition: sources[index].manifest.partition.clone(),
                runs: winners.values().filter(|(w, _)| *w == index).count(),
            }
        })
        .collect();
    if earlier {
        // Shards merged before and not given now stay listed.
        for old in &sources[0].manifest.merged_from {
            if !merged_from.iter().any(|m| same_dir(&m.dir, &old.dir)) {
                merged_from.push(MergedShard {
                    runs: winners.values().filter(|(w, _)| *w == 0).count(),
                    ..old.clone()
                });
            }
        }
    }
    let manifest = Manifest {
        format: MANIFEST_FORMAT,
        harness_version: env!("CARGO_PKG_VERSION").to_owned(),
        started_at: sources
            .iter()
            .map(|s| s.manifest.started_at.clone())
            .min()
            .unwrap_or_default(),
        updated_at: journal::now_stamp(),
        interrupted: false,
        complete: missing.is_empty(),
        sandbox: tiers.join(","),
        partition: None,
        options: first.options.clone(),
        fingerprint: first.fingerprint.clone(),
        plan,
        counts,
        merged_from,
    };
    let notice = (!missing.is_empty()).then(|| {
        format!(
            "Incomplete: {} of {} runs merged, {} missing; `harness run --resume {}` runs them",
            records.len(),
            manifest.plan.len(),
            missing.len(),
            into.display()
        )
    });
    let outcome = finish_blocking(into, records, manifest, notice, options, shards, warnings);
    Ok(Merged {
        outcome,
        missing,
        duplicated,
        missing_shards,
    })
}

/// Every source must have the first one's fingerprint and plan; the error names the odd ones
/// and what differs.
fn check_fingerprints(sources: &[Source]) -> Result<(), MergeError> {
    let first = &sources[0];
    let mut lines = Vec::new();
    for s in &sources[1..] {
        let mut what: Vec<String> = first
            .manifest
            .fingerprint
            .differences(&s.manifest.fingerprint)
            .iter()
            .map(|d| match d {
                FingerprintChange::Options => {
                    let found = first
                        .manifest
                        .options
                        .differences_as(&s.manifest.options, ("in the first", "in this one"));
                    if found.is_empty() {
                        d.to_string()
                    } else {
                        found.join(", ")
                    }
                }
                other => other.to_string(),
            })
            .collect();
        if what.is_empty() && s.manifest.plan != first.manifest.plan {
            what.push("the plans differ".to_owned());
        }
        if !what.is_empty() {
            lines.push(format!(
                "  {} differs from {}: {}",
                s.dir.display(),
                first.dir.display(),
                what.join("; ")
            ));
        }
    }
    if lines.is_empty() {
        Ok(())
    } else {
        Err(MergeError::Fingerprints(lines.join("\n")))
    }
}

/// The shards of a partition not among `shards`, when all of them are partitions of one kind
/// and count (`hash:2/3`).
fn missing_shards(shards: &[Source]) -> Vec<String> {
    let parts: Vec<Partition> = shards
        .iter()
        .filter_map(|s| s.manifest.partition.as_deref()?.parse().ok())
        .collect();
    if parts.len() != shards.len() || parts.is_empty() {
        return Vec::new();
    }
    let (kind, total) = (parts[0].kind, parts[0].total);
    if parts.iter().any(|p| p.kind != kind || p.total != total) {
        return Vec::new();
    }
    (1..=total)
        .filter(|m| !parts.iter().any(|p| p.shard == *m))
        .map(|shard| Partition { kind, shard, total }.to_string())
        .collect()
}

/// Copies the folder `from` to `to` (files and folders; symlinks as symlinks).
fn copy_tree(from: &Path, to: &Path) -> Result<(), MergeError> {
    let err = |source| MergeError::Copy {
        from: from.to_path_buf(),
        to: to.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(to).map_err(err)?;
    for e in std::fs::read_dir(from).map_err(err)?.flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let kind = e.file_type().map_err(err)?;
        if kind.is_dir() {
            copy_tree(&src, &dst)?;
        } else if kind.is_symlink() {
            let target = std::fs::read_link(&src).map_err(err)?;
            std::os::unix::fs::symlink(target, &dst).map_err(err)?;
        } else {
            std::fs::copy(&src, &dst).map_err(err)?;
        }
    }
    Ok(())
}
