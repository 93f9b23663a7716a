//! The supervisor of a run's sandbox: the first process (PID 1) of the run's sandbox, speaking
//! [`super::wire`] on its standard input, a Unix socket to the harness. It is the harness's
//! sandbox maker's clone ([`super::zygote`], [`serve_here`]), or, where the harness cannot make
//! namespaces itself, the harness binary started by bubblewrap (`harness
//! __sandbox-supervisor`).
//!
//! It spawns each command the harness asks for (`shell -c script`, its own process group, the
//! two output descriptors the harness sent as its stdout and stderr, `/dev/null` as stdin, the
//! given environment plus the command's tag), reports its pid and, when its shell ends, its wait
//! status; kills its group on request (a timeout, an abort); and on `clean` kills everything the
//! command started: the group, every process of the sandbox carrying the command's tag, and every
//! orphan (re-parented to it, as PID 1) that dropped its tag. It reaps every process that ends.
//! When the harness goes away (the socket closes) it kills everything and exits, and the kernel
//! takes the PID namespace with it.
//!
//! A command cannot touch it: PID 1 of a namespace gets no signal from inside it that it has no
//! handler for (`kill -9 1` does nothing), and it makes itself non-dumpable, so a process of the
//! same user inside cannot ptrace it or read its memory or descriptors. It refuses to run as
//! anything but PID 1: only there is "every process it can see" the run's.
//!
//! Depends on [`super::wire`] and the tag variable of [`super::process`] only; nothing here runs
//! in the harness.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

use super::process::{TAG_VAR, resolve_program};
use super::wire::{self, Reply, Request};

/// The argument that starts the binary as a supervisor.
pub const ARG: &str = "__sandbox-supervisor";

/// Kill passes at most for one `clean`.
const MAX_PASSES: usize = 50;

/// One command the harness asked for.
struct Started {
    pid: i32,
    tag: String,
    running: bool,
    cleaned: bool,
}

#[derive(Default)]
struct State {
    commands: HashMap<u64, Started>,
    /// Commands spawned so far: the reaper, finding no child, waits for this to change.
    spawned: u64,
}

/// Everything the threads share.
struct Shared {
    state: Mutex<State>,
    started: Condvar,
    out: Mutex<OwnedFd>,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends a reply; a harness that went away is noticed by the reading side.
    fn reply(&self, reply: &Reply) {
        self.reply_with(reply, &[]);
    }

    /// Sends a reply with `fds` alongside.
    fn reply_with(&self, reply: &Reply, fds: &[BorrowedFd<'_>]) {
        let out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let _gone = wire::send_all(out.as_fd(), &wire::frame(reply), fds);
    }
}

/// Whether this process was started as a supervisor (its first argument is [`ARG`]).
pub fn requested() -> bool {
    std::env::args_os().nth(1).is_some_and(|a| a == ARG)
}

/// The supervisor's whole life; the binary calls it (and nothing else) when [`requested`].
pub fn main() -> ExitCode {
    match serve() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("harness sandbox supervisor: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The supervisor's life in a sandbox the harness made itself ([`super::zygote`], a clone of
/// the sandbox maker): the exit code.
pub(crate) fn serve_here() -> i32 {
    match serve() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("harness sandbox supervisor: {e}");
            1
        }
    }
}

fn serve() -> io::Result<()> {
    // Everything it may kill is in its own PID namespace only because it is that namespace's
    // PID 1: started any other way (by hand, on the host), it must do nothing at all.
    if std::process::id() != 1 {
        return Err(io::Error::other(
            "refusing to run: the supervisor only runs as PID 1 of a run's sandbox, started by \
             the harness",
        ));
    }
    let _ = nix::sys::prctl::set_dumpable(false);
    // Started by bubblewrap (not cloned from the sandbox maker, which set it already): the
    // limit on open files the harness started with, for the commands.
    if requested() {
        super::process::open_files_limit_from_args()?;
    }
    // The socket is standard input; keep a private copy and put /dev/null in its place, so that
    // nothing started here could ever inherit it.
    let socket = io::stdin().as_fd().try_clone_to_owned()?;
    let null = std::fs::File::open("/dev/null")?;
    {
        use std::os::fd::AsRawFd;
        nix::unistd::dup2(null.as_raw_fd(), 0)?;
    }
    let out = socket.try_clone()?;
    let shared = Arc::new(Shared {
        state: Mutex::new(State::default()),
        started: Condvar::new(),
        out: Mutex::new(out),
    });
    // With a descriptor of this sandbox's network namespace: the kernel tears a namespace down
    // in a worker, and one batch of them costs little more than one (`release_network_namespace`).
    let net = std::fs::File::open("/proc/self/ns/net").ok();
    let fds: Vec<_> = net.iter().map(AsFd::as_fd).collect();
    shared.reply_with(
        &Reply::Ready {
            protocol: wire::PROTOCOL.to_owned(),
        },
        &fds,
    );
    drop(fds);
    drop(net);
    {
        let shared = shared.clone();
        std::thread::spawn(move || reap(&shared));
    }
    let mut reader = wire::Reader::default();
    loop {
        let got = match reader.fill(socket.as_fd()) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => 0,
        };
        if got == 0 {
            break;
        }
        loop {
            match reader.next_frame::<Request>() {
                Ok(Some(request)) => handle(&shared, &mut reader, request),
                Ok(None) => break,
                Err(_) => {
                    kill_everything();
                    return Ok(());
                }
            }
        }
    }
    // The harness is gone: nothing of this run may outlive it.
    kill_everything();
    Ok(())
}

