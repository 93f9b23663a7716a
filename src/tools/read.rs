//! `read`: Pi's read tool (spec section 1).
//!
//! Text files come back whole or cut by `truncateHead` with Pi's continuation notices (no line
//! numbers, BOM and `\r` kept); images are recognised by content (`file-type`'s rules for jpeg,
//! png, gif and webp) and returned as base64 attachments. Depends only on the tool seams
//! (`path`, `truncate`, `definitions`).
//!
//! Deviation: Pi resizes images with Photon to fit 2000x2000 and 4.5 MiB of base64. We have no
//! image codec: an image that already fits (dimensions read from its header) is returned
//! unchanged, exactly as Pi does; one that does not fit, or whose header cannot be read, gets
//! Pi's own "could not be resized" text, which Pi also produces when resizing fails.

use std::io::Read;
use std::path::Path;

use async_trait::async_trait;
use base64::Engine as _;
use serde_json::{Value, json};

use super::args::{self, blocking, cancellable, check_aborted};
use super::definitions::pi_tool;
use super::path::{
    confined, file_kind, fs_error, node_fs_error, node_null_bytes_path, not_a_regular_file,
    resolve_read_path,
};
use super::profile::ToolProfile;
use super::truncate::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, js_number, truncate_head,
};
use super::{Content, Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};

/// Pi resizes images larger than this (either side).
const MAX_IMAGE_SIDE: u32 = 2000;
/// Pi's limit on the base64 payload of an image: 4.5 MiB.
const MAX_IMAGE_BASE64_BYTES: usize = 4_718_592;
/// `file-type` looks at this many bytes.
const SNIFF_BYTES: usize = 4100;
/// The most `read` takes from one file: 64 MiB. Pi reads the whole file, however large
/// (deviation: past this, the rest of the file is left out and a notice says so).
pub const MAX_READ_BYTES: u64 = 64 * 1024 * 1024;

pi_tool! {
    /// Pi's `read` tool.
    pub struct ReadTool = "read";
}

#[async_trait]
impl Tool for ReadTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        check_aborted(ctx)?;
        let path = args::text_or_empty(&args, "path");
        let offset = args::number(&args, "offset");
        let limit = args::number(&args, "limit");
        let abs = resolve_read_path(&path, &ctx.cwd, &ctx.home, &ctx.jail);
        confined(&abs, ctx)?;
        let jail = ctx.jail.clone();
        let profile = ctx.profile;
        cancellable(
            ctx,
            blocking("read", move || {
                read_file(&jail, &path, &abs, offset, limit, profile)
            }),
        )
        .await
    }
}

/// The whole tool, synchronously: `raw_path` is the argument as given (it appears in notices).
fn read_file(
    jail: &crate::sandbox::Jail,
    raw_path: &str,
    abs: &Path,
    offset: Option<f64>,
    limit: Option<f64>,
    profile: ToolProfile,
) -> Result<ToolOutput, ToolError> {
    if abs.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(ToolError::new(node_null_bytes_path(&abs.to_string_lossy())));
    }
    // Pi checks `fs.access(R_OK)`; opening for reading fails the same way. Non-blocking, so a
    // FIFO without a writer does not hang the open (regular files ignore the flag); beneath the
    // workspace in one step when confined.
    let file = match jail.open(abs, crate::sandbox::How::Read) {
        Ok(file) => file,
        // Pi 0.7 answered a file it could not open without an error status.
        Err(crate::sandbox::FsError::Io(_)) if profile == ToolProfile::Pi07 => {
            return Ok(ToolOutput::text(format!(
                "Error: File not found: {raw_path}"
            )));
        }
        Err(e) => return Err(fs_error(&e, "access", abs)),
    };
    let meta = file
        .metadata()
        .map_err(|e| ToolError::new(node_fs_error(&e, "read", None)))?;
    // Deviation: Pi reads FIFOs and devices until they end (`/dev/zero` never does).
    if !meta.is_file() && !meta.is_dir() {
        return Err(ToolError::new(not_a_regular_file(
            abs,
            file_kind(&meta.file_type()),
            "read only reads",
        )));
    }
    let size = meta.len();
    let mut bytes = Vec::with_capacity((size.min(MAX_READ_BYTES) as usize).max(SNIFF_BYTES));
    let mut file = file.take(MAX_READ_BYTES);
    (&mut file)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::new(node_fs_error(&e, "read", None)))?;

    if let Some(mime) = sniff_image_mime(&bytes[..bytes.len().min(SNIFF_BYTES)]) {
        // Base64 of more than this many bytes cannot fit Pi's inline limit: no need to read it.
        if size > (MAX_IMAGE_BASE64_BYTES / 4 * 3) as u64 {
            return Ok(ToolOutput::text(format!(
                "Read image file [{mime}]\n[Image omitted: could not be resized below the inline image size limit.]"
            )));
        }
        file.read_to_end(&mut bytes)
            .map_err(|e| ToolError::new(node_fs_error(&e, "read", None)))?;
        return Ok(image_output(&bytes, mime));
    }
    file.read_to_end(&mut bytes)
        .map_err(|e| ToolError::new(node_fs_error(&e, "read", None)))?;
    let text = String::from_utf8_lossy(&bytes);
    let mut out = if profile == ToolProfile::Pi07 {
        read_text_0_7(&text, offset, limit)
    } else {
        read_text(raw_path, &text, offset, limit, profile)?
    };
    if size > MAX_READ_BYTES {
        if let Some(Content::Text { text }) = out.content.first_mut() {
            text.push_str(&format!(
                "\n\n[harness: only the first {} of this {} file were read; line numbers and totals count that part]",
                format_size(MAX_READ_BYTES as usize),
                format_size(size as usize)
            ));
        }
    }
    Ok(out)
}

