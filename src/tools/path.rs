//! Path resolution shared by all tools (spec section 0): `resolveToCwd` and `resolveReadPath`,
//! plus Node-style texts for file system errors (`ENOENT: no such file or directory, access '…'`),
//! since Pi's tools pass Node's error messages to the model unchanged.
//!
//! Resolution is pure string work (Node's `path.resolve`), never touching the file system, except
//! for the existence probes of [`resolve_read_path`] (made through the run's jail). [`confined`]
//! is the sandbox's early word on a resolved path (refused outside the workspace under
//! `workspace` and `isolated`); the tools then open every path through the jail
//! ([`crate::sandbox::Jail::open`]), which resolves and opens it beneath the workspace in one
//! step, and [`fs_error`] turns its refusals into the tool's texts. [`node_null_bytes_path`] /
//! [`node_null_bytes_arg`] are Node's texts for a NUL byte in a path or a spawn argument. Depends
//! on the tool context and the sandbox only.

use std::io;
use std::path::{Path, PathBuf};

pub use crate::sandbox::beneath::file_kind;
use crate::sandbox::{FsError, Jail};

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
pub fn resolve_read_path(path: &str, cwd: &Path, home: &Path, jail: &Jail) -> PathBuf {
    let resolved = resolve_to_cwd(path, cwd, home);
    let exists = |p: &Path| jail.exists(p);
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

/// The sandbox's check of a resolved path for a file tool: `Ok` under `none` (Pi's behaviour),
/// an error result when the path resolves outside the workspace otherwise.
pub fn confined(abs: &Path, ctx: &super::ToolContext) -> Result<(), super::ToolError> {
    ctx.jail
        .check_path(abs)
        .map_err(|e| super::ToolError::new(e.to_string()))
}

/// The tool's error for a path the jail refused: the sandbox's `Access denied: …` text, or
/// Node's text for the failed `syscall` on `path`.
pub fn fs_error(err: &FsError, syscall: &str, path: &Path) -> super::ToolError {
    super::ToolError::new(match err {
        FsError::Outside(outside) => outside.to_string(),
        FsError::SharedLink(link) => link.to_string(),
        FsError::Io(e) => node_fs_error(e, syscall, Some(path)),
    })
}

/// The file tools' refusal of anything but a regular file, a deviation from Pi (which waits
/// for a FIFO's other end, and reads `/dev/zero` until memory runs out): `Not a regular file:
/// <path> (a FIFO); <tool> only <does> regular files`.
pub fn not_a_regular_file(abs: &Path, kind: &str, tool_does: &str) -> String {
    format!(
        "Not a regular file: {} ({kind}); {tool_does} regular files",
        abs.display()
    )
}

/// Node's `writeFile` open (truncate or create, symlinks followed) through the jail, for `write`
/// and `edit` (`tool_does`: "write only writes"): the file, or the tool's error text. The open
/// is non-blocking, so a FIFO without a reader fails it (`ENXIO`) instead of hanging the call for
/// good (as Node's would), and a FIFO or socket opened all the same is refused before a byte is
/// written: both wait on another process. A device is written as in Pi (`/dev/null`, and
/// `/dev/full`'s `ENOSPC`); none can be in a confined workspace. A folder keeps Node's `EISDIR`.
pub fn open_for_writing(jail: &Jail, abs: &Path, tool_does: &str) -> Result<std::fs::File, String> {
    use std::os::unix::fs::FileTypeExt;
    let file = match jail.open(abs, crate::sandbox::How::Truncate) {
        Ok(file) => file,
        Err(FsError::Io(e)) if e.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) => {
            // A FIFO nothing reads, or a socket: say which if it can still be told.
            let kind = jail
                .metadata(abs)
                .map_or("a FIFO or a socket", |meta| file_kind(&meta.file_type()));
            return Err(not_a_regular_file(abs, kind, tool_does));
        }
        Err(e) => return Err(fs_error(&e, "open", abs).message),
    };
    match file.metadata() {
        Ok(meta) if meta.file_type().is_fifo() || meta.file_type().is_socket() => Err(
            not_a_regular_file(abs, file_kind(&meta.file_type()), tool_does),
        ),
        Ok(_) => Ok(file),
        Err(e) => Err(node_fs_error(&e, "open", Some(abs))),
    }
}

