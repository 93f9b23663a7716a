//! `harness tool` (run one tool call, or a batch from stdin) and `harness tools` (list the
//! definitions). A thin shell over [`crate::tools::ToolSet::call`]: what a call prints is what the
//! agent loop would get, as Pi's result shape `{"isError", "content", "details"}`.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use serde::Deserialize;
use serde_json::{Value, json};

use super::exit;
use super::printer::{internal_error, usage_error};
use crate::tools::edit::{EditStrategy, strategy_by_name, strategy_names};
use crate::tools::registry::all_tool_names;
use crate::tools::{ToolContext, ToolResult, ToolSet, ToolSetSpec};

/// Arguments of `harness tool`.
#[derive(Debug, Args)]
pub struct ToolArgs {
    /// The tool to run: read, bash, edit, write, grep, find or ls (not with --batch).
    #[arg(required_unless_present = "batch", conflicts_with = "batch")]
    pub name: Option<String>,

    /// The call's arguments, a JSON object.
    #[arg(long, default_value = "{}", conflicts_with = "batch")]
    pub args: String,

    /// The working directory relative paths resolve against [default: the current directory].
    #[arg(long)]
    pub cwd: Option<PathBuf>,

    /// How edit locates its oldText: pi (exact, then fuzzy), exact, safe, chain:a,b,... (see
    /// `harness edits strategies`).
    #[arg(long, default_value = "pi")]
    pub edit_strategy: String,

    /// Also print the harness-only telemetry (`edit`: match tiers and failure kind).
    #[arg(long)]
    pub telemetry: bool,

    /// Where bash saves the full output of truncated commands [default: the system temp dir].
    #[arg(long)]
    pub temp_dir: Option<PathBuf>,

    /// Read JSON lines `{"tool": NAME, "cwd": DIR, "args": {...}}` from stdin and print one result
    /// line for each, in order.
    #[arg(long)]
    pub batch: bool,

    /// Confine the call as `harness run` would: isolated, workspace (the cwd is the workspace)
    /// or none (Pi's behaviour, the default here).
    #[arg(long, value_enum, value_name = "TIER", default_value = "none")]
    pub sandbox: crate::sandbox::Tier,
}

/// Arguments of `harness tools`.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// Which tools: coding (Pi's default), readonly, all, or comma-separated names.
    #[arg(long, default_value = "all")]
    pub set: String,
}

/// `harness tool`: runs the call(s) and prints the result(s); a tool error still exits 0.
pub fn run_tool(args: ToolArgs) -> ExitCode {
    let strategy = match edit_strategy(&args.edit_strategy) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let current = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => return internal_error(&format!("failed to read the current directory: {e}")),
    };
    // A relative --cwd is relative to the current directory (the tools resolve paths against
    // the cwd as a string, so it must be absolute).
    let default_cwd = match &args.cwd {
        Some(cwd) => current.join(cwd),
        None => current,
    };
    let sandbox = crate::sandbox::Sandbox::detect(Some(args.sandbox));
    if let Some(notice) = sandbox.notice() {
        super::printer::warn(notice);
    }
    let tools = ToolSet::new(&ToolSetSpec::all()).expect("every built-in tool exists");
    let runtime = match super::runtime::runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let settings = Settings {
        strategy,
        temp_dir: args.temp_dir.clone(),
        telemetry: args.telemetry,
        sandbox,
    };
    if args.batch {
        let code = runtime.block_on(run_batch(&tools, &default_cwd, &settings));
        settings.sandbox.kill_all();
        return code;
    }

    let name = args.name.as_deref().unwrap_or_default();
    if !all_tool_names().contains(&name) {
        return usage_error(
            &format!("unknown tool `{name}`"),
            &format!("valid tools: {}", all_tool_names().join(", ")),
        );
    }
    let call_args: Value = match serde_json::from_str(&lone_surrogates_to_replacement(&args.args)) {
        Ok(v) => v,
        Err(e) => {
            return usage_error(
                &format!("--args is not valid JSON: {e}"),
                "pass one JSON object, e.g. --args '{\"command\": \"ls\"}'",
            );
        }
    };
    if !default_cwd.is_dir() {
        return usage_error(
            &format!(
                "working directory `{}` does not exist",
                default_cwd.display()
            ),
            "pass an existing directory with --cwd",
        );
    }
    let ctx = settings.context(&default_cwd);
    let result = runtime.block_on(tools.call(name, call_args, &ctx));
    settings.sandbox.kill_all();
    match super::printer::print_line(&settings.render(result)) {
        Ok(()) => ExitCode::from(exit::SUCCESS),
        Err(e) => internal_error(&format!("failed to write the result: {e}")),
    }
}

