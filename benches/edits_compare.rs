//! The edit strategies on a generated corpus of a few thousand calls with known right answers:
//! correct %, false-apply % and refusal % per strategy, overall and per kind of mistake, and the
//! throughput of `edits compare` (calls x strategies per second) on 1 and 2 threads.
//!
//! Two corpora, built with `harness::edits::perturb` from real source files: the *tuning* corpus
//! from the Python standard library (the thresholds were chosen looking at it), and the
//! *confirmation* corpus from this project's `src/` (never looked at while tuning).
//!
//! ```text
//! cargo bench --bench edits_compare                          # both corpora
//! cargo bench --bench edits_compare -- --files 300 --seed 1  # options
//! ```
//!
//! `--python DIR` overrides the standard library folder (default: `python3`'s `stdlib` path).
//! Throughput is given as wall time and as CPU time of the process (`/proc/self/stat`), which
//! stays meaningful when other work shares the cores. The tables also go to
//! `target/edits-bench/results.md`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use harness::edits::compare::{Case, Summary, cases_from_perturbed, compare, summarize};
use harness::edits::perturb::{KINDS, PerturbOptions, SourceFile, generate, sources_from_dir};
use harness::tools::edit::{EditStrategy, parse_strategy, strategy_names};

/// The strategies measured, in table order: every one `harness edits strategies` lists,
/// `similarity` at 0.9.
fn measured() -> Vec<&'static str> {
    strategy_names()
        .into_iter()
        .map(|n| {
            if n == "similarity:T" {
                "similarity:0.9"
            } else {
                n
            }
        })
        .collect()
}

struct Options {
    files: usize,
    seed: u64,
    python: Option<PathBuf>,
}

fn options() -> Options {
    let mut o = Options {
        files: 300,
        seed: 7,
        python: None,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--files" => o.files = value.parse().expect("--files N"),
            "--seed" => o.seed = value.parse().expect("--seed N"),
            "--python" => o.python = Some(PathBuf::from(value)),
            _ => {
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    o
}

fn python_stdlib() -> Option<PathBuf> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .ok()?;
    let path = String::from_utf8(out.stdout).ok()?.trim().to_owned();
    (!path.is_empty()).then(|| PathBuf::from(path))
}

/// Every `step`-th file so that about `count` remain, spread over the whole folder.
fn spread(files: Vec<SourceFile>, count: usize) -> Vec<SourceFile> {
    if files.len() <= count {
        return files;
    }
    let step = files.len() as f64 / count as f64;
    (0..count)
        .map(|i| files[(i as f64 * step) as usize].clone())
        .collect()
}

fn corpus(dir: &Path, files: usize, seed: u64) -> (usize, Vec<Case>) {
    let sources = spread(sources_from_dir(dir), files);
    let calls = generate(
        &sources,
        &PerturbOptions {
            seed,
            per_file: 1,
            kinds: KINDS.to_vec(),
        },
    );
    (sources.len(), cases_from_perturbed(&calls, seed))
}

/// utime + stime of this process, in seconds (Linux; 0 elsewhere).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let rest = &stat[stat.rfind(')').map_or(0, |i| i + 2)..];
    let fields: Vec<f64> = rest
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0.0))
        .collect();
    // USER_HZ, 100 on Linux.
    (fields[11] + fields[12]) / 100.0
}

fn table(out: &mut String, title: &str, summary: &Summary) {
    let _ = writeln!(out, "\n### {title}\n");
    let _ = writeln!(out, "| strategy | correct % | false-apply % | refusal % |");
    let _ = writeln!(out, "|---|---:|---:|---:|");
    for (name, t) in summary.strategies.iter().zip(&summary.overall) {
        let _ = writeln!(
            out,
            "| {name} | {:.1} | {:.2} | {:.1} |",
            t.correct_pct(),
            t.false_apply_pct(),
            t.refusal_pct()
        );
    }
    let _ = writeln!(
        out,
        "\nCorrect % by kind (false-apply % in brackets when not 0):\n"
    );
    let _ = write!(out, "| kind | n |");
    for name in &summary.strategies {
        let _ = write!(out, " {name} |");
    }
    let _ = writeln!(out);
    let _ = write!(out, "|---|---:|");
    for _ in &summary.strategies {
        let _ = write!(out, "---:|");
    }
    let _ = writeln!(out);
    for kind in KINDS {
        let Some(tallies) = summary.by_kind.get(*kind) else {
            continue;
        };
        let _ = write!(out, "| {kind} | {} |", tallies[0].calls);
        for t in tallies {
            if t.false_applies > 0 {
                let _ = write!(
                    out,
                    " {:.0} ({:.0}) |",
                    t.correct_pct(),
                    t.false_apply_pct()
                );
            } else {
                let _ = write!(out, " {:.0} |", t.correct_pct());
            }
        }
        let _ = writeln!(out);
    }
}

