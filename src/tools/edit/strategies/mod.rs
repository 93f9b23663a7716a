//! The matching seam of `edit`: how a call's `oldText`s are located in the file, and the family
//! of strategies we ship, one small file each. Every file's doc comment says which agent's
//! behaviour it follows and where it differs.
//!
//! Two kinds of strategy implement [`EditStrategy`]:
//!
//! - whole-call strategies: `pi` (Pi's matcher, byte-faithful: once any edit needs its fuzzy tier
//!   the whole file is rewritten normalised) and `exact`;
//! - ladders of per-edit tiers ([`Ladder`]): every other name. Each edit of a call is located on
//!   its own, against the original text: exactly first, as `exact` does, then by the first tier
//!   that finds it; the replacements are then checked for overlaps and spliced in one pass. A
//!   single tier (`indent`, `anchors`, ...) is a ladder of one; `chain:a,b,c` and the presets
//!   (`codex`, `cline`, `opencode`, `safe`) are longer ladders.
//!
//! The guarantees every strategy keeps: an `oldText` that occurs exactly once is replaced there,
//! byte for byte, before any tier of its own is tried (`pi` as Pi does: it counts occurrences in
//! normalised space, so it refuses an exact match whose normalised form repeats); an `oldText`
//! must be unique, and an ambiguous match in any tier is an error with the count (the ladder
//! stops there, it never guesses); the tiers that score lines (`anchors`, with the lines the
//! model dropped or added, and `similarity`) refuse a near-copy, a block in which a whole
//! identifier, keyword, number or literal differs (see `near_copy`), with an error naming the
//! line (`elision` finds its pieces exactly, so it never takes one); every edit is matched
//! against the original text; overlapping edits are an error; a result identical to the input
//! is an error. The tool strips the BOM and turns CRLF into LF before the strategy runs and
//! restores both when it writes, so a strategy sees text only and never touches files.
//!
//! Depends on nothing in `tools` but the shared result types and the text normalisations.

mod anchors;
mod chain;
mod collapsed;
mod elision;
mod escapes;
mod exact;
mod indent;
mod indentation;
mod levenshtein;
mod line_numbers;
mod lines;
mod near_copy;
mod opencode;
mod pi;
mod pi_local;
mod presets;
mod similarity;
mod trimmed_lines;
mod unicode;
mod whitespace;

#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::sync::Arc;

#[cfg(test)]
use crate::tools::MatchTier;
use crate::tools::{EditFailure, LocatedEdit};

pub use chain::Ladder;
pub use elision::is_marker as is_elision_marker;
pub use exact::ExactStrategy;
pub use pi::PiStrategy;

use lines::Haystack;

/// One replacement of an edit call, with `oldText` and `newText` already LF-normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    pub old_text: String,
    pub new_text: String,
}

impl Replacement {
    pub fn new(old_text: impl Into<String>, new_text: impl Into<String>) -> Self {
        Replacement {
            old_text: old_text.into(),
            new_text: new_text.into(),
        }
    }
}

/// A successful match of every edit: the text the replacements were applied to (the file, or its
/// normalised form), the result, and how each edit was located (in edit order).
#[derive(Debug, Clone, PartialEq)]
pub struct Applied<'a> {
    /// What the replacements were applied to; the diff is computed from this to `new_content`.
    pub base: Cow<'a, str>,
    pub new_content: String,
    pub tiers: Vec<LocatedEdit>,
}

/// A failed edit call: why, and how the edits located before the failure were found.
#[derive(Debug, Clone, PartialEq)]
pub struct Miss {
    pub failure: EditFailure,
    pub tiers: Vec<LocatedEdit>,
    /// When the edit that was not found nearly copies a block of the file: which block, and the
    /// line that differs (the failure is then [`EditFailure::NotFound`]).
    pub near_copy: Option<NearCopy>,
}

impl Miss {
    fn new(failure: EditFailure, tiers: Vec<LocatedEdit>) -> Self {
        Miss {
            failure,
            tiers,
            near_copy: None,
        }
    }

