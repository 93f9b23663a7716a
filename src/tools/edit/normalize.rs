//! Pi's text normalisations for `edit` (spec section 3): line endings (`normalizeToLF`,
//! `restoreLineEndings`, `detectLineEnding`), the BOM, and `normalizeForFuzzyMatch`.
//!
//! Pi works on JS strings, so its indices and lengths are UTF-16 code units. Everything here works
//! in byte offsets of Rust strings instead; every match starts and ends on a char boundary, so the
//! observable results (which edit matches where, overlap checks, the written file) are the same.
//! The one place where a UTF-16 length is observable is [`count_occurrences`] with an empty
//! pattern, which reproduces `s.split("").length - 1`.
//!
//! Pure functions on strings; nothing here touches files or depends on the rest of the tools.

use std::borrow::Cow;

use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

use crate::tools::validate::is_js_whitespace;

/// A line ending as Pi detects it: only the first line break of the file decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    Lf,
    CrLf,
}

/// Pi's `detectLineEnding`: `"\r\n"` if the first `"\n"` is preceded by `"\r"`, else `"\n"`.
pub fn detect_line_ending(text: &str) -> LineEnding {
    match memchr::memchr(b'\n', text.as_bytes()) {
        Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => LineEnding::CrLf,
        _ => LineEnding::Lf,
    }
}

/// Pi's `normalizeToLF`: every `"\r\n"` becomes `"\n"`, then every remaining lone `"\r"` too.
pub fn normalize_to_lf(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let Some(first) = memchr::memchr(b'\r', bytes) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..first]);
    let mut rest = first;
    while let Some(off) = memchr::memchr(b'\r', &bytes[rest..]) {
        let cr = rest + off;
        out.push_str(&text[rest..cr]);
        out.push('\n');
        rest = if bytes.get(cr + 1) == Some(&b'\n') {
            cr + 2
        } else {
            cr + 1
        };
    }
    out.push_str(&text[rest..]);
    Cow::Owned(out)
}

/// Pi's `restoreLineEndings`: for CRLF every `"\n"` becomes `"\r\n"`; LF text is unchanged.
pub fn restore_line_endings(text: &str, ending: LineEnding) -> Cow<'_, str> {
    if ending == LineEnding::Lf {
        return Cow::Borrowed(text);
    }
    let lines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    let mut out = String::with_capacity(text.len() + lines);
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', text.as_bytes()) {
        out.push_str(&text[start..nl]);
        out.push_str("\r\n");
        start = nl + 1;
    }
    out.push_str(&text[start..]);
    Cow::Owned(out)
}

/// Pi's `stripBom`: splits a leading U+FEFF off (it is re-added on write).
pub fn strip_bom(text: &str) -> (&str, &str) {
    match text.strip_prefix('\u{FEFF}') {
        Some(rest) => ("\u{FEFF}", rest),
        None => ("", text),
    }
}

/// Steps 3 to 6 of `normalizeForFuzzyMatch`: quotes, dashes and special spaces to ASCII.
fn fold_punctuation(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        c => c,
    }
}

/// Pi's `normalizeForFuzzyMatch`, in its order: NFKC; split on `"\n"`, JS `trimEnd()` each line,
/// join; smart single quotes to `'`; smart double quotes to `"`; dashes to `-`; special spaces
/// to a space.
///
/// Works line by line: `"\n"` never composes with its neighbours and no NFKC mapping produces
/// or removes one, so NFKC of the whole text equals NFKC of each line joined. ASCII lines (the
/// common case) only need the trim. The function is idempotent (NFKC is stable, and the later
/// steps only replace or remove starters that compose with nothing), which the strategy relies
/// on to avoid normalising the normalised base a second time.
pub fn normalize_for_fuzzy_match(text: &str) -> Cow<'_, str> {
    if is_fuzzy_normal(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut first = true;
    for line in text.split('\n') {
        if !first {
            out.push('\n');
        }
        first = false;
        if line.is_ascii() {
            out.push_str(line.trim_end_matches(is_js_whitespace));
            continue;
        }
        let folded: Cow<'_, str> = match is_nfkc_quick(line.chars()) {
            IsNormalized::Yes => Cow::Borrowed(line),
            _ => Cow::Owned(line.nfkc().collect()),
        };
        let trimmed = folded.trim_end_matches(is_js_whitespace);
        out.extend(trimmed.chars().map(fold_punctuation));
    }
    Cow::Owned(out)
}

