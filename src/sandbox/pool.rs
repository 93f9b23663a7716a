//! Run folders given back once their run has ended, emptied, for the next run to take instead of
//! making its own: a run's workspace folder (`harness-<task>-…/work`) and its scratch folders
//! (`harness-run-…/{home,tmp,logs}`).
//!
//! Making and removing folders is most of what a short run costs the file system, and on some
//! it is far from cheap: ext4 without a journal (this project's CI machines) will not reuse an
//! inode freed in the last minute or more, and every new file or folder scans past each of those
//! first, so a suite that makes and removes a dozen folders per run makes every later creation
//! slower (`benches/README.md`, `sandbox_overhead`). A folder taken from here is renamed, not
//! made; one given back is emptied, not removed.
//!
//! A folder comes back only when nothing can write into it any more: every process of its run
//! has ended (under `isolated`, the run's PID namespace is gone: [`super::Ended`]), so what the
//! run's commands left is all there is, and emptying it is final. And only as it was made: each
//! folder (the private one and those in it) keeps the owner, mode and extended attributes (ACLs
//! among them) it had when made, the private folder holds those folders alone, and each is
//! emptied; otherwise it is removed, as without a pool. A command that `chmod`s its `HOME` or
//! sets a default ACL on `/tmp` leaves nothing to the next run.
//!
//! The idle folders stay owned by this harness (their names keep the owner), so a harness killed
//! with some idle leaves them to the next one's cleanup ([`super::stale`]); [`FolderPool::drain`]
//! removes them when a suite ends.
//!
//! Depends on [`super::stale`] (owned names, removal).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The most idle folders one pool keeps; more go.
const MAX_IDLE: usize = 64;

/// What a folder was when made: its owner, type and mode, its size, and its
/// extended attributes. The size matters: a folder that once held many entries stays larger on
/// most file systems, and ext4 then lists what it holds in hash order instead of the order it
/// was made in, so a copy made in it would list differently from one made in a new folder (and
/// a replay would diverge).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    uid: u32,
    gid: u32,
    mode: u32,
    size: i64,
    xattrs: Vec<u8>,
}

impl Stamp {
    /// `path` as it is now (not following a symlink).
    pub fn of(path: &Path) -> io::Result<Stamp> {
        let st = rustix::fs::lstat(path)?;
        Ok(Stamp {
            uid: st.st_uid,
            gid: st.st_gid,
            mode: st.st_mode,
            size: st.st_size,
            xattrs: xattr_names(path)?,
        })
    }
}

/// The names of the extended attributes of `path` (not following a symlink), as the kernel
/// lists them.
fn xattr_names(path: &Path) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; 256];
    loop {
        match rustix::fs::llistxattr(path, &mut buf) {
            Ok(n) => {
                buf.truncate(n);
                return Ok(buf);
            }
            Err(rustix::io::Errno::RANGE) if buf.len() < 1 << 20 => {
                let grown = buf.len() * 4;
                buf.resize(grown, 0);
            }
            // A file system without extended attributes: none.
            Err(rustix::io::Errno::NOTSUP) => return Ok(Vec::new()),
            Err(e) => return Err(e.into()),
        }
    }
}

/// A run's private folder: `root` (canonical, owned: see [`super::stale`]), holding the folders
/// `children`, each as stamped when made. Dropped, it stays on disk: its holder removes it
/// ([`RunFolder::remove`]) or gives it back ([`FolderPool::give_back`]).
#[derive(Debug)]
pub struct RunFolder {
    root: PathBuf,
    prefix: String,
    children: &'static [&'static str],
    stamps: Vec<Stamp>,
}

