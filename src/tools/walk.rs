//! The folder walk of `grep` and `find`: what the `ignore` crate's `WalkBuilder` yields with the
//! options Pi's rg and fd calls amount to (hidden files included, symlinks not followed,
//! `.ignore`, `.gitignore`, `.git/info/exclude` and the tool's own ignore file honoured from
//! every folder down from the file system root, `.gitignore` only inside a git repository when
//! `require_git`), done on open folder descriptors so that no symlink swapped during the walk
//! can lead it out of the workspace.
//!
//! The search folder is opened through the run's jail (beneath the workspace in one step when
//! confined); every folder below is opened from its parent's descriptor by name, never following
//! a symlink; every file is opened the same way ([`WalkEntry::open`]). Ignore files are read through
//! the jail: under a confining tier, those above the workspace (outside it) are not read.
//!
//! The matching is `ignore`'s own ([`ignore::gitignore::Gitignore`], [`ignore::overrides`]), in
//! the precedence `ignore::dir::Ignore::matched` gives it: overrides, then the tool's ignore
//! file, `.ignore`, `.gitignore`, `.git/info/exclude`, each the nearest folder's first. Errors in
//! the ignore files of the folders above the search folder are returned as the walker returns
//! them (rg prints them); those of the folders walked are dropped, as the walker does.
//!
//! Depends on the sandbox (the jail, folder descriptors) and the `ignore` crate only.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::overrides::Override;
use ignore::{Error, Match};

use crate::sandbox::beneath::{self, Kind};
use crate::sandbox::{FsError, How, Jail};

/// How to walk: the options that differ between `grep` (rg) and `find` (fd).
pub struct WalkOptions {
    /// `.gitignore` and `.git/info/exclude` count only inside a git repository (rg: yes, fd
    /// with `--no-require-git`: no).
    pub require_git: bool,
    /// The tool's own ignore file (`.rgignore`, `.fdignore`).
    pub custom_ignore: &'static str,
    /// rg's `--glob`.
    pub overrides: Option<Override>,
}

/// One entry below the search folder.
pub struct WalkEntry {
    /// The search folder's path as given, joined with the names down to this entry.
    pub path: PathBuf,
    pub kind: Kind,
    parent: Arc<OwnedFd>,
    name: OsString,
}

impl WalkEntry {
    /// Opens the entry for reading from its folder's descriptor, never following a symlink.
    pub fn open(&self) -> std::io::Result<std::fs::File> {
        Ok(beneath::open_entry(self.parent.as_fd(), &self.name, How::Read)?.into())
    }

    pub fn file_name(&self) -> &OsStr {
        &self.name
    }
}

/// What a walk found: the entries below the search folder (not the folder itself), and the
/// errors the walker would yield.
pub struct Walked {
    pub entries: Vec<WalkEntry>,
    pub errors: Vec<Error>,
}

/// The ignore rules one folder contributes.
struct Level {
    custom: Gitignore,
    ignore: Gitignore,
    git_ignore: Gitignore,
    git_exclude: Gitignore,
    has_git: bool,
}

/// The levels of one walk: the folders above the search folder (nearest first, matched with
/// paths under `absolute_base`), and those walked down to the current one (nearest last).
struct Rules<'a> {
    options: &'a WalkOptions,
    search: &'a Path,
    absolute_base: Option<PathBuf>,
    parents: Vec<Level>,
}

/// Walks `search` (a folder) through `jail` with `options`.
pub fn walk(jail: &Jail, search: &Path, options: &WalkOptions) -> Result<Walked, FsError> {
    let root = Arc::new(OwnedFd::from(jail.open(search, How::Dir)?));
    let mut errors = Vec::new();
    let (absolute_base, parents) = parent_levels(jail, search, options, &mut errors);
    let rules = Rules {
        options,
        search,
        absolute_base,
        parents,
    };
    let mut entries = Vec::new();
    descend(jail, &rules, (search, root), &mut entries, &mut errors);
    Ok(Walked { entries, errors })
}

