//! Ladders: every strategy but `pi` and `exact` is a list of per-edit tiers tried in order
//! (`chain:a,b,c`, the presets, and each single tier as a ladder of one). Each edit is located
//! on its own against the original text: first exactly, as `exact` does, whatever the tiers
//! (an `oldText` that occurs once byte for byte is replaced there, and one that occurs more than
//! once is ambiguous); then by the first tier that finds it. A tier that finds it in more than
//! one place, or finds only a near-copy of it, ends the search with an error (a later, looser
//! tier would only find more places, and picking one would be a guess). Then the replacements
//! are checked for overlaps and spliced in one pass, as Pi does.

use std::borrow::Cow;
use std::sync::Arc;

use super::exact::locate_exact;
use super::lines::Haystack;
use super::{
    Applied, EditStrategy, Locate, Located, Locator, Miss, Replacement, check_not_empty, splice,
};
use crate::tools::EditFailure;

/// A named list of tiers, after the exact match every ladder tries first.
pub struct Ladder {
    name: String,
    tiers: Vec<Arc<dyn Locator>>,
}

impl Ladder {
    /// The ladder `name` of `tiers`; an `exact` tier among them is dropped, since every ladder
    /// matches exactly first.
    pub(crate) fn new(name: &str, mut tiers: Vec<Arc<dyn Locator>>) -> Self {
        tiers.retain(|t| !t.is_exact());
        Ladder {
            name: name.to_owned(),
            tiers,
        }
    }

    /// Where one edit goes: exactly, else by the first tier that says anything.
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate {
        let exact = locate_exact(hay.text, &edit.old_text, "exact");
        if !matches!(exact, Locate::NotFound) {
            return exact;
        }
        for tier in &self.tiers {
            let outcome = tier.locate(hay, edit);
            if !matches!(outcome, Locate::NotFound) {
                return outcome;
            }
        }
        Locate::NotFound
    }
}

impl EditStrategy for Ladder {
    fn name(&self) -> &str {
        &self.name
    }

    fn apply<'a>(&self, content: &'a str, edits: &[Replacement]) -> Result<Applied<'a>, Miss> {
        check_not_empty(edits)?;
        let hay = Haystack::new(content);
        let mut tiers = Vec::with_capacity(edits.len());
        let mut located = Vec::with_capacity(edits.len());
        for (index, edit) in edits.iter().enumerate() {
            match self.locate(&hay, edit) {
                Locate::Found(found) => {
                    tiers.push(found.located);
                    located.push(Located {
                        edit: index,
                        start: found.start,
                        end: found.end,
                        new_text: match found.new_text {
                            Some(text) => Cow::Owned(text),
                            None => Cow::Borrowed(edit.new_text.as_str()),
                        },
                    });
                }
                Locate::NotFound => {
                    return Err(Miss::new(EditFailure::NotFound { index }, tiers));
                }
                Locate::NearCopy(near) => {
                    let mut miss = Miss::new(EditFailure::NotFound { index }, tiers);
                    miss.near_copy = Some(near);
                    return Err(miss);
                }
                Locate::Ambiguous(count) => {
                    return Err(Miss::new(EditFailure::NotUnique { index, count }, tiers));
                }
            }
        }
        match splice(content, located) {
            Ok(new_content) => Ok(Applied {
                base: Cow::Borrowed(content),
                new_content,
                tiers,
            }),
            Err(failure) => Err(Miss::new(failure, tiers)),
        }
    }
}
