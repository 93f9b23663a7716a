//! `harness edits perturb`: realistic model mistakes derived from gold edits, each with its kind
//! and its right answer.
//!
//! A *base* is a gold edit: a block of whole lines of a real file, unique in it (also when each
//! line is trimmed, so that a mistake in indentation or spacing still points at one place), and
//! a plausible change of it (an identifier renamed, a comment line inserted, a line deleted, a
//! number changed). Bases come from a folder of source files or from the gold edits of a corpus.
//! From each base every kind derives one call:
//!
//! | kind | the mistake | right answer |
//! |---|---|---|
//! | `exact` | none | apply |
//! | `trailing-whitespace` | trailing spaces added to `oldText` lines, or present in the file and missing from `oldText` | apply |
//! | `indentation` | `oldText` and `newText` shifted by a few columns, or their common indentation left out | apply, at the file's indentation |
//! | `tabs-spaces` | spaces where the file has tabs (4 a tab), or the reverse, in both texts | apply, in the file's style |
//! | `unicode` | smart quotes and dashes in `oldText`, or in the file's comments and not in `oldText` | apply |
//! | `crlf` | the file CRLF and the texts LF, or the reverse | apply |
//! | `escapes` | both texts escaped once more (`\n`, `\t`, `\"`, `\\`) | apply, unescaped |
//! | `line-numbers` | `oldText` lines prefixed as a numbered read shows them (and `newText` in a third of the cases) | apply |
//! | `nested-depth` | the block's nested lines indented by another unit (2 columns a level where the file has 4, or 4 for 2), in both texts | apply, at the file's indentation |
//! | `blank-line` | a blank line of the block left out of `oldText`, or one added to it | apply |
//! | `dropped-line` | a middle line left out of `oldText` | apply |
//! | `typo` | one letter wrong (dropped, doubled, swapped with the next, replaced) inside a word of four or more characters in a middle line, giving a word the file does not use | apply |
//! | `elision` | two or more middle lines replaced by `...` or `# ... existing code ...` (in `newText` too when unchanged) | apply |
//! | `not-unique` | `oldText` present more than once, or its lines present at two indentations | refuse |
//! | `decoy` | a block from another file, absent from this one | refuse |
//! | `near-miss` | a real block with half its middle lines replaced by other lines of the file, or whose last anchor lies far below | refuse |
//! | `near-copy` | a real block in which one whole identifier, keyword, number or string literal of one line is another | refuse |
//! | `neighbour-line` | a real block with one middle line replaced by the most similar line elsewhere in the file (a neighbouring block's) | refuse |
//! | `stale-line` | the file changed since the model read it (one line of the block has an identifier, keyword, number or literal changed, or is gone) and `oldText` quotes the old block | refuse |
//! | `reordered-lines` | two neighbouring lines of the block swapped in `oldText` | refuse |
//! | `comment-drift` | a comment line of the block quoted with a word replaced or left out | refuse |
//!
//! A *typo* is a small slip inside one word (a character or two), and recovering it is right; a
//! *substitution* puts another whole token in its place (another name, a keyword, a number: any
//! change of a number is another value), so `oldText` describes code that is not in the file.
//! Made-up substitutes are kept at least three edits away from what they replace; names and
//! literals taken from the file may be closer.
//!
//! Deterministic: the files are sorted and each (base, kind) has its own random generator,
//! seeded from the seed, the file's path, the base's index and the kind, so the same inputs and
//! seed give the same corpus on any number of threads, and a kind's calls do not change when
//! other kinds are added or left out.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde_json::{Value, json};

use super::corpus::{CorpusError, CorpusWriter, EditRecord, Gold};
use super::reapply::{Case, CaseGold};
use crate::tools::edit::strategies::is_elision_marker;

/// Every kind, in the order reports list them.
pub const KINDS: &[&str] = &[
    "exact",
    "trailing-whitespace",
    "indentation",
    "tabs-spaces",
    "nested-depth",
    "unicode",
    "crlf",
    "escapes",
    "line-numbers",
    "blank-line",
    "dropped-line",
    "typo",
    "elision",
    "not-unique",
    "decoy",
    "near-miss",
    "near-copy",
    "neighbour-line",
    "stale-line",
    "reordered-lines",
    "comment-drift",
];

/// The kinds whose right answer is to refuse: [`KINDS`] from `not-unique` on.
pub const REFUSAL_KINDS: &[&str] = KINDS.split_at(13).1;

/// A source file: its path relative to the folder given, and its text (LF, no BOM).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    pub path: String,
    pub content: String,
}

/// The extensions read from a folder.
const SOURCE_EXTENSIONS: &[&str] = &[
    "py", "rs", "js", "ts", "tsx", "jsx", "go", "java", "c", "h", "cc", "cpp", "hpp", "rb", "cs",
    "kt", "swift", "php", "scala", "sh", "toml", "yaml", "yml",
];
/// Files larger than this are left out (a few huge files would dominate the corpus).
const MAX_FILE_BYTES: u64 = 256 * 1024;
/// Lines longer than this are not used in blocks.
const MAX_LINE: usize = 160;

/// The source files under `dir` (respecting `.gitignore`), sorted by path: UTF-8 text with one
/// of [`SOURCE_EXTENSIONS`], at most [`MAX_FILE_BYTES`], at least 8 lines, without `\r` or BOM.
pub fn sources_from_dir(dir: &Path) -> Vec<SourceFile> {
    let mut files: Vec<PathBuf> = ignore::WalkBuilder::new(dir)
        .hidden(true)
        .build()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(ignore::DirEntry::into_path)
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| SOURCE_EXTENSIONS.contains(&e))
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .filter_map(|path| {
            let meta = std::fs::metadata(&path).ok()?;
            if meta.len() > MAX_FILE_BYTES {
                return None;
            }
            let content = String::from_utf8(std::fs::read(&path).ok()?).ok()?;
            if content.contains('\r') || content.starts_with('\u{FEFF}') {
                return None;
            }
            if content.lines().count() < 8 {
                return None;
            }
            let rel = path.strip_prefix(dir).unwrap_or(&path);
            Some(SourceFile {
                path: rel.to_string_lossy().into_owned(),
                content,
            })
        })
        .collect()
}

/// A gold edit: lines `start..start + count` of `file` replaced by `new_text`.
#[derive(Debug, Clone)]
pub struct Base {
    pub file: usize,
    pub start: usize,
    pub count: usize,
    pub trailing_newline: bool,
    pub new_text: String,
}

/// One generated call.
#[derive(Debug, Clone, PartialEq)]
pub struct Perturbed {
    pub kind: &'static str,
    pub path: String,
    /// The file's text before the call (as on disk: CRLF for some `crlf` cases).
    pub content: String,
    pub arguments: Value,
    /// The file after the right edit, or `None` when the right answer is to refuse.
    pub gold_after: Option<String>,
    /// Which base it came from (`path#n`).
    pub base: String,
}

/// How to generate.
#[derive(Debug, Clone)]
pub struct PerturbOptions {
    pub seed: u64,
    /// Bases per file.
    pub per_file: usize,
    /// The kinds to generate (default: all).
    pub kinds: Vec<&'static str>,
}

impl Default for PerturbOptions {
    fn default() -> Self {
        PerturbOptions {
            seed: 0,
            per_file: 1,
            kinds: KINDS.to_vec(),
        }
    }
}