/// The longest path a walk goes down into: rg and fd open each folder by its path, which the
/// kernel refuses beyond `PATH_MAX` (4,096 bytes), so they report such a folder as an error
/// and go no deeper. So does this walk, though it opens folders by their descriptors: a tree a
/// command nested 30,000 folders deep would otherwise cost memory in the square of its depth
/// (every entry holds its path).
const PATH_MAX: usize = 4096;

/// A folder being walked: its path, its descriptor, its depth, and its entries still to yield.
struct Frame {
    path: PathBuf,
    dir: Arc<OwnedFd>,
    depth: usize,
    items: std::vec::IntoIter<beneath::BeneathEntry>,
}

/// Walks the folder `dir` at `path` (depth 0) and everything below it, depth first: each
/// folder's entries in the order they are listed, each folder's own entries right after it.
/// The folders still to finish are kept in a list, not on the stack, so no depth can overflow
/// it.
fn descend(
    jail: &Jail,
    rules: &Rules<'_>,
    (path, dir): (&Path, Arc<OwnedFd>),
    entries: &mut Vec<WalkEntry>,
    errors: &mut Vec<Error>,
) {
    // The rules of the folders walked down to the current one, nearest last: one per frame.
    let mut levels: Vec<Level> = Vec::new();
    let mut frames: Vec<Frame> = Vec::new();
    frames.extend(enter(
        jail,
        rules,
        &mut levels,
        (path.to_path_buf(), dir, 0),
        errors,
    ));
    while let Some(frame) = frames.last_mut() {
        let Some(item) = frame.items.next() else {
            frames.pop();
            levels.pop();
            continue;
        };
        let (dir, depth) = (frame.dir.clone(), frame.depth);
        let child = frame.path.join(&item.name);
        let is_dir = item.kind == Kind::Dir;
        if rules.matched(&levels, &child, is_dir).is_ignore() {
            continue;
        }
        let entry = WalkEntry {
            path: child,
            kind: item.kind,
            parent: dir.clone(),
            name: item.name,
        };
        let below = is_dir.then(|| entry.path.clone());
        let name = entry.name.clone();
        entries.push(entry);
        let Some(below) = below else {
            continue;
        };
        if below.as_os_str().len() >= PATH_MAX {
            let too_long =
                std::io::Error::from_raw_os_error(rustix::io::Errno::NAMETOOLONG.raw_os_error());
            errors.push(walk_error(depth + 1, &below, too_long));
            continue;
        }
        match beneath::open_entry(dir.as_fd(), &name, How::Dir) {
            Ok(fd) => frames.extend(enter(
                jail,
                rules,
                &mut levels,
                (below, Arc::new(fd), depth + 1),
                errors,
            )),
            // Swapped for a symlink or a file since it was listed: nothing to walk there.
            Err(e)
                if matches!(
                    rustix::io::Errno::from_io_error(&e),
                    Some(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR)
                ) => {}
            Err(e) => errors.push(walk_error(depth + 1, &below, e)),
        }
    }
}

/// Lists the folder `dir` at `path` and adds its rules to `levels`: its frame, or `None` (and
/// the error) when it cannot be listed.
fn enter(
    jail: &Jail,
    rules: &Rules<'_>,
    levels: &mut Vec<Level>,
    (path, dir, depth): (PathBuf, Arc<OwnedFd>, usize),
    errors: &mut Vec<Error>,
) -> Option<Frame> {
    let listed = match beneath::list(dir.as_fd()) {
        Ok(listed) => listed,
        Err(err) => {
            errors.push(walk_error(depth, &path, err));
            return None;
        }
    };
    let names: Vec<&OsStr> = listed.iter().map(|e| e.name.as_os_str()).collect();
    levels.push(level(jail, &path, &names, rules.options, &mut Vec::new()));
    Some(Frame {
        path,
        dir,
        depth,
        items: listed.into_iter(),
    })
}

/// The walker's error for a folder that could not be read.
fn walk_error(depth: usize, path: &Path, err: std::io::Error) -> Error {
    Error::WithDepth {
        depth,
        err: Box::new(Error::WithPath {
            path: path.to_path_buf(),
            err: Box::new(Error::Io(err)),
        }),
    }
}

