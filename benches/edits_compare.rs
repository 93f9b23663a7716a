//! The edit strategies on generated corpora of a few thousand calls with known right answers:
//! correct %, false-apply % and refusal % per strategy, overall and per kind of mistake, and the
//! throughput of `edits compare` (calls x strategies per second) on 1 and 2 threads.
//!
//! Corpora built with `harness::edits::perturb` from real source files: the *tuning* corpus from
//! the Python standard library (the rules and thresholds were chosen looking at it), the
//! *confirmation* corpus from this project's `src/`, and any number of *untuned* folders given
//! with `--untuned NAME=DIR`: source files that played no part in tuning (another language, a
//! project fetched for the purpose; build them under `/tmp` or `target/`, never commit them).
//! Edit corpora in the `edits.jsonl` format (`harness run`'s, `harness edits extract`'s, or an
//! importer's of real sessions) are compared with `--corpus NAME=DIR`: against their gold where
//! one can be derived, against the outcome they recorded, and against `exact` (a strategy that
//! writes another file than `exact` where `exact` applied the call is a bug).
//!
//! ```text
//! cargo bench --bench edits_compare                          # stdlib and src/
//! cargo bench --bench edits_compare -- --files 300 --seed 1 --untuned go=/tmp/go --corpus pi=/tmp/pi-sessions
//! ```
//!
//! `--python DIR` overrides the standard library folder (default: `python3`'s `stdlib` path).
//! `--files N` caps the files of every generated corpus (spread over the folder). `--show
//! STRATEGY` prints that strategy's false applies (to stderr) with what it wrote (and its missed
//! calls with `--show-missed`); `--write DIR`
//! keeps each generated corpus under `DIR` for `harness edits compare`. Throughput is
//! measured on the first corpus only, as wall time and as CPU time of the process
//! (`/proc/self/stat`), which stays meaningful when other work shares the cores. The tables
//! also go to `target/edits-bench/results.md`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use harness::edits::corpus::{Corpus, read_corpus};
use harness::edits::perturb::{
    KINDS, PerturbOptions, SourceFile, cases_from_perturbed, generate, sources_from_dir,
    write_corpus,
};
use harness::edits::reapply::{
    Case, CaseGold, Correct, ReplayOutcome, Summary, agrees_with_recorded, cases, compare,
    differs_from_exact, summarize,
};
use harness::tools::edit::{
    EditStrategy, PreparedText, parse_strategy, prepare_edit_arguments, replacements_of,
    strategy_names,
};

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
    /// `NAME=DIR`: folders of sources no rule was tuned on.
    untuned: Vec<(String, PathBuf)>,
    /// `NAME=DIR`: edit corpora (`edits.jsonl`).
    corpora: Vec<(String, PathBuf)>,
    /// Print the false applies of this strategy, with what it wrote.
    show: Option<String>,
    /// With `--show`, print its missed calls too.
    show_missed: bool,
    /// Write each generated corpus under this folder (for `harness edits compare`).
    write: Option<PathBuf>,
}

fn named(value: &str, flag: &str) -> (String, PathBuf) {
    let (name, dir) = value
        .split_once('=')
        .unwrap_or_else(|| panic!("{flag} NAME=DIR, got `{value}`"));
    (name.to_owned(), PathBuf::from(dir))
}

