//! The maker of the `isolated` tier's run sandboxes: the harness binary started once per
//! harness (`harness __sandbox-zygote`), small and single-threaded, which clones each run's
//! sandbox from itself into new namespaces (`sandbox_ns`, the one crate of unsafe code, in
//! `crates/sandbox-ns`) and lets the clone become the run's [`super::supervisor`]. No program is
//! started per run: bubblewrap and the supervisor's binary, started for every run, cost a third
//! of the harness's overhead on a run (`benches/README.md`, `sandbox_overhead`).
//!
//! The harness speaks to it over a Unix socket, one request at a time, in [`super::wire`]'s
//! frames: `make` (the run's mount plan, with the supervisor's end of the run's socket and the
//! write end of a pipe for the sandbox's stderr) is answered `made` (the pid of the sandbox's
//! first process and a pidfd of it, to wait for and kill it) or `failed`.
//!
//! It keeps the network namespaces of ended sandboxes for later ones (`sandbox_ns::Networks`):
//! at its start it moves into a user namespace of its own, which owns them, and it takes one
//! back when it reaps the sandbox that had it, if no socket is left in it.
//!
//! Lifetimes: it dies with the harness (a parent-death signal, and the end of its socket), and
//! each sandbox dies with it (the same signal: PID 1 gone, the kernel kills the rest of the
//! namespace). It reaps the sandboxes, so their CPU is its children's, and the harness reaps it
//! at [`shutdown`], so all of it is the harness's children's.
//!
//! Depends on the sandbox's wire, bwrap (the mount plan), supervisor and process modules.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use sandbox_ns::{Ids, Layout, Network, Networks};

use super::bwrap::Plan;
use super::process::own_children;
use super::wire::{self, Reply};

/// The argument that starts the binary as the sandbox maker.
pub const ARG: &str = "__sandbox-zygote";

/// How long a probe's sandbox may take to say it is ready.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// How many network namespaces the maker keeps idle for the next sandboxes (more than a harness
/// runs at once is rare; each holds a little kernel memory).
const KEEP_NETWORKS: usize = 64;

/// How long [`shutdown`] waits for the maker to end.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum Ask {
    /// Make a sandbox of `plan`; the frame carries the supervisor's socket and its stderr.
    Make { plan: Plan },
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum Answer {
    /// Made: its first process is `pid`; the frame carries a pidfd of it.
    Made {
        pid: i32,
    },
    Failed {
        message: String,
    },
}

/// A sandbox just made: its first process, and a pidfd to wait for it and kill it.
pub(crate) struct Made {
    pub(crate) pid: i32,
    pub(crate) pidfd: OwnedFd,
}

/// One sandbox maker process, and the harness's end of its socket.
struct Running {
    socket: OwnedFd,
    reader: wire::Reader,
    pid: i32,
    /// The thread that started it and waits for it.
    waiter: Option<std::thread::JoinHandle<()>>,
    /// Disconnected when that thread ends (it holds the only sender): the maker is reaped.
    ended: std::sync::mpsc::Receiver<()>,
}

/// The harness's end of its sandbox maker: the process running now, started again if it dies.
pub(crate) struct Zygote {
    binary: PathBuf,
    running: Mutex<Running>,
}

impl std::fmt::Debug for Zygote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Zygote")
            .field("binary", &self.binary)
            .finish_non_exhaustive()
    }
}

/// Why a request got no answer.
enum Unanswered {
    /// The maker is gone (it died, or its socket broke): start another.
    Gone(String),
    /// The maker answered that it could not.
    Refused(io::Error),
}

/// The maker of this process, started and probed on first use, or why it cannot be had.
static SHARED: OnceLock<Result<Arc<Zygote>, String>> = OnceLock::new();

/// The sandbox maker of this process (the harness binary at `binary`), started on first use and
/// proven by making one sandbox of `probe` whose supervisor says it is ready.
pub(crate) fn shared(binary: &Path, probe: &Plan) -> Result<Arc<Zygote>, String> {
    SHARED
        .get_or_init(|| {
            let zygote = Zygote::start(binary).map_err(|e| {
                format!(
                    "failed to start the sandbox maker ({}): {e}",
                    binary.display()
                )
            })?;
            zygote.probe(probe)?;
            Ok(Arc::new(zygote))
        })
        .clone()
}

/// Ends the sandbox maker, if one was started, and waits for it (its sandboxes end with it):
/// for the end of the harness.
pub fn shutdown() {
    if let Some(Ok(zygote)) = SHARED.get() {
        zygote.shut();
    }
}

