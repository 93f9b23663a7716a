//! Line views shared by the line-window tiers: the file as lines with byte offsets (built once
//! per call and shared by every tier of a ladder), `oldText` as lines, and the byte span of a
//! window of whole lines.

use std::cell::OnceCell;

/// The text a ladder searches: the original file (BOM stripped, LF), with its line table and the
/// normalised forms some tiers need, each computed at most once per call.
pub(crate) struct Haystack<'a> {
    pub text: &'a str,
    /// Start offset of every line (`text.split('\n')`: a text ending in `\n` has a last, empty
    /// line).
    starts: Vec<usize>,
    pi_normalized: OnceCell<String>,
    collapsed: OnceCell<super::collapsed::Collapsed>,
    words: OnceCell<super::near_copy::FileWords<'a>>,
}

impl<'a> Haystack<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut starts = Vec::with_capacity(text.len() / 32 + 1);
        starts.push(0);
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        Haystack {
            text,
            starts,
            pi_normalized: OnceCell::new(),
            collapsed: OnceCell::new(),
            words: OnceCell::new(),
        }
    }

    /// The number of lines (at least 1).
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Line `i` without its `\n`.
    pub fn line(&self, i: usize) -> &'a str {
        let start = self.starts[i];
        let end = self.line_end(i);
        &self.text[start..end]
    }

    pub fn line_start(&self, i: usize) -> usize {
        self.starts[i]
    }

    /// The end of line `i`, before its `\n`.
    pub fn line_end(&self, i: usize) -> usize {
        match self.starts.get(i + 1) {
            Some(next) => next - 1,
            None => self.text.len(),
        }
    }

    /// The line that holds byte `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// The span of lines `first..first + count`, with the `\n` after the last one when
    /// `trailing_newline` (and there is one).
    pub fn span(&self, first: usize, count: usize, trailing_newline: bool) -> (usize, usize) {
        let last = first + count - 1;
        let end = self.line_end(last);
        let end = if trailing_newline && end < self.text.len() {
            end + 1
        } else {
            end
        };
        (self.starts[first], end)
    }

    /// Pi's `normalizeForFuzzyMatch` of the whole text.
    pub fn pi_normalized(&self) -> &str {
        self.pi_normalized.get_or_init(|| {
            super::super::normalize::normalize_for_fuzzy_match(self.text).into_owned()
        })
    }

    /// The words of the text (to tell a typo from another name).
    pub fn words(&self) -> &super::near_copy::FileWords<'a> {
        self.words
            .get_or_init(|| super::near_copy::FileWords::new(self.text))
    }

    /// The text with whitespace runs collapsed (for the `whitespace` tier).
    pub fn collapsed(&self) -> &super::collapsed::Collapsed {
        self.collapsed
            .get_or_init(|| super::collapsed::Collapsed::new(self.text))
    }
}

/// `oldText` (or any text) as lines: a final `\n` ends the last line rather than starting an
/// empty one.
#[derive(Debug, Clone)]
pub(crate) struct TextLines<'a> {
    pub lines: Vec<&'a str>,
    pub trailing_newline: bool,
}

impl<'a> TextLines<'a> {
    pub fn new(text: &'a str) -> Self {
        let (body, trailing_newline) = match text.strip_suffix('\n') {
            Some(body) => (body, true),
            None => (text, false),
        };
        TextLines {
            lines: body.split('\n').collect(),
            trailing_newline,
        }
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// True if every line is blank.
    pub fn all_blank(&self) -> bool {
        self.lines.iter().all(|l| l.trim().is_empty())
    }
}

/// Every window of `count` lines for which `matches(first_line)` holds.
pub(crate) fn windows_where(
    hay: &Haystack<'_>,
    count: usize,
    mut matches: impl FnMut(usize) -> bool,
) -> Vec<usize> {
    if count == 0 || count > hay.len() {
        return Vec::new();
    }
    (0..=hay.len() - count).filter(|&i| matches(i)).collect()
}

/// The windows where every line of `old` equals the file's line under `eq`.
pub(crate) fn windows_equal_by(
    hay: &Haystack<'_>,
    old: &TextLines<'_>,
    eq: impl Fn(&str, &str) -> bool,
) -> Vec<usize> {
    windows_where(hay, old.len(), |i| {
        old.lines
            .iter()
            .enumerate()
            .all(|(j, o)| eq(hay.line(i + j), o))
    })
}

/// Joins lines with `\n`, ending with one when `trailing_newline`.
pub(crate) fn join_lines<S: AsRef<str>>(lines: &[S], trailing_newline: bool) -> String {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(line.as_ref());
    }
    if trailing_newline {
        out.push('\n');
    }
    out
}
