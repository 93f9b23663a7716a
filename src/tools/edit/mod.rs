//! `edit`: Pi's edit tool (spec section 3), with the matcher behind [`EditStrategy`].
//!
//! The tool does what Pi's `execute` does around the matcher: `prepareArguments`,
//! `validateEditInput`, path resolution, the per-file mutation queue, the access check, reading,
//! the BOM, line-ending detection and restoration, writing, the success text and `details`
//! (`{diff, firstChangedLine}`). Where the edits land is up to the strategy in
//! [`ToolContext::edit_strategy`]; [`PiStrategy`] is Pi's own matching. Every result carries an
//! [`EditReport`] for scoring.
//!
//! Depends only on the shared tool types (`tools`), never on the agent loop or the providers.

mod diff;
mod normalize;
pub mod strategies;

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value};

pub use diff::{CONTEXT_LINES, DiffString, generate_diff_string};
pub use normalize::{
    LineEnding, detect_line_ending, normalize_for_fuzzy_match, normalize_to_lf,
    restore_line_endings, strip_bom,
};
pub use strategies::{
    Applied, EditStrategy, ExactStrategy, Ladder, Miss, NearCopy, PiStrategy, Replacement,
    STRATEGIES, StrategyError, StrategyInfo, failure_message, parse_strategy, strategy_by_name,
    strategy_names,
};

use super::definitions::pi_tool;
use super::{
    Content, EditCapture, EditFailure, EditReport, LocatedEdit, Tool, ToolContext, ToolDefinition,
    ToolError, ToolOutput,
};

pi_tool! {
    /// Pi's `edit` tool.
    pub struct EditTool = "edit";
}

/// The in-place part of Pi's `prepareEditArguments`: `edits` sent as a JSON string that parses
/// to an array replaces the string (in the stored assistant message too, as Pi mutates it).
pub fn parse_string_edits(args: &mut Value) {
    if let Value::Object(map) = args
        && let Some(Value::String(text)) = map.get("edits")
        && let Ok(parsed @ Value::Array(_)) = serde_json::from_str::<Value>(text)
    {
        // An existing key keeps its position, as a JS property assignment does.
        map.insert("edits".to_owned(), parsed);
    }
}

/// Pi's `prepareEditArguments`: `edits` sent as a JSON string is parsed (replaced in place when
/// it is an array), and the legacy top-level `oldText`/`newText` pair is appended to `edits`.
pub fn prepare_edit_arguments(mut args: Value) -> Value {
    parse_string_edits(&mut args);
    let Value::Object(mut map) = args else {
        return args;
    };
    let legacy = matches!(
        (map.get("oldText"), map.get("newText")),
        (Some(Value::String(_)), Some(Value::String(_)))
    );
    if !legacy {
        return Value::Object(map);
    }
    let old_text = map.shift_remove("oldText").unwrap_or_default();
    let new_text = map.shift_remove("newText").unwrap_or_default();
    let mut edits = match map.get("edits") {
        Some(Value::Array(items)) => items.clone(),
        _ => Vec::new(),
    };
    let mut pair = Map::new();
    pair.insert("oldText".to_owned(), old_text);
    pair.insert("newText".to_owned(), new_text);
    edits.push(Value::Object(pair));
    map.insert("edits".to_owned(), Value::Array(edits));
    Value::Object(map)
}