    /// The text the model gets: Pi's error for the failure, and for a near-copy the line that
    /// differs, so that the model can read it again.
    pub fn message(&self, edit_count: usize, path: &str) -> String {
        let base = failure_message(&self.failure, edit_count, path);
        match &self.near_copy {
            Some(near) => format!("{base} {}", near.describe()),
            None => base,
        }
    }
}

/// A block of the file that an `oldText` nearly copies: the same code but for a line in which a
/// whole identifier, keyword, number or literal is another (or a line that is not there), so
/// the model is describing code that is not in the file. Line numbers count from 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NearCopy {
    pub first_line: usize,
    pub last_line: usize,
    /// The file's line that differs and its text, when the model's line was aligned with one.
    pub file_line: Option<(usize, String)>,
    /// `oldText`'s line that differs.
    pub model_line: String,
}

impl NearCopy {
    /// One or two sentences for the model.
    pub fn describe(&self) -> String {
        let block = if self.first_line == self.last_line {
            format!("Line {} of the file is", self.first_line)
        } else {
            format!(
                "Lines {}-{} of the file are",
                self.first_line, self.last_line
            )
        };
        let model = self.model_line.trim_end();
        match &self.file_line {
            Some((line, text)) => format!(
                "{block} nearly the same text, but line {line} differs: the file has `{}` where oldText has `{model}`. Read the file again and copy oldText from it.",
                text.trim_end()
            ),
            None => format!(
                "{block} nearly the same text, but oldText's line `{model}` is not there in that order. Read the file again and copy oldText from it."
            ),
        }
    }
}

/// How an edit call's `oldText`s are located in the file. `pi` (exact, then fuzzy) is the default.
///
/// A strategy reports failures as [`EditFailure`]s (never `File` or `InvalidArguments`, which
/// belong to the tool); the tool turns them into Pi's texts with [`failure_message`].
pub trait EditStrategy: Send + Sync {
    /// The strategy's name as users select it (`pi`, `exact`, `chain:exact,indent`, ...).
    fn name(&self) -> &str;

    /// Locates every edit in `content` (BOM stripped, LF line endings) and applies them all
    /// against that same original text.
    fn apply<'a>(&self, content: &'a str, edits: &[Replacement]) -> Result<Applied<'a>, Miss>;
}

/// One strategy as `harness edits strategies` lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrategyInfo {
    /// The name to select it by (`similarity:T` takes a threshold).
    pub name: &'static str,
    /// One line on what it does and whose behaviour it follows.
    pub summary: &'static str,
    /// Whether it can be a step of `chain:...` (whole-call strategies cannot).
    pub chainable: bool,
}

const fn info(name: &'static str, summary: &'static str, chainable: bool) -> StrategyInfo {
    StrategyInfo {
        name,
        summary,
        chainable,
    }
}

