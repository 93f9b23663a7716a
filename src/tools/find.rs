//! `find`: Pi's find tool (spec section 5), on the `ignore` and `globset` crates instead of fd.
//!
//! Emulates `fd --glob --color=never --hidden --no-require-git --max-results N -- <pattern>
//! <searchPath>` as Pi runs it: hidden files included, `.gitignore`/`.ignore`/`.fdignore`
//! honoured even outside git repositories, `.git/` listed as fd 10 lists it, the glob matched against the file
//! name (or, when the pattern has a `/`, the whole absolute path with a `**/` prefix), fd's smart
//! case, directories printed with a trailing `/`; then Pi's post-processing of fd's lines.
//! Depends only on the tool seams.
//!
//! Deviation: fd's output order is that of its parallel walk (nondeterministic); ours is sorted
//! by path, and with a limit the first `limit` paths in that order are kept.

use std::path::Path;

use async_trait::async_trait;
use globset::GlobBuilder;
use serde_json::Value;

use super::args::{self, blocking, cancellable, check_aborted};
use super::definitions::pi_tool;
use super::listing::{CountLimit, Listing};
use super::path::{confined, first_nul_arg, fs_error, resolve_to_cwd};
use super::truncate::js_number;
use super::walk::{WalkOptions, walk};
use super::{Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};
use crate::sandbox::Jail;

/// Pi's default result limit.
pub const DEFAULT_LIMIT: f64 = 1000.0;

pi_tool! {
    /// Pi's `find` tool.
    pub struct FindTool = "find";
}

#[async_trait]
impl Tool for FindTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        check_aborted(ctx)?;
        let pattern = args::text_or_empty(&args, "pattern");
        let path = args::search_path(&args);
        let limit = args::number(&args, "limit").unwrap_or(DEFAULT_LIMIT);
        let abs = resolve_to_cwd(path, &ctx.cwd, &ctx.home);
        confined(&abs, ctx)?;
        let jail = ctx.jail.clone();
        cancellable(
            ctx,
            blocking("find", move || find(&jail, &pattern, &abs, limit)),
        )
        .await
    }
}

/// fd's `--max-results` as clap would parse `String(limit)`: `None` means no limit (0).
fn parse_max_results(limit: f64) -> Result<Option<usize>, String> {
    let text = js_number(limit);
    if limit < 0.0 && limit.fract() == 0.0 {
        return Err(format!(
            "error: unexpected argument '{text}' found\n\n  tip: to pass '{text}' as a value, use '-- {text}'\n\nUsage: fd [OPTIONS] [pattern] [path]...\n\nFor more information, try '--help'."
        ));
    }
    if limit.fract() != 0.0 || !(0.0..1.8e19).contains(&limit) {
        return Err(format!(
            "error: invalid value '{text}' for '--max-results <count>': invalid digit found in string\n\nFor more information, try '--help'."
        ));
    }
    Ok((limit > 0.0).then_some(limit as usize))
}

/// What fd prints on stdout, one absolute path per line (directories with a trailing `/`),
/// or the error text it prints on stderr.
fn run_fd(
    jail: &Jail,
    pattern: &str,
    search: &Path,
    max_results: Option<usize>,
) -> Result<String, String> {
    let meta = jail.metadata(search);
    if let Err(e @ crate::sandbox::FsError::Outside(_)) = &meta {
        return Err(fs_error(e, "stat", search).message);
    }
    if !meta.is_ok_and(|m| m.is_dir()) {
        return Err(format!(
            "[fd error]: Search path '{}' is not a directory.\n[fd error]: No valid search paths given.",
            search.display()
        ));
    }
    // Pi's pattern handling.
    let full_path = pattern.contains('/');
    let pattern = if full_path
        && !(pattern.starts_with('/') || pattern.starts_with("**/") || pattern == "**")
    {
        format!("**/{pattern}")
    } else {
        pattern.to_owned()
    };
    let matcher = if pattern.is_empty() {
        None
    } else {
        // fd's smart case: case-insensitive unless the pattern has an uppercase character.
        let case_sensitive = pattern.chars().any(char::is_uppercase);
        let glob = GlobBuilder::new(&pattern)
            .literal_separator(true)
            .case_insensitive(!case_sensitive)
            .build()
            .map_err(|e| format!("[fd error]: {e}"))?;
        Some(glob.compile_matcher())
    };

    let options = WalkOptions {
        require_git: false,
        custom_ignore: ".fdignore",
        overrides: None,
    };
    let walked =
        walk(jail, search, &options).map_err(|e| fs_error(&e, "scandir", search).message)?;
    let mut found: Vec<String> = Vec::new();
    for entry in walked.entries {
        let is_match = match &matcher {
            None => true,
            Some(m) if full_path => m.is_match(&entry.path),
            Some(m) => m.is_match(Path::new(entry.file_name())),
        };
        if !is_match {
            continue;
        }
        let mut line = entry.path.to_string_lossy().into_owned();
        if entry.kind == crate::sandbox::beneath::Kind::Dir {
            line.push('/');
        }
        found.push(line);
    }
    found.sort();
    if let Some(max) = max_results {
        found.truncate(max);
    }
    Ok(found.join("\n"))
}

