//! `grep`: Pi's grep tool (spec section 5), on the ripgrep crates instead of the rg binary.
//!
//! Emulates `rg --json --line-number --color=never --hidden [--ignore-case] [--fixed-strings]
//! [--glob G] -- <pattern> <searchPath>` (hidden files searched, `.gitignore` honoured only inside
//! git repositories, `.ignore`/`.rgignore` always, binary files skipped when walked) and Pi's
//! formatting of rg's match events: the match limit, per-match context blocks read from the file,
//! `truncateLine` at 500 UTF-16 units, `truncateHead` on bytes, the joined notices.
//! Depends only on the tool seams.
//!
//! Deviations: rg searches files in parallel and Pi keeps the first `limit` matches in arrival
//! order (nondeterministic); we search files sorted by path, matches in line order. The host's
//! global gitignore is not read.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::overrides::OverrideBuilder;
use serde_json::Value;

use super::args::{self, blocking, cancellable, check_aborted};
use super::definitions::pi_tool;
use super::listing::{CountLimit, Listing};
use super::path::{confined, first_nul_arg, fs_error, resolve_to_cwd};
use super::truncate::{GREP_MAX_LINE_LENGTH, js_number, truncate_line};
use super::walk::{WalkOptions, walk};
use super::{Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};
use crate::sandbox::{How, Jail};

/// What rg adds after a pattern that contains a line terminator.
const MULTILINE_HINT: &str = "\n\nConsider enabling multiline mode with the --multiline flag (or -U for short).\nWhen multiline mode is enabled, new line characters can be matched.";

/// What rg adds after a parse error about backreferences or look-around (its `suggest_pcre2`).
const PCRE2_HINT: &str = "\n\nConsider enabling PCRE2 with the --pcre2 flag, which can handle backreferences\nand look-around.";

/// rg's error text with its PCRE2 suggestion where rg makes one.
fn with_pcre2_hint(text: String) -> String {
    if text.contains("backreferences") || text.contains("look-around") {
        format!("{text}{PCRE2_HINT}")
    } else {
        text
    }
}

/// Pi's default match limit.
pub const DEFAULT_LIMIT: f64 = 100.0;

/// The most memory the search of one file may take for its buffer (so for its longest line).
/// Deviation: rg has no limit, and searches an explicitly given binary file as text, so a line
/// never ends in `/dev/zero` (under `none`) or a sparse file of any size, and memory went with
/// it; past this the file's search fails with rg's error for the limit.
const GREP_HEAP_LIMIT: usize = 64 * 1024 * 1024;

pi_tool! {
    /// Pi's `grep` tool.
    pub struct GrepTool = "grep";
}

/// The validated arguments.
struct GrepArgs {
    pattern: String,
    glob: Option<String>,
    ignore_case: bool,
    literal: bool,
    context: f64,
    limit: f64,
}

#[async_trait]
impl Tool for GrepTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        check_aborted(ctx)?;
        let context = args::number(&args, "context").unwrap_or(0.0);
        let parsed = GrepArgs {
            pattern: args::text_or_empty(&args, "pattern"),
            glob: args::text(&args, "glob")
                .filter(|g| !g.is_empty())
                .map(str::to_owned),
            ignore_case: args::flag(&args, "ignoreCase"),
            literal: args::flag(&args, "literal"),
            // `context && context > 0 ? context : 0`
            context: if context > 0.0 { context } else { 0.0 },
            limit: args::number(&args, "limit")
                .unwrap_or(DEFAULT_LIMIT)
                .max(1.0),
        };
        let search = resolve_to_cwd(args::search_path(&args), &ctx.cwd, &ctx.home);
        confined(&search, ctx)?;
        let cwd = ctx.cwd.clone();
        let jail = ctx.jail.clone();
        cancellable(
            ctx,
            blocking("grep", move || grep(&jail, &parsed, &search, &cwd)),
        )
        .await
    }
}

/// One rg `match` event: the file, the line number, the line with its terminator.
struct Match {
    path: PathBuf,
    line_number: u64,
    text: String,
}

