//! Removing a folder whose contents a command made: at any depth, never following a symlink.
//!
//! `std::fs::remove_dir_all` recurses, one stack frame and one open folder per level. A command
//! that nests folders 30,000 deep (`for i in $(seq 30000); do mkdir d; cd d; done` takes
//! seconds) made it overflow the stack of the thread removing the run's workspace, which aborts
//! the whole harness, the suite's other runs and its report with it. [`remove_tree`] keeps the
//! folders still to finish in a list, not on the stack, and holds at most [`OPEN_LEVELS`] of them
//! open at once (a file descriptor each): a folder that is farther up is closed, and opened again
//! through `..` of the folder below it once that one is removed, after checking that it is the
//! same folder (device and inode) it was, so that a folder moved meanwhile never gets the
//! removal meant for another. Each entry is removed through its folder's descriptor, so no
//! symlink swapped in is followed.
//!
//! Depends on nothing else in the crate.

use std::ffi::{CStr, OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use rustix::io::Errno;

/// The most folders [`remove_tree`] holds open at once.
pub const OPEN_LEVELS: usize = 64;

/// What a removal may change to get on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Nothing: a folder a command closed to its owner stops the removal.
    AsItIs,
    /// Every folder gets its owner's read, write and search access back before it is emptied
    /// (`chmod 0`, a read-only Go module cache). For trees nothing works in any more (a dead
    /// harness's): a folder closed even to reading is opened up through a descriptor opened
    /// without following symlinks, but found by its name again.
    MakeWritable,
}

/// One folder being emptied.
struct Level {
    /// Its listing, while it is open (`None`: closed to stay within [`OPEN_LEVELS`]).
    dir: Option<Dir>,
    /// Its name in the folder above (`None` for the top).
    name: Option<OsString>,
    /// Its device and inode, to know it again when it is opened anew.
    id: (u64, u64),
    /// Emptied but not removed ([`empty_tree_keeping`]).
    kept: bool,
}

impl Level {
    fn new(fd: OwnedFd, name: Option<OsString>, access: Access) -> io::Result<Level> {
        let st = rustix::fs::fstat(&fd)?;
        if access == Access::MakeWritable && st.st_mode & 0o700 != 0o700 {
            rustix::fs::fchmod(&fd, Mode::from_raw_mode((st.st_mode & 0o7777) | 0o700))?;
        }
        Ok(Level {
            dir: Some(Dir::new(fd)?),
            name,
            id: (st.st_dev, st.st_ino),
            kept: false,
        })
    }

    fn dir(&mut self) -> &mut Dir {
        self.dir
            .as_mut()
            .expect("only a folder farther up is ever closed")
    }
}

/// Removes `path` and everything in it (a symlink or file at `path` is removed itself); `Ok`
/// when it is gone or was never there. An entry something adds meanwhile makes it fail with
/// "directory not empty" ([`super::stale::remove_settled`] tries again).
pub fn remove_tree(path: &Path, access: Access) -> io::Result<()> {
    let top = match open_dir(rustix::fs::CWD, path.as_os_str(), access) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(()),
        // Not a folder (a symlink is not followed): the entry itself goes.
        Err(Errno::NOTDIR | Errno::LOOP) => {
            return match std::fs::remove_file(path) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                other => other,
            };
        }
        Err(e) => return Err(e.into()),
    };
    remove_under(top, path, access, true, &[])
}

/// Removes everything in the folder `path`, which stays (as [`remove_tree`] removes, at any
/// depth, never following a symlink); an error when `path` is not a folder (a symlink at `path`
/// is not followed either: it is no folder).
pub fn empty_tree(path: &Path, access: Access) -> io::Result<()> {
    empty_tree_keeping(path, access, &[])
}

/// [`empty_tree`], but the folders named `keep` directly in `path` stay, emptied; anything else
/// of such a name (a file, a symlink) goes.
pub fn empty_tree_keeping(path: &Path, access: Access, keep: &[&OsStr]) -> io::Result<()> {
    let top = open_dir(rustix::fs::CWD, path.as_os_str(), access)?;
    remove_under(top, path, access, false, keep)
}

