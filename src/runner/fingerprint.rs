//! Computing a suite's [`Fingerprint`]: the harness version, the options, `harness.yaml`, every
//! selected task's folder and every planned cassette, each hashed (SHA-256), and a digest of
//! them all. Two report folders with the same digest ran the same suite the same way, whatever
//! machine or folder they ran in: paths are relative, files are hashed by content, and nothing
//! depends on the order folders are listed in.
//!
//! A task hashes its whole folder (`task.yaml`, `repo/`, any file its checks compare against:
//! each entry's relative path, kind, executable bit and bytes or link target, in path order)
//! and the suite's `defaults.yaml`. Cassettes are hashed only in the modes that read them
//! without writing them (replay and rerecord, which writes `.new` files beside them): a
//! recording changes its cassettes as it goes, so their bytes cannot say whether two folders
//! belong together.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::cassettes::CassetteMode;
use crate::tasks::Task;

use super::manifest::{ABSENT, Fingerprint, SuiteOptions, sha256_hex};
use super::plan::PlannedRun;

/// The fingerprint of `tasks` (the selected ones) planned as `planned` with `options`
/// (`mode` in force), `config` the text of `harness.yaml` when one was read.
pub fn fingerprint(
    tasks: &[Arc<Task>],
    planned: &[PlannedRun],
    options: &SuiteOptions,
    mode: CassetteMode,
    cassettes_dir: &Path,
    config: Option<&[u8]>,
) -> Fingerprint {
    let tasks: BTreeMap<String, String> =
        tasks.iter().map(|t| (t.id.clone(), task_hash(t))).collect();
    let mut cassettes = BTreeMap::new();
    if matches!(mode, CassetteMode::Replay | CassetteMode::Rerecord) {
        for run in planned {
            let name = run
                .cassette
                .strip_prefix(cassettes_dir)
                .unwrap_or(&run.cassette)
                .to_string_lossy()
                .into_owned();
            cassettes.entry(name).or_insert_with(|| {
                std::fs::read(&run.cassette)
                    .map(|b| sha256_hex(&b))
                    .unwrap_or_else(|_| ABSENT.to_owned())
            });
        }
    }
    let options = sha256_hex(
        serde_json::to_string(&options.fingerprinted())
            .unwrap_or_default()
            .as_bytes(),
    );
    let mut f = Fingerprint {
        digest: String::new(),
        harness_version: env!("CARGO_PKG_VERSION").to_owned(),
        options,
        config: config.map(sha256_hex),
        tasks,
        cassettes,
    };
    f.digest = sha256_hex(serde_json::to_string(&f).unwrap_or_default().as_bytes());
    f
}

/// The hash of a task: its folder and the suite's `defaults.yaml`.
fn task_hash(task: &Task) -> String {
    let mut h = Sha256::new();
    if let Some(suite) = task.dir.parent() {
        if let Ok(bytes) = std::fs::read(suite.join("defaults.yaml")) {
            h.update(b"defaults.yaml\0");
            h.update(&bytes);
        }
    }
    hash_tree(&task.dir, "", &mut h);
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Feeds every entry under `dir` into `h`, in name order: `F path mode len bytes`,
/// `L path target`, `D path`; unreadable entries as `? path`.
fn hash_tree(dir: &Path, prefix: &str, h: &mut Sha256) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        h.update(format!("? {prefix}\0"));
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name();
        let rel = format!("{prefix}{}", name.to_string_lossy());
        let path = e.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            h.update(format!("? {rel}\0"));
            continue;
        };
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).unwrap_or_default();
            h.update(format!("L {rel}\0{}\0", target.to_string_lossy()));
        } else if meta.is_dir() {
            h.update(format!("D {rel}\0"));
            hash_tree(&path, &format!("{rel}/"), h);
        } else if meta.is_file() {
            let exec = meta.permissions().mode() & 0o111 != 0;
            // Streamed: a fixture may hold a data set of gigabytes.
            match std::fs::File::open(&path) {
                Ok(mut file) => {
                    h.update(format!("F {rel}\0{exec}\0{}\0", meta.len()));
                    if std::io::copy(&mut file, h).is_err() {
                        h.update(format!("? {rel}\0"));
                    }
                }
                Err(_) => h.update(format!("? {rel}\0")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn suite() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("t1");
        std::fs::create_dir_all(t.join("repo/src")).unwrap();
        std::fs::write(t.join("task.yaml"), "id: t1\n").unwrap();
        std::fs::write(t.join("repo/src/a.py"), "print(1)\n").unwrap();
        dir
    }

    fn task(dir: &Path) -> Arc<Task> {
        Arc::new(Task::bare("t1", dir.join("t1")))
    }

    #[test]
    fn a_task_hashes_its_whole_folder_and_the_defaults() {
        let dir = suite();
        let t = task(dir.path());
        let first = task_hash(&t);
        assert_eq!(task_hash(&t), first, "stable");
        // Elsewhere on disk, same content: the same hash.
        let other = suite();
        assert_eq!(task_hash(&task(other.path())), first);
        std::fs::write(dir.path().join("t1/repo/src/a.py"), "print(2)\n").unwrap();
        let changed = task_hash(&t);
        assert_ne!(changed, first);
        std::fs::set_permissions(
            dir.path().join("t1/repo/src/a.py"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let exec = task_hash(&t);
        assert_ne!(exec, changed, "the executable bit counts");
        std::fs::write(dir.path().join("defaults.yaml"), "tags: [x]\n").unwrap();
        assert_ne!(task_hash(&t), exec, "defaults.yaml counts");
    }
}
