//! Tagging the agent's commands and killing every process they started (the command itself is
//! spawned in [`super::spawned`], its sandbox described in [`super::bwrap`]).
//!
//! Every spawned command gets a tag of its own in its environment ([`TAG_VAR`]), which its
//! children inherit through `&`, `setsid`, `nohup` and double forks alike. Outside `isolated`
//! the harness spawns the command itself, and [`super::spawned::Spawned::kill_all`] kills the command's process
//! group, then every process whose environment carries the tag, pass after pass until none is
//! left (a process forking while it is being killed is found on the next pass). The harness is a
//! subreaper, so those are all among its descendants: only they are read (`tagged_pids`).
//! Under `isolated` the command runs in its run's sandbox, spawned by the sandbox's supervisor
//! ([`super::isolated`]), which does the same inside the sandbox's own PID namespace; when the
//! run ends, or the harness dies, the kernel kills everything left in the namespace.
//!
//! A process that drops its environment (`env -i setsid …`) carries no tag. The binary makes
//! itself a child subreaper ([`become_subreaper`]), so such an orphan is re-parented to the
//! harness instead of init, and [`kill_orphans`] (run after every kill pass) kills every child
//! of the harness that is not one of its own commands: an untagged process whose program is not
//! the harness itself (a command between `fork` and `exec` still is).
//!
//! A subreaper must also reap what it adopts: an orphan it killed, and (under `isolated`, at
//! the end of every run) the sandbox's supervisor, which may outlive the bubblewrap process the
//! harness waits for by a moment. [`kill_orphans`] reaps every zombie child that is not one the
//! harness waits for itself ([`own_children`]), so zombies never pile up over a long suite; under
//! `isolated` it runs at most every [`REAP_EVERY`]. The children are found in the kernel's lists
//! of each thread's children (`/proc/self/task/*/children`), and only those that are not own
//! commands are looked at.
//!
//! What is still out of reach, outside `isolated`: a process that makes itself unreadable
//! (non-dumpable, or another user) after dropping its environment, or is started by a service
//! outside the tree (`systemd-run`, `at`, a container daemon); and, when the harness itself is
//! killed with SIGKILL, anything its commands left (then re-parented to init) until the next
//! run, which kills what still works in the dead harness's folders ([`super::stale`]) but not
//! what left them.
//!
//! Depends on nothing else in the crate.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// The environment variable tagging every process a spawned command starts.
pub const TAG_VAR: &str = "HARNESS_SANDBOX_TAG";

/// Kill passes at most (each sleeps a moment so the killed can die and the forked can appear).
const MAX_PASSES: usize = 50;

/// Under `isolated`, how often at most the end of a run's sandbox looks for adopted zombies to
/// reap.
pub const REAP_EVERY: Duration = Duration::from_millis(100);

/// [`kill_orphans`], at most every [`REAP_EVERY`] (under `isolated`, where nothing but a run's
/// supervisor can be adopted: with hundreds of runs in flight a scan per run would cost).
pub(crate) fn reap_now_and_then() {
    static LAST_REAP: Mutex<Option<Instant>> = Mutex::new(None);
    let due = {
        let mut last = LAST_REAP.lock().unwrap_or_else(|e| e.into_inner());
        let due = last.is_none_or(|t| t.elapsed() >= REAP_EVERY);
        if due {
            *last = Some(Instant::now());
        }
        due
    };
    if due {
        kill_orphans();
    }
}

/// The children this process spawned and waits for itself (by pid): [`kill_orphans`] never
/// reaps them, or their owner's `wait` would find nothing. Every spawn of a child that is waited
/// for holds this lock from before the fork until its pid is in, so a scan that holds it cannot
/// see an own child it does not know.
static OWN_CHILDREN: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// The registry of own children, locked (see [`OWN_CHILDREN`]). Spawn while holding it and
/// insert the child's pid; remove it once the child is waited for.
pub(crate) fn own_children() -> MutexGuard<'static, BTreeSet<i32>> {
    OWN_CHILDREN.lock().unwrap_or_else(|e| e.into_inner())
}

