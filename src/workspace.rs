//! Workspaces: a throwaway copy of a task's fixture per run, and the unified diff of what the agent
//! changed.
//!
//! [`Workspace::create`] copies `repo/` into a temporary folder, a new one or an ended run's
//! emptied ([`crate::sandbox::pool`], [`Workspace::recycle`]) (symlinks stay symlinks,
//! the original is never touched and the process cwd never changes) and keeps an in-memory
//! snapshot of the fixture (path to bytes and mode). The workspaces of one fixture share one
//! snapshot, taken once (a fixture changed on disk is snapshotted anew), and the diff's walk
//! shares the bytes of every unchanged file with it: a run holds only what its agent changed
//! (a 100 MB fixture, 8 runs 4 at a time: 0.7–0.8 GB of peak memory before, 0.12–0.15 GB after).
//!
//! The copy is the same on every run and every host, so that tool output replays identically:
//! - every file, folder and symlink of the copy, the workspace folder itself and its parent get
//!   the access and modification time [`FIXED_MTIME`] (2000-01-01T00:00:00Z), symlinks without
//!   following them (the first read of a file sets its access time again, as the file system's
//!   `relatime` does; `ls -l` shows modification times);
//! - modes are normalised as git would check them out: folders 0755, files 0755 when any
//!   executable bit is set and 0644 otherwise (the umask of whoever checked the fixture out does
//!   not leak);
//! - the workspace is the folder `work` inside a private temporary folder, so `ls -la` shows a
//!   `..` whose times, owner and link count are the harness's own, not those of the shared `/tmp`.
//!
//! What the copy cannot fix is normalised at compare time by the built-in rules of
//! `cassettes::noise` (owner and group names, folder sizes and block counts that depend on the
//! file system, inode and device numbers, the change time `stat` shows, which is the time of the
//! copy). What is left: the order `find` or `os.listdir` return entries in follows the file system
//! (stable on one file system, since the copy creates entries in name order); files the agent
//! creates get the process umask and the current time. [`Workspace::diff`]
//! compares the folder now with that snapshot and renders a git-style unified diff (`a/` and
//! `b/` prefixes, `/dev/null` for added and deleted files, binary files noted, not diffed).
//! Paths are compared as the bytes the file system holds, so two names that are not UTF-8 never
//! pass for one; such a name is shown quoted as git quotes it (`"a/f\377"`).
//!
//! The diff is bounded, since it counts inside the run's wall-time limit: it stops at the
//! deadline it is given (the files not reached are listed, [`WorkspaceDiff::timed_out`] is set);
//! each text diff has its own time budget (past it the rest of the file is shown as removed and
//! added); files over [`TEXT_DIFF_MAX_BYTES`] are summarised with line counts taken in linear
//! time (common lines at both ends, then the rest counted without order); files over
//! [`READ_MAX_BYTES`] are not read, only their size and a cheap comparison, and so are those
//! past [`DIFF_READ_BUDGET`] read in all (sparse files cost a command nothing); past
//! [`DIFF_TEXT_MAX_BYTES`] of text, the remaining files are counted and not shown.
//!
//! A file with more than one link that the workspace's owner does not own is not read either:
//! where `fs.protected_hardlinks` is 0, the commands of a root harness (run as `nobody`, who owns
//! the workspace) may link any file of the file system into it, and the report would show it.
//!
//! Ignored by the diff (build output and caches a check or the agent may create, never the
//! agent's work): any path component named `.git`, `target`, `__pycache__`, `node_modules`,
//! `.pytest_cache`, `.mypy_cache`, `.ruff_cache` or `.venv`, and `*.pyc` files.
//!
//! The private folder's name holds its owner ([`crate::sandbox::stale::create_owned`]) so that a
//! harness killed mid-run leaves a folder the next one can prove dead and remove; a kept
//! workspace's folder is created without one, or loses it when kept later.
//!
//! Depends on `tasks`, and on `sandbox::stale` for the owned folder.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::hash::Hasher;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use similar::{Algorithm, ChangeTag, TextDiff};

use crate::sandbox::pool::{FolderPool, RunFolder};
use crate::tasks::Task;

/// The access and modification time every entry of a fresh workspace gets: 2000-01-01T00:00:00Z,
/// in seconds since the Unix epoch.
pub const FIXED_MTIME: i64 = 946_684_800;

/// The name of the workspace folder inside its private temporary folder.
pub const WORKSPACE_DIR_NAME: &str = "work";

/// Folder names the diff skips wherever they occur.
pub const IGNORED_DIRS: [&str; 8] = [
    ".git",
    "target",
    "__pycache__",
    "node_modules",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".venv",
];

/// Files larger than this (either side) are summarised, not diffed line by line.
pub const TEXT_DIFF_MAX_BYTES: usize = 1024 * 1024;

/// Files larger than this are not read by the diff: only their size is compared, and their
/// bytes against the fixture's when the sizes match.
pub const READ_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// The most bytes the diff reads of the workspace in all: a command makes sparse files of any
/// size for nothing, and four of [`READ_MAX_BYTES`] less one byte each held a gigabyte of the
/// harness's memory. Files that would take it past this are treated as those over
/// [`READ_MAX_BYTES`].
pub const DIFF_READ_BUDGET: u64 = 512 * 1024 * 1024;

/// The most text the diff writes out: past it, the files still to come are counted (files and
/// lines, as in the reports) but not shown, and one closing line says how many were left out. A
/// diff is written to `diff.patch` and `run.json` and read back by `compare` and `merge`; without
/// a bound, a few hundred files of a megabyte each that a command generates would put gigabytes
/// in them (and in the harness's memory).
pub const DIFF_TEXT_MAX_BYTES: usize = 32 * 1024 * 1024;

/// The time one file's line diff may take before the rest of it is shown as removed and added.
pub const FILE_DIFF_BUDGET: Duration = Duration::from_millis(250);

/// A failure to set up a workspace.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("failed to create a temporary folder: {0}")]
    TempDir(#[source] io::Error),
    #[error("failed to copy {path}: {source}")]
    Copy {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("the fixture {0} is not a folder")]
    NoRepo(PathBuf),
}

/// One entry of a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Entry {
    File {
        /// Shared with the fixture's snapshot when the file is unchanged.
        bytes: Arc<[u8]>,
        mode: u32,
    },
    Symlink {
        target: PathBuf,
    },
    /// A file over [`READ_MAX_BYTES`], or one that would take the diff past the bytes it reads
    /// in all (`past_budget`: that budget, [`DIFF_READ_BUDGET`]): not read. `same` says whether
    /// its bytes equal the fixture's file at the same path.
    Unread {
        len: u64,
        mode: u32,
        same: bool,
        past_budget: Option<u64>,
        /// A hard link to a file the workspace's owner does not own: not read, whatever its size
        /// (where `fs.protected_hardlinks` is 0, the commands of a root harness, run as `nobody`,
        /// may link any file of the file system into the workspace, root's secrets included).
        foreign: bool,
    },
    /// A fixture's file over [`READ_MAX_BYTES`], or past [`DIFF_READ_BUDGET`] read in all: not
    /// held (a data set in a fixture would sit in memory for every run), compared at `source`,
    /// the fixture's own file, when a workspace file of the same path is.
    Large {
        len: u64,
        mode: u32,
        source: PathBuf,
    },
}

/// What the agent changed, as a unified diff and its counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkspaceDiff {
    /// Git-style unified diff of every changed file, files in path order; empty when nothing changed.
    pub unified: String,
    pub files_changed: u32,
    pub lines_added: u32,
    pub lines_removed: u32,
    /// The deadline passed before every changed file was diffed (those are listed, not diffed).
    pub timed_out: bool,
}

/// A throwaway copy of a task's fixture. Removed on drop unless kept.
#[derive(Debug)]
pub struct Workspace {
    /// The private folder `path` is in; `None` once kept for good.
    dir: Option<Private>,
    path: PathBuf,
    snapshot: Arc<Snapshot>,
    keep: bool,
}

/// A workspace's private folder: owned by this harness (removed on drop, or given back for a
/// later run: [`Workspace::recycle`]), or the user's from the start (`--keep-workspaces`).
#[derive(Debug)]
enum Private {
    Owned(RunFolder),
    ToKeep(tempfile::TempDir),
}

