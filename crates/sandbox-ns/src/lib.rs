//! The harness's one crate of unsafe code: the `isolated` tier's run sandbox made without
//! bubblewrap. [`clone_sandbox`] clones a single-threaded process (the harness's sandbox maker)
//! into new user, mount, PID, IPC, UTS and cgroup namespaces, and a network namespace of its
//! own: a new one, or one of those the maker keeps ([`Networks`], one sandbox at a time each);
//! in the clone, [`enter`] builds the sandbox, and the clone goes on to be the run's supervisor.
//!
//! The sandbox is the one bubblewrap makes for the harness, built with the kernel's mount API
//! (`open_tree`, `mount_setattr`, `move_mount`, Linux 5.12+) so that nothing parses
//! `/proc/self/mountinfo`: the host's tree cloned whole and made read-only, `nosuid` and `nodev`
//! in one call; a fresh `/dev` (`null`, `zero`, `full`, `random`, `urandom`, `tty` bound from the
//! host, a private `devpts`, `shm`); a `/proc` of the new PID namespace (its `sys`,
//! `sysrq-trigger`, `irq` and `bus` read-only); empty `/run` and home; the run's folders bound
//! where [`Layout`] says; the loopback interface up (in a new network namespace; a kept one has
//! it up already); then no capability left, in any set, and
//! `no_new_privs`. The uid and gid are the caller's own, mapped to themselves.
//!
//! Every step that fails names the step and the path; the harness reports it as the reason the
//! run's sandbox did not start. Every `unsafe` block says why it is sound.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

mod network;
pub use network::{Network, Networks};

/// What a run's sandbox holds, on top of the host's tree made read-only, in this order.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// The host's home folder, hidden behind an empty tmpfs.
    pub hide: Option<PathBuf>,
    /// Folders under the hidden home kept readable (skipped when missing).
    pub keep: Vec<PathBuf>,
    /// The folder bound on `/tmp`, writable; `None`: an empty tmpfs.
    pub tmp: Option<PathBuf>,
    /// Folders shown as a fresh tmpfs (made if missing) that holds nothing but the mount points
    /// of what is bound under it, read-only once those are in place: what of the host was there
    /// is hidden, and the mount points are no files on disk.
    pub skeletons: Vec<PathBuf>,
    /// Folders bound writable at their own path (the workspace, the run's home).
    pub writable: Vec<PathBuf>,
    /// Paths bound read-only at their own path, which must exist (the run's logs).
    pub readable: Vec<PathBuf>,
    /// Paths bound read-only at their own path, skipped when missing (what a task requires).
    pub readable_if_there: Vec<PathBuf>,
    /// The working folder at the end.
    pub cwd: PathBuf,
    /// Whether the clone has a network namespace of its own, new, whose loopback interface it
    /// brings up; otherwise it was cloned into a kept one ([`Networks`]), up already and not its
    /// to change.
    pub own_network: bool,
}

/// The namespaces a run's sandbox gets: every kind bubblewrap's `--unshare-all` makes, but
/// the network's, which [`clone_sandbox`] adds or takes from [`Networks`].
const CLONE_FLAGS: libc::c_int = libc::CLONE_NEWUSER
    | libc::CLONE_NEWNS
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWCGROUP;

/// The host's device files a sandbox's `/dev` binds (bubblewrap's `--dev`).
const DEVICES: [&str; 6] = ["null", "zero", "full", "random", "urandom", "tty"];

/// Parts of the sandbox's `/proc` that stay read-only (as bubblewrap leaves them).
const PROC_READ_ONLY: [&str; 4] = ["sys", "sysrq-trigger", "irq", "bus"];

/// Who the harness is, outside: the ids the sandbox maps to themselves.
#[derive(Debug, Clone, Copy)]
pub struct Ids {
    /// The effective uid.
    pub uid: u32,
    /// The effective gid.
    pub gid: u32,
}