impl Running {
    /// Starts `binary` as a sandbox maker, from a thread of its own that waits for it (the
    /// maker's parent-death signal follows that thread, which lives exactly as long).
    fn start(binary: &Path) -> io::Result<Running> {
        let (ours, theirs) = wire::socketpair()?;
        let (tx, rx) = std::sync::mpsc::channel();
        let (reaped, ended) = std::sync::mpsc::channel::<()>();
        let binary = binary.to_path_buf();
        let waiter = std::thread::Builder::new()
            .name("sandbox-maker".to_owned())
            .spawn(move || {
                let _reaped = reaped;
                let mut cmd = std::process::Command::new(&binary);
                cmd.arg(ARG)
                    .args(super::process::starting_open_files_arg())
                    .env_clear()
                    .stdin(Stdio::from(theirs))
                    .stdout(Stdio::null())
                    .stderr(Stdio::null());
                sandbox_ns::die_with_parent(&mut cmd);
                let spawned = {
                    // An own child for its whole life: no reaper of orphans may take it.
                    let mut own = own_children();
                    let spawned = cmd.spawn();
                    if let Ok(child) = &spawned {
                        own.insert(child.id() as i32);
                    }
                    spawned
                };
                drop(cmd);
                match spawned {
                    Ok(mut child) => {
                        let pid = child.id() as i32;
                        let _ = tx.send(Ok(pid));
                        let _ended = child.wait();
                        own_children().remove(&pid);
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                    }
                }
            })?;
        let pid = rx
            .recv()
            .map_err(|_| io::Error::other("the sandbox maker's thread ended"))??;
        Ok(Running {
            socket: ours,
            reader: wire::Reader::default(),
            pid,
            waiter: Some(waiter),
            ended,
        })
    }

    /// Asks this maker for a sandbox of `plan`.
    fn make(
        &mut self,
        plan: &Plan,
        supervisor: BorrowedFd<'_>,
        stderr: BorrowedFd<'_>,
    ) -> Result<Made, Unanswered> {
        let gone = |pid: i32, why: String| Unanswered::Gone(format!("(pid {pid}) {why}"));
        wire::send_all(
            self.socket.as_fd(),
            &wire::frame(&Ask::Make { plan: plan.clone() }),
            &[supervisor, stderr],
        )
        .map_err(|e| gone(self.pid, format!("could not be written to: {e}")))?;
        let answer = loop {
            match self.reader.next_frame::<Answer>() {
                Ok(Some(answer)) => break answer,
                Ok(None) => {}
                Err(e) => return Err(gone(self.pid, e.to_string())),
            }
            match self.reader.fill(self.socket.as_fd()) {
                Ok(0) => return Err(gone(self.pid, "ended".to_owned())),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(gone(self.pid, format!("could not be read from: {e}"))),
            }
        };
        match answer {
            Answer::Made { pid } => {
                let pidfd = self
                    .reader
                    .take_fd()
                    .ok_or_else(|| gone(self.pid, "sent no pidfd".to_owned()))?;
                Ok(Made { pid, pidfd })
            }
            Answer::Failed { message } => Err(Unanswered::Refused(io::Error::other(message))),
        }
    }

