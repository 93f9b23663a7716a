//! How a run's sandbox is made: the bubblewrap binary and arguments of the `isolated` tier
//! (namespaces, the read-only root, the hidden home, the run's writable folders and what it may
//! read), and what a command to spawn is ([`CommandSpec`]). Data only; depends on nothing else
//! in the crate.

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// What to run: `shell -c script` in `cwd` with exactly `env` (plus the tag), its stdout and
/// stderr the write ends of the caller's pipes (both the same pipe for merged output).
pub struct CommandSpec<'a> {
    pub shell: &'a Path,
    pub script: &'a str,
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
}

/// How to wrap a command in bubblewrap: the binary and the mounts of the `isolated` tier.
#[derive(Debug, Clone)]
pub(crate) struct Bwrap {
    pub(crate) path: PathBuf,
    /// The harness binary, which runs as each run sandbox's supervisor (bound read-only at its
    /// own path, so that it is there even under the hidden home or the private `/tmp`).
    pub(crate) supervisor: PathBuf,
    /// The host's home folder, hidden behind an empty tmpfs (dotfiles hold credentials).
    pub(crate) hide: Option<PathBuf>,
    /// Folders under the hidden home the commands still need, read-only (toolchains, PATH).
    pub(crate) keep: Vec<PathBuf>,
}

/// The flags that make a sandbox: no network, own PID, mount, IPC, UTS and user namespaces, no
/// capabilities, a new session (no terminal injection), dead with its parent, the first process
/// its PID 1 (the supervisor, which nothing inside can signal).
pub(crate) const ISOLATION_FLAGS: [&str; 7] = [
    "--die-with-parent",
    "--unshare-all",
    "--new-session",
    "--as-pid-1",
    "--cap-drop",
    "ALL",
    "--ro-bind",
];

/// Where a run's commands may write under `isolated`.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Mounts {
    pub(crate) root: Option<PathBuf>,
    pub(crate) home: Option<PathBuf>,
    pub(crate) tmp: Option<PathBuf>,
    /// bash's full-output files, readable (not writable) so the agent can follow Pi's notice.
    pub(crate) logs: Option<PathBuf>,
    /// What the task's `requires.files` names (a shared dependency install, a data set),
    /// visible read-only at its own path even under the hidden home or the private `/tmp`.
    pub(crate) reads: Vec<PathBuf>,
    /// The folder the run's own folders were made in (the temp dir, canonical), which every
    /// run of every harness shares.
    #[serde(default)]
    pub(crate) base: Option<PathBuf>,
}

impl Mounts {
    /// The folders a run's sandbox shows as a read-only tmpfs holding only the mount points of
    /// the run's own folders ([`Mounts::base`]):
    /// - under the private `/tmp` (the temp dir is `/tmp`, the usual case), each run folder the
    ///   workspace, home or logs lie in: otherwise their mount points would be made as folders
    ///   on disk in the run's `/tmp` (file creation and removal on disk cost more than the
    ///   rest of a small run's sandbox on some file systems);
    /// - anywhere else (`TMPDIR=/scratch/job`), the temp dir itself: it would otherwise show
    ///   the folders of the harness's other runs (their workspaces, homes and bash logs) and
    ///   whatever else lies there, as a private `/tmp` hides them. Not a top-level folder
    ///   (`/`, `/var`) nor one that holds the hidden home or `/tmp`, which cannot be hidden.
    ///
    /// Under the hidden home, an empty tmpfs already: nothing to add.
    pub(crate) fn skeletons(&self, hide: Option<&Path>) -> Vec<PathBuf> {
        let Some(base) = &self.base else {
            return Vec::new();
        };
        // Where `/tmp` really is (a link to `/private/tmp`, say): the private `/tmp` is mounted
        // there.
        let real_tmp = Path::new("/tmp").canonicalize();
        let tmp = real_tmp.as_deref().unwrap_or(Path::new("/tmp"));
        if hide.is_some_and(|h| base.starts_with(h)) {
            return Vec::new();
        }
        if !base.starts_with(tmp) {
            let top_level = base.components().count() <= 2;
            let holds_more = tmp.starts_with(base) || hide.is_some_and(|h| h.starts_with(base));
            return if top_level || holds_more {
                Vec::new()
            } else {
                vec![base.clone()]
            };
        }
        let mut folders: Vec<PathBuf> = Vec::new();
        for path in [&self.root, &self.home, &self.logs].into_iter().flatten() {
            let Ok(rest) = path.strip_prefix(base) else {
                continue;
            };
            let mut parts = rest.components();
            let (Some(first), Some(_)) = (parts.next(), parts.next()) else {
                continue;
            };
            let folder = base.join(first);
            if !folders.contains(&folder) {
                folders.push(folder);
            }
        }
        folders
    }
}

/// Everything a run's sandbox is made of, for a maker that is not bubblewrap
/// ([`super::namespaces`]): the mounts bubblewrap would get from [`Bwrap::args`].
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Plan {
    /// The host's home folder, hidden behind an empty tmpfs.
    pub(crate) hide: Option<PathBuf>,
    /// Folders under the hidden home kept readable.
    pub(crate) keep: Vec<PathBuf>,
    pub(crate) mounts: Mounts,
    /// The working folder of the supervisor.
    pub(crate) cwd: PathBuf,
}