impl Ids {
    /// This process's effective ids.
    pub fn current() -> Ids {
        // SAFETY: geteuid and getegid cannot fail and touch no memory.
        unsafe {
            Ids {
                uid: libc::geteuid(),
                gid: libc::getegid(),
            }
        }
    }
}

/// A step's error: what failed, on what path, and the system's reason.
fn failed(what: &str, path: &Path, e: io::Error) -> String {
    format!("failed to {what} {}: {e}", path.display())
}

fn cstr(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in a path"))
}

fn check(ret: libc::c_long) -> io::Result<libc::c_long> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// A detached copy of the mount at `path` (and, `recursive`, everything mounted below it).
fn clone_tree(path: &Path, recursive: bool) -> io::Result<OwnedFd> {
    let c = cstr(path)?;
    let mut flags = libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC;
    if recursive {
        flags |= libc::AT_RECURSIVE as libc::c_uint;
    }
    // SAFETY: a valid C string and flags; the returned descriptor is new and ours.
    let fd =
        check(unsafe { libc::syscall(libc::SYS_open_tree, libc::AT_FDCWD, c.as_ptr(), flags) })?;
    // SAFETY: `fd` was just returned by the kernel and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// Sets `attrs` (`MOUNT_ATTR_*`) on the detached tree `tree`, every mount of it.
fn set_attrs(tree: &OwnedFd, attrs: u64) -> io::Result<()> {
    let attr = libc::mount_attr {
        attr_set: attrs,
        attr_clr: 0,
        propagation: libc::MS_PRIVATE,
        userns_fd: 0,
    };
    // SAFETY: a valid descriptor, an empty C string with AT_EMPTY_PATH, and a struct of the
    // size passed.
    check(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            tree.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH | libc::AT_RECURSIVE,
            &attr as *const libc::mount_attr,
            std::mem::size_of::<libc::mount_attr>(),
        )
    })?;
    Ok(())
}

/// Mounts the detached tree `tree` on `at`.
fn attach(tree: &OwnedFd, at: &Path) -> io::Result<()> {
    let c = cstr(at)?;
    // SAFETY: a valid descriptor, C strings, and flags.
    check(unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_FDCWD,
            c.as_ptr(),
            libc::MOVE_MOUNT_F_EMPTY_PATH,
        )
    })?;
    Ok(())
}

/// `mount(2)` of a new file system of `fstype` on `at`.
fn mount_new(fstype: &str, at: &Path, flags: libc::c_ulong, data: &str) -> io::Result<()> {
    let (source, target) = (CString::new(fstype)?, cstr(at)?);
    let data = CString::new(data)?;
    // SAFETY: valid C strings.
    let ret = unsafe {
        libc::mount(
            source.as_ptr(),
            target.as_ptr(),
            source.as_ptr(),
            flags,
            data.as_ptr().cast(),
        )
    };
    check(ret as libc::c_long).map(drop)
}

/// Makes the mount on `at` (not those on top of its folders) read-only.
fn remount_read_only(at: &Path) -> io::Result<()> {
    let target = cstr(at)?;
    // SAFETY: a valid C string; null source, type and data with MS_REMOUNT | MS_BIND only change
    // the flags of the mount at `target`.
    let ret = unsafe {
        libc::mount(
            std::ptr::null(),
            target.as_ptr(),
            std::ptr::null(),
            libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
            std::ptr::null(),
        )
    };
    check(ret as libc::c_long).map(drop)
}

fn write_file(path: &str, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| failed("write", Path::new(path), e))
}

/// One bind of the plan, opened from the host's view before the new root hides it.
struct Bind {
    tree: OwnedFd,
    at: PathBuf,
    is_dir: bool,
}

/// Opens a detached copy of `path` with `attrs`; `None` when it is missing and `optional`.
fn bind(path: &Path, attrs: u64, optional: bool) -> Result<Option<Bind>, String> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if optional && e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(failed("find", path, e)),
    };
    let tree = clone_tree(path, true).map_err(|e| failed("bind", path, e))?;
    set_attrs(&tree, attrs).map_err(|e| failed("set the mount flags of", path, e))?;
    Ok(Some(Bind {
        tree,
        at: path.to_path_buf(),
        is_dir: meta.is_dir(),
    }))
}

