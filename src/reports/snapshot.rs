//! Snapshot reports for CI (`harness run --snapshot FILE`): the run's deterministic outcome table
//! (task, model, epoch, outcome, each check, edit calls by outcome, turns, tokens; no timings,
//! paths or costs) compared with a committed file, with insta's update semantics: equal is
//! nothing to do; different prints a diff and, locally, writes `FILE.new` for `harness review`;
//! under `CI` nothing is written.
//!
//! The file is markdown with a small metadata header, so a reviewer reads it as a table:
//!
//! ```text
//! ---
//! harness snapshot: outcome table of `harness run`
//! runs: 36
//! ---
//! | task | provider/model | epoch | outcome | checks | edits exact/fuzzy/failed | turns | tokens |
//! |---|---|---|---|---|---|---|---|
//! | py-crlf | anthropic/scripted-claude | 1 | passed | ✓ unit tests; ✓ crlf kept | 1/0/0 | 5 | 10062 |
//! ```
//!
//! Pure functions, plus [`check_snapshot`] which reads and writes the files.

use std::path::{Path, PathBuf};

use crate::record::RunRecord;

use super::cells::outcome_label;
use super::summary::sorted;

/// The first line of every snapshot's header.
const MAGIC: &str = "harness snapshot: outcome table of `harness run`";

/// The deterministic outcome table of `records` (any order; sorted here), header included.
pub fn snapshot_text(records: &[RunRecord]) -> String {
    let records = sorted(records);
    let mut out = format!("---\n{MAGIC}\nruns: {}\n---\n", records.len());
    out.push_str(
        "| task | provider/model | epoch | outcome | checks | edits exact/fuzzy/failed | turns | tokens |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|---|\n");
    for r in records {
        let checks: Vec<String> = r
            .checks
            .iter()
            .map(|c| format!("{} {}", if c.passed { "✓" } else { "✗" }, c.name))
            .collect();
        let checks = if checks.is_empty() {
            "-".to_owned()
        } else {
            checks.join("; ")
        };
        out.push_str(&format!(
            "| {} | {}/{} | {} | {} | {} | {}/{}/{} | {} | {} |\n",
            cell(&r.task_id),
            cell(&r.provider),
            cell(&r.model),
            r.epoch,
            cell(&outcome_label(r)),
            cell(&checks),
            r.edits.calls_exact,
            r.edits.calls_fuzzy,
            r.edits.calls_failed,
            r.turns,
            r.tokens.total
        ));
    }
    out
}

/// A table cell: `|` escaped, one line.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// How the run's table compares with the committed snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SnapshotVerdict {
    /// The same table.
    Equal,
    /// Another table (or no committed snapshot): the diff, and where the new table was written
    /// for review (`None` under `CI`, where nothing is written).
    Changed {
        diff: String,
        proposed: Option<PathBuf>,
        missing: bool,
    },
}

/// `FILE.new`, where a changed snapshot waits for review.
pub fn pending_snapshot_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".new");
    PathBuf::from(name)
}

/// Compares `records`' table with `file`; when they differ, writes `FILE.new` unless `ci`, and
/// when they are equal removes a stale `FILE.new`. An unreadable file is an error naming it.
pub fn check_snapshot(
    file: &Path,
    records: &[RunRecord],
    ci: bool,
) -> Result<SnapshotVerdict, std::io::Error> {
    let now = snapshot_text(records);
    let (old, missing) = match std::fs::read_to_string(file) {
        Ok(text) => (text, false),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (String::new(), true),
        Err(e) => {
            return Err(std::io::Error::new(
                e.kind(),
                format!("failed to read snapshot {}: {e}", file.display()),
            ));
        }
    };
    let pending = pending_snapshot_path(file);
    if old.replace("\r\n", "\n") == now {
        if pending.exists() {
            let _ = std::fs::remove_file(&pending);
        }
        return Ok(SnapshotVerdict::Equal);
    }
    let diff = similar::TextDiff::from_lines(&old, &now)
        .unified_diff()
        .context_radius(1)
        .header(
            &file.display().to_string(),
            &format!("{} (this run)", file.display()),
        )
        .to_string();
    let proposed = if ci {
        None
    } else {
        write_atomic(&pending, &now)?;
        Some(pending)
    };
    Ok(SnapshotVerdict::Changed {
        diff,
        proposed,
        missing,
    })
}

