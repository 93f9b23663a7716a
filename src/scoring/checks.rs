//! Running a task's checks in a workspace after the agent stops.
//!
//! Command checks run with `bash -c` in the workspace through the run's sandbox
//! ([`crate::sandbox::Jail`]: under `isolated` inside bubblewrap), with exactly the environment
//! the caller passes (the runner passes the same allow-listed environment the agent's bash got);
//! when the check ends (exit or timeout) every process it started is killed. Output is captured
//! bounded: the last [`OUTPUT_TAIL_BYTES`] of stdout and of stderr are kept for the report. File
//! checks read the workspace through the run's jail, as the file tools do ([`read_checked`]).
//! Depends on `tasks` and `sandbox` only.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::record::CheckResult;
use crate::sandbox::output::{LazyPipe, Tail, WATCH_OUTPUT_AFTER, output_pipe};
use crate::sandbox::{CommandSpec, Jail, Sandbox};
use crate::tasks::{Check, CheckKind, FileAssert, Task};

/// How much of the end of each output stream a check result keeps.
pub const OUTPUT_TAIL_BYTES: usize = 8 * 1024;

/// How long to wait for the output pipes to close after the command's processes were killed.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// The most reads of a check's ended pipe at once: more than a pipe holds, so everything written
/// before the end is read, and a process left behind that writes on cannot keep the check.
const DRAIN_READS: usize = 128;

/// A check the harness could not start (no descriptors left, its sandbox gone, no shell on its
/// `PATH`): the run has no verdict, which is the harness's failure, not the model's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckNotStarted {
    /// The check's name.
    pub check: String,
    /// Why it could not start.
    pub why: String,
}

impl std::fmt::Display for CheckNotStarted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "check `{}` could not be started: {}; the run has no verdict (`--rerun-errors` runs \
             it again)",
            self.check, self.why
        )
    }
}

/// Runs every check of `task` in `workspace`, in order (a failing check does not stop the rest),
/// unconfined (sandbox tier `none`); stops at a check that cannot start.
pub async fn run_checks(
    task: &Task,
    workspace: &Path,
    env: &[(String, String)],
) -> Result<Vec<CheckResult>, CheckNotStarted> {
    run_checks_in(task, &Sandbox::none().jail(workspace), workspace, env).await
}

/// Runs every check of `task` in `workspace` under `jail`, in order; stops at a check that
/// cannot start.
pub async fn run_checks_in(
    task: &Task,
    jail: &Jail,
    workspace: &Path,
    env: &[(String, String)],
) -> Result<Vec<CheckResult>, CheckNotStarted> {
    let mut results = Vec::with_capacity(task.checks.len());
    for check in &task.checks {
        results.push(run_check_in(check, jail, workspace, env).await?);
    }
    Ok(results)
}

/// Runs one check, unconfined.
pub async fn run_check(
    check: &Check,
    workspace: &Path,
    env: &[(String, String)],
) -> Result<CheckResult, CheckNotStarted> {
    run_check_in(check, &Sandbox::none().jail(workspace), workspace, env).await
}

/// Runs one check under `jail`.
pub async fn run_check_in(
    check: &Check,
    jail: &Jail,
    workspace: &Path,
    env: &[(String, String)],
) -> Result<CheckResult, CheckNotStarted> {
    let started = Instant::now();
    let (passed, detail) = match &check.kind {
        CheckKind::Command {
            run,
            expect_exit,
            timeout,
        } => command_check(run, *expect_exit, *timeout, jail, workspace, env)
            .await
            .map_err(|why| CheckNotStarted {
                check: check.name.clone(),
                why,
            })?,
        CheckKind::File { path, assert } => {
            // File work, off the runtime's workers.
            let (jail, full) = (jail.clone(), workspace.join(path));
            let (shown, assert) = (path.clone(), assert.clone());
            tokio::task::spawn_blocking(move || file_check(&jail, &full, &shown, &assert))
                .await
                .unwrap_or_else(|e| (false, format!("the check failed: {e}")))
        }
    };
    Ok(CheckResult {
        name: check.name.clone(),
        passed,
        detail,
        duration: started.elapsed(),
    })
}