/// The image branch: offset and limit are ignored; details are undefined.
fn image_output(bytes: &[u8], mime: &str) -> ToolOutput {
    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
    let fits = image_dimensions(bytes, mime).is_some_and(|(w, h)| {
        w <= MAX_IMAGE_SIDE && h <= MAX_IMAGE_SIDE && data.len() < MAX_IMAGE_BASE64_BYTES
    });
    if fits {
        ToolOutput {
            content: vec![
                Content::text(format!("Read image file [{mime}]")),
                Content::Image {
                    data,
                    mime_type: mime.to_owned(),
                },
            ],
            ..Default::default()
        }
    } else {
        ToolOutput::text(format!(
            "Read image file [{mime}]\n[Image omitted: could not be resized below the inline image size limit.]"
        ))
    }
}

/// JS `Array.prototype.slice` index: truncated toward zero, negative counts from the end.
fn js_slice_index(index: f64, len: usize) -> usize {
    let len_f = len as f64;
    let i = index.trunc();
    if i < 0.0 {
        (len_f + i).max(0.0) as usize
    } else {
        i.min(len_f) as usize
    }
}

/// Pi 0.7's text branch: `limit || 2000` lines from `offset`, no byte limit, each line cut to
/// 2000 UTF-16 units, and one notice in parentheses; an offset past the end is answered
/// without an error status.
fn read_text_0_7(text: &str, offset: Option<f64>, limit: Option<f64>) -> ToolOutput {
    const MAX_LINES: usize = 2000;
    const MAX_LINE: usize = 2000;
    let lines: Vec<&str> = text.split('\n').collect();
    let truthy = |v: Option<f64>| v.filter(|v| *v != 0.0 && !v.is_nan());
    let start = truthy(offset).map_or(0, |o| (o - 1.0).max(0.0) as usize);
    if start >= lines.len() {
        return ToolOutput::text(format!(
            "Error: Offset {} is beyond end of file ({} lines total)",
            js_number(offset.unwrap_or(0.0)),
            lines.len()
        ));
    }
    let count = truthy(limit).map_or(MAX_LINES, |l| l.max(0.0) as usize);
    let end = start.saturating_add(count).min(lines.len());
    let mut cut = false;
    let shown: Vec<String> = lines[start..end]
        .iter()
        .map(|line| {
            if line.encode_utf16().count() <= MAX_LINE {
                return (*line).to_owned();
            }
            cut = true;
            let mut units = 0;
            line.chars()
                .take_while(|c| {
                    units += c.len_utf16();
                    units <= MAX_LINE
                })
                .collect()
        })
        .collect();
    let mut out = shown.join("\n");
    let mut notices = Vec::new();
    if cut {
        notices.push(format!(
            "Some lines were truncated to {MAX_LINE} characters for display"
        ));
    }
    if end < lines.len() {
        notices.push(format!(
            "{} more lines not shown. Use offset={} to continue reading",
            lines.len() - end,
            end + 1
        ));
    }
    if !notices.is_empty() {
        out.push_str(&format!("\n\n... ({})", notices.join(". ")));
    }
    ToolOutput::text(out)
}