fn options() -> Options {
    let mut o = Options {
        files: 300,
        seed: 7,
        python: None,
        untuned: Vec::new(),
        corpora: Vec::new(),
        show: None,
        show_missed: false,
        write: None,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--files" => o.files = value.parse().expect("--files N"),
            "--seed" => o.seed = value.parse().expect("--seed N"),
            "--python" => o.python = Some(PathBuf::from(value)),
            "--untuned" => o.untuned.push(named(&value, "--untuned")),
            "--corpus" => o.corpora.push(named(&value, "--corpus")),
            "--show" => o.show = Some(value),
            "--show-missed" => {
                o.show_missed = true;
                i += 1;
                continue;
            }
            "--write" => o.write = Some(PathBuf::from(value)),
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

fn corpus(dir: &Path, files: usize, seed: u64, write: Option<&Path>) -> (usize, Vec<Case>) {
    let sources = spread(sources_from_dir(dir), files);
    let calls = generate(
        &sources,
        &PerturbOptions {
            seed,
            per_file: 1,
            kinds: KINDS.to_vec(),
        },
    );
    if let Some(out) = write {
        write_corpus(out, &calls, seed).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
        eprintln!("  written to {}", out.display());
    }
    (sources.len(), cases_from_perturbed(&calls, seed))
}

/// The calls `strategy` (index `s`) refused though they should apply: how it failed, and the
/// lines where `oldText` differs from the file's block (generated calls name their block's first
/// line in their id, `path#line:kind`).
fn show_missed(title: &str, cases: &[Case], results: &[Vec<ReplayOutcome>], s: usize, spec: &str) {
    let missed: Vec<usize> = (0..cases.len())
        .filter(|&i| results[i][s].correct == Correct::Missed)
        .collect();
    eprintln!("\n== {spec} on {title}: {} missed", missed.len());
    for &i in &missed {
        let case = &cases[i];
        let outcome = &results[i][s];
        eprintln!(
            "-- {} [{}] {} {}",
            case.record.call_id,
            case.kind(),
            outcome.failure.unwrap_or(""),
            outcome.tiers
        );
        let start: Option<usize> = case
            .record
            .call_id
            .rsplit('#')
            .next()
            .and_then(|t| t.split(':').next())
            .and_then(|n| n.parse().ok());
        let (Some(start), Some(before)) = (start, case.before.as_deref()) else {
            continue;
        };
        let args = prepare_edit_arguments(case.record.arguments.clone());
        let Ok(edits) = replacements_of(&args) else {
            continue;
        };
        let file: Vec<&str> = before.lines().skip(start).collect();
        for (k, model) in edits[0].old_text.lines().enumerate() {
            let real = file.get(k).copied().unwrap_or("<end>");
            if model != real {
                eprintln!("  file  {real}\n  model {model}");
            }
        }
    }
}

/// The false applies of `strategy` (index `s`): the call, the tier, and where the file it wrote
/// leaves the gold.
fn show_false_applies(
    title: &str,
    cases: &[Case],
    results: &[Vec<ReplayOutcome>],
    s: usize,
    spec: &str,
) {
    let strategy = parse_strategy(spec).expect("strategy");
    let wrong: Vec<usize> = (0..cases.len())
        .filter(|&i| results[i][s].correct == Correct::FalseApply)
        .collect();
    eprintln!("\n== {spec} on {title}: {} false applies", wrong.len());
    for &i in wrong.iter().take(40) {
        let case = &cases[i];
        let before = case.before.as_deref().unwrap_or("");
        let text = PreparedText::new(before);
        let args = prepare_edit_arguments(case.record.arguments.clone());
        let Ok(edits) = replacements_of(&args) else {
            continue;
        };
        let written = match strategy.apply(&text.content, &edits) {
            Ok(applied) => text.finish(&applied.new_content),
            Err(_) => continue,
        };
        eprintln!(
            "-- {} [{}] tier {}",
            case.record.call_id,
            case.kind(),
            results[i][s].tiers
        );
        eprintln!("oldText:\n{}", edits[0].old_text);
        let gold = match &case.gold {
            Some(CaseGold::Apply(gold)) => gold.to_string(),
            _ => before.to_owned(),
        };
        let (g, w): (Vec<&str>, Vec<&str>) = (gold.lines().collect(), written.lines().collect());
        let first = g.iter().zip(&w).take_while(|(a, b)| a == b).count();
        let tail = g[first..]
            .iter()
            .rev()
            .zip(w[first..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        eprintln!("gold (from line {}):", first + 1);
        for line in &g[first..g.len() - tail] {
            eprintln!("  | {line}");
        }
        eprintln!("written:");
        for line in &w[first..w.len() - tail] {
            eprintln!("  | {line}");
        }
    }
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
    let others = summary
        .by_kind
        .keys()
        .map(String::as_str)
        .filter(|k| !KINDS.contains(k));
    for kind in KINDS.iter().copied().chain(others) {
        let Some(tallies) = summary.by_kind.get(kind) else {
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

/// The comparison's throughput on `cases`: 1 and 2 threads, then each strategy alone.
fn throughput(
    report: &mut String,
    cases: &[Case],
    names: &[String],
    strategies: &[Arc<dyn EditStrategy>],
) {
    let work = (cases.len() * strategies.len()) as f64;
    let mut runs = Vec::new();
    for threads in [1, 2] {
        let (started, cpu) = (Instant::now(), cpu_seconds());
        let r = compare(cases, strategies, threads).expect("thread pool");
        std::hint::black_box(r);
        let secs = started.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu;
        eprintln!(
            "  {threads} thread(s): {secs:.2} s wall, {cpu:.2} s CPU, {:.0} calls x strategies / s",
            work / secs
        );
        runs.push((threads, secs, cpu));
    }
    let _ = writeln!(
        report,
        "\nThroughput of the comparison ({} calls x {} strategies = {work:.0}):\n",
        cases.len(),
        strategies.len()
    );
    for (threads, secs, cpu) in runs {
        let _ = writeln!(
            report,
            "- {threads} thread(s): {secs:.2} s wall, {:.0} calls x strategies per second; {cpu:.2} s CPU, {:.0} per CPU-second",
            work / secs,
            work / cpu.max(1e-9)
        );
    }
    // Each strategy alone, on one thread: where the time goes.
    let mut per_strategy = Vec::new();
    for (name, strategy) in names.iter().zip(strategies) {
        let started = Instant::now();
        let r = compare(cases, std::slice::from_ref(strategy), 1).expect("thread pool");
        std::hint::black_box(r);
        per_strategy.push(format!(
            "{name} {:.0}",
            cases.len() as f64 / started.elapsed().as_secs_f64()
        ));
    }
    let _ = writeln!(
        report,
        "\nEach strategy alone, 1 thread (calls per second):\n\n{}",
        per_strategy.join(", ")
    );
}

/// For an edit corpus of recorded calls: per strategy, agreement with the recorded outcome and
/// the calls where it wrote another file than `exact` did.
fn recorded_table(
    report: &mut String,
    corpus: &Corpus,
    cases: &[Case],
    names: &[String],
    results: &[Vec<ReplayOutcome>],
) {
    let exact = names
        .iter()
        .position(|n| n == "exact")
        .expect("exact is measured");
    let _ = writeln!(
        report,
        "\n| strategy | agrees with the recorded outcome | writes another file than exact where exact applied |"
    );
    let _ = writeln!(report, "|---|---:|---:|");
    for (s, name) in names.iter().enumerate() {
        let (mut agree, mut recorded, mut differ, mut exact_applied) = (0, 0, 0, 0);
        for (case, outcomes) in cases.iter().zip(results) {
            if let Some(a) = agrees_with_recorded(case, corpus, &outcomes[s]) {
                recorded += 1;
                agree += usize::from(a);
            }
            if let Some(d) = differs_from_exact(&outcomes[exact], &outcomes[s]) {
                exact_applied += 1;
                differ += usize::from(d);
            }
        }
        let _ = writeln!(
            report,
            "| {name} | {agree} of {recorded} | {differ} of {exact_applied} |"
        );
    }
}

/// Correct % and false-apply % of every strategy on every corpus, side by side.
fn side_by_side(report: &mut String, titles: &[String], summaries: &[Summary]) {
    let _ = writeln!(report, "\n### Every corpus: correct % / false-apply %\n");
    let _ = write!(report, "| strategy |");
    for t in titles {
        let _ = write!(report, " {t} |");
    }
    let _ = writeln!(report);
    let _ = write!(report, "|---|");
    for _ in titles {
        let _ = write!(report, "---:|");
    }
    let _ = writeln!(report);
    let Some(first) = summaries.first() else {
        return;
    };
    for (s, name) in first.strategies.iter().enumerate() {
        let _ = write!(report, "| {name} |");
        for summary in summaries {
            let t = &summary.overall[s];
            let _ = write!(
                report,
                " {:.1} / {:.2} |",
                t.correct_pct(),
                t.false_apply_pct()
            );
        }
        let _ = writeln!(report);
    }
}

/// Where a corpus comes from.
enum Source {
    /// Source files, perturbed.
    Folder(PathBuf, usize),
    /// An edit corpus.
    Corpus(PathBuf),
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
    let mut corpora: Vec<(String, Source)> = Vec::new();
    match stdlib {
        Some(dir) if dir.is_dir() => {
            corpora.push(("tuning: Python stdlib".into(), Source::Folder(dir, o.files)))
        }
        _ => eprintln!("no Python standard library found (give --python DIR); skipping it"),
    }
    corpora.push((
        "confirmation: harness src/".into(),
        Source::Folder(src, o.files),
    ));
    for (name, dir) in &o.untuned {
        corpora.push((
            format!("untuned: {name}"),
            Source::Folder(dir.clone(), o.files),
        ));
    }
    for (name, dir) in &o.corpora {
        corpora.push((format!("recorded: {name}"), Source::Corpus(dir.clone())));
    }

    let mut report = String::new();
    let mut titles = Vec::new();
    let mut summaries = Vec::new();
    for (index, (title, source)) in corpora.into_iter().enumerate() {
        let started = Instant::now();
        let (what, cases, recorded) = match &source {
            Source::Folder(dir, files) => {
                let slug: String = title
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                    .collect();
                let out = o.write.as_ref().map(|w| w.join(slug));
                let (used, cases) = corpus(dir, *files, o.seed, out.as_deref());
                let what = format!("{} calls from {used} files, seed {}", cases.len(), o.seed);
                (what, cases, None)
            }
            Source::Corpus(dir) => {
                let corpus = read_corpus(dir).unwrap_or_else(|e| panic!("{title}: {e}"));
                for problem in &corpus.problems {
                    eprintln!("warning: {title}: {problem} (skipped)");
                }
                let cases = cases(&corpus);
                (
                    format!("{} recorded calls", cases.len()),
                    cases,
                    Some(corpus),
                )
            }
        };
        eprintln!(
            "{title}: {what} in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        let results = compare(&cases, &strategies, 0).expect("thread pool");
        let summary = summarize(&cases, &names, &results);
        if let Some(spec) = &o.show {
            let s = names
                .iter()
                .position(|n| n == spec)
                .expect("--show a measured strategy");
            show_false_applies(&title, &cases, &results, s, spec);
            if o.show_missed {
                show_missed(&title, &cases, &results, s, spec);
            }
        }
        table(&mut report, &format!("{title} ({what})"), &summary);
        if let Some(corpus) = &recorded {
            recorded_table(&mut report, corpus, &cases, &names, &results);
        }
        if index == 0 {
            throughput(&mut report, &cases, &names, &strategies);
        }
        titles.push(title);
        summaries.push(summary);
    }
    side_by_side(&mut report, &titles, &summaries);
    println!("{report}");
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/edits-bench");
    if std::fs::create_dir_all(&out).is_ok() {
        let _ = std::fs::write(out.join("results.md"), &report);
    }
}