/// Runs a command check: whether it passed and what it showed, or why it could not start. A
/// workspace the agent removed is the agent's doing: that check fails instead.
async fn command_check(
    run: &str,
    expect_exit: i32,
    timeout: Duration,
    jail: &Jail,
    workspace: &Path,
    env: &[(String, String)],
) -> Result<(bool, String), String> {
    let not_started = |err: std::io::Error| {
        if workspace.is_dir() {
            Err(format!("failed to start bash: {err}"))
        } else {
            Ok((
                false,
                format!(
                    "failed to start bash: {err} (the workspace folder {} is gone)",
                    workspace.display()
                ),
            ))
        }
    };
    let pipes = (|| -> std::io::Result<_> { Ok((output_pipe()?, output_pipe()?)) })();
    let ((out, out_tx), (err, err_tx)) = match pipes {
        Ok(pipes) => pipes,
        Err(err) => return not_started(err),
    };
    let spawned = jail
        .spawn(CommandSpec {
            shell: Path::new("bash"),
            script: run,
            cwd: workspace,
            env,
            stdout: out_tx,
            stderr: err_tx,
        })
        .await;
    let mut spawned = match spawned {
        Ok(spawned) => spawned,
        Err(err) => return not_started(err),
    };
    // A check that ends within [`WATCH_OUTPUT_AFTER`] has its output read at its end, without
    // the runtime watching the pipes; past it they are read as it runs.
    let started = Instant::now();
    let mut status = tokio::time::timeout(WATCH_OUTPUT_AFTER.min(timeout), spawned.wait()).await;
    let ended = status.is_ok();
    let stdout = Reading::start(out, ended);
    let stderr = Reading::start(err, ended);
    if !ended {
        let left = timeout.saturating_sub(started.elapsed());
        status = tokio::time::timeout(left, spawned.wait()).await;
    }
    let status = match status {
        // Under `isolated`, the supervisor's word that it could not start comes with the end.
        Ok(Err(err)) if crate::sandbox::NotStarted::is(&err) => return not_started(err),
        status => status,
    };
    let timed_out = status.is_err();
    // On a timeout everything dies; after a normal exit, anything the shell left running must
    // not outlive the check either.
    spawned.kill_all().await;
    let status = match status {
        Ok(status) => status.ok(),
        Err(_) => spawned.wait().await.ok(),
    };
    let out = stdout.text().await;
    let err = stderr.text().await;
    let mut detail = if timed_out {
        format!("timed out after {timeout:?} (every process of the check killed)")
    } else {
        match status.and_then(|s| s.code()) {
            Some(code) => format!("exit {code} (expected {expect_exit})"),
            None => "killed by a signal".to_owned(),
        }
    };
    let passed = !timed_out && status.and_then(|s| s.code()) == Some(expect_exit);
    for (label, text) in [("stdout", out), ("stderr", err)] {
        if !text.trim().is_empty() {
            detail.push_str(&format!("\n--- {label} ---\n{}", text.trim_end()));
        }
    }
    Ok((passed, detail))
}

/// The tail of one of a check's output streams, being read.
enum Reading {
    /// Read to its end already.
    Done(String),
    /// Read on a task of its own.
    Task(tokio::task::JoinHandle<String>),
}

impl Reading {
    /// Reads `pipe`: what it holds now, to its end if the check has `ended` and every writer
    /// is gone; else on a task, through the runtime's watch.
    fn start(mut pipe: LazyPipe, ended: bool) -> Reading {
        let mut tail = Tail::new(OUTPUT_TAIL_BYTES);
        if ended {
            let mut buf = [0u8; 8192];
            let read = pipe.read_now(&mut buf, DRAIN_READS, |data| {
                tail.push(data);
                Ok::<_, std::convert::Infallible>(())
            });
            if matches!(read, Ok(true)) {
                return Reading::Done(tail.text());
            }
        }
        if let Err(e) = pipe.watch() {
            return Reading::Done(format!(
                "{}(the rest of the output not collected: {e})",
                tail.text()
            ));
        }
        Reading::Task(tokio::spawn(read_tail(pipe, tail)))
    }

    /// The tail's text, once the stream has ended, or as it is when a process outside the
    /// check keeps it open past [`DRAIN_GRACE`].
    async fn text(self) -> String {
        let task = match self {
            Reading::Done(text) => return text,
            Reading::Task(task) => task,
        };
        let abort = task.abort_handle();
        match tokio::time::timeout(DRAIN_GRACE, task).await {
            Ok(Ok(text)) => text,
            Ok(Err(_)) => String::new(),
            Err(_) => {
                abort.abort();
                "(output not collected: a process outside the check kept the pipe open)".to_owned()
            }
        }
    }
}