/// The file `execvp` would run for `program` under the `PATH` of `env` (glibc's default,
/// `/bin:/usr/bin`, when it has none), found the way `execvp` tries them: `program` itself when
/// it names a path, else the first executable regular file of that name in a `PATH` folder (an
/// empty entry is `cwd`), else `program` unchanged, for the spawn to fail as `execvp` would.
///
/// Why: std spawns a program named without a path, under an environment that sets `PATH`, by
/// `fork` and `execvp`, which copies the spawner's page tables (the whole harness outside
/// `isolated`, the supervisor inside it) and faults on every page either side writes next; a
/// path spawns through `posix_spawn`, which shares the memory until the exec. The checks' shell
/// is `bash` from `PATH`.
pub(crate) fn resolve_program(program: &Path, env: &[(String, String)], cwd: &Path) -> PathBuf {
    let name = program.as_os_str();
    if name.is_empty() || name.as_encoded_bytes().contains(&b'/') {
        return program.to_path_buf();
    }
    let path = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map_or("/bin:/usr/bin", |(_, v)| v.as_str());
    path.split(':')
        .map(|dir| {
            if dir.is_empty() {
                cwd.join(program)
            } else {
                Path::new(dir).join(program)
            }
        })
        .find(|candidate| {
            candidate.is_file()
                && rustix::fs::access(candidate.as_path(), rustix::fs::Access::EXEC_OK).is_ok()
        })
        .unwrap_or_else(|| program.to_path_buf())
}

/// Spawns `cmd` as an own child ([`own_children`]): registered under the lock from before the
/// fork, so no reaper of orphans takes its exit status while it runs.
pub(crate) fn spawn_own(cmd: &mut tokio::process::Command) -> io::Result<tokio::process::Child> {
    let mut own = own_children();
    let spawned = cmd.spawn();
    if let Some(pid) = spawned.as_ref().ok().and_then(tokio::process::Child::id) {
        own.insert(pid as i32);
    }
    spawned
}

/// Hands out the tags of one [`super::Sandbox`]: `<instance>-<n>`.
#[derive(Debug)]
pub(crate) struct Tags {
    instance: String,
    next: AtomicU64,
}

impl Tags {
    pub(crate) fn new() -> Self {
        Tags {
            instance: format!("{:016x}", rand::random::<u64>()),
            next: AtomicU64::new(1),
        }
    }

