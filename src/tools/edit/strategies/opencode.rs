//! opencode's replacers (`packages/opencode/src/tool/edit.ts`), the tiers of the `opencode`
//! preset, each doing what its namesake does: the same windows, the same comparisons, the same
//! thresholds, and `newText` inserted as sent (never re-indented, never unescaped). Where a
//! replacer's span leaves out the last line's `\n` although `oldText` ends with one, so does
//! ours, as opencode's `substring` does.
//!
//! What differs is the uniqueness rule, because every strategy keeps the tool's guarantee.
//! opencode yields candidate strings, skips one that occurs more than once in the file and goes
//! on to the next candidate and the next replacer, so an ambiguous `oldText` can end up applied
//! through a differently indented copy (its `LineTrimmedReplacer` candidate is unique as a
//! string). Here each replacer collects the places it matched, and more than one is an error
//! with the count. `MultiOccurrenceReplacer` only matters with `replaceAll`, which the Pi edit
//! tool does not have, so it is left out.

use super::exact::locate_exact;
use super::levenshtein::similarity;
use super::lines::{Haystack, windows_where};
use super::{Found, Locate, Locator, Replacement, unique_or_ambiguous};

/// opencode's thresholds for `BlockAnchorReplacer`.
const SINGLE_CANDIDATE_SIMILARITY_THRESHOLD: f64 = 0.0;
const MULTIPLE_CANDIDATES_SIMILARITY_THRESHOLD: f64 = 0.3;

/// `content.split("\n")` of `find`, with the final empty line popped when opencode pops it.
fn search_lines(find: &str, pop: bool) -> Vec<&str> {
    let mut lines: Vec<&str> = find.split('\n').collect();
    if pop && lines.len() > 1 && lines.last() == Some(&"") {
        lines.pop();
    }
    lines
}

/// The span of lines `first..=last`, without the `\n` after the last (opencode's substring).
fn lines_span(hay: &Haystack<'_>, first: usize, last: usize) -> (usize, usize) {
    (hay.line_start(first), hay.line_end(last))
}

fn found(tier: &str, (start, end): (usize, usize)) -> Found {
    Found::fuzzy(tier, start, end, None)
}

/// `LineTrimmedReplacer`: windows equal line by line after `trim()`.
pub(super) struct LineTrimmed;

impl Locator for LineTrimmed {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        let lines = search_lines(&edit.old_text, true);
        let hits = windows_where(hay, lines.len(), |i| {
            lines
                .iter()
                .enumerate()
                .all(|(j, s)| hay.line(i + j).trim() == s.trim())
        })
        .into_iter()
        .map(|i| found("line-trimmed", lines_span(hay, i, i + lines.len() - 1)))
        .collect();
        unique_or_ambiguous(hits)
    }
}

/// opencode's middle-line similarity of the candidate `first..=last` (line by line, by index,
/// averaged over the lines checked), with its early exit for a single candidate.
fn block_similarity(
    hay: &Haystack<'_>,
    lines: &[&str],
    first: usize,
    last: usize,
    single: bool,
) -> f64 {
    let search_size = lines.len();
    let actual_size = last - first + 1;
    let to_check = search_size.min(actual_size).saturating_sub(2);
    if to_check == 0 {
        return 1.0;
    }
    let mut total = 0.0;
    let mut j = 1;
    while j < search_size - 1 && j < actual_size - 1 {
        let original = hay.line(first + j).trim();
        let search = lines[j].trim();
        let longest = original.chars().count().max(search.chars().count());
        if longest > 0 {
            let sim = similarity(original, search);
            if single {
                total += sim / to_check as f64;
                if total >= SINGLE_CANDIDATE_SIMILARITY_THRESHOLD {
                    break;
                }
            } else {
                total += sim;
            }
        }
        j += 1;
    }
    if single {
        total
    } else {
        total / to_check as f64
    }
}

/// `BlockAnchorReplacer`: first and last lines as anchors (the last anchor is the first matching
/// line at least two lines further down, however far); a single candidate is accepted at
/// similarity 0, several need an average middle similarity of 0.3 and the best wins (a tie for
/// the best is ambiguous here).
pub(super) struct BlockAnchor;

