//! The supervisor of a run's sandbox: the first process (PID 1) of the run's sandbox, speaking
//! [`super::wire`] on its standard input, a Unix socket to the harness. It is the harness's
//! sandbox maker's clone ([`super::zygote`], [`serve_here`]), or, where the harness cannot make
//! namespaces itself, the harness binary started by bubblewrap (`harness
//! __sandbox-supervisor`).
//!
//! It spawns each command the harness asks for (`shell -c script`, its own process group, the
//! two output descriptors the harness sent as its stdout and stderr, `/dev/null` as stdin, the
//! given environment plus the command's tag), reports its wait status when its shell ends (or at
//! once that it could not start it); kills its group on request (a timeout, an abort); and on
//! `clean` kills everything the command started: the group, every process of the sandbox
//! carrying the command's tag, and every orphan (re-parented to it, as PID 1) that dropped its
//! tag. It reaps every process that ends.
//! When the harness goes away (the socket closes) it kills everything and exits, and the kernel
//! takes the PID namespace with it.
//!
//! A command cannot touch it: PID 1 of a namespace gets no signal from inside it that it has no
//! handler for (`kill -9 1` does nothing), and it makes itself non-dumpable, so a process of the
//! same user inside cannot ptrace it or read its memory or descriptors. It refuses to run as
//! anything but PID 1: only there is "every process it can see" the run's.
//!
//! Depends on [`super::wire`] and, of [`super::process`], the tag variable, the program lookup
//! and the reading of a `/proc` list of pids only; nothing here runs in the harness.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use nix::sys::signal::{SigSet, Signal, kill, killpg};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;
use rustix::event::{PollFd, PollFlags, poll};

use super::process::{TAG_VAR, pid_list, resolve_program};
use super::wire::{self, Reply, Request};

/// The argument that starts the binary as a supervisor.
pub const ARG: &str = "__sandbox-supervisor";

/// The sandbox's `oom_score_adj`: the most, so that the kernel's OOM killer takes the run's
/// processes before any other.
pub const OOM_SCORE_ADJ: &str = "1000";

/// The most processes and threads the sandbox's commands may have at once, at least: a fork bomb
/// stops there instead of filling the machine's process table. Machines with many cores get
/// more ([`TASKS_PER_CORE`]): a check's build or test run starts about a thread per core in each
/// of about a process per core.
pub const MIN_TASKS: u64 = 4096;

/// The tasks allowed per core, past [`MIN_TASKS`].
pub const TASKS_PER_CORE: u64 = 256;

/// Caps the tasks of this sandbox (`RLIMIT_NPROC`, which the commands inherit and cannot raise)
/// at [`MIN_TASKS`], or [`TASKS_PER_CORE`] per core, or the limit it had if lower. The kernel
/// counts them per user namespace (Linux 5.14 on), so only the sandbox's own count, from zero;
/// it exempts root's user in any namespace, so a root harness's sandboxes stay uncapped.
fn cap_tasks() {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let cores = count_cores();
    let cap = MIN_TASKS.max(TASKS_PER_CORE * cores);
    let limit = getrlimit(Resource::Nproc);
    let capped = |v: Option<u64>| Some(v.map_or(cap, |v| v.min(cap)));
    let _ = setrlimit(
        Resource::Nproc,
        Rlimit {
            current: capped(limit.current),
            maximum: capped(limit.maximum),
        },
    );
}

/// The cores this process may use, counted once: the sandbox maker counts them before it makes
/// any sandbox, and each supervisor it clones has the count (reading the cgroup's quota files
/// anew cost every sandbox a dozen system calls).
pub(crate) fn count_cores() -> u64 {
    static CORES: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u64))
}

/// Kill passes at most for one `clean`.
const MAX_PASSES: usize = 50;

/// One command the harness asked for.
struct Started {
    pid: i32,
    tag: String,
    running: bool,
    cleaned: bool,
}

/// The supervisor's state. It is one thread: a request and an ended child are taken in turn
/// from one `poll`, so a spawn has its pid recorded before its end can be seen, and no lock,
/// thread or wake-up between threads is paid per command.
struct Supervisor {
    commands: HashMap<u64, Started>,
    out: OwnedFd,
}

impl Supervisor {
    /// Sends a reply; a harness that went away is noticed by the reading side.
    fn reply(&self, reply: &Reply) {
        self.reply_with(reply, &[]);
    }

