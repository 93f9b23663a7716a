//! Path resolution shared by all tools (spec section 0): `resolveToCwd` and `resolveReadPath`,
//! plus Node-style texts for file system errors (`ENOENT: no such file or directory, access '…'`),
//! since Pi's tools pass Node's error messages to the model unchanged.
//!
//! Resolution is pure string work (Node's `path.resolve`), never touching the file system, except
//! for the existence probes of [`resolve_read_path`]. Depends on nothing else in the crate.

use std::io;
use std::path::{Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

/// Pi's `resolveToCwd`: strips one leading `@`, turns unicode spaces into ASCII spaces, expands
/// `~` and `~/…` with `home`, keeps an absolute path as is (not normalised, as Pi does) and
/// resolves a relative one against `cwd` with `.` and `..` normalised (`path.resolve`).
pub fn resolve_to_cwd(path: &str, cwd: &Path, home: &Path) -> PathBuf {
    let expanded = expand_path(path, home);
    if expanded.starts_with('/') {
        PathBuf::from(expanded)
    } else {
        PathBuf::from(node_resolve(&cwd.to_string_lossy(), &expanded))
    }
}

/// Pi's `resolveReadPath` (read only): [`resolve_to_cwd`], then, if that path does not exist,
/// the first existing of these variants: ` AM.`/` PM.` with a narrow no-break space (macOS
/// screenshot names), NFD, `'` as `’`, NFD with `’`. Falls back to the resolved path.
pub fn resolve_read_path(path: &str, cwd: &Path, home: &Path) -> PathBuf {
    let resolved = resolve_to_cwd(path, cwd, home);
    if exists(&resolved) {
        return resolved;
    }
    let text = resolved.to_string_lossy().into_owned();
    let am_pm = am_pm_variant(&text);
    let nfd: String = text.nfd().collect();
    let curly = text.replace('\'', "\u{2019}");
    let nfd_curly = nfd.replace('\'', "\u{2019}");
    for variant in [am_pm, nfd, curly, nfd_curly] {
        if variant != text && exists(Path::new(&variant)) {
            return PathBuf::from(variant);
        }
    }
    resolved
}

/// `fs.accessSync(p, F_OK)`: follows symlinks.
fn exists(path: &Path) -> bool {
    std::fs::metadata(path).is_ok()
}

/// `/ (AM|PM)\./gi` → `"\u202F$1."`.
fn am_pm_variant(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + 4);
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b' '
            && i + 3 < bytes.len()
            && matches!(bytes[i + 1], b'A' | b'a' | b'P' | b'p')
            && matches!(bytes[i + 2], b'M' | b'm')
            && bytes[i + 3] == b'.'
        {
            out.push('\u{202F}');
            out.push_str(&text[i + 1..i + 4]);
            i += 4;
        } else {
            let c = text[i..].chars().next().expect("in bounds");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Pi's `expandPath`: one leading `@` removed, unicode spaces to ASCII, `~` expanded.
fn expand_path(path: &str, home: &Path) -> String {
    let path = path.strip_prefix('@').unwrap_or(path);
    let normalized: String = path
        .chars()
        .map(|c| match c {
            '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            c => c,
        })
        .collect();
    let home = home.to_string_lossy();
    if normalized == "~" {
        home.into_owned()
    } else if let Some(rest) = normalized.strip_prefix("~/") {
        format!("{home}/{rest}")
    } else {
        normalized
    }
}

/// Node's `path.resolve(cwd, p)` for a relative `p` (POSIX): joins, then normalises `.`, `..`,
/// repeated and trailing slashes.
fn node_resolve(cwd: &str, relative: &str) -> String {
    let joined = if relative.is_empty() {
        cwd.to_owned()
    } else {
        format!("{cwd}/{relative}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for segment in joined.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Node's error code for an I/O error (`ENOENT`, `EACCES`, …), `UNKNOWN` if there is none.
pub fn node_error_code(err: &io::Error) -> String {
    match err.raw_os_error() {
        Some(raw) => format!("{:?}", nix::errno::Errno::from_raw(raw)),
        None => match err.kind() {
            io::ErrorKind::NotFound => "ENOENT".into(),
            io::ErrorKind::PermissionDenied => "EACCES".into(),
            io::ErrorKind::AlreadyExists => "EEXIST".into(),
            _ => "UNKNOWN".into(),
        },
    }
}

/// libuv's description of an error code, as Node prints it.
fn uv_description(code: &str, err: &io::Error) -> String {
    let known = match code {
        "ENOENT" => "no such file or directory",
        "EACCES" => "permission denied",
        "EISDIR" => "illegal operation on a directory",
        "ENOTDIR" => "not a directory",
        "EEXIST" => "file already exists",
        "ELOOP" => "too many symbolic links encountered",
        "ENAMETOOLONG" => "name too long",
        "EPERM" => "operation not permitted",
        "EROFS" => "read-only file system",
        "ENOSPC" => "no space left on device",
        "EMFILE" => "too many open files",
        "ENFILE" => "file table overflow",
        "EIO" => "i/o error",
        "EBUSY" => "resource busy or locked",
        "ETXTBSY" => "text file is busy",
        "EFBIG" => "file too large",
        "EINVAL" => "invalid argument",
        "EBADF" => "bad file descriptor",
        "ENOTEMPTY" => "directory not empty",
        "EXDEV" => "cross-device link not permitted",
        "EAGAIN" => "resource temporarily unavailable",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_owned();
    }
    // Not in the table: the OS text without Rust's " (os error N)" suffix, lower-cased.
    let text = err.to_string();
    let text = text.split(" (os error").next().unwrap_or(&text);
    text.to_lowercase()
}

/// Node's message for a failed fs call: `CODE: description, syscall 'path'` (no path part for
/// calls on a file descriptor, such as `read`).
pub fn node_fs_error(err: &io::Error, syscall: &str, path: Option<&Path>) -> String {
    let code = node_error_code(err);
    let description = uv_description(&code, err);
    match path {
        Some(p) => format!("{code}: {description}, {syscall} '{}'", p.display()),
        None => format!("{code}: {description}, {syscall}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn r(p: &str) -> String {
        resolve_to_cwd(p, Path::new("/work/cwd"), Path::new("/home/u"))
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn resolves_relative_paths_against_cwd_and_normalises() {
        assert_eq!(r("a.txt"), "/work/cwd/a.txt");
        assert_eq!(r("./a/../b//c/"), "/work/cwd/b/c");
        assert_eq!(r("../../.."), "/");
        assert_eq!(r("."), "/work/cwd");
        assert_eq!(r(""), "/work/cwd");
    }

    #[test]
    fn absolute_paths_are_kept_as_is() {
        assert_eq!(r("/etc/./passwd"), "/etc/./passwd");
        assert_eq!(r("/outside/the/cwd"), "/outside/the/cwd");
    }

    #[test]
    fn strips_one_leading_at() {
        assert_eq!(r("@src/a.rs"), "/work/cwd/src/a.rs");
        assert_eq!(r("@@x"), "/work/cwd/@x");
        assert_eq!(r("@/abs"), "/abs");
    }

    #[test]
    fn unicode_spaces_become_ascii_spaces() {
        assert_eq!(
            r("a\u{00A0}b\u{2003}c\u{202F}d\u{205F}e\u{3000}f"),
            "/work/cwd/a b c d e f"
        );
        // U+200B (zero width space) is not in the set.
        assert_eq!(r("a\u{200B}b"), "/work/cwd/a\u{200B}b");
    }

    #[test]
    fn tilde_expands_with_the_given_home() {
        assert_eq!(r("~"), "/home/u");
        assert_eq!(r("~/notes.md"), "/home/u/notes.md");
        assert_eq!(r("~user/x"), "/work/cwd/~user/x");
        assert_eq!(r("@~/x"), "/home/u/x");
    }

    #[test]
    fn am_pm_variant_uses_narrow_nbsp_and_keeps_case() {
        assert_eq!(
            am_pm_variant("/s/Shot 10.22.01 pm.png and AM."),
            "/s/Shot 10.22.01\u{202F}pm.png and\u{202F}AM."
        );
        assert_eq!(am_pm_variant("x AM.png"), "x\u{202F}AM.png");
    }

    #[test]
    fn read_path_tries_the_variants_in_order() {
        let dir = tempfile::TempDir::new().unwrap();
        let cwd = dir.path();
        let screenshot = "Screenshot 2024 at 10.22.01\u{202F}AM.png";
        std::fs::write(cwd.join(screenshot), "x").unwrap();
        let got = resolve_read_path("Screenshot 2024 at 10.22.01 AM.png", cwd, cwd);
        assert_eq!(got, cwd.join(screenshot));

        let nfd_name: String = "café.txt".nfd().collect();
        std::fs::write(cwd.join(&nfd_name), "x").unwrap();
        assert_eq!(resolve_read_path("café.txt", cwd, cwd), cwd.join(&nfd_name));

        std::fs::write(cwd.join("it\u{2019}s.txt"), "x").unwrap();
        assert_eq!(
            resolve_read_path("it's.txt", cwd, cwd),
            cwd.join("it\u{2019}s.txt")
        );

        let both: String = "né\u{2019}.txt".nfd().collect();
        std::fs::write(cwd.join(&both), "x").unwrap();
        assert_eq!(resolve_read_path("né'.txt", cwd, cwd), cwd.join(&both));

        // Nothing matches: the plain resolved path.
        assert_eq!(
            resolve_read_path("nope's.txt", cwd, cwd),
            cwd.join("nope's.txt")
        );
        // An existing path wins over variants.
        std::fs::write(cwd.join("it's.txt"), "x").unwrap();
        assert_eq!(
            resolve_read_path("it's.txt", cwd, cwd),
            cwd.join("it's.txt")
        );
    }

    #[test]
    fn node_error_texts() {
        let err = std::fs::File::open("/definitely/not/here").unwrap_err();
        assert_eq!(
            node_fs_error(&err, "access", Some(Path::new("/definitely/not/here"))),
            "ENOENT: no such file or directory, access '/definitely/not/here'"
        );
        let err = io::Error::from_raw_os_error(21);
        assert_eq!(
            node_fs_error(&err, "read", None),
            "EISDIR: illegal operation on a directory, read"
        );
        let err = io::Error::from_raw_os_error(13);
        assert_eq!(node_error_code(&err), "EACCES");
    }
}
