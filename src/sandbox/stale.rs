//! Owners written into the names of the harness's temporary folders, and the cleanup of the
//! folders a killed harness left behind.
//!
//! Every temporary folder a run creates (its workspace's private folder `harness-<task>-…` and
//! its scratch folder `harness-run-…`) is created by [`create_owned`] under a name that ends
//! with its owner: `<prefix>XXXXXX.<pid>.<start>.<boot>`, the pid of the harness, the start time
//! of that process (clock ticks since boot, field 22 of `/proc/<pid>/stat`) and the first eight
//! characters of the boot id (`/proc/sys/kernel/random/boot_id`). The owner is there the moment
//! the folder is (one `mkdir`, no marker file to write after it, no window in which a SIGKILL
//! leaves a folder nobody can claim), and costs no file of its own. A folder is provably dead
//! when its owner names another boot, a pid with no process, or a pid whose process started at
//! another time (the pid was reused). [`clean_stale`] removes exactly those; a folder without an
//! owner in its name (kept with `--keep-workspaces`: see [`disown`]) is never touched. Folders
//! of older harnesses, which wrote their owner into a marker file ([`LEGACY_OWNER_FILE`]), are
//! judged by that file.
//!
//! A short boot id can only err one way: two boots sharing eight characters make a dead folder
//! look alive (it stays), never a live one dead.
//!
//! Before a dead folder is removed, every process the dead harness left running in it (its
//! working folder inside, or the folder named in its arguments; an orphan or a tagged command)
//! is killed: what its commands left, and a bubblewrap caught halfway through its setup.
//!
//! Linux only in effect: without `/proc` nothing can be proven, folders get no owner and nothing
//! is removed. Depends only on [`super::process`]'s readers of `/proc` and its commands' tag.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::process::{carries_tag, proc_pids, stat_fields};

/// The marker file older harnesses wrote inside each temporary folder.
pub const LEGACY_OWNER_FILE: &str = ".harness-owner";

/// The prefix of the temporary folders the harness creates (and may clean up).
pub const TEMP_PREFIX: &str = "harness-";

/// How many characters of the boot id a folder name carries.
const BOOT_CHARS: usize = 8;

/// Which process owns a temporary folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub pid: u32,
    /// Clock ticks since boot when the process started.
    pub start: u64,
    /// The kernel's boot id, or its first characters (empty when unknown).
    pub boot: String,
}

impl Owner {
    /// This process (looked up once: none of it changes while the process lives).
    pub fn current() -> Option<Owner> {
        static CURRENT: OnceLock<Option<Owner>> = OnceLock::new();
        CURRENT
            .get_or_init(|| {
                let pid = std::process::id();
                Some(Owner {
                    pid,
                    start: start_time(pid)?,
                    boot: boot_id(),
                })
            })
            .clone()
    }

    /// The end of an owned folder's name: `.<pid>.<start>.<boot>`.
    pub fn name_suffix(&self) -> String {
        let boot: String = self.boot.chars().take(BOOT_CHARS).collect();
        format!(".{}.{}.{boot}", self.pid, self.start)
    }

    /// The owner at the end of a folder's name; `None` when the name carries none.
    pub fn from_name(name: &str) -> Option<Owner> {
        let mut parts = name.rsplitn(4, '.');
        let boot = parts.next()?;
        let start = parts.next()?.parse().ok()?;
        let pid = parts.next()?.parse().ok()?;
        parts.next()?;
        let hex = boot.len() == BOOT_CHARS && boot.bytes().all(|b| b.is_ascii_hexdigit());
        hex.then(|| Owner {
            pid,
            start,
            boot: boot.to_owned(),
        })
    }