impl Locator for BlockAnchor {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        if edit.old_text.split('\n').count() < 3 {
            return Locate::NotFound;
        }
        let lines = search_lines(&edit.old_text, true);
        let first = lines[0].trim();
        let last = lines[lines.len() - 1].trim();
        let mut candidates = Vec::new();
        for i in 0..hay.len() {
            if hay.line(i).trim() != first {
                continue;
            }
            if let Some(j) = (i + 2..hay.len()).find(|&j| hay.line(j).trim() == last) {
                candidates.push((i, j));
            }
        }
        match candidates.len() {
            0 => Locate::NotFound,
            1 => {
                let (i, j) = candidates[0];
                let score = block_similarity(hay, &lines, i, j, true);
                if score >= SINGLE_CANDIDATE_SIMILARITY_THRESHOLD {
                    Locate::Found(found("block-anchor", lines_span(hay, i, j)).with_score(score))
                } else {
                    Locate::NotFound
                }
            }
            _ => {
                let scored: Vec<(usize, usize, f64)> = candidates
                    .iter()
                    .map(|&(i, j)| (i, j, block_similarity(hay, &lines, i, j, false)))
                    .collect();
                let best = scored.iter().map(|c| c.2).fold(f64::MIN, f64::max);
                if best < MULTIPLE_CANDIDATES_SIMILARITY_THRESHOLD {
                    return Locate::NotFound;
                }
                let top: Vec<&(usize, usize, f64)> =
                    scored.iter().filter(|c| c.2 == best).collect();
                if top.len() > 1 {
                    return Locate::Ambiguous(top.len());
                }
                let (i, j, score) = *top[0];
                Locate::Found(found("block-anchor", lines_span(hay, i, j)).with_score(score))
            }
        }
    }
}

/// `text.replace(/\s+/g, " ").trim()`.
fn normalize_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `WhitespaceNormalizedReplacer`: a line whose collapsed form equals (or, through a regex of
/// the words, contains) the collapsed `oldText`; for several lines, windows whose collapsed
/// join equals it.
pub(super) struct WhitespaceNormalized;

impl Locator for WhitespaceNormalized {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        let find = &edit.old_text;
        let normalized_find = normalize_whitespace(find);
        let mut hits = Vec::new();
        let words: Vec<&str> = find.split_whitespace().collect();
        for i in 0..hay.len() {
            let line = hay.line(i);
            let normalized_line = normalize_whitespace(line);
            if normalized_line == normalized_find {
                hits.push(found("whitespace-normalized", lines_span(hay, i, i)));
            } else if !words.is_empty() && normalized_line.contains(&normalized_find) {
                if let Some((s, e)) = words_match(line, &words) {
                    let base = hay.line_start(i);
                    hits.push(found("whitespace-normalized", (base + s, base + e)));
                }
            }
        }
        let find_lines: Vec<&str> = find.split('\n').collect();
        if find_lines.len() > 1 {
            for i in windows_where(hay, find_lines.len(), |_| true) {
                let (start, end) = lines_span(hay, i, i + find_lines.len() - 1);
                if normalize_whitespace(&hay.text[start..end]) == normalized_find {
                    hits.push(found("whitespace-normalized", (start, end)));
                }
            }
        }
        unique_or_ambiguous(hits)
    }
}

/// The first match in `line` of `words` separated by whitespace (opencode's
/// `words.join("\\s+")` regex), as a byte span.
fn words_match(line: &str, words: &[&str]) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(off) = line[from..].find(words[0]) {
        let start = from + off;
        let mut at = start + words[0].len();
        let mut ok = true;
        for word in &words[1..] {
            let rest = &line[at..];
            let gap = rest.len() - rest.trim_start().len();
            if gap == 0 || !rest[gap..].starts_with(word) {
                ok = false;
                break;
            }
            at += gap + word.len();
        }
        if ok {
            return Some((start, at));
        }
        from = start + words[0].chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// opencode's `removeIndentation`: the smallest leading whitespace (in chars, tabs and spaces
/// alike) of the non-blank lines sliced off each non-blank line.
fn remove_indentation(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let indents = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.chars().take_while(|c| c.is_whitespace()).count());
    let Some(min) = indents.min() else {
        return text.to_owned();
    };
    lines
        .iter()
        .map(|l| {
            if l.trim().is_empty() {
                (*l).to_owned()
            } else {
                l.chars().skip(min).collect()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `IndentationFlexibleReplacer`: windows equal once each side's common indentation is removed.
pub(super) struct IndentationFlexible;

impl Locator for IndentationFlexible {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        let find = &edit.old_text;
        let normalized_find = remove_indentation(find);
        let count = find.split('\n').count();
        let hits = windows_where(hay, count, |i| {
            let (start, end) = lines_span(hay, i, i + count - 1);
            remove_indentation(&hay.text[start..end]) == normalized_find
        })
        .into_iter()
        .map(|i| found("indentation-flexible", lines_span(hay, i, i + count - 1)))
        .collect();
        unique_or_ambiguous(hits)
    }
}

/// opencode's `unescapeString`: `\n`, `\t`, `\r`, `\'`, `\"`, `` \` ``, `\\`, `\` + newline, `\$`.
fn opencode_unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(q @ ('\'' | '"' | '`' | '\\' | '\n' | '$')) => out.push(q),
            _ => {
                out.push('\\');
                continue;
            }
        }
        chars.next();
    }
    out
}