impl Private {
    fn path(&self) -> &Path {
        match self {
            Private::Owned(folder) => folder.root(),
            Private::ToKeep(dir) => dir.path(),
        }
    }
}

/// The idle workspace folders of ended runs, emptied ([`crate::sandbox::pool`]).
static IDLE: FolderPool = FolderPool::new();

/// The folders in a workspace's private folder.
const PRIVATE_FOLDERS: &[&str] = &[WORKSPACE_DIR_NAME];

/// Removes the idle workspace folders of ended runs: a suite's end.
pub fn remove_idle() {
    IDLE.drain();
}

/// Every file and symlink of a fixture as copied, by relative path.
type Snapshot = BTreeMap<OsString, Entry>;

/// The snapshots of the fixtures some workspace still holds, by the fixture's path and what its
/// copy saw of it ([`copy_tree`]): the runs of one task (its epochs, models, strategies) share
/// one, so a fixture is read once and held once however many of its runs are in flight, and is
/// let go with the last of them. A fixture changed on disk meanwhile is snapshotted anew.
static SNAPSHOTS: Mutex<BTreeMap<(PathBuf, u64), SnapshotSlot>> = Mutex::new(BTreeMap::new());

/// One fixture's place in [`SNAPSHOTS`], locked while its snapshot is taken, so that runs of it
/// starting together take it once.
type SnapshotSlot = Arc<Mutex<Weak<Snapshot>>>;

impl Workspace {
    /// Copies `task.repo` into a temporary folder and snapshots it.
    pub fn create(task: &Task, keep: bool) -> Result<Workspace, WorkspaceError> {
        Self::from_fixture(&task.repo, &format!("harness-{}-", task.id), keep)
    }

    /// Copies any fixture folder (what [`Workspace::create`] does with a task's `repo/`) into a
    /// folder of an ended run's, emptied, or a fresh one; a fresh one, never the user's, to keep.
    pub fn from_fixture(
        repo: &Path,
        prefix: &str,
        keep: bool,
    ) -> Result<Workspace, WorkspaceError> {
        if !repo.is_dir() {
            return Err(WorkspaceError::NoRepo(repo.to_path_buf()));
        }
        // A folder to keep is the user's from the start; any other is owned, so that a harness
        // killed from here on leaves a folder the next one can prove dead.
        let dir = if keep {
            let dir = tempfile::Builder::new()
                .prefix(prefix)
                .tempdir()
                .map_err(WorkspaceError::TempDir)?;
            let work = dir.path().join(WORKSPACE_DIR_NAME);
            std::fs::create_dir(&work).map_err(copy_err(&work))?;
            Private::ToKeep(dir)
        } else {
            let base = std::env::temp_dir()
                .canonicalize()
                .map_err(WorkspaceError::TempDir)?;
            match IDLE.take(&base, prefix, PRIVATE_FOLDERS) {
                Some(folder) => Private::Owned(folder),
                None => Private::Owned(
                    RunFolder::create(&base, prefix, PRIVATE_FOLDERS, Some(0o755))
                        .map_err(WorkspaceError::TempDir)?,
                ),
            }
        };
        // Canonical, so paths the tools print match what a `pwd` in bash prints (a run folder's
        // is already).
        let parent = match &dir {
            Private::Owned(folder) => Ok(folder.root().to_path_buf()),
            Private::ToKeep(dir) => dir.path().canonicalize().map_err(WorkspaceError::TempDir),
        };
        let mut workspace = Workspace {
            path: dir.path().join(WORKSPACE_DIR_NAME),
            dir: Some(dir),
            snapshot: Arc::default(),
            keep,
        };
        // Whatever fails from here, the folder goes (one to keep too: it holds no run).
        match parent.and_then(|parent| workspace.fill(repo, &parent)) {
            Ok(()) => Ok(workspace),
            Err(e) => {
                workspace.discard();
                Err(e)
            }
        }
    }

    /// Copies `repo` into the empty workspace folder in `parent`, snapshots it, and fixes the
    /// modes and times of everything.
    fn fill(&mut self, repo: &Path, parent: &Path) -> Result<(), WorkspaceError> {
        let path = parent.join(WORKSPACE_DIR_NAME);
        self.path = path.clone();
        let mut seen = std::collections::hash_map::DefaultHasher::new();
        copy_tree(repo, &path, &mut seen)?;
        set_dir_mode(&path)?;
        self.snapshot =
            shared_snapshot(repo, seen.finish(), &path).map_err(|source| WorkspaceError::Copy {
                path: path.clone(),
                source,
            })?;
        // Last, once nothing more is created or read inside (a read would set the access
        // times again): the times of everything, then the folder itself and its parent (the
        // `..` of `ls -la`).
        fix_times_under(&path)?;
        fix_times(&path)?;
        set_dir_mode(parent)?;
        fix_times(parent)?;
        Ok(())
    }

    /// The workspace folder (canonical).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the folder survives the drop.
    pub fn is_kept(&self) -> bool {
        self.keep
    }

    /// Removes the folder, kept or not: a workspace made for a run that never started (a stop,
    /// a spent budget came first) holds nothing of anyone's.
    pub fn discard(mut self) {
        self.keep = false;
    }

    /// Keeps the folder on disk and returns its path.
    pub fn into_kept_path(mut self) -> PathBuf {
        self.keep = true;
        self.disown();
        self.path.clone()
    }

    /// The diff between the fixture as copied and the folder now, given up at `deadline` (see
    /// the module docs).
    pub fn diff(&self, deadline: Instant) -> io::Result<WorkspaceDiff> {
        self.diff_reading_at_most(deadline, DIFF_READ_BUDGET)
    }

    /// [`Workspace::diff`], reading at most `budget` bytes of the workspace.
    fn diff_reading_at_most(&self, deadline: Instant, budget: u64) -> io::Result<WorkspaceDiff> {
        let mut now = BTreeMap::new();
        let side = Side::Workspace {
            snapshot: &self.snapshot,
            budget,
        };
        walk(&self.path, OsStr::new(""), &mut now, side)?;
        Ok(diff_snapshots(
            &self.snapshot,
            &now,
            deadline,
            DIFF_TEXT_MAX_BYTES,
        ))
    }
}

impl Workspace {
    /// A kept folder is the user's: its private folder loses the owner in its name, so no
    /// cleanup of dead harness folders may take it (the workspace path changes with it). Once;
    /// a failed rename leaves the path as it was.
    fn disown(&mut self) {
        let Some(dir) = self.dir.take() else {
            return;
        };
        let parent = match dir {
            Private::Owned(folder) => folder.into_root(),
            Private::ToKeep(dir) => dir.keep(),
        };
        if let Ok(renamed) = crate::sandbox::stale::disown(&parent) {
            self.path = renamed.join(WORKSPACE_DIR_NAME);
        }
    }

    /// Ends the run's use of the workspace: a folder not kept is given back, emptied, for a
    /// later run when every process of the run has `ended`
    /// ([`crate::sandbox::Ended::everything_ended`]: nothing can write in it any more), and
    /// removed otherwise.
    pub fn recycle(mut self, ended: bool) {
        if self.keep {
            return;
        }
        match self.dir.take() {
            Some(Private::Owned(folder)) if ended => IDLE.give_back(folder),
            Some(Private::Owned(folder)) => folder.remove(),
            // Not this harness's to give: the drop removes it.
            other => self.dir = other,
        }
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        if self.keep {
            self.disown();
            return;
        }
        match self.dir.take() {
            Some(Private::Owned(folder)) => folder.remove(),
            // Before the handle's own removal, which gives up at the first entry made meanwhile
            // (a command of a cancelled run not dead yet).
            Some(Private::ToKeep(dir)) => {
                crate::sandbox::stale::remove_settled(dir.path());
            }
            None => {}
        }
    }
}

fn copy_err(path: &Path) -> impl FnOnce(io::Error) -> WorkspaceError + '_ {
    move |source| WorkspaceError::Copy {
        path: path.to_path_buf(),
        source,
    }
}

