//! Tests of the bash tool against real subprocesses: merged output, exit codes, timeouts that
//! kill the process group, truncation with the full-output file, invalid UTF-8, the exact environment, no leftovers.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::*;

/// A context in a fresh temp dir, with a minimal environment and its own temp dir for full output.
fn ctx() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    let temp = dir.path().join("tmp");
    std::fs::create_dir(&temp).unwrap();
    let mut ctx = ToolContext::new(dir.path());
    ctx.temp_dir = temp;
    ctx.env = Arc::new(vec![
        ("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()),
        ("LC_ALL".into(), "C".into()),
    ]);
    (dir, ctx)
}

async fn run(ctx: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
    BashTool::new().execute(args, ctx).await
}

fn text(out: &ToolOutput) -> &str {
    out.content[0].as_text().unwrap()
}

fn log_files(ctx: &ToolContext) -> Vec<PathBuf> {
    std::fs::read_dir(&ctx.temp_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect()
}

#[tokio::test]
async fn echo_keeps_the_trailing_newline_and_has_no_details() {
    let (_d, ctx) = ctx();
    let out = run(&ctx, json!({"command": "echo hi"})).await.unwrap();
    assert_eq!(text(&out), "hi\n");
    assert_eq!(out.details, None);
    assert!(log_files(&ctx).is_empty());
}

#[tokio::test]
async fn empty_output_is_no_output() {
    let (_d, ctx) = ctx();
    let out = run(&ctx, json!({"command": "true"})).await.unwrap();
    assert_eq!(text(&out), "(no output)");
}

#[tokio::test]
async fn stdout_and_stderr_are_merged_in_arrival_order() {
    let (_d, ctx) = ctx();
    let out = run(
        &ctx,
        json!({"command": "echo out; echo err >&2; echo out2; echo err2 >&2"}),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "out\nerr\nout2\nerr2\n");
}

#[tokio::test]
async fn runs_in_the_cwd() {
    let (dir, ctx) = ctx();
    let out = run(&ctx, json!({"command": "pwd"})).await.unwrap();
    let real = std::fs::canonicalize(dir.path()).unwrap();
    assert_eq!(text(&out), format!("{}\n", real.display()));
}

#[tokio::test]
async fn stdin_is_dev_null() {
    let (_d, ctx) = ctx();
    let out = run(&ctx, json!({"command": "cat; echo end"}))
        .await
        .unwrap();
    assert_eq!(text(&out), "end\n");
}

#[tokio::test]
async fn nonzero_exit_texts() {
    let (_d, ctx) = ctx();
    let err = run(&ctx, json!({"command": "exit 1"})).await.unwrap_err();
    assert_eq!(err.message, "(no output)\n\nCommand exited with code 1");
    let err = run(&ctx, json!({"command": "echo before; exit 3"}))
        .await
        .unwrap_err();
    assert_eq!(err.message, "before\n\n\nCommand exited with code 3");
}

#[tokio::test]
async fn killed_by_a_foreign_signal_counts_as_success() {
    let (_d, ctx) = ctx();
    let out = run(&ctx, json!({"command": "kill -9 $$"})).await.unwrap();
    assert_eq!(text(&out), "(no output)");
}

#[tokio::test]
async fn missing_cwd_is_an_error() {
    let (dir, mut ctx) = ctx();
    ctx.cwd = dir.path().join("gone");
    let err = run(&ctx, json!({"command": "echo hi"})).await.unwrap_err();
    assert_eq!(
        err.message,
        format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            ctx.cwd.display()
        )
    );
}

#[tokio::test]
async fn timeout_with_fractional_seconds() {
    let (_d, ctx) = ctx();
    let started = Instant::now();
    let err = run(
        &ctx,
        json!({"command": "echo start; sleep 10", "timeout": 0.5}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.message,
        "start\n\n\nCommand timed out after 0.5 seconds"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );

    let err = run(&ctx, json!({"command": "sleep 10", "timeout": 1}))
        .await
        .unwrap_err();
    assert_eq!(err.message, "Command timed out after 1 seconds");
}

#[tokio::test]
async fn zero_or_negative_timeout_means_none() {
    let (_d, ctx) = ctx();
    let out = run(&ctx, json!({"command": "sleep 0.2; echo ok", "timeout": 0}))
        .await
        .unwrap();
    assert_eq!(text(&out), "ok\n");
    let out = run(
        &ctx,
        json!({"command": "sleep 0.2; echo ok", "timeout": -1}),
    )
    .await
    .unwrap();
    assert_eq!(text(&out), "ok\n");
}

fn process_is_gone(pid: i32) -> bool {
    // Killed orphans may linger as zombies when PID 1 does not reap; those are dead too.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            state.starts_with('Z') || state.starts_with('X')
        }
    }
}

