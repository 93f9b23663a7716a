//! The edit corpus on disk: `edits.jsonl`, one JSON object per edit call, and the file contents
//! it refers to, stored once per distinct content under `edits/blobs/<sha256>` beside it.
//!
//! ```text
//! DIR/edits.jsonl
//! DIR/edits/blobs/3a7bd3e2360a3d29eea436fcfb7e44c735d117c42d1c1835420b6b9942dd4f1b
//! ```
//!
//! In a report folder each run also keeps its own lines in `runs/<run>/edit-calls.jsonl`
//! ([`RUN_EDITS_FILE`]), so that a resumed or merged report can write `edits.jsonl` again with
//! exactly the calls of the runs it holds ([`rebuild_corpus`]).
//!
//! A record holds where the call came from (task, run, turn, call id), the `path` argument, the
//! hash of the file's content before the call (`null` if it could not be read), the arguments
//! exactly as the model sent them, and the outcome under the run's strategy (with the hash of the
//! content written, if it was). Perturbed corpora add the kind of mistake and the gold answer.
//! Reading skips a malformed line or a line whose blob is missing, and reports it with its line
//! number; the rest of the corpus is read.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::tools::EditReport;

/// The corpus file's name in its folder.
pub const CORPUS_FILE: &str = "edits.jsonl";
/// Where the blobs live, relative to the corpus file's folder.
pub const BLOBS_DIR: &str = "edits/blobs";

/// One edit call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EditRecord {
    pub task: String,
    pub run: String,
    pub turn: u32,
    pub call_id: String,
    /// The `path` argument as given (empty if there was none).
    pub path: String,
    /// The blob of the file's content before the call; `None` if it was not read.
    pub before: Option<String>,
    /// The arguments exactly as the model sent them.
    pub arguments: Value,
    /// What happened under the run's strategy (absent in generated corpora).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<RecordedEditOutcome>,
    /// The perturbation kind, in generated corpora.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The right answer, when it is known when the record is written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold: Option<Gold>,
}

/// A call's outcome as it was recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedEditOutcome {
    pub strategy: String,
    pub is_error: bool,
    /// The text the model got back.
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<EditReport>,
    /// The blob of the content written, if the call changed the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

/// The right answer for a call: the file it should leave (a blob), or a refusal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case", deny_unknown_fields)]
pub enum Gold {
    Apply { after: String },
    Refuse,
}

/// The hex SHA-256 of `text`, the name of its blob.
pub fn blob_id(text: &str) -> String {
    sha256_hex(text.as_bytes())
}

/// The hex SHA-256 of `bytes` (blob names, and the report manifest's fingerprints).
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// Errors reading or writing a corpus as a whole (a bad line is a [`CorpusProblem`] instead).
#[derive(Debug, thiserror::Error)]
pub enum CorpusError {
    #[error("failed to read the corpus at `{path}`: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("failed to write the corpus at `{path}`: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A line of the corpus that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorpusProblem {
    /// 1-based.
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for CorpusProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Writes a corpus: records appended to `edits.jsonl`, each distinct content once as a blob.
pub struct CorpusWriter {
    dir: PathBuf,
    out: std::io::BufWriter<std::fs::File>,
    written: std::collections::HashSet<String>,
}

impl CorpusWriter {
    /// Creates (or truncates) `dir/edits.jsonl`, creating `dir/edits/blobs` too.
    pub fn create(dir: &Path) -> Result<Self, CorpusError> {
        let file = dir.join(CORPUS_FILE);
        let write_err = |source| CorpusError::Write {
            path: file.clone(),
            source,
        };
        std::fs::create_dir_all(dir.join(BLOBS_DIR)).map_err(write_err)?;
        let out = std::fs::File::create(&file).map_err(write_err)?;
        Ok(CorpusWriter {
            dir: dir.to_path_buf(),
            out: std::io::BufWriter::new(out),
            written: Default::default(),
        })
    }

    /// Opens `dir/edits.jsonl` for appending (created if missing), creating `dir/edits/blobs`
    /// too: a resumed report adds to the corpus it has. A line a killed harness left
    /// half-written is cut off first.
    pub fn append(dir: &Path) -> Result<Self, CorpusError> {
        let file = dir.join(CORPUS_FILE);
        let write_err = |source| CorpusError::Write {
            path: file.clone(),
            source,
        };
        std::fs::create_dir_all(dir.join(BLOBS_DIR)).map_err(write_err)?;
        if let Ok(bytes) = std::fs::read(&file) {
            let keep = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
            if keep < bytes.len() {
                std::fs::write(&file, &bytes[..keep]).map_err(write_err)?;
            }
        }
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&file)
            .map_err(write_err)?;
        Ok(CorpusWriter {
            dir: dir.to_path_buf(),
            out: std::io::BufWriter::new(out),
            written: Default::default(),
        })
    }

