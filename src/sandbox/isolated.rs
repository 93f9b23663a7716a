//! The `isolated` tier's sandbox of one run (no network, its own PID, mount, IPC, UTS, cgroup
//! and user namespaces, no capabilities, the file system read-only but for the workspace, the
//! run's `HOME` and its private `/tmp`), made when the run starts ([`super::Jail::prepare`]) or
//! at its first command, torn down when the run ends. Its maker ([`Maker`]) is the harness's
//! own sandbox maker ([`super::zygote`]), which clones the sandbox's first process into new
//! namespaces, or, where the harness cannot make namespaces itself, bubblewrap started with the
//! harness binary. Either way that first process is the run's supervisor
//! ([`super::supervisor`], PID 1), which spawns each of the run's commands (the agent's bash calls
//! and the checks), reports how they end, and kills what they leave.
//!
//! A command's output never passes through the supervisor: the harness makes the pipes and
//! sends their write ends along with the request ([`super::wire`]), and reads them itself, so
//! bash's output cap and full-output file work as they do outside the sandbox.
//!
//! Ending the run drops its [`RunSandbox`]: the socket is shut (the supervisor kills everything
//! and exits, and the kernel empties the PID namespace); what has not ended within
//! [`END_GRACE`] is killed (the clone through its pidfd, bubblewrap's whole process group). If
//! the harness itself dies, the same happens through parent-death signals (the maker's and each
//! clone's, or bubblewrap's `--die-with-parent`).
//!
//! Depends on the sandbox's process, wire, bwrap (the mount plan), zygote and supervisor modules;
//! nothing else in the crate.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, Interest};
use tokio::sync::{mpsc, oneshot};

use super::bwrap::{Bwrap, CommandSpec, Mounts, Plan};
use super::process::{own_children, spawn_own};
use super::supervisor;
use super::wire::{self, Reply, Request};
use super::zygote::Zygote;

/// How long a sandbox may take to start (bubblewrap and the supervisor's first word).
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a sandbox whose run ended may take to end by itself before it is killed.
const END_GRACE: Duration = Duration::from_secs(2);

/// How long the supervisor may take to kill what a command left (a timed-out or aborted call)
/// before the whole sandbox is killed from outside instead: a fork bomb of tens of thousands of
/// processes leaves the supervisor, in the same sandbox, too little of the CPU to answer.
const CLEAN_GRACE: Duration = Duration::from_secs(3);

/// The most of bubblewrap's stderr kept to explain a failed start.
const STDERR_KEPT: usize = 4096;

/// What makes the `isolated` tier's run sandboxes.
#[derive(Debug)]
pub(crate) enum Maker {
    /// The harness itself ([`super::zygote`]): no program started per run.
    Harness {
        zygote: Arc<Zygote>,
        hide: Option<PathBuf>,
        keep: Vec<PathBuf>,
    },
    /// bubblewrap, one per run, where the harness cannot make namespaces itself (or
    /// `HARNESS_SANDBOX_MAKER=bwrap` asks for it).
    Bwrap(Bwrap),
}

/// A frame to send, with the descriptors that go along.
struct Outgoing {
    bytes: Vec<u8>,
    fds: Vec<OwnedFd>,
}

/// Who waits for which answer about one command.
#[derive(Default)]
struct Pending {
    /// The raw wait status, and whether nothing the command started was left; or why the
    /// command could not start ([`NotStarted`]).
    exited: Option<oneshot::Sender<io::Result<(i32, bool)>>>,
    cleaned: Option<oneshot::Sender<()>>,
}

/// The harness's end of the supervisor's socket, shared by the run's commands.
struct Control {
    /// Watched for reading alone: see [`writable`].
    socket: AsyncFd<OwnedFd>,
    outgoing: mpsc::UnboundedSender<Outgoing>,
    pending: Mutex<HashMap<u64, Pending>>,
    /// Why the sandbox is gone, once it is.
    ended: Mutex<Option<String>>,
    /// The sandbox's network namespace, as its supervisor sent it when ready.
    network: Mutex<Option<OwnedFd>>,
    next_id: AtomicU64,
    /// Kills the sandbox whole from outside ([`Control::abandon`]).
    killer: Mutex<Option<Killer>>,
}