#[tokio::test]
async fn timeout_kills_the_whole_group_even_when_a_background_child_holds_the_pipe() {
    let (dir, ctx) = ctx();
    let pid_file = dir.path().join("bg.pid");
    let command = format!(
        "(echo $BASHPID > {}; sleep 30; echo late) & echo started; sleep 30",
        pid_file.display()
    );
    let started = Instant::now();
    let err = run(&ctx, json!({"command": command, "timeout": 0.5}))
        .await
        .unwrap_err();
    let elapsed = started.elapsed();
    assert_eq!(
        err.message,
        "started\n\n\nCommand timed out after 0.5 seconds"
    );
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    while !process_is_gone(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(process_is_gone(pid), "background child {pid} survived");
}

#[tokio::test]
async fn a_background_child_holding_the_pipe_does_not_block_completion() {
    let (_d, ctx) = ctx();
    let started = Instant::now();
    let out = run(&ctx, json!({"command": "(sleep 3; echo late) & echo done"}))
        .await
        .unwrap();
    assert_eq!(text(&out), "done\n");
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn cancellation_kills_and_reports_command_aborted() {
    let (_d, ctx) = ctx();
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let err = run(&ctx, json!({"command": "echo x; sleep 10"}))
        .await
        .unwrap_err();
    assert_eq!(err.message, "x\n\n\nCommand aborted");
    assert!(started.elapsed() < Duration::from_secs(5));

    // Already aborted: nothing runs.
    let err = run(&ctx, json!({"command": "echo never"}))
        .await
        .unwrap_err();
    assert_eq!(err.message, "Command aborted");
}

fn single_log(ctx: &ToolContext) -> PathBuf {
    let logs = log_files(ctx);
    assert_eq!(logs.len(), 1, "{logs:?}");
    let name = logs[0].file_name().unwrap().to_str().unwrap().to_owned();
    assert!(
        name.starts_with("pi-bash-") && name.ends_with(".log"),
        "{name}"
    );
    let hex = &name["pi-bash-".len()..name.len() - ".log".len()];
    assert_eq!(hex.len(), 16);
    assert!(
        hex.chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
    );
    logs[0].clone()
}

#[tokio::test]
async fn seq_3000_is_truncated_by_lines_with_the_full_output_saved() {
    let (_d, ctx) = ctx();
    let out = run(&ctx, json!({"command": "seq 1 3000"})).await.unwrap();
    let log = single_log(&ctx);
    let expected_tail: String = (1002..=3000).map(|i| format!("{i}\n")).collect();
    assert_eq!(
        text(&out),
        format!(
            "{expected_tail}\n\n[Showing lines 1002-3001 of 3001. Full output: {}]",
            log.display()
        )
    );
    let full: String = (1..=3000).map(|i| format!("{i}\n")).collect();
    assert_eq!(std::fs::read_to_string(&log).unwrap(), full);

    let details = out.details.unwrap();
    assert_eq!(details["fullOutputPath"], json!(log.display().to_string()));
    let t = &details["truncation"];
    let keys: Vec<&String> = t.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "content",
            "truncated",
            "truncatedBy",
            "totalLines",
            "totalBytes",
            "outputLines",
            "outputBytes",
            "lastLinePartial",
            "firstLineExceedsLimit",
            "maxLines",
            "maxBytes"
        ]
    );
    assert_eq!(t["content"], json!(expected_tail));
    assert_eq!(t["truncated"], json!(true));
    assert_eq!(t["truncatedBy"], json!("lines"));
    assert_eq!(t["totalLines"], json!(3001));
    assert_eq!(t["totalBytes"], json!(full.len()));
    assert_eq!(t["outputLines"], json!(2000));
    assert_eq!(t["maxLines"], json!(2000));
    assert_eq!(t["maxBytes"], json!(51200));
}

#[tokio::test]
async fn seq_2000_quirk_shows_lines_2_to_2001() {
    let (_d, ctx) = ctx();
    let out = run(&ctx, json!({"command": "seq 1 2000"})).await.unwrap();
    let log = single_log(&ctx);
    assert!(
        text(&out).ends_with(&format!(
            "2000\n\n\n[Showing lines 2-2001 of 2001. Full output: {}]",
            log.display()
        )),
        "{}",
        &text(&out)[text(&out).len() - 200..]
    );
    assert!(text(&out).starts_with("2\n3\n"));
}

