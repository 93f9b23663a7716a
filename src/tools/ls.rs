//! `ls`: Pi's ls tool (spec section 5): one directory, dotfiles included, sorted with ICU root
//! collation of the lower-cased names (JS `localeCompare`), `/` after directories, broken
//! symlinks dropped, an entry limit and the 50 KB byte limit. Depends only on the tool seams.

use std::cmp::Ordering;
use std::path::Path;

use async_trait::async_trait;
use icu_collator::CollatorBorrowed;
use icu_collator::options::CollatorOptions;
use serde_json::Value;

use super::args::{self, blocking, cancellable, check_aborted};
use super::definitions::pi_tool;
use super::listing::{CountLimit, Listing};
use super::path::{confined, fs_error, resolve_to_cwd};
use super::{Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};
use crate::sandbox::{FsError, How, Jail};

/// Pi's default entry limit.
pub const DEFAULT_LIMIT: f64 = 500.0;

pi_tool! {
    /// Pi's `ls` tool.
    pub struct LsTool = "ls";
}

#[async_trait]
impl Tool for LsTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        check_aborted(ctx)?;
        let path = args::search_path(&args);
        let limit = args::number(&args, "limit").unwrap_or(DEFAULT_LIMIT);
        let abs = resolve_to_cwd(path, &ctx.cwd, &ctx.home);
        confined(&abs, ctx)?;
        let jail = ctx.jail.clone();
        cancellable(ctx, blocking("ls", move || list(&jail, &abs, limit))).await
    }
}

/// JS `a.toLowerCase().localeCompare(b.toLowerCase())` with ICU's root collation.
pub fn compare_names(collator: &CollatorBorrowed<'static>, a: &str, b: &str) -> Ordering {
    collator.compare(&a.to_lowercase(), &b.to_lowercase())
}

fn collator() -> CollatorBorrowed<'static> {
    CollatorBorrowed::try_new(Default::default(), CollatorOptions::default())
        .expect("ICU root collation data is compiled in")
}

