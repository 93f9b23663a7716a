//! Opening paths beneath a folder held open, in one step the kernel checks: `openat2(2)` with
//! `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS` (Linux 5.6+). Every symlink and `..` on the way is
//! followed by the kernel itself and refused (`EXDEV`) the moment it would leave the folder, so
//! a symlink swapped between a check and an open cannot lead outside: there is no check apart
//! from the open. `mkdir -p` goes one component at a time, each parent held open while its
//! child is made.
//!
//! [`Anchor`] is a folder held open (`O_PATH`); [`open`], [`create_dir_all`] work beneath it;
//! [`openat2_works`] says whether this kernel (and its seccomp filter) has `openat2` at all.
//! The policy (which folder, which message, the fallback for absolute symlinks that stay inside)
//! is the jail's ([`super::Jail`]).
//!
//! Depends on nothing else in the crate.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{Mode, OFlags, ResolveFlags};

/// The resolution every open beneath an anchor uses.
const BENEATH: ResolveFlags = ResolveFlags::BENEATH.union(ResolveFlags::NO_MAGICLINKS);

/// A folder held open: the root of what may be reached.
#[derive(Debug)]
pub struct Anchor {
    path: PathBuf,
    fd: OwnedFd,
}

impl Anchor {
    /// Opens the folder `path` (`O_PATH`, following symlinks: the caller's own path, trusted).
    pub fn open(path: &Path) -> io::Result<Anchor> {
        let fd = rustix::fs::open(
            path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Anchor {
            path: path.to_path_buf(),
            fd,
        })
    }

    /// The path it was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// How to open a file: the `open(2)` flags the file tools use (`O_CLOEXEC` always added).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// `O_PATH`: where a path leads, to `fstat` it or check access.
    Path,
    /// `O_RDONLY | O_NONBLOCK` (a FIFO without a writer does not hang the open).
    Read,
    /// `O_RDONLY | O_DIRECTORY`: a folder to list.
    Dir,
    /// `O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK`, mode 0666 before the umask (Node's
    /// `writeFile`, but a FIFO without a reader fails the open with `ENXIO` instead of hanging
    /// it; regular files ignore the flag).
    Truncate,
    /// `O_WRONLY | O_CREAT | O_NONBLOCK`, mode 0666 before the umask: [`How::Truncate`] without
    /// the truncation, for a file to be checked before a byte of it changes.
    Write,
}

impl How {
    fn flags(self) -> (OFlags, Mode) {
        let (flags, mode) = match self {
            How::Path => (OFlags::PATH, Mode::empty()),
            How::Read => (OFlags::RDONLY | OFlags::NONBLOCK, Mode::empty()),
            How::Dir => (OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()),
            How::Truncate => (
                OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NONBLOCK,
                Mode::from_raw_mode(0o666),
            ),
            How::Write => (
                OFlags::WRONLY | OFlags::CREATE | OFlags::NONBLOCK,
                Mode::from_raw_mode(0o666),
            ),
        };
        (flags | OFlags::CLOEXEC, mode)
    }
}

/// What kind of file that is not a regular one `kind` is, for the file tools' and the checks'
/// refusals (`a FIFO`, `a character device`, ...).
pub fn file_kind(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_dir() {
        "a folder"
    } else {
        "not a regular file"
    }
}

/// Reads the open `file` to its end if it holds at most `max` bytes: `None` when it holds more,
/// by its size or by what it gave while still growing, so that no more than `max + 1` bytes of
/// it are ever held (a sparse file of any size costs a command nothing).
pub fn read_at_most(file: std::fs::File, max: u64) -> io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    if file.metadata()?.len() > max {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= max).then_some(bytes))
}

/// `rel` as `openat2` takes it: `.` for the anchor itself.
fn or_dot(rel: &Path) -> &Path {
    if rel.as_os_str().is_empty() {
        Path::new(".")
    } else {
        rel
    }
}

/// Opens `rel` beneath `anchor`: `EXDEV` if any step (a symlink, `..`, an absolute path) would
/// leave it, `ELOOP` for a magic link (`/proc/<pid>/fd/…`).
pub fn open(anchor: &Anchor, rel: &Path, how: How) -> io::Result<OwnedFd> {
    let (flags, mode) = how.flags();
    Ok(rustix::fs::openat2(
        anchor.fd(),
        or_dot(rel),
        flags,
        mode,
        BENEATH,
    )?)
}

/// Opens `path` with no confinement at all (the `none` tier), the same flags as [`open`].
pub fn open_free(path: &Path, how: How) -> io::Result<OwnedFd> {
    let (flags, mode) = how.flags();
    Ok(rustix::fs::open(path, flags, mode)?)
}