/// `EscapeNormalizedReplacer`: the unescaped `oldText` searched as is, then windows whose
/// unescaped text equals it. `newText` is inserted as sent.
pub(super) struct EscapeNormalized;

impl Locator for EscapeNormalized {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        let unescaped = opencode_unescape(&edit.old_text);
        let lines = unescaped.split('\n').count();
        as_is_then_windows(hay, &unescaped, lines, "escape-normalized", |window| {
            opencode_unescape(window) == unescaped
        })
    }
}

/// `TrimmedBoundaryReplacer`: `oldText.trim()` searched as is, then windows whose trimmed text
/// equals it (only when trimming changed `oldText`).
pub(super) struct TrimmedBoundary;

impl Locator for TrimmedBoundary {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        let find = &edit.old_text;
        let trimmed = find.trim();
        if trimmed == find || trimmed.is_empty() {
            return Locate::NotFound;
        }
        let lines = find.split('\n').count();
        as_is_then_windows(hay, trimmed, lines, "trimmed-boundary", |window| {
            window.trim() == trimmed
        })
    }
}

/// The search of two of opencode's replacers: `needle` found as is (an ambiguous hit is the
/// answer), and every window of `lines` whole lines that `same` accepts; all of it at `tier`,
/// fuzzy, and unique or an error.
fn as_is_then_windows(
    hay: &Haystack<'_>,
    needle: &str,
    lines: usize,
    tier: &'static str,
    same: impl Fn(&str) -> bool,
) -> Locate {
    let mut hits = Vec::new();
    match locate_exact(hay.text, needle, tier) {
        Locate::Found(f) => hits.push(f),
        Locate::Ambiguous(n) => return Locate::Ambiguous(n),
        Locate::NotFound | Locate::NearCopy(_) => {}
    }
    for i in windows_where(hay, lines, |_| true) {
        let (start, end) = lines_span(hay, i, i + lines - 1);
        if same(&hay.text[start..end]) {
            hits.push(found(tier, (start, end)));
        }
    }
    for hit in &mut hits {
        hit.located.kind = crate::tools::MatchTier::Fuzzy;
    }
    unique_or_ambiguous(hits)
}

/// `ContextAwareReplacer`: anchors as in `BlockAnchorReplacer`, but the block must have as many
/// lines as `oldText` and at least half of its non-empty middle lines equal once trimmed.
pub(super) struct ContextAware;

impl Locator for ContextAware {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        if edit.old_text.split('\n').count() < 3 {
            return Locate::NotFound;
        }
        let lines = search_lines(&edit.old_text, true);
        let first = lines[0].trim();
        let last = lines[lines.len() - 1].trim();
        let mut hits = Vec::new();
        for i in 0..hay.len() {
            if hay.line(i).trim() != first {
                continue;
            }
            let Some(j) = (i + 2..hay.len()).find(|&j| hay.line(j).trim() == last) else {
                continue;
            };
            if j - i + 1 != lines.len() {
                continue;
            }
            let (mut matching, mut non_empty) = (0usize, 0usize);
            for (k, search) in lines.iter().enumerate().take(lines.len() - 1).skip(1) {
                let (block, search) = (hay.line(i + k).trim(), search.trim());
                if !block.is_empty() || !search.is_empty() {
                    non_empty += 1;
                    if block == search {
                        matching += 1;
                    }
                }
            }
            if non_empty == 0 || matching as f64 / non_empty as f64 >= 0.5 {
                hits.push(found("context-aware", lines_span(hay, i, j)));
            }
        }
        unique_or_ambiguous(hits)
    }
}