    /// Parses an older harness's marker file: `pid=…`, `start=…`, `boot=…`, one per line;
    /// `None` when a field is missing or malformed.
    pub fn parse_legacy(text: &str) -> Option<Owner> {
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

    /// Whether the process this owner names is provably gone: another boot, no such process,
    /// or a process that started at another time. `false` when it cannot be told (no `/proc`).
    pub fn is_gone(&self) -> bool {
        if !Path::new("/proc/self/stat").exists() {
            return false;
        }
        let boot = boot_id();
        if !self.boot.is_empty() && !boot.is_empty() && !boot.starts_with(&self.boot) {
            return true;
        }
        match start_time(self.pid) {
            None => !Path::new(&format!("/proc/{}", self.pid)).exists(),
            Some(start) => start != self.start,
        }
    }
}

/// A fresh folder `<system temp>/<prefix>XXXXXX.<pid>.<start>.<boot>` owned by this process,
/// removed when the returned handle drops. Without `/proc` the name carries no owner.
pub fn create_owned(prefix: &str) -> io::Result<tempfile::TempDir> {
    create_owned_in(prefix, &std::env::temp_dir())
}

/// [`create_owned`] in `dir`.
pub fn create_owned_in(prefix: &str, dir: &Path) -> io::Result<tempfile::TempDir> {
    let suffix = Owner::current()
        .map(|o| o.name_suffix())
        .unwrap_or_default();
    tempfile::Builder::new()
        .prefix(prefix)
        .suffix(&suffix)
        .tempdir_in(dir)
}

/// Renames the owned folder `dir` to a fresh name `<prefix>XXXXXX.<owner>` beside it (never
/// over an existing entry) and returns the new path: a folder of one run given to another
/// ([`super::pool`]), named as if made for it.
pub fn rename_owned(dir: &Path, prefix: &str) -> io::Result<PathBuf> {
    use rand::Rng;
    use rand::distributions::Alphanumeric;
    let parent = dir
        .parent()
        .ok_or_else(|| io::Error::other(format!("{} has no parent folder", dir.display())))?;
    let suffix = Owner::current()
        .map(|o| o.name_suffix())
        .unwrap_or_default();
    let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
    for _ in 0..16 {
        let random: String = rand::thread_rng()
            .sample_iter(&Alphanumeric)
            .take(6)
            .map(char::from)
            .collect();
        let to = parent.join(format!("{prefix}{random}{suffix}"));
        match rustix::fs::renameat_with(
            rustix::fs::CWD,
            dir,
            rustix::fs::CWD,
            &to,
            rustix::fs::RenameFlags::NOREPLACE,
        ) {
            Ok(()) => return Ok(to),
            Err(rustix::io::Errno::EXIST) => last = io::Error::from(io::ErrorKind::AlreadyExists),
            Err(e) => return Err(e.into()),
        }
    }
    Err(last)
}

/// How long [`remove_settled`] keeps removing a folder that something still adds entries to.
const SETTLE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(1);

/// Removes the folder `dir` and everything in it, again while something is still adding
/// entries to it (the removal then fails "directory not empty"): a run cancelled mid-way has
/// its sandbox torn down at the same moment, and until the kill lands its supervisor may still
/// be making mount points in the run's `tmp/`, or a command may still be writing files in the
/// workspace. Gives up after [`SETTLE_PATIENCE`], and at once on any other error (a folder a
/// command made unreadable stays, and the next harness's [`clean_stale`] tries again). Whether
/// `dir` is gone.
pub fn remove_settled(dir: &Path) -> bool {
    let started = std::time::Instant::now();
    loop {
        match super::remove::remove_tree(dir, super::remove::Access::AsItIs) {
            Ok(()) => return true,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return true,
            Err(e)
                if e.kind() == io::ErrorKind::DirectoryNotEmpty
                    && started.elapsed() < SETTLE_PATIENCE =>
            {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            Err(_) => return false,
        }
    }
}

/// Renames the owned folder `dir` to its name without the owner (a folder kept on purpose,
/// which no cleanup may take) and returns the new path; `dir` itself when it has no owner, or
/// when the rename fails (the error says why).
pub fn disown(dir: &Path) -> Result<PathBuf, (PathBuf, io::Error)> {
    let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
        return Ok(dir.to_path_buf());
    };
    let Some(owner) = Owner::from_name(name) else {
        return Ok(dir.to_path_buf());
    };
    let bare = &name[..name.len() - owner.name_suffix().len()];
    let to = dir.with_file_name(bare);
    match std::fs::rename(dir, &to) {
        Ok(()) => Ok(to),
        Err(e) => Err((dir.to_path_buf(), e)),
    }
}

/// What [`clean_stale`] did.
#[derive(Debug, Default)]
pub struct Cleanup {
    /// The folders removed.
    pub removed: Vec<PathBuf>,
    /// How many processes were still running in them (their working folder inside one, or one
    /// named in their arguments) and were killed.
    pub killed: usize,
    /// The dead folders that could not be removed, and why.
    pub failed: Vec<(PathBuf, io::Error)>,
}

impl Cleanup {
    /// What to tell the user about the folders removed from `temp`, if any were.
    pub fn note(&self, temp: &Path) -> Option<String> {
        if self.removed.is_empty() {
            return None;
        }
        let killed = match self.killed {
            0 => String::new(),
            n => format!(", after killing {n} process(es) still running in them"),
        };
        Some(format!(
            "removed {} temporary folder(s) left by a harness that was killed (in {}){killed}",
            self.removed.len(),
            temp.display()
        ))
    }
}

/// Removes every folder `temp/harness-*` whose owner is a process that is gone, after killing
/// what still runs in it: what the killed harness's commands left (outside `isolated`, a command
/// that dropped its tag and was re-parented to init when the harness died), and a bubblewrap
/// stopped halfway through setting a sandbox up (its inner process waits for the outer one,
/// which died with the harness, before it would die with its parent).
pub fn clean_stale(temp: &Path) -> Cleanup {
    let mut out = Cleanup::default();
    let dead = dead_folders(temp);
    out.killed = kill_processes_in(&dead);
    for path in dead {
        match remove_tree(&path) {
            Ok(()) => out.removed.push(path),
            Err(e) => out.failed.push((path, e)),
        }
    }
    out.removed.sort();
    out
}

/// The folders `temp/harness-*` whose owner is a process that is gone.
fn dead_folders(temp: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
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
        let owner = Owner::from_name(&name.to_string_lossy()).or_else(|| {
            std::fs::read_to_string(path.join(LEGACY_OWNER_FILE))
                .ok()
                .and_then(|t| Owner::parse_legacy(&t))
        });
        let Some(owner) = owner else {
            continue;
        };
        if !owner.is_gone() {
            continue;
        }
        out.push(path);
    }
    out
}

