//! The journal of a report folder, `journal.jsonl`: one JSON line per finished run, appended and
//! flushed the moment the run ends, so a harness killed at any point (SIGKILL included) leaves
//! a record of exactly the runs that finished. `harness run --resume` and `harness merge` read
//! it to tell finished runs from missing ones.
//!
//! ```text
//! {"run":"py-median--anthropic--scripted-claude--e1","finished_at":"2026-12-01T10:00:00.123Z","record":{...}}
//! ```
//!
//! `run` is the run's key (its folder under `runs/`), `record` its final [`RunRecord`]. A run
//! may appear more than once (a resumed infrastructure error, a shard run again): the last line
//! wins. Each line is written with one `write` on a file opened for appending, so lines never
//! interleave; a line cut short by a kill (no newline at the end of the file) is ignored when
//! read, and cut off before the next append. The journal survives a killed process, not a
//! power cut (it is flushed to the kernel, not synced to the disk).

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::record::RunRecord;

use crate::events::{Reporter, RunnerEvent};

/// The journal's file name in a report folder.
pub const JOURNAL_FILE: &str = "journal.jsonl";

/// One finished run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// The run's key: its folder under `runs/`.
    pub run: String,
    /// When it finished (UTC, RFC 3339 with milliseconds).
    pub finished_at: String,
    pub record: RunRecord,
}

impl JournalEntry {
    /// The entry of `record`, finished now.
    pub fn now(record: RunRecord) -> JournalEntry {
        JournalEntry {
            run: record_key(&record),
            finished_at: now_stamp(),
            record,
        }
    }
}

/// The key of a run: its folder under `runs/` (`task--provider--model--e1`).
pub fn record_key(record: &RunRecord) -> String {
    folder_key(&record.run_dir())
}

/// `runs/NAME` -> `NAME`.
pub(crate) fn folder_key(run_dir: &str) -> String {
    run_dir.strip_prefix("runs/").unwrap_or(run_dir).to_owned()
}