/// The most bytes Node's `fs.readFile` reads (`kIoMaxLength`, 2 GiB less one byte).
pub const NODE_MAX_FILE: u64 = (1 << 31) - 1;

/// The most bytes Node's `Buffer.toString` turns into a string (V8's `String::kMaxLength` on
/// 64-bit).
pub const NODE_MAX_STRING: u64 = 0x1fff_ffe8;

/// Node's error for `readFile(path).toString()` of a file of `len` bytes, where it fails for
/// its size alone: `File size (N) is greater than 2 GiB` (`ERR_FS_FILE_TOO_LARGE`), or
/// `Cannot create a string longer than 0x1fffffe8 characters` (`ERR_STRING_TOO_LONG`). So a
/// tool that reads a whole file as Pi's does never holds more than that (a sparse file of
/// terabytes costs a command one `truncate`).
pub fn node_read_to_string_limit(len: u64) -> Option<String> {
    if len > NODE_MAX_FILE {
        Some(format!("File size ({len}) is greater than 2 GiB"))
    } else if len > NODE_MAX_STRING {
        Some("Cannot create a string longer than 0x1fffffe8 characters".to_owned())
    } else {
        None
    }
}

/// Node's `ERR_INVALID_ARG_VALUE` for a path with a NUL byte (any `fs` call).
pub fn node_null_bytes_path(path: &str) -> String {
    format!(
        "The argument 'path' must be a string, Uint8Array, or URL without null bytes. Received {}",
        node_received(path)
    )
}

/// Node's `ERR_INVALID_ARG_VALUE` for a spawn argument with a NUL byte (`name` is `args[N]`).
pub fn node_null_bytes_arg(name: &str, value: &str) -> String {
    format!(
        "The argument '{name}' must be a string without null bytes. Received {}",
        node_received(value)
    )
}

/// The error Node's `spawn` gives for the first of `args` holding a NUL byte, if any.
pub fn first_nul_arg(args: &[&str]) -> Option<String> {
    args.iter()
        .position(|a| a.contains('\0'))
        .map(|i| node_null_bytes_arg(&format!("args[{i}]"), args[i]))
}

/// `util.inspect(value)` cut as Node's error messages cut it: past 128 UTF-16 units, the first
/// 128 and `...`.
fn node_received(value: &str) -> String {
    let inspected = node_inspect_string(value);
    let units: Vec<u16> = inspected.encode_utf16().collect();
    if units.len() > 128 {
        format!("{}...", String::from_utf16_lossy(&units[..128]))
    } else {
        inspected
    }
}

/// Node's `util.inspect` of a string at the top level: quoted (`'`, else `"`, else a backtick,
/// whichever the text lacks), control characters, `\` and the chosen quote escaped; a string
/// longer than 16 and than 76 UTF-16 units is split after each newline into quoted pieces joined
/// by ` +\n  `.
pub fn node_inspect_string(value: &str) -> String {
    let len = value.encode_utf16().count();
    // Node: `length > kMinLineWidth (16) && length > breakLength (80) - indentation (0) - 4`.
    if len > 76 && value.contains('\n') {
        let pieces: Vec<String> = value.split_inclusive('\n').map(node_quote_string).collect();
        return pieces.join(" +\n  ");
    }
    node_quote_string(value)
}

