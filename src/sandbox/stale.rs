//! Owner markers on the harness's temporary folders, and the cleanup of the folders a killed
//! harness left behind.
//!
//! Every temporary folder a run creates (its workspace's private folder `harness-<task>-XXXXXX`
//! and its scratch folder `harness-run-XXXXXX`) gets a marker file, [`OWNER_FILE`], the moment
//! it exists: the pid of the harness, the start time of that process (clock ticks since boot,
//! field 22 of `/proc/<pid>/stat`) and the boot id (`/proc/sys/kernel/random/boot_id`). A folder
//! is provably dead when its marker names another boot, a pid with no process, or a pid whose
//! process started at another time (the pid was reused). [`clean_stale`] removes exactly those;
//! a folder without a readable marker (being created right now, kept with `--keep-workspaces`,
//! or written by an older harness) is never touched.
//!
//! Linux only in effect: without `/proc` nothing can be proven and nothing is removed. Depends
//! on nothing else in the crate.

use std::io;
use std::path::{Path, PathBuf};

/// The marker file's name inside each temporary folder.
pub const OWNER_FILE: &str = ".harness-owner";

/// The prefix of the temporary folders the harness creates (and may clean up).
pub const TEMP_PREFIX: &str = "harness-";

/// Which process owns a temporary folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub pid: u32,
    /// Clock ticks since boot when the process started.
    pub start: u64,
    /// The kernel's boot id (empty when unknown).
    pub boot: String,
}

impl Owner {
    /// This process.
    pub fn current() -> Option<Owner> {
        let pid = std::process::id();
        Some(Owner {
            pid,
            start: start_time(pid)?,
            boot: boot_id(),
        })
    }

    /// The marker's text: `pid=…`, `start=…`, `boot=…`, one per line.
    pub fn to_text(&self) -> String {
        format!(
            "pid={}\nstart={}\nboot={}\n",
            self.pid, self.start, self.boot
        )
    }

    /// Parses a marker's text; `None` when a field is missing or malformed.
    pub fn parse(text: &str) -> Option<Owner> {
        let mut pid = None;
        let mut start = None;
        let mut boot = None;
        for line in text.lines() {
            match line.split_once('=') {
                Some(("pid", v)) => pid = v.trim().parse().ok(),
                Some(("start", v)) => start = v.trim().parse().ok(),
                Some(("boot", v)) => boot = Some(v.trim().to_owned()),
                _ => {}
            }
        }
        Some(Owner {
            pid: pid?,
            start: start?,
            boot: boot?,
        })
    }

    /// Whether the process this marker names is provably gone: another boot, no such process,
    /// or a process that started at another time. `false` when it cannot be told (no `/proc`).
    pub fn is_gone(&self) -> bool {
        if !Path::new("/proc/self/stat").exists() {
            return false;
        }
        let boot = boot_id();
        if !self.boot.is_empty() && !boot.is_empty() && self.boot != boot {
            return true;
        }
        match start_time(self.pid) {
            None => !Path::new(&format!("/proc/{}", self.pid)).exists(),
            Some(start) => start != self.start,
        }
    }
}

/// Writes this process's marker into `dir` (a folder it just created). Without `/proc` there is
/// nothing to write, and nothing will ever be cleaned up.
pub fn mark(dir: &Path) -> io::Result<()> {
    match Owner::current() {
        Some(owner) => std::fs::write(dir.join(OWNER_FILE), owner.to_text()),
        None => Ok(()),
    }
}

/// Removes the marker of `dir` (a folder kept on purpose, which no cleanup may take).
pub fn unmark(dir: &Path) {
    let _gone = std::fs::remove_file(dir.join(OWNER_FILE));
}

/// What [`clean_stale`] did.
#[derive(Debug, Default)]
pub struct Cleanup {
    /// The folders removed.
    pub removed: Vec<PathBuf>,
    /// The dead folders that could not be removed, and why.
    pub failed: Vec<(PathBuf, io::Error)>,
}