/// Empties the folder `top` (opened from `path`) and, with `and_top`, removes it; the folders
/// named `keep` in `top` are emptied, not removed.
fn remove_under(
    top: OwnedFd,
    path: &Path,
    access: Access,
    and_top: bool,
    keep: &[&OsStr],
) -> io::Result<()> {
    let mut levels = vec![Level::new(top, None, access)?];
    // The open folders are `levels[open_from..]`: those above were closed, farthest first.
    let mut open_from = 0;
    loop {
        let last = levels.len() - 1;
        let next = levels[last].dir().read().transpose()?;
        let Some(entry) = next else {
            // Emptied: it goes from the folder above, opened again if it was closed.
            let done = levels.pop().expect("a level is being emptied");
            let Some(parent) = levels.last_mut() else {
                drop(done);
                if !and_top {
                    return Ok(());
                }
                return match std::fs::remove_dir(path) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                    other => other,
                };
            };
            if parent.dir.is_none() {
                let fd = reopen_parent(&done, parent.id)?;
                parent.dir = Some(Dir::new(fd)?);
                open_from -= 1;
            }
            let name = done.name.clone().expect("only the top has no name");
            let kept = done.kept;
            drop(done);
            if kept {
                continue;
            }
            let parent_fd = parent.dir().fd()?;
            match rustix::fs::unlinkat(parent_fd, name.as_os_str(), AtFlags::REMOVEDIR) {
                Ok(()) | Err(Errno::NOENT) => {}
                Err(e) => return Err(e.into()),
            }
            continue;
        };
        let name = entry.file_name();
        if name == c"." || name == c".." {
            continue;
        }
        let name = OsStr::from_bytes(name.to_bytes()).to_owned();
        let kind = entry.file_type();
        let level = &mut levels[last];
        let fd = level.dir().fd()?;
        let is_dir = match kind {
            FileType::Directory => true,
            FileType::Unknown => {
                rustix::fs::statat(fd, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory)
            }
            _ => false,
        };
        if !is_dir {
            unlink_in(fd, &name, access)?;
            continue;
        }
        let kept = last == 0 && keep.contains(&name.as_os_str());
        match open_dir(fd, &name, access) {
            Ok(child) => {
                let mut child = Level::new(child, Some(name), access)?;
                child.kept = kept;
                levels.push(child);
                // Within the budget: the farthest open folder above is closed.
                if levels.len() - open_from > OPEN_LEVELS {
                    levels[open_from].dir = None;
                    open_from += 1;
                }
            }
            // Gone, or swapped for something else since it was listed: the entry goes as it is.
            Err(Errno::NOENT) => {}
            Err(Errno::NOTDIR | Errno::LOOP) => unlink_in(fd, &name, access)?,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Opens the folder `name` in `dir` for listing, never through a symlink; with
/// [`Access::MakeWritable`], one its owner closed is opened up first.
fn open_dir(dir: impl AsFd, name: &OsStr, access: Access) -> Result<OwnedFd, Errno> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match rustix::fs::openat(&dir, name, flags, Mode::empty()) {
        Err(Errno::ACCESS) if access == Access::MakeWritable => {
            open_up(&dir, name)?;
            rustix::fs::openat(&dir, name, flags, Mode::empty())
        }
        other => other,
    }
}

/// Removes the non-folder `name` from `dir`; with [`Access::MakeWritable`], a folder closed to
/// writing is opened up first.
fn unlink_in(dir: impl AsFd, name: &OsStr, access: Access) -> io::Result<()> {
    match rustix::fs::unlinkat(&dir, name, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(Errno::ACCESS | Errno::PERM) if access == Access::MakeWritable => {
            rustix::fs::fchmod(&dir, Mode::from_raw_mode(0o700))?;
            match rustix::fs::unlinkat(&dir, name, AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => Ok(()),
                Err(e) => Err(e.into()),
            }
        }
        Err(e) => Err(e.into()),
    }
}

/// Gives the folder `name` in `dir` (not what a symlink there points to) its owner's access:
/// through an `O_PATH` descriptor of it and `/proc/self/fd`.
fn open_up(dir: impl AsFd, name: &OsStr) -> Result<(), Errno> {
    let fd = rustix::fs::openat(
        &dir,
        name,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let magic = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd));
    rustix::fs::chmod(magic.as_str(), Mode::from_raw_mode(0o700))
}