impl Rules<'_> {
    /// `ignore::dir::Ignore::matched` for an entry of the walk.
    fn matched(&self, levels: &[Level], path: &Path, is_dir: bool) -> Match<()> {
        if let Some(overrides) = &self.options.overrides {
            let m = overrides.matched(path, is_dir);
            if !m.is_none() {
                return m.map(|_| ());
            }
        }
        let any_git =
            !self.options.require_git || levels.iter().chain(&self.parents).any(|l| l.has_git);
        let mut found = [Match::None, Match::None, Match::None, Match::None];
        let mut saw_git = false;
        let mut look = |level: &Level, path: &Path| {
            let matchers = [
                &level.custom,
                &level.ignore,
                &level.git_ignore,
                &level.git_exclude,
            ];
            for (i, matcher) in matchers.into_iter().enumerate() {
                let git = i >= 2;
                if found[i].is_none() && (!git || (any_git && !saw_git)) {
                    found[i] = matcher.matched(path, is_dir).map(|_| ());
                }
            }
            saw_git = saw_git || level.has_git;
        };
        for level in levels.iter().rev() {
            look(level, path);
        }
        if let Some(base) = &self.absolute_base {
            let rel = path.strip_prefix(self.search).unwrap_or(path);
            let path = base.join(rel);
            for level in &self.parents {
                look(level, &path);
            }
        }
        let [custom, ignore, git_ignore, git_exclude] = found;
        custom.or(ignore).or(git_ignore).or(git_exclude)
    }
}

/// The folders above `search` (its real path's ancestors), nearest first, with their rules,
/// and the real path their rules match under. Their errors go to `errors`.
fn parent_levels(
    jail: &Jail,
    search: &Path,
    options: &WalkOptions,
    errors: &mut Vec<Error>,
) -> (Option<PathBuf>, Vec<Level>) {
    let Ok(base) = std::fs::canonicalize(search) else {
        return (None, Vec::new());
    };
    let mut levels = Vec::new();
    let mut errs = Vec::new();
    let mut ancestors: Vec<&Path> = base.ancestors().skip(1).collect();
    // Built from the root down (as the walker does), kept nearest first.
    ancestors.reverse();
    for dir in ancestors {
        // Outside the workspace when confined: not read (nor looked at).
        if jail
            .root_if_confined()
            .is_some_and(|root| !dir.starts_with(root))
        {
            levels.push(Level {
                custom: Gitignore::empty(),
                ignore: Gitignore::empty(),
                git_ignore: Gitignore::empty(),
                git_exclude: Gitignore::empty(),
                has_git: false,
            });
            continue;
        }
        let names: Vec<&OsStr> = [OsStr::new(options.custom_ignore)]
            .into_iter()
            .chain([".ignore", ".gitignore", ".git", ".jj"].map(OsStr::new))
            .collect();
        let mut level = level(jail, dir, &names, options, &mut errs);
        level.has_git = options.require_git
            && (jail.exists(&dir.join(".git")) || jail.exists(&dir.join(".jj")));
        levels.push(level);
    }
    levels.reverse();
    match errs.len() {
        0 => {}
        1 => errors.extend(errs),
        _ => errors.push(Error::Partial(errs)),
    }
    (Some(base), levels)
}

