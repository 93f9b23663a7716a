//! `escapes`: `oldText` sent escaped one level too many (the model JSON-encoded it twice), so
//! the file's line breaks arrive as a literal `\n`, tabs as `\t`, quotes as `\"`. The escapes
//! are undone (`\n`, `\t`, `\r`, `\"`, `\'`, `` \` ``, `\$`, `\\`) and the result searched
//! exactly. `newText` was escaped the same way, so it is unescaped too when it carries the same
//! signs: it contains an escape and, if the unescaped `oldText` spans lines that the escaped one
//! did not, it has no real line break of its own.
//!
//! opencode's `EscapeNormalizedReplacer` undoes the same escapes to locate but inserts `newText`
//! as sent, literal `\n`s and all; that is the difference.

use super::super::normalize::normalize_to_lf;
use super::exact::locate_exact;
use super::lines::Haystack;
use super::{Locate, Locator, Replacement};

pub(super) struct Escapes;

/// Undoes one level of escaping; `None` if there was none to undo.
pub(crate) fn unescape(text: &str) -> Option<String> {
    if !text.contains('\\') {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    let mut changed = false;
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(next) = chars.next() else {
            out.push('\\');
            break;
        };
        let unescaped = match next {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            '"' | '\'' | '`' | '\\' | '$' => next,
            other => {
                out.push('\\');
                out.push(other);
                continue;
            }
        };
        changed = true;
        out.push(unescaped);
    }
    changed.then(|| normalize_to_lf(&out).into_owned())
}

impl Locator for Escapes {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        let Some(old) = unescape(&edit.old_text) else {
            return Locate::NotFound;
        };
        match locate_exact(hay.text, &old, "escapes") {
            Locate::Found(mut found) => {
                found.located.kind = crate::tools::MatchTier::Fuzzy;
                let lines_appeared = !edit.old_text.contains('\n') && old.contains('\n');
                let new_is_escaped = !(lines_appeared && edit.new_text.contains('\n'));
                found.new_text = if new_is_escaped {
                    unescape(&edit.new_text)
                } else {
                    None
                };
                Locate::Found(found)
            }
            other => other,
        }
    }
}
