//! The sandbox: everything about what the agent can reach. It owns process spawning for the
//! agent's commands (bash calls and checks), the sandbox tiers, process-tree cleanup, output
//! capping, the commands' environment, the harness's own secrets, and path confinement for the
//! file tools.
//!
//! Tiers ([`Tier`], `--sandbox`):
//!
//! * `isolated` (the default wherever namespaces and `openat2` work): a run's commands run in
//!   one sandbox made for the run ([`isolated`], its [`supervisor`] as PID 1; the harness's own
//!   [`zygote`] makes it, or bubblewrap where that cannot work) with no network, their own PID,
//!   mount, IPC, UTS, cgroup and user namespaces and no capabilities; the file system is
//!   read-only except the workspace, the run's `HOME` and a private `/tmp`; `/run` and the host's
//!   home folder are hidden (toolchains under it stay readable), and so is the temp dir but for
//!   the run's own folders (`bwrap::Mounts::skeletons`); `/proc` shows only the sandbox's own
//!   processes. The file tools are confined as under `workspace`.
//! * `workspace`: the file tools open every path beneath the workspace in one step
//!   ([`beneath`], `openat2`) and refuse those that lead outside; commands are not isolated.
//! * `none`: Pi's behaviour, nothing confined.
//!
//! In every tier commands get an allow-listed environment ([`env`]), every process a command
//! starts is killed when it ends ([`process`]), output is capped ([`output`]), the harness holds
//! its keys out of its environment and is non-dumpable ([`secrets`]), and a root harness runs
//! commands outside `isolated` as `nobody` ([`user`], [`Sandbox::with_unprivileged_commands`]).
//!
//! This module sits below `tools` and depends on nothing else in the crate.

pub mod beneath;
pub mod bwrap;
pub mod confine;
pub mod env;
mod isolated;
pub mod output;
pub mod pool;
pub mod process;
pub mod remove;
pub mod secrets;
pub mod spawned;
pub mod stale;
pub mod supervisor;
pub mod user;
pub mod wire;
pub mod zygote;

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use isolated::Maker;

pub use beneath::How;
pub use bwrap::CommandSpec;
pub use isolated::NotStarted;
pub use spawned::Spawned;

/// How much the agent's commands and tools are confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Tier {
    /// One sandbox per run: no network, own namespaces, only the workspace writable; file tools
    /// confined.
    Isolated,
    /// File tools confined to the workspace; commands not isolated.
    Workspace,
    /// Pi's behaviour: nothing confined.
    None,
}

impl Tier {
    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Isolated => "isolated",
            Tier::Workspace => "workspace",
            Tier::None => "none",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The sandbox of one invocation: the tier in force, the maker of run sandboxes when isolating,
/// and the tags of the processes started under it. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Sandbox {
    tier: Tier,
    /// What makes each run's sandbox under `isolated`.
    maker: Option<Arc<Maker>>,
    notice: Option<String>,
    tags: Arc<process::Tags>,
    /// The user commands run as when not the harness's own (a root harness outside `isolated`).
    user: Option<Arc<user::CommandUser>>,
}

/// The variable that picks the maker of run sandboxes: `bwrap` for bubblewrap; anything else
/// (or nothing) for the harness's own, with bubblewrap where that cannot work.
pub const MAKER_VAR: &str = "HARNESS_SANDBOX_MAKER";

impl Sandbox {
    /// The sandbox for `requested` (`None`: the default, `isolated` where namespaces can be
    /// made). `isolated` falls back to `workspace` when neither the harness nor bubblewrap can
    /// create its namespaces here; [`Sandbox::notice`] then says why and how to fix it.
    pub fn detect(requested: Option<Tier>) -> Sandbox {
        let bwrap = std::env::var_os(MAKER_VAR).is_some_and(|v| v == "bwrap");
        Sandbox::detect_with(requested, bwrap)
    }

    /// [`Sandbox::detect`] with bubblewrap as the maker of run sandboxes, as
    /// `HARNESS_SANDBOX_MAKER=bwrap` asks (so the two makers' sandboxes can be compared).
    pub fn detect_with_bwrap(requested: Option<Tier>) -> Sandbox {
        Sandbox::detect_with(requested, true)
    }

    fn detect_with(requested: Option<Tier>, bwrap: bool) -> Sandbox {
        let wanted = requested.unwrap_or(Tier::Isolated);
        if wanted == Tier::None {
            return Sandbox::none();
        }
        // Confining the file tools takes openat2; without it no tier may claim confinement.
        if let Err(why) = beneath::openat2_works() {
            let mut sandbox = Sandbox::none();
            sandbox.notice = Some(format!(
                "sandbox: {why}, so the file tools cannot be kept inside the workspace; falling \
                 back to `--sandbox none`: nothing is confined (the file tools reach anything \
                 you can, bash commands and checks run unisolated)"
            ));
            return sandbox;
        }
        if wanted != Tier::Isolated {
            return Sandbox::without_bwrap(wanted);
        }
        match pick_maker(bwrap) {
            Ok((maker, notice)) => Sandbox {
                tier: Tier::Isolated,
                maker: Some(Arc::new(maker)),
                notice,
                tags: Arc::new(process::Tags::new()),
                user: None,
            },
            Err(why) => {
                let mut sandbox = Sandbox::without_bwrap(Tier::Workspace);
                sandbox.notice = Some(format!(
                    "{why}; falling back to `--sandbox workspace`: the file tools stay inside the \
                     workspace, but bash commands and checks run unisolated (they can read other \
                     processes and use the network)"
                ));
                sandbox
            }
        }
    }

