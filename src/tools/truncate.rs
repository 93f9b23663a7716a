//! Pi's `truncate.ts` (spec section 6): head and tail truncation, `formatSize`, `truncateLine`.
//!
//! Byte counts are UTF-8 bytes (Node's `Buffer.byteLength`), lines come from `split("\n")` (so a
//! trailing newline adds an empty last line), and `truncate_line` counts UTF-16 code units as JS
//! `String.length` does. Pure functions over strings: no I/O, no dependency on other tools.

use serde::{Deserialize, Serialize};

/// Pi's default line limit for `read` and `bash` output.
pub const DEFAULT_MAX_LINES: usize = 2000;
/// Pi's default byte limit (50 KiB) for every tool's output.
pub const DEFAULT_MAX_BYTES: usize = 51200;
/// Pi's per-line limit for `grep` output, in UTF-16 code units.
pub const GREP_MAX_LINE_LENGTH: usize = 500;
/// JS `Number.MAX_SAFE_INTEGER`: the line limit Pi passes when only bytes should limit
/// (`grep`, `find`, `ls`); it shows up as `maxLines` in `details.truncation`.
pub const MAX_SAFE_INTEGER: usize = 9_007_199_254_740_991;

/// Which limit cut the content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TruncatedBy {
    Lines,
    Bytes,
}

/// Pi's `TruncationResult`; serialises with Pi's field names and order, since it appears in a
/// tool result's `details`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TruncationResult {
    /// The kept text.
    pub content: String,
    pub truncated: bool,
    /// `null` when nothing was cut.
    pub truncated_by: Option<TruncatedBy>,
    /// `split("\n").length` of the input.
    pub total_lines: usize,
    /// UTF-8 bytes of the input.
    pub total_bytes: usize,
    pub output_lines: usize,
    pub output_bytes: usize,
    /// Tail only: the kept text is the end of one line that alone exceeded the byte limit.
    pub last_line_partial: bool,
    /// Head only: the first line alone exceeded the byte limit, so nothing was kept.
    pub first_line_exceeds_limit: bool,
    pub max_lines: usize,
    pub max_bytes: usize,
}

impl TruncationResult {
    fn untouched(content: &str, total_lines: usize, max_lines: usize, max_bytes: usize) -> Self {
        TruncationResult {
            content: content.to_owned(),
            truncated: false,
            truncated_by: None,
            total_lines,
            total_bytes: content.len(),
            output_lines: total_lines,
            output_bytes: content.len(),
            last_line_partial: false,
            first_line_exceeds_limit: false,
            max_lines,
            max_bytes,
        }
    }
}

/// Pi's `formatSize`: `512B`, `50.0KB`, `1.5MB` (one decimal, JS `toFixed` rounding: half up).
pub fn format_size(bytes: usize) -> String {
    const KB: u128 = 1024;
    const MB: u128 = 1024 * 1024;
    let b = bytes as u128;
    let tenths = |unit: u128| (b * 10 * 2 + unit) / (2 * unit);
    if b < KB {
        format!("{b}B")
    } else if b < MB {
        let t = tenths(KB);
        format!("{}.{}KB", t / 10, t % 10)
    } else {
        let t = tenths(MB);
        format!("{}.{}MB", t / 10, t % 10)
    }
}

/// Pi's `truncateHead`: keeps the first complete lines within `max_lines` and `max_bytes`.
/// Never returns a partial line; if the first line alone is too big the content is empty and
/// `first_line_exceeds_limit` is set.
pub fn truncate_head(content: &str, max_lines: usize, max_bytes: usize) -> TruncationResult {
    let total_bytes = content.len();
    let total_lines = count_lines(content);
    if total_lines <= max_lines && total_bytes <= max_bytes {
        return TruncationResult::untouched(content, total_lines, max_lines, max_bytes);
    }
    let first_line_bytes = content.find('\n').unwrap_or(content.len());
    if first_line_bytes > max_bytes {
        return TruncationResult {
            content: String::new(),
            truncated: true,
            truncated_by: Some(TruncatedBy::Bytes),
            total_lines,
            total_bytes,
            output_lines: 0,
            output_bytes: 0,
            last_line_partial: false,
            first_line_exceeds_limit: true,
            max_lines,
            max_bytes,
        };
    }

    // Kept lines are a prefix of `content`, so track the end offset instead of copying lines.
    let mut kept = 0usize;
    let mut kept_end = 0usize;
    let mut used = 0usize;
    let mut truncated_by = TruncatedBy::Lines;
    let mut start = 0usize;
    for (i, line) in content.split('\n').enumerate() {
        if i >= max_lines {
            break;
        }
        let cost = line.len() + usize::from(i > 0);
        if used + cost > max_bytes {
            truncated_by = TruncatedBy::Bytes;
            break;
        }
        used += cost;
        kept += 1;
        kept_end = start + line.len();
        start = kept_end + 1;
    }
    if kept >= max_lines && used <= max_bytes {
        truncated_by = TruncatedBy::Lines;
    }
    let out = &content[..kept_end];
    TruncationResult {
        content: out.to_owned(),
        truncated: true,
        truncated_by: Some(truncated_by),
        total_lines,
        total_bytes,
        output_lines: kept,
        output_bytes: out.len(),
        last_line_partial: false,
        first_line_exceeds_limit: false,
        max_lines,
        max_bytes,
    }
}

