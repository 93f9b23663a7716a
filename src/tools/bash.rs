//! `bash`: Pi's bash tool (spec section 4): run a command with `/bin/bash -c` in the workspace,
//! merge stdout and stderr in arrival order, keep a bounded rolling tail of the output, save the
//! full output to a temp file once it exceeds Pi's limits, and report Pi's exact texts for exit
//! codes, timeouts and aborts.
//!
//! Deliberate deviations from Pi (see `DEVIATIONS.md`): the command runs under the run's sandbox
//! ([`ToolContext::jail`]: `isolated` puts it in bubblewrap), its environment is
//! [`ToolContext::env`] exactly (an allow-list; `~/.pi/agent/bin` is *not* prepended to `PATH`),
//! whatever it leaves running (`&`, `setsid`, `nohup`) is killed when the call ends, and the
//! full-output file goes to [`ToolContext::temp_dir`] instead of the host's `os.tmpdir()` and
//! stops at [`FULL_OUTPUT_CAP`] with a notice.
//!
//! Depends on the shared tool types (`tools`), `truncate` and the `sandbox`; never on the agent
//! loop.

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use super::definitions::pi_tool;
use super::path::node_null_bytes_arg;
use super::truncate::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncatedBy, TruncationResult, format_size, js_number,
    truncate_tail,
};
use super::{Tool, ToolContext, ToolDefinition, ToolError, ToolOutput};
use crate::sandbox::CommandSpec;
use crate::sandbox::output::{
    CappedFile, FULL_OUTPUT_CAP, LazyPipe, WATCH_OUTPUT_AFTER, cap_notice, output_pipe,
};

/// How long Pi waits after the shell exits for the pipes to close (`waitForChildProcess`).
const EXIT_STDIO_GRACE: Duration = Duration::from_millis(100);

/// How long a killed command (timed out, aborted) is waited for, its shell's end and its pipe's,
/// before the call goes on to kill everything it started: the kill of its process group ends
/// it at once, unless what it started left the group or outruns the kill.
const KILLED_WAIT: Duration = Duration::from_secs(2);

/// The most reads of [`READ_CHUNK`] taken from the pipe once the grace is over: more than a
/// pipe holds (64 KiB by default, 1 MiB at most without privileges), so everything written
/// before the exit is read, and a process left behind that writes on cannot keep the call.
const EXIT_DRAIN_READS: usize = 64;
/// Read buffer size for the combined output pipe.
const READ_CHUNK: usize = 64 * 1024;
/// Node's `setTimeout` limit: larger delays fire after 1 ms (`TIMEOUT_MAX`).
const NODE_TIMEOUT_MAX_MS: f64 = 2_147_483_647.0;

pi_tool! {
    /// Pi's `bash` tool.
    pub struct BashTool = "bash";
}

#[async_trait]
impl Tool for BashTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    async fn execute(&self, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let command = args
            .get("command")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolError::new("command must be a string"))?;
        let timeout = args.get("timeout").and_then(Value::as_f64);
        run_bash(command, timeout, ctx).await
    }
}

/// Why the wait for the command ended early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interrupt {
    Aborted,
    TimedOut,
}