/// `harness tools`: prints `[{name, description, parameters}, ...]`.
pub fn list_tools(args: ToolsArgs) -> ExitCode {
    let spec = match args.set.parse::<ToolSetSpec>() {
        Ok(spec) => spec,
        Err(e) => {
            return usage_error(
                &format!("invalid --set `{}`: {e}", args.set),
                "use coding, readonly, all, or a comma-separated list such as read,grep",
            );
        }
    };
    let tools = match ToolSet::new(&spec) {
        Ok(t) => t,
        Err(e) => return usage_error(&e.to_string(), "run `harness tools --set all`"),
    };
    let defs = serde_json::to_string_pretty(&tools.definitions()).expect("definitions serialise");
    match super::printer::print_line(&defs) {
        Ok(()) => ExitCode::from(exit::SUCCESS),
        Err(e) => internal_error(&format!("failed to write the definitions: {e}")),
    }
}

/// Settings shared by every call of one invocation.
struct Settings {
    strategy: Arc<dyn EditStrategy>,
    temp_dir: Option<PathBuf>,
    telemetry: bool,
    sandbox: crate::sandbox::Sandbox,
}

impl Settings {
    fn context(&self, cwd: &Path) -> ToolContext {
        let mut ctx = ToolContext::new(cwd);
        let root = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
        ctx.jail = self.sandbox.jail(&root);
        ctx.edit_strategy = self.strategy.clone();
        if let Some(temp) = &self.temp_dir {
            ctx.temp_dir = temp.clone();
        }
        ctx
    }

    /// One result as one JSON line; the `edit` telemetry only with `--telemetry`.
    fn render(&self, mut result: ToolResult) -> String {
        if !self.telemetry {
            result.edit = None;
        }
        serde_json::to_string(&result).expect("results serialise")
    }
}

/// The edit strategy called `name`.
fn edit_strategy(name: &str) -> Result<Arc<dyn EditStrategy>, ExitCode> {
    strategy_by_name(name).ok_or_else(|| {
        usage_error(
            &format!("unknown edit strategy `{name}`"),
            &format!("valid strategies: {}", strategy_names().join(", ")),
        )
    })
}

/// One line of `harness tool --batch` input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchRequest {
    tool: String,
    #[serde(default)]
    cwd: Option<PathBuf>,
    #[serde(default = "empty_object")]
    args: Value,
}

fn empty_object() -> Value {
    json!({})
}

/// An error line of a batch, in the result shape so every output line parses the same way.
fn batch_error(line: usize, message: &str) -> String {
    let result = ToolResult::error(crate::tools::ToolError::new(format!(
        "line {line}: {message}"
    )));
    serde_json::to_string(&result).expect("results serialise")
}

/// A batch line as text (its line break gone), or why it is not UTF-8.
fn batch_line(mut bytes: Vec<u8>) -> Result<String, String> {
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        format!(
            "not UTF-8 (byte 0x{:02x} at offset {at}); a batch line is one JSON object in UTF-8",
            e.as_bytes()[at]
        )
    })
}