    /// A sandbox of `tier` without bubblewrap (`workspace` or `none`; `isolated` becomes
    /// `workspace`).
    pub fn without_bwrap(tier: Tier) -> Sandbox {
        Sandbox {
            tier: if tier == Tier::Isolated {
                Tier::Workspace
            } else {
                tier
            },
            maker: None,
            notice: None,
            tags: Arc::new(process::Tags::new()),
            user: None,
        }
    }

    /// This sandbox with the agent's commands run as `nobody` when the harness runs as root
    /// outside `isolated` (where root could read the harness's memory and its keys; under
    /// `isolated` the commands cannot see the harness at all). Every run's workspace and scratch
    /// folders are then handed to that user; toolchain folders it cannot reach are named in the
    /// notice, with what to do.
    pub fn with_unprivileged_commands(mut self) -> Sandbox {
        if self.maker.is_some() || !rustix::process::geteuid().is_root() {
            return self;
        }
        let user = user::CommandUser::nobody();
        let mut dirs: Vec<PathBuf> = Vec::new();
        for (k, v) in env::base_env(std::env::vars()) {
            if k == "PATH" {
                dirs.extend(std::env::split_paths(&v));
            } else if env::TOOLCHAIN_HOMES.iter().any(|(name, _)| *name == k) {
                dirs.push(PathBuf::from(v));
            }
        }
        let closed = user.unreachable(&dirs);
        if !closed.is_empty() {
            let mut blockers: Vec<&Path> = closed.iter().map(|(_, b)| b.as_path()).collect();
            blockers.sort();
            blockers.dedup();
            let show = |paths: Vec<&Path>| -> String {
                let list: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                list.join(", ")
            };
            self.add_notice(format!(
                "sandbox: the harness runs as root, so the agent's commands and checks run as \
                 `{}` (uid {}), which cannot pass through {} and so cannot reach {}: commands \
                 will not find what is there. Open the way (`chmod o+x {}`), install the \
                 toolchains elsewhere, run the harness as another user, or use `--sandbox \
                 isolated`",
                user.name,
                user.uid,
                show(blockers.clone()),
                show(closed.iter().map(|(d, _)| d.as_path()).collect()),
                show(blockers),
            ));
        }
        self.user = Some(Arc::new(user));
        self
    }

    /// The user the agent's commands run as, when it is not the harness's own.
    pub fn command_user(&self) -> Option<&user::CommandUser> {
        self.user.as_deref()
    }

    fn add_notice(&mut self, text: String) {
        self.notice = Some(match self.notice.take() {
            Some(before) => format!("{before}\n{text}"),
            None => text,
        });
    }

    /// Pi's behaviour: nothing confined (commands are still cleaned up and capped).
    pub fn none() -> Sandbox {
        Sandbox::without_bwrap(Tier::None)
    }

    /// What makes the run sandboxes under `isolated`: `harness` (its own) or `bubblewrap`.
    pub fn maker(&self) -> Option<&'static str> {
        self.maker.as_deref().map(|m| match m {
            Maker::Harness { .. } => "harness",
            Maker::Bwrap(_) => "bubblewrap",
        })
    }

    /// The tier actually in force.
    pub fn tier(&self) -> Tier {
        self.tier
    }

    /// The tier's name (`isolated`, `workspace`, `none`), for reports and cassette headers.
    pub fn name(&self) -> &'static str {
        self.tier.name()
    }

    /// Why the requested tier could not be had and how to get it, to print once, up front.
    pub fn notice(&self) -> Option<&str> {
        self.notice.as_deref()
    }

    /// The confinement of one run whose workspace is `root` (canonical).
    pub fn jail(&self, root: &Path) -> Jail {
        let anchor = (self.tier != Tier::None)
            .then(|| beneath::Anchor::open(root).map(Arc::new).map_err(Arc::new));
        let handed = match &self.user {
            Some(user) => user.take_workspace(root).map_err(|e| {
                Arc::new(io::Error::new(
                    e.kind(),
                    format!(
                        "failed to hand the workspace {} to `{}`, the user commands run as: {e}",
                        root.display(),
                        user.name
                    ),
                ))
            }),
            None => Ok(()),
        };
        Jail {
            sandbox: self.clone(),
            mounts: bwrap::Mounts {
                root: Some(root.to_path_buf()),
                ..Default::default()
            },
            root: anchor,
            logs: None,
            handed,
            run: RunCell::default(),
        }
    }

    /// Kills every process any command of this sandbox started that is still running (for the
    /// end of the harness; each command's own end already kills its processes). Under
    /// `isolated` there is nothing to look for: every command ran in a run's sandbox, whose
    /// processes end with it (and it with its maker), and a search of the harness's descendants
    /// would read the environment of each process in them (after a fork bomb, tens of thousands
    /// still dying: 18 s at the harness's end).
    pub fn kill_all(&self) {
        if self.maker.is_none() {
            self.tags.kill_everything();
        }
    }
}