/// Runs `command` as Pi's bash tool does and formats the result.
async fn run_bash(
    command: &str,
    timeout: Option<f64>,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    if !ctx.cwd.exists() {
        return Err(ToolError::new(format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            ctx.cwd.display()
        )));
    }
    let mut output = OutputAccumulator::new(ctx.temp_dir.clone());
    // Pi spawns and kills at once when the signal is already aborted; not spawning gives the same
    // text ("Command aborted") without racing the kill against early output.
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::new("Command aborted"));
    }

    // Node refuses a NUL byte in a spawn argument before spawning (`args[1]` is the command,
    // after `-c`).
    if command.contains('\0') {
        return Err(ToolError::new(node_null_bytes_arg("args[1]", command)));
    }

    // One pipe for both streams: the kernel keeps the true arrival order. Not watched by the
    // runtime until [`WATCH_OUTPUT_AFTER`].
    let (mut pipe, writer) = output_pipe().map_err(|e| spawn_error(&e))?;
    let writer_clone = writer.try_clone().map_err(|e| spawn_error(&e))?;
    let shell = shell_path(&ctx.env);
    let mut spawned = ctx
        .jail
        .spawn(CommandSpec {
            shell: &shell,
            script: command,
            cwd: &ctx.cwd,
            env: &ctx.env,
            stdout: writer,
            stderr: writer_clone,
        })
        .await
        .map_err(|e| spawn_error(&e))?;

    let deadline = timeout
        .filter(|t| *t > 0.0)
        .map(|t| Instant::now() + node_timer_delay(t));
    let mut timed_out = false;
    let mut aborted = false;
    let mut exit: Option<std::process::ExitStatus> = None;
    let mut grace_end: Option<Instant> = None;
    // Once killed (timed out, aborted): how long the shell's end and the pipe's are waited for.
    let mut kill_end: Option<Instant> = None;
    let mut buf = vec![0u8; READ_CHUNK];
    let watch_at = Instant::now() + WATCH_OUTPUT_AFTER;

    loop {
        if exit.is_some() && pipe.is_ended() {
            break;
        }
        tokio::select! {
            read = pipe.read(&mut buf), if !pipe.is_ended() => match read {
                // At its end (or a failed read) the pipe is `Ended`.
                Ok(0) | Err(_) => {}
                Ok(n) => output.append(&buf[..n])?,
            },
            _ = tokio::time::sleep_until(watch_at), if pipe.is_unwatched() => {
                watch(&mut pipe, &mut buf, &mut output)?;
            }
            status = spawned.wait(), if exit.is_none() => {
                exit = Some(status.map_err(|e| ToolError::new(e.to_string()))?);
                grace_end = Some(Instant::now() + EXIT_STDIO_GRACE);
                // What it wrote is in the pipe: read at once, and watched only if something it
                // left still holds the pipe open.
                if pipe.is_unwatched() {
                    watch(&mut pipe, &mut buf, &mut output)?;
                }
            }
            _ = sleep_until_opt(grace_end), if grace_end.is_some() => {
                // Past the grace the pipe is given up on (a process the command left holds it
                // open), but what is in it was written before the exit: read it first. On a
                // loaded machine this task can come back after the grace with the command's
                // whole output still unread (a replay got "(no output)" for a test run that
                // printed its summary). Bounded: a process left behind may write on.
                drain_now(&mut pipe, &mut buf, &mut output)?;
                break;
            }
            _ = sleep_until_opt(kill_end), if kill_end.is_some() => {
                // Killed, and still not ended: what the command started outlives its group (a
                // fork bomb keeps a sandbox's supervisor from answering). The kill of all of it
                // below ends it, whatever it takes.
                drain_now(&mut pipe, &mut buf, &mut output)?;
                break;
            }
            _ = sleep_until_opt(deadline), if deadline.is_some() && !timed_out => {
                timed_out = true;
                spawned.kill_group();
                kill_end.get_or_insert(Instant::now() + KILLED_WAIT);
            }
            _ = ctx.cancel.cancelled(), if !aborted => {
                aborted = true;
                spawned.kill_group();
                kill_end.get_or_insert(Instant::now() + KILLED_WAIT);
            }
        }
    }
    // Whatever the command left running (`&`, `setsid`, `nohup`) ends with the call.
    spawned.kill_all().await;
    drop(pipe);
    // Pi checks the abort signal before the timeout flag once the wait is over.
    let interrupt = if aborted {
        Some(Interrupt::Aborted)
    } else if timed_out {
        Some(Interrupt::TimedOut)
    } else {
        None
    };

    let snapshot = output.finish()?;
    match interrupt {
        Some(kind) => {
            let (text, _) = format_output(&snapshot, "");
            let status = match kind {
                Interrupt::Aborted => "Command aborted".to_owned(),
                Interrupt::TimedOut => format!(
                    "Command timed out after {} seconds",
                    js_number(timeout.unwrap_or_default())
                ),
            };
            Err(ToolError::new(append_status(&text, &status)))
        }
        None => {
            let (text, details) = format_output(&snapshot, "(no output)");
            let code = exit.and_then(|s| s.code());
            // Before Pi 0.9, a failed command without output said only its status.
            if ctx.profile == super::profile::ToolProfile::Pi07
                && text == "(no output)"
                && let Some(code) = code.filter(|c| *c != 0)
            {
                return Err(ToolError::new(format!("Command exited with code {code}")));
            }
            // A signal death has no code: Pi treats it (`exitCode === null`) as success.
            match code {
                Some(code) if code != 0 => Err(ToolError::new(append_status(
                    &text,
                    &format!("Command exited with code {code}"),
                ))),
                _ => Ok(ToolOutput {
                    details,
                    ..ToolOutput::text(text)
                }),
            }
        }
    }
}