    /// Closes the socket (the maker kills its sandboxes, reaps them and exits) and waits for it
    /// to be reaped.
    fn shut(&mut self) {
        let _ = rustix::net::shutdown(&self.socket, rustix::net::Shutdown::Both);
        let Some(waiter) = self.waiter.take() else {
            return;
        };
        // Woken the moment the waiting thread ends, not at the next tick of a polling loop.
        let timed_out = matches!(
            self.ended.recv_timeout(SHUTDOWN_GRACE),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout)
        );
        if !timed_out {
            let _ = waiter.join();
        } else {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(self.pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

impl Zygote {
    fn start(binary: &Path) -> io::Result<Zygote> {
        Ok(Zygote {
            binary: binary.to_path_buf(),
            running: Mutex::new(Running::start(binary)?),
        })
    }

    /// Makes a sandbox of `plan` whose supervisor speaks on `supervisor` and writes its errors
    /// to `stderr`. Blocks for the clone (about a millisecond). A maker that is gone (killed,
    /// crashed) is started again once, so the rest of the suite goes on.
    pub(crate) fn make(
        &self,
        plan: &Plan,
        supervisor: OwnedFd,
        stderr: OwnedFd,
    ) -> io::Result<Made> {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        let first = match running.make(plan, supervisor.as_fd(), stderr.as_fd()) {
            Ok(made) => return Ok(made),
            Err(Unanswered::Refused(e)) => return Err(e),
            Err(Unanswered::Gone(why)) => why,
        };
        let mut again = Running::start(&self.binary).map_err(|e| {
            io::Error::other(format!(
                "the sandbox maker {first}, and starting another failed: {e}"
            ))
        })?;
        // The dead one's thread reaps it; nothing of it is left to shut.
        std::mem::swap(&mut *running, &mut again);
        match running.make(plan, supervisor.as_fd(), stderr.as_fd()) {
            Ok(made) => Ok(made),
            Err(Unanswered::Refused(e)) => Err(e),
            Err(Unanswered::Gone(why)) => Err(io::Error::other(format!(
                "the sandbox maker {first}, and the one started after it {why}"
            ))),
        }
    }

    /// Makes one sandbox of `plan` and waits for its supervisor's first word: whether the
    /// harness can make sandboxes here, and if not, the sandbox's own account of why.
    fn probe(&self, plan: &Plan) -> Result<(), String> {
        let why =
            |e: &dyn std::fmt::Display| format!("the harness cannot make a sandbox here: {e}");
        let (ours, theirs) = wire::socketpair().map_err(|e| why(&e))?;
        let (read, write) =
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(|e| why(&e))?;
        let made = self.make(plan, theirs, write).map_err(|e| why(&e))?;
        let deadline = Instant::now() + PROBE_TIMEOUT;
        let mut reader = wire::Reader::default();
        let said = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if !readable(ours.as_fd(), left) {
                let _ =
                    rustix::process::pidfd_send_signal(&made.pidfd, rustix::process::Signal::KILL);
                return Err(why(&format!(
                    "its sandbox was not ready within {PROBE_TIMEOUT:?}"
                )));
            }
            match reader.fill(ours.as_fd()) {
                Ok(0) | Err(_) => {
                    let mut text = Vec::new();
                    let _ = io::Read::read_to_end(&mut std::fs::File::from(read), &mut text);
                    let text = String::from_utf8_lossy(&text).trim().to_owned();
                    return Err(why(&if text.is_empty() {
                        "its sandbox ended before it was ready".to_owned()
                    } else {
                        text
                    }));
                }
                Ok(_) => {}
            }
            if let Ok(Some(reply)) = reader.next_frame::<Reply>() {
                break reply;
            }
        };
        match said {
            Reply::Ready { protocol } if protocol == wire::PROTOCOL => Ok(()),
            other => Err(why(&format!("its sandbox said {other:?} first"))),
        }
    }

    /// Ends the maker running now and waits for it.
    fn shut(&self) {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .shut();
    }
}

/// Whether `fd` becomes readable (or hung up) within `timeout`.
fn readable(fd: BorrowedFd<'_>, timeout: Duration) -> bool {
    let mut fds = [rustix::event::PollFd::new(
        &fd,
        rustix::event::PollFlags::IN,
    )];
    let timeout = rustix::event::Timespec::try_from(timeout).ok();
    loop {
        match rustix::event::poll(&mut fds, timeout.as_ref()) {
            Ok(n) => return n > 0,
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return false,
        }
    }
}

/// Whether this process was started as the sandbox maker (its first argument is [`ARG`]).
pub fn requested() -> bool {
    std::env::args_os().nth(1).is_some_and(|a| a == ARG)
}

/// The maker's whole life; the binary calls it (and nothing else) when [`requested`].
pub fn main() -> ExitCode {
    match serve() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("harness sandbox maker: {e}");
            ExitCode::FAILURE
        }
    }
}