/// The confinement of one run (or one `harness tool` call): the workspace root, the run's
/// scratch folders, and the sandbox. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Jail {
    sandbox: Sandbox,
    mounts: bwrap::Mounts,
    /// The workspace held open when the tier confines the file tools (or why it could not be).
    root: Option<Result<Arc<beneath::Anchor>, Arc<io::Error>>>,
    /// bash's full-output folder held open: the file tools may read there, never write.
    logs: Option<Arc<beneath::Anchor>>,
    /// Whether the workspace and scratch folders could be handed to the commands' user.
    handed: Result<(), Arc<io::Error>>,
    /// The run's sandbox under `isolated`, started once (by [`Jail::prepare`] or the first
    /// command; again if it ended while the run goes on) and torn down when the last clone of
    /// this jail goes.
    run: RunCell,
}

/// How long a run whose sandbox was killed whole waits for it to be gone before the next.
const SANDBOX_GONE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The run's sandbox once started (or why it could not be), shared by the jail's clones.
type RunCell = Arc<tokio::sync::Mutex<Option<Result<Arc<isolated::RunSandbox>, String>>>>;

/// Why a file tool cannot use a path: outside the workspace, or the file system said no.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    #[error(transparent)]
    Outside(#[from] OutsideWorkspace),
    #[error(transparent)]
    SharedLink(#[from] SharedLink),
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// A file in the workspace a root harness's file tools will not use for the commands' user: a
/// hard link to a file that user does not own, which may lie anywhere on the same file system.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Access denied: {path} is a hard link to a file the agent's commands do not own (owner uid {owner}, {links} links); the harness runs as root and its file tools act for the commands' user `{user}` in the workspace"
)]
pub struct SharedLink {
    pub path: PathBuf,
    pub owner: u32,
    pub links: u64,
    pub user: String,
}

/// [`SharedLink`] when `st` (of the file opened at `abs`) is a regular file with more than one
/// link that `user` does not own.
fn refuse_shared_link_of(
    abs: &Path,
    st: &rustix::fs::Stat,
    user: &user::CommandUser,
) -> Result<(), FsError> {
    let regular = rustix::fs::FileType::from_raw_mode(st.st_mode).is_file();
    if regular && st.st_nlink > 1 && st.st_uid != user.uid {
        // `nlink_t` is 64 bits on x86-64 and 32 on some other targets.
        #[allow(clippy::unnecessary_cast)]
        let links = st.st_nlink as u64;
        return Err(FsError::SharedLink(SharedLink {
            path: abs.to_path_buf(),
            owner: st.st_uid,
            links,
            user: user.name.clone(),
        }));
    }
    Ok(())
}

/// A path a file tool may not use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Access denied: {path} is outside the workspace {root} (the harness runs with `--sandbox {tier}`, which keeps the tools inside the workspace)"
)]
pub struct OutsideWorkspace {
    pub path: PathBuf,
    pub root: PathBuf,
    pub tier: Tier,
}

impl Jail {
    /// No confinement at all (Pi's behaviour), as `ToolContext::new` uses.
    pub fn unconfined() -> Jail {
        Jail {
            sandbox: Sandbox::none(),
            mounts: bwrap::Mounts::default(),
            root: None,
            logs: None,
            handed: Ok(()),
            run: RunCell::default(),
        }
    }

    /// The names of the mount points the run's sandbox, made by the harness, needs right in its
    /// private `/tmp` ([`bwrap::Mounts::skeletons`] there: the run's folders, under `/tmp`).
    fn private_tmp_mount_points(&self) -> Vec<OsString> {
        let Some(Maker::Harness { hide, .. }) = self.sandbox.maker.as_deref() else {
            return Vec::new();
        };
        let Ok(real_tmp) = Path::new("/tmp").canonicalize() else {
            return Vec::new();
        };
        let skeletons = self.mounts.skeletons(hide.as_deref());
        skeletons
            .iter()
            .filter_map(|at| {
                let rest = at.strip_prefix(&real_tmp).ok()?;
                let mut parts = rest.components();
                let first = parts.next()?;
                parts.next().is_none().then(|| first.as_os_str().to_owned())
            })
            .collect()
    }

