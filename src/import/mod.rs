//! Importing outside benchmark suites as harness tasks: `harness import exercism` turns the
//! practice exercises of an Exercism language track (or of the aider polyglot benchmark, which
//! has the same layout) into task folders (`task.yaml`, a `repo/` fixture, the reference solution
//! in `solution/`).
//!
//! An import is idempotent: the same input gives byte-identical files, and each task is said to
//! be new, updated (with the files that changed) or unchanged. An exercise that cannot be
//! imported is skipped with its path and the reason; the rest are imported.
//!
//! Depends on `tasks` (the `requires:` declaration) only; never on the runner or the reports.

pub mod atif;
pub mod exercism;
pub mod prompt;
pub mod recipes;
pub mod session;
pub mod tree;

use std::path::PathBuf;

/// An exercise that was not imported: where it is and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The exercise folder (or the file at fault in it).
    pub path: PathBuf,
    pub reason: String,
}

/// What an import did, task by task.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Task ids written for the first time.
    pub new: Vec<String>,
    /// Task ids rewritten, each with the files (relative to the task folder) that changed.
    pub updated: Vec<(String, Vec<String>)>,
    /// Task ids whose folder already held exactly what the import would write.
    pub unchanged: Vec<String>,
    /// Exercises that were not imported.
    pub skipped: Vec<Skipped>,
    /// Exercises imported per language (language, count), in the order met.
    pub per_language: Vec<(String, usize)>,
    /// What the user should be warned of (a shared install that is missing, ...).
    pub notes: Vec<String>,
    /// What the import did besides writing tasks (the shared JavaScript install).
    pub done: Vec<String>,
}

impl ImportSummary {
    /// Tasks written or found up to date.
    pub fn imported(&self) -> usize {
        self.new.len() + self.updated.len() + self.unchanged.len()
    }

    fn count(&mut self, language: &str) {
        match self.per_language.iter_mut().find(|(l, _)| l == language) {
            Some((_, n)) => *n += 1,
            None => self.per_language.push((language.to_owned(), 1)),
        }
    }
}

/// Why an import could not start at all (a bad exercise is a [`Skipped`] entry instead).
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(
        "no Exercism exercises in {path}: expected {path}/exercises/practice/<exercise>/ (a track) or {path}/<language>/exercises/practice/<exercise>/ (the polyglot benchmark)"
    )]
    NoExercises { path: PathBuf },
    #[error("failed to read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("failed to write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("invalid --exercise pattern '{pattern}': {source}")]
    Glob {
        pattern: String,
        #[source]
        source: globset::Error,
    },
    #[error("the prompt template {path} has no `{{instructions}}` placeholder")]
    Template { path: PathBuf },
}

impl ImportError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            ImportError::NoExercises { .. } => {
                "pass the root of a track checkout (exercism/python) or of Aider-AI/polyglot-benchmark".into()
            }
            ImportError::Read { .. } => "check the path and its permissions".into(),
            ImportError::Write { .. } => "check that the --into folder is writable".into(),
            ImportError::Glob { .. } => "`--exercise` takes a glob such as `two-*`".into(),
            ImportError::Template { .. } => {
                "the template is the prompt with `{instructions}`, `{files}`, `{language}` and `{exercise}` where those go".into()
            }
        }
    }
}