#[tokio::test]
async fn two_thousand_lines_of_51_bytes_are_truncated_by_bytes() {
    let (_d, ctx) = ctx();
    let out = run(
        &ctx,
        json!({"command": "for i in $(seq 1 2000); do printf '%050d\\n' $i; done"}),
    )
    .await
    .unwrap();
    let log = single_log(&ctx);
    let t = text(&out);
    assert!(
        t.ends_with(&format!(
            "\n\n[Showing lines 998-2001 of 2001 (50.0KB limit). Full output: {}]",
            log.display()
        )),
        "{}",
        &t[t.len() - 150..]
    );
    assert!(t.starts_with(&format!("{:050}\n", 998)));
    assert_eq!(
        out.details.unwrap()["truncation"]["truncatedBy"],
        json!("bytes")
    );
    assert_eq!(std::fs::metadata(&log).unwrap().len(), 2000 * 51);
}

#[tokio::test]
async fn a_60000_byte_trailing_line_shows_its_last_50kb() {
    let (_d, ctx) = ctx();
    let out = run(
        &ctx,
        json!({"command": "printf 'x\\n'; head -c 60000 /dev/zero | tr '\\0' a"}),
    )
    .await
    .unwrap();
    let log = single_log(&ctx);
    assert_eq!(
        text(&out),
        format!(
            "{}\n\n[Showing last 50.0KB of line 2 (line is 58.6KB). Full output: {}]",
            "a".repeat(51200),
            log.display()
        )
    );
    let t = &out.details.unwrap()["truncation"];
    assert_eq!(t["lastLinePartial"], json!(true));
    assert_eq!(t["outputBytes"], json!(51200));
}

#[tokio::test]
async fn nonzero_exit_after_truncation_appends_the_status_after_the_notice() {
    let (_d, ctx) = ctx();
    let err = run(&ctx, json!({"command": "seq 1 3000; exit 2"}))
        .await
        .unwrap_err();
    let log = single_log(&ctx);
    assert!(err.message.ends_with(&format!(
        "3000\n\n\n[Showing lines 1002-3001 of 3001. Full output: {}]\n\nCommand exited with code 2",
        log.display()
    )));
}

#[tokio::test]
async fn invalid_utf8_becomes_replacement_characters() {
    let (_d, ctx) = ctx();
    let out = run(&ctx, json!({"command": "printf 'a\\377b\\342\\202'"}))
        .await
        .unwrap();
    assert_eq!(text(&out), "a\u{FFFD}b\u{FFFD}");
}

#[test]
fn streaming_decoder_joins_sequences_across_chunks() {
    let mut d = Utf8Stream::default();
    let mut out = String::new();
    let bytes = "é€😀".as_bytes();
    for b in bytes {
        d.decode(std::slice::from_ref(b), &mut out);
    }
    d.finish(&mut out);
    assert_eq!(out, "é€😀");

    let mut d = Utf8Stream::default();
    let mut out = String::new();
    d.decode(b"x\xE2\x82", &mut out);
    d.decode(b"y\xF0", &mut out);
    d.finish(&mut out);
    assert_eq!(out, "x\u{FFFD}y\u{FFFD}");
}

#[test]
fn accumulator_memory_stays_bounded_and_counts_globally() {
    let dir = tempfile::tempdir().unwrap();
    let mut acc = OutputAccumulator::new(dir.path().to_path_buf());
    let chunk = "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopq\n".repeat(1024);
    for _ in 0..200 {
        acc.append(chunk.as_bytes()).unwrap();
        assert!(acc.tail.len() <= 4 * DEFAULT_MAX_BYTES + chunk.len());
        assert!(acc.raw_chunks.len() <= DEFAULT_MAX_BYTES + chunk.len());
    }
    let snap = acc.finish().unwrap();
    assert_eq!(snap.truncation.total_lines, 200 * 1024 + 1);
    assert_eq!(snap.truncation.total_bytes, 200 * chunk.len());
    let line_cost = chunk.find('\n').unwrap() + 1;
    assert_eq!(
        snap.truncation.output_lines,
        1 + DEFAULT_MAX_BYTES / line_cost
    );
    let path = snap.full_output_path.unwrap();
    assert_eq!(
        std::fs::metadata(path).unwrap().len(),
        200 * chunk.len() as u64
    );
}

#[tokio::test]
async fn the_command_gets_exactly_the_context_environment() {
    let (_d, mut ctx) = ctx();
    ctx.env = Arc::new(crate::sandbox::env::base_env(vec![
        ("PATH".to_owned(), "/usr/bin:/bin".to_owned()),
        ("ANTHROPIC_API_KEY".to_owned(), "sk-ant-secret".to_owned()),
        ("HARNESS_INVISIBLE".to_owned(), "no".to_owned()),
    ]));
    let out = run(&ctx, json!({"command": "env"})).await.unwrap();
    let t = text(&out);
    assert!(!t.contains("secret"), "{t}");
    assert!(!t.contains("HARNESS_INVISIBLE"), "{t}");
    // Not even PI's own bin dir: PATH is exactly what the context gives.
    assert!(t.contains("PATH=/usr/bin:/bin\n"), "{t}");
}