fn find(jail: &Jail, pattern: &str, search: &Path, limit: f64) -> Result<ToolOutput, ToolError> {
    // Node's spawn refuses an argument with a NUL byte before fd runs: Pi's fd arguments.
    let limit_text = js_number(limit);
    let mut fd_args: Vec<&str> = vec![
        "--glob",
        "--color=never",
        "--hidden",
        "--no-require-git",
        "--max-results",
        &limit_text,
    ];
    let effective = if pattern.contains('/') {
        fd_args.push("--full-path");
        if pattern.starts_with('/') || pattern.starts_with("**/") || pattern == "**" {
            pattern.to_owned()
        } else {
            format!("**/{pattern}")
        }
    } else {
        pattern.to_owned()
    };
    let search_text = search.to_string_lossy();
    fd_args.extend(["--", &effective, &search_text]);
    if let Some(message) = first_nul_arg(&fd_args) {
        return Err(ToolError::new(message));
    }
    let max_results = parse_max_results(limit).map_err(ToolError::new)?;
    let stdout = run_fd(jail, pattern, search, max_results).map_err(ToolError::new)?;

    // Pi's processing of fd's lines.
    let search_text = search.to_string_lossy();
    let mut relativized: Vec<String> = Vec::new();
    for raw in stdout.split('\n') {
        let line = raw.strip_suffix('\r').unwrap_or(raw).trim();
        if line.is_empty() {
            continue;
        }
        let had_trailing_slash = line.ends_with('/');
        let mut relative = if line.starts_with(search_text.as_ref()) {
            line.get(search_text.len() + 1..).unwrap_or("").to_owned()
        } else {
            line.to_owned()
        };
        if had_trailing_slash && !relative.ends_with('/') {
            relative.push('/');
        }
        relativized.push(relative);
    }
    if relativized.is_empty() {
        return Ok(ToolOutput::text("No files found matching pattern"));
    }

    let count = CountLimit {
        reached: relativized.len() as f64 >= limit,
        limit,
        noun: "results",
        hint: ", or refine pattern",
        key: "resultLimitReached",
    };
    Ok(Listing::new(&relativized, count).finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::listing::first_text;
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use tempfile::TempDir;

    fn tree(files: &[&str]) -> TempDir {
        let dir = TempDir::new().unwrap();
        for f in files {
            let p = dir.path().join(f);
            if let Some(d) = f.strip_suffix('/') {
                std::fs::create_dir_all(dir.path().join(d)).unwrap();
            } else {
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, "x").unwrap();
            }
        }
        dir
    }

    async fn run(dir: &Path, args: Value) -> Result<ToolOutput, ToolError> {
        FindTool::new().execute(args, &ToolContext::new(dir)).await
    }

    async fn text(dir: &Path, args: Value) -> String {
        first_text(run(dir, args).await)
    }

    #[tokio::test]
    async fn basename_glob_hidden_included_sorted() {
        let dir = tree(&[
            "b.ts",
            "a.ts",
            "src/c.ts",
            ".hidden/d.ts",
            "e.js",
            "src/F.TS",
        ]);
        assert_eq!(
            text(dir.path(), json!({"pattern": "*.ts"})).await,
            ".hidden/d.ts\na.ts\nb.ts\nsrc/F.TS\nsrc/c.ts"
        );
        // An uppercase character makes the match case-sensitive (fd's smart case).
        assert_eq!(
            text(dir.path(), json!({"pattern": "*.TS"})).await,
            "src/F.TS"
        );
    }

    #[tokio::test]
    async fn directories_get_a_trailing_slash_and_git_is_listed_as_fd_10_does() {
        let dir = tree(&["src/lib/x.rs", ".git/config", ".github/ci.yml"]);
        assert_eq!(
            text(dir.path(), json!({"pattern": "*"})).await,
            ".git/\n.git/config\n.github/\n.github/ci.yml\nsrc/\nsrc/lib/\nsrc/lib/x.rs"
        );
        assert_eq!(
            text(dir.path(), json!({"pattern": "config"})).await,
            ".git/config"
        );
    }

    #[tokio::test]
    async fn a_nul_byte_in_an_argument_is_nodes_spawn_error() {
        let dir = tree(&["a.txt"]);
        // Checked against Pi 0.73.1 (node 20): the index counts fd's arguments.
        for (args, want) in [
            (
                json!({"pattern": "a\u{0}b"}),
                "The argument 'args[7]' must be a string without null bytes. Received 'a\\x00b'"
                    .to_owned(),
            ),
            (
                json!({"pattern": "src/a\u{0}b"}),
                "The argument 'args[8]' must be a string without null bytes. Received '**/src/a\\x00b'"
                    .to_owned(),
            ),
            (
                json!({"pattern": "*", "path": "a\u{0}b"}),
                format!(
                    "The argument 'args[8]' must be a string without null bytes. Received '{}/a\\x00b'",
                    dir.path().display()
                ),
            ),
        ] {
            assert_eq!(run(dir.path(), args).await.unwrap_err().message, want);
        }
    }

    #[tokio::test]
    async fn gitignore_is_honoured_outside_git_repos() {
        let dir = tree(&[
            ".gitignore",
            "keep.txt",
            "build/out.txt",
            "skip.log",
            ".fdignore",
            "secret.txt",
        ]);
        std::fs::write(dir.path().join(".gitignore"), "build/\n*.log\n").unwrap();
        std::fs::write(dir.path().join(".fdignore"), "secret.txt\n").unwrap();
        assert_eq!(
            text(dir.path(), json!({"pattern": "*"})).await,
            ".fdignore\n.gitignore\nkeep.txt"
        );
    }

    #[tokio::test]
    async fn patterns_with_a_slash_match_the_full_path() {
        let dir = tree(&[
            "src/a.spec.ts",
            "src/deep/b.spec.ts",
            "lib/c.spec.ts",
            "src/d.ts",
        ]);
        assert_eq!(
            text(dir.path(), json!({"pattern": "src/**/*.spec.ts"})).await,
            "src/a.spec.ts\nsrc/deep/b.spec.ts"
        );
        assert_eq!(
            text(dir.path(), json!({"pattern": "src/*.ts"})).await,
            "src/a.spec.ts\nsrc/d.ts"
        );
        assert_eq!(
            text(dir.path(), json!({"pattern": "**/*.json"})).await,
            "No files found matching pattern"
        );
    }

    #[tokio::test]
    async fn search_path_argument_and_relative_output() {
        let dir = tree(&["src/a.rs", "src/sub/b.rs", "c.rs"]);
        assert_eq!(
            text(dir.path(), json!({"pattern": "*.rs", "path": "src"})).await,
            "a.rs\nsub/b.rs"
        );
    }

    #[tokio::test]
    async fn result_limit_notice_even_at_exactly_the_limit() {
        let dir = tree(&["a.txt", "b.txt", "c.txt"]);
        let out = run(dir.path(), json!({"pattern": "*.txt", "limit": 2}))
            .await
            .unwrap();
        assert_eq!(
            out.content[0].as_text().unwrap(),
            "a.txt\nb.txt\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]"
        );
        assert_eq!(out.details, Some(json!({"resultLimitReached": 2})));
        assert_eq!(
            text(dir.path(), json!({"pattern": "*.txt", "limit": 3})).await,
            "a.txt\nb.txt\nc.txt\n\n[3 results limit reached. Use limit=6 for more, or refine pattern]"
        );
        let out = run(dir.path(), json!({"pattern": "*.txt", "limit": 4}))
            .await
            .unwrap();
        assert_eq!(out, ToolOutput::text("a.txt\nb.txt\nc.txt"));
    }

    #[tokio::test]
    async fn byte_limit_notice() {
        let names: Vec<String> = (0..300)
            .map(|i| format!("{i:03}{}.txt", "n".repeat(200)))
            .collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let dir = tree(&refs);
        let out = run(dir.path(), json!({"pattern": "*.txt"})).await.unwrap();
        let t = out.content[0].as_text().unwrap();
        assert!(t.ends_with("\n\n[50.0KB limit reached]"));
        let details = out.details.unwrap();
        assert_eq!(details["truncation"]["truncatedBy"], "bytes");
        assert!(details.get("resultLimitReached").is_none());
    }

    #[tokio::test]
    async fn missing_directory_is_fds_error() {
        let dir = tree(&["f.txt"]);
        let nope = dir.path().join("nope");
        assert_eq!(
            run(dir.path(), json!({"pattern": "*", "path": "nope"}))
                .await
                .unwrap_err()
                .message,
            format!(
                "[fd error]: Search path '{}' is not a directory.\n[fd error]: No valid search paths given.",
                nope.display()
            )
        );
    }

    #[tokio::test]
    async fn bad_glob_and_bad_limit_are_errors() {
        let dir = tree(&["f.txt"]);
        let e = run(dir.path(), json!({"pattern": "[a"})).await.unwrap_err();
        assert!(
            e.message.starts_with("[fd error]: error parsing glob '[a'"),
            "{}",
            e.message
        );
        let e = run(dir.path(), json!({"pattern": "*", "limit": 1.5}))
            .await
            .unwrap_err();
        assert!(
            e.message
                .starts_with("error: invalid value '1.5' for '--max-results <count>'")
        );
    }

    #[tokio::test]
    async fn empty_pattern_matches_everything() {
        let dir = tree(&["a", "d/"]);
        assert_eq!(text(dir.path(), json!({"pattern": ""})).await, "a\nd/");
    }
}
