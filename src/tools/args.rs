//! Boilerplate the file tools share: reading their (already validated) JSON arguments the way
//! Pi's JavaScript reads them, and running their work so that an abort wins with Pi's
//! `"Operation aborted"`. Depends only on the tool seams.

use std::future::Future;

use serde_json::Value;

use super::{ToolContext, ToolError};

/// Pi's error when the run's abort signal fires.
pub fn aborted() -> ToolError {
    ToolError::new("Operation aborted")
}

/// `Err(aborted)` if the run is already aborted (Pi checks the signal before doing anything).
pub fn check_aborted(ctx: &ToolContext) -> Result<(), ToolError> {
    if ctx.cancel.is_cancelled() {
        return Err(aborted());
    }
    Ok(())
}

/// Awaits `work` unless the run is aborted first, which ends it with [`aborted`].
pub async fn cancellable<T>(
    ctx: &ToolContext,
    work: impl Future<Output = Result<T, ToolError>>,
) -> Result<T, ToolError> {
    tokio::select! {
        _ = ctx.cancel.cancelled() => Err(aborted()),
        result = work => result,
    }
}

/// Runs blocking `work` on tokio's blocking pool; a task that panicked is
/// `"{name} task failed: …"`.
pub async fn blocking<T: Send + 'static>(
    name: &str,
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::new(format!("{name} task failed: {e}")))?
}

/// The string argument `key`, if it is a string.
pub fn text<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key).and_then(Value::as_str)
}

/// The string argument `key`, `""` when it is missing.
pub fn text_or_empty(args: &Value, key: &str) -> String {
    text(args, key).unwrap_or_default().to_owned()
}

/// The number argument `key`, if it is a number.
pub fn number(args: &Value, key: &str) -> Option<f64> {
    args.get(key).and_then(Value::as_f64)
}

/// The boolean argument `key`, `false` when it is missing.
pub fn flag(args: &Value, key: &str) -> bool {
    args.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// The search tools' `path` argument: `path || "."`.
pub fn search_path(args: &Value) -> &str {
    text(args, "path").filter(|p| !p.is_empty()).unwrap_or(".")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_arguments_as_pi_does() {
        let args = json!({"path": "", "n": 2.5, "s": "x", "b": true});
        assert_eq!(search_path(&args), ".");
        assert_eq!(search_path(&json!({"path": "src"})), "src");
        assert_eq!(number(&args, "n"), Some(2.5));
        assert_eq!(number(&args, "s"), None);
        assert_eq!(text_or_empty(&args, "s"), "x");
        assert_eq!(text_or_empty(&args, "missing"), "");
        assert!(flag(&args, "b"));
        assert!(!flag(&args, "s"));
    }

    #[tokio::test]
    async fn an_abort_before_or_during_the_work_wins_and_a_panic_is_reported() {
        let ctx = ToolContext::new(std::env::temp_dir());
        assert!(check_aborted(&ctx).is_ok());
        let done = cancellable(&ctx, blocking("t", || Ok(7))).await;
        assert_eq!(done.unwrap(), 7);
        let err = blocking("t", || -> Result<(), _> { panic!("boom") })
            .await
            .unwrap_err();
        assert!(
            err.message.starts_with("t task failed: "),
            "{}",
            err.message
        );
        ctx.cancel.cancel();
        assert_eq!(
            check_aborted(&ctx).unwrap_err().message,
            "Operation aborted"
        );
        let err = cancellable(&ctx, std::future::pending::<Result<(), ToolError>>()).await;
        assert_eq!(err.unwrap_err().message, "Operation aborted");

        let ctx = ToolContext::new(std::env::temp_dir());
        let cancel = ctx.cancel.clone();
        let work = cancellable(&ctx, async {
            cancel.cancel();
            std::future::pending::<Result<(), ToolError>>().await
        });
        assert_eq!(work.await.unwrap_err().message, "Operation aborted");
    }
}