#[async_trait]
impl Tool for EditTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn prepare_arguments(&self, args: Value) -> Value {
        prepare_edit_arguments(args)
    }

    fn rewrite_history_arguments(&self, args: &mut Value) {
        parse_string_edits(args);
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let strategy = Arc::clone(&ctx.edit_strategy);
        // Before fuzzy edits (2026-01-14), Pi's own matching was exact.
        let strategy: Arc<dyn EditStrategy> = if ctx.profile.flat_edit() && strategy.name() == "pi"
        {
            Arc::new(ExactStrategy)
        } else {
            strategy
        };
        let reporter = EditReporter {
            strategy: Arc::from(strategy.name()),
        };
        // validateEditInput runs before the queue.
        let edits = match args.get("edits") {
            Some(Value::Array(items)) if !items.is_empty() => items,
            _ => {
                return Err(reporter.fail(
                    failure_message(&EditFailure::NoEdits, 0, ""),
                    Vec::new(),
                    EditFailure::NoEdits,
                ));
            }
        };
        let Some(path) = args.get("path").and_then(Value::as_str).map(str::to_owned) else {
            return Err(reporter.fail(
                "Edit tool input is invalid. path must be a string.",
                Vec::new(),
                EditFailure::InvalidArguments,
            ));
        };
        let edits = match parse_edits(edits) {
            Ok(edits) => edits,
            Err(message) => {
                return Err(reporter.fail(message, Vec::new(), EditFailure::InvalidArguments));
            }
        };
        let abs = crate::tools::path::resolve_to_cwd(&path, &ctx.cwd, &ctx.home);
        if let Err(denied) = crate::tools::path::confined(&abs, ctx) {
            return Err(reporter.fail(denied.message, Vec::new(), EditFailure::File));
        }
        let cancel = ctx.cancel.clone();
        let jail = ctx.jail.clone();
        let capture = ctx.edit_capture.clone();
        if let Some(capture) = &capture {
            capture.update(|c| c.resolved = Some(abs.clone()));
        }
        // The queue place is taken here, synchronously, so calls apply in call order.
        let key = abs.clone();
        let profile = ctx.profile;
        let queued = ctx.queue.run(&key, async move {
            if cancel.is_cancelled() {
                return Err(reporter.aborted());
            }
            let job_cancel = cancel.clone();
            let job_reporter = reporter.clone();
            let job = tokio::task::spawn_blocking(move || {
                edit_file(
                    &jail,
                    &abs,
                    &path,
                    &edits,
                    strategy.as_ref(),
                    &job_cancel,
                    &job_reporter,
                    capture.as_deref(),
                    profile,
                )
            });
            tokio::select! {
                biased;
                joined = job => joined.unwrap_or_else(|e| {
                    Err(reporter.fail(format!("edit failed: {e}"), Vec::new(), EditFailure::File))
                }),
                () = cancel.cancelled() => Err(reporter.aborted()),
            }
        });
        queued.await
    }
}

/// Builds the [`EditReport`] of a call.
#[derive(Clone)]
struct EditReporter {
    strategy: Arc<str>,
}

impl EditReporter {
    fn report(&self, tiers: Vec<LocatedEdit>, failure: Option<EditFailure>) -> EditReport {
        EditReport::new(&self.strategy, tiers, failure)
    }

    fn fail(
        &self,
        message: impl Into<String>,
        tiers: Vec<LocatedEdit>,
        failure: EditFailure,
    ) -> ToolError {
        ToolError {
            message: message.into(),
            edit: Some(self.report(tiers, Some(failure))),
        }
    }

    /// An aborted call: no edit was attempted, so the report has no failure kind.
    fn aborted(&self) -> ToolError {
        ToolError {
            message: "Operation aborted".to_owned(),
            edit: Some(self.report(Vec::new(), None)),
        }
    }
}

/// A file's text as a strategy sees it: the BOM split off, the line ending detected (from the
/// first line break, as Pi does) and every line break turned into `\n`.
#[derive(Debug, Clone)]
pub struct PreparedText<'a> {
    pub bom: &'a str,
    pub ending: LineEnding,
    pub content: std::borrow::Cow<'a, str>,
}

impl<'a> PreparedText<'a> {
    /// Pi's steps before matching, on the file's text as read.
    pub fn new(raw: &'a str) -> Self {
        let (bom, content) = strip_bom(raw);
        PreparedText {
            bom,
            ending: detect_line_ending(content),
            content: normalize_to_lf(content),
        }
    }

    /// The text Pi writes for the strategy's `new_content`: line endings restored, BOM first.
    pub fn finish(&self, new_content: &str) -> String {
        let restored = restore_line_endings(new_content, self.ending);
        let mut out = String::with_capacity(self.bom.len() + restored.len());
        out.push_str(self.bom);
        out.push_str(&restored);
        out
    }
}

/// The replacements of validated `edit` arguments (`edits` items with string `oldText` and
/// `newText`), both texts LF-normalised, or the tool's error text.
pub fn replacements_of(args: &Value) -> Result<Vec<Replacement>, String> {
    match args.get("edits") {
        Some(Value::Array(items)) if !items.is_empty() => parse_edits(items),
        _ => Err(failure_message(&EditFailure::NoEdits, 0, "")),
    }
}

/// The edits as the strategy gets them, both texts LF-normalised. Items that are not
/// `{oldText: string, newText: string}` only get here when validation was bypassed.
fn parse_edits(items: &[Value]) -> Result<Vec<Replacement>, String> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let text = |key: &str| item.get(key).and_then(Value::as_str);
            match (text("oldText"), text("newText")) {
                (Some(old), Some(new)) => Ok(Replacement::new(
                    normalize_to_lf(old).into_owned(),
                    normalize_to_lf(new).into_owned(),
                )),
                _ => Err(format!(
                    "Edit tool input is invalid. edits[{i}] must have string oldText and newText."
                )),
            }
        })
        .collect()
}