/// True if [`normalize_for_fuzzy_match`] would return `text` unchanged, checked cheaply: every line
/// is ASCII without trailing whitespace. (A false answer only means "compute it".)
fn is_fuzzy_normal(text: &str) -> bool {
    if !text.is_ascii() {
        return false;
    }
    let bytes = text.as_bytes();
    let ends_clean = |end: usize| {
        end == 0 || bytes[end - 1] == b'\n' || !is_js_whitespace(char::from(bytes[end - 1]))
    };
    memchr::memchr_iter(b'\n', bytes).all(ends_clean) && ends_clean(bytes.len())
}

/// The length of `text` in UTF-16 code units (JS `string.length`).
pub fn utf16_len(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

/// JS `haystack.split(needle).length - 1`: the number of non-overlapping occurrences, scanning
/// from the left. An empty needle splits into UTF-16 code units, giving `length - 1` (and `-1`
/// for an empty haystack), which Pi's `countOccurrences` reports as such.
pub fn count_occurrences(haystack: &str, needle: &str) -> i64 {
    if needle.is_empty() {
        return utf16_len(haystack) as i64 - 1;
    }
    memchr::memmem::find_iter(haystack.as_bytes(), needle.as_bytes()).count() as i64
}

/// For each needle: where it first occurs in `haystack` (JS `indexOf`) and how many times it occurs
/// without overlapping (JS `split(needle).length - 1`), in one pass over the haystack for all of
/// them. Same results as [`find`] and [`count_occurrences`] per needle.
pub fn scan_all(haystack: &str, needles: &[&str]) -> Vec<(Option<usize>, i64)> {
    let mut results: Vec<(Option<usize>, i64)> = needles
        .iter()
        .map(|n| {
            if n.is_empty() {
                (Some(0), count_occurrences(haystack, n))
            } else {
                (None, 0)
            }
        })
        .collect();
    let patterns: Vec<&str> = needles.iter().copied().filter(|n| !n.is_empty()).collect();
    if patterns.is_empty() {
        return results;
    }
    // A DFA without prefilter: edits from one file tend to share common bytes, so a rare-byte
    // prefilter fires on every line and only slows the scan down.
    let Ok(automaton) = aho_corasick::AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::Standard)
        .kind(Some(aho_corasick::AhoCorasickKind::DFA))
        .prefilter(false)
        .build(&patterns)
    else {
        // Too large an automaton: fall back to one search per needle.
        return needles
            .iter()
            .map(|n| (find(haystack, n), count_occurrences(haystack, n)))
            .collect();
    };
    let slots: Vec<usize> = (0..needles.len())
        .filter(|&i| !needles[i].is_empty())
        .collect();
    // Per pattern, the greedy left-to-right non-overlapping count: matches of one pattern arrive
    // in order of their start, and one is counted if it starts after the last counted one ends.
    let mut next_free = vec![0usize; patterns.len()];
    for m in automaton.find_overlapping_iter(haystack) {
        let p = m.pattern().as_usize();
        let slot = &mut results[slots[p]];
        if slot.0.is_none() {
            slot.0 = Some(m.start());
        }
        if m.start() >= next_free[p] {
            slot.1 += 1;
            next_free[p] = m.end();
        }
    }
    results
}