/// Writes `text` to `path` through a temporary file and a rename, so a crash never leaves half a
/// file.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), std::io::Error> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".harness-")
        .suffix(".tmp")
        .tempfile_in(&dir)?;
    std::io::Write::write_all(&mut tmp, text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Outcome;
    use std::time::Duration;

    fn records() -> Vec<RunRecord> {
        use crate::reports::fixtures::Scenario;
        vec![
            Scenario::new("py-median", "anthropic", "claude", 1, Outcome::Passed).record(),
            Scenario::new("a-task", "openai", "gpt", 2, Outcome::Skipped).record(),
        ]
    }

    /// `records` with `py-median`'s run failing instead.
    fn failing() -> Vec<RunRecord> {
        let mut records = records();
        records[0] =
            crate::reports::fixtures::rec("py-median", "anthropic", "claude", 1, Outcome::Failed);
        records
    }

    #[test]
    fn a_cell_stays_one_cell_on_one_line() {
        assert_eq!(cell("✗ a|b\nc"), "✗ a\\|b c");
    }

    #[test]
    fn the_table_is_sorted_and_holds_no_timings() {
        let text = snapshot_text(&records());
        insta::assert_snapshot!(text, @r"
        ---
        harness snapshot: outcome table of `harness run`
        runs: 2
        ---
        | task | provider/model | epoch | outcome | checks | edits exact/fuzzy/failed | turns | tokens |
        |---|---|---|---|---|---|---|---|
        | a-task | openai/gpt | 2 | skipped | - | 0/0/0 | 0 | 0 |
        | py-median | anthropic/claude | 1 | passed | ✓ unit tests | 1/1/1 | 5 | 57400 |
        ");
        let mut slower = records();
        slower[0].wall_time = Duration::from_secs(99);
        slower[0].checks[0].duration = Duration::from_secs(5);
        assert_eq!(snapshot_text(&slower), text, "timings are not part of it");
    }

    #[test]
    fn changes_are_proposed_locally_and_only_compared_under_ci() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("suite.snap");
        // Missing: proposed, and under CI nothing is written.
        let v = check_snapshot(&file, &records(), true).unwrap();
        assert!(matches!(
            v,
            SnapshotVerdict::Changed {
                proposed: None,
                missing: true,
                ..
            }
        ));
        assert!(!pending_snapshot_path(&file).exists());
        let v = check_snapshot(&file, &records(), false).unwrap();
        let SnapshotVerdict::Changed {
            proposed: Some(p), ..
        } = v
        else {
            panic!("{v:?}");
        };
        std::fs::rename(&p, &file).unwrap();
        assert_eq!(
            check_snapshot(&file, &records(), true).unwrap(),
            SnapshotVerdict::Equal
        );
        // A changed outcome shows in the diff.
        let failed = failing();
        let SnapshotVerdict::Changed { diff, proposed, .. } =
            check_snapshot(&file, &failed, false).unwrap()
        else {
            panic!("not changed");
        };
        assert!(
            diff.contains("-| py-median | anthropic/claude | 1 | passed"),
            "{diff}"
        );
        assert!(
            diff.contains("+| py-median | anthropic/claude | 1 | failed"),
            "{diff}"
        );
        assert!(proposed.unwrap().exists());
        // Back to equal: the stale .new goes away.
        assert_eq!(
            check_snapshot(&file, &records(), false).unwrap(),
            SnapshotVerdict::Equal
        );
        assert!(!pending_snapshot_path(&file).exists());
    }
}
