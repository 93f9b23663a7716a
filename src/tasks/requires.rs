//! `requires:` of `task.yaml`: what a task's checks need on the machine besides the fixture
//! (programs on `PATH`, modules `python3` imports, files such as a shared dependency install),
//! so the runner can say up front what to install and skip the task with that reason instead of
//! running it into a check failure that only says "command not found".
//!
//! This module only holds the declaration; the runner's preflight looks the things up.
//! Depends on nothing else in the crate.

use serde::{Deserialize, Serialize};

/// `requires:` as written (and as validated: nothing here needs resolving).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Requires {
    /// Programs the checks run, looked up on `PATH` (`cargo`, `go`, `npm`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<String>,
    /// Modules `python3` must import (`pytest`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub python_modules: Vec<String>,
    /// Files or folders that must exist: absolute, or relative to the task folder.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// What to do when something is missing, said instead of the built-in advice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Requires {
    /// Whether nothing is required.
    pub fn is_empty(&self) -> bool {
        self.programs.is_empty() && self.python_modules.is_empty() && self.files.is_empty()
    }

    /// The required files that exist, resolved against the task folder `dir` and made
    /// canonical (symlinks followed), for the sandbox to show read-only.
    pub fn existing_files(&self, dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        self.files
            .iter()
            .filter_map(|file| dir.join(file).canonicalize().ok())
            .collect()
    }
}
