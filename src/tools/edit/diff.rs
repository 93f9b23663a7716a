//! Pi's `generateDiffString` (spec section 3, "Diff"): a line diff with line numbers and four
//! lines of context, not a unified diff. It only feeds `details` (the model never sees it).
//!
//! The line diff itself comes from `similar` (Myers, like jsdiff's `diffLines`); where two
//! minimal diffs tie, the choice may differ from jsdiff's. Pure text in, text out.

use similar::{Algorithm, DiffOp, TextDiff};

/// Lines of context Pi shows around a change.
pub const CONTEXT_LINES: usize = 4;

/// The diff and the new-file line number of the first change (`None` if nothing changed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffString {
    pub diff: String,
    pub first_changed_line: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Same,
    Removed,
    Added,
}

/// One jsdiff "part": a run of lines of one kind.
struct Part<'a> {
    kind: Kind,
    lines: &'a [&'a str],
}

/// Pi's `generateDiffString(old, new, contextLines)`.
pub fn generate_diff_string(old: &str, new: &str, context_lines: usize) -> DiffString {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .diff_lines(old, new);
    let old_lines: Vec<&str> = diff.old_slices().iter().map(|l| strip_nl(l)).collect();
    let new_lines: Vec<&str> = diff.new_slices().iter().map(|l| strip_nl(l)).collect();

    // jsdiff emits, within one run of changes, the removed lines before the added ones.
    let mut parts: Vec<Part<'_>> = Vec::new();
    let ops = diff.ops();
    let mut i = 0;
    while i < ops.len() {
        if let DiffOp::Equal { old_index, len, .. } = ops[i] {
            parts.push(Part {
                kind: Kind::Same,
                lines: &old_lines[old_index..old_index + len],
            });
            i += 1;
            continue;
        }
        let (mut removed, mut added) = (None::<(usize, usize)>, None::<(usize, usize)>);
        while i < ops.len() && !matches!(ops[i], DiffOp::Equal { .. }) {
            let old_range = ops[i].old_range();
            let new_range = ops[i].new_range();
            if !old_range.is_empty() {
                removed = Some(extend(removed, old_range.start, old_range.end));
            }
            if !new_range.is_empty() {
                added = Some(extend(added, new_range.start, new_range.end));
            }
            i += 1;
        }
        if let Some((start, end)) = removed {
            parts.push(Part {
                kind: Kind::Removed,
                lines: &old_lines[start..end],
            });
        }
        if let Some((start, end)) = added {
            parts.push(Part {
                kind: Kind::Added,
                lines: &new_lines[start..end],
            });
        }
    }

    let max_lines = line_count(old).max(line_count(new));
    let width = max_lines.to_string().len();
    let elided = format!(" {} ...", " ".repeat(width));
    let mut out: Vec<String> = Vec::new();
    let mut old_no = 1usize;
    let mut new_no = 1usize;
    let mut last_was_change = false;
    let mut first_changed_line = None;
    let context = |out: &mut Vec<String>, no: usize, line: &str| {
        out.push(format!(" {no:>width$} {line}"));
    };

    for (p, part) in parts.iter().enumerate() {
        let raw = part.lines;
        match part.kind {
            Kind::Removed | Kind::Added => {
                first_changed_line.get_or_insert(new_no);
                for line in raw {
                    if part.kind == Kind::Added {
                        out.push(format!("+{new_no:>width$} {line}"));
                        new_no += 1;
                    } else {
                        out.push(format!("-{old_no:>width$} {line}"));
                        old_no += 1;
                    }
                }
                last_was_change = true;
            }
            Kind::Same => {
                let next_is_change = parts.get(p + 1).is_some_and(|n| n.kind != Kind::Same);
                let show = |out: &mut Vec<String>, lines: &[&str], old_no: &mut usize, new_no: &mut usize| {
                    for line in lines {
                        context(out, *old_no, line);
                        *old_no += 1;
                        *new_no += 1;
                    }
                };
                match (last_was_change, next_is_change) {
                    (true, true) if raw.len() <= context_lines * 2 => {
                        show(&mut out, raw, &mut old_no, &mut new_no);
                    }
                    (true, true) => {
                        let skipped = raw.len() - 2 * context_lines;
                        show(&mut out, &raw[..context_lines], &mut old_no, &mut new_no);
                        out.push(elided.clone());
                        old_no += skipped;
                        new_no += skipped;
                        show(&mut out, &raw[raw.len() - context_lines..], &mut old_no, &mut new_no);
                    }
                    (true, false) => {
                        let shown = raw.len().min(context_lines);
                        show(&mut out, &raw[..shown], &mut old_no, &mut new_no);
                        let skipped = raw.len() - shown;
                        if skipped > 0 {
                            out.push(elided.clone());
                            old_no += skipped;
                            new_no += skipped;
                        }
                    }
                    (false, true) => {
                        let skipped = raw.len().saturating_sub(context_lines);
                        if skipped > 0 {
                            out.push(elided.clone());
                            old_no += skipped;
                            new_no += skipped;
                        }
                        show(&mut out, &raw[skipped..], &mut old_no, &mut new_no);
                    }
                    (false, false) => {
                        old_no += raw.len();
                        new_no += raw.len();
                    }
                }
                last_was_change = false;
            }
        }
    }
    DiffString {
        diff: out.join("\n"),
        first_changed_line,
    }
}

fn extend(range: Option<(usize, usize)>, start: usize, end: usize) -> (usize, usize) {
    match range {
        Some((s, e)) => (s.min(start), e.max(end)),
        None => (start, end),
    }
}

/// A line token without its `"\n"` (jsdiff's `value.split("\n")` minus the trailing empty item).
fn strip_nl(line: &str) -> &str {
    line.strip_suffix('\n').unwrap_or(line)
}

/// JS `text.split("\n").length`.
fn line_count(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1
}