/// Every strategy, the default first; then the presets. `chain:a,b,c` combines chainable ones.
pub const STRATEGIES: &[StrategyInfo] = &[
    info(
        "pi",
        "Pi 0.73.1: exact, else NFKC/trailing-space/punctuation-normalised; a fuzzy match rewrites the whole file normalised (default)",
        false,
    ),
    info("exact", "exact bytes only, unique, never normalised", true),
    info(
        "pi-local",
        "Pi's normalisation used only to locate: bytes outside the matched span stay as they were",
        true,
    ),
    info(
        "trimmed-lines",
        "line windows equal after trimming each line (Cline, opencode); newText inserted as sent",
        true,
    ),
    info(
        "whitespace",
        "runs of whitespace collapsed to one space, at token boundaries (opencode's idea, stricter)",
        true,
    ),
    info(
        "indent",
        "lines equal but for a consistent indentation shift, tabs/spaces or nesting unit; newText re-indented (aider, Roo Code)",
        true,
    ),
    info(
        "unicode",
        "Codex's seek_sequence ladder: lines exact, trim_end, trim, then Unicode punctuation folded",
        true,
    ),
    info(
        "escapes",
        "oldText sent with literal \\n, \\t, \\\" escapes: unescaped to locate, newText unescaped alike",
        true,
    ),
    info(
        "line-numbers",
        "prefixes like `12 | `, `12\\t` or `12→` copied from read output stripped (Roo Code)",
        true,
    ),
    info(
        "elision",
        "`...` or `// ... existing code ...` lines in oldText elide unchanged lines (aider)",
        true,
    ),
    info(
        "anchors",
        "first and last lines as anchors, middle lines the same or with typos, scoring >= T (default 0.8; `anchors:T`); near-copies refused",
        true,
    ),
    info(
        "similarity:T",
        "best line window by normalised edit distance >= T (Roo Code); near-copies and close runners-up refused",
        true,
    ),
    info("codex", "preset: exact, then Codex's unicode ladder", true),
    info(
        "cline",
        "preset: Cline's replace_in_file ladder: exact, trimmed lines, block anchors (no middle check)",
        true,
    ),
    info(
        "opencode",
        "preset: opencode's replacers in order (block anchors accepted at similarity 0)",
        true,
    ),
    info(
        "safe",
        "preset (recommended): exact, pi-local, indent, line-numbers, escapes, elision, anchors",
        true,
    ),
];

/// The names of [`STRATEGIES`], the default first (`similarity:T` with its parameter's letter).
pub fn strategy_names() -> Vec<&'static str> {
    STRATEGIES.iter().map(|s| s.name).collect()
}

/// Why a strategy name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StrategyError {
    #[error("unknown edit strategy `{name}`")]
    Unknown { name: String },
    #[error("malformed chain `{spec}`: {reason}")]
    MalformedChain { spec: String, reason: String },
    #[error("bad threshold `{value}` in `{spec}`: it must be a number above 0 and at most 1")]
    BadThreshold { spec: String, value: String },
    #[error("`{name}` cannot be a step of a chain: it rewrites the whole call")]
    NotChainable { name: String },
}

impl StrategyError {
    /// The hint to print under the error: the valid names.
    pub fn hint(&self) -> String {
        format!(
            "valid strategies: {}; combine them with chain:a,b,c (all but pi)",
            strategy_names().join(", ")
        )
    }
}

/// Parses a strategy name: a name of [`STRATEGIES`], `anchors:T`, `similarity:T`, or
/// `chain:a,b,c` of chainable ones. The CLI calls it up front and exits 2 on an error.
pub fn parse_strategy(spec: &str) -> Result<Arc<dyn EditStrategy>, StrategyError> {
    let spec = spec.trim();
    match spec {
        "pi" => return Ok(Arc::new(PiStrategy)),
        "exact" => return Ok(Arc::new(ExactStrategy)),
        _ => {}
    }
    if let Some(steps) = spec.strip_prefix("chain:") {
        let mut tiers = Vec::new();
        let names: Vec<&str> = steps.split(',').map(str::trim).collect();
        if names.iter().any(|n| n.is_empty()) {
            return Err(StrategyError::MalformedChain {
                spec: spec.to_owned(),
                reason: "a step is empty (write chain:a,b,c)".to_owned(),
            });
        }
        for name in names {
            if name.starts_with("chain:") {
                return Err(StrategyError::MalformedChain {
                    spec: spec.to_owned(),
                    reason: "chains do not nest".to_owned(),
                });
            }
            if name == "pi" {
                return Err(StrategyError::NotChainable {
                    name: name.to_owned(),
                });
            }
            tiers.extend(ladder_tiers(name)?);
        }
        return Ok(Arc::new(Ladder::new(spec, tiers)));
    }
    let tiers = ladder_tiers(spec)?;
    Ok(Arc::new(Ladder::new(spec, tiers)))
}

/// The strategy called `name` (any spec [`parse_strategy`] accepts), if there is one.
pub fn strategy_by_name(name: &str) -> Option<Arc<dyn EditStrategy>> {
    parse_strategy(name).ok()
}