/// JS `haystack.indexOf(needle)` in byte offsets (an empty needle is found at 0).
pub fn find(haystack: &str, needle: &str) -> Option<usize> {
    memchr::memmem::find(haystack.as_bytes(), needle.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> String {
        normalize_for_fuzzy_match(s).into_owned()
    }

    #[test]
    fn line_endings_are_detected_from_the_first_break_only() {
        assert_eq!(detect_line_ending("a\r\nb\nc"), LineEnding::CrLf);
        assert_eq!(detect_line_ending("a\nb\r\nc"), LineEnding::Lf);
        assert_eq!(detect_line_ending("a\rb\r\nc"), LineEnding::CrLf);
        assert_eq!(detect_line_ending("a\rb"), LineEnding::Lf);
        assert_eq!(detect_line_ending("\n"), LineEnding::Lf);
        assert_eq!(detect_line_ending(""), LineEnding::Lf);
    }

    #[test]
    fn normalize_to_lf_handles_crlf_then_lone_cr() {
        assert_eq!(normalize_to_lf("a\nb\r\nc\rd\n"), "a\nb\nc\nd\n");
        assert_eq!(normalize_to_lf("\r\r\n\n\r"), "\n\n\n\n");
        assert_eq!(normalize_to_lf("x\r"), "x\n");
        assert!(matches!(normalize_to_lf("plain\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn restore_line_endings_rewrites_every_lf() {
        assert_eq!(
            restore_line_endings("a\nb\n", LineEnding::CrLf),
            "a\r\nb\r\n"
        );
        assert_eq!(restore_line_endings("a\nb", LineEnding::CrLf), "a\r\nb");
        assert_eq!(restore_line_endings("a\nb\n", LineEnding::Lf), "a\nb\n");
    }

    #[test]
    fn bom_is_split_off() {
        assert_eq!(strip_bom("\u{FEFF}abc"), ("\u{FEFF}", "abc"));
        assert_eq!(strip_bom("abc\u{FEFF}"), ("", "abc\u{FEFF}"));
    }

    #[test]
    fn fuzzy_normalisation_follows_pis_steps() {
        assert_eq!(norm("“hello” it’s — ok"), "\"hello\" it's - ok");
        assert_eq!(norm("a  \t\nb \u{A0}\u{3000}\n  c"), "a\nb\n  c");
        assert_eq!(norm("ﬁle … ＡＢＣ x\u{A0}y"), "file ... ABC x y");
        assert_eq!(norm("‐‑‒–—―−"), "-------");
        assert_eq!(norm("‘’‚‛„‟"), "''''\"\"");
        // JS trimEnd strips U+FEFF but not U+0085 (NEL); Rust's is_whitespace differs on both.
        assert_eq!(norm("x\u{FEFF}\ny\u{85}"), "x\ny\u{85}");
        // Leading and inner whitespace are kept, tabs too.
        assert_eq!(norm("\tif  x:\t \n"), "\tif  x:\n");
        // Composition: e + combining acute becomes é.
        assert_eq!(norm("e\u{301}"), "é");
        assert_eq!(norm(""), "");
        assert_eq!(norm("\n\n"), "\n\n");
    }

    #[test]
    fn fuzzy_normalisation_is_idempotent() {
        for s in [
            "“hello”  \n ﬁ … ＡＢＣ\u{A0}\n\u{2028}x\u{2029}\n",
            "e\u{301}\u{327} \u{FEFF}\nㄱㅏ\u{1100}\u{1161}\u{11A8}",
            "\u{2000}\u{2001}a\u{3000}b\u{205F} ",
            "¼ ① ㎒ ｶﾞ \u{FB01}\u{301}",
        ] {
            let once = norm(s);
            assert_eq!(norm(&once), once, "{s:?}");
        }
    }

    #[test]
    fn counting_matches_js_split() {
        assert_eq!(count_occurrences("aaaa", "aa"), 2);
        assert_eq!(count_occurrences("abcabc", "abc"), 2);
        assert_eq!(count_occurrences("abc", "x"), 0);
        assert_eq!(count_occurrences("a😀", ""), 2);
        assert_eq!(count_occurrences("", ""), -1);
        assert_eq!(find("abc", ""), Some(0));
        assert_eq!(utf16_len("é😀"), 3);
    }

    #[test]
    fn one_pass_scan_agrees_with_per_needle_search() {
        let haystack = "aaaa abab’ab a\naa ’ ab\nabababa";
        let needles = [
            "aa", "ab", "aba", "’", "a", "", "zz", "ab", "b\na", "abababa",
        ];
        let expected: Vec<(Option<usize>, i64)> = needles
            .iter()
            .map(|n| (find(haystack, n), count_occurrences(haystack, n)))
            .collect();
        assert_eq!(scan_all(haystack, &needles), expected);
        assert_eq!(expected[0], (Some(0), 3));
        assert_eq!(expected[2], (Some(5), 3));
    }
}