/// Reads a watched stream to its end onto `tail`, which keeps only the last
/// [`OUTPUT_TAIL_BYTES`].
async fn read_tail(mut pipe: LazyPipe, mut tail: Tail) -> String {
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => tail.push(&buf[..n]),
        }
    }
    tail.text()
}

/// The most bytes a file check reads of the file it checks: a bound on what a file the agent
/// left (a sparse file of any size costs a command nothing) takes of the harness's memory.
pub const FILE_CHECK_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// The workspace file `full` as a file check reads it: through the run's jail (beneath the
/// workspace in one step under a confining tier, so a symlink the agent left there cannot lead
/// the check, or its report, to a file outside), opened non-blocking (a FIFO the agent left in
/// its place cannot hang the run), a regular file of at most [`FILE_CHECK_MAX_BYTES`]; else
/// why not.
fn read_checked(jail: &Jail, full: &Path) -> Result<Vec<u8>, String> {
    let file = jail
        .open(full, crate::sandbox::How::Read)
        .map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(format!(
            "it is {}, not a regular file",
            crate::sandbox::beneath::file_kind(&meta.file_type())
        ));
    }
    crate::sandbox::beneath::read_at_most(file, FILE_CHECK_MAX_BYTES)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| {
            format!(
                "it holds more than {} MiB, the most a file check reads",
                FILE_CHECK_MAX_BYTES >> 20
            )
        })
}