    pub(crate) fn next(&self) -> String {
        format!(
            "{}-{}",
            self.instance,
            self.next.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// Kills every process any command of this instance started.
    pub(crate) fn kill_everything(&self) {
        kill_tagged(None, &format!("{}-", self.instance), false);
    }
}

/// Kills group `pgid`, then every process whose environment has `TAG_VAR=tag` (or, when not
/// `exact`, a tag starting with `tag`), until none is found; then the orphans that escaped their
/// tag ([`kill_orphans`]).
pub(crate) fn kill_tagged(pgid: Option<i32>, tag: &str, exact: bool) {
    if let Some(pid) = pgid {
        let _gone = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
    let entry = format!("{TAG_VAR}={tag}");
    for _ in 0..MAX_PASSES {
        let found = tagged_pids(entry.as_bytes(), exact);
        if found.is_empty() {
            break;
        }
        for pid in found {
            let _gone = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    kill_orphans();
}

/// The soft limit on open files this process started with, when [`raise_open_files_limit`]
/// raised it.
static STARTING_OPEN_FILES: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

/// Raises this process's soft limit on open files to its hard limit (what `ulimit -n` would
/// allow the user anyway). Every run in flight holds descriptors (its sandbox's socket, pidfd
/// and namespace, its connection, its commands' pipes): under the soft limit many desktops
/// start with (1,024), 64 runs at once failed with "Too many open files" in their checks.
/// The commands get the starting limit back under `isolated` (the sandbox maker sets it,
/// [`starting_open_files_arg`]); outside it they inherit the raised one. Call once, early, in the
/// binary; nothing is said when it cannot be raised.
pub fn raise_open_files_limit() {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    let Some(current) = limit.current else {
        return;
    };
    // No hard limit: as far as the kernel lets a process go by default (`fs.nr_open`).
    let target = limit.maximum.unwrap_or(1 << 20);
    if target > current && set_open_files_limit(target).is_ok() {
        let _ = STARTING_OPEN_FILES.set(current);
    }
}

/// The argument that gives the sandbox maker (or the supervisor bubblewrap starts) the soft
/// limit on open files this process started with, after their own: none if
/// [`raise_open_files_limit`] did not raise it. [`open_files_limit_from_args`] reads it.
pub(crate) fn starting_open_files_arg() -> Option<String> {
    STARTING_OPEN_FILES.get().map(u64::to_string)
}

/// Sets this process's soft limit on open files to the one its second argument gives
/// ([`starting_open_files_arg`]), if any: the sandbox maker and the supervisor, so that the
/// commands get the limit the harness started with.
pub(crate) fn open_files_limit_from_args() -> io::Result<()> {
    match std::env::args().nth(2).and_then(|n| n.parse().ok()) {
        Some(soft) => set_open_files_limit(soft),
        None => Ok(()),
    }
}

/// Sets this process's soft limit on open files to `soft`, its hard limit unchanged.
fn set_open_files_limit(soft: u64) -> io::Result<()> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(soft),
            maximum: limit.maximum,
        },
    )
    .map_err(io::Error::from)
}

/// Makes this process a child subreaper (Linux `PR_SET_CHILD_SUBREAPER`): processes its
/// commands leave behind become its children, where [`kill_orphans`] finds them, instead of
/// init's. Call once, early, in the binary; a failure only means fewer orphans are caught.
pub fn become_subreaper() -> io::Result<()> {
    nix::sys::prctl::set_child_subreaper(true).map_err(io::Error::from)
}

/// Kills every child of this process that is not one of its commands: alive (not a zombie),
/// without a [`TAG_VAR`] in its environment, and running another program than this one (a
/// command forked but not yet exec'd is still this program, with this environment). With
/// [`become_subreaper`], that is every orphan whose command dropped its tag (`env -i setsid`);
/// without it there are none, and nothing is done: a process that is not a subreaper (a test
/// binary calling the library) may well have children of its own. Reaps every zombie child
/// that is not an own one ([`own_children`]): the orphans it killed, and those that ended on
/// their own. Returns how many were killed.
pub fn kill_orphans() -> usize {
    if !nix::sys::prctl::get_child_subreaper().unwrap_or(false) {
        return 0;
    }
    let me = std::process::id() as i32;
    let my_exe = std::fs::read_link("/proc/self/exe").ok();
    let mut killed = 0;
    for _ in 0..MAX_PASSES {
        // The registry stays locked for the whole pass (not across the sleep): no own command
        // is then between its fork and its registration. One in the middle of its `exec` shows
        // its new program and, for a moment, an empty environment, as an `env -i` orphan does;
        // seen unregistered, it would be killed for one.
        let own = own_children();
        // The own commands are neither orphans nor anyone's to reap: never looked at.
        let children: Vec<Child> = match own_process_children() {
            Some(pids) => pids
                .into_iter()
                .filter(|pid| !own.contains(pid))
                .filter_map(|pid| child_of(me, pid))
                .collect(),
            None => children_of(me)
                .into_iter()
                .filter(|c| !own.contains(&c.pid))
                .collect(),
        };
        reap_adopted(&children);
        let found: Vec<i32> = children
            .into_iter()
            .filter(|c| !c.zombie)
            .map(|c| c.pid)
            .filter(|&pid| {
                let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
                if exe.is_some() && exe == my_exe {
                    return false;
                }
                !carries_tag(pid)
            })
            .collect();
        for &pid in &found {
            if kill(Pid::from_raw(pid), Signal::SIGKILL).is_ok() {
                killed += 1;
            }
        }
        drop(own);
        if found.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    killed
}

/// Whether process `pid` has a [`TAG_VAR`] in its environment (an unreadable one has none).
pub(crate) fn carries_tag(pid: i32) -> bool {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    environ
        .split(|b| *b == 0)
        .any(|var| var.starts_with(TAG_VAR.as_bytes()))
}

/// The fields of `/proc/<pid>/stat` after the command name, from the state on (`state ppid pgrp
/// session ...`): the name may hold spaces and parentheses, so they start after the last `)`.
/// `None` when there is no such process (or no `/proc`).
pub(crate) fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')').map(|(_, r)| r)?;
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// Every process id in `/proc` (none without it).
pub(crate) fn proc_pids() -> impl Iterator<Item = i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()))
}