/// Pi's `truncateTail`: keeps the last complete lines within `max_lines` and `max_bytes`; if the
/// very last line alone is too big, keeps its last `max_bytes` bytes (moved forward to a UTF-8
/// character boundary) and sets `last_line_partial`.
pub fn truncate_tail(content: &str, max_lines: usize, max_bytes: usize) -> TruncationResult {
    let total_bytes = content.len();
    let total_lines = count_lines(content);
    if total_lines <= max_lines && total_bytes <= max_bytes {
        return TruncationResult::untouched(content, total_lines, max_lines, max_bytes);
    }

    // Kept lines are a suffix of `content`: track where it starts.
    let mut kept = 0usize;
    let mut kept_start = content.len();
    let mut used = 0usize;
    let mut truncated_by = TruncatedBy::Lines;
    let mut last_line_partial = false;
    let mut partial: Option<&str> = None;
    let mut end = content.len();
    for line in content.rsplit('\n') {
        if kept >= max_lines {
            break;
        }
        let line_start = end - line.len();
        let cost = line.len() + usize::from(kept > 0);
        if used + cost > max_bytes {
            truncated_by = TruncatedBy::Bytes;
            if kept == 0 {
                let tail = tail_bytes(line, max_bytes);
                used = tail.len();
                kept = 1;
                last_line_partial = true;
                partial = Some(tail);
            }
            break;
        }
        used += cost;
        kept += 1;
        kept_start = line_start;
        end = line_start.saturating_sub(1);
    }
    if kept >= max_lines && used <= max_bytes {
        truncated_by = TruncatedBy::Lines;
    }
    let out = partial.unwrap_or(&content[kept_start..]);
    TruncationResult {
        content: out.to_owned(),
        truncated: true,
        truncated_by: Some(truncated_by),
        total_lines,
        total_bytes,
        output_lines: kept,
        output_bytes: out.len(),
        last_line_partial,
        first_line_exceeds_limit: false,
        max_lines,
        max_bytes,
    }
}

/// The last `max_bytes` bytes of `line`, with the start moved forward past UTF-8 continuation
/// bytes (Pi's `truncateStringToBytesFromEnd`).
fn tail_bytes(line: &str, max_bytes: usize) -> &str {
    if line.len() <= max_bytes {
        return line;
    }
    let bytes = line.as_bytes();
    let mut start = line.len() - max_bytes;
    while start < bytes.len() && (bytes[start] & 0xC0) == 0x80 {
        start += 1;
    }
    &line[start..]
}

/// `content.split("\n").length`.
fn count_lines(content: &str) -> usize {
    memchr_count(content.as_bytes(), b'\n') + 1
}

fn memchr_count(haystack: &[u8], needle: u8) -> usize {
    haystack.iter().filter(|&&b| b == needle).count()
}

/// The length of `s` in UTF-16 code units (JS `String.length`).
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The result of [`truncate_line`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruncatedLine {
    pub text: String,
    pub was_truncated: bool,
}

/// Pi's `truncateLine`: a line longer than `max_chars` UTF-16 code units becomes its first
/// `max_chars` units plus `"... [truncated]"`.
///
/// Deviation: when the cut falls inside a surrogate pair, JS keeps a lone high surrogate, which a
/// Rust string cannot hold; it becomes U+FFFD (what a UTF-8 encoder makes of it).
pub fn truncate_line(line: &str, max_chars: usize) -> TruncatedLine {
    // Fast path: UTF-16 length is at most the UTF-8 length.
    if line.len() <= max_chars || utf16_len(line) <= max_chars {
        return TruncatedLine {
            text: line.to_owned(),
            was_truncated: false,
        };
    }
    let mut units = 0usize;
    let mut text = String::with_capacity(max_chars + 16);
    for c in line.chars() {
        let w = c.len_utf16();
        if units + w > max_chars {
            if units < max_chars {
                text.push('\u{FFFD}');
            }
            break;
        }
        units += w;
        text.push(c);
    }
    text.push_str("... [truncated]");
    TruncatedLine {
        text,
        was_truncated: true,
    }
}

/// A number as JS `String(n)` prints it: `5`, `2.5`, `1e+21`, `0` for `-0`. Pi's notices
/// interpolate the raw numeric arguments, so a fractional `offset` or `limit` shows as such.
pub fn js_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if n == 0.0 {
        return "0".into();
    }
    let abs = n.abs();
    if (1e-6..1e21).contains(&abs) {
        // Rust's Display is the shortest round-trip form without exponent, as JS in this range.
        return format!("{n}");
    }
    // Exponent form: Rust's `{:e}` is the same shortest mantissa, JS writes `e+` for positives.
    let s = format!("{n:e}");
    match s.split_once('e') {
        Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
        _ => s,
    }
}