/// The listing, every path reached through `jail` (a folder and each entry it stats beneath
/// the workspace when confined; an entry whose symlink leads out is left out, as a broken one).
fn list(jail: &Jail, abs: &Path, limit: f64) -> Result<ToolOutput, ToolError> {
    let shown = abs.display();
    let meta = match jail.metadata(abs) {
        Ok(meta) => meta,
        Err(e @ (FsError::Outside(_) | FsError::SharedLink(_))) => {
            return Err(fs_error(&e, "stat", abs));
        }
        Err(FsError::Io(_)) => return Err(format!("Path not found: {shown}").into()),
    };
    if !meta.is_dir() {
        return Err(format!("Not a directory: {shown}").into());
    }
    let entries = jail
        .open(abs, How::Dir)
        .and_then(|dir| {
            Ok(crate::sandbox::beneath::list(std::os::fd::AsFd::as_fd(
                &dir,
            ))?)
        })
        .map_err(|e| {
            format!(
                "Cannot read directory: {}",
                fs_error(&e, "scandir", abs).message
            )
        })?;
    // Node's `readdirSync` returns names in byte order (libuv's scandir sorts with strcmp); the
    // stable sort that follows keeps that order between names that collate equal.
    let mut raw: Vec<std::ffi::OsString> = entries.into_iter().map(|e| e.name).collect();
    raw.sort_by(|a, b| a.as_encoded_bytes().cmp(b.as_encoded_bytes()));
    let mut names: Vec<String> = raw
        .into_iter()
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    let collator = collator();
    names.sort_by(|a, b| compare_names(&collator, a, b));

    let mut results: Vec<String> = Vec::new();
    let mut entry_limit_reached = false;
    for name in &names {
        if results.len() as f64 >= limit {
            entry_limit_reached = true;
            break;
        }
        // stat follows symlinks; entries whose stat fails (broken links, and links out of the
        // workspace when confined) are skipped.
        let Ok(meta) = jail.metadata(&abs.join(name)) else {
            continue;
        };
        results.push(if meta.is_dir() {
            format!("{name}/")
        } else {
            name.clone()
        });
    }
    if results.is_empty() {
        return Ok(ToolOutput::text("(empty directory)"));
    }

    let count = CountLimit {
        reached: entry_limit_reached,
        limit,
        noun: "entries",
        hint: "",
        key: "entryLimitReached",
    };
    Ok(Listing::new(&results, count).finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::listing::first_text;
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use tempfile::TempDir;

    async fn run(dir: &Path, args: Value) -> Result<ToolOutput, ToolError> {
        LsTool::new().execute(args, &ToolContext::new(dir)).await
    }

    async fn text(dir: &Path, args: Value) -> String {
        first_text(run(dir, args).await)
    }

    #[tokio::test]
    async fn names_that_collate_equal_keep_readdirs_byte_order() {
        let dir = TempDir::new().unwrap();
        // Created in an order unlike byte order, so directory order cannot pass for it.
        for n in [
            "b.txt",
            "B.txt",
            "a.txt",
            "A.txt",
            "cafe\u{301}",
            "caf\u{e9}",
            "Z",
            "z",
        ] {
            std::fs::write(dir.path().join(n), "").unwrap();
        }
        // Pi 0.73.1 on the same names (node 20).
        assert_eq!(
            text(dir.path(), json!({})).await,
            "A.txt\na.txt\nB.txt\nb.txt\ncafe\u{301}\ncaf\u{e9}\nZ\nz"
        );
    }

    #[tokio::test]
    async fn pi_verified_collation_order() {
        let dir = TempDir::new().unwrap();
        let p = dir.path();
        for f in [
            "_under.txt",
            ".gitignore",
            "10.txt",
            "9.txt",
            "alpha.txt",
            "Beta.txt",
            "long.txt",
            "README.md",
            "Zeta.txt",
        ] {
            std::fs::write(p.join(f), "x").unwrap();
        }
        for d in [".hidden", "ignored", "src"] {
            std::fs::create_dir(p.join(d)).unwrap();
        }
        let out = run(p, json!({})).await.unwrap();
        assert_eq!(
            out,
            ToolOutput::text(
                "_under.txt\n.gitignore\n.hidden/\n10.txt\n9.txt\nalpha.txt\nBeta.txt\nignored/\nlong.txt\nREADME.md\nsrc/\nZeta.txt"
            )
        );
    }

    #[tokio::test]
    async fn collation_matches_pi_on_punctuation_digits_and_unicode() {
        // Expected order produced by Pi 0.73.1's ls on the same names (node 22, ICU root).
        let expected = "-dash\n'q\n(paren\n[br\n{cu\n@at\n#x\n`bt\n+plus\n=eq\n~x\n💡\n$d\n1_\n1-\n1.txt\n10\nA\nä\na b\na_b\na-b\na.b\na1\na10\na2\nab\né\nñ\nZ\nΩ\n日本";
        let dir = TempDir::new().unwrap();
        for name in expected.split('\n') {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        assert_eq!(text(dir.path(), json!({})).await, expected);
    }

    #[tokio::test]
    async fn symlinks_are_followed_and_broken_ones_dropped() {
        let dir = TempDir::new().unwrap();
        let p = dir.path();
        std::fs::create_dir(p.join("real")).unwrap();
        std::os::unix::fs::symlink("real", p.join("link")).unwrap();
        std::os::unix::fs::symlink("missing", p.join("broken")).unwrap();
        assert_eq!(text(p, json!({})).await, "link/\nreal/");
    }

    #[tokio::test]
    async fn entry_limit_semantics() {
        let dir = TempDir::new().unwrap();
        let p = dir.path();
        for f in ["a", "b", "c"] {
            std::fs::write(p.join(f), "").unwrap();
        }
        let out = run(p, json!({"limit": 2})).await.unwrap();
        assert_eq!(
            out.content[0].as_text().unwrap(),
            "a\nb\n\n[2 entries limit reached. Use limit=4 for more]"
        );
        assert_eq!(out.details, Some(json!({"entryLimitReached": 2})));
        // Exactly `limit` entries: no notice.
        assert_eq!(
            run(p, json!({"limit": 3})).await.unwrap(),
            ToolOutput::text("a\nb\nc")
        );
        // limit 0: empty.
        assert_eq!(text(p, json!({"limit": 0})).await, "(empty directory)");
        // A broken link after the limit still counts as "another entry".
        std::os::unix::fs::symlink("nowhere", p.join("d")).unwrap();
        assert_eq!(
            text(p, json!({"limit": 3})).await,
            "a\nb\nc\n\n[3 entries limit reached. Use limit=6 for more]"
        );
    }

    #[tokio::test]
    async fn empty_directory_and_errors() {
        let dir = TempDir::new().unwrap();
        let p = dir.path();
        std::fs::create_dir(p.join("empty")).unwrap();
        std::fs::write(p.join("file.txt"), "").unwrap();
        assert_eq!(text(p, json!({"path": "empty"})).await, "(empty directory)");
        let e = run(p, json!({"path": "nope"})).await.unwrap_err();
        assert_eq!(
            e.message,
            format!("Path not found: {}", p.join("nope").display())
        );
        let e = run(p, json!({"path": "file.txt"})).await.unwrap_err();
        assert_eq!(
            e.message,
            format!("Not a directory: {}", p.join("file.txt").display())
        );
    }

    #[tokio::test]
    async fn byte_limit_notice_joins_with_entry_notice() {
        let dir = TempDir::new().unwrap();
        let p = dir.path();
        // 300 names of 200 bytes: 60300 bytes > 51200.
        for i in 0..300 {
            std::fs::write(p.join(format!("{i:03}{}", "n".repeat(197))), "").unwrap();
        }
        let out = run(p, json!({"limit": 299})).await.unwrap();
        let t = out.content[0].as_text().unwrap();
        assert!(
            t.ends_with(
                "\n\n[299 entries limit reached. Use limit=598 for more. 50.0KB limit reached]"
            ),
            "{}",
            &t[t.len() - 120..]
        );
        // 255 lines of 200 bytes + newlines = 51254 > 51200: 254 fit.
        let body = t.split("\n\n[").next().unwrap();
        assert_eq!(body.split('\n').count(), 254);
        let details = out.details.unwrap();
        let keys: Vec<&String> = details.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["entryLimitReached", "truncation"]);
        assert_eq!(
            details["truncation"]["maxLines"],
            json!(9_007_199_254_740_991u64)
        );
    }
}