/// The text branch, Pi's offset/limit arithmetic in JS numbers.
fn read_text(
    raw_path: &str,
    text: &str,
    offset: Option<f64>,
    limit: Option<f64>,
    profile: ToolProfile,
) -> Result<ToolOutput, ToolError> {
    let line_count = text.bytes().filter(|&b| b == b'\n').count() + 1;
    let total = line_count as f64;
    // `offset ? Math.max(0, offset - 1) : 0`: 0 and NaN are falsy.
    let start_line = match offset {
        Some(o) if o != 0.0 && !o.is_nan() => (o - 1.0).max(0.0),
        _ => 0.0,
    };
    if start_line >= total {
        return Err(ToolError::new(format!(
            "Offset {} is beyond end of file ({} lines total)",
            js_number(offset.unwrap_or(0.0)),
            line_count
        )));
    }
    let begin = js_slice_index(start_line, line_count);
    let (selected, user_limited_lines) = match limit {
        Some(limit) => {
            let end_line = (start_line + limit).min(total);
            let end = js_slice_index(end_line, line_count);
            (lines_between(text, begin, end), Some(end_line - start_line))
        }
        None => (lines_between(text, begin, usize::MAX), None),
    };

    let tr = truncate_head(selected, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    let start_display = start_line + 1.0;
    if tr.first_line_exceeds_limit {
        // Pi indexes `allLines[startLine]`: a fractional start line is `undefined` there and
        // `Buffer.byteLength(undefined)` throws.
        if start_line.fract() != 0.0 {
            return Err(ToolError::new(
                "The \"string\" argument must be of type string or an instance of Buffer or ArrayBuffer. Received undefined",
            ));
        }
        let first = start_line as usize;
        let line_bytes = lines_between(text, first, first + 1).len();
        let text = format!(
            "[Line {start} is {size}, exceeds {limit} limit. Use bash: sed -n '{start}p' {raw_path} | head -c {max}]",
            start = js_number(start_display),
            size = format_size(line_bytes),
            limit = format_size(DEFAULT_MAX_BYTES),
            max = DEFAULT_MAX_BYTES,
        );
        return Ok(with_truncation(text, &tr));
    }
    if tr.truncated {
        let end_display = start_display + tr.output_lines as f64 - 1.0;
        let next = end_display + 1.0;
        let range = format!(
            "{}-{} of {}",
            js_number(start_display),
            js_number(end_display),
            line_count
        );
        let notice = match tr.truncated_by {
            Some(super::truncate::TruncatedBy::Lines) => {
                format!(
                    "[Showing lines {range}. Use offset={} to {}",
                    js_number(next),
                    profile.read_notice_end()
                )
            }
            _ => format!(
                "[Showing lines {range} ({} limit). Use offset={} to {}",
                format_size(DEFAULT_MAX_BYTES),
                js_number(next),
                profile.read_notice_end()
            ),
        };
        let text = format!("{}\n\n{notice}", tr.content);
        return Ok(with_truncation(text, &tr));
    }
    if let Some(user_limited) = user_limited_lines {
        if start_line + user_limited < total {
            let remaining = total - (start_line + user_limited);
            let next = start_line + user_limited + 1.0;
            return Ok(ToolOutput::text(format!(
                "{}\n\n[{} more lines in file. Use offset={} to {}",
                tr.content,
                js_number(remaining),
                js_number(next),
                profile.read_notice_end()
            )));
        }
    }
    Ok(ToolOutput::text(tr.content))
}

/// `text.split("\n").slice(from, to).join("\n")` without splitting: the lines `from..to` are one
/// substring of `text`. `to == usize::MAX` means to the end.
fn lines_between(text: &str, from: usize, to: usize) -> &str {
    if to <= from {
        return "";
    }
    let mut start = if from == 0 { Some(0) } else { None };
    let mut end = text.len();
    // The i-th newline (0-based) ends line i and starts line i + 1.
    for (i, (pos, _)) in text.match_indices('\n').enumerate() {
        if i + 1 == from {
            start = Some(pos + 1);
        }
        if i + 1 == to {
            end = pos;
            break;
        }
        if to == usize::MAX && start.is_some() {
            break; // to the end of the text
        }
    }
    match start {
        Some(start) => &text[start..end],
        None => "",
    }
}

fn with_truncation(text: String, tr: &super::truncate::TruncationResult) -> ToolOutput {
    ToolOutput {
        content: vec![Content::text(text)],
        details: Some(json!({ "truncation": tr })),
        edit: None,
    }
}

/// `file-type`'s verdict on the first bytes, limited to the four image types Pi accepts.
///
/// Follows `file-type` 21's order of checks up to the ones that matter here: a UTF-8 BOM is
/// skipped, formats whose signatures are tested earlier win (so `GIF…` text is a GIF, while
/// JPEG-LS and animated PNG are not accepted), PNG chunks are scanned for `IDAT` before `acTL`.
/// Data after an ID3 tag is not searched (it is audio).
pub fn sniff_image_mime(buf: &[u8]) -> Option<&'static str> {
    if buf.len() <= 1 {
        return None;
    }
    let mut buf = buf;
    while buf.starts_with(&[0xEF, 0xBB, 0xBF]) {
        buf = &buf[3..];
    }
    // `file-type` peeks 12 bytes into a zeroed buffer first.
    let at = |i: usize| buf.get(i).copied().unwrap_or(0);
    let starts = |sig: &[u8]| sig.iter().enumerate().all(|(i, &b)| at(i) == b);
    let two: [&[u8]; 9] = [
        &[0x42, 0x4D],
        &[0x0B, 0x77],
        &[0x78, 0x01],
        &[0x4D, 0x5A],
        &[0x25, 0x21],
        &[0x1F, 0xA0],
        &[0x1F, 0x9D],
        &[0xC7, 0x71],
        &[0x60, 0xEA],
    ];
    if two.iter().any(|s| starts(s)) {
        return None;
    }
    if starts(b"GIF") {
        return Some("image/gif");
    }
    let three: [&[u8]; 5] = [
        &[0x49, 0x49, 0xBC],
        &[0x1F, 0x8B, 0x08],
        b"BZh",
        b"ID3",
        b"MP+",
    ];
    if three.iter().any(|s| starts(s))
        || (matches!(at(0), 0x43 | 0x46) && at(1) == 0x57 && at(2) == 0x53)
    {
        return None;
    }
    if starts(&[0xFF, 0xD8, 0xFF]) {
        return if at(3) == 0xF7 {
            None
        } else {
            Some("image/jpeg")
        };
    }
    let four: [&[u8]; 3] = [&[0x4F, 0x62, 0x6A, 0x01], b"FLIF", b"8BPS"];
    if four.iter().any(|s| starts(s)) {
        return None;
    }
    if (8..12).all(|i| at(i) == b"WEBP"[i - 8]) {
        return Some("image/webp");
    }
    if starts(&[0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
        return png_kind(buf);
    }
    None
}

/// `file-type`'s PNG chunk walk: `IDAT` first means PNG, `acTL` first means APNG (not accepted).
fn png_kind(buf: &[u8]) -> Option<&'static str> {
    let size = buf.len();
    let mut pos = 8usize;
    loop {
        if pos + 8 > size {
            return None; // end of stream inside a chunk header
        }
        let length = i32::from_be_bytes(buf[pos..pos + 4].try_into().expect("4 bytes"));
        if length < 0 {
            return None;
        }
        let kind = &buf[pos + 4..pos + 8];
        pos += 8;
        match kind {
            b"IDAT" => return Some("image/png"),
            b"acTL" => return None,
            _ => pos = (pos + length as usize + 4).min(size),
        }
        if pos + 8 >= size {
            return Some("image/png");
        }
    }
}