fn handle(shared: &Shared, reader: &mut wire::Reader, request: Request) {
    match request {
        Request::Spawn {
            id,
            shell,
            script,
            cwd,
            env,
            tag,
        } => {
            let (Some(stdout), Some(stderr)) = (reader.take_fd(), reader.take_fd()) else {
                shared.reply(&Reply::SpawnFailed {
                    id,
                    errno: None,
                    message: "the command's output descriptors did not arrive".to_owned(),
                });
                return;
            };
            // Found here, inside the sandbox: the spawn then shares the supervisor's memory
            // instead of copying it (`resolve_program`).
            let mut cmd = Command::new(resolve_program(&shell, &env, &cwd));
            // `$0` stays the name as given.
            std::os::unix::process::CommandExt::arg0(&mut cmd, &shell)
                .arg("-c")
                .arg(&script)
                .current_dir(&cwd)
                .env_clear()
                .envs(env.iter().map(|(k, v)| (k, v)))
                .env(TAG_VAR, &tag)
                .stdin(Stdio::null())
                .stdout(Stdio::from(stdout))
                .stderr(Stdio::from(stderr));
            std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
            // Held from before the fork until the pid is known: the reaper cannot take the
            // command's status before it is known as the command.
            let mut state = shared.lock();
            match cmd.spawn() {
                Ok(child) => {
                    let pid = child.id() as i32;
                    state.commands.insert(
                        id,
                        Started {
                            pid,
                            tag,
                            running: true,
                            cleaned: false,
                        },
                    );
                    state.spawned += 1;
                    drop(state);
                    shared.started.notify_one();
                    shared.reply(&Reply::Spawned { id, pid });
                }
                Err(e) => {
                    drop(state);
                    shared.reply(&Reply::SpawnFailed {
                        id,
                        errno: e.raw_os_error(),
                        message: e.to_string(),
                    });
                }
            }
        }
        Request::KillGroup { id } => {
            let pid = shared.lock().commands.get(&id).map(|c| c.pid);
            if let Some(pid) = pid {
                let _gone = killpg(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
        Request::Clean { id } => {
            let command = shared
                .lock()
                .commands
                .get(&id)
                .map(|c| (c.pid, c.tag.clone()));
            if let Some((pid, tag)) = command {
                clean(shared, pid, &tag);
            }
            let mut state = shared.lock();
            match state.commands.get_mut(&id) {
                Some(c) if !c.running => {
                    state.commands.remove(&id);
                }
                Some(c) => c.cleaned = true,
                None => {}
            }
            drop(state);
            shared.reply(&Reply::Cleaned { id });
        }
    }
}

/// Kills the group of the command whose shell is `pid`, every process carrying `tag`, and every
/// orphan that carries no tag, pass after pass until none is left.
fn clean(shared: &Shared, pid: i32, tag: &str) {
    let _gone = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    let me = std::process::id() as i32;
    if me != 1 {
        return;
    }
    for _ in 0..MAX_PASSES {
        let found = left_over(shared, tag, me);
        if found.is_empty() {
            break;
        }
        for other in found {
            let _gone = kill(Pid::from_raw(other), Signal::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The processes the command tagged `tag` left: those carrying its tag, and every orphan that
/// carries no tag (re-parented to `me`, PID 1, and not one of the commands).
fn left_over(shared: &Shared, tag: &str, me: i32) -> Vec<i32> {
    let entry = format!("{TAG_VAR}={tag}");
    let roots: Vec<i32> = shared
        .lock()
        .commands
        .values()
        .filter(|c| c.running)
        .map(|c| c.pid)
        .collect();
    let mut found = Vec::new();
    for other in processes() {
        // Zombies are dead already (the reaper takes them); their environ reads empty.
        if other == me || is_zombie(other) {
            continue;
        }
        let environ = std::fs::read(format!("/proc/{other}/environ")).unwrap_or_default();
        let mut vars = environ.split(|b| *b == 0);
        let tagged_here = vars.clone().any(|v| v == entry.as_bytes());
        let untagged = !vars.any(|v| v.starts_with(TAG_VAR.as_bytes()));
        // An orphan that dropped its tag: re-parented here, not one of the commands.
        let orphan = untagged && parent_of(other) == Some(me) && !roots.contains(&other);
        if tagged_here || orphan {
            found.push(other);
        }
    }
    found
}

/// Every process of the sandbox but this one, killed (the harness is gone).
fn kill_everything() {
    let me = std::process::id() as i32;
    if me != 1 {
        return;
    }
    for _ in 0..MAX_PASSES {
        let others: Vec<i32> = processes().filter(|p| *p != me && !is_zombie(*p)).collect();
        if others.is_empty() {
            return;
        }
        for pid in others {
            let _gone = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// The pids in the sandbox's `/proc` (its own PID namespace: only the run's processes).
fn processes() -> impl Iterator<Item = i32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|s| s.parse().ok()))
}

/// Whether `pid` has ended and waits to be reaped (or is gone).
fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat
                .rsplit_once(')')?
                .1
                .split_whitespace()
                .next()?
                .to_owned();
            Some(state == "Z" || state == "X")
        })
        .unwrap_or(true)
}

/// The parent of `pid`, from its `stat`.
fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Reaps every process that ends: a command's shell is reported, anything else (orphans,
/// processes killed by `clean`) only reaped. It learns of an ended child without reaping it
/// (`waitid` with `WNOWAIT`), then reaps it holding the state's lock, which a spawn holds from
/// before its fork until its pid is known: a child whose exec failed is then std's to reap, and
/// a command's status is never taken before the command is known.
fn reap(shared: &Shared) {
    use nix::sys::wait::{Id, waitid};
    loop {
        let generation = shared.lock().spawned;
        let pid = match waitid(Id::All, WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT) {
            Ok(status) => match status.pid() {
                Some(pid) => pid,
                None => continue,
            },
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => {
                // No child at all (`ECHILD`): wait for the next spawn.
                let mut state = shared.lock();
                while state.spawned == generation {
                    state = shared
                        .started
                        .wait(state)
                        .unwrap_or_else(|e| e.into_inner());
                }
                continue;
            }
        };
        let mut state = shared.lock();
        let raw = match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::Exited(_, code)) => (code & 0xff) << 8,
            Ok(WaitStatus::Signaled(_, signal, core)) => {
                signal as i32 | if core { 0x80 } else { 0 }
            }
            // Reaped meanwhile by a failed spawn, or not ended after all.
            _ => continue,
        };
        let done = state
            .commands
            .iter_mut()
            .find(|(_, c)| c.pid == pid.as_raw() && c.running)
            .map(|(id, c)| {
                c.running = false;
                (*id, c.cleaned, c.tag.clone())
            });
        if let Some((id, true, _)) = done {
            state.commands.remove(&id);
        }
        drop(state);
        if let Some((id, cleaned, tag)) = done {
            // Nothing the command started is left (the common case): what a `clean` would find
            // now, so the harness need not ask for one. Whatever the command started exists by
            // now, since only its own processes could start more. A command already cleaned
            // (a timeout, an abort) is not looked at again: its `cleaned` reply answers.
            let me = std::process::id() as i32;
            let clean = !cleaned && me == 1 && left_over(shared, &tag, me).is_empty();
            if clean {
                shared.lock().commands.remove(&id);
            }
            shared.reply(&Reply::Exited {
                id,
                status: raw,
                clean,
            });
        }
    }
}