/// Makes `at` exist (a folder, or an empty file for a file's bind) so something can be mounted
/// on it: inside the run's `/tmp` or an empty tmpfs it is new; elsewhere it is already there.
fn mount_point(at: &Path, is_dir: bool) -> Result<(), String> {
    if std::fs::symlink_metadata(at).is_ok() {
        return Ok(());
    }
    let made = if is_dir {
        std::fs::create_dir_all(at)
    } else {
        at.parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::File::create(at).map(drop))
    };
    made.map_err(|e| failed("make the mount point", at, e))
}

fn place(b: &Bind) -> Result<(), String> {
    mount_point(&b.at, b.is_dir)?;
    attach(&b.tree, &b.at).map_err(|e| failed("mount", &b.at, e))
}

const RO: u64 = libc::MOUNT_ATTR_RDONLY | libc::MOUNT_ATTR_NOSUID | libc::MOUNT_ATTR_NODEV;
const RW: u64 = libc::MOUNT_ATTR_NOSUID | libc::MOUNT_ATTR_NODEV;

/// Everything, in the clone [`clone_sandbox`] made (PID 1 of its new namespaces): the id maps,
/// the mounts of `layout`, the working folder, the loopback interface, no capabilities. On `Ok`
/// the process is ready to be the run's supervisor. Refuses to touch anything anywhere else: it
/// must be PID 1 of a user namespace that maps nobody yet.
pub fn enter(layout: &Layout, ids: Ids) -> Result<(), String> {
    let fresh = std::fs::read_to_string("/proc/self/uid_map").is_ok_and(|m| m.trim().is_empty());
    if std::process::id() != 1 || !fresh {
        return Err(
            "refusing to build a sandbox outside a fresh one (not PID 1 of a new user \
                    namespace)"
                .to_owned(),
        );
    }
    // A fresh user namespace maps nobody until told: the harness's ids to themselves.
    write_file("/proc/self/setgroups", "deny")?;
    write_file("/proc/self/uid_map", &format!("{0} {0} 1", ids.uid))?;
    write_file("/proc/self/gid_map", &format!("{0} {0} 1", ids.gid))?;
    // Nothing mounted here may reach the host's mount namespace.
    // SAFETY: null source and type with MS_REC | MS_SLAVE only change propagation.
    check(unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_SLAVE,
            std::ptr::null(),
        )
    } as libc::c_long)
    .map_err(|e| failed("make private the mounts of", Path::new("/"), e))?;

    // Everything from the host's view first: the new root hides it.
    let root = bind(Path::new("/"), RO, false)?.expect("the root exists");
    let mut devices = Vec::new();
    for name in DEVICES {
        let host = Path::new("/dev").join(name);
        if let Some(mut b) = bind(&host, libc::MOUNT_ATTR_NOSUID, true)? {
            b.is_dir = false;
            devices.push(b);
        }
    }
    let binds = host_binds(layout)?;

    // The cloned root, read-only, becomes `/`.
    let base = ["/tmp", "/mnt", "/var/tmp"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.is_dir())
        .ok_or("failed to find a folder to mount the new root on (/tmp, /mnt, /var/tmp)")?;
    attach(&root.tree, base).map_err(|e| failed("mount the new root on", base, e))?;
    pivot_into(base)?;

    make_dev(&devices)?;
    make_proc()?;
    for b in &binds {
        match b {
            Step::Tmpfs(at, mode) => {
                mount_new(
                    "tmpfs",
                    at,
                    libc::MS_NOSUID | libc::MS_NODEV,
                    &format!("mode={mode:o}"),
                )
                .map_err(|e| failed("mount a tmpfs on", at, e))?;
            }
            Step::Skeleton(at) => {
                mount_point(at, true)?;
                mount_new("tmpfs", at, libc::MS_NOSUID | libc::MS_NODEV, "mode=755")
                    .map_err(|e| failed("mount a tmpfs on", at, e))?;
            }
            Step::Bind(b) => place(b)?,
        }
    }
    // Their mount points made, the skeletons take nothing more.
    for at in &layout.skeletons {
        remount_read_only(at).map_err(|e| failed("make read-only the tmpfs on", at, e))?;
    }
    let cwd = layout.cwd.as_path();
    std::env::set_current_dir(cwd).map_err(|e| failed("enter", cwd, e))?;
    if layout.own_network {
        loopback_up()?;
    }
    drop_capabilities()
}

