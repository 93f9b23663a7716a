//! Pi's `generateDiffString` (spec section 3, "Diff"): a line diff with line numbers and four
//! lines of context, not a unified diff. It only feeds `details` (the model never sees it).
//!
//! The line diff is our own implementation of jsdiff 8's `diffLines` algorithm (a forward Myers
//! search), so where two minimal diffs tie it picks the one Pi picks. Pure text in, text out.

/// Lines of context Pi shows around a change.
pub const CONTEXT_LINES: usize = 4;

/// The diff and the new-file line number of the first change (`None` if nothing changed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffString {
    pub diff: String,
    pub first_changed_line: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineKind {
    Same,
    Removed,
    Added,
}

/// One jsdiff "part": a run of lines of one kind.
struct DiffPart<'a> {
    kind: LineKind,
    lines: &'a [&'a str],
}

/// Pi's `generateDiffString(old, new, contextLines)`.
pub fn generate_diff_string(old: &str, new: &str, context_lines: usize) -> DiffString {
    // jsdiff's first step follows the common run of equal lines from the start, which always ends
    // exactly where the common prefix of whole lines ends; diffing the rest gives the same runs.
    // Splitting it off saves tokenising it (most of a large file for a small edit).
    let split = common_line_prefix(old, new);
    let prefix_lines = memchr::memchr_iter(b'\n', &old.as_bytes()[..split]).count();
    let (old_tail, new_tail) = (&old[split..], &new[split..]);
    let old_tokens: Vec<&str> = old_tail.split_inclusive('\n').collect();
    let new_tokens: Vec<&str> = new_tail.split_inclusive('\n').collect();
    let old_lines: Vec<&str> = old_tokens.iter().map(|l| strip_nl(l)).collect();
    let new_lines: Vec<&str> = new_tokens.iter().map(|l| strip_nl(l)).collect();
    let mut parts: Vec<DiffPart<'_>> = Vec::new();
    let (mut old_at, mut new_at) = (0, 0);
    for (kind, count) in diff_lines(&old_tokens, &new_tokens) {
        let lines = match kind {
            LineKind::Removed => &old_lines[old_at..old_at + count],
            _ => &new_lines[new_at..new_at + count],
        };
        match kind {
            LineKind::Same => {
                old_at += count;
                new_at += count;
            }
            LineKind::Removed => old_at += count,
            LineKind::Added => new_at += count,
        }
        parts.push(DiffPart { kind, lines });
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

    // The common prefix is an unchanged run with no change before it.
    if prefix_lines > 0 {
        if parts.first().is_some_and(|p| p.kind != LineKind::Same) {
            let skipped = prefix_lines.saturating_sub(context_lines);
            if skipped > 0 {
                out.push(elided.clone());
                old_no += skipped;
                new_no += skipped;
            }
            let prefix = &old[..split - 1];
            let mut shown: Vec<&str> = prefix.rsplit('\n').take(prefix_lines - skipped).collect();
            shown.reverse();
            for line in shown {
                context(&mut out, old_no, line);
                old_no += 1;
                new_no += 1;
            }
        } else {
            old_no += prefix_lines;
            new_no += prefix_lines;
        }
    }

    for (p, part) in parts.iter().enumerate() {
        let raw = part.lines;
        match part.kind {
            LineKind::Removed | LineKind::Added => {
                first_changed_line.get_or_insert(new_no);
                for line in raw {
                    if part.kind == LineKind::Added {
                        out.push(format!("+{new_no:>width$} {line}"));
                        new_no += 1;
                    } else {
                        out.push(format!("-{old_no:>width$} {line}"));
                        old_no += 1;
                    }
                }
                last_was_change = true;
            }
            LineKind::Same => {
                let next_is_change = parts.get(p + 1).is_some_and(|n| n.kind != LineKind::Same);
                let show = |out: &mut Vec<String>,
                            lines: &[&str],
                            old_no: &mut usize,
                            new_no: &mut usize| {
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
                        show(
                            &mut out,
                            &raw[raw.len() - context_lines..],
                            &mut old_no,
                            &mut new_no,
                        );
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

/// One jsdiff change object under construction: a run of `count` tokens of one kind, linked to
/// the run before it (an index into the arena).
struct Component {
    count: usize,
    kind: LineKind,
    previous: Option<usize>,
}

/// jsdiff's `bestPath` entry: how far along the old tokens a path on one diagonal got.
#[derive(Clone, Copy)]
struct PathHead {
    old_pos: isize,
    last: Option<usize>,
}

/// `bestPath`, indexed by diagonal (negative ones included).
#[derive(Default)]
struct Diagonals {
    non_negative: Vec<Option<PathHead>>,
    negative: Vec<Option<PathHead>>,
}

impl Diagonals {
    fn slot(&mut self, diagonal: isize) -> &mut Option<PathHead> {
        let (list, at) = if diagonal >= 0 {
            (&mut self.non_negative, diagonal.unsigned_abs())
        } else {
            (&mut self.negative, diagonal.unsigned_abs() - 1)
        };
        if list.len() <= at {
            list.resize(at + 1, None);
        }
        &mut list[at]
    }
}

/// jsdiff 8's `diffLines` (the forward O(ND) Myers search of `Diff.diffWithOptionsObj`, its
/// `addToPath`, `extractCommon` and `buildValues`), so ties break exactly as in Pi. Returns the
/// change runs in order as (kind, number of lines).
fn diff_lines(old: &[&str], new: &[&str]) -> Vec<(LineKind, usize)> {
    let old_len = old.len() as isize;
    let new_len = new.len() as isize;
    let mut arena: Vec<Component> = Vec::new();

    let extract_common = |arena: &mut Vec<Component>, head: &mut PathHead, diagonal: isize| {
        let mut old_pos = head.old_pos;
        let mut new_pos = old_pos - diagonal;
        let mut common = 0;
        while new_pos + 1 < new_len
            && old_pos + 1 < old_len
            && old[(old_pos + 1) as usize] == new[(new_pos + 1) as usize]
        {
            new_pos += 1;
            old_pos += 1;
            common += 1;
        }
        if common > 0 {
            arena.push(Component {
                count: common,
                kind: LineKind::Same,
                previous: head.last,
            });
            head.last = Some(arena.len() - 1);
        }
        head.old_pos = old_pos;
        new_pos
    };
    let add_to_path = |arena: &mut Vec<Component>, head: PathHead, kind: LineKind| {
        let old_pos = head.old_pos + isize::from(kind == LineKind::Removed);
        let component = match head.last.map(|i| (i, &arena[i])) {
            Some((_, last)) if last.kind == kind => Component {
                count: last.count + 1,
                kind,
                previous: last.previous,
            },
            _ => Component {
                count: 1,
                kind,
                previous: head.last,
            },
        };
        arena.push(component);
        PathHead {
            old_pos,
            last: Some(arena.len() - 1),
        }
    };
    let build = |arena: &Vec<Component>, mut last: Option<usize>| {
        let mut runs = Vec::new();
        while let Some(i) = last {
            runs.push((arena[i].kind, arena[i].count));
            last = arena[i].previous;
        }
        runs.reverse();
        runs
    };

    let mut best = Diagonals::default();
    let mut first = PathHead {
        old_pos: -1,
        last: None,
    };
    let new_pos = extract_common(&mut arena, &mut first, 0);
    if first.old_pos + 1 >= old_len && new_pos + 1 >= new_len {
        return build(&arena, first.last);
    }
    *best.slot(0) = Some(first);
    let (mut min_diagonal, mut max_diagonal) = (isize::MIN / 2, isize::MAX / 2);
    let mut edit_length: isize = 1;
    while edit_length <= old_len + new_len {
        let mut diagonal = min_diagonal.max(-edit_length);
        while diagonal <= max_diagonal.min(edit_length) {
            let remove_path = best.slot(diagonal - 1).take();
            let add_path = *best.slot(diagonal + 1);
            let can_add = add_path.is_some_and(|p| (0..new_len).contains(&(p.old_pos - diagonal)));
            let can_remove = remove_path.is_some_and(|p| p.old_pos + 1 < old_len);
            if !can_add && !can_remove {
                *best.slot(diagonal) = None;
                diagonal += 2;
                continue;
            }
            // jsdiff prefers the path that got further along the old text; on a tie, removal.
            let take_add = !can_remove
                || (can_add && remove_path.map(|p| p.old_pos) < add_path.map(|p| p.old_pos));
            let mut head = match (take_add, add_path, remove_path) {
                (true, Some(add), _) => add_to_path(&mut arena, add, LineKind::Added),
                (false, _, Some(remove)) => add_to_path(&mut arena, remove, LineKind::Removed),
                _ => unreachable!("the chosen path exists"),
            };
            let new_pos = extract_common(&mut arena, &mut head, diagonal);
            if head.old_pos + 1 >= old_len && new_pos + 1 >= new_len {
                return build(&arena, head.last);
            }
            *best.slot(diagonal) = Some(head);
            if head.old_pos + 1 >= old_len {
                max_diagonal = max_diagonal.min(diagonal - 1);
            }
            if new_pos + 1 >= new_len {
                min_diagonal = min_diagonal.max(diagonal + 1);
            }
            diagonal += 2;
        }
        edit_length += 1;
    }
    unreachable!("an edit script of length old + new always exists")
}

/// The length of the longest common prefix of `old` and `new` that ends with a line break.
fn common_line_prefix(old: &str, new: &str) -> usize {
    const CHUNK: usize = 4096;
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + CHUNK <= n && a[i..i + CHUNK] == b[i..i + CHUNK] {
        i += CHUNK;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    memchr::memrchr(b'\n', &a[..i]).map_or(0, |nl| nl + 1)
}

/// A line token without its `"\n"` (jsdiff's `value.split("\n")` minus the trailing empty item).
fn strip_nl(line: &str) -> &str {
    line.strip_suffix('\n').unwrap_or(line)
}

/// JS `text.split("\n").length`.
fn line_count(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1
}