/// Reads what the unwatched `pipe` holds now and, unless that reached its end, has the runtime
/// watch it from here on.
fn watch(
    pipe: &mut LazyPipe,
    buf: &mut [u8],
    output: &mut OutputAccumulator,
) -> Result<(), ToolError> {
    if !drain_now(pipe, buf, output)? {
        pipe.watch().map_err(|e| spawn_error(&e))?;
    }
    Ok(())
}

/// Reads what `pipe` holds now, at most [`EXIT_DRAIN_READS`] chunks (see
/// [`LazyPipe::read_now`]): whether it reached its end.
fn drain_now(
    pipe: &mut LazyPipe,
    buf: &mut [u8],
    output: &mut OutputAccumulator,
) -> Result<bool, ToolError> {
    pipe.read_now(buf, EXIT_DRAIN_READS, |data| output.append(data))
}

fn spawn_error(e: &std::io::Error) -> ToolError {
    ToolError::new(e.to_string())
}

/// Pi's shell resolution on Unix: `/bin/bash`, else `bash` on PATH, else `sh`.
fn shell_path(env: &[(String, String)]) -> PathBuf {
    let bin_bash = Path::new("/bin/bash");
    if bin_bash.exists() {
        return bin_bash.to_path_buf();
    }
    let path = env
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("PATH"))
        .map(|(_, v)| v.as_str())
        .unwrap_or_default();
    std::env::split_paths(path)
        .map(|dir| dir.join("bash"))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| PathBuf::from("sh"))
}

/// The delay Node's `setTimeout(fn, seconds * 1000)` really waits: delays over `TIMEOUT_MAX` (or
/// under 1 ms) become 1 ms.
fn node_timer_delay(seconds: f64) -> Duration {
    let ms = seconds * 1000.0;
    if !(1.0..=NODE_TIMEOUT_MAX_MS).contains(&ms) {
        return Duration::from_millis(1);
    }
    Duration::from_secs_f64(ms / 1000.0)
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// `appendStatus(t, s) = t ? t + "\n\n" + s : s`.
fn append_status(text: &str, status: &str) -> String {
    if text.is_empty() {
        status.to_owned()
    } else {
        format!("{text}\n\n{status}")
    }
}

/// Pi's `formatOutput`: the visible text with the truncation notice, and `details` when truncated.
fn format_output(snapshot: &Snapshot, empty_text: &str) -> (String, Option<Value>) {
    let t = &snapshot.truncation;
    let mut text = if t.content.is_empty() {
        empty_text.to_owned()
    } else {
        t.content.clone()
    };
    if !t.truncated {
        return (text, None);
    }
    let path = snapshot
        .full_output_path
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "undefined".to_owned());
    let start_line = t.total_lines + 1 - t.output_lines;
    let end_line = t.total_lines;
    if t.last_line_partial {
        text.push_str(&format!(
            "\n\n[Showing last {} of line {end_line} (line is {}). Full output: {path}]",
            format_size(t.output_bytes),
            format_size(snapshot.last_line_bytes)
        ));
    } else if t.truncated_by == Some(TruncatedBy::Lines) {
        text.push_str(&format!(
            "\n\n[Showing lines {start_line}-{end_line} of {}. Full output: {path}]",
            t.total_lines
        ));
    } else {
        text.push_str(&format!(
            "\n\n[Showing lines {start_line}-{end_line} of {} ({} limit). Full output: {path}]",
            t.total_lines,
            format_size(DEFAULT_MAX_BYTES)
        ));
    }
    if snapshot.dropped > 0 {
        // Deviation: Pi's file has no cap. The notice stays Pi's; this line says what is missing.
        text.push_str(&format!(
            "\n{}",
            cap_notice(FULL_OUTPUT_CAP, snapshot.dropped)
        ));
    }
    let mut details = Map::new();
    details.insert(
        "truncation".into(),
        serde_json::to_value(t).expect("TruncationResult serialises"),
    );
    if let Some(p) = &snapshot.full_output_path {
        details.insert("fullOutputPath".into(), json!(p.display().to_string()));
    }
    (text, Some(Value::Object(details)))
}