/// Node's `strEscape`: one quoted piece.
fn node_quote_string(s: &str) -> String {
    let quote = if !s.contains('\'') {
        '\''
    } else if !s.contains('"') {
        '"'
    } else if !s.contains('`') && !s.contains("${") {
        '`'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        let code = c as u32;
        match c {
            '\x08' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\x0C' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\\' => out.push_str("\\\\"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            _ if code < 0x20 || (0x7F..0xA0).contains(&code) => {
                out.push_str(&format!("\\x{code:02X}"));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
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
        let free = Jail::unconfined();
        let screenshot = "Screenshot 2024 at 10.22.01\u{202F}AM.png";
        std::fs::write(cwd.join(screenshot), "x").unwrap();
        let got = resolve_read_path("Screenshot 2024 at 10.22.01 AM.png", cwd, cwd, &free);
        assert_eq!(got, cwd.join(screenshot));

        let nfd_name: String = "café.txt".nfd().collect();
        std::fs::write(cwd.join(&nfd_name), "x").unwrap();
        assert_eq!(
            resolve_read_path("café.txt", cwd, cwd, &free),
            cwd.join(&nfd_name)
        );

        std::fs::write(cwd.join("it\u{2019}s.txt"), "x").unwrap();
        assert_eq!(
            resolve_read_path("it's.txt", cwd, cwd, &free),
            cwd.join("it\u{2019}s.txt")
        );

        let both: String = "né\u{2019}.txt".nfd().collect();
        std::fs::write(cwd.join(&both), "x").unwrap();
        assert_eq!(
            resolve_read_path("né'.txt", cwd, cwd, &free),
            cwd.join(&both)
        );

        // Nothing matches: the plain resolved path.
        assert_eq!(
            resolve_read_path("nope's.txt", cwd, cwd, &free),
            cwd.join("nope's.txt")
        );
        // An existing path wins over variants.
        std::fs::write(cwd.join("it's.txt"), "x").unwrap();
        assert_eq!(
            resolve_read_path("it's.txt", cwd, cwd, &free),
            cwd.join("it's.txt")
        );
    }

    #[test]
    fn node_null_byte_texts_match_node_20() {
        // Each expected text is what node 20 printed for the same string.
        let arg = |s: &str| node_null_bytes_arg("args[0]", s);
        let pre = "The argument 'args[0]' must be a string without null bytes. Received ";
        assert_eq!(arg("a\0"), format!("{pre}'a\\x00'"));
        assert_eq!(arg("short\0\n"), format!("{pre}'short\\x00\\n'"));
        assert_eq!(arg("'\0\n"), format!("{pre}\"'\\x00\\n\""));
        assert_eq!(arg("it's \"q\"\0"), format!("{pre}`it's \"q\"\\x00`"));
        assert_eq!(
            arg("it's \"q\" `b`\0"),
            format!("{pre}'it\\'s \"q\" `b`\\x00'")
        );
        assert_eq!(
            arg("back\\slash\0\t\r\n\u{1b}\u{7f}\u{85} \u{e9} \u{1F600}"),
            format!("{pre}'back\\\\slash\\x00\\t\\r\\n\\x1B\\x7F\\x85 \u{e9} \u{1F600}'")
        );
        let digits79 = "0123456789".repeat(8)[..79].to_owned();
        assert_eq!(
            arg(&format!("{digits79}\0\nx")),
            format!("{pre}'{digits79}\\x00\\n' +\n  'x'")
        );
        assert_eq!(
            arg(
                "echo first line is long enough to pass the break length of eighty chars for sure yes\necho two\0\necho three"
            ),
            format!(
                "{pre}'echo first line is long enough to pass the break length of eighty chars for sure yes\\n' +\n  'echo two\\x00\\n' +\n  'echo three'"
            )
        );
        let hundred = "0123456789".repeat(10);
        assert_eq!(
            arg(&format!("ab\0\n\n\ncd{hundred}")),
            format!(
                "{pre}'ab\\x00\\n' +\n  '\\n' +\n  '\\n' +\n  'cd{}...",
                &hundred[..92]
            )
        );
        let long = format!("echo {}\0b", "a".repeat(141));
        assert_eq!(arg(&long), format!("{pre}'echo {}...", "a".repeat(122)));
        assert_eq!(
            node_null_bytes_path("/dev/zer\0o"),
            "The argument 'path' must be a string, Uint8Array, or URL without null bytes. Received '/dev/zer\\x00o'"
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