/// Copies the contents of `from` into the existing folder `to`.
/// Copies the tree `from` into `to`, feeding `seen` what identifies each entry of `from` (its
/// name, inode, size and change time), so that two copies of one unchanged fixture feed it the
/// same.
fn copy_tree(from: &Path, to: &Path, seen: &mut impl Hasher) -> Result<(), WorkspaceError> {
    use std::os::unix::fs::MetadataExt;
    let mut entries: Vec<_> = std::fs::read_dir(from)
        .map_err(copy_err(from))?
        .collect::<Result<_, _>>()
        .map_err(copy_err(from))?;
    entries.sort_by_key(|e| e.file_name());
    seen.write_usize(entries.len());
    for entry in entries {
        let src = entry.path();
        let dst = to.join(entry.file_name());
        let meta = std::fs::symlink_metadata(&src).map_err(copy_err(&src))?;
        seen.write(entry.file_name().as_bytes());
        for n in [meta.ino(), meta.len(), meta.mode().into()] {
            seen.write_u64(n);
        }
        seen.write_i64(meta.ctime());
        seen.write_i64(meta.ctime_nsec());
        let kind = meta.file_type();
        if kind.is_symlink() {
            let target = std::fs::read_link(&src).map_err(copy_err(&src))?;
            symlink(&target, &dst).map_err(copy_err(&dst))?;
        } else if kind.is_dir() {
            std::fs::create_dir(&dst).map_err(copy_err(&dst))?;
            copy_tree(&src, &dst, seen)?;
            set_dir_mode(&dst)?;
        } else if kind.is_file() {
            std::fs::copy(&src, &dst).map_err(copy_err(&src))?;
            // As git checks files out: only the executable bit is the fixture's.
            let mode = if meta.permissions().mode() & 0o111 != 0 {
                0o755
            } else {
                0o644
            };
            std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(mode))
                .map_err(copy_err(&dst))?;
        }
        // Sockets, fifos and devices have no place in a fixture; they are skipped.
    }
    Ok(())
}

fn set_dir_mode(dir: &Path) -> Result<(), WorkspaceError> {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).map_err(copy_err(dir))
}

/// Sets the access and modification time of `path` (not following a symlink) to [`FIXED_MTIME`].
fn fix_times(path: &Path) -> Result<(), WorkspaceError> {
    use nix::sys::stat::{UtimensatFlags, utimensat};
    use nix::sys::time::TimeSpec;
    let t = TimeSpec::new(FIXED_MTIME, 0);
    utimensat(None, path, &t, &t, UtimensatFlags::NoFollowSymlink).map_err(|errno| {
        WorkspaceError::Copy {
            path: path.to_path_buf(),
            source: io::Error::from(errno),
        }
    })
}

/// [`fix_times`] on everything under `dir` (not `dir` itself).
fn fix_times_under(dir: &Path) -> Result<(), WorkspaceError> {
    for entry in std::fs::read_dir(dir).map_err(copy_err(dir))? {
        let path = entry.map_err(copy_err(dir))?.path();
        let kind = std::fs::symlink_metadata(&path)
            .map_err(copy_err(&path))?
            .file_type();
        if kind.is_dir() {
            fix_times_under(&path)?;
        }
        fix_times(&path)?;
    }
    Ok(())
}

fn ignored(name: &str) -> bool {
    IGNORED_DIRS.contains(&name)
}

/// Every file and symlink under `root`, the fresh copy of fixture `repo`, by `/`-separated
/// relative path (the file system's bytes, which sort as git sorts paths), ignored folders
/// skipped; files over [`READ_MAX_BYTES`] or past [`DIFF_READ_BUDGET`] as [`Entry::Large`].
fn snapshot(root: &Path, repo: &Path) -> io::Result<Snapshot> {
    snapshot_reading_at_most(root, repo, DIFF_READ_BUDGET)
}

/// [`snapshot`], reading at most `budget` bytes.
fn snapshot_reading_at_most(root: &Path, repo: &Path, budget: u64) -> io::Result<Snapshot> {
    let mut out = BTreeMap::new();
    walk(
        root,
        OsStr::new(""),
        &mut out,
        Side::Fixture { repo, budget },
    )?;
    Ok(out)
}