fn file_check(jail: &Jail, full: &Path, shown: &str, assert: &FileAssert) -> (bool, String) {
    let exists = std::fs::symlink_metadata(full).is_ok();
    match assert {
        FileAssert::Exists(true) => (
            exists,
            if exists {
                format!("{shown} exists")
            } else {
                format!("{shown} does not exist")
            },
        ),
        FileAssert::Exists(false) => (
            !exists,
            if exists {
                format!("{shown} exists but must not")
            } else {
                format!("{shown} does not exist")
            },
        ),
        FileAssert::Contains(text) | FileAssert::NotContains(text) => {
            let want = matches!(assert, FileAssert::Contains(_));
            match read_checked(jail, full) {
                Err(err) => (false, format!("failed to read {shown}: {err}")),
                Ok(bytes) => {
                    let found = String::from_utf8_lossy(&bytes).contains(text.as_str());
                    let detail = match (want, found) {
                        (true, true) => format!("{shown} contains {text:?}"),
                        (true, false) => format!("{shown} does not contain {text:?}"),
                        (false, true) => format!("{shown} contains {text:?} but must not"),
                        (false, false) => format!("{shown} does not contain {text:?}"),
                    };
                    (want == found, detail)
                }
            }
        }
        FileAssert::EqualsFile(expected) => {
            let actual = match read_checked(jail, full) {
                Ok(bytes) => bytes,
                Err(err) => return (false, format!("failed to read {shown}: {err}")),
            };
            let wanted = match std::fs::read(expected) {
                Ok(bytes) => bytes,
                Err(err) => {
                    return (
                        false,
                        format!(
                            "failed to read the expected file {}: {err}",
                            expected.display()
                        ),
                    );
                }
            };
            if actual == wanted {
                return (true, format!("{shown} equals the expected file"));
            }
            let diff = similar::TextDiff::from_lines(
                String::from_utf8_lossy(&wanted).as_ref(),
                String::from_utf8_lossy(&actual).as_ref(),
            )
            .unified_diff()
            .context_radius(2)
            .header("expected", shown)
            .to_string();
            let short: String = diff.chars().take(OUTPUT_TAIL_BYTES).collect();
            (
                false,
                format!("{shown} differs from the expected file\n{short}"),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::{Check, CheckKind, FileAssert};

    fn env() -> Vec<(String, String)> {
        std::env::vars()
            .filter(|(k, _)| k == "PATH" || k == "HOME")
            .collect()
    }

    fn command(run: &str, expect_exit: i32, timeout: Duration) -> Check {
        Check {
            name: run.to_owned(),
            kind: CheckKind::Command {
                run: run.to_owned(),
                expect_exit,
                timeout,
            },
        }
    }

    #[tokio::test]
    async fn a_check_without_a_shell_is_not_started_and_a_removed_workspace_fails_it() {
        let dir = tempfile::tempdir().unwrap();
        let check = command("true", 0, Duration::from_secs(10));
        let no_shell = [("PATH".to_owned(), "/nowhere".to_owned())];
        let err = run_check(&check, dir.path(), &no_shell).await.unwrap_err();
        assert_eq!(err.check, "true");
        assert!(err.why.starts_with("failed to start bash: "), "{err}");
        assert!(err.to_string().contains("the run has no verdict"), "{err}");
        // The agent removed its own workspace: the check fails, and says why.
        let gone = dir.path().join("work");
        let r = run_check(&check, &gone, &env()).await.unwrap();
        assert!(!r.passed);
        assert!(r.detail.contains("is gone"), "{}", r.detail);
    }

    #[tokio::test]
    async fn a_command_check_passes_on_the_expected_exit_and_runs_in_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("marker.txt"), "here").unwrap();
        let ok = run_check(
            &command(
                "test -f marker.txt && echo found",
                0,
                Duration::from_secs(10),
            ),
            dir.path(),
            &env(),
        )
        .await
        .unwrap();
        assert!(ok.passed, "{}", ok.detail);
        assert!(ok.detail.contains("found"), "{}", ok.detail);
        let three = run_check(
            &command("exit 3", 3, Duration::from_secs(10)),
            dir.path(),
            &env(),
        )
        .await
        .unwrap();
        assert!(three.passed, "{}", three.detail);
    }

    #[tokio::test]
    async fn a_command_check_fails_on_another_exit_and_keeps_the_output() {
        let dir = tempfile::tempdir().unwrap();
        let r = run_check(
            &command(
                "echo out; echo oops >&2; exit 1",
                0,
                Duration::from_secs(10),
            ),
            dir.path(),
            &env(),
        )
        .await
        .unwrap();
        assert!(!r.passed);
        assert_eq!(
            r.detail,
            "exit 1 (expected 0)\n--- stdout ---\nout\n--- stderr ---\noops"
        );
    }

    #[tokio::test]
    async fn the_environment_is_exactly_what_the_caller_passes() {
        let dir = tempfile::tempdir().unwrap();
        let mut env = env();
        env.push(("HARNESS_CHECK_VAR".into(), "yes".into()));
        let r = run_check(
            &command(
                "test \"$HARNESS_CHECK_VAR\" = yes && test -z \"$CARGO_PKG_NAME\"",
                0,
                Duration::from_secs(10),
            ),
            dir.path(),
            &env,
        )
        .await
        .unwrap();
        assert!(r.passed, "{}", r.detail);
    }

    #[tokio::test]
    async fn a_timeout_kills_the_whole_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        // The background sleep holds the pipes open; only killing the group ends it.
        let r = run_check(
            &command(
                "sleep 30 & sleep 30; echo never",
                0,
                Duration::from_millis(300),
            ),
            dir.path(),
            &env(),
        )
        .await
        .unwrap();
        assert!(!r.passed);
        assert!(
            r.detail
                .starts_with("timed out after 300ms (every process of the check killed)"),
            "{}",
            r.detail
        );
        assert!(!r.detail.contains("never"));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "took {:?}",
            started.elapsed()
        );
    }

    #[tokio::test]
    async fn a_check_that_ends_at_once_keeps_its_output_even_with_a_process_left_holding_it() {
        // The shell ends within the first milliseconds, before the pipes are watched: what it
        // printed is read at its end. The sleeper it left holds both pipes open until it is
        // killed, so they are watched from then on and read to their end.
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let r = run_check(
            &command(
                "echo out; echo err >&2; sleep 30 & exit 3",
                3,
                Duration::from_secs(10),
            ),
            dir.path(),
            &env(),
        )
        .await
        .unwrap();
        assert!(r.passed, "{}", r.detail);
        assert_eq!(
            r.detail,
            "exit 3 (expected 3)\n--- stdout ---\nout\n--- stderr ---\nerr"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }

    #[tokio::test]
    async fn long_output_keeps_only_the_tail() {
        let dir = tempfile::tempdir().unwrap();
        let r = run_check(
            &command("seq 1 20000", 0, Duration::from_secs(10)),
            dir.path(),
            &env(),
        )
        .await
        .unwrap();
        assert!(r.passed);
        assert!(r.detail.contains("earlier output cut"));
        assert!(
            r.detail.ends_with("19999\n20000"),
            "{}",
            &r.detail[r.detail.len() - 40..]
        );
        assert!(r.detail.len() < OUTPUT_TAIL_BYTES + 200);
    }

    #[tokio::test]
    async fn a_file_check_reads_only_a_regular_file_inside_the_workspace_within_a_bound() {
        // What the agent may leave at the checked path: a FIFO (the read waited for a writer,
        // and the run with it, for good), a symlink to a file outside (its bytes went into the
        // report's diff), a sparse file of any size (read whole).
        let root = tempfile::tempdir().unwrap();
        let ws = root.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        std::fs::write(root.path().join("secret.txt"), "outside secret\n").unwrap();
        std::fs::write(ws.join("expected.txt"), "answer\n").unwrap();
        nix::unistd::mkfifo(&ws.join("fifo.txt"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::os::unix::fs::symlink(root.path().join("secret.txt"), ws.join("link.txt")).unwrap();
        std::fs::File::create(ws.join("sparse.txt"))
            .unwrap()
            .set_len(FILE_CHECK_MAX_BYTES + 1)
            .unwrap();
        let equals = |path: &str| Check {
            name: path.into(),
            kind: CheckKind::File {
                path: path.into(),
                assert: FileAssert::EqualsFile(ws.join("expected.txt")),
            },
        };
        let jail = Sandbox::detect(Some(crate::sandbox::Tier::Workspace)).jail(&ws);
        // The FIFO last: a read stuck on it would hold the test's runtime at its end.
        for (path, says) in [
            ("link.txt", "failed to read link.txt: Access denied: "),
            (
                "sparse.txt",
                "failed to read sparse.txt: it holds more than 64 MiB, the most a file check reads",
            ),
            (
                "fifo.txt",
                "failed to read fifo.txt: it is a FIFO, not a regular file",
            ),
        ] {
            let r = tokio::time::timeout(
                Duration::from_secs(5),
                run_check_in(&equals(path), &jail, &ws, &env()),
            )
            .await
            .unwrap_or_else(|_| panic!("the check of {path} hangs"))
            .unwrap();
            assert!(!r.passed, "{path}");
            assert!(r.detail.starts_with(says), "{path}: {}", r.detail);
            assert!(!r.detail.contains("outside secret"), "{}", r.detail);
        }
    }

    #[tokio::test]
    async fn file_checks() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hello world\n").unwrap();
        std::fs::write(dir.path().join("expected.txt"), "hello world\n").unwrap();
        std::fs::write(dir.path().join("other.txt"), "bye\n").unwrap();
        let file = |path: &str, assert: FileAssert| Check {
            name: path.into(),
            kind: CheckKind::File {
                path: path.into(),
                assert,
            },
        };
        let cases = [
            (file("a.txt", FileAssert::Exists(true)), true),
            (file("b.txt", FileAssert::Exists(true)), false),
            (file("b.txt", FileAssert::Exists(false)), true),
            (file("a.txt", FileAssert::Exists(false)), false),
            (file("a.txt", FileAssert::Contains("world".into())), true),
            (file("a.txt", FileAssert::Contains("moon".into())), false),
            (file("b.txt", FileAssert::Contains("moon".into())), false),
            (file("a.txt", FileAssert::NotContains("moon".into())), true),
            (
                file("a.txt", FileAssert::NotContains("world".into())),
                false,
            ),
            (
                file(
                    "a.txt",
                    FileAssert::EqualsFile(dir.path().join("expected.txt")),
                ),
                true,
            ),
            (
                file(
                    "other.txt",
                    FileAssert::EqualsFile(dir.path().join("expected.txt")),
                ),
                false,
            ),
        ];
        for (check, want) in cases {
            let r = run_check(&check, dir.path(), &[]).await.unwrap();
            assert_eq!(r.passed, want, "{check:?}: {}", r.detail);
        }
        let r = run_check(
            &file(
                "other.txt",
                FileAssert::EqualsFile(dir.path().join("expected.txt")),
            ),
            dir.path(),
            &[],
        )
        .await
        .unwrap();
        assert!(r.detail.contains("-hello world\n+bye"), "{}", r.detail);
    }
}