/// Kills (SIGKILL) every process left by the dead harness in `folders`: its working folder is
/// inside one, or its arguments name a path inside one, and it is either an orphan (re-parented
/// to init when the harness died) or one of the harness's tagged commands. Someone's shell that
/// merely stands in such a folder (a person looking at what a killed run left) is neither, and
/// lives. Pass after pass until none is left (at most a few: one killed may have had children
/// re-parented meanwhile); returns how many. This process is never one.
fn kill_processes_in(folders: &[PathBuf]) -> usize {
    use std::os::unix::ffi::OsStrExt;
    if folders.is_empty() {
        return 0;
    }
    let inside = |path: &Path| folders.iter().any(|f| path.starts_with(f));
    let me = std::process::id() as i32;
    let mut killed = std::collections::BTreeSet::new();
    for _pass in 0..5 {
        let mut found = false;
        for pid in proc_pids() {
            if pid == me || killed.contains(&pid) {
                continue;
            }
            // Working in one of the folders, or naming one in its arguments.
            let there = std::fs::read_link(format!("/proc/{pid}/cwd"))
                .is_ok_and(|cwd| inside(&cwd))
                || std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|args| {
                    args.split(|b| *b == 0)
                        .any(|a| inside(Path::new(std::ffi::OsStr::from_bytes(a))))
                });
            if !there || !(orphaned(pid) || carries_tag(pid)) {
                continue;
            }
            let pid_t = nix::unistd::Pid::from_raw(pid);
            if nix::sys::signal::kill(pid_t, nix::sys::signal::Signal::SIGKILL).is_ok() {
                killed.insert(pid);
                found = true;
            }
        }
        if !found {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    killed.len()
}

/// Whether process `pid` was left behind: re-parented to init, or in a session whose leader is
/// gone (each command of the harness leads a session of its own, so what a command started
/// outlives its session's leader).
fn orphaned(pid: i32) -> bool {
    let Some(fields) = stat_fields(pid) else {
        return false;
    };
    // state, ppid, pgrp, session.
    let (Some(ppid), Some(session)) = (fields.get(1), fields.get(3)) else {
        return false;
    };
    ppid == "1"
        || session
            .parse::<u32>()
            .is_ok_and(|sid| sid != 0 && !Path::new(&format!("/proc/{sid}")).exists())
}

/// Removes `path`, giving folders a command closed their owner's access back first (a check
/// may leave read-only ones); only for a dead harness's folders, where nothing runs any more.
fn remove_tree(path: &Path) -> io::Result<()> {
    super::remove::remove_tree(path, super::remove::Access::MakeWritable)
}

/// The start time of process `pid` in clock ticks since boot, `None` when there is no such
/// process (or no `/proc`).
fn start_time(pid: u32) -> Option<u64> {
    // starttime is field 22 of the stat line, the 20th after the command name.
    stat_fields(i32::try_from(pid).ok()?)?.get(19)?.parse().ok()
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder named `name` (with `owner` at the end of its name, when given) holding a
    /// read-only subfolder, as a check can leave one.
    fn folder(temp: &Path, name: &str, owner: Option<&Owner>) -> PathBuf {
        let suffix = owner.map(Owner::name_suffix).unwrap_or_default();
        let dir = temp.join(format!("{name}{suffix}"));
        std::fs::create_dir_all(dir.join("work/sub")).unwrap();
        std::fs::write(dir.join("work/sub/file.txt"), "x").unwrap();
        dir
    }

    fn legacy_marker(owner: &Owner) -> String {
        format!(
            "pid={}\nstart={}\nboot={}\n",
            owner.pid, owner.start, owner.boot
        )
    }

    #[test]
    fn a_folder_something_still_fills_is_removed_once_it_stops() {
        // As a supervisor torn down mid-setup makes mount points in a run's `tmp/`: entries
        // made as fast as they can be while the folder is removed, for 50 ms (until the kill
        // lands) or until the folder is gone.
        for _ in 0..5 {
            let root = tempfile::tempdir().unwrap();
            let dir = root.path().join("harness-run-x");
            std::fs::create_dir_all(dir.join("tmp")).unwrap();
            let (started_tx, started_rx) = std::sync::mpsc::channel();
            let filler = {
                let tmp = dir.join("tmp");
                std::thread::spawn(move || {
                    // 50 ms from the 100th entry on (making 100 may take longer than that on a
                    // file system slow to make them).
                    let mut until = std::time::Instant::now() + std::time::Duration::from_secs(30);
                    let mut made = 0u32;
                    while std::time::Instant::now() < until
                        && std::fs::create_dir(tmp.join(made.to_string())).is_ok()
                    {
                        made += 1;
                        if made == 100 {
                            until =
                                std::time::Instant::now() + std::time::Duration::from_millis(50);
                            started_tx.send(()).unwrap();
                        }
                    }
                    made
                })
            };
            started_rx.recv().unwrap();
            assert!(remove_settled(&dir), "{} is still there", dir.display());
            assert!(filler.join().unwrap() >= 100);
            assert!(!dir.exists());
        }
        // Gone already: nothing to do.
        assert!(remove_settled(Path::new("/nonexistent/harness-run-y")));
    }

    #[test]
    fn owners_round_trip_through_folder_names() {
        let me = Owner::current().expect("/proc is there on Linux");
        assert!(!me.is_gone(), "this process is alive");
        let name = format!("harness-py.median-AbC123{}", me.name_suffix());
        let back = Owner::from_name(&name).expect("an owner in the name");
        assert_eq!((back.pid, back.start), (me.pid, me.start));
        assert!(me.boot.starts_with(&back.boot) && back.boot.len() == 8);
        assert!(!back.is_gone(), "the short boot id still names this boot");
        for bare in [
            "harness-run-AbC123",
            "harness-run-AbC123.12.34",
            "harness-run-AbC123.x.34.0123abcd",
            "harness-run-AbC123.12.34.0123abcz",
            "harness-run-AbC123.12.34.0123abc",
            "12.34.0123abcd",
        ] {
            assert_eq!(Owner::from_name(bare), None, "{bare}");
        }
        assert_eq!(Owner::parse_legacy(&legacy_marker(&me)), Some(me.clone()));
        assert_eq!(Owner::parse_legacy("pid=1\nstart=x\nboot=b\n"), None);
        assert_eq!(Owner::parse_legacy("pid=1\n"), None);
    }

    #[test]
    fn a_created_folder_carries_its_owner_from_the_first_moment() {
        let dir = create_owned("harness-test-").unwrap();
        let name = dir.path().file_name().unwrap().to_str().unwrap().to_owned();
        assert!(name.starts_with("harness-test-"), "{name}");
        assert_eq!(
            Owner::from_name(&name).map(|o| o.pid),
            Some(std::process::id())
        );
        assert!(
            std::fs::read_dir(dir.path()).unwrap().next().is_none(),
            "no marker file"
        );
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
        let unowned = folder(temp.path(), "harness-run-unowned", None);
        let not_ours = folder(temp.path(), "other-tool-gone", Some(&dead));
        // An older harness's folder: the owner in a marker file.
        let legacy_gone = folder(temp.path(), "harness-run-legacy-gone", None);
        std::fs::write(legacy_gone.join(LEGACY_OWNER_FILE), legacy_marker(&dead)).unwrap();
        let legacy_alive = folder(temp.path(), "harness-run-legacy-alive", None);
        std::fs::write(legacy_alive.join(LEGACY_OWNER_FILE), legacy_marker(&me)).unwrap();
        // A read-only folder inside (a check can leave one) is removed too.
        std::fs::set_permissions(
            gone.join("work/sub"),
            std::os::unix::fs::PermissionsExt::from_mode(0o555),
        )
        .unwrap();

        let cleanup = clean_stale(temp.path());
        assert!(cleanup.failed.is_empty(), "{:?}", cleanup.failed);
        let mut want = vec![
            gone.clone(),
            pid_reused.clone(),
            rebooted.clone(),
            legacy_gone.clone(),
        ];
        want.sort();
        assert_eq!(cleanup.removed, want);
        for removed in &want {
            assert!(!removed.exists(), "{}", removed.display());
        }
        for kept in [&alive, &unowned, &not_ours, &legacy_alive] {
            assert!(kept.exists(), "{}", kept.display());
        }
    }

    #[test]
    fn what_the_dead_harness_left_running_in_its_folders_is_killed_and_nothing_else() {
        // A dead harness's folders: an orphan left working in one (as an agent's command is
        // when the harness dies), an orphan naming the other in its arguments (as a bubblewrap
        // stopped in its setup does), and a tagged command of the harness. Not killed: a shell
        // of someone looking into a dead folder (neither an orphan nor tagged), and an orphan in
        // a live harness's folder.
        let temp = tempfile::tempdir().unwrap();
        let me = Owner::current().unwrap();
        let mut ended = std::process::Command::new("true").spawn().unwrap();
        let dead = Owner {
            pid: ended.id(),
            start: me.start,
            boot: me.boot.clone(),
        };
        ended.wait().unwrap();
        let workspace = folder(temp.path(), "harness-py-median-gone", Some(&dead));
        let scratch = folder(temp.path(), "harness-run-gone", Some(&dead));
        let alive = folder(temp.path(), "harness-run-alive", Some(&me));
        // An orphan: started in the background by a shell that leads a session of its own and
        // exits at once (as a command of the harness does); its pid.
        let orphan = |cwd: &Path, command: &str| -> u32 {
            let out = std::process::Command::new("setsid")
                .arg("sh")
                .arg("-c")
                .arg(format!("{command} >/dev/null 2>&1 & echo $!"))
                .current_dir(cwd)
                .output()
                .unwrap();
            String::from_utf8(out.stdout)
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        };
        let in_workspace = orphan(&workspace.join("work"), "sleep 600");
        let file = scratch.join("work/sub/file.txt");
        let naming_scratch = orphan(temp.path(), &format!("tail -f {}", file.display()));
        let in_alive = orphan(&alive.join("work"), "sleep 600");
        let mut tagged_child = std::process::Command::new("sleep")
            .arg("600")
            .current_dir(workspace.join("work/sub"))
            .env(super::super::process::TAG_VAR, "t1")
            .spawn()
            .unwrap();
        let mut looking = std::process::Command::new("sleep")
            .arg("600")
            .current_dir(workspace.join("work"))
            .spawn()
            .unwrap();
        let running = |pid: u32| {
            // Gone, or a zombie waiting for init to reap it.
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                !stat[stat.rfind(')').unwrap() + 1..]
                    .trim_start()
                    .starts_with('Z')
            })
        };
        assert!(running(in_workspace) && running(naming_scratch) && running(in_alive));

        let cleanup = clean_stale(temp.path());
        assert_eq!(cleanup.killed, 3, "{cleanup:?}");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while (running(in_workspace) || running(naming_scratch))
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!running(in_workspace) && !running(naming_scratch));
        let status = tagged_child.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9)
        );
        assert_eq!(looking.try_wait().unwrap(), None, "someone's shell lives");
        assert!(running(in_alive), "a live harness's command lives");
        looking.kill().unwrap();
        looking.wait().unwrap();
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(in_alive as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        assert_eq!(cleanup.removed, [workspace.clone(), scratch.clone()]);
        assert_eq!(
            cleanup.note(temp.path()).unwrap(),
            format!(
                "removed 2 temporary folder(s) left by a harness that was killed (in {}), after \
                 killing 3 process(es) still running in them",
                temp.path().display()
            )
        );
        assert_eq!(Cleanup::default().note(temp.path()), None);
    }

    #[test]
    fn a_disowned_folder_is_left_alone() {
        let temp = tempfile::tempdir().unwrap();
        let me = Owner::current().unwrap();
        // Owned by a process that is gone, then disowned (kept on purpose) before any cleanup.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = Owner {
            pid: child.id(),
            ..me
        };
        child.wait().unwrap();
        let dir = folder(temp.path(), "harness-kept-AbC123", Some(&dead));
        let kept = disown(&dir).unwrap();
        assert_eq!(kept, temp.path().join("harness-kept-AbC123"));
        assert!(kept.join("work/sub/file.txt").is_file() && !dir.exists());
        assert_eq!(disown(&kept).unwrap(), kept, "nothing left to disown");
        assert!(clean_stale(temp.path()).removed.is_empty());
        assert!(kept.exists());
    }
}