fn serve() -> io::Result<()> {
    // Out of the harness's session (no terminal).
    let _ = rustix::process::setsid();
    let ids = Ids::current();
    // While it may still write its own id maps; without a user namespace of its own, each
    // sandbox makes its network namespace.
    let mut networks = Networks::start(ids, KEEP_NETWORKS).map_err(|e| {
        io::Error::other(format!(
            "failed to map its ids in its own user namespace: {e}"
        ))
    })?;
    // Unreadable by anything of the same user.
    let _ = nix::sys::prctl::set_dumpable(false);
    // The sandboxes' commands get the limit on open files the harness started with, not the
    // one it raised for itself.
    super::process::open_files_limit_from_args()?;
    // Once for every sandbox it makes (each reads it from its copy of this memory).
    super::supervisor::count_cores();
    let socket = io::stdin().as_fd().try_clone_to_owned()?;
    {
        let null = std::fs::File::open("/dev/null")?;
        nix::unistd::dup2(null.as_raw_fd(), 0)?;
    }
    let mut reader = wire::Reader::default();
    let mut sandboxes = Sandboxes::default();
    loop {
        if readable(socket.as_fd(), Duration::from_secs(1)) {
            match reader.fill(socket.as_fd()) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
            while let Some(Ask::Make { plan }) = reader.next_frame::<Ask>()? {
                // The sandboxes that ended give their network namespaces back first.
                sandboxes.reap(networks.as_mut(), false);
                let answer = match (reader.take_fd(), reader.take_fd()) {
                    (Some(supervisor), Some(stderr)) => {
                        clone_sandbox(&plan, ids, networks.as_mut(), supervisor, stderr)
                    }
                    _ => Err("the sandbox's descriptors did not arrive".to_owned()),
                };
                let (answer, fds) = match answer {
                    Ok((pid, pidfd, network)) => {
                        sandboxes.running.push((pid, network));
                        (Answer::Made { pid }, vec![pidfd])
                    }
                    Err(message) => (Answer::Failed { message }, Vec::new()),
                };
                let fds: Vec<_> = fds.iter().map(AsFd::as_fd).collect();
                wire::send_all(socket.as_fd(), &wire::frame(&answer), &fds)?;
            }
        }
        sandboxes.reap(networks.as_mut(), false);
    }
    // The harness is gone or done: no sandbox outlives it.
    for (pid, _) in &sandboxes.running {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(*pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    sandboxes.reap(None, true);
    Ok(())
}

/// The sandboxes made and not yet reaped: each one's first process, and the network namespace
/// it was cloned into when it was a kept one.
#[derive(Default)]
struct Sandboxes {
    running: Vec<(i32, Option<Network>)>,
}

impl Sandboxes {
    /// Reaps the sandboxes that ended (`all`: waits for every one), and gives their network
    /// namespaces back to `networks`: every process of a sandbox has ended once its first has
    /// been reaped (the kernel ends a PID namespace's first process last).
    fn reap(&mut self, mut networks: Option<&mut Networks>, all: bool) {
        use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
        let flags = (!all).then_some(WaitPidFlag::WNOHANG);
        let mut i = 0;
        while i < self.running.len() {
            let reaped = match waitpid(nix::unistd::Pid::from_raw(self.running[i].0), flags) {
                Ok(WaitStatus::Exited(..) | WaitStatus::Signaled(..)) => true,
                // Not this maker's to wait for any more: forgotten, its namespace not kept.
                Err(_) => false,
                Ok(_) => {
                    i += 1;
                    continue;
                }
            };
            let (_, network) = self.running.swap_remove(i);
            if let (true, Some(networks), Some(network)) =
                (reaped, networks.as_deref_mut(), network)
            {
                networks.give_back(network);
            }
        }
    }
}

/// Clones a sandbox of `plan`, into a network namespace taken from `networks` when the maker
/// keeps them: the pid of its first process, a pidfd of it, and that network namespace.
fn clone_sandbox(
    plan: &Plan,
    ids: Ids,
    networks: Option<&mut Networks>,
    supervisor: OwnedFd,
    stderr: OwnedFd,
) -> Result<(i32, OwnedFd, Option<Network>), String> {
    let null = std::fs::File::options()
        .read(true)
        .write(true)
        .open("/dev/null")
        .map_err(|e| format!("failed to open /dev/null: {e}"))?;
    let network = networks
        .map(Networks::take)
        .transpose()
        .map_err(|e| format!("failed to create a network namespace for the run: {e}"))?;
    let mut layout = layout(plan);
    layout.own_network = network.is_none();
    let pid =
        sandbox_ns::clone_sandbox([supervisor, null.into(), stderr], network.as_ref(), || {
            if let Err(message) = sandbox_ns::enter(&layout, ids) {
                // Read by the harness, which says whose message it is.
                eprintln!("{message}");
                return 1;
            }
            super::supervisor::serve_here()
        })
        .map_err(|e| format!("failed to create the run's namespaces: {e}"))?;
    let pidfd = rustix::process::pidfd_open(
        rustix::process::Pid::from_raw(pid).expect("a child's pid is positive"),
        rustix::process::PidfdFlags::empty(),
    )
    .map_err(|e| {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
        format!("failed to open a pidfd of the run's sandbox: {e}")
    })?;
    Ok((pid, pidfd, network))
}

/// The mounts of `plan` as the sandbox builder takes them (bubblewrap's order).
fn layout(plan: &Plan) -> Layout {
    let m = &plan.mounts;
    Layout {
        hide: plan.hide.clone(),
        keep: plan.keep.clone(),
        tmp: m.tmp.clone(),
        skeletons: m.skeletons(plan.hide.as_deref()),
        writable: [&m.root, &m.home].into_iter().flatten().cloned().collect(),
        readable: m.logs.iter().cloned().collect(),
        readable_if_there: m.reads.clone(),
        cwd: plan.cwd.clone(),
        own_network: true,
    }
}