/// The tiers of one chainable name.
fn ladder_tiers(name: &str) -> Result<Vec<Arc<dyn Locator>>, StrategyError> {
    let (base, param) = match name.split_once(':') {
        Some((base, param)) => (base, Some(param)),
        None => (name, None),
    };
    let threshold = |default: f64| -> Result<f64, StrategyError> {
        let Some(text) = param else {
            return Ok(default);
        };
        match text.trim().parse::<f64>() {
            Ok(t) if t > 0.0 && t <= 1.0 => Ok(t),
            _ => Err(StrategyError::BadThreshold {
                spec: name.to_owned(),
                value: text.to_owned(),
            }),
        }
    };
    let no_param = || -> Result<(), StrategyError> {
        match param {
            None => Ok(()),
            Some(_) => Err(StrategyError::Unknown {
                name: name.to_owned(),
            }),
        }
    };
    let one = |l: Arc<dyn Locator>| vec![l];
    Ok(match base {
        "exact" => {
            no_param()?;
            one(Arc::new(exact::Exact))
        }
        "pi-local" => {
            no_param()?;
            one(Arc::new(pi_local::PiLocal))
        }
        "trimmed-lines" => {
            no_param()?;
            one(Arc::new(trimmed_lines::TrimmedLines))
        }
        "whitespace" => {
            no_param()?;
            one(Arc::new(whitespace::Whitespace))
        }
        "indent" => {
            no_param()?;
            one(Arc::new(indent::Indent))
        }
        "unicode" => {
            no_param()?;
            one(Arc::new(unicode::Unicode))
        }
        "escapes" => {
            no_param()?;
            one(Arc::new(escapes::Escapes))
        }
        "line-numbers" => {
            no_param()?;
            one(Arc::new(line_numbers::LineNumbers))
        }
        "elision" => {
            no_param()?;
            one(Arc::new(elision::Elision))
        }
        "anchors" => one(Arc::new(anchors::Anchors::new(threshold(
            anchors::DEFAULT_THRESHOLD,
        )?))),
        "similarity" => one(Arc::new(similarity::Similarity::new(threshold(
            similarity::DEFAULT_THRESHOLD,
        )?))),
        "codex" | "cline" | "opencode" | "safe" => {
            no_param()?;
            presets::tiers(base)
        }
        _ => {
            return Err(StrategyError::Unknown {
                name: name.to_owned(),
            });
        }
    })
}

/// Pi's error text for `failure` in a call with `edit_count` edits on the raw path argument
/// `path` (spec section 3, "Exact error strings").
///
/// `File` and `InvalidArguments` have no fixed text (the tool reports the operating system's or
/// the validator's message); they get a generic one here.
pub fn failure_message(failure: &EditFailure, edit_count: usize, path: &str) -> String {
    let single = edit_count == 1;
    match *failure {
        EditFailure::NoEdits => {
            "Edit tool input is invalid. edits must contain at least one replacement.".to_owned()
        }
        EditFailure::EmptyOldText { .. } if single => {
            format!("oldText must not be empty in {path}.")
        }
        EditFailure::EmptyOldText { index } => {
            format!("edits[{index}].oldText must not be empty in {path}.")
        }
        EditFailure::NotFound { .. } if single => format!(
            "Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines."
        ),
        EditFailure::NotFound { index } => format!(
            "Could not find edits[{index}] in {path}. The oldText must match exactly including all whitespace and newlines."
        ),
        EditFailure::NotUnique { count, .. } if single => format!(
            "Found {count} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique."
        ),
        EditFailure::NotUnique { index, count } => format!(
            "Found {count} occurrences of edits[{index}] in {path}. Each oldText must be unique. Please provide more context to make it unique."
        ),
        EditFailure::Overlap { first, second } => format!(
            "edits[{first}] and edits[{second}] overlap in {path}. Merge them into one edit or target disjoint regions."
        ),
        EditFailure::NoChange if single => format!(
            "No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
        ),
        EditFailure::NoChange => {
            format!("No changes made to {path}. The replacements produced identical content.")
        }
        EditFailure::File => format!("Could not edit file: {path}."),
        EditFailure::InvalidArguments => {
            format!("Edit tool input is invalid for {path}.")
        }
    }
}

