//! The sandbox: everything about what the agent can reach. It owns process spawning for the
//! agent's commands (bash calls and checks), the sandbox tiers, process-tree cleanup, output
//! capping, the commands' environment, the harness's own secrets, and path confinement for the
//! file tools.
//!
//! Tiers ([`Tier`], `--sandbox`):
//!
//! * `isolated` (the default wherever bubblewrap works): commands run under `bwrap` with no
//!   network, their own PID, mount, IPC, UTS and user namespaces and no capabilities; the file
//!   system is read-only except the workspace, the run's `HOME` and a private `/tmp`; `/run` and
//!   the host's home folder are hidden (toolchains under it stay readable); `/proc` shows only
//!   the sandbox's own processes. The file tools are confined as under `workspace`.
//! * `workspace`: the file tools refuse paths that resolve (after symlinks) outside the
//!   workspace; commands are not isolated.
//! * `none`: Pi's behaviour, nothing confined.
//!
//! In every tier commands get an allow-listed environment ([`env`]), every process a command
//! starts is killed when it ends ([`process`]), and output is capped ([`output`]).
//!
//! This module sits below `tools` and depends on nothing else in the crate.

pub mod confine;
pub mod env;
pub mod output;
pub mod process;
pub mod secrets;
pub mod stale;

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use process::{CommandSpec, Spawned};

/// How much the agent's commands and tools are confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Tier {
    /// bubblewrap: no network, own namespaces, only the workspace writable; file tools confined.
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

/// The sandbox of one invocation: the tier in force, bubblewrap when isolating, and the tags of
/// the processes started under it. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Sandbox {
    tier: Tier,
    bwrap: Option<Arc<process::Bwrap>>,
    notice: Option<String>,
    tags: Arc<process::Tags>,
}

impl Sandbox {
    /// The sandbox for `requested` (`None`: the default, `isolated` where bubblewrap works).
    /// `isolated` falls back to `workspace` when bubblewrap is missing or cannot create its
    /// namespaces here; [`Sandbox::notice`] then says why and how to fix it.
    pub fn detect(requested: Option<Tier>) -> Sandbox {
        let wanted = requested.unwrap_or(Tier::Isolated);
        if wanted != Tier::Isolated {
            return Sandbox::without_bwrap(wanted);
        }
        match probe_bwrap() {
            Ok(bwrap) => Sandbox {
                tier: Tier::Isolated,
                bwrap: Some(Arc::new(bwrap)),
                notice: None,
                tags: Arc::new(process::Tags::new()),
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
            bwrap: None,
            notice: None,
            tags: Arc::new(process::Tags::new()),
        }
    }

    /// Pi's behaviour: nothing confined (commands are still cleaned up and capped).
    pub fn none() -> Sandbox {
        Sandbox::without_bwrap(Tier::None)
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
        Jail {
            sandbox: self.clone(),
            mounts: process::Mounts {
                root: Some(root.to_path_buf()),
                ..Default::default()
            },
        }
    }

    /// Kills every process any command of this sandbox started that is still running (for the
    /// end of the harness; each command's own end already kills its processes).
    pub fn kill_all(&self) {
        self.tags.kill_everything();
    }
}

/// The confinement of one run (or one `harness tool` call): the workspace root, the run's
/// scratch folders, and the sandbox. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Jail {
    sandbox: Sandbox,
    mounts: process::Mounts,
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
            mounts: process::Mounts::default(),
        }
    }

    /// This jail with the run's scratch folders: commands write `HOME` there and, under
    /// `isolated`, see its `tmp/` as their private `/tmp`; bash's full-output files (`logs/`)
    /// stay readable by the commands and the file tools, so Pi's "Full output: …" notice can be
    /// followed.
    pub fn with_scratch(mut self, scratch: &Scratch) -> Jail {
        self.mounts.home = Some(scratch.home().to_path_buf());
        self.mounts.tmp = Some(scratch.tmp().to_path_buf());
        self.mounts.logs = Some(scratch.logs().to_path_buf());
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

    /// Whether `TMPDIR` should be `/tmp` (isolated: the run's tmp folder is mounted there).
    pub fn tmp_is_private(&self) -> bool {
        self.sandbox.bwrap.is_some()
    }

    /// `Ok` when a file tool may use `abs`: always under `none`; otherwise only if it resolves
    /// (symlinks followed) inside the workspace or the run's bash output folder.
    pub fn check_path(&self, abs: &Path) -> Result<(), OutsideWorkspace> {
        let Some(root) = &self.mounts.root else {
            return Ok(());
        };
        if self.sandbox.tier == Tier::None {
            return Ok(());
        }
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
        Err(OutsideWorkspace {
            path: abs.to_path_buf(),
            root: root.clone(),
            tier: self.sandbox.tier,
        })
    }

    /// Spawns `spec` under this jail's tier (inside bubblewrap when isolating).
    pub fn spawn(&self, spec: CommandSpec<'_>) -> io::Result<Spawned> {
        let bwrap = self.sandbox.bwrap.as_deref().map(|b| (b, &self.mounts));
        process::spawn(spec, bwrap, &self.sandbox.tags)
    }
}