// ------------------------------------------------------------------------------------------------
// Output accumulation (Pi's OutputAccumulator)
// ------------------------------------------------------------------------------------------------

/// A streaming UTF-8 decoder with replacement, like `new TextDecoder()` with `{stream: true}`:
/// a sequence cut by a chunk boundary is completed by the next chunk; invalid bytes become U+FFFD
/// (maximal subparts, as WHATWG specifies).
#[derive(Default)]
struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    fn decode(&mut self, input: &[u8], out: &mut String) {
        let joined;
        let mut rest: &[u8] = if self.pending.is_empty() {
            input
        } else {
            let mut v = std::mem::take(&mut self.pending);
            v.extend_from_slice(input);
            joined = v;
            &joined
        };
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    out.push_str(s);
                    return;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    out.push_str(std::str::from_utf8(&rest[..valid]).expect("valid prefix"));
                    match e.error_len() {
                        Some(bad) => {
                            out.push('\u{FFFD}');
                            rest = &rest[valid + bad..];
                        }
                        None => {
                            self.pending = rest[valid..].to_vec();
                            return;
                        }
                    }
                }
            }
        }
    }

    /// End of stream: an unfinished sequence becomes one U+FFFD.
    fn finish(&mut self, out: &mut String) {
        if !self.pending.is_empty() {
            self.pending.clear();
            out.push('\u{FFFD}');
        }
    }
}

/// The final state of the output: Pi's `snapshot()` plus `getLastLineBytes()`.
struct Snapshot {
    truncation: TruncationResult,
    full_output_path: Option<PathBuf>,
    last_line_bytes: usize,
    /// Bytes the full-output file did not keep (its cap, [`FULL_OUTPUT_CAP`]).
    dropped: u64,
}

/// Pi's `OutputAccumulator`: counts lines and bytes of everything, keeps only a rolling decoded
/// tail (trimmed to the last 100 KiB once it passes 200 KiB), and streams the raw bytes to a temp
/// file once the output passes the limits. Memory stays bounded whatever the command prints.
struct OutputAccumulator {
    temp_dir: PathBuf,
    max_lines: usize,
    max_bytes: usize,
    max_rolling_bytes: usize,
    decoder: Utf8Stream,
    raw_chunks: Vec<u8>,
    tail: String,
    tail_starts_at_line_boundary: bool,
    total_raw_bytes: usize,
    total_decoded_bytes: usize,
    total_lines: usize,
    current_line_bytes: usize,
    temp_file: Option<CappedFile>,
    scratch: String,
}

impl OutputAccumulator {
    fn new(temp_dir: PathBuf) -> Self {
        OutputAccumulator {
            temp_dir,
            max_lines: DEFAULT_MAX_LINES,
            max_bytes: DEFAULT_MAX_BYTES,
            max_rolling_bytes: DEFAULT_MAX_BYTES * 2,
            decoder: Utf8Stream::default(),
            raw_chunks: Vec::new(),
            tail: String::new(),
            tail_starts_at_line_boundary: true,
            total_raw_bytes: 0,
            total_decoded_bytes: 0,
            total_lines: 1,
            current_line_bytes: 0,
            temp_file: None,
            scratch: String::new(),
        }
    }

    fn append(&mut self, data: &[u8]) -> Result<(), ToolError> {
        self.total_raw_bytes += data.len();
        let mut text = std::mem::take(&mut self.scratch);
        text.clear();
        self.decoder.decode(data, &mut text);
        self.append_decoded(&text);
        self.scratch = text;
        if self.temp_file.is_some() || self.should_use_temp_file() {
            self.ensure_temp_file()?;
            self.write_temp(data)?;
        } else {
            self.raw_chunks.extend_from_slice(data);
        }
        Ok(())
    }