/// A mount on top of the read-only root, in order.
enum Step {
    Tmpfs(PathBuf, u32),
    /// A tmpfs for mount points only ([`Layout::skeletons`]).
    Skeleton(PathBuf),
    Bind(Bind),
}

/// The layout's mounts, opened from the host's view, in the order bubblewrap mounts them.
fn host_binds(layout: &Layout) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    if Path::new("/run").is_dir() {
        steps.push(Step::Tmpfs("/run".into(), 0o755));
    }
    if let Some(home) = &layout.hide {
        steps.push(Step::Tmpfs(home.clone(), 0o755));
        for keep in &layout.keep {
            steps.extend(bind(keep, RO, true)?.map(Step::Bind));
        }
    }
    match &layout.tmp {
        Some(tmp) => {
            let mut b = bind(tmp, RW, false)?.expect("not optional");
            b.at = "/tmp".into();
            steps.push(Step::Bind(b));
        }
        None => steps.push(Step::Tmpfs("/tmp".into(), 0o1777)),
    }
    for at in &layout.skeletons {
        steps.push(Step::Skeleton(at.clone()));
    }
    for dir in &layout.writable {
        steps.extend(bind(dir, RW, false)?.map(Step::Bind));
    }
    for path in &layout.readable {
        steps.extend(bind(path, RO, false)?.map(Step::Bind));
    }
    for path in &layout.readable_if_there {
        steps.extend(bind(path, RO, true)?.map(Step::Bind));
    }
    Ok(steps)
}

/// Makes the tree mounted on `base` the root, and lets go of the old one.
fn pivot_into(base: &Path) -> Result<(), String> {
    std::env::set_current_dir(base).map_err(|e| failed("enter", base, e))?;
    // pivot_root(".", "."): the old root ends up on top of the new one, and is then detached.
    // SAFETY: valid C strings.
    check(unsafe { libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) })
        .map_err(|e| failed("pivot into the new root at", base, e))?;
    // SAFETY: a valid C string.
    check(unsafe { libc::umount2(c".".as_ptr(), libc::MNT_DETACH) } as libc::c_long)
        .map_err(|e| failed("detach the old root from", base, e))?;
    std::env::set_current_dir("/").map_err(|e| failed("enter", Path::new("/"), e))
}

/// A fresh `/dev`, as bubblewrap's `--dev` makes it.
fn make_dev(devices: &[Bind]) -> Result<(), String> {
    let dev = Path::new("/dev");
    mount_new("tmpfs", dev, libc::MS_NOSUID | libc::MS_NODEV, "mode=0755")
        .map_err(|e| failed("mount a tmpfs on", dev, e))?;
    for b in devices {
        place(b)?;
    }
    for (link, to) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
        ("core", "/proc/kcore"),
        ("ptmx", "pts/ptmx"),
    ] {
        let at = dev.join(link);
        std::os::unix::fs::symlink(to, &at).map_err(|e| failed("make the link", &at, e))?;
    }
    for sub in ["shm", "pts"] {
        let at = dev.join(sub);
        std::fs::create_dir(&at).map_err(|e| failed("make", &at, e))?;
    }
    let pts = dev.join("pts");
    mount_new(
        "devpts",
        &pts,
        libc::MS_NOSUID | libc::MS_NOEXEC,
        "newinstance,ptmxmode=0666,mode=620",
    )
    .map_err(|e| failed("mount devpts on", &pts, e))
}

