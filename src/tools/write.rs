//! `write`: Pi's write tool (spec section 2): `mkdir -p` the parent, overwrite the file (through
//! symlinks), report the content's UTF-16 length as "bytes". Runs in the per-file mutation queue
//! so writes and edits to one file apply in call order. Depends only on the tool seams.

use std::io::Write;
use std::path::Path;

use async_trait::async_trait;
use serde_json::Value;

use super::args::{self, blocking, cancellable, check_aborted};
use super::definitions::pi_tool;
use super::path::{
    confined, fs_error, node_fs_error, node_null_bytes_path, open_for_writing, resolve_to_cwd,
};
use super::truncate::utf16_len;
use super::{Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};

pi_tool! {
    /// Pi's `write` tool.
    pub struct WriteTool = "write";
}

#[async_trait]
impl Tool for WriteTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        check_aborted(ctx)?;
        let path = args::text_or_empty(&args, "path");
        let content = args::text_or_empty(&args, "content");
        let abs = resolve_to_cwd(&path, &ctx.cwd, &ctx.home);
        confined(&abs, ctx)?;
        // Take the queue place now, before any await, so same-file calls keep call order.
        let target = abs.clone();
        let jail = ctx.jail.clone();
        let queued = ctx.queue.run(
            &abs,
            blocking("write", move || write_file(&jail, &target, &content)),
        );
        let units = cancellable(ctx, queued).await?;
        Ok(ToolOutput::text(format!(
            "Successfully wrote {units} bytes to {path}"
        )))
    }
}

/// `mkdir(dirname, {recursive: true})` then `writeFile`; returns the content's UTF-16 length.
/// Node's errors: a NUL byte in the path fails the first call that gets it (`mkdir` if the
/// directory part has one), an `open` failure names the path, a failed `write` does not.
fn write_file(jail: &crate::sandbox::Jail, abs: &Path, content: &str) -> Result<usize, ToolError> {
    let has_nul = |p: &std::path::Path| p.as_os_str().as_encoded_bytes().contains(&0);
    if let Some(parent) = abs.parent() {
        if has_nul(parent) {
            return Err(ToolError::new(node_null_bytes_path(
                &parent.to_string_lossy(),
            )));
        }
        jail.create_dir_all(parent)
            .map_err(|e| fs_error(&e, "mkdir", parent))?;
    }
    if has_nul(abs) {
        return Err(ToolError::new(node_null_bytes_path(&abs.to_string_lossy())));
    }
    let mut file = open_for_writing(jail, abs, "write only writes").map_err(ToolError::new)?;
    file.write_all(content.as_bytes())
        .map_err(|e| ToolError::new(node_fs_error(&e, "write", None)))?;
    Ok(utf16_len(content))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;
    use tempfile::TempDir;

    async fn run(ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
        WriteTool::new().execute(args, ctx).await
    }

    #[tokio::test]
    async fn creates_parents_and_reports_utf16_length() {
        let dir = TempDir::new().unwrap();
        let ctx = ToolContext::new(dir.path());
        let out = run(
            &ctx,
            json!({"path": "sub/dir/new.txt", "content": "héllo 😀\n"}),
        )
        .await
        .unwrap();
        assert_eq!(
            out,
            ToolOutput::text("Successfully wrote 9 bytes to sub/dir/new.txt")
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("sub/dir/new.txt")).unwrap(),
            "héllo 😀\n"
        );
        let out = run(&ctx, json!({"path": "e.txt", "content": "😀"}))
            .await
            .unwrap();
        assert_eq!(out, ToolOutput::text("Successfully wrote 2 bytes to e.txt"));
    }

    #[tokio::test]
    async fn overwrites_and_keeps_bytes_verbatim() {
        let dir = TempDir::new().unwrap();
        std::fs::write(dir.path().join("f.txt"), "old content that is longer").unwrap();
        let ctx = ToolContext::new(dir.path());
        run(&ctx, json!({"path": "f.txt", "content": "\u{FEFF}a\r\nb"}))
            .await
            .unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("f.txt")).unwrap(),
            "\u{FEFF}a\r\nb".as_bytes()
        );
    }

    #[tokio::test]
    async fn writes_through_symlinks() {
        let dir = TempDir::new().unwrap();
        std::fs::write(dir.path().join("target.txt"), "old").unwrap();
        std::os::unix::fs::symlink("target.txt", dir.path().join("link.txt")).unwrap();
        let ctx = ToolContext::new(dir.path());
        run(&ctx, json!({"path": "link.txt", "content": "new"}))
            .await
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("target.txt")).unwrap(),
            "new"
        );
        assert!(
            std::fs::symlink_metadata(dir.path().join("link.txt"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[tokio::test]
    async fn directory_target_is_eisdir_open() {
        let dir = TempDir::new().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let ctx = ToolContext::new(dir.path());
        let e = run(&ctx, json!({"path": "sub", "content": "x"}))
            .await
            .unwrap_err();
        assert_eq!(
            e.message,
            format!(
                "EISDIR: illegal operation on a directory, open '{}'",
                dir.path().join("sub").display()
            )
        );
    }

    #[tokio::test]
    async fn parent_is_a_file_is_enotdir_mkdir() {
        let dir = TempDir::new().unwrap();
        std::fs::write(dir.path().join("file"), "x").unwrap();
        let ctx = ToolContext::new(dir.path());
        let e = run(&ctx, json!({"path": "file/sub/x.txt", "content": "x"}))
            .await
            .unwrap_err();
        assert_eq!(
            e.message,
            format!(
                "ENOTDIR: not a directory, mkdir '{}'",
                dir.path().join("file/sub").display()
            )
        );
    }

    #[tokio::test]
    async fn same_file_writes_apply_in_call_order() {
        let dir = TempDir::new().unwrap();
        let ctx = ToolContext::new(dir.path());
        let tool = WriteTool::new();
        let calls: Vec<_> = (0..20)
            .map(|i| tool.execute(json!({"path": "f.txt", "content": format!("v{i}")}), &ctx))
            .collect();
        for out in futures::future::join_all(calls).await {
            out.unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
            "v19"
        );
    }

    #[tokio::test]
    async fn aborted_before_start() {
        let dir = TempDir::new().unwrap();
        let ctx = ToolContext::new(dir.path());
        ctx.cancel.cancel();
        let e = run(&ctx, json!({"path": "a.txt", "content": "x"}))
            .await
            .unwrap_err();
        assert_eq!(e.message, "Operation aborted");
        assert!(!dir.path().join("a.txt").exists());
    }
}