    fn append_decoded(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.total_decoded_bytes += text.len();
        self.tail.push_str(text);
        if self.tail.len() > self.max_rolling_bytes * 2 {
            self.trim_tail();
        }
        // memchr keeps counting fast even in unoptimised builds (1 GiB of "y\n" is 512 Mi lines).
        match memchr::memrchr(b'\n', text.as_bytes()) {
            None => self.current_line_bytes += text.len(),
            Some(last) => {
                self.total_lines += memchr::memchr_iter(b'\n', text.as_bytes()).count();
                self.current_line_bytes = text.len() - last - 1;
            }
        }
    }

    fn trim_tail(&mut self) {
        let bytes = self.tail.as_bytes();
        let mut start = bytes.len() - self.max_rolling_bytes;
        while start < bytes.len() && (bytes[start] & 0xC0) == 0x80 {
            start += 1;
        }
        if start > 0 {
            self.tail_starts_at_line_boundary = bytes[start - 1] == b'\n';
        }
        self.tail.drain(..start);
    }

    fn snapshot_text(&self) -> &str {
        if self.tail_starts_at_line_boundary {
            return &self.tail;
        }
        match self.tail.find('\n') {
            Some(i) => &self.tail[i + 1..],
            None => &self.tail,
        }
    }

    fn should_use_temp_file(&self) -> bool {
        self.total_raw_bytes > self.max_bytes
            || self.total_decoded_bytes > self.max_bytes
            || self.total_lines > self.max_lines
    }

    fn ensure_temp_file(&mut self) -> Result<(), ToolError> {
        if self.temp_file.is_some() {
            return Ok(());
        }
        let path = self
            .temp_dir
            .join(format!("pi-bash-{:016x}.log", rand::random::<u64>()));
        let file = CappedFile::create(&path, FULL_OUTPUT_CAP)
            .map_err(|e| ToolError::new(format!("{e}, open '{}'", path.display())))?;
        self.temp_file = Some(file);
        let pending = std::mem::take(&mut self.raw_chunks);
        self.write_temp(&pending)
    }

    fn write_temp(&mut self, data: &[u8]) -> Result<(), ToolError> {
        if let Some(file) = &mut self.temp_file {
            file.write(data)
                .map_err(|e| ToolError::new(format!("{e}, write '{}'", file.path().display())))?;
        }
        Ok(())
    }

    /// `finish()`, `snapshot({persistIfTruncated: true})` and `closeTempFile()`.
    fn finish(mut self) -> Result<Snapshot, ToolError> {
        let mut rest = String::new();
        self.decoder.finish(&mut rest);
        self.append_decoded(&rest);
        if self.should_use_temp_file() {
            self.ensure_temp_file()?;
        }
        let tail = truncate_tail(self.snapshot_text(), self.max_lines, self.max_bytes);
        let truncated =
            self.total_lines > self.max_lines || self.total_decoded_bytes > self.max_bytes;
        let truncated_by = if truncated {
            tail.truncated_by
                .or(Some(if self.total_decoded_bytes > self.max_bytes {
                    TruncatedBy::Bytes
                } else {
                    TruncatedBy::Lines
                }))
        } else {
            None
        };
        let truncation = TruncationResult {
            truncated,
            truncated_by,
            total_lines: self.total_lines,
            total_bytes: self.total_decoded_bytes,
            max_lines: self.max_lines,
            max_bytes: self.max_bytes,
            ..tail
        };
        if truncated {
            self.ensure_temp_file()?;
        }
        let (full_output_path, dropped) = match self.temp_file.take() {
            Some(file) => {
                let path = file.path().to_path_buf();
                let dropped = file
                    .finish()
                    .map_err(|e| ToolError::new(format!("{e}, write '{}'", path.display())))?;
                (Some(path), dropped)
            }
            None => (None, 0),
        };
        Ok(Snapshot {
            truncation,
            full_output_path,
            last_line_bytes: self.current_line_bytes,
            dropped,
        })
    }
}

#[cfg(test)]
mod tests;
