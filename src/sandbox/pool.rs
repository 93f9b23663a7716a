//! Run folders given back once their run has ended, emptied, for the next run to take instead of
//! making its own: a run's workspace folder (`harness-<task>-…/work`) and its scratch folders
//! (`harness-run-…/{home,tmp,logs}`).
//!
//! Making and removing folders is most of what a short run costs the file system, and on some
//! it is far from cheap: ext4 without a journal (this project's CI machines) will not reuse an
//! inode freed in the last minute or more, and every new file or folder scans past each of those
//! first, so a suite that makes and removes a dozen folders per run makes every later creation
//! slower (`benches/README.md`, `sandbox_overhead`). A folder taken from here is renamed, not
//! made; one given back is emptied, not removed; and the empty folders a run's sandbox mounts
//! things on, in the run's private `/tmp`, stay for the next run ([`RunFolder::hold`]).
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

use std::ffi::{OsStr, OsString};
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
    /// Empty folders in a child, in the order made, that emptying keeps ([`RunFolder::hold`]).
    held: Vec<(&'static str, OsString)>,
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
            held: Vec::new(),
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

    /// Makes the empty folders `names` in the child folder `child`, in that order, and keeps them
    /// through emptying: the mount points a run's sandbox makes in its private `/tmp`, which the
    /// next run of the folder would otherwise make anew (and its emptying remove: on some file
    /// systems each removal makes every later creation slower). Those an earlier run held are
    /// taken, renamed where the names differ, in the order they were made, which is the order
    /// tmpfs lists them in (newest first, on some kernels): so the listing of `child` is what it
    /// would be in a new folder. Folders of `child` held and no longer named go. On an error,
    /// none is held in `child` (each was removed, as far as it could be).
    pub fn hold(&mut self, child: &'static str, names: &[&OsStr]) -> io::Result<()> {
        let dir = self.root.join(child);
        let had: Vec<OsString> = self
            .held
            .iter()
            .filter(|(c, _)| *c == child)
            .map(|(_, name)| name.clone())
            .collect();
        self.held.retain(|(c, _)| *c != child);
        let plain = |name: &OsStr| {
            let mut parts = Path::new(name).components();
            matches!(parts.next(), Some(std::path::Component::Normal(n)) if n == name)
                && parts.next().is_none()
        };
        let same = had
            .iter()
            .zip(names)
            .take_while(|(old, new)| old.as_os_str() == **new)
            .count();
        let made = (|| {
            if !self.children.contains(&child) || !names.iter().all(|n| plain(n)) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not a child folder, or not a name",
                ));
            }
            for (i, name) in names.iter().enumerate().skip(same) {
                let to = dir.join(name);
                match had.get(i) {
                    Some(old) => rustix::fs::renameat_with(
                        rustix::fs::CWD,
                        dir.join(old),
                        rustix::fs::CWD,
                        &to,
                        rustix::fs::RenameFlags::NOREPLACE,
                    )?,
                    None => std::fs::create_dir(&to)?,
                }
            }
            for old in had.iter().skip(names.len()) {
                std::fs::remove_dir(dir.join(old))?;
            }
            // The child as it is to be found again: on tmpfs a folder's size counts its
            // entries.
            let at = 1 + self
                .children
                .iter()
                .position(|c| *c == child)
                .expect("checked");
            self.stamps[at] = Stamp::of(&dir)?;
            Ok(())
        })();
        match made {
            Ok(()) => {
                let held = names.iter().map(|n| (child, n.to_os_string()));
                self.held.extend(held);
                Ok(())
            }
            Err(e) => {
                for name in had
                    .iter()
                    .map(OsString::as_os_str)
                    .chain(names.iter().copied())
                {
                    if plain(name) {
                        let _ = std::fs::remove_dir(dir.join(name));
                    }
                }
                Err(e)
            }
        }
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
            let keep: Vec<&OsStr> = self
                .held
                .iter()
                .filter(|(c, _)| c == child)
                .map(|(_, name)| name.as_os_str())
                .collect();
            if !empty(&self.root.join(child), &keep) {
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

/// Removes everything in the folder `dir` but the folders `keep` in it, emptied; whether that
/// worked and each of `keep` is still a folder. Never through a symlink: not at `dir` itself (one
/// there is no folder, and fails), nor anywhere under it.
fn empty(dir: &Path, keep: &[&OsStr]) -> bool {
    super::remove::empty_tree_keeping(dir, super::remove::Access::AsItIs, keep).is_ok()
        && keep.iter().all(|name| {
            rustix::fs::lstat(dir.join(name))
                .is_ok_and(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_dir())
        })
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

    fn listing(dir: &Path) -> Vec<OsString> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect()
    }

    #[test]
    fn held_folders_survive_emptying_and_are_renamed_for_the_next_run() {
        let base = tempfile::tempdir().unwrap();
        let base = base.path().canonicalize().unwrap();
        let pool = FolderPool::new();
        let mut folder = made(&base, "harness-one-");
        let b = folder.child("b");
        let (own, x, y) = (OsStr::new("own"), OsStr::new("x"), OsStr::new("y"));
        folder.hold("b", &[own, x]).unwrap();
        let mut names = listing(&b);
        names.sort();
        assert_eq!(names, ["own", "x"]);
        // What a run leaves: in them, and beside them.
        std::fs::write(b.join("x/inside"), "x").unwrap();
        std::fs::write(b.join("beside"), "x").unwrap();
        let (own_ino, x_ino) = (ino(&b.join("own")), ino(&b.join("x")));
        pool.give_back(folder);
        let mut names = listing(&b);
        names.sort();
        assert_eq!(names, ["own", "x"], "the held ones stay, and nothing else");
        assert!(listing(&b.join("x")).is_empty(), "emptied");

        // The next run's names: the one that differs is the one renamed, never made anew.
        let mut folder = pool.take(&base, "harness-one-", KIDS).unwrap();
        folder.hold("b", &[own, y]).unwrap();
        let mut names = listing(&b);
        names.sort();
        assert_eq!(names, ["own", "y"]);
        assert_eq!((ino(&b.join("own")), ino(&b.join("y"))), (own_ino, x_ino));
        // Fewer: the rest go.
        folder.hold("b", &[own]).unwrap();
        assert_eq!(listing(&b), ["own"]);
        // No name, or no child: an error, and none held.
        for bad in ["../esc", "a/b", ".", ""] {
            assert!(
                folder.hold("b", &[own, OsStr::new(bad)]).is_err(),
                "{bad:?}"
            );
            assert!(listing(&b).is_empty(), "{bad:?}");
        }
        assert!(!base.join("esc").exists());
        assert!(folder.hold("c", &[own]).is_err());
        assert!(!folder.child("c").exists());
        folder.hold("b", &[own]).unwrap();
        // A held name that is no longer a folder: the folder is not as made.
        std::fs::remove_dir(b.join("own")).unwrap();
        std::fs::write(b.join("own"), "x").unwrap();
        let root = folder.root().to_path_buf();
        pool.give_back(folder);
        assert!(pool.is_empty() && !root.exists());
    }

    fn ino(path: &Path) -> u64 {
        std::os::unix::fs::MetadataExt::ino(&std::fs::symlink_metadata(path).unwrap())
    }

    /// `TMPFS_MAGIC` of `<linux/magic.h>`.
    const TMPFS_MAGIC: i64 = 0x0102_1994;

    /// On tmpfs a folder lists its entries in the order they were made (newest first, on some
    /// kernels): the held folders, taken and renamed, list as they would in a new folder.
    #[test]
    fn held_folders_renamed_list_as_in_a_new_folder_on_tmpfs() {
        let shm = Path::new("/dev/shm");
        // `f_type`'s type differs from one platform to another.
        #[allow(clippy::unnecessary_cast)]
        let on_tmpfs = rustix::fs::statfs(shm).is_ok_and(|fs| fs.f_type as i64 == TMPFS_MAGIC);
        if !on_tmpfs {
            eprintln!("no tmpfs at /dev/shm: skipped");
            return;
        }
        let base = tempfile::tempdir_in(shm).unwrap();
        let base = base.path().canonicalize().unwrap();
        let pool = FolderPool::new();
        let order = |folder: &RunFolder| {
            listing(&folder.child("b"))
                .into_iter()
                .map(|n| if n == "own" { "own" } else { "other" })
                .collect::<Vec<_>>()
        };
        let mut fresh = made(&base, "harness-one-");
        fresh
            .hold("b", &[OsStr::new("own"), OsStr::new("x")])
            .unwrap();
        let new_order = order(&fresh);
        pool.give_back(fresh);
        for name in ["y", "a-much-longer-name-than-the-others", "z"] {
            let mut again = pool.take(&base, "harness-one-", KIDS).unwrap();
            again
                .hold("b", &[OsStr::new("own"), OsStr::new(name)])
                .unwrap();
            assert_eq!(order(&again), new_order, "{name}");
            pool.give_back(again);
        }
        pool.drain();
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