    /// Sends a reply with `fds` alongside.
    fn reply_with(&self, reply: &Reply, fds: &[BorrowedFd<'_>]) {
        let _gone = wire::send_all(self.out.as_fd(), &wire::frame(reply), fds);
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
    // First to go when the machine runs out of memory, with every command (they inherit it): a
    // command that takes all memory ends its own run, not the harness with the suite, nor
    // another program of the user's. Raising it needs no privilege.
    let _ = std::fs::write("/proc/self/oom_score_adj", OOM_SCORE_ADJ);
    cap_tasks();
    // Started by bubblewrap (not cloned from the sandbox maker, which set it already): the
    // limit on open files the harness started with, for the commands.
    if requested() {
        super::process::open_files_limit_from_args()?;
    }
    // An ended child (a command's shell, an orphan re-parented here) is read from a descriptor
    // beside the socket. The commands start with no signal blocked (std's spawn clears the
    // mask), so blocking it here changes nothing for them.
    let mut chld = SigSet::empty();
    chld.add(Signal::SIGCHLD);
    chld.thread_block()?;
    let ended = SignalFd::with_flags(&chld, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)?;
    // The socket is standard input; keep a private copy and put /dev/null in its place, so that
    // nothing started here could ever inherit it.
    let socket = io::stdin().as_fd().try_clone_to_owned()?;
    let null = std::fs::File::open("/dev/null")?;
    {
        use std::os::fd::AsRawFd;
        nix::unistd::dup2(null.as_raw_fd(), 0)?;
    }
    let mut supervisor = Supervisor {
        commands: HashMap::new(),
        out: socket.try_clone()?,
    };
    // With a descriptor of this sandbox's network namespace: the kernel tears a namespace down
    // in a worker, and one batch of them costs little more than one (`release_network_namespace`).
    let net = std::fs::File::open("/proc/self/ns/net").ok();
    let fds: Vec<_> = net.iter().map(AsFd::as_fd).collect();
    supervisor.reply_with(
        &Reply::Ready {
            protocol: wire::PROTOCOL.to_owned(),
        },
        &fds,
    );
    drop(fds);
    drop(net);
    let mut reader = wire::Reader::default();
    loop {
        let mut ready = [
            PollFd::new(&socket, PollFlags::IN),
            PollFd::new(&ended, PollFlags::IN),
        ];
        match poll(&mut ready, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
        let (requests, children) = (
            !ready[0].revents().is_empty(),
            !ready[1].revents().is_empty(),
        );
        if children {
            // One read per pending signal; ends of many children may come as one.
            while let Ok(Some(_)) = ended.read_signal() {}
            supervisor.reap();
        }
        if !requests {
            continue;
        }
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
                Ok(Some(request)) => supervisor.handle(&mut reader, request),
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

impl Supervisor {
    fn handle(&mut self, reader: &mut wire::Reader, request: Request) {
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
                    self.reply(&Reply::SpawnFailed {
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
                    // This process's standard input is /dev/null (see `serve`): no open per spawn.
                    .stdin(Stdio::inherit())
                    .stdout(Stdio::from(stdout))
                    .stderr(Stdio::from(stderr));
                std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
                // A child whose exec failed is reaped by the spawn itself; one that started is
                // known as the command before its end is read (the same thread reads both).
                match cmd.spawn() {
                    Ok(child) => {
                        let pid = child.id() as i32;
                        self.commands.insert(
                            id,
                            Started {
                                pid,
                                tag,
                                running: true,
                                cleaned: false,
                            },
                        );
                    }
                    Err(e) => {
                        self.reply(&Reply::SpawnFailed {
                            id,
                            errno: e.raw_os_error(),
                            message: e.to_string(),
                        });
                    }
                }
            }
            Request::KillGroup { id } => {
                if let Some(c) = self.commands.get(&id) {
                    let _gone = killpg(Pid::from_raw(c.pid), Signal::SIGKILL);
                }
            }
            Request::Clean { id } => {
                if let Some(c) = self.commands.get(&id) {
                    let (pid, tag) = (c.pid, c.tag.clone());
                    self.clean(pid, &tag);
                }
                match self.commands.get_mut(&id) {
                    Some(c) if !c.running => {
                        self.commands.remove(&id);
                    }
                    Some(c) => c.cleaned = true,
                    None => {}
                }
                self.reply(&Reply::Cleaned { id });
            }
        }
    }

    /// Kills the group of the command whose shell is `pid`, every process carrying `tag`, and
    /// every orphan that carries no tag, pass after pass until none is left, reaping what dies
    /// as it goes; a zombie is not counted as left.
    ///
    /// When no other command of the run is running, every process of the sandbox but this one
    /// is the command's (what earlier commands left was cleaned as they ended), so all of them
    /// are killed at once (`kill(-1)`, which the kernel does while no process can fork) without
    /// reading any: a fork bomb, tens of thousands of processes forking as fast as they die,
    /// outran a scan that reads each process's environment, and held its call for good.
    fn clean(&mut self, pid: i32, tag: &str) {
        let _gone = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        let me = std::process::id() as i32;
        if me != 1 {
            return;
        }
        let alone = !self
            .commands
            .values()
            .any(|c| c.running && c.pid != pid && c.tag != tag);
        for _ in 0..MAX_PASSES {
            if alone {
                // kill(2) with -1 from PID 1 of a namespace signals every other process of it.
                let _gone = kill(Pid::from_raw(-1), Signal::SIGKILL);
            }
            // Their pids free again, and fewer entries to look at.
            self.reap();
            let found: Vec<i32> = if alone {
                living_others(me).collect()
            } else {
                self.left_over(tag, me)
            };
            if found.is_empty() {
                break;
            }
            for other in found {
                let _gone = kill(Pid::from_raw(other), Signal::SIGKILL);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// The processes the command tagged `tag` left: those carrying its tag, and every orphan
    /// that carries no tag (re-parented to `me`, PID 1, and not one of the commands).
    fn left_over(&self, tag: &str, me: i32) -> Vec<i32> {
        let entry = format!("{TAG_VAR}={tag}");
        let roots: Vec<i32> = self
            .commands
            .values()
            .filter(|c| c.running)
            .map(|c| c.pid)
            .collect();
        let mut found = Vec::new();
        for other in processes() {
            // Zombies are dead already (the loop reaps them); their environ reads empty.
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

    /// Whether the command tagged `tag` left nothing running. At once, without looking at every
    /// process, when this supervisor's (PID 1's) children are only the shells of commands still
    /// running: every process of the sandbox descends from PID 1, and one the command left is
    /// either re-parented here or below such a process of its own (a subreaper it made), never
    /// below another command's shell. Else, or without `/proc/thread-self/children`, by
    /// [`Supervisor::left_over`].
    fn nothing_left(&self, tag: &str, me: i32) -> bool {
        // Its thread's list is all of them: it has one thread.
        let children = pid_list(std::path::Path::new("/proc/thread-self/children"));
        let only_commands = children.is_some_and(|children| {
            children
                .iter()
                .all(|child| self.commands.values().any(|c| c.running && c.pid == *child))
        });
        if only_commands {
            return true;
        }
        // No other command running: anything in the sandbox is this one's, found without
        // reading a process's environment (see `clean`).
        if !self.commands.values().any(|c| c.running && c.tag != tag) {
            return living_others(me).next().is_none();
        }
        self.left_over(tag, me).is_empty()
    }

    /// Reaps every child that has ended: a command's shell is reported, anything else (orphans,
    /// processes killed by `clean`) only reaped.
    fn reap(&mut self) {
        loop {
            let (pid, raw) = match waitpid(None, Some(WaitPidFlag::WNOHANG)) {
                Ok(WaitStatus::Exited(pid, code)) => (pid.as_raw(), (code & 0xff) << 8),
                Ok(WaitStatus::Signaled(pid, signal, core)) => {
                    (pid.as_raw(), signal as i32 | if core { 0x80 } else { 0 })
                }
                // Nothing more has ended (or there is no child at all).
                Ok(WaitStatus::StillAlive) | Err(_) => return,
                Ok(_) => continue,
            };
            self.ended(pid, raw);
        }
    }

    /// The shell of a command ended with wait status `raw`: its `exited` reply.
    fn ended(&mut self, pid: i32, raw: i32) {
        let Some((&id, command)) = self
            .commands
            .iter_mut()
            .find(|(_, c)| c.pid == pid && c.running)
        else {
            return;
        };
        command.running = false;
        let command = &self.commands[&id];
        // Nothing the command started is left (the common case): what a `clean` would find now,
        // so the harness need not ask for one. Whatever the command started exists by now,
        // since only its own processes could start more. A command already cleaned (a timeout,
        // an abort) is not looked at again: its `cleaned` reply answers.
        let me = std::process::id() as i32;
        let clean = !command.cleaned && me == 1 && self.nothing_left(&command.tag, me);
        if command.cleaned || clean {
            self.commands.remove(&id);
        }
        self.reply(&Reply::Exited {
            id,
            status: raw,
            clean,
        });
    }
}

/// Every process of the sandbox but this one, killed (the harness is gone).
fn kill_everything() {
    let me = std::process::id() as i32;
    if me != 1 {
        return;
    }
    for _ in 0..MAX_PASSES {
        // Every other process of the namespace at once, while none can fork (see `clean`).
        let _gone = kill(Pid::from_raw(-1), Signal::SIGKILL);
        let others: Vec<i32> = living_others(me).collect();
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

/// Every process of the sandbox but `me` that has not ended.
fn living_others(me: i32) -> impl Iterator<Item = i32> {
    processes().filter(move |p| *p != me && !is_zombie(*p))
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