/// Reaps the zombies among `children`, which hold no own child ([`own_children`], locked by the
/// caller while it found them): no one else waits for these.
fn reap_adopted(children: &[Child]) {
    use nix::sys::wait::{WaitPidFlag, waitpid};
    for c in children.iter().filter(|c| c.zombie) {
        let _reaped = waitpid(Pid::from_raw(c.pid), Some(WaitPidFlag::WNOHANG));
    }
}

/// A child process, as `/proc/<pid>/stat` shows it.
#[derive(Debug, Clone, Copy)]
struct Child {
    pid: i32,
    zombie: bool,
}

/// The children of `parent`, from every `/proc/*/stat` (a dead one not yet reaped is a zombie).
fn children_of(parent: i32) -> Vec<Child> {
    proc_pids()
        .filter_map(|pid| child_of(parent, pid))
        .collect()
}

/// The pids of this process's children from the `children` lists of its threads
/// (`/proc/self/task/*/children`): a file per thread instead of a `stat` per process on the
/// machine. `None` when the kernel has no such lists (then [`children_of`] scans).
pub(super) fn own_process_children() -> Option<BTreeSet<i32>> {
    let mut pids = BTreeSet::new();
    let mut listed = false;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        // A thread that ended meanwhile has no list: skip it.
        if let Some(children) = pid_list(&task.path().join("children")) {
            listed = true;
            pids.extend(children);
        }
    }
    listed.then_some(pids)
}

/// The pids a `/proc` list file (a thread's `children`) holds, read with one open and as few
/// reads as it takes (no `stat` for a size, which `/proc` does not know); `None` when it cannot
/// be read.
pub(super) fn pid_list(path: &Path) -> Option<Vec<i32>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).ok()?;
    let mut text = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => text.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(
        text.split(|b| b.is_ascii_whitespace())
            .filter_map(|p| std::str::from_utf8(p).ok()?.parse().ok())
            .collect(),
    )
}

/// Every descendant of this process, from the children lists of each one's threads; `None`
/// when the kernel has no such lists. A process whose parent dies during the walk is
/// re-parented to this one (a subreaper) after its list was read: the lists of this process
/// are read again at the end, until they hold no one new (at most [`MAX_PASSES`] times, as
/// other runs may keep starting commands meanwhile).
fn own_descendants() -> Option<Vec<i32>> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for _ in 0..MAX_PASSES {
        let mut queue: Vec<i32> = own_process_children()?
            .into_iter()
            .filter(|pid| !seen.contains(pid))
            .collect();
        if queue.is_empty() {
            break;
        }
        while let Some(pid) = queue.pop() {
            if !seen.insert(pid) {
                continue;
            }
            out.push(pid);
            let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
                continue;
            };
            for task in tasks.flatten() {
                if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
                    queue.extend(
                        text.split_whitespace()
                            .filter_map(|p| p.parse::<i32>().ok()),
                    );
                }
            }
        }
    }
    Some(out)
}