/// The new PID namespace's `/proc`, its system-wide knobs read-only.
fn make_proc() -> Result<(), String> {
    let proc = Path::new("/proc");
    mount_new(
        "proc",
        proc,
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        "",
    )
    .map_err(|e| failed("mount proc on", proc, e))?;
    for sub in PROC_READ_ONLY {
        let at = proc.join(sub);
        if let Some(b) = bind(&at, RO, true)? {
            attach(&b.tree, &at).map_err(|e| failed("mount", &at, e))?;
        }
    }
    Ok(())
}

/// `lo` up, as bubblewrap brings it up: localhost works inside, nothing else exists.
fn loopback_up() -> Result<(), String> {
    let lo = Path::new("lo");
    // SAFETY: plain socket and ioctl calls on a zeroed `ifreq` naming `lo`.
    unsafe {
        let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if sock < 0 {
            return Err(failed("open a socket for", lo, io::Error::last_os_error()));
        }
        let sock = OwnedFd::from_raw_fd(sock);
        let mut req: libc::ifreq = std::mem::zeroed();
        for (i, b) in b"lo".iter().enumerate() {
            req.ifr_name[i] = *b as libc::c_char;
        }
        req.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        if libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS, &req) < 0 {
            return Err(failed("bring up", lo, io::Error::last_os_error()));
        }
    }
    Ok(())
}

/// No capability in any set, none to be had again (`no_new_privs`, an empty bounding set): what
/// the supervisor starts runs with none, whatever its uid inside.
fn drop_capabilities() -> Result<(), String> {
    let caps = Path::new("capabilities");
    // SAFETY: prctl and capset with valid arguments.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 {
            return Err(failed(
                "set no_new_privs for",
                caps,
                io::Error::last_os_error(),
            ));
        }
        for cap in 0..64 {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 {
                // Past the last capability this kernel knows.
                if io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
                    break;
                }
                return Err(failed(
                    "drop the bounding set of",
                    caps,
                    io::Error::last_os_error(),
                ));
            }
        }
        if libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        ) < 0
        {
            return Err(failed(
                "clear the ambient",
                caps,
                io::Error::last_os_error(),
            ));
        }
        #[repr(C)]
        struct Header {
            version: u32,
            pid: libc::c_int,
        }
        #[repr(C)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        let header = Header {
            version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
            pid: 0,
        };
        let data = [
            Data {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            },
            Data {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            },
        ];
        if libc::syscall(libc::SYS_capset, &header, data.as_ptr()) < 0 {
            return Err(failed("drop the", caps, io::Error::last_os_error()));
        }
    }
    Ok(())
}