impl RunFolder {
    /// A new private folder `<prefix>XXXXXX.<owner>` in `base` with the empty folders
    /// `children` in it, each `mode`.
    pub fn create(
        base: &Path,
        prefix: &str,
        children: &'static [&'static str],
        mode: Option<u32>,
    ) -> io::Result<RunFolder> {
        let dir = super::stale::create_owned_in(prefix, base)?;
        let root = dir.keep();
        let made = (|| {
            let root = root.canonicalize()?;
            for child in children {
                let path = root.join(child);
                std::fs::create_dir(&path)?;
                if let Some(mode) = mode {
                    set_mode(&path, mode)?;
                }
            }
            if let Some(mode) = mode {
                set_mode(&root, mode)?;
            }
            Ok(root)
        })();
        let root = match made {
            Ok(root) => root,
            Err(e) => {
                super::stale::remove_settled(&root);
                return Err(e);
            }
        };
        let mut folder = RunFolder {
            root,
            prefix: prefix.to_owned(),
            children,
            stamps: Vec::new(),
        };
        match folder.stamp() {
            Ok(stamps) => {
                folder.stamps = stamps;
                Ok(folder)
            }
            Err(e) => {
                folder.remove();
                Err(e)
            }
        }
    }

    /// The private folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder `name` of [`RunFolder::create`]'s `children` in it.
    pub fn child(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// Stamps of the private folder and each child, in that order.
    fn stamp(&self) -> io::Result<Vec<Stamp>> {
        std::iter::once(self.root.clone())
            .chain(self.children.iter().map(|c| self.root.join(c)))
            .map(|p| Stamp::of(&p))
            .collect()
    }

    /// Empties each child; whether the folder is then as it was made: the private folder holds
    /// its children alone, and every stamp is unchanged.
    fn empty_as_made(&self) -> bool {
        // Each still a folder of the owner and mode it was made with, before anything in it is
        // touched (the size is that of a folder in use yet).
        let before = match self.stamp() {
            Ok(now) => now,
            Err(_) => return false,
        };
        let same_kind = |a: &Stamp, b: &Stamp| (a.uid, a.gid, a.mode) == (b.uid, b.gid, b.mode);
        if before.len() != self.stamps.len()
            || !before
                .iter()
                .zip(&self.stamps)
                .all(|(a, b)| same_kind(a, b))
        {
            return false;
        }
        for child in self.children {
            if !empty(&self.root.join(child)) {
                return false;
            }
        }
        let only_children = match std::fs::read_dir(&self.root) {
            Ok(entries) => {
                let mut n = 0;
                for entry in entries {
                    match entry {
                        Ok(e) if self.children.iter().any(|c| e.file_name() == *c) => n += 1,
                        _ => return false,
                    }
                }
                n == self.children.len()
            }
            Err(_) => false,
        };
        only_children && self.stamp().ok().as_ref() == Some(&self.stamps)
    }

    /// The private folder, left as it is on disk (no longer this harness's to remove).
    pub fn into_root(self) -> PathBuf {
        self.root
    }

    /// Removes the folder and everything in it.
    pub fn remove(self) {
        super::stale::remove_settled(&self.root);
    }
}

/// Removes everything in the folder `dir`; whether that worked. Never through a symlink: not at
/// `dir` itself (one there is no folder, and fails), nor anywhere under it.
fn empty(dir: &Path) -> bool {
    super::remove::empty_tree(dir, super::remove::Access::AsItIs).is_ok()
}

fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Idle run folders of one kind.
#[derive(Debug)]
pub struct FolderPool {
    idle: Mutex<Vec<RunFolder>>,
}

impl Default for FolderPool {
    fn default() -> Self {
        Self::new()
    }
}

