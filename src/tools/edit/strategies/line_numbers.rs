//! `line-numbers`: `oldText` copied from a read output that numbers its lines: `12 | code`
//! (Roo Code's `read_file`), `    12\tcode` (`cat -n`), `    12→code` (Claude Code), `12: code`
//! or `L12: code`. When every line carries such a prefix with consecutive numbers, the prefixes
//! are stripped and the rest searched exactly. If `newText` is numbered the same way, its
//! prefixes go too. Roo Code strips such numbers only when every line has one; we also require
//! them to count up by one, which plain code rarely does.

use super::exact::locate_exact;
use super::lines::{Haystack, TextLines, join_lines};
use super::{Locate, Locator, Replacement};

pub(super) struct LineNumbers;

/// The separators after a number, longest first.
const SEPARATORS: [&str; 6] = [" | ", " |", "\t", "→", ": ", "|"];

/// The number and the rest of a numbered line, and which separator it used.
fn split_number(line: &str) -> Option<(u64, usize, &str)> {
    let body = line.trim_start_matches(' ');
    let body = body.strip_prefix('L').unwrap_or(body);
    let digits = body.len() - body.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits > 7 {
        return None;
    }
    let number: u64 = body[..digits].parse().ok()?;
    let rest = &body[digits..];
    SEPARATORS
        .iter()
        .enumerate()
        .find_map(|(i, sep)| rest.strip_prefix(sep).map(|r| (number, i, r)))
}

/// `text` without its line-number prefixes, if every line has one, they count up by one and
/// use one separator.
pub(crate) fn strip_numbers(text: &str) -> Option<String> {
    let lines = TextLines::new(text);
    let mut stripped = Vec::with_capacity(lines.len());
    let mut expected = None;
    let mut separator = None;
    for line in &lines.lines {
        // `12 |` on an empty line: the trailing space may have been trimmed.
        let (number, sep, rest) = split_number(line)?;
        let sep = if sep == 1 { 0 } else { sep };
        if expected.is_some_and(|e| e != number) || separator.is_some_and(|s| s != sep) {
            return None;
        }
        expected = Some(number + 1);
        separator = Some(sep);
        stripped.push(rest);
    }
    Some(join_lines(&stripped, lines.trailing_newline))
}

impl Locator for LineNumbers {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        let Some(old) = strip_numbers(&edit.old_text) else {
            return Locate::NotFound;
        };
        match locate_exact(hay.text, &old, "line-numbers") {
            Locate::Found(mut found) => {
                found.located.kind = crate::tools::MatchTier::Fuzzy;
                found.new_text = strip_numbers(&edit.new_text);
                Locate::Found(found)
            }
            other => other,
        }
    }
}
