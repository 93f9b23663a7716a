//! Ladders: every strategy but `pi` and `exact` is a list of per-edit tiers tried in order
//! (`chain:a,b,c`, the presets, and each single tier as a ladder of one). Each edit is located
//! on its own against the original text by the first tier that finds it; a tier that finds it
//! in more than one place ends the search with an error (a later, looser tier would only find
//! more places, and picking one would be a guess). Then the replacements are checked for
//! overlaps and spliced in one pass, as Pi does.

use std::borrow::Cow;
use std::sync::Arc;

use super::lines::Haystack;
use super::{
    Applied, EditStrategy, Locate, Located, Locator, Miss, Replacement, check_not_empty, splice,
};
use crate::tools::EditFailure;

/// A named list of tiers.
pub struct Ladder {
    name: String,
    tiers: Vec<Arc<dyn Locator>>,
}

impl Ladder {
    pub(crate) fn new(name: &str, tiers: Vec<Arc<dyn Locator>>) -> Self {
        Ladder {
            name: name.to_owned(),
            tiers,
        }
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
            let mut outcome = Locate::NotFound;
            for tier in &self.tiers {
                outcome = tier.locate(&hay, edit);
                if !matches!(outcome, Locate::NotFound) {
                    break;
                }
            }
            match outcome {
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