// ---- the per-edit tiers and the shared pieces ------------------------------------------------

/// One tier of a [`Ladder`]: locates one edit in the original text.
pub(crate) trait Locator: Send + Sync {
    fn locate(&self, hay: &Haystack<'_>, edit: &Replacement) -> Locate;

    /// True for the `exact` tier, which every ladder runs first anyway.
    fn is_exact(&self) -> bool {
        false
    }
}

/// What a tier found for one edit.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Locate {
    Found(Found),
    NotFound,
    /// Found in more than one place (the count): an error, never a guess.
    Ambiguous(usize),
    /// Not found, but a block of the file nearly copies `oldText` with a line that differs by a
    /// substitution: an error that names the line, never a guess (the ladder stops there).
    NearCopy(NearCopy),
}

/// Where one edit matched (byte span of the original) and what replaces it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Found {
    pub start: usize,
    pub end: usize,
    /// The text to put there, when the tier changed `newText` (re-indented, unescaped, ...).
    pub new_text: Option<String>,
    pub located: LocatedEdit,
}

impl Found {
    fn exact(tier: &str, start: usize, end: usize) -> Self {
        Found {
            start,
            end,
            new_text: None,
            located: LocatedEdit::exact(tier),
        }
    }

    fn fuzzy(tier: &str, start: usize, end: usize, new_text: Option<String>) -> Self {
        Found {
            start,
            end,
            new_text,
            located: LocatedEdit::fuzzy(tier, None),
        }
    }

    fn with_score(mut self, score: f64) -> Self {
        self.located.score = Some(score);
        self
    }
}

/// The result of a tier that collected every place it matched: one is found, more is ambiguous.
fn unique_or_ambiguous(mut hits: Vec<Found>) -> Locate {
    hits.sort_by_key(|f| (f.start, f.end));
    hits.dedup_by_key(|f| (f.start, f.end));
    match hits.len() {
        0 => Locate::NotFound,
        1 => Locate::Found(hits.remove(0)),
        n => Locate::Ambiguous(n),
    }
}

/// Where one edit matched in the base text (byte offsets), and its replacement.
#[derive(Debug, Clone)]
struct Located<'e> {
    edit: usize,
    start: usize,
    end: usize,
    new_text: Cow<'e, str>,
}

/// Pi checks every `oldText` for emptiness before matching anything.
fn check_not_empty(edits: &[Replacement]) -> Result<(), Miss> {
    match edits.iter().position(|e| e.old_text.is_empty()) {
        Some(index) => Err(Miss::new(EditFailure::EmptyOldText { index }, Vec::new())),
        None => Ok(()),
    }
}

/// Sorts the matches by position (stably, as JS does), rejects overlaps with the original edit
/// indices, splices the new texts in, and rejects a result identical to the base.
fn splice(base: &str, mut located: Vec<Located<'_>>) -> Result<String, EditFailure> {
    located.sort_by_key(|m| m.start);
    for pair in located.windows(2) {
        let (prev, cur) = (&pair[0], &pair[1]);
        if prev.end > cur.start {
            return Err(EditFailure::Overlap {
                first: prev.edit,
                second: cur.edit,
            });
        }
    }
    let grown: usize = located.iter().map(|m| m.new_text.len()).sum();
    let mut out = String::with_capacity(base.len() + grown);
    let mut cursor = 0;
    for m in &located {
        out.push_str(&base[cursor..m.start]);
        out.push_str(&m.new_text);
        cursor = m.end;
    }
    out.push_str(&base[cursor..]);
    if out == base {
        return Err(EditFailure::NoChange);
    }
    Ok(out)
}

/// A `MatchTier::Exact` located edit, the tier `exact`.
fn exact_tier() -> LocatedEdit {
    LocatedEdit::exact("exact")
}
