//! What can go wrong writing or reading a report file; every variant names the file.

use std::io;
use std::path::PathBuf;

/// A failure to write a report file.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("failed to write {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("failed to write {path}: {source}")]
    Csv {
        path: PathBuf,
        #[source]
        source: ::csv::Error,
    },
    #[error("failed to serialise {path}: {source}")]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("failed to read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: ::csv::Error,
    },
    #[error("failed to read {path}: {source}")]
    ReadFile {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("failed to read {path}: {source}\nhint: is it a run file written by `harness run`?")]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("failed to read {path}: line {line}: {message}")]
    Malformed {
        path: PathBuf,
        line: u64,
        message: String,
    },
}