/// Clones this process into new namespaces of every kind (user, mount, PID, IPC, UTS, cgroup,
/// and network: a new one, or `network`, kept by [`Networks`]). The clone gets `stdio` as its
/// descriptors 0, 1 and 2 and no other descriptor, dies with this process (`SIGKILL`), and runs
/// `child`, then exits with its code; this process gets the clone's pid. Fails, rather than
/// clone, when this process has more than one thread (a clone of a threaded process may only
/// call async-signal-safe functions, and `child` does more).
///
/// `child` must not use a descriptor it captured: in the clone only `stdio` is open.
pub fn clone_sandbox(
    stdio: [OwnedFd; 3],
    network: Option<&Network>,
    child: impl FnOnce() -> i32,
) -> io::Result<i32> {
    let threads = threads()?;
    if threads != 1 {
        return Err(io::Error::other(format!(
            "refusing to clone a process of {threads} threads into a sandbox"
        )));
    }
    let flags = match network {
        Some(network) => {
            network.enter()?;
            CLONE_FLAGS
        }
        None => CLONE_FLAGS | libc::CLONE_NEWNET,
    };
    let flags = (flags | libc::SIGCHLD) as libc::c_ulong;
    // SAFETY: clone without a new stack is fork with new namespaces. This process has one
    // thread (checked above), so no lock is held by a thread the clone lacks, and the clone may
    // run anything; it never returns from this branch (it exits below).
    let pid = unsafe { libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid > 0 {
        return Ok(pid as i32);
    }
    let code = match child_stdio(&stdio) {
        Ok(()) => child(),
        Err(_) => 1,
    };
    // SAFETY: ends the clone without unwinding into the parent's frames or running its
    // destructors (whose descriptors the clone no longer holds).
    unsafe { libc::_exit(code) }
}

/// How many threads this process has: namespaces it enters or clones into take only one.
fn threads() -> io::Result<usize> {
    Ok(std::fs::read_dir("/proc/self/task")?.count())
}

/// In the clone: `stdio` on 0, 1 and 2, every other descriptor closed, a session of its own (no
/// terminal to inject into), killed with its parent, dumpable while it writes its own id maps (a non-dumpable process's `/proc` files are
/// root's; the supervisor makes itself non-dumpable again before anything runs).
fn child_stdio(stdio: &[OwnedFd; 3]) -> io::Result<()> {
    // Above every descriptor a fresh copy could land on, so no dup2 overwrites a source.
    let mut high = Vec::new();
    for fd in stdio {
        // SAFETY: F_DUPFD_CLOEXEC on a descriptor this process holds returns a new one.
        let copy = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) };
        if copy < 0 {
            return Err(io::Error::last_os_error());
        }
        high.push(copy);
    }
    for (target, fd) in high.into_iter().enumerate() {
        // SAFETY: dup2 onto 0, 1 or 2 from a descriptor this process holds.
        if unsafe { libc::dup2(fd, target as libc::c_int) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    // SAFETY: closes every descriptor above 2; nothing in the clone uses one afterwards (the
    // OwnedFds of the parent's frames are never dropped: the clone exits with _exit).
    if unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: setsid and prctl with integer arguments.
    unsafe {
        if libc::setsid() < 0
            || libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) < 0
            || libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) < 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Makes `cmd`'s process get `SIGKILL` when the thread that spawns it ends.
pub fn die_with_parent(cmd: &mut std::process::Command) {
    // SAFETY: prctl is async-signal-safe, and the closure touches no memory of the parent.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(cmd, || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Turns transparent huge pages off for the process before any of its code runs: an entry of
/// the executable's `.preinit_array`, which the loader calls before every constructor and before
/// Rust's runtime makes its first allocation. Every executable that links this crate has it
/// (the harness binary, and its tests).
///
/// Why so early: mimalloc asks for huge pages on its arenas, and its first arena is reserved and
/// touched by the runtime's first allocation, before `main`. Turned off from `main`, each start
/// of the binary still faulted in and zeroed two or three 2 MiB pages, costly on a VM whose
/// free memory the host takes back (benches/README.md, `sandbox_overhead`). The setting is kept
/// across `fork` and `exec`, so the run supervisors and commands have it too.
#[used]
#[unsafe(link_section = ".preinit_array")]
pub static THP_OFF_BEFORE_MAIN: extern "C" fn() = thp_off;

extern "C" fn thp_off() {
    // SAFETY: prctl with integer arguments only; it touches no memory of the process. What it
    // returns is not checked: a kernel without the flag keeps its default, as before.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_built_outside_a_fresh_sandbox() {
        // Here (not PID 1, the host's user namespace) it must refuse before touching a mount.
        let layout = Layout {
            cwd: "/".into(),
            ..Layout::default()
        };
        let err = enter(&layout, Ids::current()).unwrap_err();
        assert!(err.starts_with("refusing"), "{err}");
        assert!(
            std::fs::read_to_string("/proc/self/uid_map").is_ok_and(|m| !m.trim().is_empty()),
            "the test's own user namespace is untouched"
        );
    }

    #[test]
    fn a_process_of_several_threads_is_not_cloned() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || {
            let _ = rx.recv();
        });
        let null = || -> OwnedFd { std::fs::File::open("/dev/null").unwrap().into() };
        let err = clone_sandbox([null(), null(), null()], None, || 0).unwrap_err();
        assert!(err.to_string().contains("threads"), "{err}");
        drop(tx);
        other.join().unwrap();
    }
}
