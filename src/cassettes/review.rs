//! Reviewing pending files the insta way: a re-recorded cassette waits beside the old one as
//! `NAME.yaml.new`, a changed snapshot as `FILE.new`; `harness review` lists them with a
//! conversation-level summary of what changed and a diff, and accepts (the `.new` replaces the
//! old file) or rejects (the `.new` is deleted) them.
//!
//! Depends on the cassette format and the divergence classifier; knows nothing of runs.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::divergence::{DivergenceTracker, summary_line};
use super::format::{Cassette, RecordedRequest};
use super::normalize::cap_lines_at;

/// Lines of a pending file's diff shown at most.
pub const REVIEW_DIFF_LINES: usize = 120;

/// Where `harness review` looks when given no folder.
pub const REVIEW_ROOT: &str = "cassettes";

/// The `harness review` that finds the `.new` files under `roots`: the default root unnamed.
pub fn review_command<P: AsRef<Path>>(roots: &[P]) -> String {
    let named: Vec<String> = roots
        .iter()
        .map(|r| r.as_ref().display().to_string())
        .collect();
    if named.is_empty() || named == [REVIEW_ROOT] {
        "harness review".to_owned()
    } else {
        format!("harness review {}", named.join(" "))
    }
}

/// The `harness review` that finds the pending file `new`: bare when `new` is under the default
/// root, else naming its folder (a snapshot or `--cassettes` elsewhere).
pub fn review_command_for(new: &Path) -> String {
    if new.starts_with(REVIEW_ROOT) {
        return review_command::<&str>(&[]);
    }
    match new.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(folder) => review_command(&[folder]),
        None => review_command(&["."]),
    }
}

/// What a pending file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PendingKind {
    Cassette,
    Snapshot,
}

/// A file waiting for review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// The `.new` file.
    pub path: PathBuf,
    /// The file it would replace (may not exist yet).
    pub target: PathBuf,
    pub kind: PendingKind,
}

/// Every `*.new` file under `roots` (recursively; `target/`, `.git/` and `node_modules/` are
/// skipped), sorted by path. Roots that do not exist are skipped.
pub fn pending_files(roots: &[PathBuf]) -> Vec<Pending> {
    let mut out = Vec::new();
    for root in roots {
        walk(root, &mut out);
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.dedup_by(|a, b| a.path == b.path);
    out
}

fn walk(dir: &Path, out: &mut Vec<Pending>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        if kind.is_dir() {
            if !matches!(name.as_str(), "target" | ".git" | "node_modules") {
                walk(&path, out);
            }
        } else if kind.is_file()
            && let Some(stem) = name.strip_suffix(".new")
            && !stem.is_empty()
        {
            out.push(Pending {
                target: path.with_file_name(stem),
                kind: if stem.ends_with(".yaml") || stem.ends_with(".yml") {
                    PendingKind::Cassette
                } else {
                    PendingKind::Snapshot
                },
                path,
            });
        }
    }
}

/// A request as the divergence classifier compares it.
pub fn request_value(r: &RecordedRequest) -> Value {
    json!({"method": r.method, "path": r.path, "headers": r.headers, "body": r.body})
}

/// One line on what a re-recorded cassette changes in the conversation: which turns, which
/// kinds (`turn 3: result of edit#2 changed; ...`), or why it cannot say.
pub fn cassette_summary(old: Option<&Cassette>, new: &Cassette) -> String {
    let Some(old) = old else {
        return format!(
            "a new cassette ({} interaction{})",
            new.interactions.len(),
            if new.interactions.len() == 1 { "" } else { "s" }
        );
    };
    let mut tracker = DivergenceTracker::new(new.header.api);
    let mut differences = Vec::new();
    for (i, (a, b)) in old.interactions.iter().zip(&new.interactions).enumerate() {
        differences.extend(tracker.compare(
            i,
            &request_value(&a.request),
            &request_value(&b.request),
        ));
    }
    let (o, n) = (old.interactions.len(), new.interactions.len());
    if n > o {
        differences.push(tracker.extra_request(o, o));
    } else if n < o {
        differences.extend(tracker.missing_requests(n, o));
    }
    let responses = old
        .interactions
        .iter()
        .zip(&new.interactions)
        .filter(|(a, b)| a.response != b.response)
        .count();
    let mut line = if differences.is_empty() {
        "the same requests".to_owned()
    } else {
        summary_line(&differences)
    };
    line.push_str(&format!(
        "; {o} → {n} interactions, {responses} response{} changed",
        if responses == 1 { "" } else { "s" }
    ));
    line
}

/// A unified diff of two texts, at most [`REVIEW_DIFF_LINES`] lines.
pub fn text_diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    let diff = similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(old_name, new_name)
        .to_string();
    cap_lines_at(diff, REVIEW_DIFF_LINES)
}

/// Accepts a pending file: it replaces its target (an atomic rename).
pub fn accept(p: &Pending) -> std::io::Result<()> {
    std::fs::rename(&p.path, &p.target)
}

/// Rejects a pending file: it is deleted, the target is left as it is.
pub fn reject(p: &Pending) -> std::io::Result<()> {
    std::fs::remove_file(&p.path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_files_are_found_and_classified() {
        let dir = tempfile::tempdir().unwrap();
        let c = dir.path().join("cassettes/t");
        std::fs::create_dir_all(&c).unwrap();
        std::fs::create_dir_all(dir.path().join("cassettes/target")).unwrap();
        std::fs::write(c.join("a--m.yaml.new"), "x").unwrap();
        std::fs::write(c.join("a--m.yaml"), "x").unwrap();
        std::fs::write(dir.path().join("cassettes/suite.snap.new"), "x").unwrap();
        std::fs::write(dir.path().join("cassettes/target/x.yaml.new"), "x").unwrap();
        let found = pending_files(&[dir.path().join("cassettes"), dir.path().join("missing")]);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].kind, PendingKind::Snapshot);
        assert_eq!(found[0].target, dir.path().join("cassettes/suite.snap"));
        assert_eq!(found[1].kind, PendingKind::Cassette);
        assert_eq!(found[1].target, c.join("a--m.yaml"));
        accept(&found[1]).unwrap();
        assert!(!found[1].path.exists() && found[1].target.exists());
        reject(&found[0]).unwrap();
        assert!(!found[0].path.exists() && !found[0].target.exists());
    }

    #[test]
    fn long_diffs_are_cut() {
        let old: String = (0..300).map(|i| format!("{i}\n")).collect();
        let new: String = (0..300).map(|i| format!("{}\n", i * 2)).collect();
        let d = text_diff(&old, &new, "a", "b");
        assert!(d.contains("more diff lines"), "{d}");
        assert!(d.lines().count() <= REVIEW_DIFF_LINES + 1);
    }

    #[test]
    fn the_review_command_names_the_folder_unless_it_is_the_default() {
        assert_eq!(
            review_command_for(Path::new("cassettes/suite.snap.new")),
            "harness review"
        );
        assert_eq!(
            review_command_for(Path::new("cassettes/py-median/a--b.yaml.new")),
            "harness review"
        );
        assert_eq!(
            review_command_for(Path::new("/tmp/x/suite.snap.new")),
            "harness review /tmp/x"
        );
        assert_eq!(
            review_command_for(Path::new("suite.snap.new")),
            "harness review ."
        );
        assert_eq!(review_command(&["cassettes"]), "harness review");
        assert_eq!(review_command(&["a", "b"]), "harness review a b");
    }
}