/// Width and height from the image header, `None` if the header is not readable.
pub fn image_dimensions(bytes: &[u8], mime: &str) -> Option<(u32, u32)> {
    let be16 = |i: usize| Some(u16::from_be_bytes(bytes.get(i..i + 2)?.try_into().ok()?) as u32);
    let le16 = |i: usize| Some(u16::from_le_bytes(bytes.get(i..i + 2)?.try_into().ok()?) as u32);
    let be32 = |i: usize| Some(u32::from_be_bytes(bytes.get(i..i + 4)?.try_into().ok()?));
    let le24 = |i: usize| {
        let b = bytes.get(i..i + 3)?;
        Some(b[0] as u32 | (b[1] as u32) << 8 | (b[2] as u32) << 16)
    };
    match mime {
        "image/png" => {
            if bytes.get(12..16)? != b"IHDR" {
                return None;
            }
            Some((be32(16)?, be32(20)?))
        }
        "image/gif" => {
            let sig = bytes.get(0..6)?;
            if sig != b"GIF87a" && sig != b"GIF89a" {
                return None;
            }
            Some((le16(6)?, le16(8)?))
        }
        "image/jpeg" => {
            let mut pos = 2usize;
            loop {
                while *bytes.get(pos)? != 0xFF {
                    pos += 1;
                }
                while *bytes.get(pos)? == 0xFF {
                    pos += 1;
                }
                let marker = *bytes.get(pos)?;
                pos += 1;
                if matches!(marker, 0xD8 | 0x01 | 0xD0..=0xD7) {
                    continue;
                }
                let len = be16(pos)? as usize;
                let is_sof = matches!(marker, 0xC0..=0xCF) && !matches!(marker, 0xC4 | 0xC8 | 0xCC);
                if is_sof {
                    let h = be16(pos + 3)?;
                    let w = be16(pos + 5)?;
                    return Some((w, h));
                }
                if len < 2 {
                    return None;
                }
                pos += len;
            }
        }
        "image/webp" => {
            if bytes.get(0..4)? != b"RIFF" {
                return None;
            }
            match bytes.get(12..16)? {
                b"VP8 " => {
                    if bytes.get(23..26)? != [0x9D, 0x01, 0x2A] {
                        return None;
                    }
                    Some((le16(26)? & 0x3FFF, le16(28)? & 0x3FFF))
                }
                b"VP8L" => {
                    if *bytes.get(20)? != 0x2F {
                        return None;
                    }
                    let b = bytes.get(21..25)?;
                    let w = 1 + (b[0] as u32 | ((b[1] as u32 & 0x3F) << 8));
                    let h = 1
                        + ((b[1] as u32 >> 6) | (b[2] as u32) << 2 | ((b[3] as u32 & 0x0F) << 10));
                    Some((w, h))
                }
                b"VP8X" => Some((1 + le24(24)?, 1 + le24(27)?)),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use tempfile::TempDir;

    async fn run(dir: &TempDir, args: Value) -> Result<ToolOutput, ToolError> {
        ReadTool::new()
            .execute(args, &ToolContext::new(dir.path()))
            .await
    }

    async fn text(dir: &TempDir, args: Value) -> String {
        let out = run(dir, args).await.expect("read ok");
        assert_eq!(out.content.len(), 1);
        out.content[0].as_text().unwrap().to_owned()
    }

    async fn err(dir: &TempDir, args: Value) -> String {
        run(dir, args).await.expect_err("read fails").message
    }

    fn fixture(files: &[(&str, &[u8])]) -> TempDir {
        let dir = TempDir::new().unwrap();
        for (name, content) in files {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        dir
    }

    /// A minimal valid-looking PNG header of the given size, with IHDR then IDAT.
    fn png(w: u32, h: u32) -> Vec<u8> {
        let mut v = vec![0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A];
        v.extend(13u32.to_be_bytes());
        v.extend(b"IHDR");
        v.extend(w.to_be_bytes());
        v.extend(h.to_be_bytes());
        v.extend([8, 6, 0, 0, 0]);
        v.extend([0, 0, 0, 0]); // crc
        v.extend(1u32.to_be_bytes());
        v.extend(b"IDAT");
        v.extend([0, 0, 0, 0, 0]);
        v
    }

    #[tokio::test]
    async fn whole_file_without_line_numbers() {
        let dir = fixture(&[("a.txt", b"line1\nline2\nline3\n")]);
        let out = run(&dir, json!({"path": "a.txt"})).await.unwrap();
        assert_eq!(out, ToolOutput::text("line1\nline2\nline3\n"));
    }

    #[tokio::test]
    async fn missing_file_is_node_enoent_with_the_absolute_path() {
        let dir = fixture(&[]);
        let abs = dir.path().join("nope.txt");
        assert_eq!(
            err(&dir, json!({"path": "nope.txt"})).await,
            format!(
                "ENOENT: no such file or directory, access '{}'",
                abs.display()
            )
        );
    }

    #[tokio::test]
    async fn directory_is_eisdir_on_read() {
        let dir = fixture(&[("sub/x", b"")]);
        assert_eq!(
            err(&dir, json!({"path": "sub"})).await,
            "EISDIR: illegal operation on a directory, read"
        );
        // `~` is the home, here the cwd: a directory too.
        assert_eq!(
            err(&dir, json!({"path": "~"})).await,
            "EISDIR: illegal operation on a directory, read"
        );
    }

    #[tokio::test]
    async fn offset_beyond_end_of_file() {
        let dir = fixture(&[("a.txt", b"line1\nline2\nline3\n"), ("empty.txt", b"")]);
        assert_eq!(
            err(&dir, json!({"path": "a.txt", "offset": 5})).await,
            "Offset 5 is beyond end of file (4 lines total)"
        );
        assert_eq!(
            err(&dir, json!({"path": "empty.txt", "offset": 2})).await,
            "Offset 2 is beyond end of file (1 lines total)"
        );
        // An empty file reads as "".
        assert_eq!(text(&dir, json!({"path": "empty.txt"})).await, "");
    }

    #[tokio::test]
    async fn limit_notices() {
        let dir = fixture(&[("a.txt", b"line1\nline2\nline3\n")]);
        assert_eq!(
            text(&dir, json!({"path": "a.txt", "limit": 1})).await,
            "line1\n\n[3 more lines in file. Use offset=2 to continue.]"
        );
        assert_eq!(
            text(&dir, json!({"path": "a.txt", "offset": 2, "limit": 1})).await,
            "line2\n\n[2 more lines in file. Use offset=3 to continue.]"
        );
        assert_eq!(
            text(&dir, json!({"path": "a.txt", "limit": 0})).await,
            "\n\n[4 more lines in file. Use offset=1 to continue.]"
        );
        assert_eq!(
            text(&dir, json!({"path": "a.txt", "limit": -1})).await,
            "line1\nline2\nline3\n\n[5 more lines in file. Use offset=0 to continue.]"
        );
        assert_eq!(
            text(&dir, json!({"path": "a.txt", "limit": 1.5})).await,
            "line1\n\n[2.5 more lines in file. Use offset=2.5 to continue.]"
        );
        // A limit reaching the end: no notice, no details.
        let out = run(&dir, json!({"path": "a.txt", "offset": 3, "limit": 9}))
            .await
            .unwrap();
        assert_eq!(out, ToolOutput::text("line3\n"));
    }

    #[tokio::test]
    async fn offset_zero_and_negative_mean_start() {
        let dir = fixture(&[("a.txt", b"a\nb")]);
        assert_eq!(
            text(&dir, json!({"path": "a.txt", "offset": 0})).await,
            "a\nb"
        );
        assert_eq!(
            text(&dir, json!({"path": "a.txt", "offset": -3})).await,
            "a\nb"
        );
        assert_eq!(text(&dir, json!({"path": "a.txt", "offset": 2})).await, "b");
    }

    #[tokio::test]
    async fn crlf_bom_nul_and_invalid_utf8_are_kept_or_replaced_like_node() {
        let dir = fixture(&[
            ("crlf.txt", b"a\r\nb\r\n"),
            ("bom.txt", b"\xEF\xBB\xBFhello"),
            ("bin.dat", b"x\x00y\xFFz"),
        ]);
        assert_eq!(text(&dir, json!({"path": "crlf.txt"})).await, "a\r\nb\r\n");
        assert_eq!(
            text(&dir, json!({"path": "bom.txt"})).await,
            "\u{FEFF}hello"
        );
        assert_eq!(
            text(&dir, json!({"path": "bin.dat"})).await,
            "x\u{0}y\u{FFFD}z"
        );
    }

    #[tokio::test]
    async fn truncated_by_lines_and_the_2000_line_quirk() {
        let lines: String = (1..=2500).map(|i| format!("L{i}\n")).collect();
        let exact: String = (1..=2000).map(|i| format!("L{i}\n")).collect();
        let dir = fixture(&[
            ("big.txt", lines.as_bytes()),
            ("exact.txt", exact.as_bytes()),
        ]);
        let out = run(&dir, json!({"path": "big.txt", "limit": 3000}))
            .await
            .unwrap();
        let t = out.content[0].as_text().unwrap();
        assert!(
            t.ends_with("L2000\n\n[Showing lines 1-2000 of 2501. Use offset=2001 to continue.]"),
            "{t}"
        );
        let details = out.details.unwrap();
        assert_eq!(details["truncation"]["truncatedBy"], "lines");
        assert_eq!(details["truncation"]["outputLines"], 2000);

        let t = text(&dir, json!({"path": "exact.txt"})).await;
        assert!(
            t.ends_with("L2000\n\n[Showing lines 1-2000 of 2001. Use offset=2001 to continue.]"),
            "{t}"
        );
        assert_eq!(
            text(&dir, json!({"path": "exact.txt", "offset": 2001})).await,
            ""
        );

        let t = text(&dir, json!({"path": "big.txt", "offset": 2001})).await;
        assert!(t.starts_with("L2001\n"));
        assert!(t.ends_with("L2500\n"));
    }

    #[tokio::test]
    async fn truncated_by_bytes_with_multibyte_lines() {
        // 100 lines of 1000 "é" (2000 bytes + newline): 25 lines fit in 51200 bytes.
        let line = "é".repeat(1000);
        let content: String = (0..100).map(|_| format!("{line}\n")).collect();
        let dir = fixture(&[("wide.txt", content.as_bytes())]);
        let out = run(&dir, json!({"path": "wide.txt", "offset": 3}))
            .await
            .unwrap();
        let t = out.content[0].as_text().unwrap();
        let (body, notice) = t.rsplit_once("\n\n").unwrap();
        assert_eq!(body.split('\n').count(), 25);
        assert_eq!(
            notice,
            "[Showing lines 3-27 of 101 (50.0KB limit). Use offset=28 to continue.]"
        );
        assert_eq!(out.details.unwrap()["truncation"]["truncatedBy"], "bytes");
    }

    #[tokio::test]
    async fn first_line_too_long() {
        let huge = format!("{}\nshort\n", "x".repeat(60000));
        let dir = fixture(&[("huge1.txt", huge.as_bytes())]);
        let out = run(&dir, json!({"path": "huge1.txt"})).await.unwrap();
        assert_eq!(
            out.content[0].as_text().unwrap(),
            "[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' huge1.txt | head -c 51200]"
        );
        assert_eq!(
            out.details.unwrap()["truncation"]["firstLineExceedsLimit"],
            true
        );
        // Past the long line it reads as usual.
        assert_eq!(
            text(&dir, json!({"path": "huge1.txt", "offset": 2})).await,
            "short\n"
        );
        // The raw path argument is quoted, not the resolved one.
        let t = text(&dir, json!({"path": "./huge1.txt"})).await;
        assert!(t.contains("sed -n '1p' ./huge1.txt |"), "{t}");
    }

    #[tokio::test]
    async fn images_are_sniffed_by_content_not_extension() {
        let img = png(10, 20);
        let dir = fixture(&[("fake.png", b"just text"), ("pic.dat", &img)]);
        assert_eq!(text(&dir, json!({"path": "fake.png"})).await, "just text");
        let out = run(&dir, json!({"path": "pic.dat", "offset": 5, "limit": 1}))
            .await
            .unwrap();
        assert_eq!(
            out,
            ToolOutput {
                content: vec![
                    Content::text("Read image file [image/png]"),
                    Content::Image {
                        data: base64::engine::general_purpose::STANDARD.encode(&img),
                        mime_type: "image/png".into(),
                    },
                ],
                details: None,
                edit: None,
            }
        );
    }

    #[tokio::test]
    async fn oversize_or_undecodable_images_are_omitted() {
        let dir = fixture(&[("big.png", &png(4000, 10)), ("gif.txt", b"GIFs are fun")]);
        let omitted = |mime: &str| {
            format!(
                "Read image file [{mime}]\n[Image omitted: could not be resized below the inline image size limit.]"
            )
        };
        assert_eq!(
            text(&dir, json!({"path": "big.png"})).await,
            omitted("image/png")
        );
        // file-type calls anything starting with "GIF" a GIF; Photon cannot decode it.
        assert_eq!(
            text(&dir, json!({"path": "gif.txt"})).await,
            omitted("image/gif")
        );
    }

    #[test]
    fn lines_between_equals_split_slice_join() {
        for text in ["", "a", "a\n", "\n\n", "a\nbb\n\nccc", "x\r\ny\n"] {
            let lines: Vec<&str> = text.split('\n').collect();
            for from in 0..=lines.len() + 1 {
                for to in 0..=lines.len() + 1 {
                    let want = if to > from {
                        lines[from.min(lines.len())..to.min(lines.len())].join("\n")
                    } else {
                        String::new()
                    };
                    assert_eq!(lines_between(text, from, to), want, "{text:?} {from}..{to}");
                    if to > lines.len() {
                        assert_eq!(
                            lines_between(text, from, usize::MAX),
                            want,
                            "{text:?} {from}.."
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn sniffing_follows_file_type() {
        assert_eq!(
            sniff_image_mime(&[0xFF, 0xD8, 0xFF, 0xE0]),
            Some("image/jpeg")
        );
        assert_eq!(sniff_image_mime(&[0xFF, 0xD8, 0xFF, 0xF7]), None, "JPEG-LS");
        assert_eq!(sniff_image_mime(b"GIF89a...."), Some("image/gif"));
        assert_eq!(
            sniff_image_mime(b"RIFF\0\0\0\0WEBPVP8 "),
            Some("image/webp")
        );
        assert_eq!(
            sniff_image_mime(b"BM\0\0\0\0\0\0WEBP"),
            None,
            "bmp is checked first"
        );
        assert_eq!(sniff_image_mime(b"\xEF\xBB\xBFGIF8"), Some("image/gif"));
        assert_eq!(sniff_image_mime(&png(1, 1)), Some("image/png"));
        let mut apng = png(1, 1);
        apng.truncate(33);
        apng.extend(8u32.to_be_bytes());
        apng.extend(b"acTL");
        apng.extend([0; 12]);
        assert_eq!(sniff_image_mime(&apng), None, "APNG is not accepted");
        assert_eq!(sniff_image_mime(b"G"), None);
        assert_eq!(sniff_image_mime(b""), None);
    }

    #[test]
    fn dimensions_from_headers() {
        assert_eq!(
            image_dimensions(&png(640, 480), "image/png"),
            Some((640, 480))
        );
        let gif = b"GIF89a\x20\x03\x58\x02rest";
        assert_eq!(image_dimensions(gif, "image/gif"), Some((800, 600)));
        // JPEG: SOI, APP0 (len 16), SOF0 with height 300, width 400.
        let mut jpg = vec![0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10];
        jpg.extend([0; 14]);
        jpg.extend([0xFF, 0xC0, 0x00, 0x11, 0x08, 0x01, 0x2C, 0x01, 0x90, 0x03]);
        assert_eq!(image_dimensions(&jpg, "image/jpeg"), Some((400, 300)));
        let mut webp = b"RIFF\0\0\0\0WEBPVP8X".to_vec();
        webp.extend([0; 8]);
        webp.extend([0x1F, 0x00, 0x00, 0x0F, 0x00, 0x00]);
        assert_eq!(image_dimensions(&webp, "image/webp"), Some((32, 16)));
        assert_eq!(image_dimensions(b"GIFs are fun", "image/gif"), None);
    }

    #[tokio::test]
    async fn multibyte_characters_at_the_50kb_boundary() {
        // Line 1 is 51197 bytes ("€" is 3 bytes); with its newline 51198. A second line of 2
        // bytes fits exactly (51200); one more character is cut, whole lines only.
        let first = format!("{}ab", "€".repeat(17065));
        assert_eq!(first.len(), 51197);
        let over = format!("{first}\n€");
        let fits = format!("{first}\nab");
        let dir = fixture(&[("over.txt", over.as_bytes()), ("fits.txt", fits.as_bytes())]);
        assert_eq!(
            text(&dir, json!({"path": "over.txt"})).await,
            format!(
                "{first}\n\n[Showing lines 1-1 of 2 (50.0KB limit). Use offset=2 to continue.]"
            )
        );
        assert_eq!(text(&dir, json!({"path": "fits.txt"})).await, fits);
    }

    #[tokio::test]
    async fn fractional_offsets_follow_js() {
        let huge = format!("{}\nshort", "x".repeat(60000));
        let dir = fixture(&[("a.txt", b"a\nb\nc"), ("huge.txt", huge.as_bytes())]);
        // startLine 1.5: slice starts at 1; no notice without a limit.
        assert_eq!(
            text(&dir, json!({"path": "a.txt", "offset": 2.5})).await,
            "b\nc"
        );
        assert_eq!(
            text(&dir, json!({"path": "a.txt", "offset": 1.5, "limit": 1})).await,
            "a\n\n[1.5 more lines in file. Use offset=2.5 to continue.]"
        );
        // `allLines[0.5]` is undefined in JS: Buffer.byteLength throws.
        let e = err(&dir, json!({"path": "huge.txt", "offset": 1.5})).await;
        assert!(
            e.starts_with("The \"string\" argument must be of type string"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn aborted_before_start() {
        let dir = fixture(&[("a.txt", b"x")]);
        let ctx = ToolContext::new(dir.path());
        ctx.cancel.cancel();
        let e = ReadTool::new()
            .execute(json!({"path": "a.txt"}), &ctx)
            .await
            .unwrap_err();
        assert_eq!(e.message, "Operation aborted");
    }
}