/// The rules of folder `dir`, whose entries include `names` (only the ignore files among them
/// are read, through the jail). Errors in them go to `errors`.
fn level(
    jail: &Jail,
    dir: &Path,
    names: &[&OsStr],
    options: &WalkOptions,
    errors: &mut Vec<Error>,
) -> Level {
    let has = |name: &str| names.iter().any(|n| *n == OsStr::new(name));
    let check_vcs = options.require_git;
    let git_kind = (check_vcs && has(".git"))
        .then(|| jail.metadata(&dir.join(".git")).ok())
        .flatten()
        .map(|m| m.file_type());
    let has_jj = check_vcs && has(".jj") && jail.exists(&dir.join(".jj"));
    let mut read = |names: &[&str], from: &Path| {
        let files: Vec<PathBuf> = names
            .iter()
            .filter(|n| from != dir || has(n))
            .map(|n| from.join(n))
            .collect();
        gitignore(jail, dir, &files, errors)
    };
    let custom = read(&[options.custom_ignore], dir);
    let ignore = read(&[".ignore"], dir);
    let git_ignore = read(&[".gitignore"], dir);
    let git_exclude = if has(".git") {
        match git_common_dir(jail, dir, git_kind) {
            Some(git_dir) => read(&["info/exclude"], &git_dir),
            None => Gitignore::empty(),
        }
    } else {
        Gitignore::empty()
    };
    Level {
        custom,
        ignore,
        git_ignore,
        git_exclude,
        has_git: check_vcs && (git_kind.is_some() || has_jj),
    }
}

/// `ignore`'s `resolve_git_commondir`: `dir/.git`, or for a `.git` file (a worktree) the common
/// folder it names. `None` when there is none to read.
fn git_common_dir(jail: &Jail, dir: &Path, kind: Option<std::fs::FileType>) -> Option<PathBuf> {
    let git = dir.join(".git");
    if !kind.is_some_and(|k| k.is_file()) {
        return Some(git);
    }
    let first_line = |path: &Path| -> Option<String> {
        let text = read_to_string(jail, path)?;
        text.lines().next().map(str::to_owned)
    };
    let real = PathBuf::from(first_line(&git)?.strip_prefix("gitdir: ")?);
    let common = first_line(&real.join("commondir"))?;
    Some(if common.starts_with('.') {
        real.join(common)
    } else {
        PathBuf::from(common)
    })
}