    /// Stores `text` as a blob (once) and returns its id.
    pub fn blob(&mut self, text: &str) -> Result<String, CorpusError> {
        let id = blob_id(text);
        if self.written.insert(id.clone()) {
            let path = self.dir.join(BLOBS_DIR).join(&id);
            if !path.exists() {
                std::fs::write(&path, text.as_bytes())
                    .map_err(|source| CorpusError::Write { path, source })?;
            }
        }
        Ok(id)
    }

    /// Appends one record.
    pub fn record(&mut self, record: &EditRecord) -> Result<(), CorpusError> {
        let line = serde_json::to_string(record).unwrap_or_default();
        writeln!(self.out, "{line}").map_err(|source| CorpusError::Write {
            path: self.dir.join(CORPUS_FILE),
            source,
        })
    }

    /// Flushes what was written so far (a run's records, as it ends).
    pub fn flush(&mut self) -> Result<(), CorpusError> {
        self.out.flush().map_err(|source| CorpusError::Write {
            path: self.dir.join(CORPUS_FILE),
            source,
        })
    }

    /// Flushes `edits.jsonl`.
    pub fn finish(mut self) -> Result<(), CorpusError> {
        self.out.flush().map_err(|source| CorpusError::Write {
            path: self.dir.join(CORPUS_FILE),
            source,
        })
    }
}

/// The name of a run's own lines of `edits.jsonl`, in its run folder (`runs/<run>/`); their
/// blobs are the report folder's.
pub const RUN_EDITS_FILE: &str = "edit-calls.jsonl";

/// Writes `records` as `run_folder/edit-calls.jsonl` (the folder is created).
pub fn write_run_edits(run_folder: &Path, records: &[EditRecord]) -> Result<(), CorpusError> {
    let path = run_folder.join(RUN_EDITS_FILE);
    let mut text = String::new();
    for r in records {
        text.push_str(&serde_json::to_string(r).unwrap_or_default());
        text.push('\n');
    }
    std::fs::create_dir_all(run_folder)
        .and_then(|()| std::fs::write(&path, text))
        .map_err(|source| CorpusError::Write { path, source })
}

/// Writes `dir/edits.jsonl` again (atomically) as the lines of the runs' own files
/// (`dir/<run folder>/edit-calls.jsonl`, [`RUN_EDITS_FILE`]), in the order of `run_folders`,
/// and copies every blob of `sources` (other report folders, for a merge) that `dir` lacks.
/// Returns how many lines it wrote. A run without the file had no edit calls.
pub fn rebuild_corpus<'a>(
    dir: &Path,
    run_folders: impl IntoIterator<Item = &'a str>,
    sources: &[&Path],
) -> Result<usize, CorpusError> {
    let file = dir.join(CORPUS_FILE);
    let write_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CorpusError::Write { path, source }
    };
    let blobs = dir.join(BLOBS_DIR);
    std::fs::create_dir_all(&blobs).map_err(write_err(&blobs))?;
    for source in sources {
        let Ok(entries) = std::fs::read_dir(source.join(BLOBS_DIR)) else {
            continue;
        };
        for e in entries.flatten() {
            let to = blobs.join(e.file_name());
            if !to.exists() {
                std::fs::copy(e.path(), &to).map_err(write_err(&to))?;
            }
        }
    }
    let mut text = String::new();
    let mut lines = 0;
    for run in run_folders {
        let path = dir.join(run).join(RUN_EDITS_FILE);
        match std::fs::read_to_string(&path) {
            Ok(part) => {
                lines += part.lines().filter(|l| !l.trim().is_empty()).count();
                text.push_str(&part);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(CorpusError::Read { path, source }),
        }
    }
    let tmp = dir.join(format!(".{CORPUS_FILE}.tmp"));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, &file))
        .map_err(write_err(&file))?;
    Ok(lines)
}

/// A corpus read back: the records with their line numbers, the blobs they use, and the lines
/// that were skipped.
#[derive(Debug, Default)]
pub struct Corpus {
    pub records: Vec<(usize, EditRecord)>,
    pub blobs: HashMap<String, Arc<str>>,
    pub problems: Vec<CorpusProblem>,
}

impl Corpus {
    /// The text of blob `id`, if the corpus holds it.
    pub fn blob(&self, id: &str) -> Option<&Arc<str>> {
        self.blobs.get(id)
    }
}

/// `path` itself if it is a file, else `path/edits.jsonl`.
pub fn corpus_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join(CORPUS_FILE)
    } else {
        path.to_path_buf()
    }
}