/// The text of `lines[start..start + count]`.
fn block_text(lines: &[&str], start: usize, count: usize, trailing_newline: bool) -> String {
    let mut out = lines[start..start + count].join("\n");
    if trailing_newline {
        out.push('\n');
    }
    out
}

/// The byte span of lines `start..start + count` in `content` (with the `\n` after the last when
/// `trailing_newline`).
fn line_span(content: &str, start: usize, count: usize, trailing_newline: bool) -> (usize, usize) {
    let mut offsets = vec![0];
    offsets.extend(memchr::memchr_iter(b'\n', content.as_bytes()).map(|i| i + 1));
    let begin = offsets[start];
    let last = start + count - 1;
    let end = match offsets.get(last + 1) {
        Some(next) if trailing_newline => *next,
        Some(next) => next - 1,
        None => content.len(),
    };
    (begin, end)
}

fn replace_span(content: &str, (start, end): (usize, usize), with: &str) -> String {
    let mut out = String::with_capacity(content.len() + with.len());
    out.push_str(&content[..start]);
    out.push_str(with);
    out.push_str(&content[end..]);
    out
}

fn count(haystack: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return 0;
    }
    memchr::memmem::find_iter(haystack.as_bytes(), needle.as_bytes()).count()
}

fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// The comment token of a file.
fn comment(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("py" | "rb" | "sh" | "toml" | "yaml" | "yml") => "#",
        _ => "//",
    }
}

/// How many windows of the file equal `block` line by line once trimmed.
fn trimmed_windows(lines: &[&str], block: &[&str]) -> usize {
    if block.is_empty() || block.len() > lines.len() {
        return 0;
    }
    (0..=lines.len() - block.len())
        .filter(|&i| {
            block
                .iter()
                .enumerate()
                .all(|(j, b)| lines[i + j].trim() == b.trim())
        })
        .count()
}

/// A block of `min..=max` lines: first and last lines not blank, at least two non-blank lines,
/// no long lines, unique in the file exactly and once trimmed.
fn pick_block(
    content: &str,
    lines: &[&str],
    rng: &mut StdRng,
    min: usize,
    max: usize,
) -> Option<(usize, usize)> {
    let usable = lines.len().saturating_sub(1);
    if usable < min {
        return None;
    }
    for _ in 0..60 {
        let n = rng.gen_range(min..=max.min(usable));
        let s = rng.gen_range(0..=usable - n);
        let block = &lines[s..s + n];
        if is_blank(block[0])
            || is_blank(block[n - 1])
            || block.iter().filter(|l| !is_blank(l)).count() < 2
            || block.iter().any(|l| l.len() > MAX_LINE)
            || block.iter().filter(|l| l.trim().len() >= 4).count() < 2
        {
            continue;
        }
        if count(content, &block_text(lines, s, n, false)) != 1
            || trimmed_windows(lines, block) != 1
        {
            continue;
        }
        return Some((s, n));
    }
    None
}

const KEYWORDS: &[&str] = &[
    "def", "class", "return", "self", "None", "True", "False", "import", "from", "for", "while",
    "if", "elif", "else", "try", "except", "finally", "with", "not", "and", "pass", "raise", "fn",
    "let", "mut", "pub", "use", "impl", "struct", "enum", "match", "Some", "Ok", "Err", "mod",
    "crate", "super", "const", "static", "where", "async", "await", "move", "ref", "loop", "in",
    "as", "is", "lambda", "yield", "global", "assert", "del", "break", "continue", "Self", "type",
    "dyn", "trait", "unsafe", "true", "false", "String", "str", "Vec", "Option", "Result", "len",
];

/// The identifiers of `text` (3+ chars, not keywords), in order of appearance, deduplicated.
fn identifiers(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &text[start..i];
            if word.len() >= 3 && !KEYWORDS.contains(&word) && !out.contains(&word) {
                out.push(word);
            }
        } else {
            i += 1;
        }
    }
    out
}

/// `text` with every whole-word `from` replaced by `to`.
fn rename(text: &str, from: &str, to: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < text.len() {
        if text[i..].starts_with(from)
            && (i == 0 || !word(bytes[i - 1]))
            && bytes.get(i + from.len()).is_none_or(|b| !word(*b))
        {
            out.push_str(to);
            i += from.len();
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// A plausible change of `block` (lines): rename an identifier, insert a comment line, delete a
/// line, or change a number. `None` if nothing applies.
fn mutate(block: &[&str], path: &str, rng: &mut StdRng) -> Option<Vec<String>> {
    let joined = block.join("\n");
    for _ in 0..8 {
        let choice = rng.gen_range(0..4);
        let out: Option<Vec<String>> = match choice {
            0 => {
                let ids = identifiers(&joined);
                ids.choose(rng).map(|id| {
                    let to = format!("{id}_v2");
                    block.iter().map(|l| rename(l, id, &to)).collect()
                })
            }
            1 => {
                let k = rng.gen_range(0..block.len());
                let at = if block[k].trim_end().ends_with([':', '{']) && k + 1 < block.len() {
                    indent(block[k + 1])
                } else {
                    indent(block[k])
                };
                let mut lines: Vec<String> = block.iter().map(|l| (*l).to_owned()).collect();
                lines.insert(
                    k + 1,
                    format!("{at}{} Checked by the caller.", comment(path)),
                );
                Some(lines)
            }
            2 if block.len() >= 3 => {
                let k = rng.gen_range(1..block.len() - 1);
                let mut lines: Vec<String> = block.iter().map(|l| (*l).to_owned()).collect();
                lines.remove(k);
                Some(lines)
            }
            3 => {
                let with_digit: Vec<usize> = (0..block.len())
                    .filter(|&k| block[k].bytes().any(|b| b.is_ascii_digit()))
                    .collect();
                with_digit.choose(rng).map(|&k| {
                    let mut lines: Vec<String> = block.iter().map(|l| (*l).to_owned()).collect();
                    let line = &block[k];
                    let at = line.find(|c: char| c.is_ascii_digit()).unwrap_or(0);
                    let digit = line.as_bytes()[at] - b'0';
                    let mut changed = line.to_string();
                    changed.replace_range(at..=at, &((digit + 1) % 10).to_string());
                    lines[k] = changed;
                    lines
                })
            }
            _ => None,
        };
        if let Some(out) = out
            && out.iter().map(String::as_str).ne(block.iter().copied())
        {
            return Some(out);
        }
    }
    None
}

/// The gold edits of a file.
fn bases_of(file_index: usize, file: &SourceFile, per_file: usize, rng: &mut StdRng) -> Vec<Base> {
    let lines: Vec<&str> = file.content.split('\n').collect();
    let mut out = Vec::new();
    for _ in 0..per_file * 3 {
        if out.len() >= per_file {
            break;
        }
        let Some((start, count)) = pick_block(&file.content, &lines, rng, 3, 8) else {
            continue;
        };
        let Some(new_lines) = mutate(&lines[start..start + count], &file.path, rng) else {
            continue;
        };
        let trailing_newline = rng.gen_bool(0.7);
        let mut new_text = new_lines.join("\n");
        if trailing_newline {
            new_text.push('\n');
        }
        out.push(Base {
            file: file_index,
            start,
            count,
            trailing_newline,
            new_text,
        });
    }
    out
}

fn args(path: &str, old: &str, new: &str) -> Value {
    json!({"path": path, "edits": [{"oldText": old, "newText": new}]})
}

/// Text with trailing spaces added to some lines (at least one of `eligible`).
fn add_trailing(lines: &mut [String], eligible: &[usize], rng: &mut StdRng) {
    let mut chosen: Vec<usize> = eligible
        .iter()
        .copied()
        .filter(|_| rng.gen_bool(0.5))
        .collect();
    if chosen.is_empty()
        && let Some(&k) = eligible.choose(rng)
    {
        chosen.push(k);
    }
    for k in chosen {
        let pad = [" ", "  ", "   ", "\t"][rng.gen_range(0..4)];
        lines[k].push_str(pad);
    }
}

/// Escapes a text once more, as a model that JSON-encodes twice does.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out
}

/// Typographic quotes and dashes for ASCII ones; `None` if there were none.
fn smarten(line: &str) -> Option<String> {
    let mut out = String::with_capacity(line.len() + 8);
    let mut open = true;
    let mut changed = false;
    let chars: Vec<char> = line.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '"' => {
                out.push(if open { '\u{201C}' } else { '\u{201D}' });
                open = !open;
                changed = true;
            }
            '\'' => {
                out.push('\u{2019}');
                changed = true;
            }
            '-' if i > 0 && chars[i - 1] == ' ' && chars.get(i + 1) == Some(&' ') => {
                out.push('\u{2013}');
                changed = true;
            }
            c => out.push(c),
        }
    }
    changed.then_some(out)
}