/// UTC now, as the journal and the manifest write times.
pub fn now_stamp() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// A failure to write or read a journal.
#[derive(Debug, thiserror::Error)]
#[error("failed to {action} {path}: {source}")]
pub struct JournalError {
    pub action: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

/// Appends entries to a journal. As a [`Reporter`] it journals every finished run.
pub struct Journal {
    path: PathBuf,
    file: Mutex<File>,
    /// The first write error, kept so the end of the run can say the journal is incomplete.
    failed: Mutex<Option<String>>,
}

impl Journal {
    /// Opens `dir/journal.jsonl` for appending (created if missing), first cutting off a line a
    /// kill left half-written.
    pub fn open(dir: &Path) -> Result<Journal, JournalError> {
        let path = dir.join(JOURNAL_FILE);
        let err = |action, source| JournalError {
            action,
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(|e| err("create the folder of", e))?;
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(|e| err("open", e))?;
        let keep = complete_length(&mut file).map_err(|e| err("read", e))?;
        if keep < file.metadata().map_err(|e| err("read", e))?.len() {
            file.set_len(keep).map_err(|e| err("repair", e))?;
        }
        Ok(Journal {
            path,
            file: Mutex::new(file),
            failed: Mutex::new(None),
        })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `entry` as one line, in one write, and flushes it.
    pub fn append(&self, entry: &JournalEntry) -> Result<(), JournalError> {
        let mut line = serde_json::to_vec(entry).map_err(|e| JournalError {
            action: "serialise an entry of",
            path: self.path.clone(),
            source: io::Error::other(e),
        })?;
        line.push(b'\n');
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        file.write_all(&line)
            .and_then(|()| file.flush())
            .map_err(|source| JournalError {
                action: "append to",
                path: self.path.clone(),
                source,
            })
    }

    /// The first append that failed, if any.
    pub fn failure(&self) -> Option<String> {
        self.failed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Reporter for Journal {
    fn event(&self, event: &RunnerEvent) {
        if let RunnerEvent::RunFinished { record, .. } = event {
            if let Err(e) = self.append(&JournalEntry::now((**record).clone())) {
                let mut failed = self.failed.lock().unwrap_or_else(|e| e.into_inner());
                failed.get_or_insert_with(|| e.to_string());
            }
        }
    }
}

/// The length of the file up to and including its last newline.
fn complete_length(file: &mut File) -> io::Result<u64> {
    let len = file.metadata()?.len();
    let mut pos = len;
    let mut buf = [0u8; 4096];
    while pos > 0 {
        let start = pos.saturating_sub(buf.len() as u64);
        let n = (pos - start) as usize;
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf[..n])?;
        if let Some(i) = buf[..n].iter().rposition(|b| *b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        pos = start;
    }
    Ok(0)
}

/// A journal read back.
#[derive(Debug, Default)]
pub struct JournalContents {
    /// Every complete entry, in the order written.
    pub entries: Vec<JournalEntry>,
    /// Lines that were not entries (with their 1-based line numbers and why); a kill can leave
    /// one, the last, unterminated.
    pub skipped: Vec<(usize, String)>,
}

impl JournalContents {
    /// The last entry of each run, by key.
    pub fn latest(&self) -> HashMap<&str, &JournalEntry> {
        let mut out: HashMap<&str, &JournalEntry> = HashMap::new();
        for e in &self.entries {
            out.insert(e.run.as_str(), e);
        }
        out
    }
}

/// Reads `dir/journal.jsonl`; a missing file is an empty journal.
pub fn read_journal(dir: &Path) -> Result<JournalContents, JournalError> {
    let path = dir.join(JOURNAL_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(JournalContents::default()),
        Err(source) => {
            return Err(JournalError {
                action: "read",
                path,
                source,
            });
        }
    };
    let mut out = JournalContents::default();
    let ends_complete = bytes.last().is_none_or(|b| *b == b'\n');
    let lines: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
    // `split` yields an empty last piece after a final newline.
    let count = if ends_complete {
        lines.len().saturating_sub(1)
    } else {
        lines.len()
    };
    for (i, line) in lines.into_iter().take(count).enumerate() {
        let number = i + 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if !ends_complete && number == count {
            out.skipped.push((
                number,
                "cut short (the harness was killed while writing it)".into(),
            ));
            continue;
        }
        match serde_json::from_slice::<JournalEntry>(line) {
            Ok(entry) => out.entries.push(entry),
            Err(e) => out
                .skipped
                .push((number, format!("not a journal entry: {e}"))),
        }
    }
    Ok(out)
}

/// Writes `entries` as the whole journal of `dir`, atomically (a merged folder's journal).
pub fn write_journal(dir: &Path, entries: &[&JournalEntry]) -> Result<(), JournalError> {
    let path = dir.join(JOURNAL_FILE);
    let mut text = Vec::new();
    for e in entries {
        serde_json::to_writer(&mut text, e).map_err(|e| JournalError {
            action: "serialise",
            path: path.clone(),
            source: io::Error::other(e),
        })?;
        text.push(b'\n');
    }
    let tmp = dir.join(format!(".{JOURNAL_FILE}.tmp"));
    std::fs::write(&tmp, &text)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|source| JournalError {
            action: "write",
            path,
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Outcome;

    fn record(task: &str, epoch: u32, outcome: Outcome) -> RunRecord {
        let mut r = crate::record::RunRecord::skipped(task, "p", "m", epoch, "");
        r.outcome = outcome;
        r
    }

    #[test]
    fn entries_append_and_the_last_of_a_run_wins() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path()).unwrap();
        journal
            .append(&JournalEntry::now(record("a", 1, Outcome::Error)))
            .unwrap();
        journal
            .append(&JournalEntry::now(record("b", 1, Outcome::Passed)))
            .unwrap();
        drop(journal);
        // Opened again (a resume): appends after what is there.
        let journal = Journal::open(dir.path()).unwrap();
        journal
            .append(&JournalEntry::now(record("a", 1, Outcome::Passed)))
            .unwrap();
        let read = read_journal(dir.path()).unwrap();
        assert!(read.skipped.is_empty(), "{:?}", read.skipped);
        assert_eq!(read.entries.len(), 3);
        let latest = read.latest();
        assert_eq!(latest.len(), 2);
        assert_eq!(latest["a--p--m--e1"].record.outcome, Outcome::Passed);
        assert_eq!(latest["b--p--m--e1"].record.outcome, Outcome::Passed);
    }

    #[test]
    fn a_line_cut_short_by_a_kill_is_ignored_then_cut_off() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path()).unwrap();
        journal
            .append(&JournalEntry::now(record("a", 1, Outcome::Passed)))
            .unwrap();
        drop(journal);
        // SIGKILL in the middle of the second line.
        let line =
            serde_json::to_string(&JournalEntry::now(record("b", 1, Outcome::Passed))).unwrap();
        let path = dir.path().join(JOURNAL_FILE);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(&line.as_bytes()[..line.len() / 2]).unwrap();
        drop(f);
        let read = read_journal(dir.path()).unwrap();
        assert_eq!(read.entries.len(), 1);
        assert_eq!(read.skipped.len(), 1);
        assert!(
            read.skipped[0].1.contains("cut short"),
            "{:?}",
            read.skipped
        );
        // The next harness cuts it off and appends whole lines after the good ones.
        let journal = Journal::open(dir.path()).unwrap();
        journal
            .append(&JournalEntry::now(record("c", 1, Outcome::Passed)))
            .unwrap();
        let read = read_journal(dir.path()).unwrap();
        assert!(read.skipped.is_empty(), "{:?}", read.skipped);
        let keys: Vec<&str> = read.entries.iter().map(|e| e.run.as_str()).collect();
        assert_eq!(keys, ["a--p--m--e1", "c--p--m--e1"]);
        // A garbled line in the middle is reported and skipped, the rest read.
        std::fs::write(
            &path,
            format!(
                "{}\n{{not json\n{line}\n",
                serde_json::to_string(&read.entries[0]).unwrap()
            ),
        )
        .unwrap();
        let read = read_journal(dir.path()).unwrap();
        assert_eq!(read.entries.len(), 2);
        assert_eq!(read.skipped.len(), 1);
        assert_eq!(read.skipped[0].0, 2);
    }

    #[test]
    fn a_missing_journal_is_empty_and_one_can_be_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_journal(dir.path()).unwrap().entries.is_empty());
        let a = JournalEntry::now(record("a", 2, Outcome::Failed));
        write_journal(dir.path(), &[&a]).unwrap();
        assert_eq!(read_journal(dir.path()).unwrap().entries, vec![a]);
    }
}