/// Process `pid`, when `/proc/<pid>/stat` shows it a child of `parent`.
fn child_of(parent: i32, pid: i32) -> Option<Child> {
    let fields = stat_fields(pid)?;
    let state = fields.first().map_or("", String::as_str);
    let ppid: i32 = fields.get(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    (ppid == parent && state != "X").then_some(Child {
        pid,
        zombie: state == "Z",
    })
}

/// The live processes (never this one) whose environment has `entry` (exactly, or as a prefix).
///
/// In a subreaper ([`become_subreaper`]) only its descendants are read: every process its
/// commands start stays one (an orphan is re-parented to it, not to init), so walking its tree
/// finds them all, at the cost of its own few processes rather than every process on the
/// machine, after every command. Elsewhere, or without the kernel's children lists, every
/// process is read.
pub(crate) fn tagged_pids(entry: &[u8], exact: bool) -> Vec<i32> {
    let me = std::process::id() as i32;
    let candidates: Vec<i32> = nix::sys::prctl::get_child_subreaper()
        .unwrap_or(false)
        .then(own_descendants)
        .flatten()
        .unwrap_or_else(|| proc_pids().collect());
    let mut out = Vec::new();
    for pid in candidates {
        if pid == me {
            continue;
        }
        // Zombies have an empty environ; unreadable processes are skipped.
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        let hit = environ.split(|b| *b == 0).any(|var| {
            if exact {
                var == entry
            } else {
                var.starts_with(entry)
            }
        });
        if hit {
            out.push(pid);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every process whose chain of parents leads to this one, from a scan of all of `/proc`.
    fn descendants_by_scan() -> BTreeSet<i32> {
        let parents: Vec<(i32, i32)> = proc_pids()
            .filter_map(|pid| {
                let ppid = stat_fields(pid)?.get(1)?.parse().ok()?;
                Some((pid, ppid))
            })
            .collect();
        let mut found = BTreeSet::from([std::process::id() as i32]);
        loop {
            let before = found.len();
            for (pid, ppid) in &parents {
                if found.contains(ppid) {
                    found.insert(*pid);
                }
            }
            if found.len() == before {
                found.remove(&(std::process::id() as i32));
                return found;
            }
        }
    }

    #[test]
    fn a_program_is_found_on_path_as_execvp_finds_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (a, b, cwd) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        for d in [&a, &b, &cwd] {
            std::fs::create_dir(d).unwrap();
        }
        let file = |p: &Path, mode: u32| {
            std::fs::write(p, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        // Not executable in `a` (execvp goes on), a folder of the name in `b` (so does it),
        // executable in `cwd` (an empty entry) and again in `b`'s sibling.
        file(&a.join("tool"), 0o644);
        std::fs::create_dir(b.join("tool")).unwrap();
        file(&cwd.join("tool"), 0o755);
        let env = |path: &str| vec![("PATH".to_owned(), path.to_owned())];
        let path = format!("{}:{}::/nowhere", a.display(), b.display());
        let found = resolve_program(Path::new("tool"), &env(&path), &cwd);
        assert_eq!(found, cwd.join("tool"));
        // The last PATH of the environment is the one the command gets.
        let mut twice = env("/nowhere");
        twice.extend(env(&format!("{}:{}", a.display(), cwd.display())));
        assert_eq!(
            resolve_program(Path::new("tool"), &twice, Path::new("/")),
            cwd.join("tool")
        );
        // Nowhere on PATH, or named by a path: as given.
        assert_eq!(
            resolve_program(Path::new("tool"), &env(&a.display().to_string()), &cwd),
            Path::new("tool")
        );
        assert_eq!(
            resolve_program(Path::new("./tool"), &env(&path), &cwd),
            Path::new("./tool")
        );
        // No PATH at all: glibc's default.
        let sh = resolve_program(Path::new("sh"), &[], &cwd);
        assert!(
            sh == Path::new("/bin/sh") || sh == Path::new("/usr/bin/sh"),
            "{sh:?}"
        );
    }

    #[test]
    fn the_walk_of_the_descendants_finds_what_a_scan_of_proc_finds() {
        // Children with children and grandchildren of their own, from two threads.
        let spawn = || {
            std::process::Command::new("sh")
                .args([
                    "-c",
                    "sleep 30 & (sleep 30 & sleep 30) & echo started; wait",
                ])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        };
        let mut children = vec![spawn()];
        children.push(std::thread::spawn(spawn).join().unwrap());
        for child in &mut children {
            let mut line = String::new();
            std::io::BufRead::read_line(
                &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
                &mut line,
            )
            .unwrap();
        }
        // Each `sh` has its `sleep` and its subshell, the subshell a `sleep` of its own (it
        // becomes the other one): 4 per child, once they are all there.
        let deadline = Instant::now() + Duration::from_secs(10);
        let walked = loop {
            let walked: BTreeSet<i32> = own_descendants()
                .expect("Linux lists each thread's children")
                .into_iter()
                .collect();
            if walked.len() >= 8 || Instant::now() > deadline {
                break walked;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let scanned = descendants_by_scan();
        // Other tests of this binary start and end children of their own meanwhile: one the
        // walk found may have ended before the scan. Every other one must be in the scan (ours
        // are all still running here).
        let unexplained: Vec<i32> = walked
            .difference(&scanned)
            .copied()
            .filter(|pid| Path::new(&format!("/proc/{pid}")).exists())
            .collect();
        for child in &mut children {
            let _ = killpg(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
            let _ = child.kill();
            let _ = child.wait();
        }
        assert!(walked.len() >= 8, "{walked:?}");
        assert!(
            unexplained.is_empty(),
            "{unexplained:?} walked, alive and not scanned: {walked:?} vs {scanned:?}"
        );
    }

    #[test]
    fn the_threads_lists_name_the_same_children_as_a_scan_of_proc() {
        // Children spawned from two threads: each thread's list holds its own.
        let spawn = || {
            std::process::Command::new("sleep")
                .arg("30")
                .spawn()
                .unwrap()
        };
        let mut children = vec![spawn(), spawn()];
        children.push(std::thread::spawn(spawn).join().unwrap());
        let mut zombie = std::process::Command::new("true").spawn().unwrap();
        // `true` has ended once its stat says so; it stays a zombie until waited for.
        let deadline = Instant::now() + Duration::from_secs(10);
        let me = std::process::id() as i32;
        let zombie_pid = zombie.id() as i32;
        while !child_of(me, zombie_pid).is_some_and(|c| c.zombie) {
            assert!(Instant::now() < deadline, "true never ended");
            std::thread::sleep(Duration::from_millis(5));
        }
        let pids = |list: Vec<Child>| -> BTreeSet<(i32, bool)> {
            list.into_iter().map(|c| (c.pid, c.zombie)).collect()
        };
        let listed = pids(
            own_process_children()
                .expect("Linux lists each thread's children")
                .into_iter()
                .filter_map(|pid| child_of(me, pid))
                .collect(),
        );
        let scanned = pids(children_of(me));
        for c in &children {
            assert!(listed.contains(&(c.id() as i32, false)), "{listed:?}");
        }
        assert!(listed.contains(&(zombie_pid, true)), "{listed:?}");
        // Other tests of this binary spawn children too: compare only the ones made here.
        let ours = |set: &BTreeSet<(i32, bool)>| -> BTreeSet<(i32, bool)> {
            set.iter()
                .copied()
                .filter(|(p, _)| *p == zombie_pid || children.iter().any(|c| c.id() as i32 == *p))
                .collect()
        };
        assert_eq!(ours(&listed), ours(&scanned));
        for mut c in children {
            let _ = c.kill();
            let _ = c.wait();
        }
        zombie.wait().unwrap();
    }
}