impl Bwrap {
    /// bubblewrap's arguments up to (not including) `--`. The order matters: later mounts go
    /// on top of earlier ones.
    pub(crate) fn args(&self, mounts: &Mounts, cwd: &Path) -> Vec<OsString> {
        let mut a: Vec<OsString> = ISOLATION_FLAGS.iter().map(OsString::from).collect();
        a.extend(["/".into(), "/".into()]);
        a.extend([
            "--dev".into(),
            "/dev".into(),
            "--proc".into(),
            "/proc".into(),
        ]);
        if Path::new("/run").is_dir() {
            // Sockets of host services (container daemons, session buses) live there.
            a.extend(["--tmpfs".into(), "/run".into()]);
        }
        if let Some(home) = &self.hide {
            a.extend(["--tmpfs".into(), home.into()]);
            for keep in &self.keep {
                a.extend(["--ro-bind-try".into(), keep.into(), keep.into()]);
            }
        }
        match &mounts.tmp {
            Some(tmp) => a.extend(["--bind".into(), tmp.into(), "/tmp".into()]),
            None => a.extend(["--tmpfs".into(), "/tmp".into()]),
        }
        let skeletons = mounts.skeletons(self.hide.as_deref());
        for at in &skeletons {
            a.extend(["--tmpfs".into(), at.into()]);
        }
        for dir in [&mounts.root, &mounts.home].into_iter().flatten() {
            a.extend(["--bind".into(), dir.into(), dir.into()]);
        }
        if let Some(logs) = &mounts.logs {
            a.extend(["--ro-bind".into(), logs.into(), logs.into()]);
        }
        for read in &mounts.reads {
            a.extend(["--ro-bind-try".into(), read.into(), read.into()]);
        }
        a.extend([
            "--ro-bind".into(),
            self.supervisor.clone().into(),
            self.supervisor.clone().into(),
        ]);
        for at in &skeletons {
            a.extend(["--remount-ro".into(), at.into()]);
        }
        a.extend(["--chdir".into(), cwd.into()]);
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bwrap_mounts_come_in_order() {
        let b = Bwrap {
            path: "bwrap".into(),
            supervisor: "/opt/harness".into(),
            hide: Some("/home/u".into()),
            keep: vec!["/home/u/.cargo".into()],
        };
        let mounts = Mounts {
            root: Some("/tmp/ws".into()),
            home: Some("/tmp/run/home".into()),
            tmp: Some("/tmp/run/tmp".into()),
            logs: Some("/tmp/run/logs".into()),
            reads: vec!["/tmp/suite/deps".into()],
            base: Some("/tmp".into()),
        };
        let args: Vec<String> = b
            .args(&mounts, Path::new("/tmp/ws"))
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let run = if Path::new("/run").is_dir() {
            " --tmpfs /run"
        } else {
            ""
        };
        assert_eq!(
            args.join(" "),
            format!(
                "--die-with-parent --unshare-all --new-session --as-pid-1 --cap-drop ALL --ro-bind / / \
                 --dev /dev --proc /proc{run} --tmpfs /home/u --ro-bind-try /home/u/.cargo /home/u/.cargo \
                 --bind /tmp/run/tmp /tmp --tmpfs /tmp/run --bind /tmp/ws /tmp/ws \
                 --bind /tmp/run/home /tmp/run/home --ro-bind /tmp/run/logs /tmp/run/logs \
                 --ro-bind-try /tmp/suite/deps /tmp/suite/deps --ro-bind /opt/harness /opt/harness \
                 --remount-ro /tmp/run --chdir /tmp/ws"
            )
        );
    }

    fn run_in(base: &str) -> Mounts {
        Mounts {
            root: Some(format!("{base}/harness-t-1/work").into()),
            home: Some(format!("{base}/harness-run-1/home").into()),
            tmp: Some(format!("{base}/harness-run-1/tmp").into()),
            logs: Some(format!("{base}/harness-run-1/logs").into()),
            reads: vec![format!("{base}/deps").into()],
            base: Some(base.into()),
        }
    }

    #[test]
    fn under_the_private_tmp_each_run_folder_is_a_skeleton() {
        let mounts = run_in("/tmp");
        assert_eq!(
            mounts.skeletons(Some(Path::new("/home/u"))),
            [
                PathBuf::from("/tmp/harness-t-1"),
                PathBuf::from("/tmp/harness-run-1")
            ]
        );
        // A folder of the temp dir itself (what `harness tool` confines) needs none.
        let own = Mounts {
            root: Some("/tmp/project".into()),
            base: Some("/tmp".into()),
            ..Mounts::default()
        };
        assert!(own.skeletons(None).is_empty());
        // No run folders, no skeletons.
        assert!(Mounts::default().skeletons(None).is_empty());
    }

    #[test]
    fn a_temp_dir_elsewhere_is_hidden_whole_unless_it_holds_more() {
        let elsewhere = run_in("/scratch/job");
        assert_eq!(
            elsewhere.skeletons(Some(Path::new("/home/u"))),
            [PathBuf::from("/scratch/job")]
        );
        // Under the hidden home: its empty tmpfs hides the rest already.
        assert!(
            run_in("/home/u/tmp")
                .skeletons(Some(Path::new("/home/u")))
                .is_empty()
        );
        // A top-level folder, or one that holds the hidden home or /tmp, cannot be hidden.
        for base in ["/scratch", "/"] {
            assert!(run_in(base).skeletons(None).is_empty(), "{base}");
        }
        assert!(
            run_in("/home/all")
                .skeletons(Some(Path::new("/home/all/u")))
                .is_empty()
        );
    }
}