impl FolderPool {
    pub const fn new() -> FolderPool {
        FolderPool {
            idle: Mutex::new(Vec::new()),
        }
    }

    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<RunFolder>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An idle folder in `base` with `children`, named with `prefix`: one of that name if there
    /// is one, else another renamed (`<prefix>XXXXXX.<owner>`). `None` when none is idle (or
    /// the rename failed; that folder then goes).
    pub fn take(
        &self,
        base: &Path,
        prefix: &str,
        children: &'static [&'static str],
    ) -> Option<RunFolder> {
        let mut folder = {
            let mut idle = self.idle();
            let fits = |f: &RunFolder| f.root.parent() == Some(base) && f.children == children;
            let at = idle
                .iter()
                .rposition(|f| fits(f) && f.prefix == prefix)
                .or_else(|| idle.iter().rposition(fits))?;
            idle.swap_remove(at)
        };
        if folder.prefix != prefix {
            match super::stale::rename_owned(&folder.root, prefix) {
                Ok(renamed) => {
                    folder.root = renamed;
                    folder.prefix = prefix.to_owned();
                }
                Err(_) => {
                    folder.remove();
                    return None;
                }
            }
        }
        Some(folder)
    }

    /// Takes back `folder`, whose run has ended with every process it started (nothing can
    /// write into it any more): emptied and kept when it is as it was made, removed otherwise.
    pub fn give_back(&self, folder: RunFolder) {
        if folder.empty_as_made() {
            let mut idle = self.idle();
            if idle.len() < MAX_IDLE {
                idle.push(folder);
                return;
            }
        }
        folder.remove();
    }

    /// Removes every idle folder.
    pub fn drain(&self) {
        let idle = std::mem::take(&mut *self.idle());
        for folder in idle {
            folder.remove();
        }
    }

    /// How many folders are idle.
    pub fn len(&self) -> usize {
        self.idle().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIDS: &[&str] = &["a", "b"];

    fn made(base: &Path, prefix: &str) -> RunFolder {
        RunFolder::create(base, prefix, KIDS, None).unwrap()
    }

    #[test]
    fn a_folder_given_back_clean_is_emptied_and_taken_again_under_its_name_or_renamed() {
        let base = tempfile::tempdir().unwrap();
        let base = base.path().canonicalize().unwrap();
        let pool = FolderPool::new();
        let folder = made(&base, "harness-one-");
        let root = folder.root().to_path_buf();
        std::fs::create_dir_all(folder.child("a").join("deep/er")).unwrap();
        std::fs::write(folder.child("a").join("deep/er/f"), "x").unwrap();
        let canary = tempfile::tempdir().unwrap();
        std::fs::write(canary.path().join("keep"), "x").unwrap();
        std::os::unix::fs::symlink(canary.path(), folder.child("b").join("link")).unwrap();
        pool.give_back(folder);
        assert_eq!(pool.len(), 1);
        assert!(std::fs::read_dir(root.join("a")).unwrap().next().is_none());
        assert!(std::fs::read_dir(root.join("b")).unwrap().next().is_none());
        assert!(
            canary.path().join("keep").exists(),
            "a symlink is removed, not followed"
        );

        // The same name: the same folder, not renamed.
        let again = pool.take(&base, "harness-one-", KIDS).unwrap();
        assert_eq!(again.root(), root);
        pool.give_back(again);

        // Another name: the folder renamed, with the owner still in its name.
        let other = pool.take(&base, "harness-two-", KIDS).unwrap();
        let name = other
            .root()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(name.starts_with("harness-two-"), "{name}");
        assert_eq!(
            crate::sandbox::stale::Owner::from_name(&name).map(|o| o.pid),
            Some(std::process::id()),
        );
        assert!(!root.exists() && other.root().join("a").is_dir());
        assert!(pool.is_empty());
        // Another base, or other children: nothing to take.
        pool.give_back(other);
        assert!(pool.take(Path::new("/"), "harness-two-", KIDS).is_none());
        assert!(pool.take(&base, "harness-two-", &["a"]).is_none());
        pool.drain();
        assert!(pool.is_empty());
        assert_eq!(std::fs::read_dir(&base).unwrap().count(), 0, "drained");
    }

    #[test]
    fn a_folder_not_as_made_is_removed_not_kept() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().unwrap();
        let base = base.path().canonicalize().unwrap();
        let pool = FolderPool::new();
        // What a symlink swapped in points to: never emptied.
        let canary = tempfile::tempdir().unwrap();
        std::fs::write(canary.path().join("keep"), "x").unwrap();
        let target = canary.path().to_path_buf();
        type Change = Box<dyn Fn(&RunFolder)>;
        let changes: Vec<(&str, Change)> = vec![
            (
                "a child's mode",
                Box::new(|f| {
                    std::fs::set_permissions(f.child("a"), std::fs::Permissions::from_mode(0o777))
                        .unwrap()
                }),
            ),
            (
                "an entry beside the children",
                Box::new(|f| std::fs::write(f.root().join("extra"), "x").unwrap()),
            ),
            (
                "a child replaced by a symlink",
                Box::new(move |f| {
                    std::fs::remove_dir(f.child("b")).unwrap();
                    std::os::unix::fs::symlink(&target, f.child("b")).unwrap();
                }),
            ),
            (
                "a child gone",
                Box::new(|f| std::fs::remove_dir(f.child("b")).unwrap()),
            ),
        ];
        for (what, change) in changes {
            let folder = made(&base, "harness-x-");
            let root = folder.root().to_path_buf();
            change(&folder);
            pool.give_back(folder);
            assert!(pool.is_empty(), "{what}: kept");
            assert!(!root.exists(), "{what}: not removed");
        }
        assert!(canary.path().join("keep").exists(), "followed a symlink");
        // A folder that held many entries stays larger on most file systems: not as made.
        let folder = made(&base, "harness-x-");
        let root = folder.root().to_path_buf();
        let names: Vec<_> = (0..400)
            .map(|i| {
                folder
                    .child("a")
                    .join(format!("file-with-a-long-name-{i:04}"))
            })
            .collect();
        for name in &names {
            std::fs::write(name, "").unwrap();
        }
        // The last one stays, for the pool to empty.
        for name in &names[..names.len() - 1] {
            std::fs::remove_file(name).unwrap();
        }
        let grown = Stamp::of(&folder.child("a")).unwrap().size
            > Stamp::of(&folder.child("b")).unwrap().size;
        pool.give_back(folder);
        assert_eq!(
            pool.is_empty(),
            grown,
            "kept a grown folder, or not a clean one"
        );
        assert_eq!(root.exists(), !grown);
        pool.drain();
        // An extended attribute, where the file system takes user attributes.
        let folder = made(&base, "harness-x-");
        let root = folder.root().to_path_buf();
        let set = rustix::fs::setxattr(
            folder.child("a").as_path(),
            "user.mark",
            b"1",
            rustix::fs::XattrFlags::empty(),
        );
        pool.give_back(folder);
        if set.is_ok() {
            assert!(pool.is_empty() && !root.exists(), "an xattr: kept");
        } else {
            assert_eq!(pool.len(), 1);
            pool.drain();
        }
    }
}