/// The byte spans of the words of `line`: runs of ASCII letters, digits and `_` that start with
/// a letter or `_`.
fn word_spans(line: &str) -> Vec<(usize, usize)> {
    let bytes = line.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !word(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && word(bytes[i]) {
            i += 1;
        }
        if !bytes[start].is_ascii_digit() {
            out.push((start, i));
        }
    }
    out
}

/// Every word of `text` (letters, digits and `_`).
fn file_words(text: &str) -> std::collections::HashSet<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

fn is_comment_line(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with('#') || t.starts_with("//") || t.starts_with("* ") || t.starts_with("/*")
}

/// Re-indents every non-blank line with `f(old indentation)`.
fn reindent_lines(text: &str, f: impl Fn(&str) -> String) -> String {
    text.split('\n')
        .map(|l| {
            if is_blank(l) {
                l.to_owned()
            } else {
                let ind = indent(l);
                format!("{}{}", f(ind), &l[ind.len()..])
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

// ---- substitutions: a whole token replaced by another ------------------------------------------

/// What a substitution replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Identifier,
    Keyword,
    Number,
    Literal,
}

/// Keywords and the keywords that can stand in their place.
const KEYWORD_SWAPS: &[(&str, &[&str])] = &[
    ("and", &["or"]),
    ("or", &["and"]),
    ("true", &["false"]),
    ("false", &["true"]),
    ("True", &["False"]),
    ("False", &["True"]),
    ("if", &["while"]),
    ("while", &["if"]),
    ("elif", &["if"]),
    ("break", &["continue"]),
    ("continue", &["break"]),
    ("public", &["private"]),
    ("private", &["public", "protected"]),
    ("protected", &["private"]),
    ("let", &["const"]),
    ("const", &["let"]),
    ("var", &["let", "const"]),
    ("null", &["undefined"]),
    ("int", &["long"]),
    ("long", &["int"]),
    ("float", &["double"]),
    ("double", &["float"]),
    ("min", &["max"]),
    ("max", &["min"]),
];

/// Names a model might put in place of another.
const NAMES: &[&str] = &[
    "value", "result", "data", "count", "index", "name", "item", "node", "key", "size", "total",
    "path", "buffer", "config", "options", "context", "params", "target", "source", "offset",
    "length", "handler", "callback", "response", "request", "message", "state", "parent", "entry",
    "record",
];

/// Words a model might put in a string or a comment in place of another.
const WORDS: &[&str] = &[
    "default", "error", "missing", "invalid", "unknown", "empty", "ready", "done", "failed",
    "updated", "enabled", "disabled", "current", "previous", "first", "last", "main", "other",
];

/// The Levenshtein distance of two short strings.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// `1 - distance / longest`.
fn similarity(a: &str, b: &str) -> f64 {
    let longest = a.chars().count().max(b.chars().count());
    if longest == 0 {
        return 1.0;
    }
    1.0 - distance(a, b) as f64 / longest as f64
}

/// The tokens of `line` that a substitution can replace: byte span and class. String literals
/// are their contents (between `"` or `'` on one line); a comment ends the scan.
fn substitutable(line: &str, comment: &str) -> Vec<(usize, usize, Class)> {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if line[i..].starts_with(comment) {
            break;
        }
        if c == b'"' || c == b'\'' {
            let Some(close) = line[i + 1..].find(c as char).map(|k| i + 1 + k) else {
                break;
            };
            let content = &line[i + 1..close];
            if !content.is_empty() && !content.contains('\\') {
                out.push((i + 1, close, Class::Literal));
            }
            i = close + 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &line[start..i];
            if KEYWORD_SWAPS.iter().any(|(k, _)| *k == word) {
                out.push((start, i, Class::Keyword));
            } else if word.len() >= 2 && !KEYWORDS.contains(&word) {
                out.push((start, i, Class::Identifier));
            }
        } else if c.is_ascii_digit() {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'.') {
                i += 1;
            }
            // Decimal numbers only (no `0x`, `1e5`, `10u32`, `1.2.3`).
            let number = &line[start..i];
            if number.parse::<u64>().is_ok() || number.parse::<f64>().is_ok() {
                out.push((start, i, Class::Number));
            }
        } else {
            i += line[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    out
}

/// The identifiers and the string literals' contents of a file.
struct Vocabulary<'a> {
    identifiers: Vec<&'a str>,
    literals: Vec<&'a str>,
}

impl<'a> Vocabulary<'a> {
    fn of(lines: &[&'a str], comment: &str) -> Self {
        let mut identifiers: Vec<&str> = Vec::new();
        let mut literals: Vec<&str> = Vec::new();
        for line in lines.iter().filter(|l| l.len() <= MAX_LINE) {
            for (start, end, class) in substitutable(line, comment) {
                match class {
                    Class::Identifier => identifiers.push(&line[start..end]),
                    Class::Literal => literals.push(&line[start..end]),
                    _ => {}
                }
            }
        }
        for list in [&mut identifiers, &mut literals] {
            list.sort_unstable();
            list.dedup();
        }
        Vocabulary {
            identifiers,
            literals,
        }
    }
}

/// Another token for `token` of class `class`: for a name or a literal, one the file uses or a
/// made-up one at least three edits away; another keyword; another number.
fn substitute(
    token: &str,
    class: Class,
    vocabulary: &Vocabulary<'_>,
    rng: &mut StdRng,
) -> Option<String> {
    let made_up = |list: &[&str], rng: &mut StdRng| -> Option<String> {
        let far: Vec<&&str> = list.iter().filter(|w| distance(w, token) >= 3).collect();
        far.choose(rng).map(|w| (**w).to_owned())
    };
    let from_file = |list: &[&str], rng: &mut StdRng| -> Option<String> {
        let others: Vec<&&str> = list.iter().filter(|w| **w != token).collect();
        others.choose(rng).map(|w| (**w).to_owned())
    };
    let out = match class {
        Class::Keyword => KEYWORD_SWAPS
            .iter()
            .find(|(k, _)| *k == token)
            .and_then(|(_, alternatives)| alternatives.choose(rng))
            .map(|w| (*w).to_owned()),
        Class::Identifier if rng.gen_bool(0.6) => from_file(&vocabulary.identifiers, rng),
        Class::Identifier => made_up(NAMES, rng),
        Class::Literal if rng.gen_bool(0.5) => from_file(&vocabulary.literals, rng),
        Class::Literal => made_up(WORDS, rng),
        Class::Number => match token.parse::<u64>() {
            Ok(v) => {
                let choices = [v + 1, v.saturating_mul(2), v + 10, 0, 1];
                choices
                    .iter()
                    .filter(|c| **c != v)
                    .collect::<Vec<_>>()
                    .choose(rng)
                    .map(|c| c.to_string())
            }
            // A decimal: its last digit moved on.
            Err(_) => {
                let last = token.len() - 1;
                let digit = token.as_bytes()[last].checked_sub(b'0')?;
                Some(format!("{}{}", &token[..last], (digit + 1) % 10))
            }
        },
    }?;
    (out != token).then_some(out)
}

/// `line` with one substitutable token replaced (the class chosen first, so that each is as
/// likely as the line allows), or `None`.
fn substitute_in(
    line: &str,
    comment: &str,
    vocabulary: &Vocabulary<'_>,
    rng: &mut StdRng,
) -> Option<String> {
    let tokens = substitutable(line, comment);
    let mut classes: Vec<Class> = tokens.iter().map(|t| t.2).collect();
    classes.sort_by_key(|c| *c as u8);
    classes.dedup();
    let class = *classes.choose(rng)?;
    let of_class: Vec<&(usize, usize, Class)> = tokens.iter().filter(|t| t.2 == class).collect();
    let &&(start, end, _) = of_class.choose(rng)?;
    let with = substitute(&line[start..end], class, vocabulary, rng)?;
    let mut out = line.to_owned();
    out.replace_range(start..end, &with);
    Some(out)
}

/// The indentation unit of space-indented lines (the gcd of their indentation widths
/// measured from the shallowest), if it is 2 or 4.
fn nesting_unit(lines: &[String]) -> Option<(usize, usize)> {
    let widths: Vec<usize> = lines
        .iter()
        .filter(|l| !is_blank(l))
        .map(|l| indent(l))
        .map(|i| (!i.contains('\t')).then_some(i.len()))
        .collect::<Option<_>>()?;
    let base = *widths.iter().min()?;
    let gcd = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let unit = widths.iter().fold(0, |g, w| gcd(g, w - base));
    matches!(unit, 2 | 4).then_some((base, unit))
}

/// One call of kind `kind` from `base` (or, for the refusal kinds, from its file), if the file
/// allows one.
fn perturb(
    kind: &'static str,
    base: &Base,
    files: &[SourceFile],
    rng: &mut StdRng,
) -> Option<Perturbed> {
    let file = &files[base.file];
    let content = file.content.as_str();
    let lines: Vec<&str> = content.split('\n').collect();
    let (s, n, tnl) = (base.start, base.count, base.trailing_newline);
    let old = block_text(&lines, s, n, tnl);
    let new = base.new_text.clone();
    let span = line_span(content, s, n, tnl);
    let after = replace_span(content, span, &new);
    let path = file.path.as_str();
    let make = |content: String, arguments: Value, gold_after: Option<String>| Perturbed {
        kind,
        path: path.to_owned(),
        content,
        arguments,
        gold_after,
        base: format!("{path}#{s}"),
    };
    let old_lines: Vec<String> = lines[s..s + n].iter().map(|l| (*l).to_owned()).collect();
    let join = |ls: &[String]| {
        let mut t = ls.join("\n");
        if tnl {
            t.push('\n');
        }
        t
    };
    let not_exact = |o: &str, c: &str| count(c, o) == 0;
    match kind {
        "exact" => Some(make(
            content.to_owned(),
            args(path, &old, &new),
            Some(after),
        )),
        "trailing-whitespace" => {
            let eligible: Vec<usize> = (0..n).filter(|&k| !is_blank(&old_lines[k])).collect();
            if rng.gen_bool(0.5) {
                let mut model = old_lines.clone();
                add_trailing(&mut model, &eligible, rng);
                let o = join(&model);
                not_exact(&o, content)
                    .then(|| make(content.to_owned(), args(path, &o, &new), Some(after)))
            } else {
                let mut in_file = old_lines.clone();
                // A line other than the last, so the model's text is not a prefix of the file's.
                let inner: Vec<usize> = eligible.iter().copied().filter(|&k| k + 1 < n).collect();
                add_trailing(&mut in_file, &inner, rng);
                let mut all: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
                all.splice(s..s + n, in_file);
                let changed = all.join("\n");
                let span = line_span(&changed, s, n, tnl);
                let gold = replace_span(&changed, span, &new);
                not_exact(&old, &changed)
                    .then(|| make(changed.clone(), args(path, &old, &new), Some(gold)))
            }
        }
        "indentation" => {
            let min = old_lines
                .iter()
                .filter(|l| !is_blank(l))
                .map(|l| indent(l).len())
                .min()?;
            let tabs = old_lines.iter().any(|l| indent(l).contains('\t'));
            let new_min = new
                .split('\n')
                .filter(|l| !is_blank(l))
                .map(|l| indent(l).len())
                .min()
                .unwrap_or(0);
            let choice = rng.gen_range(0..3);
            let (o, w) = if choice == 0 && min > 0 && new_min >= min {
                let cut = |ind: &str| ind[min..].to_owned();
                (reindent_lines(&old, cut), reindent_lines(&new, cut))
            } else if choice == 1 && !tabs && min >= 2 && new_min >= 2 {
                let cut = |ind: &str| ind[2..].to_owned();
                (reindent_lines(&old, cut), reindent_lines(&new, cut))
            } else {
                let add = if tabs { "\t" } else { "    " };
                let more = |ind: &str| format!("{add}{ind}");
                (reindent_lines(&old, more), reindent_lines(&new, more))
            };
            not_exact(&o, content)
                .then(|| make(content.to_owned(), args(path, &o, &w), Some(after)))
        }
        "tabs-spaces" => {
            let tabs = old_lines.iter().any(|l| indent(l).contains('\t'));
            let swap = |ind: &str| -> String {
                if tabs {
                    ind.replace('\t', "    ")
                } else {
                    let spaces = ind.chars().filter(|c| *c == ' ').count();
                    let tabs_in = ind.chars().filter(|c| *c == '\t').count();
                    format!(
                        "{}{}",
                        "\t".repeat(tabs_in + spaces / 4),
                        " ".repeat(spaces % 4)
                    )
                }
            };
            let o = reindent_lines(&old, swap);
            let w = reindent_lines(&new, swap);
            (o != old && not_exact(&o, content))
                .then(|| make(content.to_owned(), args(path, &o, &w), Some(after)))
        }
        "unicode" => {
            let comment_lines: Vec<usize> = (0..n)
                .filter(|&k| is_comment_line(&old_lines[k]) && smarten(&old_lines[k]).is_some())
                .collect();
            if !comment_lines.is_empty() && rng.gen_bool(0.5) {
                let mut all: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
                for k in &comment_lines {
                    all[s + k] = smarten(&old_lines[*k])?;
                }
                let changed = all.join("\n");
                let span = line_span(&changed, s, n, tnl);
                let gold = replace_span(&changed, span, &new);
                return Some(make(changed, args(path, &old, &new), Some(gold)));
            }
            let model: Vec<String> = old_lines
                .iter()
                .map(|l| smarten(l).unwrap_or_else(|| l.clone()))
                .collect();
            let o = join(&model);
            (o != old).then(|| make(content.to_owned(), args(path, &o, &new), Some(after)))
        }
        "crlf" => {
            if rng.gen_bool(0.5) {
                let crlf = |t: &str| t.replace('\n', "\r\n");
                Some(make(
                    crlf(content),
                    args(path, &old, &new),
                    Some(crlf(&after)),
                ))
            } else {
                let crlf = |t: &str| t.replace('\n', "\r\n");
                Some(make(
                    content.to_owned(),
                    args(path, &crlf(&old), &crlf(&new)),
                    Some(after),
                ))
            }
        }
        "escapes" => {
            let (o, w) = (escape(&old), escape(&new));
            Some(make(content.to_owned(), args(path, &o, &w), Some(after)))
        }
        "line-numbers" => {
            let style = rng.gen_range(0..3);
            let number = |k: usize, line: &str| match style {
                0 => format!("{k:>6}\t{line}"),
                1 => format!("{k} | {line}"),
                _ => format!("{k:>6}→{line}"),
            };
            let numbered: Vec<String> = old_lines
                .iter()
                .enumerate()
                .map(|(j, l)| number(s + 1 + j, l))
                .collect();
            let o = join(&numbered);
            let w = if rng.gen_range(0..3) == 0 {
                let body = new.strip_suffix('\n').unwrap_or(&new);
                let mut t = body
                    .split('\n')
                    .enumerate()
                    .map(|(j, l)| number(s + 1 + j, l))
                    .collect::<Vec<_>>()
                    .join("\n");
                if new.ends_with('\n') {
                    t.push('\n');
                }
                t
            } else {
                new.clone()
            };
            Some(make(content.to_owned(), args(path, &o, &w), Some(after)))
        }
        "dropped-line" => {
            if n < 4 {
                return None;
            }
            let middle: Vec<usize> = (1..n - 1).filter(|&k| !is_blank(&old_lines[k])).collect();
            let k = *middle.choose(rng)?;
            let mut model = old_lines.clone();
            model.remove(k);
            let o = join(&model);
            not_exact(&o, content)
                .then(|| make(content.to_owned(), args(path, &o, &new), Some(after)))
        }
        "typo" => {
            // A word of four or more characters in a middle line; the slip must give a word the
            // file does not use (one it uses would be another name: a substitution).
            let spots: Vec<(usize, usize, usize)> = (1..n.saturating_sub(1))
                .flat_map(|k| {
                    word_spans(&old_lines[k])
                        .into_iter()
                        .map(move |(a, b)| (k, a, b))
                })
                .filter(|(_, a, b)| b - a >= 4)
                .collect();
            let &(k, a, b) = spots.choose(rng)?;
            let word: Vec<char> = old_lines[k][a..b].chars().collect();
            let letters: Vec<usize> = (0..word.len())
                .filter(|&j| word[j].is_ascii_alphabetic())
                .collect();
            let &at = letters.choose(rng)?;
            let mut typo = word.clone();
            match rng.gen_range(0..4) {
                0 => {
                    typo.remove(at);
                }
                1 => typo.insert(at, word[at]),
                2 if at + 1 < word.len()
                    && word[at + 1].is_ascii_alphabetic()
                    && word[at + 1] != word[at] =>
                {
                    typo.swap(at, at + 1);
                }
                _ => typo[at] = if word[at] == 'e' { 'a' } else { 'e' },
            }
            let typo: String = typo.into_iter().collect();
            if !typo.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                || file_words(content).contains(typo.as_str())
            {
                return None;
            }
            let mut model = old_lines.clone();
            model[k].replace_range(a..b, &typo);
            let o = join(&model);
            (o != old && not_exact(&o, content))
                .then(|| make(content.to_owned(), args(path, &o, &new), Some(after)))
        }
        "elision" => {
            if n < 5 {
                return None;
            }
            let a = rng.gen_range(1..n - 2);
            let b = rng.gen_range(a + 2..n);
            let c = comment(path);
            let markers: [String; 3] = [
                format!("{c} ..."),
                format!("{c} ... existing code ..."),
                "...".to_owned(),
            ];
            let marker = format!("{}{}", indent(&old_lines[a]), markers[rng.gen_range(0..3)]);
            if old_lines.iter().any(|l| is_elision_marker(l)) {
                return None;
            }
            // Only an elision with one reading: the head once in the file, the tail once after it.
            let head = old_lines[..a].join("\n") + "\n";
            let tail = join(&old_lines[b..]);
            let after_head = content.find(&head).map(|at| &content[at + head.len()..]);
            if count(content, &head) != 1 || after_head.is_none_or(|rest| count(rest, &tail) != 1) {
                return None;
            }
            let mut model: Vec<String> = old_lines[..a].to_vec();
            model.push(marker.clone());
            model.extend_from_slice(&old_lines[b..]);
            let o = join(&model);
            // newText elides the same lines when it kept them unchanged (as whole lines).
            let elided = format!("\n{}\n", old_lines[a..b].join("\n"));
            let padded = format!("\n{new}");
            let w = if padded.contains(&elided) {
                padded.replacen(&elided, &format!("\n{marker}\n"), 1)[1..].to_owned()
            } else {
                new.clone()
            };
            Some(make(content.to_owned(), args(path, &o, &w), Some(after)))
        }
        "not-unique" => not_unique(file, &lines, rng)
            .map(|(o, w)| make(content.to_owned(), args(path, &o, &w), None)),
        "decoy" => {
            let ext = path.rsplit('.').next();
            let others: Vec<&SourceFile> = files
                .iter()
                .filter(|f| f.path != file.path && f.path.rsplit('.').next() == ext)
                .collect();
            for _ in 0..6 {
                let other = others.choose(rng)?;
                let other_lines: Vec<&str> = other.content.split('\n').collect();
                let Some((os, on)) = pick_block(&other.content, &other_lines, rng, 3, 6) else {
                    continue;
                };
                let block = &other_lines[os..os + on];
                let o = block_text(&other_lines, os, on, tnl);
                if !not_exact(&o, content) || trimmed_windows(&lines, block) > 0 {
                    continue;
                }
                let w = mutate(block, path, rng)?.join("\n") + if tnl { "\n" } else { "" };
                return Some(make(content.to_owned(), args(path, &o, &w), None));
            }
            None
        }
        "near-miss" => {
            let others: Vec<usize> = (0..lines.len())
                .filter(|&k| (k < s || k >= s + n) && lines[k].trim().len() >= 4)
                .collect();
            let mut model = old_lines.clone();
            if rng.gen_range(0..10) < 3 {
                // The last anchor far below: a real line 20 or more lines further.
                let far: Vec<usize> = (s + n + 20..lines.len().saturating_sub(1))
                    .filter(|&k| lines[k].trim().len() >= 4)
                    .collect();
                let &k = far.choose(rng)?;
                let last = model.len() - 1;
                model[last] = lines[k].to_owned();
            }
            let middle: Vec<usize> = (1..n - 1).collect();
            let replace = middle.len().div_ceil(2).max(1);
            for &k in middle.choose_multiple(rng, replace) {
                let &src = others.choose(rng)?;
                let line = format!("{}{}", indent(&model[k]), lines[src].trim_start());
                if line.trim() == model[k].trim() {
                    return None;
                }
                model[k] = line;
            }
            let o = join(&model);
            let refs: Vec<&str> = model.iter().map(String::as_str).collect();
            (not_exact(&o, content) && trimmed_windows(&lines, &refs) == 0)
                .then(|| make(content.to_owned(), args(path, &o, &new), None))
        }
        "nested-depth" => {
            // The model nests by 2 columns where the file nests by 4, or the reverse.
            let (base_col, unit) = nesting_unit(&old_lines)?;
            let other = if unit == 4 { 2 } else { 4 };
            let rescale = |text: &str| -> Option<String> {
                let mut lines = Vec::new();
                for l in text.split('\n') {
                    if is_blank(l) {
                        lines.push(l.to_owned());
                        continue;
                    }
                    let ind = indent(l);
                    if ind.contains('\t')
                        || ind.len() < base_col
                        || (ind.len() - base_col) % unit != 0
                    {
                        return None;
                    }
                    let depth = (ind.len() - base_col) / unit;
                    lines.push(format!(
                        "{}{}",
                        " ".repeat(base_col + depth * other),
                        &l[ind.len()..]
                    ));
                }
                Some(lines.join("\n"))
            };
            let (o, w) = (rescale(&old)?, rescale(&new)?);
            (o != old && not_exact(&o, content))
                .then(|| make(content.to_owned(), args(path, &o, &w), Some(after)))
        }
        "blank-line" => {
            let blanks: Vec<usize> = (1..n.saturating_sub(1))
                .filter(|&k| is_blank(&old_lines[k]))
                .collect();
            let mut model = old_lines.clone();
            if let Some(&k) = blanks.choose(rng) {
                model.remove(k);
            } else {
                // A blank line added between two lines of the block (a one-line block, as real
                // edits often are, has no such place).
                if n < 2 {
                    return None;
                }
                let k = rng.gen_range(0..n - 1);
                model.insert(k + 1, String::new());
            }
            let o = join(&model);
            not_exact(&o, content)
                .then(|| make(content.to_owned(), args(path, &o, &new), Some(after)))
        }
        "near-copy" => {
            let vocabulary = Vocabulary::of(&lines, comment(path));
            let candidates: Vec<usize> = (0..n)
                .filter(|&k| !substitutable(&old_lines[k], comment(path)).is_empty())
                .collect();
            let &k = candidates.choose(rng)?;
            let mut model = old_lines.clone();
            model[k] = substitute_in(&old_lines[k], comment(path), &vocabulary, rng)?;
            let o = join(&model);
            let refs: Vec<&str> = model.iter().map(String::as_str).collect();
            (not_exact(&o, content) && trimmed_windows(&lines, &refs) == 0)
                .then(|| make(content.to_owned(), args(path, &o, &new), None))
        }
        "neighbour-line" => {
            // The line elsewhere in the file most like a middle line of the block, put in its
            // place at its indentation.
            let middle: Vec<usize> = (1..n.saturating_sub(1))
                .filter(|&k| old_lines[k].trim().len() >= 4)
                .collect();
            let &k = middle.choose(rng)?;
            let target = old_lines[k].trim();
            let squash = |l: &str| l.split_whitespace().collect::<String>();
            let (best, score) = (0..lines.len())
                .filter(|&j| (j < s || j >= s + n) && lines[j].len() <= MAX_LINE)
                .filter(|&j| squash(lines[j]) != squash(target))
                .map(|j| (j, similarity(lines[j].trim(), target)))
                .max_by(|a, b| {
                    a.1.total_cmp(&b.1)
                        .then(b.0.abs_diff(s).cmp(&a.0.abs_diff(s)))
                })?;
            if score < 0.5 {
                return None;
            }
            let mut model = old_lines.clone();
            model[k] = format!("{}{}", indent(&old_lines[k]), lines[best].trim());
            let o = join(&model);
            let refs: Vec<&str> = model.iter().map(String::as_str).collect();
            (not_exact(&o, content) && trimmed_windows(&lines, &refs) == 0)
                .then(|| make(content.to_owned(), args(path, &o, &new), None))
        }
        "stale-line" => {
            // An earlier edit changed (or removed) one line of the block; the model quotes the
            // block as it read it before.
            let vocabulary = Vocabulary::of(&lines, comment(path));
            let mut all: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
            if n >= 4 && rng.gen_bool(0.25) {
                let k = rng.gen_range(1..n - 1);
                if is_blank(&old_lines[k]) {
                    return None;
                }
                all.remove(s + k);
            } else {
                let candidates: Vec<usize> = (0..n)
                    .filter(|&k| !substitutable(&old_lines[k], comment(path)).is_empty())
                    .collect();
                let &k = candidates.choose(rng)?;
                all[s + k] = substitute_in(&old_lines[k], comment(path), &vocabulary, rng)?;
            }
            let changed = all.join("\n");
            let changed_lines: Vec<&str> = changed.split('\n').collect();
            let refs: Vec<&str> = old_lines.iter().map(String::as_str).collect();
            (not_exact(&old, &changed) && trimmed_windows(&changed_lines, &refs) == 0)
                .then(|| make(changed.clone(), args(path, &old, &new), None))
        }
        "reordered-lines" => {
            let pairs: Vec<usize> = (0..n - 1)
                .filter(|&k| {
                    !is_blank(&old_lines[k])
                        && !is_blank(&old_lines[k + 1])
                        && old_lines[k].trim() != old_lines[k + 1].trim()
                })
                .collect();
            let &k = pairs.choose(rng)?;
            let mut model = old_lines.clone();
            model.swap(k, k + 1);
            let o = join(&model);
            let refs: Vec<&str> = model.iter().map(String::as_str).collect();
            (not_exact(&o, content) && trimmed_windows(&lines, &refs) == 0)
                .then(|| make(content.to_owned(), args(path, &o, &new), None))
        }
        "comment-drift" => {
            let commented: Vec<usize> =
                (0..n).filter(|&k| is_comment_line(&old_lines[k])).collect();
            let &k = commented.choose(rng)?;
            let line = &old_lines[k];
            // The comment's words (letters only, three or more), by byte span.
            let mut words: Vec<(usize, usize)> = Vec::new();
            let mut at = None;
            for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
                match (c.is_ascii_alphabetic(), at) {
                    (true, None) => at = Some(i),
                    (false, Some(a)) => {
                        if i - a >= 3 {
                            words.push((a, i));
                        }
                        at = None;
                    }
                    _ => {}
                }
            }
            let &(a, b) = words.choose(rng)?;
            let word = &line[a..b];
            let mut drifted = line.clone();
            if words.len() >= 3 && rng.gen_bool(0.4) {
                // A word left out, with the space before it.
                let from = if a > 0 && line.as_bytes()[a - 1] == b' ' {
                    a - 1
                } else {
                    a
                };
                drifted.replace_range(from..b, "");
            } else {
                let far: Vec<&&str> = WORDS.iter().filter(|w| distance(w, word) >= 3).collect();
                drifted.replace_range(a..b, far.choose(rng)?);
            }
            let mut model = old_lines.clone();
            model[k] = drifted;
            let o = join(&model);
            let refs: Vec<&str> = model.iter().map(String::as_str).collect();
            (not_exact(&o, content) && trimmed_windows(&lines, &refs) == 0)
                .then(|| make(content.to_owned(), args(path, &o, &new), None))
        }
        _ => None,
    }
}

/// An `oldText` that is not unique, and a `newText` for it: a repeated line (or two), or a block
/// whose lines appear at two indentations sent at a third.
fn not_unique(file: &SourceFile, lines: &[&str], rng: &mut StdRng) -> Option<(String, String)> {
    let content = file.content.as_str();
    let mut by_trimmed: HashMap<&str, Vec<usize>> = HashMap::new();
    for (k, l) in lines.iter().enumerate() {
        if l.trim().len() >= 6 && l.len() <= MAX_LINE {
            by_trimmed.entry(l.trim()).or_default().push(k);
        }
    }
    let mut repeated: Vec<(&str, &Vec<usize>)> = by_trimmed
        .iter()
        .filter(|(_, v)| v.len() >= 2)
        .map(|(k, v)| (*k, v))
        .collect();
    repeated.sort();
    if repeated.is_empty() {
        return None;
    }
    let (_, places) = repeated.choose(rng)?;
    let indents: Vec<&str> = places.iter().map(|&k| indent(lines[k])).collect();
    let differently_indented = indents.iter().any(|i| *i != indents[0]);
    let k = places[0];
    let line = lines[k];
    let new_line = |l: &str, rng: &mut StdRng| -> String {
        mutate(&[l], &file.path, rng)
            .and_then(|v| v.into_iter().next())
            .unwrap_or_else(|| format!("{l} {}", comment(&file.path)))
    };
    if differently_indented && rng.gen_bool(0.5) {
        let deepest = indents.iter().map(|i| i.len()).max().unwrap_or(0);
        let at = format!("{}    ", " ".repeat(deepest));
        let o = format!("{at}{}\n", line.trim());
        let w = format!("{at}{}\n", new_line(line.trim(), rng));
        return (count(content, &o) == 0).then_some((o, w));
    }
    let o = format!("{line}\n");
    let w = format!("{}\n", new_line(line, rng));
    (count(content, line) >= 2).then_some((o, w))
}

/// Every call for the bases of every file (and, for the refusal kinds, the files themselves).
pub fn generate(files: &[SourceFile], options: &PerturbOptions) -> Vec<Perturbed> {
    let bases: Vec<Vec<Base>> = (0..files.len())
        .into_par_iter()
        .map(|i| {
            let mut rng = StdRng::seed_from_u64(options.seed ^ fnv(&files[i].path));
            bases_of(i, &files[i], options.per_file, &mut rng)
        })
        .collect();
    generate_from(files, &bases.concat(), options)
}

/// Every call for the given bases.
pub fn generate_from(
    files: &[SourceFile],
    bases: &[Base],
    options: &PerturbOptions,
) -> Vec<Perturbed> {
    let per_base: Vec<Vec<Perturbed>> = bases
        .par_iter()
        .enumerate()
        .map(|(i, base)| {
            let seed = options.seed ^ fnv(&files[base.file].path) ^ (i as u64).rotate_left(32);
            options
                .kinds
                .iter()
                .filter_map(|kind| {
                    let mut rng = StdRng::seed_from_u64(seed.wrapping_add(1) ^ fnv(kind));
                    perturb(kind, base, files, &mut rng)
                })
                .collect()
        })
        .collect();
    per_base.into_iter().flatten().collect()
}

/// The cases of generated calls, in memory (what `perturb` then `compare` would read back).
pub fn cases_from_perturbed(calls: &[Perturbed], seed: u64) -> Vec<Case> {
    calls
        .iter()
        .enumerate()
        .map(|(i, call)| Case {
            line: i + 1,
            record: EditRecord {
                task: "perturb".to_owned(),
                run: format!("seed-{seed}"),
                turn: 0,
                call_id: format!("{}:{}", call.base, call.kind),
                path: call.path.clone(),
                before: None,
                arguments: call.arguments.clone(),
                outcome: None,
                kind: Some(call.kind.to_owned()),
                gold: None,
            },
            before: Some(Arc::from(call.content.as_str())),
            gold: Some(match &call.gold_after {
                Some(after) => CaseGold::Apply(Arc::from(after.as_str())),
                None => CaseGold::Refuse,
            }),
        })
        .collect()
}

/// The gold edits of a corpus usable as bases: one edit of whole lines, found once in an LF file
/// without BOM, with an `apply` gold. Returns the files (one per record) and the bases.
pub fn bases_from_corpus(cases: &[Case]) -> (Vec<SourceFile>, Vec<Base>) {
    let mut files = Vec::new();
    let mut bases = Vec::new();
    for case in cases {
        let (Some(before), Some(CaseGold::Apply(_))) = (&case.before, &case.gold) else {
            continue;
        };
        if before.contains('\r') || before.starts_with('\u{FEFF}') {
            continue;
        }
        let prepared = crate::tools::edit::prepare_edit_arguments(case.record.arguments.clone());
        let Ok(edits) = crate::tools::edit::replacements_of(&prepared) else {
            continue;
        };
        let [edit] = edits.as_slice() else {
            continue;
        };
        let old = edit.old_text.as_str();
        if count(before, old) != 1 {
            continue;
        }
        let Some(at) = before.find(old) else {
            continue;
        };
        let trailing_newline = old.ends_with('\n');
        let end = at + old.len();
        let starts_line = at == 0 || before.as_bytes()[at - 1] == b'\n';
        let ends_line = trailing_newline || end == before.len() || before.as_bytes()[end] == b'\n';
        if !starts_line || !ends_line {
            continue;
        }
        let start = memchr::memchr_iter(b'\n', &before.as_bytes()[..at]).count();
        let body = old.strip_suffix('\n').unwrap_or(old);
        let count_lines = body.split('\n').count();
        files.push(SourceFile {
            path: case.record.path.clone(),
            content: before.to_string(),
        });
        bases.push(Base {
            file: files.len() - 1,
            start,
            count: count_lines,
            trailing_newline,
            new_text: edit.new_text.clone(),
        });
    }
    (files, bases)
}

/// A stable 64-bit hash of `text` (FNV-1a), to seed each file's generator.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The kinds named in `list` (comma-separated), or an error naming the unknown one.
pub fn parse_kinds(list: &str) -> Result<Vec<&'static str>, String> {
    list.split(',')
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(|k| {
            KINDS
                .iter()
                .copied()
                .find(|known| *known == k)
                .ok_or_else(|| {
                    format!(
                        "unknown perturbation kind `{k}` (kinds: {})",
                        KINDS.join(", ")
                    )
                })
        })
        .collect()
}

/// Writes `calls` as a corpus in `dir`; returns how many records.
pub fn write_corpus(dir: &Path, calls: &[Perturbed], seed: u64) -> Result<usize, CorpusError> {
    let mut writer = CorpusWriter::create(dir)?;
    for call in calls {
        let before = writer.blob(&call.content)?;
        let gold = match &call.gold_after {
            Some(after) => Gold::Apply {
                after: writer.blob(after)?,
            },
            None => Gold::Refuse,
        };
        writer.record(&EditRecord {
            task: "perturb".to_owned(),
            run: format!("seed-{seed}"),
            turn: 0,
            call_id: format!("{}:{}", call.base, call.kind),
            path: call.path.clone(),
            before: Some(before),
            arguments: call.arguments.clone(),
            outcome: None,
            kind: Some(call.kind.to_owned()),
            gold: Some(gold),
        })?;
    }
    writer.finish()?;
    Ok(calls.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edits::reapply::{Correct, Replayer};
    use crate::tools::edit::parse_strategy;

    /// A few source files shaped like real code, with repeated lines, comments and numbers.
    fn files() -> Vec<SourceFile> {
        let python = |name: &str, n: usize| {
            SourceFile {
            path: format!("pkg/{name}.py"),
            content: (0..n)
                .map(|i| {
                    format!(
                        "def {name}_{i}(value, limit={i}):\n    # Check the \"value\" - it's {name}'s job.\n    if value > limit:\n        result = value * {i} + 1\n        return result\n    return None\n\n\n"
                    )
                })
                .collect(),
        }
        };
        vec![python("alpha", 6), python("beta", 5), python("gamma", 7)]
    }

    #[test]
    fn one_and_two_line_bases_from_real_edits_give_every_kind_that_fits_and_never_panic() {
        // Real sessions' gold edits are often one line (a corpus's bases, unlike a folder's,
        // need not have three): every kind either derives a call or none.
        let file = SourceFile {
            path: "app.py".to_owned(),
            content:
                "import os\n\nLIMIT = 10\nNAME = \"alpha\"\n\ndef run(x):\n    return x * LIMIT\n"
                    .to_owned(),
        };
        for (start, count) in [(2, 1), (5, 1), (2, 2), (5, 2)] {
            let base = Base {
                file: 0,
                start,
                count,
                trailing_newline: true,
                new_text: "CHANGED = 1\n".to_owned(),
            };
            for seed in 0..20 {
                let calls = generate_from(
                    std::slice::from_ref(&file),
                    std::slice::from_ref(&base),
                    &options(seed),
                );
                let kinds: Vec<&str> = calls.iter().map(|c| c.kind).collect();
                assert!(kinds.contains(&"exact"), "{start} {count}: {kinds:?}");
                assert_eq!(kinds.contains(&"blank-line"), count > 1, "{kinds:?}");
            }
        }
    }

    fn options(seed: u64) -> PerturbOptions {
        PerturbOptions {
            seed,
            per_file: 2,
            kinds: KINDS.to_vec(),
        }
    }

    #[test]
    fn every_kind_is_generated_with_a_consistent_answer() {
        let calls = generate(&files(), &options(3));
        for kind in KINDS {
            assert!(calls.iter().any(|c| c.kind == *kind), "no {kind} call");
        }
        let exact = parse_strategy("exact").unwrap();
        let replayer = Replayer::default();
        for (call, case) in calls.iter().zip(cases_from_perturbed(&calls, 3)) {
            let refusal = REFUSAL_KINDS.contains(&call.kind);
            assert_eq!(call.gold_after.is_none(), refusal, "{call:?}");
            if let Some(after) = &call.gold_after {
                assert_ne!(after, &call.content, "{call:?}");
            }
            // Only unperturbed (and CRLF) calls are found exactly; a refusal is never applied.
            let out = replayer.replay(&case, exact.as_ref());
            match call.kind {
                "exact" | "crlf" => assert_eq!(out.correct, Correct::Correct, "{call:?}"),
                _ if refusal => assert_eq!(out.correct, Correct::CorrectRefusal, "{call:?}"),
                _ => assert_eq!(out.correct, Correct::Missed, "{call:?}"),
            }
        }
    }

    #[test]
    fn generation_is_deterministic_and_depends_on_the_seed() {
        let a = generate(&files(), &options(9));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let b = pool.install(|| generate(&files(), &options(9)));
        assert_eq!(a, b);
        assert_ne!(a, generate(&files(), &options(10)));
    }

    /// The call's `oldText` lines, and the lines of `content` where its base block starts.
    fn old_and_block<'a>(call: &'a Perturbed, content: &'a str) -> (Vec<&'a str>, Vec<&'a str>) {
        let old = call.arguments["edits"][0]["oldText"].as_str().unwrap();
        let start: usize = call.base.rsplit('#').next().unwrap().parse().unwrap();
        let old: Vec<&str> = old.strip_suffix('\n').unwrap_or(old).split('\n').collect();
        let block: Vec<&str> = content.split('\n').skip(start).collect();
        (old, block)
    }

    /// The lines where `a` and `b` differ, pairwise.
    fn differing<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(&'a str, &'a str)> {
        a.iter()
            .zip(b)
            .filter(|(x, y)| x != y)
            .map(|(x, y)| (*x, *y))
            .collect()
    }

    #[test]
    fn typos_and_substitutions_are_what_their_kinds_say() {
        let calls = generate(&files(), &options(5));
        let words = |l: &str| -> Vec<String> {
            l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map(str::to_owned)
                .collect()
        };
        let mut seen = 0;
        for call in &calls {
            match call.kind {
                "typo" | "near-copy" | "comment-drift" => {
                    let (old, block) = old_and_block(call, &call.content);
                    let diff = differing(&old, &block);
                    assert_eq!(diff.len(), 1, "{call:?}");
                    let (model, file) = diff[0];
                    let (m, f) = (words(model), words(file));
                    let changed: Vec<(&String, &String)> =
                        m.iter().zip(&f).filter(|(a, b)| a != b).collect();
                    if call.kind == "typo" {
                        // One word, one edit, a word the file does not use.
                        assert_eq!(changed.len(), 1, "{call:?}");
                        let (typo, real) = changed[0];
                        assert!(distance(typo, real) <= 2 && real.len() >= 4, "{call:?}");
                        assert!(
                            !file_words(&call.content).contains(typo.as_str()),
                            "{call:?}"
                        );
                    } else if m.len() == f.len() && changed.len() == 1 {
                        // A whole token: a name or literal of the file, or one far from it.
                        let (new, real) = changed[0];
                        let from_file = file_words(&call.content).contains(new.as_str());
                        let number = new.parse::<f64>().is_ok();
                        assert!(
                            from_file
                                || number
                                || distance(new, real) >= 3
                                || KEYWORD_SWAPS.iter().any(|(k, _)| k == real),
                            "{call:?}"
                        );
                    }
                    seen += 1;
                }
                "stale-line" => {
                    // oldText is the block as it was; the file has one line changed or gone.
                    let sources = files();
                    let original = &sources
                        .iter()
                        .find(|f| f.path == call.path)
                        .unwrap()
                        .content;
                    let (old, block) = old_and_block(call, original);
                    assert!(differing(&old, &block).is_empty(), "{call:?}");
                    let (_, now) = old_and_block(call, &call.content);
                    let changed = differing(&old, &now).len();
                    let gone = original.lines().count() == call.content.lines().count() + 1;
                    assert!(changed == 1 || gone, "{call:?}");
                    seen += 1;
                }
                _ => {}
            }
        }
        assert!(seen > 10, "{seen}");
    }

    #[test]
    fn kinds_parse_and_unknown_ones_are_named() {
        assert_eq!(parse_kinds("typo, decoy").unwrap(), vec!["typo", "decoy"]);
        let err = parse_kinds("typo,nope").unwrap_err();
        assert!(err.contains("`nope`") && err.contains("near-miss"), "{err}");
    }

    #[test]
    fn mistakes_look_like_model_mistakes() {
        assert_eq!(escape("a\t\"b\"\\n\n"), "a\\t\\\"b\\\"\\\\n\\n");
        assert_eq!(
            smarten("say \"hi\" - it's").unwrap(),
            "say \u{201C}hi\u{201D} \u{2013} it\u{2019}s"
        );
        assert_eq!(smarten("plain"), None);
        assert_eq!(
            rename("count = count_all(count)", "count", "total"),
            "total = count_all(total)"
        );
        assert_eq!(
            identifiers("self.value = compute(x, value)"),
            vec!["value", "compute"]
        );
    }
}