/// Removes every folder `temp/harness-*` whose marker names a process that is gone.
pub fn clean_stale(temp: &Path) -> Cleanup {
    let mut out = Cleanup::default();
    let Ok(entries) = std::fs::read_dir(temp) else {
        return out;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with(TEMP_PREFIX) {
            continue;
        }
        // Never through a symlink: only real folders the harness made.
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path();
        let Some(owner) = std::fs::read_to_string(path.join(OWNER_FILE))
            .ok()
            .and_then(|t| Owner::parse(&t))
        else {
            continue;
        };
        if !owner.is_gone() {
            continue;
        }
        match remove_tree(&path) {
            Ok(()) => out.removed.push(path),
            Err(e) => out.failed.push((path, e)),
        }
    }
    out.removed.sort();
    out
}

/// Removes `path`, making read-only folders inside it writable first (a check may leave some).
fn remove_tree(path: &Path) -> io::Result<()> {
    match std::fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(first) => {
            make_writable(path);
            std::fs::remove_dir_all(path).map_err(|_| first)
        }
    }
}

fn make_writable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if !meta.is_dir() {
        return;
    }
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755));
    if let Ok(entries) = std::fs::read_dir(path) {
        for e in entries.flatten() {
            make_writable(&e.path());
        }
    }
}

/// The start time of process `pid` in clock ticks since boot, `None` when there is no such
/// process (or no `/proc`).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, so count from the last
    // `)`; starttime is field 22, the 20th after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(temp: &Path, name: &str, owner: Option<&Owner>) -> PathBuf {
        let dir = temp.join(name);
        std::fs::create_dir_all(dir.join("work/sub")).unwrap();
        std::fs::write(dir.join("work/sub/file.txt"), "x").unwrap();
        if let Some(owner) = owner {
            std::fs::write(dir.join(OWNER_FILE), owner.to_text()).unwrap();
        }
        dir
    }

    #[test]
    fn markers_round_trip() {
        let me = Owner::current().expect("/proc is there on Linux");
        assert_eq!(Owner::parse(&me.to_text()), Some(me.clone()));
        assert!(!me.is_gone(), "this process is alive");
        assert_eq!(Owner::parse("pid=1\nstart=x\nboot=b\n"), None);
        assert_eq!(Owner::parse("pid=1\n"), None);
    }

    #[test]
    fn only_folders_of_dead_processes_are_removed() {
        let temp = tempfile::tempdir().unwrap();
        let me = Owner::current().unwrap();
        // A process that has ended: its pid names nothing (or, reused, another start time).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead_pid = child.id();
        child.wait().unwrap();
        let dead = Owner {
            pid: dead_pid,
            start: me.start,
            boot: me.boot.clone(),
        };
        let reused = Owner {
            start: me.start + 1,
            ..me.clone()
        };
        let other_boot = Owner {
            boot: "00000000-0000-0000-0000-000000000000".into(),
            ..me.clone()
        };
        let alive = folder(temp.path(), "harness-py-median-alive", Some(&me));
        let gone = folder(temp.path(), "harness-py-median-gone", Some(&dead));
        let pid_reused = folder(temp.path(), "harness-run-reused", Some(&reused));
        let rebooted = folder(temp.path(), "harness-run-rebooted", Some(&other_boot));
        let unmarked = folder(temp.path(), "harness-run-unmarked", None);
        let not_ours = folder(temp.path(), "other-tool-gone", Some(&dead));
        // A read-only folder inside (a check can leave one) is removed too.
        std::fs::set_permissions(
            gone.join("work/sub"),
            std::os::unix::fs::PermissionsExt::from_mode(0o555),
        )
        .unwrap();

        let cleanup = clean_stale(temp.path());
        assert!(cleanup.failed.is_empty(), "{:?}", cleanup.failed);
        let mut want = vec![gone.clone(), pid_reused.clone(), rebooted.clone()];
        want.sort();
        assert_eq!(cleanup.removed, want);
        for removed in [&gone, &pid_reused, &rebooted] {
            assert!(!removed.exists(), "{}", removed.display());
        }
        for kept in [&alive, &unmarked, &not_ours] {
            assert!(kept.exists(), "{}", kept.display());
        }
    }

    #[test]
    fn an_unmarked_folder_is_left_alone() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("harness-kept");
        std::fs::create_dir(&dir).unwrap();
        mark(&dir).unwrap();
        assert!(dir.join(OWNER_FILE).is_file());
        unmark(&dir);
        assert!(!dir.join(OWNER_FILE).exists());
        assert!(clean_stale(temp.path()).removed.is_empty());
    }
}