/// Which side of the diff a walk reads.
#[derive(Clone, Copy)]
enum Side<'a> {
    /// The fixture's fresh copy, of fixture `repo`, reading at most `budget` bytes.
    Fixture { repo: &'a Path, budget: u64 },
    /// The workspace after the run, compared with the fixture's `snapshot`, reading at most
    /// `budget` bytes.
    Workspace { snapshot: &'a Snapshot, budget: u64 },
}

/// The snapshot of fixture `repo` (whose copy saw `seen`), taken of its fresh copy `copy` unless
/// a workspace of the same fixture holds one already ([`SNAPSHOTS`]).
fn shared_snapshot(repo: &Path, seen: u64, copy: &Path) -> io::Result<Arc<Snapshot>> {
    let key = (
        repo.canonicalize().unwrap_or_else(|_| repo.to_path_buf()),
        seen,
    );
    let slot = {
        let mut slots = SNAPSHOTS.lock().unwrap_or_else(|e| e.into_inner());
        // Forget the fixtures no workspace holds and no run is snapshotting.
        slots.retain(|_, slot| {
            Arc::strong_count(slot) > 1
                || slot.try_lock().map_or(true, |weak| weak.strong_count() > 0)
        });
        slots.entry(key).or_default().clone()
    };
    let mut held = slot.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(shared) = held.upgrade() {
        return Ok(shared);
    }
    let taken = Arc::new(snapshot(copy, repo)?);
    *held = Arc::downgrade(&taken);
    Ok(taken)
}

/// Walks `dir` into `out`. With `fixture` (the diff's side: the fixture's snapshot and the most
/// bytes to read), files over [`READ_MAX_BYTES`], or past the budget, are not read but compared
/// with the fixture's file of the same path. The folders still to walk
/// are kept in a list, not on the stack: a command may nest folders thousands deep (a walk by
/// recursion overflowed the thread's stack, which aborts the harness); a path the kernel
/// refuses as too long ends the walk with an error that names where.
fn walk(dir: &Path, prefix: &OsStr, out: &mut Snapshot, side: Side<'_>) -> io::Result<()> {
    let (fixture, repo, whole_budget) = match side {
        Side::Workspace { snapshot, budget } => (Some(snapshot), None, budget),
        Side::Fixture { repo, budget } => (None, Some(repo), budget),
    };
    let mut budget = whole_budget;
    // The workspace's owner: the commands' user (`nobody` under a root harness outside
    // `isolated`), or the harness's.
    let owner = match fixture {
        Some(_) => Some(
            std::fs::metadata(dir)
                .map_err(|e| at_path(prefix, e))?
                .uid(),
        ),
        None => None,
    };
    let mut pending = vec![(dir.to_path_buf(), prefix.to_owned())];
    while let Some((dir, prefix)) = pending.pop() {
        let at = |e: io::Error| at_path(&prefix, e);
        // In name order, so that which files a spent budget leaves unread is the same on every
        // file system.
        let mut entries = std::fs::read_dir(&dir)
            .map_err(at)?
            .collect::<io::Result<Vec<_>>>()
            .map_err(at)?;
        entries.sort_by_key(std::fs::DirEntry::file_name);
        // Folders are walked after this one, first name first.
        let mut below = Vec::new();
        for entry in entries {
            let file_name = entry.file_name();
            let mut rel = prefix.clone();
            if !prefix.is_empty() {
                rel.push("/");
            }
            rel.push(&file_name);
            let at = |e: io::Error| at_path(&rel, e);
            // Only for the ignore rules, which are ASCII.
            let name = file_name.to_string_lossy();
            let meta = std::fs::symlink_metadata(entry.path()).map_err(at)?;
            let kind = meta.file_type();
            if kind.is_symlink() {
                let target = std::fs::read_link(entry.path()).map_err(at)?;
                out.insert(rel, Entry::Symlink { target });
            } else if kind.is_dir() {
                if !ignored(&name) {
                    below.push((entry.path(), rel));
                }
            } else if kind.is_file() && !name.ends_with(".pyc") {
                let mode = if meta.permissions().mode() & 0o111 != 0 {
                    0o100755
                } else {
                    0o100644
                };
                let past_budget = meta.len() > budget;
                if let Some(repo) = repo
                    && (meta.len() > READ_MAX_BYTES || past_budget)
                {
                    let source = repo.join(&rel);
                    out.insert(
                        rel,
                        Entry::Large {
                            len: meta.len(),
                            mode,
                            source,
                        },
                    );
                    continue;
                }
                if owner.is_some_and(|owner| meta.nlink() > 1 && meta.uid() != owner) {
                    out.insert(
                        rel,
                        Entry::Unread {
                            len: meta.len(),
                            mode,
                            same: false,
                            past_budget: None,
                            foreign: true,
                        },
                    );
                    continue;
                }
                let was = fixture.and_then(|f| f.get(&rel));
                // A fixture file the snapshot does not hold is compared where it is, unread.
                let large_before = matches!(was, Some(Entry::Large { .. }));
                if fixture.is_some() && (meta.len() > READ_MAX_BYTES || past_budget || large_before)
                {
                    let same = match was {
                        Some(Entry::File { bytes, .. }) if bytes.len() as u64 == meta.len() => {
                            same_bytes(&entry.path(), bytes).map_err(at)?
                        }
                        Some(Entry::Large { len, source, .. }) if *len == meta.len() => {
                            same_files(&entry.path(), source).map_err(at)?
                        }
                        _ => false,
                    };
                    out.insert(
                        rel,
                        Entry::Unread {
                            len: meta.len(),
                            mode,
                            same,
                            past_budget: (past_budget && meta.len() <= READ_MAX_BYTES)
                                .then_some(whole_budget),
                            foreign: false,
                        },
                    );
                    continue;
                }
                let read = std::fs::read(entry.path()).map_err(at)?;
                budget = budget.saturating_sub(read.len() as u64);
                // An unchanged file shares the fixture's bytes: a run holds what it changed.
                let bytes = match fixture.and_then(|f| f.get(&rel)) {
                    Some(Entry::File { bytes, .. }) if **bytes == *read => bytes.clone(),
                    _ => Arc::from(read),
                };
                out.insert(rel, Entry::File { bytes, mode });
            }
        }
        pending.extend(below.into_iter().rev());
    }
    Ok(())
}

/// `e` with the workspace path it happened at (`rel`), shortened to its first and last
/// characters when long (a path thousands of folders deep).
fn at_path(rel: &OsStr, e: io::Error) -> io::Error {
    const SHOWN: usize = 120;
    let rel = rel.to_string_lossy();
    let shown = if rel.len() > 2 * SHOWN {
        let head = (0..=SHOWN)
            .rev()
            .find(|&i| rel.is_char_boundary(i))
            .unwrap_or(0);
        let tail = (rel.len() - SHOWN..=rel.len())
            .find(|&i| rel.is_char_boundary(i))
            .unwrap_or(rel.len());
        format!(
            "{}…{} ({} bytes, {} levels deep)",
            &rel[..head],
            &rel[tail..],
            rel.len(),
            rel.matches('/').count() + 1
        )
    } else if rel.is_empty() {
        ".".to_owned()
    } else {
        rel.into_owned()
    };
    io::Error::new(e.kind(), format!("{shown}: {e}"))
}

/// Whether the files at `a` and `b` hold the same bytes (read in chunks, never whole).
fn same_files(a: &Path, b: &Path) -> io::Result<bool> {
    use std::io::Read;
    let (mut a, mut b) = (std::fs::File::open(a)?, std::fs::File::open(b)?);
    let (mut x, mut y) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
    loop {
        let n = a.read(&mut x)?;
        if n == 0 {
            return Ok(b.read(&mut y[..1])? == 0);
        }
        if b.read_exact(&mut y[..n]).is_err() || x[..n] != y[..n] {
            return Ok(false);
        }
    }
}

/// Whether the file at `path` holds exactly `bytes` (read in chunks, never whole).
fn same_bytes(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut at = 0;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(at == bytes.len());
        }
        if at + n > bytes.len() || buf[..n] != bytes[at..at + n] {
            return Ok(false);
        }
        at += n;
    }
}

fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8000)].contains(&0) || std::str::from_utf8(bytes).is_err()
}

fn entry_bytes(entry: &Entry) -> &[u8] {
    match entry {
        Entry::File { bytes, .. } => bytes,
        Entry::Symlink { target } => target.as_os_str().as_encoded_bytes(),
        Entry::Unread { .. } | Entry::Large { .. } => &[],
    }
}

fn mode_of(entry: &Entry) -> u32 {
    match entry {
        Entry::File { mode, .. } | Entry::Unread { mode, .. } | Entry::Large { mode, .. } => *mode,
        Entry::Symlink { .. } => 0o120000,
    }
}

/// Whether `old` (the fixture's) and `new` (now) differ.
fn changed(old: Option<&Entry>, new: Option<&Entry>) -> bool {
    match (old, new) {
        (
            Some(Entry::File { mode: a, .. } | Entry::Large { mode: a, .. }),
            Some(Entry::Unread { mode: b, same, .. }),
        ) => !same || a != b,
        (a, b) => a != b,
    }
}