/// How to kill a sandbox whole: its first process, whose end ends every other (the kernel kills
/// the rest of a PID namespace with its PID 1), or bubblewrap's process group.
enum Killer {
    Pidfd(OwnedFd),
    Group(i32),
}

impl Control {
    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Pending>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn send(&self, request: &Request, fds: Vec<OwnedFd>) {
        let _closed = self.outgoing.send(Outgoing {
            bytes: wire::frame(request),
            fds,
        });
    }

    /// The error of a command whose sandbox is gone.
    fn gone(&self) -> io::Error {
        let why = self
            .ended
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .unwrap_or_else(|| "it was torn down".to_owned());
        io::Error::other(format!("the run's sandbox ended: {why}"))
    }

    /// Whether the sandbox is gone.
    fn is_ended(&self) -> bool {
        self.ended
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// Kills the sandbox whole, from outside, and marks it gone (`why`).
    fn abandon(&self, why: String) {
        match &*self.killer.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(Killer::Pidfd(pidfd)) => {
                let _gone =
                    rustix::process::pidfd_send_signal(pidfd, rustix::process::Signal::KILL);
            }
            Some(Killer::Group(pgid)) => {
                let _gone = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(*pgid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            None => {}
        }
        self.end(why);
    }

    /// Marks the sandbox gone: every waiting command learns it.
    fn end(&self, why: String) {
        self.ended
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(why);
        self.pending().clear();
    }

    fn dispatch(&self, reply: Reply) {
        let mut pending = self.pending();
        match reply {
            Reply::Ready { .. } => {}
            Reply::SpawnFailed { id, errno, message } => {
                if let Some(tx) = pending.remove(&id).and_then(|p| p.exited) {
                    let err = match errno {
                        Some(n) => io::Error::from_raw_os_error(n),
                        None => io::Error::other(message),
                    };
                    let _gone = tx.send(Err(NotStarted::error(err)));
                }
            }
            Reply::Exited { id, status, clean } => {
                if let Some(tx) = pending.get_mut(&id).and_then(|p| p.exited.take()) {
                    let _gone = tx.send(Ok((status, clean)));
                }
            }
            Reply::Cleaned { id } => {
                if let Some(tx) = pending.get_mut(&id).and_then(|p| p.cleaned.take()) {
                    let _gone = tx.send(());
                }
            }
        }
    }
}

/// Whether the process of `pidfd` has ended, waiting at most `within`. A pidfd reads ready once
/// its process has ended; looked at now and then (a sandbox's process is the sandbox maker's
/// child: nothing here can wait for it).
async fn pidfd_ended_within(pidfd: &OwnedFd, within: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    let mut pause = Duration::from_micros(500);
    loop {
        let mut fds = [rustix::event::PollFd::new(
            pidfd,
            rustix::event::PollFlags::IN,
        )];
        let zero = rustix::event::Timespec::default();
        if !matches!(rustix::event::poll(&mut fds, Some(&zero)), Ok(0)) {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// One run's sandbox. Dropping it kills everything in it.
pub(crate) struct RunSandbox {
    control: Arc<Control>,
    process: Option<Process>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// The process that holds a run's sandbox.
enum Process {
    /// bubblewrap, in its own process group (its child, the supervisor, dies with it).
    Bwrap {
        child: tokio::process::Child,
        pgid: i32,
    },
    /// The sandbox's first process (the supervisor), cloned by the sandbox maker, which reaps
    /// it.
    Cloned { pid: i32, pidfd: OwnedFd },
}

impl Process {
    /// Waits until it has ended, at most `within`: whether it did.
    async fn ended_within(&mut self, within: Duration) -> bool {
        match self {
            Process::Bwrap { child, .. } => {
                tokio::time::timeout(within, child.wait()).await.is_ok()
            }
            Process::Cloned { pidfd, .. } => pidfd_ended_within(pidfd, within).await,
        }
    }

    fn kill(&self) {
        match self {
            Process::Bwrap { pgid, .. } => {
                let _gone = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(*pgid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            Process::Cloned { pidfd, .. } => {
                let _gone =
                    rustix::process::pidfd_send_signal(pidfd, rustix::process::Signal::KILL);
            }
        }
    }

    /// The pid to show in a debug view.
    fn pid(&self) -> i32 {
        match self {
            Process::Bwrap { pgid, .. } => *pgid,
            Process::Cloned { pid, .. } => *pid,
        }
    }
}

impl RunSandbox {
    /// Whether the sandbox has ended (torn down, killed, or its supervisor gone).
    pub(crate) fn is_ended(&self) -> bool {
        self.control.is_ended()
    }

    /// A pidfd of the sandbox's first process, when the harness's own maker made it (whose end
    /// comes after every other process's of the sandbox); `None` for bubblewrap's.
    pub(crate) fn first_process(&self) -> Option<OwnedFd> {
        match &self.process {
            Some(Process::Cloned { pidfd, .. }) => pidfd.try_clone().ok(),
            _ => None,
        }
    }

    /// Waits, at most `within`, until the sandbox's first process has ended, which it does only
    /// after every other process of the sandbox: a sandbox killed whole over a fork bomb holds
    /// tens of thousands of process ids until then, and a new one made before would find none
    /// free. At once when that cannot be known (bubblewrap's sandboxes).
    pub(crate) async fn gone_within(&self, within: Duration) {
        let pidfd = match &*self
            .control
            .killer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
        {
            Some(Killer::Pidfd(pidfd)) => pidfd.try_clone().ok(),
            _ => None,
        };
        if let Some(pidfd) = pidfd {
            pidfd_ended_within(&pidfd, within).await;
        }
    }

    /// Makes the run's sandbox with `mounts` (working folder `cwd`) and its supervisor, and
    /// waits for the supervisor's first word. With bubblewrap, call it from a thread that lives
    /// as long as the run (a runtime's worker, not a blocking-pool thread): bubblewrap dies with
    /// the thread that started it (`--die-with-parent`).
    pub(crate) async fn start(maker: &Maker, mounts: &Mounts, cwd: &Path) -> io::Result<Self> {
        let (ours, theirs) = wire::socketpair()?;
        let kept = Arc::new(Mutex::new(Vec::new()));
        let (process, mut tasks) = match maker {
            Maker::Harness { zygote, hide, keep } => {
                let (read, write) = rustix::pipe::pipe_with(
                    rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK,
                )?;
                let plan = Plan {
                    hide: hide.clone(),
                    keep: keep.clone(),
                    mounts: mounts.clone(),
                    cwd: cwd.to_path_buf(),
                };
                let zygote = zygote.clone();
                let made = tokio::task::spawn_blocking(move || zygote.make(&plan, theirs, write))
                    .await
                    .map_err(io::Error::other)?
                    .map_err(|e| {
                        io::Error::new(e.kind(), format!("failed to make the run's sandbox: {e}"))
                    })?;
                let stderr = tokio::net::unix::pipe::Receiver::from_owned_fd(read).ok();
                let process = Process::Cloned {
                    pid: made.pid,
                    pidfd: made.pidfd,
                };
                (
                    process,
                    vec![tokio::spawn(keep_stderr(stderr, kept.clone()))],
                )
            }
            Maker::Bwrap(bwrap) => {
                let mut child = spawn_bwrap(bwrap, mounts, cwd, theirs)?;
                let pgid = child.id().map_or(0, |p| p as i32);
                let stderr = child.stderr.take();
                let process = Process::Bwrap { child, pgid };
                (
                    process,
                    vec![tokio::spawn(keep_stderr(stderr, kept.clone()))],
                )
            }
        };

        rustix::io::ioctl_fionbio(&ours, true)?;
        let (tx, rx) = mpsc::unbounded_channel();
        let killer = match &process {
            Process::Cloned { pidfd, .. } => pidfd.try_clone().ok().map(Killer::Pidfd),
            Process::Bwrap { pgid, .. } => Some(Killer::Group(*pgid)),
        };
        let control = Arc::new(Control {
            socket: watch(ours, Interest::READABLE)?,
            outgoing: tx,
            pending: Mutex::new(HashMap::new()),
            ended: Mutex::new(None),
            network: Mutex::new(None),
            next_id: AtomicU64::new(1),
            killer: Mutex::new(killer),
        });
        let (ready_tx, ready_rx) = oneshot::channel();
        tasks.push(tokio::spawn(read_replies(control.clone(), ready_tx)));
        tasks.push(tokio::spawn(write_requests(control.clone(), rx)));
        let mut sandbox = RunSandbox {
            control,
            process: Some(process),
            tasks,
        };
        let why = match tokio::time::timeout(START_TIMEOUT, ready_rx).await {
            Ok(Ok(protocol)) if protocol == wire::PROTOCOL => return Ok(sandbox),
            Ok(Ok(other)) => format!(
                "its supervisor speaks `{other}`, not `{}`: it is another build of the harness; \
                 rebuild it",
                wire::PROTOCOL
            ),
            Ok(Err(_)) => {
                // Let the sandbox say why before it is killed.
                if let Some(process) = sandbox.process.as_mut() {
                    let _ended = process.ended_within(Duration::from_millis(500)).await;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
                let said = String::from_utf8_lossy(&kept.lock().unwrap_or_else(|e| e.into_inner()))
                    .trim()
                    .to_owned();
                if said.is_empty() {
                    "it ended before its supervisor was ready".to_owned()
                } else {
                    format!("it ended before its supervisor was ready: {said}")
                }
            }
            Err(_) => format!("it was not ready within {START_TIMEOUT:?}"),
        };
        sandbox.shut();
        Err(io::Error::other(format!(
            "failed to start the run's sandbox: {why}"
        )))
    }

    /// Asks for `spec` to be spawned in the sandbox with `tag`. Returns once asked: whether it
    /// started comes with its end ([`SandboxedCommand::wait`]; a spawn that failed is a
    /// [`NotStarted`] error there), so a command costs the harness one reply, not two.
    pub(crate) fn spawn(&self, spec: CommandSpec<'_>, tag: &str) -> io::Result<SandboxedCommand> {
        let control = &self.control;
        let id = control.next_id.fetch_add(1, Ordering::Relaxed);
        let (exited_tx, exited_rx) = oneshot::channel();
        {
            let mut pending = control.pending();
            if control
                .ended
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_some()
            {
                return Err(control.gone());
            }
            pending.insert(
                id,
                Pending {
                    exited: Some(exited_tx),
                    cleaned: None,
                },
            );
        }
        let request = Request::Spawn {
            id,
            shell: spec.shell.to_path_buf(),
            script: spec.script.to_owned(),
            cwd: spec.cwd.to_path_buf(),
            env: spec.env.to_vec(),
            tag: tag.to_owned(),
        };
        control.send(&request, vec![spec.stdout, spec.stderr]);
        Ok(SandboxedCommand {
            id,
            control: control.clone(),
            exited: Some(exited_rx),
            status: None,
            left_nothing: false,
            not_started: None,
        })
    }

    /// Shuts the socket: the supervisor kills everything in the sandbox and exits, and with it
    /// (PID 1) the namespace. Bubblewrap then ends by itself and is waited for, so its
    /// children's CPU is counted as the harness's children's (a cloned sandbox is the maker's to
    /// reap). The sandbox's process is killed if it has not ended within [`END_GRACE`] (or at
    /// once without a runtime to wait in).
    fn shut(&mut self) {
        let _done =
            rustix::net::shutdown(self.control.socket.get_ref(), rustix::net::Shutdown::Both);
        self.control.end("the run ended".to_owned());
        for task in self.tasks.drain(..) {
            task.abort();
        }
        let network = self
            .control
            .network
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let Some(mut process) = self.process.take() else {
            return;
        };
        let unown = |process: &Process| {
            if let Process::Bwrap { pgid, .. } = process {
                own_children().remove(pgid);
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    if !process.ended_within(END_GRACE).await {
                        process.kill();
                        if let Process::Bwrap { child, .. } = &mut process {
                            let _reaped = child.wait().await;
                        }
                    }
                    unown(&process);
                    // Ended: its namespace now lives on that descriptor alone.
                    if let Some(network) = network {
                        release_network_namespace(network);
                    }
                    super::process::reap_now_and_then();
                });
            }
            Err(_) => {
                process.kill();
                // Killed and handed to tokio's reaper (or the maker's): no longer an own child.
                unown(&process);
                drop(process);
            }
        }
    }
}

impl std::fmt::Debug for RunSandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunSandbox")
            .field("pid", &self.process.as_ref().map(Process::pid))
            .finish_non_exhaustive()
    }
}

impl Drop for RunSandbox {
    fn drop(&mut self) {
        self.shut();
    }
}

/// How many ended sandboxes' network namespaces are released at once.
const NETWORK_NAMESPACE_BATCH: usize = 8;

/// The ended sandboxes' network namespaces not released yet.
static ENDED_NETWORK_NAMESPACES: Mutex<EndedNamespaces> = Mutex::new(EndedNamespaces(Vec::new()));

/// Releases `network`, the network namespace of a sandbox that has ended (its descriptor the
/// last hold on it), with others: every [`NETWORK_NAMESPACE_BATCH`]-th is closed with those
/// before it. The kernel tears network namespaces down in a worker that takes every namespace
/// released meanwhile as one batch, and part of its work is once per batch (it walks the
/// machine's whole TCP hash table for each): released one by one, a run's namespace cost more
/// there than making it (`benches/README.md`, `sandbox_overhead`). An ended namespace holds
/// nothing (no process, no socket); at most a batch less one wait, until the harness ends. One
/// the sandbox maker keeps for a later run (`sandbox_ns::Networks`) lives on: the maker holds it
/// too.
fn release_network_namespace(network: OwnedFd) {
    let batch = ENDED_NETWORK_NAMESPACES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .add(network);
    drop(batch);
}

/// Ended sandboxes' network namespaces, released [`NETWORK_NAMESPACE_BATCH`] at a time.
struct EndedNamespaces(Vec<OwnedFd>);

impl EndedNamespaces {
    /// Keeps `network`; once a batch is kept, hands all of it back, to close.
    fn add(&mut self, network: OwnedFd) -> Vec<OwnedFd> {
        self.0.push(network);
        if self.0.len() < NETWORK_NAMESPACE_BATCH {
            return Vec::new();
        }
        std::mem::take(&mut self.0)
    }
}

/// Why a command the run's supervisor was asked to spawn did not start (its shell not found,
/// its folder gone), as [`SandboxedCommand::wait`] (and `Spawned::wait`) returns it: an
/// `io::Error` whose text is the OS's (or the supervisor's), as a failed spawn's is, and which
/// [`NotStarted::is`] recognises.
#[derive(Debug)]
pub struct NotStarted(io::Error);

impl NotStarted {
    pub(crate) fn error(cause: io::Error) -> io::Error {
        io::Error::new(cause.kind(), NotStarted(cause))
    }

    /// Whether `e` says that the command did not start.
    pub fn is(e: &io::Error) -> bool {
        e.get_ref().is_some_and(|inner| inner.is::<NotStarted>())
    }
}

impl std::fmt::Display for NotStarted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for NotStarted {}

/// A command running in a run's sandbox.
pub(crate) struct SandboxedCommand {
    id: u64,
    control: Arc<Control>,
    exited: Option<oneshot::Receiver<io::Result<(i32, bool)>>>,
    status: Option<i32>,
    /// The supervisor found nothing the command started left when its shell ended: cleaning
    /// after it has nothing to do.
    left_nothing: bool,
    /// Why the supervisor could not start it, once it said so (nothing to kill or clean then).
    not_started: Option<(io::ErrorKind, String)>,
}

impl SandboxedCommand {
    /// Waits for the command's shell to end: its raw wait status, or why it could not start (a
    /// [`NotStarted`] error) or was lost. Cancel-safe.
    pub(crate) async fn wait(&mut self) -> io::Result<i32> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        if let Some((kind, why)) = &self.not_started {
            return Err(NotStarted::error(io::Error::new(*kind, why.clone())));
        }
        let Some(exited) = self.exited.as_mut() else {
            return Err(self.control.gone());
        };
        let result = exited.await;
        self.exited = None;
        match result {
            Ok(Ok((status, left_nothing))) => {
                self.status = Some(status);
                self.left_nothing = left_nothing;
                Ok(status)
            }
            Ok(Err(not_started)) => {
                // Nothing runs: nothing to kill or clean.
                self.not_started = Some((not_started.kind(), not_started.to_string()));
                self.left_nothing = true;
                Err(not_started)
            }
            Err(_) => Err(self.control.gone()),
        }
    }

    /// Kills the command's process group.
    pub(crate) fn kill_group(&self) {
        if self.not_started.is_some() {
            return;
        }
        self.control
            .send(&Request::KillGroup { id: self.id }, Vec::new());
    }

    /// Kills everything the command started, and waits until it is done: at once when the
    /// supervisor said, as the shell ended, that nothing was left (the supervisor has forgotten
    /// the command then; one round trip less per command).
    pub(crate) async fn clean(&mut self) {
        if self.left_nothing {
            return;
        }
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = self.control.pending();
            let Some(entry) = pending.get_mut(&self.id) else {
                return;
            };
            entry.cleaned = Some(tx);
        }
        self.control
            .send(&Request::Clean { id: self.id }, Vec::new());
        if tokio::time::timeout(CLEAN_GRACE, rx).await.is_err() {
            // The run's later commands get a new sandbox (`Jail::spawn`).
            self.control.abandon(format!(
                "its supervisor had not killed what a command left within {CLEAN_GRACE:?} (a \
                 fork bomb?), so the sandbox was killed whole"
            ));
        }
    }

    /// Asks for the command's processes to be killed, without waiting (a command dropped before
    /// it was cleaned).
    pub(crate) fn clean_later(&self) {
        if self.left_nothing {
            return;
        }
        self.control
            .send(&Request::Clean { id: self.id }, Vec::new());
    }
}

impl Drop for SandboxedCommand {
    fn drop(&mut self) {
        self.control.pending().remove(&self.id);
    }
}

/// Sends the frames in order, descriptors with the first byte of theirs.
async fn write_requests(control: Arc<Control>, mut rx: mpsc::UnboundedReceiver<Outgoing>) {
    while let Some(Outgoing { bytes, fds }) = rx.recv().await {
        let mut sent = 0;
        let mut fds = Some(fds);
        while sent < bytes.len() {
            let borrowed: Vec<BorrowedFd<'_>> = fds
                .as_ref()
                .map(|f| f.iter().map(AsFd::as_fd).collect())
                .unwrap_or_default();
            let socket = control.socket.get_ref();
            let failed = match wire::send_with_fds(socket.as_fd(), &bytes[sent..], &borrowed) {
                Ok(n) => {
                    sent += n;
                    // Sent: the harness's copies of the pipe ends go, so EOF can arrive.
                    fds = None;
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => writable(socket).await.err(),
                Err(e) => Some(e),
            };
            if let Some(e) = failed {
                control.end(format!("failed to write to its supervisor: {e}"));
                return;
            }
        }
    }
}

/// `fd`, watched by the runtime for `interest` alone (tokio's sockets are watched for both).
#[allow(deprecated)] // Sound for an `OwnedFd`: its descriptor is the same for its whole life.
fn watch(fd: OwnedFd, interest: Interest) -> io::Result<AsyncFd<OwnedFd>> {
    AsyncFd::with_interest(fd, interest)
}

/// Waits until `socket` (non-blocking) takes bytes again: a frame larger than what its buffer
/// holds (a command with a large environment). The run's socket is watched for reading alone:
/// a Unix socket says it is writable each time its peer reads, so watched for writing too, it
/// woke the harness once per request the supervisor read, for nothing.
async fn writable(socket: &OwnedFd) -> io::Result<()> {
    let watched = watch(socket.try_clone()?, Interest::WRITABLE)?;
    let _ready = watched.writable().await?;
    Ok(())
}

/// Reads the supervisor's replies and hands each to whoever waits for it.
async fn read_replies(control: Arc<Control>, ready: oneshot::Sender<String>) {
    let mut ready = Some(ready);
    let mut reader = wire::Reader::default();
    let why = loop {
        let Ok(mut readable) = control.socket.readable().await else {
            break "its socket failed".to_owned();
        };
        match readable.try_io(|socket| reader.fill(socket.get_ref().as_fd())) {
            Ok(Ok(0)) => break "its supervisor ended".to_owned(),
            Ok(Ok(_)) => {}
            Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
            Ok(Err(e)) => break format!("reading from its supervisor failed: {e}"),
            // Read to the end of what was there: readiness cleared.
            Err(_would_block) => continue,
        }
        let mut broken = None;
        loop {
            match reader.next_frame::<Reply>() {
                Ok(Some(Reply::Ready { protocol })) => {
                    // The first frame: the first descriptor is its network namespace's.
                    if protocol == wire::PROTOCOL {
                        *control.network.lock().unwrap_or_else(|e| e.into_inner()) =
                            reader.take_fd();
                    }
                    if let Some(tx) = ready.take() {
                        let _gone = tx.send(protocol);
                    }
                }
                Ok(Some(reply)) => control.dispatch(reply),
                Ok(None) => break,
                Err(e) => {
                    broken = Some(e.to_string());
                    break;
                }
            }
        }
        if let Some(why) = broken {
            break why;
        }
    };
    control.end(why);
}

/// Starts bubblewrap with `mounts` and the supervisor speaking on `socket`.
fn spawn_bwrap(
    bwrap: &Bwrap,
    mounts: &Mounts,
    cwd: &Path,
    socket: OwnedFd,
) -> io::Result<tokio::process::Child> {
    let mut cmd = tokio::process::Command::new(&bwrap.path);
    cmd.args(bwrap.args(mounts, cwd))
        .arg("--")
        .arg(&bwrap.supervisor)
        .arg(supervisor::ARG)
        .args(super::process::starting_open_files_arg())
        .env_clear()
        .stdin(Stdio::from(socket))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    spawn_own(&mut cmd)
        .map_err(|e| io::Error::new(e.kind(), format!("failed to start bubblewrap: {e}")))
}

/// Keeps the start of the sandbox's stderr (its reason when it fails), reading it to the end.
async fn keep_stderr<R: tokio::io::AsyncRead + Unpin>(
    stderr: Option<R>,
    kept: Arc<Mutex<Vec<u8>>>,
) {
    let Some(mut stderr) = stderr else {
        return;
    };
    let mut buf = [0u8; 1024];
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
        let room = STDERR_KEPT.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ended_namespaces_are_kept_until_a_batch_is_full_then_closed_together() {
        let mut ended = EndedNamespaces(Vec::new());
        let mut readers = Vec::new();
        let open = |reader: &OwnedFd| {
            // A pipe's read end sees its end only once its write end is closed.
            let mut fds = [rustix::event::PollFd::new(
                reader,
                rustix::event::PollFlags::IN,
            )];
            let zero = rustix::event::Timespec::try_from(std::time::Duration::ZERO).unwrap();
            rustix::event::poll(&mut fds, Some(&zero)).unwrap() == 0
        };
        for i in 1..=NETWORK_NAMESPACE_BATCH {
            let (read, write) = rustix::pipe::pipe().unwrap();
            readers.push(read);
            let closed = ended.add(write);
            if i < NETWORK_NAMESPACE_BATCH {
                assert!(closed.is_empty(), "released at {i}");
                assert!(readers.iter().all(open), "a kept one was closed at {i}");
            } else {
                assert_eq!(closed.len(), NETWORK_NAMESPACE_BATCH);
                drop(closed);
                assert!(!readers.iter().any(open), "all are closed together");
            }
        }
        assert!(ended.0.is_empty());
    }
}