    /// This jail with the run's scratch folders: commands write `HOME` there and, under
    /// `isolated`, see its `tmp/` as their private `/tmp`; bash's full-output files (`logs/`)
    /// stay readable by the commands and the file tools, so Pi's "Full output: …" notice can be
    /// followed.
    pub fn with_scratch(mut self, scratch: &Scratch) -> Jail {
        self.mounts.home = Some(scratch.home().to_path_buf());
        self.mounts.tmp = Some(scratch.tmp().to_path_buf());
        self.mounts.logs = Some(scratch.logs().to_path_buf());
        // The temp dir, canonical: the parent of the scratch folder `home` lies in.
        self.mounts.base = scratch
            .home()
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf);
        scratch.hold_mount_points(&self.private_tmp_mount_points());
        // A sandbox is made for the mounts it was started with: a fresh one for these.
        self.run = RunCell::default();
        if self.root.is_some() {
            self.logs = beneath::Anchor::open(scratch.logs()).ok().map(Arc::new);
        }
        if let (Some(user), Ok(())) = (&self.sandbox.user, &self.handed) {
            self.handed = user
                .take_scratch(scratch.path(), &[scratch.home(), scratch.tmp()])
                .map_err(|e| {
                    Arc::new(io::Error::new(
                        e.kind(),
                        format!(
                            "failed to hand the run's folders under {} to `{}`, the user \
                             commands run as: {e}",
                            scratch.path().display(),
                            user.name
                        ),
                    ))
                });
        }
        self
    }

    /// This jail with files and folders outside the workspace the task needs (its
    /// `requires.files`, canonical): under `isolated` they are mounted read-only at their own
    /// paths, so a check that links to a shared install outside the workspace finds it even
    /// when it lies under the hidden home or `/tmp`. Other tiers see them as they are.
    pub fn with_reads(mut self, reads: Vec<PathBuf>) -> Jail {
        if reads != self.mounts.reads {
            self.mounts.reads = reads;
            // A sandbox is made for the mounts it was started with: a fresh one for these.
            self.run = RunCell::default();
        }
        self
    }

    /// The tier in force.
    pub fn tier(&self) -> Tier {
        self.sandbox.tier
    }

    /// The workspace root, when there is one.
    pub fn root(&self) -> Option<&Path> {
        self.mounts.root.as_deref()
    }

    /// The workspace root when the file tools are confined to it (`workspace`, `isolated`).
    pub fn root_if_confined(&self) -> Option<&Path> {
        self.root.as_ref().and(self.mounts.root.as_deref())
    }

    /// Whether `TMPDIR` should be `/tmp` (isolated: the run's tmp folder is mounted there).
    pub fn tmp_is_private(&self) -> bool {
        self.sandbox.maker.is_some()
    }

    /// `Ok` when a file tool may use `abs`: always under `none`; otherwise only if it resolves
    /// (symlinks followed) inside the workspace or the run's bash output folder. A check only,
    /// for a clear early refusal: the file tools then open through [`Jail::open`] and the rest,
    /// which resolve and open in one step, so a path swapped after this check is refused there.
    pub fn check_path(&self, abs: &Path) -> Result<(), OutsideWorkspace> {
        let Some(root) = self.root_if_confined() else {
            return Ok(());
        };
        let real = confine::resolve_real(abs);
        if real.starts_with(root)
            || self
                .mounts
                .logs
                .as_ref()
                .is_some_and(|l| real.starts_with(l))
        {
            return Ok(());
        }
        Err(self.outside(abs))
    }

    fn outside(&self, abs: &Path) -> OutsideWorkspace {
        OutsideWorkspace {
            path: abs.to_path_buf(),
            root: self.mounts.root.clone().unwrap_or_default(),
            tier: self.sandbox.tier,
        }
    }

    /// For a file opened some other way than [`Jail::open`] (a walk's entry, from its folder's
    /// descriptor): the refusal [`Jail::open`] would give it, a hard link in the workspace to a
    /// file the commands' user does not own ([`SharedLink`]).
    pub fn refuse_shared_link(
        &self,
        abs: &Path,
        file: &impl std::os::fd::AsFd,
    ) -> Result<(), FsError> {
        match (&self.sandbox.user, &self.root) {
            (Some(user), Some(_)) => {
                let st = rustix::fs::fstat(file).map_err(io::Error::from)?;
                refuse_shared_link_of(abs, &st, user)
            }
            _ => Ok(()),
        }
    }

    /// Where `abs` is to be opened: `None` when nothing is confined (opened as is), else the
    /// folder held open (the workspace, or for reading the bash output folder) and the path
    /// beneath it. A path inside the workspace as written keeps its own steps (the kernel
    /// follows them beneath the workspace); any other is taken where its symlinks lead now,
    /// which the open checks again.
    fn locate(
        &self,
        abs: &Path,
        write: bool,
    ) -> Result<Option<(Arc<beneath::Anchor>, PathBuf)>, FsError> {
        let Some(root) = &self.root else {
            return Ok(None);
        };
        let root = root
            .as_ref()
            .map_err(|e| io::Error::new(e.kind(), e.to_string()))?;
        if let Ok(rel) = abs.strip_prefix(root.path()) {
            return Ok(Some((root.clone(), rel.to_path_buf())));
        }
        let real = confine::resolve_real(abs);
        if let Ok(rel) = real.strip_prefix(root.path()) {
            return Ok(Some((root.clone(), rel.to_path_buf())));
        }
        if let Some(logs) = self.logs.as_ref().filter(|_| !write) {
            if let Ok(rel) = real.strip_prefix(logs.path()) {
                return Ok(Some((logs.clone(), rel.to_path_buf())));
            }
        }
        Err(self.outside(abs).into())
    }

    /// Opens `abs` as a file tool may: as is under `none`; otherwise beneath the workspace (or,
    /// to read, bash's output folder) in one step, so a symlink swapped meanwhile cannot lead
    /// out. An absolute symlink that leads inside is followed (the kernel refuses any absolute
    /// symlink beneath a folder: where it leads now is opened beneath again).
    ///
    /// When the harness runs as root and the commands as another user ([`Sandbox::command_user`]),
    /// the file tools act for that user inside the workspace: a regular file there with another
    /// hard link, not that user's, is refused ([`SharedLink`]) before a byte of it is read or
    /// changed (where `fs.protected_hardlinks` is 0, a command may link any file of the machine
    /// into the workspace), and a file the open creates is handed to the user, so a later
    /// command can change it. A file that was there keeps its owner.
    pub fn open(&self, abs: &Path, how: How) -> Result<std::fs::File, FsError> {
        let writes = matches!(how, How::Truncate | How::Write);
        let located = self.locate(abs, writes)?;
        let open = |how: How| -> Result<OwnedFd, FsError> {
            Ok(match &located {
                None => beneath::open_free(abs, how)?,
                Some((anchor, rel)) => {
                    self.beneath(abs, anchor, rel, |rel| beneath::open(anchor, rel, how))?
                }
            })
        };
        let Some(user) = self.sandbox.user.as_deref() else {
            return Ok(open(how)?.into());
        };
        let confined = located.is_some();
        match how {
            How::Read => {
                let fd = open(how)?;
                if confined {
                    let st = rustix::fs::fstat(&fd).map_err(io::Error::from)?;
                    refuse_shared_link_of(abs, &st, user)?;
                }
                Ok(fd.into())
            }
            How::Truncate | How::Write => {
                // Unconfined (`none`), only a file this open makes is handed over: one that was
                // there (`~/.bashrc`) keeps its owner.
                let made_here = !confined && std::fs::metadata(abs).is_err();
                let fd = open(How::Write)?;
                let st = rustix::fs::fstat(&fd).map_err(io::Error::from)?;
                if confined {
                    refuse_shared_link_of(abs, &st, user)?;
                }
                if how == How::Truncate && rustix::fs::FileType::from_raw_mode(st.st_mode).is_file()
                {
                    rustix::fs::ftruncate(&fd, 0).map_err(io::Error::from)?;
                }
                if st.st_nlink == 1 && (confined || made_here) {
                    // Made by the harness: the commands' user must be able to change it later.
                    user.take_fd(std::os::fd::AsFd::as_fd(&fd))?;
                }
                Ok(fd.into())
            }
            How::Path | How::Dir => Ok(open(how)?.into()),
        }
    }

    /// `op` on `rel` beneath `anchor`; when the kernel refuses a step out (`EXDEV`: `..` or a
    /// symlink, absolute ones included), once more on where `abs` leads now if that is beneath
    /// the anchor, else [`FsError::Outside`].
    fn beneath<T>(
        &self,
        abs: &Path,
        anchor: &beneath::Anchor,
        rel: &Path,
        op: impl Fn(&Path) -> io::Result<T>,
    ) -> Result<T, FsError> {
        match op(rel) {
            Err(e) if beneath::is_escape(&e) => {
                let real = confine::resolve_real(&anchor.path().join(rel));
                let rel = real
                    .strip_prefix(anchor.path())
                    .map_err(|_| self.outside(abs))?;
                op(rel).map_err(|e| {
                    if beneath::is_escape(&e) {
                        FsError::Outside(self.outside(abs))
                    } else {
                        FsError::Io(e)
                    }
                })
            }
            other => Ok(other?),
        }
    }

    /// What `abs` leads to (`stat`, symlinks followed), as [`Jail::open`] would reach it.
    pub fn metadata(&self, abs: &Path) -> Result<std::fs::Metadata, FsError> {
        Ok(self.open(abs, How::Path)?.metadata()?)
    }

    /// Whether `abs` leads to anything a file tool may reach (`fs.existsSync`).
    pub fn exists(&self, abs: &Path) -> bool {
        self.metadata(abs).is_ok()
    }

    /// `access(abs, R_OK | W_OK)` (Node's `fs.access` before an edit), on what [`Jail::open`]
    /// reaches.
    pub fn access_rw(&self, abs: &Path) -> Result<(), FsError> {
        use std::os::fd::AsFd;
        let file = self.open(abs, How::Path)?;
        Ok(beneath::access_rw(file.as_fd())?)
    }

    /// `mkdir -p abs` (Node's `mkdir` with `recursive: true`), beneath the workspace when
    /// confined: every folder is made inside its parent's open descriptor.
    pub fn create_dir_all(&self, abs: &Path) -> Result<(), FsError> {
        let Some((anchor, rel)) = self.locate(abs, true)? else {
            let missing: Vec<PathBuf> = abs
                .ancestors()
                .take_while(|p| std::fs::symlink_metadata(p).is_err())
                .map(Path::to_path_buf)
                .collect();
            std::fs::create_dir_all(abs)?;
            if let Some(user) = &self.sandbox.user {
                for dir in missing.iter().rev() {
                    user.chown(dir)?;
                }
            }
            return Ok(());
        };
        let user = self.sandbox.user.clone();
        self.beneath(abs, &anchor, &rel, |rel| {
            let mut handed: io::Result<()> = Ok(());
            beneath::create_dir_all(&anchor, rel, &mut |fd| {
                if let (Some(user), true) = (&user, handed.is_ok()) {
                    handed = user.take_fd(std::os::fd::AsFd::as_fd(fd));
                }
            })?;
            handed
        })
    }

    /// Spawns `spec` under this jail's tier: in the run's sandbox under `isolated` (started now
    /// if [`Jail::prepare`] did not), else directly (as the commands' user when there is one).
    /// Under `isolated` the supervisor's word that it could not start the command comes with
    /// the command's end: a [`NotStarted`] error from [`Spawned::wait`].
    pub async fn spawn(&self, spec: CommandSpec<'_>) -> io::Result<Spawned> {
        if let Err(e) = &self.handed {
            return Err(io::Error::new(e.kind(), e.to_string()));
        }
        if self.sandbox.maker.is_none() {
            return spawned::spawn(spec, &self.sandbox.tags, self.sandbox.user.as_deref());
        }
        let run = self.run_sandbox().await?;
        let tag = self.sandbox.tags.next();
        let command = run.spawn(spec, &tag)?;
        Ok(Spawned::supervised(command, tag))
    }

    /// Starts the run's sandbox now, in the background, under `isolated` (so that it is ready
    /// by the first command); nothing otherwise. Needs a tokio runtime.
    pub fn prepare(&self) {
        if self.sandbox.maker.is_some() {
            let jail = self.clone();
            tokio::spawn(async move {
                let _started = jail.run_sandbox().await;
            });
        }
    }

    /// Ends the run's use of the jail (its last clone; others keep its sandbox alive): the
    /// run's sandbox is torn down, and what comes back tells when everything in it has ended.
    pub fn end(self) -> Ended {
        let first = match self.run.try_lock() {
            Ok(run) => match &*run {
                Some(Ok(sandbox)) => sandbox.first_process(),
                _ => None,
            },
            // Being started still: nothing can be proven of it.
            Err(_) => None,
        };
        drop(self);
        Ended { first }
    }

    /// The run's sandbox, started on first use.
    async fn run_sandbox(&self) -> io::Result<Arc<isolated::RunSandbox>> {
        let Some(maker) = self.sandbox.maker.as_deref() else {
            return Err(io::Error::other("no sandbox under this tier"));
        };
        let cwd = self
            .mounts
            .root
            .clone()
            .unwrap_or_else(|| PathBuf::from("/"));
        let mut run = self.run.lock().await;
        match &*run {
            Some(Ok(sandbox)) if !sandbox.is_ended() => return Ok(sandbox.clone()),
            Some(Err(e)) => return Err(io::Error::other(e.clone())),
            // Ended while the run goes on (killed whole when its supervisor could not kill a
            // fork bomb): a new one, with the same mounts (the workspace and the run's folders
            // are the host's, and stay as they were), once the old one is gone.
            Some(Ok(ended)) => ended.gone_within(SANDBOX_GONE_WAIT).await,
            None => {}
        }
        let started = isolated::RunSandbox::start(maker, &self.mounts, &cwd)
            .await
            .map(Arc::new)
            .map_err(|e| e.to_string());
        *run = Some(started.clone());
        started.map_err(io::Error::other)
    }
}

