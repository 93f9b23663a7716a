//! One problem with one file of a suite: what loading, validating and the oracle report.

use std::fmt;
use std::path::{Path, PathBuf};

/// One problem with one file of a suite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskProblem {
    /// The file (or folder) at fault.
    pub path: PathBuf,
    /// The field, in `checks[0].expect_exit` form, when the problem is about one.
    pub field: Option<String>,
    pub message: String,
}

impl TaskProblem {
    pub(crate) fn new(path: &Path, field: Option<String>, message: impl Into<String>) -> Self {
        TaskProblem {
            path: path.to_path_buf(),
            field,
            message: message.into(),
        }
    }
}

impl fmt::Display for TaskProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) if !field.is_empty() => {
                write!(f, "{}: {}: {}", self.path.display(), field, self.message)
            }
            _ => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}
