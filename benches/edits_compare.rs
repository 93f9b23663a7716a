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
//!
//! `--corpus DIR` measures a corpus on disk instead, such as one extracted from real sessions
//! (`harness edits extract SESSION... --out DIR`): per strategy, how often it agrees with the
//! outcome the agent recorded (applies and writes the same file, or refuses too), its correct %
//! on the calls with a gold answer, and every call the agent applied exactly where the strategy
//! writes another file than `exact` or refuses (a strategy bug: an exact match must win).
//! Throughput is given as wall time and as CPU time of the process (`/proc/self/stat`), which
//! stays meaningful when other work shares the cores. The tables also go to
//! `target/edits-bench/results.md`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use harness::edits::compare::{
    Case, Replayer, Summary, Written, cases, cases_from_perturbed, compare, summarize,
};
use harness::edits::corpus::read_corpus;
use harness::edits::perturb::{KINDS, PerturbOptions, SourceFile, generate, sources_from_dir};
use harness::tools::MatchTier;
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
    corpus: Option<PathBuf>,
}

fn options() -> Options {
    let mut o = Options {
        files: 300,
        seed: 7,
        python: None,
        corpus: None,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--files" => o.files = value.parse().expect("--files N"),
            "--seed" => o.seed = value.parse().expect("--seed N"),
            "--python" => o.python = Some(PathBuf::from(value)),
            "--corpus" => o.corpus = Some(PathBuf::from(value)),
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

/// `--corpus DIR`: the strategies against the outcomes recorded in a corpus on disk.
fn recorded_corpus(dir: &Path, names: &[String], strategies: &[Arc<dyn EditStrategy>]) -> String {
    let corpus = read_corpus(dir).expect("a corpus");
    for p in &corpus.problems {
        eprintln!("warning: {p}");
    }
    let cases = cases(&corpus);
    let replayer = Replayer::default();
    let started = Instant::now();
    let results = compare(&cases, strategies, 0).expect("thread pool");
    let secs = started.elapsed().as_secs_f64();
    let summary = summarize(&cases, names, &results);
    let recorded_after = |case: &Case| -> Option<Option<Arc<str>>> {
        let o = case.record.outcome.as_ref()?;
        Some(if o.is_error {
            None
        } else {
            Some(corpus.blob(o.after.as_deref()?)?.clone())
        })
    };
    let exactly = |case: &Case| {
        case.record.outcome.as_ref().is_some_and(|o| {
            !o.is_error
                && o.report
                    .as_ref()
                    .is_some_and(|r| r.tiers.iter().all(|t| *t == MatchTier::Exact))
        })
    };
    let applied = cases
        .iter()
        .filter(|c| recorded_after(c).is_some_and(|a| a.is_some()))
        .count();
    let gold = cases.iter().filter(|c| c.gold.is_some()).count();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n### {} ({} calls: {applied} applied, {} refused by the agent; {gold} with a gold answer)\n",
        dir.display(),
        cases.len(),
        cases.len() - applied
    );
    let _ = writeln!(
        out,
        "| strategy | agrees with the recorded outcome | on applied | on refused | correct % (gold) | false applies | exact edits it writes otherwise | exact edits it refuses |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut bugs = Vec::new();
    for (s, (name, strategy)) in names.iter().zip(strategies).enumerate() {
        let (mut agree, mut agree_applied, mut agree_refused) = (0, 0, 0);
        let (mut otherwise, mut refuses) = (0, 0);
        for case in &cases {
            let (Some(recorded), Some(before)) = (recorded_after(case), case.before.as_deref())
            else {
                continue;
            };
            let written = match replayer.write(&case.record.arguments, before, strategy.as_ref()) {
                Some(Written::Applied { text, .. }) => Some(text),
                _ => None,
            };
            let same = match (&recorded, &written) {
                (Some(a), Some(w)) => **a == **w,
                (None, None) => true,
                _ => false,
            };
            if same {
                agree += 1;
                if recorded.is_some() {
                    agree_applied += 1;
                } else {
                    agree_refused += 1;
                }
            }
            // A single fuzzy tier may refuse an exact edit by design (it only handles its
            // kind of mistake); writing another file than the exact match is a bug.
            if exactly(case) && !same {
                if written.is_some() {
                    otherwise += 1;
                    bugs.push(format!(
                        "- `{name}` on {} ({})",
                        case.id(),
                        case.record.path
                    ));
                } else {
                    refuses += 1;
                }
            }
        }
        let t = &summary.overall[s];
        let pct = |n: usize, of: usize| 100.0 * n as f64 / of.max(1) as f64;
        let _ = writeln!(
            out,
            "| {name} | {agree} ({:.1}%) | {agree_applied}/{applied} | {agree_refused}/{} | {:.1} | {} | {otherwise} | {refuses} |",
            pct(agree, cases.len()),
            cases.len() - applied,
            t.correct_pct(),
            t.false_applies
        );
    }
    let _ = writeln!(
        out,
        "\nCompared in {secs:.2} s ({} calls x {} strategies).",
        cases.len(),
        strategies.len()
    );
    if bugs.is_empty() {
        let _ = writeln!(
            out,
            "\nNo strategy writes another file than `exact` on an edit the agent applied exactly."
        );
    } else {
        let _ = writeln!(
            out,
            "\nCalls the agent applied exactly where a strategy writes another file than `exact`:\n"
        );
        for b in bugs {
            let _ = writeln!(out, "{b}");
        }
    }
    out
}

fn main() {
    let o = options();
    let measured = measured();
    let strategies: Vec<Arc<dyn EditStrategy>> = measured
        .iter()
        .map(|s| parse_strategy(s).expect("strategy"))
        .collect();
    let names: Vec<String> = measured.iter().map(|s| (*s).to_owned()).collect();
    if let Some(dir) = &o.corpus {
        let report = recorded_corpus(dir, &names, &strategies);
        println!("{report}");
        return;
    }
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