/// A run's scratch folders, removed on drop: `home/` (the commands' `HOME`), `tmp/` (their
/// `TMPDIR`, and `/tmp` under `isolated`) and `logs/` (bash's full-output files), in a folder
/// whose name holds its owner ([`stale::create_owned`]) so that a later harness can remove it if
/// this one is killed. Taken from the idle folders of ended runs when there are ([`pool`]):
/// [`Scratch::recycle`] gives them back.
#[derive(Debug)]
pub struct Scratch {
    /// Locked only to hold the sandbox's mount points ([`Scratch::hold_mount_points`]).
    folder: Mutex<Option<pool::RunFolder>>,
    root: PathBuf,
    home: PathBuf,
    tmp: PathBuf,
    logs: PathBuf,
}

/// The file name prefix of scratch folders (`harness-run-XXXXXX.<owner>`).
pub const SCRATCH_PREFIX: &str = "harness-run-";

/// The folders in a scratch folder.
const SCRATCH_FOLDERS: &[&str] = &["home", "tmp", "logs"];

/// The idle scratch folders of ended runs.
static IDLE_SCRATCH: pool::FolderPool = pool::FolderPool::new();

impl Scratch {
    /// Scratch folders in the system temp folder.
    pub fn new() -> io::Result<Scratch> {
        Self::new_in(&std::env::temp_dir())
    }

