//! A task folder as bytes in memory, and writing it so that the same input leaves the same
//! files: only what differs is written, files the import no longer produces are removed from
//! the folders it owns, and the caller learns what changed.

use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// One file to write: its bytes and whether it is executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutFile {
    pub bytes: Vec<u8>,
    pub executable: bool,
}

/// The files of one task folder, by path relative to it (`/`-separated).
pub type Tree = BTreeMap<String, OutFile>;

/// The subfolders an import owns wholly: any other file in them is removed.
pub const OWNED: [&str; 2] = ["repo", "solution"];

/// What writing a task folder did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeChange {
    New,
    /// The paths (relative to the folder) that were added, changed or removed.
    Updated(Vec<String>),
    Unchanged,
}

/// Writes `tree` into `dir`: files whose bytes or mode differ, removing files of the owned
/// subfolders that `tree` lacks. Other files of `dir` are left alone.
pub fn write_tree(dir: &Path, tree: &Tree) -> io::Result<TreeChange> {
    let existed = dir.exists();
    let mut current = Tree::new();
    for sub in OWNED {
        read_into(&dir.join(sub), sub, &mut current)?;
    }
    for (path, _) in tree.iter().filter(|(p, _)| !is_owned(p)) {
        let full = dir.join(path);
        if full.is_file() {
            current.insert(path.clone(), read_file(&full)?);
        }
    }
    let mut changed = Vec::new();
    for (path, file) in tree {
        if current.get(path) != Some(file) {
            let full = dir.join(path);
            if let Some(parent) = full.parent() {
                std::fs::create_dir_all(parent)?;
            }
            if full.is_dir() {
                std::fs::remove_dir_all(&full)?;
            }
            write_out(&full, file)?;
            changed.push(path.clone());
        }
    }
    for path in current
        .keys()
        .filter(|p| is_owned(p) && !tree.contains_key(*p))
    {
        std::fs::remove_file(dir.join(path))?;
        changed.push(path.clone());
    }
    for sub in OWNED {
        remove_empty_dirs(&dir.join(sub))?;
    }
    changed.sort();
    Ok(if !existed {
        TreeChange::New
    } else if changed.is_empty() {
        TreeChange::Unchanged
    } else {
        TreeChange::Updated(changed)
    })
}

fn is_owned(path: &str) -> bool {
    OWNED.iter().any(|sub| {
        path.strip_prefix(sub)
            .is_some_and(|rest| rest.starts_with('/'))
    })
}

fn read_file(path: &Path) -> io::Result<OutFile> {
    let meta = std::fs::metadata(path)?;
    Ok(OutFile {
        bytes: std::fs::read(path)?,
        executable: meta.permissions().mode() & 0o111 != 0,
    })
}

fn read_into(dir: &Path, prefix: &str, out: &mut Tree) -> io::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = format!("{prefix}/{name}");
        let kind = entry.file_type()?;
        if kind.is_dir() {
            read_into(&entry.path(), &rel, out)?;
        } else {
            out.insert(rel, read_file(&entry.path())?);
        }
    }
    Ok(())
}

/// Removes the empty folders under `dir` (and `dir` itself when it ends up empty).
fn remove_empty_dirs(dir: &Path) -> io::Result<bool> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(e),
    };
    let mut empty = true;
    for entry in entries {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            if !remove_empty_dirs(&entry.path())? {
                empty = false;
            }
        } else {
            empty = false;
        }
    }
    if empty {
        std::fs::remove_dir(dir)?;
    }
    Ok(empty)
}

/// The files under `dir` (regular files, symlinks followed), by `/`-separated path relative to
/// it, sorted; folders whose first component is in `skip` are left out.
pub fn list_files(dir: &Path, skip: &[&str]) -> io::Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    walk(dir, "", skip, &mut out)?;
    out.sort();
    Ok(out)
}

fn walk(
    dir: &Path,
    prefix: &str,
    skip: &[&str],
    out: &mut Vec<(String, PathBuf)>,
) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if prefix.is_empty() && skip.contains(&name.as_str()) {
            continue;
        }
        let rel = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        let path = entry.path();
        let meta = std::fs::metadata(&path)?;
        if meta.is_dir() {
            walk(&path, &rel, skip, out)?;
        } else if meta.is_file() {
            out.push((rel, path));
        }
    }
    Ok(())
}