/// Everything after the queue: access, read, match, write, diff. Blocking. Every file access
/// goes through `jail` (beneath the workspace in one step when confined).
#[expect(
    clippy::too_many_arguments,
    reason = "the call's parts, each used once"
)]
fn edit_file(
    jail: &crate::sandbox::Jail,
    abs: &Path,
    path: &str,
    edits: &[Replacement],
    strategy: &dyn EditStrategy,
    cancel: &tokio_util::sync::CancellationToken,
    reporter: &EditReporter,
    capture: Option<&EditCapture>,
    profile: crate::tools::profile::ToolProfile,
) -> Result<ToolOutput, ToolError> {
    let file_error = |message: String| reporter.fail(message, Vec::new(), EditFailure::File);
    // Node's `fs.access` rejects a NUL byte before any system call, with this code.
    if abs.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(file_error(format!(
            "Could not edit file: {path}. Error code: ERR_INVALID_ARG_VALUE."
        )));
    }
    match jail.access_rw(abs) {
        Ok(()) => {}
        Err(
            denied @ (crate::sandbox::FsError::Outside(_) | crate::sandbox::FsError::SharedLink(_)),
        ) => {
            return Err(file_error(denied.to_string()));
        }
        // Before Pi 0.15 any failed access was `File not found`.
        Err(crate::sandbox::FsError::Io(_)) if profile.flat_edit() => {
            return Err(file_error(format!("File not found: {path}")));
        }
        Err(crate::sandbox::FsError::Io(e)) => {
            return Err(file_error(format!(
                "Could not edit file: {path}. Error code: {}.",
                crate::tools::path::node_error_code(&e)
            )));
        }
    }
    let raw = read_file(jail, abs).map_err(file_error)?;
    if let Some(capture) = capture {
        capture.update(|c| c.before = Some(raw.clone()));
    }
    let text = PreparedText::new(&raw);

    let applied = strategy
        .apply(&text.content, edits)
        .map_err(|miss| reporter.fail(miss.message(edits.len(), path), miss.tiers, miss.failure))?;

    if cancel.is_cancelled() {
        return Err(reporter.aborted());
    }
    let restored = restore_line_endings(&applied.new_content, text.ending);
    write_file(jail, abs, text.bom, &restored).map_err(file_error)?;
    if let Some(capture) = capture {
        capture.update(|c| c.after = Some(format!("{}{restored}", text.bom)));
    }

    let diff = generate_diff_string(&applied.base, &applied.new_content, CONTEXT_LINES);
    let mut details = Map::new();
    details.insert("diff".to_owned(), Value::String(diff.diff));
    if let Some(line) = diff.first_changed_line {
        details.insert("firstChangedLine".to_owned(), Value::from(line));
    }
    Ok(ToolOutput {
        content: vec![Content::text(
            profile.edit_success(
                path,
                &edits
                    .iter()
                    .map(|e| (e.old_text.as_str(), e.new_text.as_str()))
                    .collect::<Vec<_>>(),
            ),
        )],
        details: Some(Value::Object(details)),
        edit: Some(reporter.report(applied.tiers, None)),
    })
}

/// `readFile(abs).toString("utf-8")`: invalid UTF-8 becomes U+FFFD; errors read like Node's.
fn read_file(jail: &crate::sandbox::Jail, abs: &Path) -> Result<String, String> {
    let file = jail
        .open(abs, crate::sandbox::How::Read)
        .map_err(|e| crate::tools::path::fs_error(&e, "open", abs).message)?;
    // Deviation: Pi reads a FIFO until its writer ends, and a device until it does.
    let meta = file
        .metadata()
        .map_err(|e| crate::tools::path::node_fs_error(&e, "read", None))?;
    if !meta.is_file() && !meta.is_dir() {
        return Err(crate::tools::path::not_a_regular_file(
            abs,
            crate::tools::path::file_kind(&meta.file_type()),
            "edit only edits",
        ));
    }
    let limit = crate::tools::path::node_read_to_string_limit;
    if let Some(too_large) = limit(meta.len()) {
        return Err(too_large);
    }
    // A file still growing is read no further than Node would take it.
    let max = crate::tools::path::NODE_MAX_STRING;
    let bytes = crate::sandbox::beneath::read_at_most(file, max)
        .map_err(|e| crate::tools::path::node_fs_error(&e, "read", None))?
        .ok_or_else(|| limit(max + 1).unwrap_or_default())?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

/// `writeFile(abs, bom + text, "utf-8")`: truncate or create, follow symlinks, then write.
fn write_file(
    jail: &crate::sandbox::Jail,
    abs: &Path,
    bom: &str,
    text: &str,
) -> Result<(), String> {
    let mut file = crate::tools::path::open_for_writing(jail, abs, "edit only edits")?;
    file.write_all(bom.as_bytes())
        .and_then(|()| file.write_all(text.as_bytes()))
        .map_err(|e| crate::tools::path::node_fs_error(&e, "write", None))
}

#[cfg(test)]
mod tests;