fn main() {
    let o = options();
    let measured = measured();
    let strategies: Vec<Arc<dyn EditStrategy>> = measured
        .iter()
        .map(|s| parse_strategy(s).expect("strategy"))
        .collect();
    let names: Vec<String> = measured.iter().map(|s| (*s).to_owned()).collect();
    let stdlib = o.python.clone().or_else(python_stdlib);
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut corpora: Vec<(String, PathBuf, usize)> = Vec::new();
    match stdlib {
        Some(dir) if dir.is_dir() => corpora.push(("tuning: Python stdlib".into(), dir, o.files)),
        _ => eprintln!("no Python standard library found (give --python DIR); skipping it"),
    }
    corpora.push(("confirmation: harness src/".into(), src, usize::MAX));

    let mut report = String::new();
    for (title, dir, files) in corpora {
        let started = Instant::now();
        let (used, cases) = corpus(&dir, files, o.seed);
        let built = started.elapsed().as_secs_f64();
        eprintln!(
            "{title}: {} calls from {used} files of {} in {built:.1} s",
            cases.len(),
            dir.display()
        );
        let mut results = None;
        let mut throughput = Vec::new();
        let work = (cases.len() * strategies.len()) as f64;
        for threads in [1, 2] {
            let (started, cpu) = (Instant::now(), cpu_seconds());
            let r = compare(&cases, &strategies, threads).expect("thread pool");
            let secs = started.elapsed().as_secs_f64();
            let cpu = cpu_seconds() - cpu;
            eprintln!(
                "  {threads} thread(s): {secs:.2} s wall, {cpu:.2} s CPU, {:.0} calls x strategies / s",
                work / secs
            );
            throughput.push((threads, secs, cpu));
            results = Some(r);
        }
        // Each strategy alone, on one thread: where the time goes.
        let mut per_strategy = Vec::new();
        for (name, strategy) in names.iter().zip(&strategies) {
            let started = Instant::now();
            let r = compare(&cases, std::slice::from_ref(strategy), 1).expect("thread pool");
            std::hint::black_box(r);
            per_strategy.push((
                name.clone(),
                cases.len() as f64 / started.elapsed().as_secs_f64(),
            ));
        }
        let results = results.expect("ran");
        let summary = summarize(&cases, &names, &results);
        table(
            &mut report,
            &format!(
                "{title} ({} calls from {used} files, seed {})",
                cases.len(),
                o.seed
            ),
            &summary,
        );
        let _ = writeln!(
            report,
            "\nThroughput of the comparison ({} calls x {} strategies = {work:.0}):\n",
            cases.len(),
            strategies.len()
        );
        for (threads, secs, cpu) in throughput {
            let _ = writeln!(
                report,
                "- {threads} thread(s): {secs:.2} s wall, {:.0} calls x strategies per second; {cpu:.2} s CPU, {:.0} per CPU-second",
                work / secs,
                work / cpu.max(1e-9)
            );
        }
        let _ = writeln!(
            report,
            "\nEach strategy alone, 1 thread (calls per second):\n"
        );
        let line: Vec<String> = per_strategy
            .iter()
            .map(|(name, rate)| format!("{name} {rate:.0}"))
            .collect();
        let _ = writeln!(report, "{}", line.join(", "));
    }
    println!("{report}");
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/edits-bench");
    if std::fs::create_dir_all(&out).is_ok() {
        let _ = std::fs::write(out.join("results.md"), &report);
    }
}