#[tokio::test]
async fn background_setsid_and_nohup_children_die_with_the_call() {
    let (_d, ctx) = ctx();
    let marker = format!("harness-bash-test-{:x}", rand::random::<u64>());
    let command = format!(
        "sleep 1000 & setsid sleep 1000 & nohup sleep 1000 >/dev/null 2>&1 & \
         (setsid bash -c 'exec -a {marker} sleep 1000' &); echo started"
    );
    let out = run(&ctx, json!({"command": command})).await.unwrap();
    assert_eq!(text(&out), "started\n");
    // The double-forked, renamed one is the hardest: nothing by its name may be left.
    let alive: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            cmdline.contains(&marker).then_some(cmdline)
        })
        .collect();
    assert!(alive.is_empty(), "left running: {alive:?}");
}

#[test]
fn timeout_texts_use_js_numbers() {
    for (x, s) in [
        (1.0, "1"),
        (0.5, "0.5"),
        (-2.25, "-2.25"),
        (100.0, "100"),
        (1e21, "1e+21"),
        (1.5e21, "1.5e+21"),
        (1e20, "100000000000000000000"),
        (1e-7, "1e-7"),
        (1.25e-7, "1.25e-7"),
        (0.000001, "0.000001"),
        (123.456, "123.456"),
        (0.1 + 0.2, "0.30000000000000004"),
        (0.0, "0"),
        (-0.0, "0"),
    ] {
        assert_eq!(js_number(x), s, "{x}");
    }
}

#[test]
fn node_timer_delays() {
    assert_eq!(node_timer_delay(0.5), Duration::from_millis(500));
    assert_eq!(node_timer_delay(3_000_000.0), Duration::from_millis(1));
    assert_eq!(node_timer_delay(0.0001), Duration::from_millis(1));
}

/// Past the grace after the exit, what the pipe holds is still read: from the descriptor, not
/// through the runtime, whose record of the pipe's readiness may not have caught up (under load
/// a replay got "(no output)" for a command that printed its summary and exited).
#[tokio::test]
async fn what_the_pipe_holds_is_read_even_before_the_runtime_sees_it_ready() {
    use std::io::Write;
    let (writer, pipe) = tokio::net::unix::pipe::pipe().unwrap();
    let mut watched = LazyPipe::Watched(pipe);
    let mut writer = std::fs::File::from(writer.into_blocking_fd().unwrap());
    writer.write_all(b"13 passed, 0 failed\n").unwrap();
    let mut buf = vec![0u8; READ_CHUNK];
    // Through the runtime, a pipe it has not yet seen ready reads as empty.
    let LazyPipe::Watched(pipe) = &watched else {
        unreachable!()
    };
    assert_eq!(
        pipe.try_read(&mut buf).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock
    );
    let dir = tempfile::tempdir().unwrap();
    let mut output = OutputAccumulator::new(dir.path().to_path_buf());
    drain_now(&mut watched, &mut buf, &mut output).unwrap();
    assert_eq!(output.snapshot_text(), "13 passed, 0 failed\n");
    // A writer that goes on (a process the command left) cannot keep the drain: it stops
    // after its bounded number of reads, with the pipe still open.
    let writing = std::thread::spawn(move || {
        let chunk = vec![b'y'; 4096];
        while writer.write_all(&chunk).is_ok() {}
    });
    let started = Instant::now();
    let mut output = OutputAccumulator::new(dir.path().to_path_buf());
    drain_now(&mut watched, &mut buf, &mut output).unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    drop(watched);
    writing.join().unwrap();
}

#[tokio::test]
async fn a_command_that_fills_the_pipe_before_it_is_watched_is_read_whole() {
    // More than a pipe holds, written at once: the command waits for the watch to start (10 ms
    // after the spawn) and then ends, its whole output kept.
    let (_d, ctx) = ctx();
    let call = run(
        &ctx,
        json!({"command": "head -c 1000000 /dev/zero | tr '\\0' y; echo; echo end"}),
    );
    let out = tokio::time::timeout(Duration::from_secs(20), call)
        .await
        .expect("a command blocked on a full pipe is read once the watch starts")
        .unwrap();
    assert!(text(&out).ends_with(&format!(
        "end\n\n\n[Showing lines 2-3 of 3 (50.0KB limit). Full output: {}]",
        single_log(&ctx).display()
    )));
    let full = std::fs::read(single_log(&ctx)).unwrap();
    assert_eq!(full.len(), 1_000_000 + "\nend\n".len());
    assert!(full[..1_000_000].iter().all(|&b| b == b'y'));
}