/// A run's scratch folders, removed on drop: `home/` (the commands' `HOME`), `tmp/` (their
/// `TMPDIR`, and `/tmp` under `isolated`) and `logs/` (bash's full-output files), in a folder
/// whose name holds its owner ([`stale::create_owned`]) so that a later harness can remove it if
/// this one is killed.
#[derive(Debug)]
pub struct Scratch {
    dir: tempfile::TempDir,
    home: PathBuf,
    tmp: PathBuf,
    logs: PathBuf,
}

/// The file name prefix of scratch folders (`harness-run-XXXXXX.<owner>`).
pub const SCRATCH_PREFIX: &str = "harness-run-";

impl Scratch {
    /// Fresh scratch folders in the system temp folder.
    pub fn new() -> io::Result<Scratch> {
        // Owned from the first moment: a harness killed from here on leaves a folder the next
        // one can prove dead.
        let dir = stale::create_owned(SCRATCH_PREFIX)?;
        let root = dir.path().canonicalize()?;
        let [home, tmp, logs] = ["home", "tmp", "logs"].map(|d| root.join(d));
        for d in [&home, &tmp, &logs] {
            std::fs::create_dir(d)?;
        }
        Ok(Scratch {
            dir,
            home,
            tmp,
            logs,
        })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
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
}

/// Finds bubblewrap and checks that it can make a sandbox here; the error says why not and how
/// to fix it.
fn probe_bwrap() -> Result<process::Bwrap, String> {
    let path = std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("bwrap"))
                .find(|c| c.is_file())
        })
        .ok_or_else(|| {
            "sandbox: bubblewrap (`bwrap`) is not installed, so commands cannot be isolated \
             (install it: `apt-get install bubblewrap`, `dnf install bubblewrap` or \
             `pacman -S bubblewrap`)"
                .to_owned()
        })?;
    let bwrap = process::Bwrap {
        path,
        hide: hidden_home(),
        keep: kept_under_home(),
    };
    let mut args = bwrap.args(&process::Mounts::default(), Path::new("/"));
    args.extend(["--".into(), "true".into()]);
    // An own child while it runs: no reaper of orphans may take its exit status.
    let own = process::own_children();
    let out = std::process::Command::new(&bwrap.path)
        .args(&args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("sandbox: bubblewrap could not be started: {e}"))?;
    drop(own);
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        return Err(format!(
            "sandbox: bubblewrap cannot create its namespaces here ({why}); allow unprivileged \
             user namespaces (`sysctl kernel.unprivileged_userns_clone=1`, or an AppArmor \
             profile for bwrap) or run where that is allowed"
        ));
    }
    Ok(bwrap)
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