fn read_to_string(jail: &Jail, path: &Path) -> Option<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    jail.open(path, How::Read)
        .ok()?
        .read_to_end(&mut bytes)
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// `ignore`'s `create_gitignore`: one matcher rooted at `dir` from the `files` that exist, read
/// through the jail; glob errors (not I/O errors) go to `errors`, tagged with file and line.
fn gitignore(jail: &Jail, dir: &Path, files: &[PathBuf], errors: &mut Vec<Error>) -> Gitignore {
    use std::io::Read;
    let mut builder = GitignoreBuilder::new(dir);
    let mut any = false;
    for file in files {
        let mut bytes = Vec::new();
        let Ok(mut opened) = jail.open(file, How::Read) else {
            continue;
        };
        if opened.read_to_end(&mut bytes).is_err() {
            continue;
        }
        any = true;
        // `BufRead::lines`: `\n` or `\r\n` ends a line; reading stops at one that is not UTF-8.
        let text = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        for (i, raw) in text.split(|b| *b == b'\n').enumerate() {
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            let Ok(line) = std::str::from_utf8(raw) else {
                break;
            };
            let line = if i == 0 {
                line.trim_start_matches('\u{feff}')
            } else {
                line
            };
            if let Err(err) = builder.add_line(Some(file.clone()), line) {
                errors.push(Error::WithPath {
                    path: file.clone(),
                    err: Box::new(Error::WithLineNumber {
                        line: i as u64 + 1,
                        err: Box::new(err),
                    }),
                });
            }
        }
    }
    if !any {
        return Gitignore::empty();
    }
    match builder.build() {
        Ok(gi) => gi,
        Err(err) => {
            errors.push(err);
            Gitignore::empty()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{Sandbox, Tier};
    use ignore::WalkBuilder;
    use std::collections::BTreeSet;

    /// What `WalkBuilder` yields for `search` with the same options (paths and kinds).
    fn reference(search: &Path, options: &WalkOptions) -> BTreeSet<(String, bool)> {
        let mut builder = WalkBuilder::new(search);
        builder
            .hidden(false)
            .parents(true)
            .ignore(true)
            .git_ignore(true)
            .git_exclude(true)
            .git_global(false)
            .require_git(options.require_git)
            .follow_links(false)
            .add_custom_ignore_filename(options.custom_ignore);
        if let Some(o) = &options.overrides {
            builder.overrides(o.clone());
        }
        builder
            .build()
            .filter_map(Result::ok)
            .filter(|e| e.depth() > 0)
            .map(|e| {
                (
                    e.path().to_string_lossy().into_owned(),
                    e.file_type().is_some_and(|t| t.is_dir()),
                )
            })
            .collect()
    }

    fn ours(jail: &Jail, search: &Path, options: &WalkOptions) -> BTreeSet<(String, bool)> {
        walk(jail, search, options)
            .unwrap()
            .entries
            .into_iter()
            .map(|e| (e.path.to_string_lossy().into_owned(), e.kind == Kind::Dir))
            .collect()
    }

    fn tree(root: &Path, files: &[(&str, &str)]) {
        for (path, content) in files {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
    }

    #[test]
    fn walks_as_the_ignore_crate_does() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("ws");
        tree(
            &root,
            &[
                ("a.txt", ""),
                ("build/out.o", ""),
                ("keep.log", ""),
                ("x.log", ""),
                (".hidden/h.txt", ""),
                ("src/lib.rs", ""),
                ("src/gen/g.rs", ""),
                ("src/.gitignore", "gen/\n!keep.rs\n"),
                ("src/keep.rs", ""),
                ("sub/.ignore", "*.tmp\n"),
                ("sub/t.tmp", ""),
                ("sub/deep/u.tmp", ""),
                ("sub/deep/v.txt", ""),
                (".gitignore", "build/\n*.log\n!keep.log\n"),
                (".rgignore", "a.txt\n"),
                (".fdignore", "x.log\n"),
                ("repo/.git/info/exclude", "excluded.txt\n"),
                ("repo/excluded.txt", ""),
                ("repo/.gitignore", "ignored_in_repo.txt\n"),
                ("repo/ignored_in_repo.txt", ""),
                ("repo/inner/ok.txt", ""),
                ("bad/.gitignore", "[unclosed\nfine.txt\n"),
                ("bad/fine.txt", ""),
                ("bad/other.txt", ""),
            ],
        );
        std::os::unix::fs::symlink("src", root.join("link_to_src")).unwrap();
        std::os::unix::fs::symlink("missing", root.join("dangling")).unwrap();
        for tier in [Tier::None, Tier::Workspace] {
            let jail = Sandbox::without_bwrap(tier).jail(&root);
            for (require_git, custom) in [(true, ".rgignore"), (false, ".fdignore")] {
                for search in [root.clone(), root.join("src"), root.join("repo")] {
                    let options = WalkOptions {
                        require_git,
                        custom_ignore: custom,
                        overrides: None,
                    };
                    assert_eq!(
                        ours(&jail, &search, &options),
                        reference(&search, &options),
                        "{tier:?} {custom} {}",
                        search.display()
                    );
                }
            }
            let mut glob = ignore::overrides::OverrideBuilder::new(&root);
            glob.add("*.rs").unwrap();
            let options = WalkOptions {
                require_git: true,
                custom_ignore: ".rgignore",
                overrides: Some(glob.build().unwrap()),
            };
            assert_eq!(
                ours(&jail, &root, &options),
                reference(&root, &options),
                "{tier:?} with a glob"
            );
        }
    }

    #[test]
    fn a_walk_never_leaves_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let ws = base.join("ws");
        tree(&base, &[("ws/in.txt", ""), ("out/secret.txt", "")]);
        std::os::unix::fs::symlink("../out", ws.join("up")).unwrap();
        let jail = Sandbox::without_bwrap(Tier::Workspace).jail(&ws);
        let options = WalkOptions {
            require_git: false,
            custom_ignore: ".fdignore",
            overrides: None,
        };
        let found = ours(&jail, &ws, &options);
        assert!(found.contains(&(ws.join("up").to_string_lossy().into_owned(), false)));
        assert!(!found.iter().any(|(p, _)| p.contains("secret")));
        // Searching the symlink itself is refused.
        assert!(matches!(
            walk(&jail, &ws.join("up"), &options),
            Err(FsError::Outside(_))
        ));
    }
}