/// A JS number as JSON, the way `JSON.stringify` writes it: integral values without `.0`.
pub fn js_json_number(n: f64) -> serde_json::Value {
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        serde_json::Value::from(n as i64)
    } else {
        serde_json::Value::from(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn format_size_matches_pi_examples() {
        let cases = [
            (0, "0B"),
            (1023, "1023B"),
            (1024, "1.0KB"),
            (51200, "50.0KB"),
            (60000, "58.6KB"),
            (1_048_575, "1024.0KB"),
            (1_048_576, "1.0MB"),
            // 1.25 KB: JS toFixed rounds the exact tie up, Rust's `{:.1}` would give 1.2.
            (1280, "1.3KB"),
            (10 * 1024 * 1024 + 1, "10.0MB"),
        ];
        for (b, want) in cases {
            assert_eq!(format_size(b), want, "{b}");
        }
    }

    #[test]
    fn head_untouched_when_within_limits() {
        let r = truncate_head("a\nb\n", 3, 100);
        assert_eq!(
            r,
            TruncationResult {
                content: "a\nb\n".into(),
                truncated: false,
                truncated_by: None,
                total_lines: 3,
                total_bytes: 4,
                output_lines: 3,
                output_bytes: 4,
                last_line_partial: false,
                first_line_exceeds_limit: false,
                max_lines: 3,
                max_bytes: 100,
            }
        );
    }

    #[test]
    fn head_by_lines_counts_the_trailing_empty_line() {
        let r = truncate_head("a\nb\n", 2, 100);
        assert!(r.truncated);
        assert_eq!(r.truncated_by, Some(TruncatedBy::Lines));
        assert_eq!(r.content, "a\nb");
        assert_eq!((r.output_lines, r.output_bytes, r.total_lines), (2, 3, 3));
    }

    #[test]
    fn head_by_bytes_keeps_complete_lines_only() {
        let r = truncate_head("aaa\nbbb\nccc", 100, 7);
        assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
        assert_eq!(r.content, "aaa\nbbb");
        assert_eq!((r.output_lines, r.output_bytes), (2, 7));
        let r = truncate_head("aaa\nbbb\nccc", 100, 6);
        assert_eq!(r.content, "aaa");
    }

    #[test]
    fn head_first_line_over_limit() {
        let line = "x".repeat(60000);
        let r = truncate_head(
            &format!("{line}\nshort\n"),
            DEFAULT_MAX_LINES,
            DEFAULT_MAX_BYTES,
        );
        assert_eq!(r.content, "");
        assert!(r.first_line_exceeds_limit);
        assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
        assert_eq!((r.output_lines, r.output_bytes, r.total_lines), (0, 0, 3));
    }

    #[test]
    fn head_multibyte_at_the_byte_boundary() {
        // Lines of "é" (2 bytes each): 25599 é = 51198 bytes, then "\n" + "é" would be 51201.
        let first = "é".repeat(25599);
        let content = format!("{first}\né\nz");
        let r = truncate_head(&content, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
        assert_eq!(r.content, first);
        assert_eq!(r.output_bytes, 51198);
        assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
        // Exactly 51200 bytes fits.
        let first = "é".repeat(25599);
        let content = format!("{first}\na\nz");
        let r = truncate_head(&content, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
        assert_eq!(r.output_bytes, 51200);
        assert_eq!(r.output_lines, 2);
    }

    #[test]
    fn tail_examples_from_pi() {
        let r = truncate_tail("aaa\nbbb\nccc", DEFAULT_MAX_LINES, 7);
        assert_eq!(r.content, "bbb\nccc");
        assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
        assert_eq!((r.output_lines, r.output_bytes), (2, 7));

        let r = truncate_tail(&"é".repeat(10), DEFAULT_MAX_LINES, 5);
        assert_eq!(r.content, "éé");
        assert_eq!(r.output_bytes, 4);
        assert!(r.last_line_partial);
        assert_eq!(r.output_lines, 1);
    }

    #[test]
    fn tail_by_lines_like_seq_1_3000() {
        let content: String = (1..=3000).map(|i| format!("{i}\n")).collect();
        let r = truncate_tail(&content, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
        assert_eq!(r.truncated_by, Some(TruncatedBy::Lines));
        assert_eq!(r.total_lines, 3001);
        assert_eq!(r.output_lines, 2000);
        assert!(r.content.starts_with("1002\n1003\n"));
        assert!(r.content.ends_with("3000\n"));
    }

    #[test]
    fn tail_quirk_seq_1_2000_counts_the_trailing_empty_line() {
        let content: String = (1..=2000).map(|i| format!("{i}\n")).collect();
        let r = truncate_tail(&content, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
        assert!(r.truncated);
        let start = r.total_lines - r.output_lines + 1;
        assert_eq!((start, r.total_lines), (2, 2001));
        assert!(r.content.starts_with("2\n3\n"));
    }

    #[test]
    fn tail_by_bytes_with_long_last_line() {
        let content = format!("first\n{}", "y".repeat(60000));
        let r = truncate_tail(&content, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
        assert!(r.last_line_partial);
        assert_eq!(r.output_bytes, 51200);
        assert_eq!(r.content, "y".repeat(51200));
        assert_eq!(format_size(r.output_bytes), "50.0KB");
    }

    #[test]
    fn tail_bytes_2000_lines_of_51() {
        // 2000 lines of 50 chars plus "\n" each: 102000 bytes, 2001 lines.
        let content: String = (0..2000).map(|_| format!("{}\n", "z".repeat(50))).collect();
        let r = truncate_tail(&content, DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
        assert_eq!(r.truncated_by, Some(TruncatedBy::Bytes));
        let start = r.total_lines - r.output_lines + 1;
        assert_eq!((start, r.total_lines), (998, 2001));
    }

    #[test]
    fn serialises_with_pi_field_names_in_order() {
        let r = truncate_head("a\nb", 1, 100);
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(
            json,
            r#"{"content":"a","truncated":true,"truncatedBy":"lines","totalLines":2,"totalBytes":3,"outputLines":1,"outputBytes":1,"lastLinePartial":false,"firstLineExceedsLimit":false,"maxLines":1,"maxBytes":100}"#
        );
        let r = truncate_head("a", 1, 100);
        assert!(
            serde_json::to_string(&r)
                .unwrap()
                .contains(r#""truncatedBy":null"#)
        );
    }

    #[test]
    fn truncate_line_counts_utf16_units() {
        let short = "a".repeat(500);
        assert_eq!(truncate_line(&short, 500).text, short);
        assert!(!truncate_line(&short, 500).was_truncated);
        let long = "a".repeat(501);
        let t = truncate_line(&long, 500);
        assert!(t.was_truncated);
        assert_eq!(t.text, format!("{}... [truncated]", "a".repeat(500)));
        // 300 emoji = 600 UTF-16 units (1200 bytes): cut at 250 emoji.
        let emoji = "😀".repeat(300);
        let t = truncate_line(&emoji, 500);
        assert_eq!(t.text, format!("{}... [truncated]", "😀".repeat(250)));
        // 500 two-byte chars are 500 units (1000 bytes): not truncated.
        assert!(!truncate_line(&"é".repeat(500), 500).was_truncated);
        // A cut inside a surrogate pair.
        let odd = format!("a{}", "😀".repeat(300));
        let t = truncate_line(&odd, 500);
        assert_eq!(
            t.text,
            format!("a{}\u{FFFD}... [truncated]", "😀".repeat(249))
        );
    }

    #[test]
    fn js_number_formats_like_js() {
        assert_eq!(js_number(5.0), "5");
        assert_eq!(js_number(2.5), "2.5");
        assert_eq!(js_number(-1.0), "-1");
        assert_eq!(js_number(-0.0), "0");
        assert_eq!(js_number(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(js_number(1e21), "1e+21");
        assert_eq!(js_number(1e300), "1e+300");
        assert_eq!(js_number(123456789012345680000.0), "123456789012345680000");
        assert_eq!(js_number(1e-7), "1e-7");
        assert_eq!(js_number(0.000001), "0.000001");
    }

    #[test]
    fn utf16_len_matches_js_length() {
        assert_eq!(utf16_len("héllo 😀\n"), 9);
        assert_eq!(utf16_len("😀"), 2);
    }
}
