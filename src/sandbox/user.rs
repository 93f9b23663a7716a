//! The unprivileged user a harness running as root runs the agent's commands as, outside
//! `isolated`: root can read any process's memory (`CAP_SYS_PTRACE` passes over non-dumpable),
//! so a root command could read the keys the harness holds; `nobody` cannot.
//!
//! What that takes: the run's workspace and its `HOME` and `TMPDIR` handed to the user (the
//! workspace is a throwaway copy; its files are given to the user, and the private folders
//! above it opened for passing through, never for listing), files and folders the file tools
//! create handed over too (so a later `bash` can change them), and a word up front about
//! toolchain folders the user cannot reach (a `~/.cargo` under a `/root` closed to others).
//!
//! Depends on nothing else in the crate.

use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A user (and group) commands run as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandUser {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

impl CommandUser {
    /// `nobody` as `/etc/passwd` has it (65534:65534 where it is missing).
    pub fn nobody() -> CommandUser {
        let found = nix::unistd::User::from_name("nobody").ok().flatten();
        match found {
            Some(user) => CommandUser {
                name: user.name,
                uid: user.uid.as_raw(),
                gid: user.gid.as_raw(),
            },
            None => CommandUser {
                name: "nobody".to_owned(),
                uid: 65534,
                gid: 65534,
            },
        }
    }

    fn uid(&self) -> rustix::fs::Uid {
        rustix::fs::Uid::from_raw(self.uid)
    }

    fn gid(&self) -> rustix::fs::Gid {
        rustix::fs::Gid::from_raw(self.gid)
    }

    /// Gives `root` and everything under it to this user (symlinks themselves, never what they
    /// point to), and lets others pass through (not list) `root`'s parent folder, the private
    /// temporary folder the workspace sits in.
    pub fn take_workspace(&self, root: &Path) -> io::Result<()> {
        self.chown_tree(root)?;
        if let Some(parent) = root.parent() {
            pass_through(parent)?;
        }
        Ok(())
    }

    /// Gives the run's `HOME` and `TMPDIR` folders to this user and lets others pass through
    /// their private parent (where bash's full-output files are, readable by all).
    pub fn take_scratch(&self, parent: &Path, own: &[&Path]) -> io::Result<()> {
        pass_through(parent)?;
        for dir in own {
            self.chown(dir)?;
        }
        Ok(())
    }

    /// Gives what `fd` refers to (a file or folder the file tools made) to this user, when it is
    /// the harness's own.
    pub fn take_fd(&self, fd: std::os::fd::BorrowedFd<'_>) -> io::Result<()> {
        let st = rustix::fs::fstat(fd)?;
        if st.st_uid == rustix::process::geteuid().as_raw() && st.st_uid != self.uid {
            rustix::fs::chownat(
                fd,
                "",
                Some(self.uid()),
                Some(self.gid()),
                rustix::fs::AtFlags::EMPTY_PATH,
            )?;
        }
        Ok(())
    }

    /// Gives `path` itself (not what it points to) to this user.
    pub(crate) fn chown(&self, path: &Path) -> io::Result<()> {
        Ok(rustix::fs::chownat(
            rustix::fs::CWD,
            path,
            Some(self.uid()),
            Some(self.gid()),
            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        )?)
    }

    fn chown_tree(&self, path: &Path) -> io::Result<()> {
        self.chown(path)?;
        if std::fs::symlink_metadata(path)?.is_dir() {
            for entry in std::fs::read_dir(path)? {
                self.chown_tree(&entry?.path())?;
            }
        }
        Ok(())
    }

    /// The folders of `dirs` this user cannot reach (each once), each with the folder on the way
    /// that is closed to it (no search permission for its class: owner, group or others).
    pub fn unreachable(&self, dirs: &[PathBuf]) -> Vec<(PathBuf, PathBuf)> {
        let mut out: Vec<(PathBuf, PathBuf)> = Vec::new();
        for dir in dirs {
            if out.iter().any(|(d, _)| d == dir) {
                continue;
            }
            if let Some(closed) = self.closed_on_the_way(dir) {
                out.push((dir.clone(), closed));
            }
        }
        out
    }

    fn closed_on_the_way(&self, dir: &Path) -> Option<PathBuf> {
        let real = dir.canonicalize().ok()?;
        let mut steps: Vec<&Path> = real.ancestors().collect();
        steps.reverse();
        steps.into_iter().find_map(|step| {
            let meta = std::fs::metadata(step).ok()?;
            let mode = meta.mode();
            let bit = if meta.uid() == self.uid {
                0o100
            } else if meta.gid() == self.gid {
                0o010
            } else {
                0o001
            };
            (mode & bit == 0).then(|| step.to_path_buf())
        })
    }
}

/// Adds search (`x`) permission for others to the folder `dir`: they may pass through it to a
/// folder of theirs inside, not list it.
fn pass_through(dir: &Path) -> io::Result<()> {
    let mode = std::fs::metadata(dir)?.permissions().mode();
    if mode & 0o001 == 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode | 0o001))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nobody_is_found() {
        let n = CommandUser::nobody();
        assert_eq!(n.name, "nobody");
        assert_ne!(n.uid, 0);
    }

    #[test]
    fn closed_folders_are_unreachable() {
        let dir = tempfile::tempdir().unwrap();
        let closed = dir.path().join("closed");
        let inner = closed.join("bin");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let user = CommandUser {
            name: "someone".into(),
            uid: 54321,
            gid: 54321,
        };
        assert_eq!(
            user.unreachable(&[
                inner.clone(),
                open.clone(),
                inner.clone(),
                dir.path().join("missing")
            ]),
            vec![(inner, closed)]
        );
    }

    #[test]
    fn a_workspace_is_handed_over() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("SKIPPED: a_workspace_is_handed_over needs root (chown)");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("work");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::write(ws.join("src/a.py"), "x").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", ws.join("link")).unwrap();
        let user = CommandUser::nobody();
        user.take_workspace(&ws).unwrap();
        for p in [ws.clone(), ws.join("src"), ws.join("src/a.py")] {
            assert_eq!(std::fs::metadata(&p).unwrap().uid(), user.uid, "{p:?}");
        }
        assert_eq!(
            std::fs::symlink_metadata(ws.join("link")).unwrap().uid(),
            user.uid
        );
        // What the link points to is untouched.
        assert_eq!(std::fs::metadata("/etc/passwd").unwrap().uid(), 0);
        // The private folder above: still the harness's, but others may pass through.
        let parent = std::fs::metadata(dir.path()).unwrap();
        assert_eq!(parent.uid(), 0);
        assert_eq!(parent.mode() & 0o001, 0o001);
    }
}