async fn run_batch(tools: &ToolSet, default_cwd: &Path, settings: &Settings) -> ExitCode {
    let mut stdin = std::io::stdin().lock();
    let mut number = 0;
    loop {
        let mut bytes = Vec::new();
        match stdin.read_until(b'\n', &mut bytes) {
            Ok(0) => break,
            Ok(_) => number += 1,
            Err(e) => {
                return internal_error(&format!("failed to read stdin line {}: {e}", number + 1));
            }
        }
        // A line that is not text is answered like any bad line, and the batch goes on.
        let line = match batch_line(bytes) {
            Ok(line) => line,
            Err(why) => {
                if let Err(e) = super::printer::print_line(&batch_error(number, &why)) {
                    return internal_error(&format!(
                        "failed to write the result of line {number}: {e}"
                    ));
                }
                continue;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let output =
            match serde_json::from_str::<BatchRequest>(&lone_surrogates_to_replacement(&line)) {
                Err(e) => batch_error(number, &format!("invalid batch request: {e}")),
                Ok(request) => {
                    let cwd = match &request.cwd {
                        Some(dir) => default_cwd.join(dir),
                        None => default_cwd.to_path_buf(),
                    };
                    if cwd.is_dir() {
                        let ctx = settings.context(&cwd);
                        settings.render(tools.call(&request.tool, request.args, &ctx).await)
                    } else {
                        batch_error(
                            number,
                            &format!("working directory `{}` does not exist", cwd.display()),
                        )
                    }
                }
            };
        if let Err(e) = super::printer::print_line(&output) {
            return internal_error(&format!("failed to write the result of line {number}: {e}"));
        }
    }
    ExitCode::from(exit::SUCCESS)
}

/// JSON text with every lone UTF-16 surrogate escape (`\ud800` without its pair) turned into
/// `\ufffd`: `JSON.parse` accepts those, and a JS string holding one becomes U+FFFD wherever it
/// is encoded as UTF-8 (file contents, paths, arguments), which serde_json would reject.
fn lone_surrogates_to_replacement(json: &str) -> std::borrow::Cow<'_, str> {
    if !json.contains("\\u") {
        return std::borrow::Cow::Borrowed(json);
    }
    let b = json.as_bytes();
    let hex4 = |at: usize| -> Option<u16> {
        let s = json.get(at..at + 4)?;
        u16::from_str_radix(s, 16).ok()
    };
    let escape_at = |at: usize| -> Option<u16> {
        (b.get(at) == Some(&b'\\') && b.get(at + 1) == Some(&b'u'))
            .then(|| hex4(at + 2))
            .flatten()
    };
    let mut out = String::with_capacity(json.len());
    let mut i = 0;
    let mut in_string = false;
    let mut last = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                in_string = !in_string;
                i += 1;
            }
            b'\\' if in_string => match escape_at(i) {
                Some(unit @ 0xD800..=0xDBFF) => {
                    if matches!(escape_at(i + 6), Some(0xDC00..=0xDFFF)) {
                        i += 12;
                    } else {
                        let _ = unit;
                        out.push_str(&json[last..i]);
                        out.push_str("\\ufffd");
                        i += 6;
                        last = i;
                    }
                }
                Some(0xDC00..=0xDFFF) => {
                    out.push_str(&json[last..i]);
                    out.push_str("\\ufffd");
                    i += 6;
                    last = i;
                }
                Some(_) => i += 6,
                // Any other escape is two bytes (`\"`, `\\`, `\n`, ...).
                None => i += 2,
            },
            _ => i += 1,
        }
    }
    out.push_str(&json[last..]);
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_line_loses_its_line_break_and_must_be_utf8() {
        assert_eq!(batch_line(b"{}\r\n".to_vec()), Ok("{}".to_owned()));
        assert_eq!(batch_line(b"{}".to_vec()), Ok("{}".to_owned()));
        assert_eq!(
            batch_line(b"{\"tool\": \"r\xffad\"}\n".to_vec()),
            Err(
                "not UTF-8 (byte 0xff at offset 11); a batch line is one JSON object in UTF-8"
                    .to_owned()
            )
        );
    }

    #[test]
    fn lone_surrogates_become_replacement_characters() {
        let fix = |s: &str| lone_surrogates_to_replacement(s).into_owned();
        assert_eq!(fix(r#"{"a":"x\ud800y"}"#), r#"{"a":"x\ufffdy"}"#);
        assert_eq!(fix(r#"{"a":"\udc00"}"#), r#"{"a":"\ufffd"}"#);
        assert_eq!(fix(r#"{"a":"\ud83d\ude00"}"#), r#"{"a":"\ud83d\ude00"}"#);
        assert_eq!(fix(r#"{"a":"\\ud800"}"#), r#"{"a":"\\ud800"}"#);
        assert_eq!(
            fix(r#"{"a":"\ud800\ud800\udc00"}"#),
            r#"{"a":"\ufffd\ud800\udc00"}"#
        );
        assert_eq!(fix(r#"{"\ud800":1}"#), r#"{"\ufffd":1}"#);
        let v: Value = serde_json::from_str(&fix(r#"{"a":"x\ud800y"}"#)).unwrap();
        assert_eq!(v["a"], "x\u{fffd}y");
    }
}
