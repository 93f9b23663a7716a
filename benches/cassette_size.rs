//! Cassette size against conversation length: delta storage (format version 2) against whole
//! requests (version 1).
//!
//! For each wire format, records a conversation of 10 and of 40 turns against the scripted model
//! server through the real HTTP, SSE and recording code (each turn runs `cat` on a 2 KB file and
//! lists the workspace, so every request carries a new tool result), then writes the same
//! cassette in both versions and prints their sizes and the 40/10 growth. Also loads each file
//! back and checks the two versions hold the same conversation.
//!
//! Run with `cargo bench --bench cassette_size`.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use harness::cassettes::format::Cassette;
use harness::cassettes::{self, CassetteMode};
use harness::providers::ApiKind;
use harness::record::Outcome;
use harness::runner::{self, RunOptions, Silent};
use harness::tasks;
use harness::testkit::{self, Script, ScriptedToolCall, Turn};

fn script(turns: usize) -> Script {
    let mut out: Vec<Turn> = (0..turns - 1)
        .map(|i| Turn {
            text: Some(format!("Step {i}: let me look at the notes again.")),
            tool_calls: vec![ScriptedToolCall {
                name: "bash".into(),
                arguments: serde_json::json!({"command": format!("cat notes.txt; ls; echo step {i}")}),
            }],
            ..Turn::default()
        })
        .collect();
    out.push(Turn {
        text: Some("Done.".into()),
        ..Turn::default()
    });
    Script { turns: out }
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().join("tasks");
    let task_dir = testkit::write_trivial_task(&suite).unwrap();
    let notes: String = (0..40)
        .map(|i| format!("note {i:02}: the quick brown fox jumps over the lazy dog\n"))
        .collect();
    std::fs::write(task_dir.join("repo/notes.txt"), notes).unwrap();
    let task = Arc::new(
        tasks::load_suite(&suite)
            .unwrap()
            .tasks
            .into_iter()
            .next()
            .unwrap(),
    );
    println!("| wire format | turns | version 1 (whole requests) | version 2 (deltas) | v2 / v1 |");
    println!("|---|---|---|---|---|");
    let mut growth = Vec::new();
    for (api, provider, model) in [
        (ApiKind::AnthropicMessages, "anthropic", "scripted-claude"),
        (ApiKind::OpenaiCompletions, "openai", "scripted-gpt"),
        (ApiKind::OpenaiResponses, "openai-responses", "scripted-gpt"),
        (ApiKind::GoogleGenerativeAi, "google", "scripted-gemini"),
    ] {
        let mut sizes = Vec::new();
        for turns in [10, 40] {
            let cassettes_dir = dir.path().join(format!("cassettes-{provider}-{turns}"));
            let record = runtime.block_on(async {
                let server = testkit::start(script(turns), api).await;
                let mut o = RunOptions::new(cassettes_dir.clone(), dir.path().join("reports"));
                o.mode = CassetteMode::Record;
                o.models = vec![format!("{provider}/{model}").parse().unwrap()];
                o.base_url = Some(server.base_url());
                o.key_env = Arc::new(|_| Some("scripted-server-key".to_owned()));
                let planned = runner::plan_runs(std::slice::from_ref(&task), &o).unwrap();
                runner::execute(planned, &o, Arc::new(Silent))
                    .await
                    .remove(0)
            });
            assert_eq!(record.outcome, Outcome::Passed, "{}", record.reason);
            assert_eq!(record.turns as usize, turns);
            let path =
                cassettes::cassette_path(&cassettes_dir, testkit::TRIVIAL_TASK_ID, provider, model);
            let (v1, v2) = sizes_of(&path);
            println!(
                "| {provider} | {turns} | {} | {} | {:.2} |",
                kb(v1),
                kb(v2),
                v2 as f64 / v1 as f64
            );
            sizes.push((v1, v2));
        }
        growth.push((
            provider,
            sizes[1].0 as f64 / sizes[0].0 as f64,
            sizes[1].1 as f64 / sizes[0].1 as f64,
        ));
    }
    println!();
    println!("| wire format | 40 turns / 10 turns, version 1 | version 2 |");
    println!("|---|---|---|");
    for (provider, v1, v2) in &growth {
        println!("| {provider} | {v1:.2}x | {v2:.2}x |");
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("cassettes");
    let started = Instant::now();
    let mut shipped = (0u64, 0u64, 0usize);
    for task in std::fs::read_dir(&root).unwrap().flatten() {
        for file in std::fs::read_dir(task.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let p = file.path();
            if p.extension().is_some_and(|x| x == "yaml") {
                let (v1, v2) = sizes_of(&p);
                shipped.0 += v1;
                shipped.1 += v2;
                shipped.2 += 1;
            }
        }
    }
    println!(
        "\nshipped cassettes ({} files): version 1 {}, version 2 {} ({:.2}); measured in {:.1} s",
        shipped.2,
        kb(shipped.0),
        kb(shipped.1),
        shipped.1 as f64 / shipped.0 as f64,
        started.elapsed().as_secs_f64()
    );
    planning(&root);
}

/// What planning a replay of the shipped suite costs: reading the provider and model of every
/// cassette from its header alone (what the planner does now), against parsing each whole file
/// (what it did before), best of 5.
fn planning(root: &Path) {
    let files: Vec<std::path::PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .flat_map(|t| {
            std::fs::read_dir(t.path())
                .unwrap()
                .flatten()
                .map(|f| f.path())
        })
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    let best = |f: &dyn Fn()| {
        (0..5)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .min()
            .unwrap()
    };
    let headers = best(&|| {
        for p in &files {
            harness::cassettes::format::read_header(p).unwrap();
        }
    });
    let whole = best(&|| {
        for p in &files {
            let text = std::fs::read_to_string(p).unwrap();
            let v: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
            assert!(v.get("provider").is_some());
        }
    });
    println!(
        "planning the shipped suite ({} cassettes): headers only {:.2} ms, whole files {:.1} ms",
        files.len(),
        headers.as_secs_f64() * 1000.0,
        whole.as_secs_f64() * 1000.0
    );
}

/// The sizes of the cassette at `path` written in version 1 and in version 2 (checking both
/// read back to the same conversation).
fn sizes_of(path: &Path) -> (u64, u64) {
    let cassette = Cassette::load(path).unwrap();
    let mut v1 = cassette.clone();
    v1.header.format_version = 1;
    let mut v2 = cassette.clone();
    v2.header.format_version = 2;
    let (t1, t2) = (v1.to_yaml().unwrap(), v2.to_yaml().unwrap());
    let back1 = Cassette::from_yaml(&t1, path).unwrap();
    let back2 = Cassette::from_yaml(&t2, path).unwrap();
    assert_eq!(back1.interactions, back2.interactions, "{}", path.display());
    (t1.len() as u64, t2.len() as u64)
}

fn kb(bytes: u64) -> String {
    format!("{:.1} kB", bytes as f64 / 1000.0)
}