    /// Scratch folders in `dir`, the folder where the run's other folders (its workspace) are
    /// made too: an ended run's, emptied, or fresh ones.
    pub fn new_in(dir: &Path) -> io::Result<Scratch> {
        let base = dir.canonicalize()?;
        let folder = match IDLE_SCRATCH.take(&base, SCRATCH_PREFIX, SCRATCH_FOLDERS) {
            Some(folder) => folder,
            // Owned from the first moment: a harness killed from here on leaves a folder the
            // next one can prove dead.
            None => pool::RunFolder::create(&base, SCRATCH_PREFIX, SCRATCH_FOLDERS, None)?,
        };
        Ok(Scratch {
            root: folder.root().to_path_buf(),
            home: folder.child("home"),
            tmp: folder.child("tmp"),
            logs: folder.child("logs"),
            folder: Mutex::new(Some(folder)),
        })
    }

    /// Makes the mount points `names` in `tmp/`, the run's private `/tmp` under `isolated`,
    /// for the sandbox to mount the run's folders on, and keeps them for the next run of these
    /// folders ([`pool::RunFolder::hold`]), this folder's own first (so that the other,
    /// different from run to run, is the last made or renamed, as in a new folder). The
    /// sandbox makes any that are missing.
    fn hold_mount_points(&self, names: &[OsString]) {
        let own = self.root.file_name();
        let mut names: Vec<&OsStr> = names.iter().map(OsString::as_os_str).collect();
        names.sort_by_key(|name| Some(*name) != own);
        let mut folder = self.folder.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(folder) = folder.as_mut() {
            let _ = folder.hold("tmp", &names);
        }
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    pub fn tmp(&self) -> &Path {
        &self.tmp
    }

    pub fn logs(&self) -> &Path {
        &self.logs
    }

    /// Ends the run's use of the folders: given back, emptied, for a later run when every
    /// process of the run has `ended` ([`Ended::everything_ended`]: nothing can write in them
    /// any more); removed otherwise.
    pub fn recycle(self, ended: bool) {
        let folder = self.folder.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(folder) = folder {
            if ended {
                IDLE_SCRATCH.give_back(folder);
            } else {
                folder.remove();
            }
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let folder = self
            .folder
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(folder) = folder {
            folder.remove();
        }
    }
}

/// Removes the idle folders of ended runs (the workspace folders are [`crate::workspace`]'s): a
/// suite's end.
pub fn remove_idle_scratch() {
    IDLE_SCRATCH.drain();
}

/// How a run's jail ended ([`Jail::end`]): what proves that every process of the run has.
#[derive(Debug)]
pub struct Ended {
    /// A pidfd of the first process of the run's sandbox (PID 1 of its PID namespace).
    first: Option<OwnedFd>,
}

impl Ended {
    /// Whether every process the run's commands started is known to have ended, waiting at most
    /// `within`: only under `isolated` with the harness's own sandbox maker, whose sandbox's
    /// first process ends after every other process of its PID namespace (the kernel's). Outside
    /// a PID namespace a process can outlive its tag search, and bubblewrap's end says nothing
    /// of its sandbox's: never there. Blocks.
    pub fn everything_ended(&self, within: std::time::Duration) -> bool {
        let Some(first) = &self.first else {
            return false;
        };
        let mut fds = [rustix::event::PollFd::new(
            first,
            rustix::event::PollFlags::IN,
        )];
        let within = rustix::event::Timespec {
            tv_sec: within.as_secs().try_into().unwrap_or(i64::MAX),
            tv_nsec: within.subsec_nanos().into(),
        };
        loop {
            match rustix::event::poll(&mut fds, Some(&within)) {
                Ok(n) => return n > 0,
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => return false,
            }
        }
    }
}

/// The maker of run sandboxes: the harness's own where it can make namespaces (unless
/// [`MAKER_VAR`] asks for bubblewrap), else bubblewrap, with a notice saying why; the error says
/// why neither works.
fn pick_maker(bwrap: bool) -> Result<(Maker, Option<String>), String> {
    let supervisor = supervisor_binary().ok_or_else(|| {
        "sandbox: the harness binary, which makes and supervises each run's sandbox, was not \
         found (the library is used from another program); run the `harness` binary"
            .to_owned()
    })?;
    let own = if bwrap {
        Err(format!("{MAKER_VAR}=bwrap asks for bubblewrap"))
    } else {
        let (hide, keep) = (hidden_home(), kept_under_home());
        let probe = bwrap::Plan {
            hide: hide.clone(),
            keep: keep.clone(),
            mounts: bwrap::Mounts::default(),
            cwd: PathBuf::from("/"),
        };
        zygote::shared(&supervisor, &probe).map(|zygote| Maker::Harness { zygote, hide, keep })
    };
    match own {
        Ok(maker) => Ok((maker, None)),
        Err(own_why) => {
            let maker = probe_bwrap(supervisor)
                .map(Maker::Bwrap)
                .map_err(|why| format!("sandbox: {own_why}, and {why}"))?;
            // Asked for: nothing to say. Else the runs are as isolated, only slower to start.
            let notice = (!bwrap).then(|| {
                format!(
                    "sandbox: {own_why}; bubblewrap makes each run's sandbox instead (the same \
                     isolation, a few milliseconds more per run)"
                )
            });
            Ok((maker, notice))
        }
    }
}

/// Finds bubblewrap and checks that it can make a sandbox here; the error says why not and how
/// to fix it.
fn probe_bwrap(supervisor: PathBuf) -> Result<bwrap::Bwrap, String> {
    let path = std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("bwrap"))
                .find(|c| c.is_file())
        })
        .ok_or_else(|| {
            "bubblewrap (`bwrap`) is not installed, so commands cannot be isolated \
             (install it: `apt-get install bubblewrap`, `dnf install bubblewrap` or \
             `pacman -S bubblewrap`)"
                .to_owned()
        })?;
    let bwrap = bwrap::Bwrap {
        path,
        supervisor,
        hide: hidden_home(),
        keep: kept_under_home(),
    };
    let mut args = bwrap.args(&bwrap::Mounts::default(), Path::new("/"));
    args.extend(["--".into(), "true".into()]);
    // An own child while it runs: no reaper of orphans may take its exit status.
    let own = process::own_children();
    let out = std::process::Command::new(&bwrap.path)
        .args(&args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("bubblewrap could not be started: {e}"))?;
    drop(own);
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        return Err(format!(
            "bubblewrap cannot create its namespaces here ({why}); allow unprivileged \
             user namespaces (`sysctl kernel.unprivileged_userns_clone=1`, or an AppArmor \
             profile for bwrap) or run where that is allowed"
        ));
    }
    Ok(bwrap)
}