/// Makes `dir` hold exactly `tree`, whole or not at all: the new folder is written beside it
/// and renamed into place (the old one, if any, renamed away first and then removed), so a
/// failure leaves the old folder as it was. Says what changed against the old folder.
pub fn replace_dir(dir: &Path, tree: &Tree) -> io::Result<TreeChange> {
    let parent = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let mut current = Tree::new();
    if dir.is_dir() {
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type()?.is_dir() {
                read_into(&entry.path(), &name, &mut current)?;
            } else {
                current.insert(name, read_file(&entry.path())?);
            }
        }
    }
    let changed: Vec<String> = tree
        .iter()
        .filter(|(path, file)| current.get(*path) != Some(file))
        .map(|(path, _)| path.clone())
        .chain(current.keys().filter(|p| !tree.contains_key(*p)).cloned())
        .collect();
    let existed = dir.exists();
    if existed && changed.is_empty() {
        return Ok(TreeChange::Unchanged);
    }
    let fresh = tempfile::Builder::new()
        .prefix(".import-")
        .tempdir_in(parent)?;
    for (path, file) in tree {
        let full = fresh.path().join(path);
        if let Some(p) = full.parent() {
            std::fs::create_dir_all(p)?;
        }
        write_out(&full, file)?;
    }
    let fresh = fresh.keep();
    if existed {
        let old = tempfile::Builder::new()
            .prefix(".replaced-")
            .tempdir_in(parent)?
            .keep();
        std::fs::remove_dir(&old)?;
        std::fs::rename(dir, &old)?;
        if let Err(e) = std::fs::rename(&fresh, dir) {
            std::fs::rename(&old, dir)?;
            let _ = std::fs::remove_dir_all(&fresh);
            return Err(e);
        }
        std::fs::remove_dir_all(&old)?;
        Ok(TreeChange::Updated(changed))
    } else {
        std::fs::rename(&fresh, dir)?;
        Ok(TreeChange::New)
    }
}

/// Writes `file` at `full` with its mode (0755 when executable, else 0644).
fn write_out(full: &Path, file: &OutFile) -> io::Result<()> {
    std::fs::write(full, &file.bytes)?;
    let mode = if file.executable { 0o755 } else { 0o644 };
    std::fs::set_permissions(full, std::fs::Permissions::from_mode(mode))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replaced_folder_holds_exactly_the_tree_and_says_what_changed() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("t");
        let mut tree = Tree::new();
        tree.insert("task.yaml".into(), file("id: t\n"));
        tree.insert("repo/a.txt".into(), file("a\n"));
        tree.insert("repo/old.txt".into(), file("old\n"));
        assert_eq!(replace_dir(&dir, &tree).unwrap(), TreeChange::New);
        assert_eq!(replace_dir(&dir, &tree).unwrap(), TreeChange::Unchanged);
        tree.remove("repo/old.txt");
        tree.insert("repo/a.txt".into(), file("b\n"));
        assert_eq!(
            replace_dir(&dir, &tree).unwrap(),
            TreeChange::Updated(vec!["repo/a.txt".into(), "repo/old.txt".into()])
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("repo/a.txt")).unwrap(),
            "b\n"
        );
        assert!(!dir.join("repo/old.txt").exists());
        // Nothing of the swap is left beside the folder.
        let left: Vec<_> = std::fs::read_dir(root.path()).unwrap().collect();
        assert_eq!(left.len(), 1);
    }

    fn file(text: &str) -> OutFile {
        OutFile {
            bytes: text.as_bytes().to_vec(),
            executable: false,
        }
    }

    #[test]
    fn the_same_tree_twice_is_unchanged_and_a_change_names_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let task = dir.path().join("t");
        let mut tree = Tree::new();
        tree.insert("task.yaml".into(), file("id: t\n"));
        tree.insert("repo/a.py".into(), file("a\n"));
        tree.insert("repo/sub/b.py".into(), file("b\n"));
        tree.insert("solution/a.py".into(), file("A\n"));
        assert_eq!(write_tree(&task, &tree).unwrap(), TreeChange::New);
        std::fs::write(task.join("notes.md"), "mine").unwrap();
        assert_eq!(write_tree(&task, &tree).unwrap(), TreeChange::Unchanged);

        tree.remove("repo/sub/b.py");
        tree.insert("repo/a.py".into(), file("a2\n"));
        let mut exec = file("#!/bin/sh\n");
        exec.executable = true;
        tree.insert("repo/run.sh".into(), exec);
        assert_eq!(
            write_tree(&task, &tree).unwrap(),
            TreeChange::Updated(vec![
                "repo/a.py".into(),
                "repo/run.sh".into(),
                "repo/sub/b.py".into()
            ])
        );
        assert!(!task.join("repo/sub").exists(), "an emptied folder goes");
        assert_eq!(
            std::fs::read_to_string(task.join("notes.md")).unwrap(),
            "mine"
        );
        let mode = std::fs::metadata(task.join("repo/run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        assert_eq!(write_tree(&task, &tree).unwrap(), TreeChange::Unchanged);
    }
}