/// The folder above `child` (emptied, still open), opened again through its `..`: an error if
/// it is not the folder `id` was taken of (something moved the tree meanwhile).
fn reopen_parent(child: &Level, id: (u64, u64)) -> io::Result<OwnedFd> {
    let child_fd = child
        .dir
        .as_ref()
        .expect("the folder just emptied is open")
        .fd()?;
    let dotdot: &CStr = c"..";
    let fd = rustix::fs::openat(
        child_fd,
        dotdot,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let st = rustix::fs::fstat(&fd)?;
    if (st.st_dev, st.st_ino) != id {
        return Err(io::Error::other(
            "a folder being removed was moved meanwhile; the rest is left as it is",
        ));
    }
    Ok(fd)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `depth` folders `d` nested in `root`, a file at the bottom and one beside each folder.
    fn nest(root: &Path, depth: usize) {
        // Relative steps from an open folder: the path as a whole would pass `PATH_MAX`.
        let mut dir = rustix::fs::open(root, OFlags::DIRECTORY, Mode::empty()).unwrap();
        for _ in 0..depth {
            rustix::fs::mkdirat(&dir, "d", Mode::from_raw_mode(0o755)).unwrap();
            let file = rustix::fs::openat(
                &dir,
                "f",
                OFlags::CREATE | OFlags::WRONLY,
                Mode::from_raw_mode(0o644),
            )
            .unwrap();
            drop(file);
            dir = rustix::fs::openat(&dir, "d", OFlags::DIRECTORY, Mode::empty()).unwrap();
        }
        rustix::fs::openat(
            &dir,
            "leaf",
            OFlags::CREATE | OFlags::WRONLY,
            Mode::from_raw_mode(0o644),
        )
        .unwrap();
    }

    #[test]
    fn a_tree_deeper_than_a_small_stack_and_the_open_folder_budget_is_removed() {
        let root = tempfile::tempdir().unwrap();
        let tree = root.path().join("tree");
        std::fs::create_dir(&tree).unwrap();
        // std's recursion overflows a 256 KiB stack at 3,000 levels (a release build); this
        // removes 5,000 on 128 KiB, and closes and opens again all but `OPEN_LEVELS` of them.
        nest(&tree, 5_000);
        let removed = std::thread::Builder::new()
            .stack_size(128 * 1024)
            .spawn(move || remove_tree(&tree, Access::AsItIs).map(|()| tree.exists()))
            .unwrap()
            .join()
            .unwrap();
        assert!(!removed.unwrap(), "the tree is still there");
    }

    /// A folder `outside` in `dir` holding the file `keep`, which no emptying may reach.
    fn canary(dir: &Path) -> std::path::PathBuf {
        let outside = dir.join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("keep"), "x").unwrap();
        outside
    }

    #[test]
    fn emptying_keeps_the_folder_and_never_follows_a_symlink_even_at_the_top() {
        let dir = tempfile::tempdir().unwrap();
        let outside = canary(dir.path());
        let tree = dir.path().join("tree");
        std::fs::create_dir_all(tree.join("a/b")).unwrap();
        std::fs::write(tree.join("a/b/f"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, tree.join("link")).unwrap();
        empty_tree(&tree, Access::AsItIs).unwrap();
        assert!(tree.is_dir());
        assert_eq!(std::fs::read_dir(&tree).unwrap().count(), 0);
        // A symlink where the folder was: an error, and nothing behind it touched.
        let link = dir.path().join("top-link");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        assert!(empty_tree(&link, Access::AsItIs).is_err());
        assert!(outside.join("keep").exists());
        assert!(link.symlink_metadata().is_ok());
    }

    #[test]
    fn emptying_keeping_some_folders_empties_them_and_removes_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let outside = canary(dir.path());
        let tree = dir.path().join("tree");
        std::fs::create_dir_all(tree.join("held/deep")).unwrap();
        std::fs::write(tree.join("held/deep/f"), "x").unwrap();
        std::fs::create_dir_all(tree.join("other/held")).unwrap();
        std::fs::write(tree.join("file"), "x").unwrap();
        // Of a kept name but no folder: it goes, and is not followed.
        std::os::unix::fs::symlink(&outside, tree.join("link")).unwrap();
        let keep = [OsStr::new("held"), OsStr::new("link"), OsStr::new("gone")];
        empty_tree_keeping(&tree, Access::AsItIs, &keep).unwrap();
        let mut left: Vec<_> = std::fs::read_dir(&tree)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        left.sort();
        // Only at the top: `other/held` went with `other`.
        assert_eq!(left, ["held"]);
        assert_eq!(std::fs::read_dir(tree.join("held")).unwrap().count(), 0);
        assert!(outside.join("keep").exists());
    }

    #[test]
    fn wide_and_mixed_trees_go_and_symlinks_are_not_followed() {
        let root = tempfile::tempdir().unwrap();
        let outside = root.path().join("outside");
        std::fs::create_dir_all(outside.join("keep")).unwrap();
        std::fs::write(outside.join("keep/file"), "x").unwrap();
        let tree = root.path().join("tree");
        for i in 0..200 {
            std::fs::create_dir_all(tree.join(format!("a{i}/b/c"))).unwrap();
            std::fs::write(tree.join(format!("a{i}/b/c/f")), "x").unwrap();
        }
        nest(&tree.join("a7"), OPEN_LEVELS * 3);
        std::os::unix::fs::symlink(&outside, tree.join("link")).unwrap();
        std::os::unix::fs::symlink(outside.join("keep/file"), tree.join("a3/b/flink")).unwrap();
        nix::unistd::mkfifo(&tree.join("a4/fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        remove_tree(&tree, Access::AsItIs).unwrap();
        assert!(!tree.exists());
        assert_eq!(
            std::fs::read_to_string(outside.join("keep/file")).unwrap(),
            "x"
        );
        // A symlink given as the tree is removed itself, not what it points to.
        let link = root.path().join("top-link");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        remove_tree(&link, Access::AsItIs).unwrap();
        assert!(std::fs::symlink_metadata(&link).is_err());
        assert!(outside.join("keep/file").exists());
        // Nothing there: nothing to do.
        remove_tree(&root.path().join("never"), Access::AsItIs).unwrap();
    }

    #[test]
    fn making_writable_gives_closed_folders_their_owners_access_back() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        let set = |p: &Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
        };
        // A folder being emptied, read-only (a Go module cache): its owner's bits are added.
        let ro = root.path().join("ro");
        std::fs::create_dir(&ro).unwrap();
        set(&ro, 0o555);
        let fd = rustix::fs::open(&ro, OFlags::DIRECTORY, Mode::empty()).unwrap();
        drop(Level::new(fd, None, Access::MakeWritable).unwrap());
        assert_eq!(mode(&ro), 0o755);
        // Left as it is otherwise.
        set(&ro, 0o555);
        let fd = rustix::fs::open(&ro, OFlags::DIRECTORY, Mode::empty()).unwrap();
        drop(Level::new(fd, None, Access::AsItIs).unwrap());
        assert_eq!(mode(&ro), 0o555);
        // A folder closed even to reading is opened up by name, a symlink there never followed.
        let closed = root.path().join("closed");
        std::fs::create_dir(&closed).unwrap();
        set(&closed, 0o000);
        let parent = rustix::fs::open(root.path(), OFlags::DIRECTORY, Mode::empty()).unwrap();
        open_up(&parent, OsStr::new("closed")).unwrap();
        assert_eq!(mode(&closed), 0o700);
        std::os::unix::fs::symlink(&closed, root.path().join("link")).unwrap();
        set(&closed, 0o000);
        assert!(open_up(&parent, OsStr::new("link")).is_err());
        assert_eq!(mode(&closed), 0o000);
        set(&closed, 0o700);
        remove_tree(root.path(), Access::MakeWritable).unwrap();
        assert!(!root.path().exists());
    }

    #[test]
    fn a_folder_opened_again_through_dotdot_must_be_the_one_it_was() {
        let root = tempfile::tempdir().unwrap();
        let tree = root.path().join("tree");
        std::fs::create_dir(&tree).unwrap();
        let deep = Level::new(
            rustix::fs::open(&tree, OFlags::DIRECTORY, Mode::empty()).unwrap(),
            Some("tree".into()),
            Access::AsItIs,
        )
        .unwrap();
        // Not the folder above (whose inode number may be any, the next one too).
        let st = rustix::fs::stat(root.path()).unwrap();
        let wrong = (st.st_dev, st.st_ino + 1);
        let err = reopen_parent(&deep, wrong).unwrap_err();
        assert!(err.to_string().contains("moved meanwhile"), "{err}");
        assert!(reopen_parent(&deep, (st.st_dev, st.st_ino)).is_ok());
    }
}