/// Set by the `harness` binary's `main` ([`this_is_the_harness_binary`]).
static OWN_BINARY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Says that this program is the `harness` binary, whatever its file is called (installed as
/// `harness-0.3`, say): it makes and supervises the run sandboxes itself.
pub fn this_is_the_harness_binary() {
    OWN_BINARY.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// The harness binary, which runs as the supervisor of each run's sandbox: this program when it
/// is the `harness` binary, else (tests and benchmarks of the library) the `harness` binary cargo
/// builds beside it (`target/<profile>/harness`, one folder above `deps/`).
fn supervisor_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    if OWN_BINARY.load(std::sync::atomic::Ordering::Relaxed)
        || exe.file_name().is_some_and(|n| n == "harness")
    {
        return Some(exe);
    }
    let dir = exe.parent()?;
    [dir.join("harness"), dir.parent()?.join("harness")]
        .into_iter()
        .find(|p| p.is_file())
}

/// The host's home folder, to hide under `isolated` (not `/`, not a missing folder).
fn hidden_home() -> Option<PathBuf> {
    let home = PathBuf::from(std::env::var_os("HOME")?);
    let home = home.canonicalize().ok()?;
    (home != Path::new("/") && home.is_dir()).then_some(home)
}

/// What must stay readable under the hidden home: the toolchain homes, and for each PATH entry
/// under it the home's folder that holds it (`~/.pyenv` for `~/.pyenv/shims`: a shim needs the
/// rest of its tool).
fn kept_under_home() -> Vec<PathBuf> {
    let Some(home) = hidden_home() else {
        return Vec::new();
    };
    let mut keep: Vec<PathBuf> = Vec::new();
    let base = env::base_env(std::env::vars());
    for (k, v) in &base {
        let dirs: Vec<PathBuf> = if k == "PATH" {
            std::env::split_paths(v).collect()
        } else if env::TOOLCHAIN_HOMES.iter().any(|(name, _)| name == k) {
            vec![PathBuf::from(v)]
        } else {
            continue;
        };
        for d in dirs {
            let Ok(real) = d.canonicalize() else {
                continue;
            };
            let Ok(rest) = real.strip_prefix(&home) else {
                continue;
            };
            let Some(first) = rest.components().next() else {
                continue;
            };
            let top = home.join(first);
            if !keep.contains(&top) {
                keep.push(top);
            }
        }
    }
    keep.sort();
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_have_names() {
        assert_eq!(Tier::Isolated.name(), "isolated");
        assert_eq!(Sandbox::none().name(), "none");
        assert_eq!(Sandbox::without_bwrap(Tier::Isolated).name(), "workspace");
        assert_eq!(Sandbox::detect(Some(Tier::Workspace)).name(), "workspace");
        assert!(Sandbox::detect(Some(Tier::None)).notice().is_none());
    }

    #[test]
    fn a_jail_confines_only_when_the_tier_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = Sandbox::without_bwrap(Tier::Workspace).jail(&root);
        assert!(ws.check_path(&root.join("a/b.txt")).is_ok());
        let err = ws.check_path(Path::new("/etc/passwd")).unwrap_err();
        assert_eq!(err.path, PathBuf::from("/etc/passwd"));
        assert!(
            err.to_string()
                .starts_with("Access denied: /etc/passwd is outside")
        );
        let none = Sandbox::none().jail(&root);
        assert!(none.check_path(Path::new("/etc/passwd")).is_ok());
        assert!(Jail::unconfined().check_path(Path::new("/etc")).is_ok());
    }

    #[test]
    fn scratch_folders_exist_and_go_away() {
        let s = Scratch::new().unwrap();
        let root = s.path().to_path_buf();
        assert!(s.home().is_dir() && s.tmp().is_dir() && s.logs().is_dir());
        drop(s);
        assert!(!root.exists());
    }
}
