//! Text the reports write (transcripts, `divergence.md`, one-line reasons): fenced code blocks
//! that hold any text, and the first line of a message cut to a readable length.
//!
//! Depends on nothing else in the crate.

/// The first non-blank line of `text`, trimmed, cut at 200 characters (with `…`): what a
/// one-line reason shows of a longer message.
pub fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .trim();
    if line.chars().count() > 200 {
        format!("{}…", line.chars().take(200).collect::<String>())
    } else {
        line.to_owned()
    }
}

/// A fenced block of `text` (info string `lang`) whose fence is longer than any backtick run
/// inside it, so no text can close it early; one trailing newline of `text` is the block's own.
pub fn fenced(lang: &str, text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    let fence = "`".repeat(longest.max(2) + 1);
    let body = text.strip_suffix('\n').unwrap_or(text);
    format!("{fence}{lang}\n{body}\n{fence}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fence_outgrows_every_backtick_run_inside() {
        assert_eq!(fenced("text", "a\n"), "```text\na\n```\n");
        assert_eq!(fenced("diff", "a"), "```diff\na\n```\n");
        assert_eq!(fenced("", "a\n\n"), "```\na\n\n```\n");
        assert_eq!(
            fenced("md", "x ```` y ` z"),
            "`````md\nx ```` y ` z\n`````\n"
        );
    }
}