/// Collects matching lines until the shared budget is spent.
struct Collect<'a> {
    path: &'a Path,
    matches: &'a mut Vec<Match>,
    limit: f64,
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        let first = mat.line_number().unwrap_or(1);
        for (i, line) in mat.lines().enumerate() {
            self.matches.push(Match {
                path: self.path.to_path_buf(),
                line_number: first + i as u64,
                text: String::from_utf8_lossy(line).into_owned(),
            });
            if self.matches.len() as f64 >= self.limit {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// Where a file to search is opened from.
enum Source {
    /// Found by the walk: opened from its folder's descriptor.
    Walked(super::walk::WalkEntry),
    /// Given explicitly: opened through the jail.
    Jail,
}

/// What rg would report: the match events, whether it was stopped at the limit, or its stderr.
fn run_rg(
    jail: &Jail,
    args: &GrepArgs,
    search: &Path,
    is_directory: bool,
    cwd: &Path,
) -> Result<(Vec<Match>, bool), String> {
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(args.ignore_case)
        .fixed_strings(args.literal)
        .line_terminator(Some(b'\n'))
        .build(&args.pattern)
        .map_err(|e| {
            // grep-regex reports the pattern wrapped in `(?:…)`; rg shows the pattern as typed,
            // which is what the regex crate's own parse error prints.
            let plain = (!args.literal)
                .then(|| regex::Regex::new(&args.pattern).err())
                .flatten();
            match plain {
                Some(regex::Error::Syntax(text)) => with_pcre2_hint(text),
                _ => {
                    let text = e.to_string();
                    // rg appends this hint to the line-terminator error.
                    if text.starts_with("the literal") {
                        format!("{text}{MULTILINE_HINT}")
                    } else {
                        text
                    }
                }
            }
        })?;

    let overrides = match &args.glob {
        Some(glob) => {
            let mut overrides = OverrideBuilder::new(cwd);
            overrides.add(glob).map_err(|e| e.to_string())?;
            Some(overrides.build().map_err(|e| e.to_string())?)
        }
        None => None,
    };

    let mut errors: Vec<String> = Vec::new();
    // (path, how to open it, explicitly given): explicit files are searched even if binary, as
    // rg does. Every file is opened through the jail or from its walked folder's descriptor.
    let mut files: Vec<(PathBuf, Source, bool)> = Vec::new();
    if is_directory {
        let options = WalkOptions {
            require_git: true,
            custom_ignore: ".rgignore",
            overrides,
        };
        let walked =
            walk(jail, search, &options).map_err(|e| fs_error(&e, "scandir", search).message)?;
        errors.extend(walked.errors.iter().map(|err| format!("rg: {err}")));
        for entry in walked.entries {
            if entry.kind == crate::sandbox::beneath::Kind::File {
                files.push((entry.path.clone(), Source::Walked(entry), false));
            }
        }
    } else {
        files.push((search.to_path_buf(), Source::Jail, true));
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));

    let mut matches = Vec::new();
    for (path, source, explicit) in &files {
        // rg (checked with 13.0) reports every line of an explicitly given binary file, NULs
        // kept and line numbers unchanged: no binary handling for explicit files.
        let binary = if *explicit {
            BinaryDetection::none()
        } else {
            BinaryDetection::quit(b'\x00')
        };
        let mut searcher = SearcherBuilder::new()
            .line_number(true)
            .binary_detection(binary)
            .heap_limit(Some(GREP_HEAP_LIMIT))
            .build();
        let sink = Collect {
            path,
            matches: &mut matches,
            limit: args.limit,
        };
        let opened = match source {
            Source::Walked(entry) => entry.open().and_then(|file| {
                jail.refuse_shared_link(path, &file)
                    .map(|()| file)
                    .map_err(|e| std::io::Error::other(e.to_string()))
            }),
            Source::Jail => jail.open(path, How::Read).map_err(|e| match e {
                crate::sandbox::FsError::Io(e) => e,
                outside => std::io::Error::other(outside.to_string()),
            }),
        };
        let searched = opened.and_then(|file| searcher.search_file(&matcher, &file, sink));
        if let Err(err) = searched {
            errors.push(format!("rg: {}: {err}", path.display()));
        }
        if matches.len() as f64 >= args.limit {
            return Ok((matches, true));
        }
    }
    if !errors.is_empty() {
        return Err(errors.join("\n"));
    }
    Ok((matches, false))
}

fn grep(jail: &Jail, args: &GrepArgs, search: &Path, cwd: &Path) -> Result<ToolOutput, ToolError> {
    let meta = match jail.metadata(search) {
        Ok(meta) => meta,
        Err(e @ (crate::sandbox::FsError::Outside(_) | crate::sandbox::FsError::SharedLink(_))) => {
            return Err(fs_error(&e, "stat", search));
        }
        Err(crate::sandbox::FsError::Io(_)) => {
            return Err(format!("Path not found: {}", search.display()).into());
        }
    };
    let is_directory = meta.is_dir();
    // Node's spawn refuses an argument with a NUL byte before rg runs.
    let search_text = search.to_string_lossy();
    let mut rg_args: Vec<&str> = vec!["--json", "--line-number", "--color=never", "--hidden"];
    if args.ignore_case {
        rg_args.push("--ignore-case");
    }
    if args.literal {
        rg_args.push("--fixed-strings");
    }
    if let Some(glob) = &args.glob {
        rg_args.extend(["--glob", glob]);
    }
    rg_args.extend(["--", &args.pattern, &search_text]);
    if let Some(message) = first_nul_arg(&rg_args) {
        return Err(ToolError::new(message));
    }
    let (matches, match_limit_reached) =
        run_rg(jail, args, search, is_directory, cwd).map_err(ToolError::new)?;
    if matches.is_empty() {
        return Ok(ToolOutput::text("No matches found"));
    }

    let format_path = |file: &Path| -> String {
        let basename = || {
            file.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        if is_directory {
            match file.strip_prefix(search) {
                Ok(rel) => {
                    let rel = rel.to_string_lossy();
                    if rel.is_empty() || rel.starts_with("..") {
                        basename()
                    } else {
                        rel.into_owned()
                    }
                }
                Err(_) => basename(),
            }
        } else {
            basename()
        }
    };

    let mut lines_truncated = false;
    let mut file_cache: HashMap<PathBuf, Vec<String>> = HashMap::new();
    let mut output_lines: Vec<String> = Vec::new();
    for m in &matches {
        let shown = format_path(&m.path);
        if args.context > 0.0 {
            let lines = file_cache
                .entry(m.path.clone())
                .or_insert_with(|| read_lines(jail, &m.path));
            if lines.is_empty() {
                output_lines.push(format!("{shown}:{}: (unable to read file)", m.line_number));
                continue;
            }
            let n = m.line_number as f64;
            let start = (n - args.context).max(1.0);
            let end = (lines.len() as f64).min(n + args.context);
            let mut current = start;
            while current <= end {
                // `lines[current - 1] ?? ""`: a fractional index is undefined in JS.
                let idx = current - 1.0;
                let line = if idx.fract() == 0.0 {
                    lines.get(idx as usize).map(String::as_str).unwrap_or("")
                } else {
                    ""
                };
                let sanitized = line.replace('\r', "");
                let t = truncate_line(&sanitized, GREP_MAX_LINE_LENGTH);
                lines_truncated |= t.was_truncated;
                if current == n {
                    output_lines.push(format!("{shown}:{}: {}", js_number(current), t.text));
                } else {
                    output_lines.push(format!("{shown}-{}- {}", js_number(current), t.text));
                }
                current += 1.0;
            }
        } else {
            let text = m.text.replace("\r\n", "\n").replace('\r', "");
            let text = text.strip_suffix('\n').unwrap_or(&text);
            let t = truncate_line(text, GREP_MAX_LINE_LENGTH);
            lines_truncated |= t.was_truncated;
            output_lines.push(format!("{shown}:{}: {}", m.line_number, t.text));
        }
    }

    let count = CountLimit {
        reached: match_limit_reached,
        limit: args.limit,
        noun: "matches",
        hint: ", or refine pattern",
        key: "matchLimitReached",
    };
    let mut listing = Listing::new(&output_lines, count);
    if lines_truncated {
        listing.notice(
            format!(
                "Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
            ),
            "linesTruncated",
            Value::Bool(true),
        );
    }
    Ok(listing.finish())
}

/// Pi's `getFileLines`: UTF-8 with replacement, CRLF and CR to LF, split; empty on error.
fn read_lines(jail: &Jail, path: &Path) -> Vec<String> {
    let read = |path: &Path| -> Option<Vec<u8>> {
        let file = jail.open(path, How::Read).ok()?;
        // What Node could not turn into a string is an error there, caught: no lines.
        crate::sandbox::beneath::read_at_most(file, super::path::NODE_MAX_STRING).ok()?
    };
    match read(path) {
        Some(bytes) => String::from_utf8_lossy(&bytes)
            .replace("\r\n", "\n")
            .replace('\r', "\n")
            .split('\n')
            .map(str::to_owned)
            .collect(),
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::listing::first_text;
    use crate::tools::truncate::MAX_SAFE_INTEGER;
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use tempfile::TempDir;

    fn tree(files: &[(&str, &str)]) -> TempDir {
        let dir = TempDir::new().unwrap();
        for (name, content) in files {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        dir
    }

    async fn run(dir: &Path, args: Value) -> Result<ToolOutput, ToolError> {
        GrepTool::new().execute(args, &ToolContext::new(dir)).await
    }

    async fn text(dir: &Path, args: Value) -> String {
        first_text(run(dir, args).await)
    }

    #[tokio::test]
    async fn matches_with_relative_paths_sorted() {
        let dir = tree(&[
            ("src/b.ts", "const x = 1;\nfoo();\n"),
            ("a.ts", "foo bar\nbaz\nfoo again\n"),
            (".hidden/h.txt", "foo hidden\n"),
        ]);
        let out = run(dir.path(), json!({"pattern": "foo"})).await.unwrap();
        assert_eq!(
            out,
            ToolOutput::text(
                ".hidden/h.txt:1: foo hidden\na.ts:1: foo bar\na.ts:3: foo again\nsrc/b.ts:2: foo();"
            )
        );
    }

    #[tokio::test]
    async fn searching_a_file_shows_its_basename() {
        let dir = tree(&[("src/a.ts", "hit\n")]);
        assert_eq!(
            text(dir.path(), json!({"pattern": "hit", "path": "src/a.ts"})).await,
            "a.ts:1: hit"
        );
    }

    #[tokio::test]
    async fn pi_verified_context_blocks_are_not_merged() {
        let dir = tree(&[("g.txt", "a\nhit1\nb\nhit2\nc\n")]);
        assert_eq!(
            text(dir.path(), json!({"pattern": "hit", "context": 1})).await,
            "g.txt-1- a\ng.txt:2: hit1\ng.txt-3- b\ng.txt-3- b\ng.txt:4: hit2\ng.txt-5- c"
        );
    }

    #[tokio::test]
    async fn context_of_a_file_too_large_for_node_is_unreadable_as_in_pi() {
        // Pi reads the file whole for context lines; one Node cannot turn into a string is an
        // error it catches. Sparse beyond the match: read whole, it would take 512 MiB.
        let dir = tree(&[("big.txt", "needle\n")]);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join("big.txt"))
            .unwrap();
        file.set_len(crate::tools::path::NODE_MAX_STRING + 1)
            .unwrap();
        assert_eq!(
            text(
                dir.path(),
                json!({"pattern": "needle", "path": "big.txt", "context": 1, "limit": 1})
            )
            .await,
            "big.txt:1: (unable to read file)\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]"
        );
    }

    #[tokio::test]
    async fn a_line_that_never_ends_stops_the_search_at_a_bound() {
        // A sparse file given by name is searched as text (as rg does): one line of zeros as
        // long as the file, which the search held whole.
        let dir = tree(&[]);
        std::fs::File::create(dir.path().join("zeros.bin"))
            .unwrap()
            .set_len(2 * GREP_HEAP_LIMIT as u64)
            .unwrap();
        let err = run(dir.path(), json!({"pattern": "x", "path": "zeros.bin"}))
            .await
            .unwrap_err();
        assert!(
            err.message.ends_with(&format!(
                "zeros.bin: configured allocation limit ({GREP_HEAP_LIMIT}) exceeded"
            )),
            "{}",
            err.message
        );
    }

    #[tokio::test]
    async fn crlf_is_stripped_from_lines() {
        let dir = tree(&[("w.txt", "one\r\nhit here\r\nthree\r\n")]);
        assert_eq!(
            text(dir.path(), json!({"pattern": "hit"})).await,
            "w.txt:2: hit here"
        );
        assert_eq!(
            text(dir.path(), json!({"pattern": "hit", "context": 1})).await,
            "w.txt-1- one\nw.txt:2: hit here\nw.txt-3- three"
        );
    }

    #[tokio::test]
    async fn pi_verified_joined_notices() {
        let long = "x".repeat(600);
        let dir = tree(&[("l.txt", &format!("{long}\n{long}\n{long}\n"))]);
        let out = run(dir.path(), json!({"pattern": "x", "limit": 2}))
            .await
            .unwrap();
        let t = out.content[0].as_text().unwrap();
        assert!(
            t.ends_with("\n\n[2 matches limit reached. Use limit=4 for more, or refine pattern. Some lines truncated to 500 chars. Use read tool to see full lines]"),
            "{t}"
        );
        assert!(t.starts_with(&format!("l.txt:1: {}... [truncated]\n", "x".repeat(500))));
        assert_eq!(
            out.details,
            Some(json!({"matchLimitReached": 2, "linesTruncated": true}))
        );
    }

    #[tokio::test]
    async fn limit_is_at_least_one_and_reached_at_exactly_limit() {
        let dir = tree(&[("f.txt", "hit\nhit\n")]);
        assert_eq!(
            text(dir.path(), json!({"pattern": "hit", "limit": 0})).await,
            "f.txt:1: hit\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]"
        );
        assert_eq!(
            text(dir.path(), json!({"pattern": "hit", "limit": 2})).await,
            "f.txt:1: hit\nf.txt:2: hit\n\n[2 matches limit reached. Use limit=4 for more, or refine pattern]"
        );
        let out = run(dir.path(), json!({"pattern": "hit", "limit": 3}))
            .await
            .unwrap();
        assert_eq!(out, ToolOutput::text("f.txt:1: hit\nf.txt:2: hit"));
    }

    #[tokio::test]
    async fn flags_ignore_case_literal_glob() {
        let dir = tree(&[("a.ts", "Foo\nf.o\n"), ("b.js", "foo\n")]);
        assert_eq!(
            text(dir.path(), json!({"pattern": "foo"})).await,
            "b.js:1: foo"
        );
        assert_eq!(
            text(dir.path(), json!({"pattern": "foo", "ignoreCase": true})).await,
            "a.ts:1: Foo\nb.js:1: foo"
        );
        assert_eq!(
            text(dir.path(), json!({"pattern": "f.o", "literal": true})).await,
            "a.ts:2: f.o"
        );
        assert_eq!(
            text(dir.path(), json!({"pattern": "o", "glob": "*.ts"})).await,
            "a.ts:1: Foo\na.ts:2: f.o"
        );
    }

    #[tokio::test]
    async fn gitignore_only_inside_git_repos() {
        let dir = tree(&[
            (".gitignore", "skip.txt\n"),
            ("skip.txt", "hit\n"),
            ("keep.txt", "hit\n"),
        ]);
        // Not a git repo: .gitignore is not honoured.
        assert_eq!(
            text(dir.path(), json!({"pattern": "hit"})).await,
            "keep.txt:1: hit\nskip.txt:1: hit"
        );
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        assert_eq!(
            text(dir.path(), json!({"pattern": "hit"})).await,
            "keep.txt:1: hit"
        );
    }

    #[tokio::test]
    async fn binary_files_are_skipped_when_walked() {
        let dir = tree(&[("bin.dat", "hit\u{0}\n"), ("t.txt", "hit\n")]);
        assert_eq!(
            text(dir.path(), json!({"pattern": "hit"})).await,
            "t.txt:1: hit"
        );
    }

    #[tokio::test]
    async fn explicit_binary_file_is_searched_as_text() {
        let dir = tree(&[("bin.dat", "hit\u{0}bin\nhit2\n")]);
        assert_eq!(
            text(dir.path(), json!({"pattern": "hit", "path": "bin.dat"})).await,
            "bin.dat:1: hit\u{0}bin\nbin.dat:2: hit2"
        );
    }

    #[tokio::test]
    async fn no_matches_and_missing_path() {
        let dir = tree(&[("a.txt", "nothing\n")]);
        let out = run(dir.path(), json!({"pattern": "zzz"})).await.unwrap();
        assert_eq!(out, ToolOutput::text("No matches found"));
        let e = run(dir.path(), json!({"pattern": "x", "path": "nope"}))
            .await
            .unwrap_err();
        assert_eq!(
            e.message,
            format!("Path not found: {}", dir.path().join("nope").display())
        );
    }

    #[tokio::test]
    async fn regex_parse_error_like_rg() {
        let dir = tree(&[("a.txt", "x\n")]);
        let e = run(dir.path(), json!({"pattern": "("})).await.unwrap_err();
        assert_eq!(
            e.message,
            "regex parse error:\n    (\n    ^\nerror: unclosed group"
        );
    }

    #[tokio::test]
    async fn backreferences_and_look_around_get_rgs_pcre2_hint() {
        let dir = tree(&[("a.txt", "x\n")]);
        let e = run(dir.path(), json!({"pattern": "(a)\\1"}))
            .await
            .unwrap_err();
        assert_eq!(
            e.message,
            "regex parse error:\n    (a)\\1\n       ^^\nerror: backreferences are not supported\n\nConsider enabling PCRE2 with the --pcre2 flag, which can handle backreferences\nand look-around."
        );
        let e = run(dir.path(), json!({"pattern": "a(?=b)"}))
            .await
            .unwrap_err();
        assert_eq!(
            e.message,
            "regex parse error:\n    a(?=b)\n     ^^^\nerror: look-around, including look-ahead and look-behind, is not supported\n\nConsider enabling PCRE2 with the --pcre2 flag, which can handle backreferences\nand look-around."
        );
    }

    #[tokio::test]
    async fn a_nul_byte_in_an_argument_is_nodes_spawn_error() {
        let dir = tree(&[("a.txt", "x\n")]);
        let err = |args: Value| {
            let dir = dir.path().to_path_buf();
            async move { run(&dir, args).await.unwrap_err().message }
        };
        // Checked against Pi 0.73.1 (node 20): the index counts rg's arguments.
        assert_eq!(
            err(json!({"pattern": "a\u{0}b"})).await,
            "The argument 'args[5]' must be a string without null bytes. Received 'a\\x00b'"
        );
        assert_eq!(
            err(json!({"pattern": "a\u{0}b", "ignoreCase": true, "literal": true})).await,
            "The argument 'args[7]' must be a string without null bytes. Received 'a\\x00b'"
        );
        assert_eq!(
            err(json!({"pattern": "a", "glob": "a\u{0}b"})).await,
            "The argument 'args[5]' must be a string without null bytes. Received 'a\\x00b'"
        );
        assert_eq!(
            err(json!({"pattern": "a", "path": "a\u{0}b"})).await,
            format!("Path not found: {}/a\u{0}b", dir.path().display())
        );
    }

    #[tokio::test]
    async fn newline_in_pattern_is_rgs_error() {
        let dir = tree(&[("a.txt", "x\n")]);
        let e = run(dir.path(), json!({"pattern": "a\nb"}))
            .await
            .unwrap_err();
        assert_eq!(
            e.message,
            "the literal \"\\n\" is not allowed in a regex\n\nConsider enabling multiline mode with the --multiline flag (or -U for short).\nWhen multiline mode is enabled, new line characters can be matched."
        );
    }

    #[tokio::test]
    async fn byte_limit_notice() {
        let line = "hit ".repeat(100); // 400 chars, under the line limit
        let content: String = (0..200).map(|_| format!("{line}\n")).collect();
        let dir = tree(&[("big.txt", &content)]);
        let out = run(dir.path(), json!({"pattern": "hit", "limit": 1000}))
            .await
            .unwrap();
        let t = out.content[0].as_text().unwrap();
        assert!(
            t.ends_with("\n\n[50.0KB limit reached]"),
            "{}",
            &t[t.len() - 60..]
        );
        let details = out.details.unwrap();
        assert_eq!(details["truncation"]["truncatedBy"], "bytes");
        assert_eq!(
            details["truncation"]["maxLines"],
            json!(MAX_SAFE_INTEGER as u64)
        );
    }

    #[tokio::test]
    async fn fractional_context_never_hits_the_match_line() {
        let dir = tree(&[("f.txt", "a\nhit\nc\n")]);
        assert_eq!(
            text(dir.path(), json!({"pattern": "hit", "context": 0.5})).await,
            "f.txt-1.5- \nf.txt-2.5- "
        );
    }
}