/// Sizes in binary units, for the summaries.
fn size_text(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// Lines added and removed between `old` and `new` in linear time: the lines common to both
/// ends are set aside, the rest is counted as multisets (a moved line counts as unchanged).
/// Exact for a rewrite, for one changed region and for changes far apart.
fn linear_line_counts(old: &[u8], new: &[u8]) -> (u64, u64) {
    fn split(b: &[u8]) -> Vec<&[u8]> {
        b.split_inclusive(|c| *c == b'\n').collect()
    }
    let a = split(old);
    let b = split(new);
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let a = &a[prefix..a.len() - suffix];
    let b = &b[prefix..b.len() - suffix];
    let mut counts: std::collections::HashMap<&[u8], i64> =
        std::collections::HashMap::with_capacity(a.len());
    for line in a {
        *counts.entry(line).or_default() += 1;
    }
    for line in b {
        *counts.entry(line).or_default() -= 1;
    }
    let (mut added, mut removed) = (0u64, 0u64);
    for n in counts.values() {
        if *n > 0 {
            removed += *n as u64;
        } else {
            added += n.unsigned_abs();
        }
    }
    (added, removed)
}

fn saturating_u32(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `side` (`a/`, `b/`) and `path` as a diff names them: as they are when git would leave them
/// so, else quoted as git quotes a name. A name that is not UTF-8, or holds a control character
/// (a newline, a tab, an escape sequence an agent may put in a file name), a `"` or a `\`, is
/// quoted: `\n`, `\t` and the other C escapes git writes, and every other byte outside
/// printable ASCII as an octal escape. Unquoted, a newline in a name would split the header and
/// leave a patch neither `git apply` nor a reader can take apart.
fn diff_name(side: &str, path: &OsStr) -> String {
    let bytes = path.as_bytes();
    let plain = |b: &u8| !(b.is_ascii_control() || *b == b'"' || *b == b'\\');
    if let Some(path) = path.to_str().filter(|_| bytes.iter().all(plain)) {
        return format!("{side}{path}");
    }
    let mut out = String::from("\"");
    for &b in side.as_bytes().iter().chain(bytes) {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            0x0b => out.push_str("\\v"),
            0x0c => out.push_str("\\f"),
            b'\r' => out.push_str("\\r"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

/// The diff of `before` and `after`, its text bounded by `text_max` ([`DIFF_TEXT_MAX_BYTES`]).
fn diff_snapshots(
    before: &BTreeMap<OsString, Entry>,
    after: &BTreeMap<OsString, Entry>,
    deadline: Instant,
    text_max: usize,
) -> WorkspaceDiff {
    let mut diff = WorkspaceDiff::default();
    let mut not_shown = 0u64;
    let mut paths: Vec<&OsString> = before.keys().chain(after.keys()).collect();
    paths.sort();
    paths.dedup();
    for path in paths {
        let old = before.get(path);
        let new = after.get(path);
        if !changed(old, new) {
            continue;
        }
        diff.files_changed += 1;
        let old_mode = old.map(mode_of).unwrap_or_default();
        let new_mode = new.map(mode_of).unwrap_or_default();
        if diff.unified.len() >= text_max {
            // Counted as the shown ones are, without their text.
            not_shown += 1;
            if let (Some(old), Some(new)) = (old.map(entry_bytes), new.map(entry_bytes))
                && !is_binary(old)
                && !is_binary(new)
            {
                let (added, removed) = linear_line_counts(old, new);
                diff.lines_added = diff.lines_added.saturating_add(saturating_u32(added));
                diff.lines_removed = diff.lines_removed.saturating_add(saturating_u32(removed));
            } else if let Some(bytes) = old.or(new).map(entry_bytes).filter(|b| !is_binary(b)) {
                let lines = saturating_u32(bytes.split_inclusive(|b| *b == b'\n').count() as u64);
                if old.is_some() {
                    diff.lines_removed = diff.lines_removed.saturating_add(lines);
                } else {
                    diff.lines_added = diff.lines_added.saturating_add(lines);
                }
            }
            continue;
        }
        let (a_path, b_path) = (diff_name("a/", path), diff_name("b/", path));
        let out = &mut diff.unified;
        out.push_str(&format!("diff --git {a_path} {b_path}\n"));
        match (old, new) {
            (None, Some(_)) => out.push_str(&format!("new file mode {new_mode:o}\n")),
            (Some(_), None) => out.push_str(&format!("deleted file mode {old_mode:o}\n")),
            _ if old_mode != new_mode => {
                out.push_str(&format!("old mode {old_mode:o}\nnew mode {new_mode:o}\n"));
            }
            _ => {}
        }
        let old_name = if old.is_some() {
            a_path
        } else {
            "/dev/null".to_owned()
        };
        let new_name = if new.is_some() {
            b_path
        } else {
            "/dev/null".to_owned()
        };
        if let Some(Entry::Unread {
            len,
            same,
            past_budget,
            foreign,
            ..
        }) = new
        {
            if *foreign {
                out.push_str(&format!(
                    "Files {old_name} and {new_name} differ ({}; not read: a hard link to a file the \
                     workspace's owner does not own)\n",
                    size_text(*len)
                ));
            } else if !same {
                let old_len = match old {
                    Some(Entry::File { bytes, .. }) => bytes.len() as u64,
                    Some(Entry::Large { len, .. }) => *len,
                    _ => 0,
                };
                let why = match past_budget {
                    Some(budget) => {
                        format!("past the {} the diff reads in all", size_text(*budget))
                    }
                    None if *len > READ_MAX_BYTES => format!("over {}", size_text(READ_MAX_BYTES)),
                    // Its fixture file was past what the snapshot reads.
                    None => "as the fixture's was not".to_owned(),
                };
                out.push_str(&format!(
                    "Large files {old_name} and {new_name} differ ({} -> {}; not read, {why})\n",
                    size_text(old_len),
                    size_text(*len)
                ));
            }
            continue;
        }
        if let (Some(Entry::Large { len, .. }), None) = (old, new) {
            out.push_str(&format!(
                "Large files {old_name} and {new_name} differ ({} -> 0 B; not read)\n",
                size_text(*len)
            ));
            continue;
        }
        let old_bytes = old.map(entry_bytes).unwrap_or_default();
        let new_bytes = new.map(entry_bytes).unwrap_or_default();
        if old_bytes == new_bytes {
            continue;
        }
        if Instant::now() >= deadline {
            diff.timed_out = true;
            out.push_str(&format!(
                "Files {old_name} and {new_name} differ (not diffed: the run's time limit was reached)\n"
            ));
            continue;
        }
        if is_binary(old_bytes) || is_binary(new_bytes) {
            out.push_str(&format!("Binary files {old_name} and {new_name} differ\n"));
            continue;
        }
        if old_bytes.len().max(new_bytes.len()) > TEXT_DIFF_MAX_BYTES {
            let (added, removed) = linear_line_counts(old_bytes, new_bytes);
            diff.lines_added = diff.lines_added.saturating_add(saturating_u32(added));
            diff.lines_removed = diff.lines_removed.saturating_add(saturating_u32(removed));
            out.push_str(&format!(
                "Large files {old_name} and {new_name} differ ({} -> {}; {added} lines added, {removed} removed; not diffed, over {})\n",
                size_text(old_bytes.len() as u64),
                size_text(new_bytes.len() as u64),
                size_text(TEXT_DIFF_MAX_BYTES as u64)
            ));
            continue;
        }
        let old_text = String::from_utf8_lossy(old_bytes);
        let new_text = String::from_utf8_lossy(new_bytes);
        let file_deadline = deadline.min(Instant::now() + FILE_DIFF_BUDGET);
        let text_diff = TextDiff::configure()
            .algorithm(Algorithm::Myers)
            .deadline(file_deadline)
            .diff_lines(old_text.as_ref(), new_text.as_ref());
        for change in text_diff.iter_all_changes() {
            match change.tag() {
                ChangeTag::Insert => diff.lines_added += 1,
                ChangeTag::Delete => diff.lines_removed += 1,
                ChangeTag::Equal => {}
            }
        }
        out.push_str(&format!("--- {old_name}\n+++ {new_name}\n"));
        for hunk in text_diff.unified_diff().context_radius(3).iter_hunks() {
            out.push_str(&hunk.to_string());
        }
    }
    if not_shown > 0 {
        diff.unified.push_str(&format!(
            "... {not_shown} more changed file(s) not shown: the diff reached {} (counted in \
             the files and lines changed)\n",
            size_text(text_max as u64)
        ));
    }
    diff
}

#[cfg(test)]
mod tests {
    use super::*;

    fn far() -> Instant {
        Instant::now() + Duration::from_secs(3600)
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// A fresh folder holding a copy of `fixture`, as a workspace copies it.
    fn copied(fixture: &Path) -> tempfile::TempDir {
        let copy = tempfile::tempdir().unwrap();
        let mut seen = std::collections::hash_map::DefaultHasher::new();
        copy_tree(fixture, copy.path(), &mut seen).unwrap();
        copy
    }

    fn fixture() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path();
        write(
            &repo.join("src/calc.py"),
            "def add(a, b):\n    return a + b\n",
        );
        write(&repo.join("README.md"), "calc\n");
        write(&repo.join("run.sh"), "#!/bin/sh\necho hi\n");
        std::fs::set_permissions(repo.join("run.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        symlink("src/calc.py", repo.join("calc_link.py")).unwrap();
        dir
    }

    #[test]
    fn the_copy_keeps_symlinks_and_exec_bits_and_the_original_is_untouched() {
        let fixture = fixture();
        let ws = Workspace::from_fixture(fixture.path(), "ws-test-", false).unwrap();
        let link = ws.path().join("calc_link.py");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_link(&link).unwrap(),
            PathBuf::from("src/calc.py")
        );
        let mode = std::fs::metadata(ws.path().join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        let plain = std::fs::metadata(ws.path().join("README.md"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(plain & 0o111, 0);

        std::fs::write(ws.path().join("src/calc.py"), "changed\n").unwrap();
        std::fs::remove_file(ws.path().join("README.md")).unwrap();
        assert_eq!(
            std::fs::read_to_string(fixture.path().join("src/calc.py")).unwrap(),
            "def add(a, b):\n    return a + b\n"
        );
        assert!(fixture.path().join("README.md").exists());
        assert_ne!(ws.path(), fixture.path());
    }

    #[test]
    fn no_change_means_an_empty_diff() {
        let fixture = fixture();
        let ws = Workspace::from_fixture(fixture.path(), "ws-test-", false).unwrap();
        assert_eq!(ws.diff(far()).unwrap(), WorkspaceDiff::default());
    }

    #[test]
    fn diff_shows_added_deleted_and_modified_files() {
        let fixture = fixture();
        let ws = Workspace::from_fixture(fixture.path(), "ws-test-", false).unwrap();
        let root = ws.path();
        std::fs::write(
            root.join("src/calc.py"),
            "def add(a, b):\n    return b + a\n",
        )
        .unwrap();
        std::fs::remove_file(root.join("README.md")).unwrap();
        write(&root.join("src/new.py"), "x = 1\ny = 2\n");
        std::fs::write(root.join("blob.bin"), [0u8, 1, 2, 255]).unwrap();
        write(&root.join("__pycache__/calc.cpython-312.pyc"), "ignored");
        write(&root.join("target/debug/out"), "ignored");
        let diff = ws.diff(far()).unwrap();
        let expected = "\
diff --git a/README.md b/README.md
deleted file mode 100644
--- a/README.md
+++ /dev/null
@@ -1 +0,0 @@
-calc
diff --git a/blob.bin b/blob.bin
new file mode 100644
Binary files /dev/null and b/blob.bin differ
diff --git a/src/calc.py b/src/calc.py
--- a/src/calc.py
+++ b/src/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a + b
+    return b + a
diff --git a/src/new.py b/src/new.py
new file mode 100644
--- /dev/null
+++ b/src/new.py
@@ -0,0 +1,2 @@
+x = 1
+y = 2
";
        pretty_assertions::assert_eq!(diff.unified, expected);
        assert_eq!(diff.files_changed, 4);
        assert_eq!(diff.lines_added, 3);
        assert_eq!(diff.lines_removed, 2);
    }

    #[test]
    fn names_that_are_not_utf8_are_told_apart_and_quoted() {
        // Both names read `f\u{FFFD}.txt` decoded lossily; the agent deletes one and writes the
        // other with the same bytes.
        let fixture = tempfile::tempdir().unwrap();
        let old = OsStr::from_bytes(b"f\xff.txt");
        let new = OsStr::from_bytes(b"f\xfe.txt");
        std::fs::write(fixture.path().join(old), "same\n").unwrap();
        write(&fixture.path().join("keep.txt"), "keep\n");
        let ws = Workspace::from_fixture(fixture.path(), "ws-test-", false).unwrap();
        std::fs::remove_file(ws.path().join(old)).unwrap();
        std::fs::write(ws.path().join(new), "same\n").unwrap();
        let diff = ws.diff(far()).unwrap();
        let expected = r#"diff --git "a/f\376.txt" "b/f\376.txt"
new file mode 100644
--- /dev/null
+++ "b/f\376.txt"
@@ -0,0 +1 @@
+same
diff --git "a/f\377.txt" "b/f\377.txt"
deleted file mode 100644
--- "a/f\377.txt"
+++ /dev/null
@@ -1 +0,0 @@
-same
"#;
        pretty_assertions::assert_eq!(diff.unified, expected);
        assert_eq!(
            (diff.files_changed, diff.lines_added, diff.lines_removed),
            (2, 1, 1)
        );
    }

    #[test]
    fn names_with_control_characters_are_quoted_and_git_applies_the_patch() {
        // Names an agent can make with one command: a newline, a tab, an escape sequence, a
        // quote, a backslash, bytes that are not UTF-8, and plain UTF-8 beside them.
        let names: [&[u8]; 8] = [
            b"new\nline.txt",
            b"d/tab\tname.txt",
            b"esc\x1b[31mred\x1b[0m.txt",
            b"say \"hi\".txt",
            b"back\\slash.txt",
            b"bad\xff.txt",
            "caf\u{e9} \u{2013} ok.txt".as_bytes(),
            b"cr\r.txt",
        ];
        let fixture = tempfile::tempdir().unwrap();
        write(&fixture.path().join("gone.txt"), "old\n");
        write(&fixture.path().join("edited.txt"), "one\ntwo\n");
        std::fs::write(fixture.path().join(OsStr::from_bytes(b"old\nname")), "x\n").unwrap();
        let ws = Workspace::from_fixture(fixture.path(), "ws-test-", false).unwrap();
        std::fs::create_dir(ws.path().join("d")).unwrap();
        for name in names {
            std::fs::write(ws.path().join(OsStr::from_bytes(name)), "made\n").unwrap();
        }
        std::fs::remove_file(ws.path().join("gone.txt")).unwrap();
        std::fs::remove_file(ws.path().join(OsStr::from_bytes(b"old\nname"))).unwrap();
        std::fs::write(ws.path().join("edited.txt"), "one\n2\n").unwrap();
        let diff = ws.diff(far()).unwrap();

        // Every header is one line: no name breaks it, and none prints an escape sequence.
        assert!(!diff.unified.contains('\x1b') && !diff.unified.contains('\r'));
        let headers: Vec<&str> = diff
            .unified
            .lines()
            .filter(|l| l.starts_with("diff --git "))
            .collect();
        assert_eq!(headers.len(), names.len() + 3, "{}", diff.unified);
        for expected in [
            r#"diff --git "a/new\nline.txt" "b/new\nline.txt""#,
            r#"diff --git "a/d/tab\tname.txt" "b/d/tab\tname.txt""#,
            r#"diff --git "a/esc\033[31mred\033[0m.txt" "b/esc\033[31mred\033[0m.txt""#,
            r#"diff --git "a/say \"hi\".txt" "b/say \"hi\".txt""#,
            r#"diff --git "a/back\\slash.txt" "b/back\\slash.txt""#,
            r#"diff --git "a/bad\377.txt" "b/bad\377.txt""#,
            "diff --git a/caf\u{e9} \u{2013} ok.txt b/caf\u{e9} \u{2013} ok.txt",
            r#"diff --git "a/cr\r.txt" "b/cr\r.txt""#,
            r#"diff --git "a/old\nname" "b/old\nname""#,
        ] {
            assert!(headers.contains(&expected), "{expected} in {headers:#?}");
        }

        // git reads the names back: the patch applied to a copy of the fixture gives the
        // workspace.
        let copy = copied(fixture.path());
        let patch = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(patch.path(), &diff.unified).unwrap();
        let applied = std::process::Command::new("git")
            .arg("apply")
            .arg(patch.path())
            .current_dir(copy.path())
            .output()
            .unwrap();
        assert!(
            applied.status.success(),
            "git apply: {}",
            String::from_utf8_lossy(&applied.stderr)
        );
        let mut names_after = walkdir_names(copy.path());
        let mut names_ws: Vec<Vec<u8>> = walkdir_names(ws.path());
        names_after.sort();
        names_ws.sort();
        assert_eq!(names_after, names_ws);
        for name in names {
            assert_eq!(
                std::fs::read(copy.path().join(OsStr::from_bytes(name))).unwrap(),
                b"made\n"
            );
        }
        assert_eq!(
            std::fs::read_to_string(copy.path().join("edited.txt")).unwrap(),
            "one\n2\n"
        );
    }

    #[test]
    fn past_its_text_bound_the_diff_counts_the_remaining_files_without_showing_them() {
        let file = |text: &str| Entry::File {
            bytes: Arc::from(text.as_bytes()),
            mode: 0o100644,
        };
        let mut before = BTreeMap::new();
        let mut after = BTreeMap::new();
        before.insert(OsString::from("a.txt"), file("one\ntwo\n"));
        after.insert(OsString::from("a.txt"), file("one\n2\n"));
        before.insert(OsString::from("b.txt"), file("gone\nwith\nit\n"));
        after.insert(OsString::from("c.txt"), file("new\n"));
        after.insert(OsString::from("d.txt"), file("x\ny\n"));
        before.insert(OsString::from("e.txt"), file("p\nq\n"));
        after.insert(OsString::from("e.txt"), file("p\nr\ns\n"));
        let whole = diff_snapshots(&before, &after, far(), usize::MAX);
        assert_eq!(whole.files_changed, 5);
        let first = whole.unified.find("diff --git a/b.txt").unwrap();
        // Bounded just past the first file's text: that file is shown, the other four counted.
        let bounded = diff_snapshots(&before, &after, far(), first);
        assert_eq!(
            (
                bounded.files_changed,
                bounded.lines_added,
                bounded.lines_removed
            ),
            (whole.files_changed, whole.lines_added, whole.lines_removed)
        );
        assert_eq!(
            bounded.unified,
            format!(
                "{}... 4 more changed file(s) not shown: the diff reached {first} B (counted in \
                 the files and lines changed)\n",
                &whole.unified[..first]
            )
        );
        assert_eq!((whole.lines_added, whole.lines_removed), (6, 5));
    }

    #[test]
    fn the_workspaces_of_one_fixture_share_its_snapshot_until_it_changes() {
        let fixture = fixture();
        let one = Workspace::from_fixture(fixture.path(), "ws-test-", false).unwrap();
        let two = Workspace::from_fixture(fixture.path(), "ws-test-", false).unwrap();
        assert!(Arc::ptr_eq(&one.snapshot, &two.snapshot));
        // An unchanged file holds no bytes of its own in the diff's walk.
        std::fs::write(two.path().join("README.md"), "changed\n").unwrap();
        let mut now = BTreeMap::new();
        walk(
            two.path(),
            OsStr::new(""),
            &mut now,
            Side::Workspace {
                snapshot: &two.snapshot,
                budget: u64::MAX,
            },
        )
        .unwrap();
        let bytes = |map: &Snapshot, path: &str| match map.get(OsStr::new(path)) {
            Some(Entry::File { bytes, .. }) => bytes.clone(),
            other => panic!("{path}: {other:?}"),
        };
        assert!(Arc::ptr_eq(
            &bytes(&now, "src/calc.py"),
            &bytes(&two.snapshot, "src/calc.py")
        ));
        assert!(!Arc::ptr_eq(
            &bytes(&now, "README.md"),
            &bytes(&two.snapshot, "README.md")
        ));

        // The fixture changed on disk: the next workspace is compared with what it copied.
        write(&fixture.path().join("README.md"), "calc, edited\n");
        let three = Workspace::from_fixture(fixture.path(), "ws-test-", false).unwrap();
        assert!(!Arc::ptr_eq(&one.snapshot, &three.snapshot));
        assert_eq!(three.diff(far()).unwrap(), WorkspaceDiff::default());
        assert_eq!(one.diff(far()).unwrap(), WorkspaceDiff::default());

        // Let go with the last workspace that holds it.
        let weak = Arc::downgrade(&one.snapshot);
        drop((one, two));
        assert!(weak.upgrade().is_none());
    }

    /// Every file's path under `root`, relative, as bytes.
    fn walkdir_names(root: &Path) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut todo = vec![root.to_path_buf()];
        while let Some(dir) = todo.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    todo.push(path);
                } else {
                    let rel = path.strip_prefix(root).unwrap();
                    out.push(rel.as_os_str().as_bytes().to_vec());
                }
            }
        }
        out
    }

    #[test]
    fn a_large_rewrite_is_summarised_with_linear_counts() {
        let fixture = tempfile::tempdir().unwrap();
        let lines = 60_000;
        let old: String = (0..lines).map(|i| format!("line {i} original\n")).collect();
        write(&fixture.path().join("big.txt"), &old);
        let ws = Workspace::from_fixture(fixture.path(), "ws-test-", false).unwrap();
        let new: String = (0..lines).map(|i| format!("line {i} changed!\n")).collect();
        std::fs::write(ws.path().join("big.txt"), &new).unwrap();
        assert!(old.len() > TEXT_DIFF_MAX_BYTES);
        let diff = ws.diff(far()).unwrap();
        assert_eq!(diff.files_changed, 1);
        assert_eq!((diff.lines_added, diff.lines_removed), (lines, lines));
        assert!(!diff.timed_out);
        assert!(
            diff.unified.starts_with(
                "diff --git a/big.txt b/big.txt\nLarge files a/big.txt and b/big.txt differ ("
            ),
            "{}",
            diff.unified
        );
        assert!(diff.unified.contains("60000 lines added, 60000 removed"));
        assert!(diff.unified.len() < 300);
    }

    #[test]
    fn files_over_the_cap_or_past_the_budget_are_compared_unread() {
        let fixture = tempfile::tempdir().unwrap();
        write(&fixture.path().join("a.txt"), "fixture\n");
        let ws = Workspace::from_fixture(fixture.path(), "ws-test-", false).unwrap();
        // Sparse: a command makes them for nothing.
        let sparse = |name: &str, len: u64| {
            let file = std::fs::File::create(ws.path().join(name)).unwrap();
            file.set_len(len).unwrap();
        };
        sparse("huge.bin", READ_MAX_BYTES + 1);
        // Read in name order: 600 bytes of a 1,000-byte budget, then one that would pass it.
        for name in ["b1.txt", "b2.txt"] {
            write(&ws.path().join(name), &"x".repeat(300));
        }
        write(&ws.path().join("c.txt"), &"y".repeat(500));
        let diff = ws.diff_reading_at_most(far(), 1000).unwrap();
        assert_eq!(diff.files_changed, 4, "{}", diff.unified);
        assert!(
            diff.unified.contains(
                "Large files /dev/null and b/huge.bin differ (0 B -> 256.0 MiB; not read, over 256.0 MiB)"
            ),
            "{}",
            diff.unified
        );
        assert!(
            diff.unified.contains(
                "Large files /dev/null and b/c.txt differ (0 B -> 500 B; not read, past the 1000 B the diff reads in all)"
            ),
            "{}",
            diff.unified
        );
        assert!(diff.unified.contains("+++ b/b1.txt"), "{}", diff.unified);
        assert!(diff.unified.contains("+++ b/b2.txt"), "{}", diff.unified);
    }

    #[test]
    fn a_fixture_s_files_past_its_budget_are_not_held_and_are_compared_on_disk() {
        let fixture = tempfile::tempdir().unwrap();
        for name in ["a.txt", "b.txt", "c.txt", "d.txt"] {
            write(&fixture.path().join(name), &name[..1].repeat(600));
        }
        // The copy the snapshot is taken of, and the workspace after the run.
        let copy = copied(fixture.path());
        let before = snapshot_reading_at_most(copy.path(), fixture.path(), 1000).unwrap();
        assert!(matches!(
            before.get(OsStr::new("a.txt")),
            Some(Entry::File { .. })
        ));
        for name in ["b.txt", "c.txt", "d.txt"] {
            match before.get(OsStr::new(name)) {
                Some(Entry::Large {
                    len: 600, source, ..
                }) => {
                    assert_eq!(source, &fixture.path().join(name));
                }
                other => panic!("{name}: {other:?}"),
            }
        }
        // b.txt unchanged, c.txt changed at the same length, d.txt deleted.
        write(&copy.path().join("c.txt"), &"C".repeat(600));
        std::fs::remove_file(copy.path().join("d.txt")).unwrap();
        let mut after = BTreeMap::new();
        let side = Side::Workspace {
            snapshot: &before,
            budget: u64::MAX,
        };
        walk(copy.path(), OsStr::new(""), &mut after, side).unwrap();
        let diff = diff_snapshots(&before, &after, far(), usize::MAX);
        assert_eq!(
            diff.unified,
            "diff --git a/c.txt b/c.txt\n\
             Large files a/c.txt and b/c.txt differ (600 B -> 600 B; not read, as the fixture's \
             was not)\n\
             diff --git a/d.txt b/d.txt\n\
             deleted file mode 100644\n\
             Large files a/d.txt and /dev/null differ (600 B -> 0 B; not read)\n"
        );
        assert_eq!(diff.files_changed, 2);
    }

    #[test]
    fn an_error_deep_in_the_tree_names_its_path_shortened_on_char_boundaries() {
        let e = || io::Error::from(io::ErrorKind::NotFound);
        assert_eq!(
            at_path(OsStr::new(""), e()).to_string(),
            ".: entity not found"
        );
        assert_eq!(
            at_path(OsStr::new("src/a.py"), e()).to_string(),
            "src/a.py: entity not found"
        );
        // Two-byte characters, so that a cut at a fixed byte count would split one.
        let deep = "é/".repeat(300) + "f";
        let shown = at_path(OsStr::new(&deep), e()).to_string();
        assert!(shown.starts_with("é/é/"), "{shown}");
        assert!(
            shown.ends_with("é/é/f (901 bytes, 301 levels deep): entity not found"),
            "{shown}"
        );
        assert!(shown.len() < 300, "{}", shown.len());
    }

    #[test]
    fn linear_counts_are_exact_for_separate_changes() {
        let old = b"a\nb\nc\nd\ne\n";
        assert_eq!(linear_line_counts(old, b"a\nB\nc\nd\nE\n"), (2, 2));
        assert_eq!(linear_line_counts(old, b"a\nb\nc\nd\ne\nf\n"), (1, 0));
        assert_eq!(linear_line_counts(b"", b"x\ny"), (2, 0));
        assert_eq!(linear_line_counts(old, b""), (0, 5));
    }

    #[test]
    fn a_passed_deadline_lists_the_files_without_diffing_them() {
        let fixture = fixture();
        let ws = Workspace::from_fixture(fixture.path(), "ws-test-", false).unwrap();
        std::fs::write(ws.path().join("README.md"), "changed\n").unwrap();
        let diff = ws.diff(Instant::now()).unwrap();
        assert!(diff.timed_out);
        assert_eq!(diff.files_changed, 1);
        assert_eq!(
            diff.unified,
            "diff --git a/README.md b/README.md\nFiles a/README.md and b/README.md differ (not diffed: the run's time limit was reached)\n"
        );
    }

    #[test]
    fn a_hard_link_to_a_file_the_workspace_s_owner_does_not_own_is_not_read() {
        // What a root harness's commands, as `nobody`, can do where `fs.protected_hardlinks` is
        // 0: link a file of root's into the workspace handed to them. The test links as root.
        if !rustix::process::geteuid().is_root() {
            eprintln!(
                "SKIPPED: a_hard_link_to_a_file_the_workspace_s_owner_does_not_own_is_not_read needs root"
            );
            return;
        }
        let fixture = fixture();
        let ws = Workspace::from_fixture(fixture.path(), "ws-test-", false).unwrap();
        let nobody = |path: &Path| std::os::unix::fs::lchown(path, Some(65534), Some(65534));
        nobody(ws.path()).unwrap();
        nobody(&ws.path().join("README.md")).unwrap();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("shadow");
        std::fs::write(&secret, "root:hunter2\n").unwrap();
        std::fs::hard_link(&secret, ws.path().join("link.txt")).unwrap();
        // A second link to a file the owner has is read as any file.
        std::fs::hard_link(ws.path().join("README.md"), ws.path().join("again.md")).unwrap();
        let diff = ws.diff(far()).unwrap();
        assert!(!diff.unified.contains("hunter2"), "{}", diff.unified);
        assert!(
            diff.unified.contains(
                "Files /dev/null and b/link.txt differ (13 B; not read: a hard link to a file the \
                 workspace's owner does not own)"
            ),
            "{}",
            diff.unified
        );
        assert!(
            diff.unified
                .contains("+++ b/again.md\n@@ -0,0 +1 @@\n+calc\n"),
            "{}",
            diff.unified
        );
        assert_eq!(diff.files_changed, 2);
    }

    #[test]
    fn a_mode_change_is_shown() {
        let fixture = fixture();
        let ws = Workspace::from_fixture(fixture.path(), "ws-test-", false).unwrap();
        std::fs::set_permissions(
            ws.path().join("README.md"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let diff = ws.diff(far()).unwrap();
        assert_eq!(
            diff.unified,
            "diff --git a/README.md b/README.md\nold mode 100644\nnew mode 100755\n"
        );
        assert_eq!(diff.files_changed, 1);
    }

    #[test]
    fn dropped_workspaces_are_removed_and_kept_ones_stay() {
        let fixture = fixture();
        let ws = Workspace::from_fixture(fixture.path(), "ws-test-", false).unwrap();
        let gone = ws.path().to_path_buf();
        drop(ws);
        assert!(!gone.exists());
        assert!(
            !gone.parent().unwrap().exists(),
            "the private parent goes too"
        );

        // A kept folder carries no owner, so no cleanup of dead harness folders takes it.
        let owner = |path: &Path| {
            let name = path
                .parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_str()
                .unwrap();
            crate::sandbox::stale::Owner::from_name(name)
        };
        let ws = Workspace::from_fixture(fixture.path(), "ws-test-", false).unwrap();
        let owned = ws.path().to_path_buf();
        assert!(owner(&owned).is_some(), "{}", owned.display());
        let kept = ws.into_kept_path();
        assert!(kept.join("src/calc.py").exists());
        assert!(
            !owned.exists() && owner(&kept).is_none(),
            "{}",
            kept.display()
        );
        std::fs::remove_dir_all(kept.parent().unwrap()).unwrap();

        let ws = Workspace::from_fixture(fixture.path(), "ws-test-", true).unwrap();
        let kept = ws.path().to_path_buf();
        drop(ws);
        assert!(
            kept.exists() && owner(&kept).is_none(),
            "{}",
            kept.display()
        );
        std::fs::remove_dir_all(kept.parent().unwrap()).unwrap();
    }

    #[test]
    fn the_copy_has_fixed_times_and_normalised_modes_every_run() {
        let fixture = fixture();
        // A fixture checked out under a permissive umask, with a recent mtime.
        std::fs::set_permissions(
            fixture.path().join("README.md"),
            std::fs::Permissions::from_mode(0o664),
        )
        .unwrap();
        std::fs::set_permissions(
            fixture.path().join("src"),
            std::fs::Permissions::from_mode(0o775),
        )
        .unwrap();
        let stamp = |ws: &Workspace| {
            let mut out = Vec::new();
            let mut paths = vec![ws.path().parent().unwrap().to_path_buf(), ws.path().into()];
            for rel in ["README.md", "run.sh", "src", "src/calc.py", "calc_link.py"] {
                paths.push(ws.path().join(rel));
            }
            for path in paths {
                let meta = std::fs::symlink_metadata(&path).unwrap();
                let mtime = meta
                    .modified()
                    .unwrap()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_secs();
                let atime = meta
                    .accessed()
                    .unwrap()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_secs();
                let mode = if meta.file_type().is_symlink() {
                    0
                } else {
                    meta.permissions().mode() & 0o7777
                };
                let name = path
                    .strip_prefix(ws.path().parent().unwrap())
                    .unwrap()
                    .display()
                    .to_string();
                out.push((name, mtime, atime, mode));
            }
            out
        };
        let first = Workspace::from_fixture(fixture.path(), "ws-test-", false).unwrap();
        let second = Workspace::from_fixture(fixture.path(), "ws-test-", false).unwrap();
        assert_ne!(first.path(), second.path());
        assert_eq!(first.path().file_name().unwrap(), WORKSPACE_DIR_NAME);
        let fixed = FIXED_MTIME as u64;
        pretty_assertions::assert_eq!(
            stamp(&first),
            vec![
                (String::new(), fixed, fixed, 0o755),
                ("work".into(), fixed, fixed, 0o755),
                ("work/README.md".into(), fixed, fixed, 0o644),
                ("work/run.sh".into(), fixed, fixed, 0o755),
                ("work/src".into(), fixed, fixed, 0o755),
                ("work/src/calc.py".into(), fixed, fixed, 0o644),
                ("work/calc_link.py".into(), fixed, fixed, 0),
            ]
        );
        assert_eq!(stamp(&first), stamp(&second));
        // `ls -la` of two fresh copies prints the same bytes.
        let ls = |ws: &Workspace| {
            let out = std::process::Command::new("ls")
                .args(["-la", "--time-style=+%Y-%m-%dT%H:%M:%S"])
                .current_dir(ws.path())
                .env("LC_ALL", "C")
                .env("TZ", "UTC")
                .output()
                .unwrap();
            String::from_utf8(out.stdout).unwrap()
        };
        assert_eq!(ls(&first), ls(&second));
        assert!(
            ls(&first).contains(" 2000-01-01T00:00:00 .."),
            "{}",
            ls(&first)
        );
        // The fixture's own times and modes are untouched.
        let original = std::fs::metadata(fixture.path().join("README.md")).unwrap();
        assert_eq!(original.permissions().mode() & 0o777, 0o664);
        assert_ne!(
            original
                .modified()
                .unwrap()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs(),
            fixed
        );
    }

    #[test]
    fn a_missing_fixture_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = Workspace::from_fixture(&dir.path().join("nope"), "ws-test-", false).unwrap_err();
        assert!(matches!(err, WorkspaceError::NoRepo(_)), "{err}");
    }
}