/// Opens the entry `name` of the folder `dir` without following it if it is a symlink
/// (`O_NOFOLLOW`): a walk's step down, which no symlink can redirect.
pub fn open_entry(dir: BorrowedFd<'_>, name: &OsStr, how: How) -> io::Result<OwnedFd> {
    let (flags, mode) = how.flags();
    Ok(rustix::fs::openat(
        dir,
        name,
        flags | OFlags::NOFOLLOW,
        mode,
    )?)
}

/// `mkdir -p rel` beneath `anchor`, one component at a time: each folder is opened beneath the
/// anchor, and a missing one is made inside its parent's open descriptor. `made` is told about
/// every folder this call created (to hand it to the commands' user). Node's `mkdir` with
/// `recursive: true` creates the parts before a `..` too, as this does.
pub fn create_dir_all(
    anchor: &Anchor,
    rel: &Path,
    made: &mut dyn FnMut(&OwnedFd),
) -> io::Result<()> {
    if open(anchor, rel, How::Dir).is_ok() {
        return Ok(());
    }
    let mut prefix = PathBuf::new();
    let mut parent = open(anchor, Path::new("."), How::Path)?;
    for component in rel.components() {
        match component {
            Component::Normal(name) => {
                prefix.push(name);
                match open(anchor, &prefix, How::Path) {
                    Ok(fd) => parent = fd,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        match rustix::fs::mkdirat(&parent, name, Mode::from_raw_mode(0o777)) {
                            Ok(()) => {
                                let fd = open(anchor, &prefix, How::Path)?;
                                made(&fd);
                                parent = fd;
                            }
                            // Made meanwhile by someone else: use it.
                            Err(rustix::io::Errno::EXIST) => {
                                parent = open(anchor, &prefix, How::Path)?;
                            }
                            Err(e) => return Err(e.into()),
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
            Component::ParentDir => {
                prefix.push("..");
                parent = open(anchor, &prefix, How::Path)?;
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    // The whole path must be a folder now (a file in the way is `ENOTDIR`, as `mkdir` says).
    open(anchor, rel, How::Dir).map(drop)
}

/// What a folder entry is, as `readdir` (or, when it does not say, `lstat`) tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Dir,
    File,
    Symlink,
    Other,
}

/// One entry of a folder listed by [`list`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BeneathEntry {
    pub name: std::ffi::OsString,
    pub kind: Kind,
}

/// The entries of the open folder `dir` (without `.` and `..`), in the order `readdir` gives.
pub fn list(dir: BorrowedFd<'_>) -> io::Result<Vec<BeneathEntry>> {
    use rustix::fs::FileType;
    use std::os::unix::ffi::OsStrExt;
    let mut out = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let mut kind = entry.file_type();
        if kind == FileType::Unknown {
            kind = rustix::fs::statat(
                dir,
                entry.file_name(),
                rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
            )
            .map(|st| FileType::from_raw_mode(st.st_mode))
            .unwrap_or(FileType::Unknown);
        }
        out.push(BeneathEntry {
            name: OsStr::from_bytes(name).to_owned(),
            kind: match kind {
                FileType::Directory => Kind::Dir,
                FileType::RegularFile => Kind::File,
                FileType::Symlink => Kind::Symlink,
                _ => Kind::Other,
            },
        });
    }
    Ok(out)
}

/// `access(path, R_OK | W_OK)` on what `fd` (an `O_PATH` descriptor) refers to, as the real
/// user: `faccessat2` on the descriptor itself (Linux 5.8+), else through `/proc/self/fd`.
pub fn access_rw(fd: BorrowedFd<'_>) -> io::Result<()> {
    use rustix::fs::{Access, AtFlags};
    let wanted = Access::READ_OK | Access::WRITE_OK;
    match rustix::fs::accessat(fd, "", wanted, AtFlags::EMPTY_PATH) {
        Err(rustix::io::Errno::NOSYS | rustix::io::Errno::INVAL) => {
            use std::os::fd::AsRawFd;
            let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
            Ok(rustix::fs::access(path.as_str(), wanted)?)
        }
        other => Ok(other?),
    }
}

/// Whether `openat2` with `RESOLVE_BENEATH` works here: `Err` with why not (a kernel older than
/// 5.6 answers `ENOSYS`; a seccomp filter `ENOSYS` or `EPERM`).
pub fn openat2_works() -> Result<(), String> {
    let probe = Anchor::open(Path::new("/"))
        .map_err(|e| format!("failed to open / to probe openat2: {e}"))?;
    match open(&probe, Path::new("."), How::Path) {
        Ok(_) => Ok(()),
        Err(e) => Err(format!(
            "the kernel refuses openat2 with RESOLVE_BENEATH ({e}; Linux 5.6 or newer, without \
             a seccomp filter that blocks it, is needed)"
        )),
    }
}

/// Whether an error says the path left its anchor (`EXDEV`) or met a magic link (`ELOOP` is
/// also a plain symlink loop, so only `EXDEV` counts).
pub fn is_escape(err: &io::Error) -> bool {
    err.raw_os_error() == Some(rustix::io::Errno::XDEV.raw_os_error())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, PathBuf, Anchor) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ws = root.join("ws");
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::fs::create_dir(root.join("out")).unwrap();
        std::fs::write(root.join("out/secret.txt"), "secret").unwrap();
        std::fs::write(ws.join("sub/a.txt"), "a").unwrap();
        let anchor = Anchor::open(&ws).unwrap();
        (dir, ws, anchor)
    }

    fn read(fd: OwnedFd) -> String {
        let mut s = String::new();
        std::fs::File::from(fd).read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn symlinks_inside_are_followed_and_those_out_refused() {
        let (_dir, ws, anchor) = setup();
        openat2_works().expect("the test machine has openat2");
        symlink("sub/a.txt", ws.join("rel")).unwrap();
        symlink("../sub/a.txt", ws.join("sub/up_and_back")).unwrap();
        symlink("../out/secret.txt", ws.join("out_rel")).unwrap();
        symlink(ws.join("sub/a.txt"), ws.join("abs_inside")).unwrap();
        symlink("/proc/self/root/etc/hostname", ws.join("magic")).unwrap();
        assert_eq!(
            read(open(&anchor, Path::new("rel"), How::Read).unwrap()),
            "a"
        );
        assert_eq!(
            read(open(&anchor, Path::new("sub/up_and_back"), How::Read).unwrap()),
            "a"
        );
        assert_eq!(
            read(open(&anchor, Path::new("sub/../sub/a.txt"), How::Read).unwrap()),
            "a"
        );
        for escaping in ["out_rel", "../out/secret.txt", "sub/../../out/secret.txt"] {
            let err = open(&anchor, Path::new(escaping), How::Read).unwrap_err();
            assert!(is_escape(&err), "{escaping}: {err}");
        }
        // Absolute symlinks are refused even when they lead inside (the jail retries those).
        assert!(is_escape(
            &open(&anchor, Path::new("abs_inside"), How::Read).unwrap_err()
        ));
        assert!(open(&anchor, Path::new("magic"), How::Read).is_err());
        // A file created through a symlink that leads out is not created.
        symlink("../out/new.txt", ws.join("dangling_out")).unwrap();
        assert!(open(&anchor, Path::new("dangling_out"), How::Truncate).is_err());
        assert!(!ws.parent().unwrap().join("out/new.txt").exists());
    }

    #[test]
    fn mkdir_p_stays_beneath() {
        let (_dir, ws, anchor) = setup();
        let mut made = 0;
        create_dir_all(&anchor, Path::new("x/y/z"), &mut |_| made += 1).unwrap();
        assert!(ws.join("x/y/z").is_dir());
        assert_eq!(made, 3);
        create_dir_all(&anchor, Path::new("x/y/z"), &mut |_| made += 1).unwrap();
        assert_eq!(made, 3);
        // Node creates the part before `..` too.
        create_dir_all(&anchor, Path::new("p/../q"), &mut |_| {}).unwrap();
        assert!(ws.join("p").is_dir() && ws.join("q").is_dir());
        symlink("../out", ws.join("escape")).unwrap();
        let err = create_dir_all(&anchor, Path::new("escape/made"), &mut |_| {}).unwrap_err();
        assert!(is_escape(&err), "{err}");
        assert!(!ws.parent().unwrap().join("out/made").exists());
        // A file in the way.
        let err = create_dir_all(&anchor, Path::new("sub/a.txt/more"), &mut |_| {}).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc_enotdir()));
        let mut f =
            std::fs::File::from(open(&anchor, Path::new("x/y/z/f"), How::Truncate).unwrap());
        f.write_all(b"ok").unwrap();
        assert_eq!(std::fs::read_to_string(ws.join("x/y/z/f")).unwrap(), "ok");
    }

    fn libc_enotdir() -> i32 {
        rustix::io::Errno::NOTDIR.raw_os_error()
    }

    #[test]
    fn entries_are_opened_without_following() {
        let (_dir, ws, anchor) = setup();
        symlink("../out", ws.join("sub/link")).unwrap();
        let sub = open(&anchor, Path::new("sub"), How::Dir).unwrap();
        assert!(open_entry(sub.as_fd(), OsStr::new("a.txt"), How::Read).is_ok());
        assert!(open_entry(sub.as_fd(), OsStr::new("link"), How::Dir).is_err());
    }
}