/// Reads the corpus at `path` (a folder holding `edits.jsonl`, or the file itself). A line that
/// is not a valid record, or names a blob that is missing, becomes a problem and is skipped.
pub fn read_corpus(path: &Path) -> Result<Corpus, CorpusError> {
    let file = corpus_file(path);
    let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
    let read_err = |source| CorpusError::Read {
        path: file.clone(),
        source,
    };
    let reader = std::io::BufReader::new(std::fs::File::open(&file).map_err(read_err)?);
    let mut corpus = Corpus::default();
    for (i, line) in reader.lines().enumerate() {
        let number = i + 1;
        let line = line.map_err(read_err)?;
        if line.trim().is_empty() {
            continue;
        }
        let record: EditRecord = match serde_json::from_str(&line) {
            Ok(record) => record,
            Err(e) => {
                corpus.problems.push(CorpusProblem {
                    line: number,
                    message: format!("not a valid edit record: {e}"),
                });
                continue;
            }
        };
        let mut ids: Vec<&str> = Vec::new();
        ids.extend(record.before.as_deref());
        ids.extend(record.outcome.as_ref().and_then(|o| o.after.as_deref()));
        if let Some(Gold::Apply { after }) = &record.gold {
            ids.push(after);
        }
        let mut missing = None;
        for id in ids {
            if corpus.blobs.contains_key(id) {
                continue;
            }
            match load_blob(&dir, id) {
                Some(text) => {
                    corpus.blobs.insert(id.to_owned(), text);
                }
                None => {
                    missing = Some(id.to_owned());
                    break;
                }
            }
        }
        if let Some(id) = missing {
            corpus.problems.push(CorpusProblem {
                line: number,
                message: format!(
                    "blob `{id}` is missing (looked in {})",
                    dir.join(BLOBS_DIR).display()
                ),
            });
            continue;
        }
        corpus.records.push((number, record));
    }
    Ok(corpus)
}

/// Blob `id` from `dir/edits/blobs`, if it is there, valid UTF-8, and has a well-formed name.
fn load_blob(dir: &Path, id: &str) -> Option<Arc<str>> {
    if id.len() != 64 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let bytes = std::fs::read(dir.join(BLOBS_DIR).join(id)).ok()?;
    String::from_utf8(bytes).ok().map(Arc::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(before: Option<String>) -> EditRecord {
        EditRecord {
            task: "t".into(),
            run: "t#1".into(),
            turn: 2,
            call_id: "toolu_1".into(),
            path: "a.py".into(),
            before,
            arguments: json!({"path": "a.py", "edits": [{"oldText": "a", "newText": "b"}]}),
            outcome: None,
            kind: None,
            gold: None,
        }
    }

    #[test]
    fn blob_ids_are_sha256() {
        assert_eq!(
            blob_id("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn a_corpus_round_trips_and_stores_each_content_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = CorpusWriter::create(dir.path()).unwrap();
        let id = writer.blob("a = 1\n").unwrap();
        assert_eq!(writer.blob("a = 1\n").unwrap(), id);
        let first = record(Some(id.clone()));
        let mut second = record(None);
        second.gold = Some(Gold::Refuse);
        writer.record(&first).unwrap();
        writer.record(&second).unwrap();
        writer.finish().unwrap();
        assert_eq!(
            std::fs::read_dir(dir.path().join(BLOBS_DIR))
                .unwrap()
                .count(),
            1
        );

        let corpus = read_corpus(dir.path()).unwrap();
        assert_eq!(corpus.problems, vec![]);
        assert_eq!(corpus.records, vec![(1, first), (2, second)]);
        assert_eq!(corpus.blob(&id).map(|b| &**b), Some("a = 1\n"));
    }

    #[test]
    fn bad_lines_and_missing_blobs_are_skipped_with_their_line_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = CorpusWriter::create(dir.path()).unwrap();
        let good = record(Some(writer.blob("x\n").unwrap()));
        writer.record(&good).unwrap();
        writer.record(&record(Some(blob_id("gone")))).unwrap();
        writer.finish().unwrap();
        let path = dir.path().join(CORPUS_FILE);
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"task\": 1}\nnot json\n");
        std::fs::write(&path, text).unwrap();

        let corpus = read_corpus(&path).unwrap();
        assert_eq!(corpus.records, vec![(1, good)]);
        let lines: Vec<usize> = corpus.problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, vec![2, 3, 4]);
        assert!(
            corpus.problems[0].message.contains("is missing"),
            "{:?}",
            corpus.problems
        );
        assert!(
            corpus.problems[1]
                .message
                .contains("not a valid edit record")
        );
    }
}
