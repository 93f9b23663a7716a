//! Path confinement: where a path really leads once symlinks are followed, whether that is
//! inside a root, and which symlinks of a fixture lead out of it.
//!
//! Depends on nothing else in the crate.

use std::path::{Component, Path, PathBuf};

/// Symlinks followed at most while resolving one path (Linux's own limit is 40).
const MAX_LINKS: usize = 40;

/// Where `abs` leads: every existing prefix with its symlinks followed (as the OS would), the
/// part that does not exist yet normalised lexically (`a/missing/../b` is `a/b`).
pub fn resolve_real(abs: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    let mut pending: Vec<std::ffi::OsString> = Vec::new();
    for c in abs.components().rev() {
        match c {
            Component::Normal(s) => pending.push(s.to_owned()),
            Component::ParentDir => pending.push("..".into()),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    let mut links = 0;
    while let Some(part) = pending.pop() {
        if part == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&part);
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() && links < MAX_LINKS => {
                links += 1;
                let Ok(target) = std::fs::read_link(&next) else {
                    out = next;
                    continue;
                };
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                for c in target.components().rev() {
                    match c {
                        Component::Normal(s) => pending.push(s.to_owned()),
                        Component::ParentDir => pending.push("..".into()),
                        Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
                    }
                }
            }
            _ => out = next,
        }
    }
    out
}

/// Whether `abs`, resolved with [`resolve_real`], is `root` or inside it (`root` canonical).
pub fn is_inside(abs: &Path, root: &Path) -> bool {
    resolve_real(abs).starts_with(root)
}

/// A symlink of a fixture that leads outside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EscapingLink {
    /// The link, relative to the fixture.
    pub link: PathBuf,
    /// What it points to, as written.
    pub target: PathBuf,
}

/// Every symlink under `repo` whose target is absolute (a copy would still point at the
/// original) or resolves outside `repo`.
pub fn escaping_links(repo: &Path) -> Vec<EscapingLink> {
    let Ok(root) = repo.canonicalize() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    out.sort_by(|a, b| a.link.cmp(&b.link));
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<EscapingLink>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_symlink() {
            let Ok(target) = std::fs::read_link(&path) else {
                continue;
            };
            if target.is_absolute() || !is_inside(&path, root) {
                out.push(EscapingLink {
                    link: path.strip_prefix(root).unwrap_or(&path).to_path_buf(),
                    target,
                });
            }
        } else if kind.is_dir() {
            walk(root, &path, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn resolves_symlinks_and_missing_tails() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("ws")).unwrap();
        std::fs::create_dir(root.join("out")).unwrap();
        symlink("../out", root.join("ws/up")).unwrap();
        symlink("/etc", root.join("ws/etc")).unwrap();
        symlink("up/../ws", root.join("ws/back")).unwrap();
        let ws = root.join("ws");
        assert_eq!(resolve_real(&ws.join("up/x.txt")), root.join("out/x.txt"));
        assert_eq!(
            resolve_real(&ws.join("etc/passwd")),
            PathBuf::from("/etc/passwd")
        );
        assert_eq!(resolve_real(&ws.join("missing/../a.txt")), ws.join("a.txt"));
        assert!(is_inside(&ws.join("new/dir/f.txt"), &ws));
        assert!(!is_inside(&ws.join("up/f.txt"), &ws));
        assert!(!is_inside(&ws.join("../out"), &ws));
        assert!(!is_inside(Path::new("/etc/passwd"), &ws));
        // `back` goes up through `up` (../out) and then `..` of out is root: ../ws from there.
        assert!(is_inside(&ws.join("back/f.txt"), &ws));
        // A loop ends.
        symlink("loop", root.join("ws/loop")).unwrap();
        let _ = resolve_real(&ws.join("loop/x"));
    }

    #[test]
    fn fixture_links_that_escape_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join("src")).unwrap();
        std::fs::write(repo.join("src/a.py"), "x").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "s").unwrap();
        symlink("src/a.py", repo.join("ok.py")).unwrap();
        symlink("../a.py", repo.join("src/also_ok.py")).unwrap();
        symlink("missing.txt", repo.join("dangling_ok")).unwrap();
        symlink("../secret.txt", repo.join("up")).unwrap();
        symlink("/etc/passwd", repo.join("src/abs")).unwrap();
        let found = escaping_links(&repo);
        assert_eq!(
            found,
            vec![
                EscapingLink {
                    link: "src/abs".into(),
                    target: "/etc/passwd".into()
                },
                EscapingLink {
                    link: "up".into(),
                    target: "../secret.txt".into()
                },
            ]
        );
    }
}
