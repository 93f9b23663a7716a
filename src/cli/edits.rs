//! `harness edits`: list the edit strategies, generate a perturbed edit corpus, and compare
//! strategies offline on a corpus.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Subcommand};

use super::exit;
use super::printer::{internal_error, print_data, usage_error};
use crate::edits::corpus::read_corpus;
use crate::edits::perturb::{
    KINDS, PerturbOptions, bases_from_corpus, generate, generate_from, parse_kinds,
    sources_from_dir, write_corpus,
};
use crate::edits::reapply::{cases, compare, render_markdown, summarize, write_csv};
use crate::tools::edit::{EditStrategy, STRATEGIES, parse_strategy};

/// The `edits` subcommands.
#[derive(Debug, Subcommand)]
pub enum EditsCommand {
    /// List the edit strategies, one line each.
    Strategies,
    /// Derive realistic model mistakes, with right answers, from a corpus or a folder of sources.
    Perturb(PerturbArgs),
    /// Re-apply every call of a corpus under each strategy and compare them.
    Compare(EditsCompareArgs),
    /// Build the edit corpus of a suite by replaying its cassettes (no network, no keys), or of
    /// real Pi sessions and Claude Code transcripts: the same `edits.jsonl` every `harness run`
    /// writes in its report folder, with the outcome each call had.
    Extract(ExtractArgs),
}

/// Where `harness edits extract` takes its calls from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExtractFrom {
    /// A tasks folder and its cassettes.
    Suite,
    /// Pi session files (`~/.pi/agent/sessions/.../*.jsonl`), any version.
    PiSession,
    /// Claude Code transcripts (`~/.claude/projects/.../*.jsonl`).
    ClaudeCode,
}

/// Arguments of `harness edits extract`.
#[derive(Debug, Args)]
pub struct ExtractArgs {
    /// The tasks folder (default `tasks`), or session files.
    #[arg(value_name = "TASKS|SESSION")]
    pub inputs: Vec<PathBuf>,
    /// What the inputs are; by default a folder is a suite, and a file is a Pi session if it
    /// opens with a `session` header, else a Claude Code transcript.
    #[arg(long, value_enum)]
    pub from: Option<ExtractFrom>,
    /// Sessions: the git repository they worked in, where each file starts (a path under the
    /// session's working directory is looked up in it).
    #[arg(long, value_name = "GIT_DIR")]
    pub repo: Option<PathBuf>,
    /// Sessions: the commit files start from (default: the last commit of the repository's
    /// HEAD before each session started).
    #[arg(long, value_name = "SHA", requires = "repo")]
    pub commit: Option<String>,
    /// Pi sessions: end the session's path at this entry id instead of the file's last entry.
    #[arg(long, value_name = "ID")]
    pub leaf: Option<String>,
    /// Sessions: name every edit call left out of the corpus, and why.
    #[arg(long)]
    pub explain: bool,
    /// Where the cassettes are.
    #[arg(long, default_value = "cassettes")]
    pub cassettes: PathBuf,
    /// Where to write the corpus (edits.jsonl and edits/blobs).
    #[arg(long)]
    pub out: PathBuf,
    /// Only tasks whose id matches this glob (repeatable).
    #[arg(long = "task", value_name = "GLOB")]
    pub task_globs: Vec<String>,
}

/// Arguments of `harness edits perturb`.
#[derive(Debug, Args)]
pub struct PerturbArgs {
    /// An edit corpus (a folder with edits.jsonl, or the file), or any folder of source files.
    pub input: PathBuf,
    /// Where to write the generated corpus (edits.jsonl and edits/blobs).
    #[arg(long)]
    pub out: PathBuf,
    /// The seed: the same inputs and seed give the same corpus.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Gold edits per source file (folders only).
    #[arg(long, default_value_t = 1)]
    pub per_file: usize,
    /// Only these kinds (comma-separated); all by default.
    #[arg(long)]
    pub kinds: Option<String>,
}

/// Arguments of `harness edits compare`.
#[derive(Debug, Args)]
pub struct EditsCompareArgs {
    /// The edit corpus: a folder with edits.jsonl, or the file.
    pub corpus: PathBuf,
    /// A strategy to compare (repeat it); see `harness edits strategies`.
    #[arg(long = "strategy", required = true)]
    pub strategies: Vec<String>,
    /// Where to write edits-compare.csv and edits-compare.md (default: the corpus folder).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
}

/// Runs an `edits` subcommand.
pub fn run(command: EditsCommand) -> ExitCode {
    match command {
        EditsCommand::Strategies => {
            print_data(&strategies_text());
            ExitCode::from(exit::SUCCESS)
        }
        EditsCommand::Perturb(args) => perturb(&args),
        EditsCommand::Compare(args) => compare_command(&args),
        EditsCommand::Extract(args) => match extract_source(&args) {
            Err(code) => code,
            Ok(ExtractFrom::Suite) => match super::runtime::runtime() {
                Ok(runtime) => runtime.block_on(extract(&args)),
                Err(code) => code,
            },
            Ok(from) => extract_sessions(&args, from),
        },
    }
}

/// What `harness edits extract`'s inputs are: `--from`, else a folder (or nothing) is a suite
/// and files are sessions of the kind their first one is.
fn extract_source(args: &ExtractArgs) -> Result<ExtractFrom, ExitCode> {
    if let Some(from) = args.from {
        if from == ExtractFrom::Suite && args.inputs.len() > 1 {
            return Err(usage_error(
                "a suite is one tasks folder",
                "give one folder, or session files with `--from pi-session|claude-code`",
            ));
        }
        return Ok(from);
    }
    match args.inputs.first() {
        None => Ok(ExtractFrom::Suite),
        Some(first) if first.is_dir() && args.inputs.len() == 1 => Ok(ExtractFrom::Suite),
        Some(first) => match crate::sessions::detect(first) {
            Ok(Some(crate::sessions::SessionKind::Pi)) => Ok(ExtractFrom::PiSession),
            Ok(Some(crate::sessions::SessionKind::ClaudeCode)) => Ok(ExtractFrom::ClaudeCode),
            Ok(None) => Err(usage_error(
                &format!(
                    "`{}` is neither a tasks folder nor a session file (its first line is not a JSON object)",
                    first.display()
                ),
                "give a tasks folder, or say what the files are with `--from pi-session|claude-code`",
            )),
            Err(e) => Err(usage_error(
                &e.to_string(),
                "give a tasks folder or session files",
            )),
        },
    }
}

/// `harness edits extract --from pi-session|claude-code FILE...`: the edit calls of each
/// session, their files rebuilt by replaying it (see [`crate::edits::sessions`]). A file that
/// cannot be read, a bad line or a call without a result is named and skipped; the rest is
/// extracted, and the exit status is non-zero if anything was skipped.
fn extract_sessions(args: &ExtractArgs, from: ExtractFrom) -> ExitCode {
    use crate::edits::sessions::{GitTree, SessionCorpus, write_session_corpus};
    use crate::sessions::{claude_code, pi};
    if args.inputs.is_empty() {
        return usage_error("no session files given", "pass one or more .jsonl files");
    }
    let mut skipped = 0usize;
    let mut fixed: Option<GitTree> = None;
    if let (Some(repo), Some(commit)) = (&args.repo, &args.commit) {
        match GitTree::open(repo, commit) {
            Ok(tree) => fixed = Some(tree),
            Err(e) => {
                stderr!(
                    "error: {e}; files are rebuilt from the sessions' own reads and writes only"
                );
                skipped += 1;
            }
        }
    }
    // Without `--commit`, each session starts from the last commit before it began.
    let tree_for = |started: &str, file: &std::path::Path| -> Option<GitTree> {
        if args.commit.is_some() {
            return fixed.clone();
        }
        let repo = args.repo.as_deref()?;
        let sha = GitTree::commit_before(repo, started)?;
        let tree = GitTree::open(repo, &sha).ok()?;
        stderr!(
            "{}: files start from commit {} (the last before {started})",
            file.display(),
            &sha[..sha.len().min(12)]
        );
        Some(tree)
    };
    let mut corpus = SessionCorpus::default();
    for file in &args.inputs {
        match from {
            ExtractFrom::PiSession => {
                let session = match pi::read_session(file, args.leaf.as_deref()) {
                    Ok(session) => session,
                    Err(e) => {
                        stderr!("error: {e}; session skipped");
                        skipped += 1;
                        continue;
                    }
                };
                let (steps, unanswered) = session.tool_steps();
                for p in session.problems.iter().chain(&unanswered) {
                    stderr!("warning: {p}");
                    skipped += 1;
                }
                let started = session.started();
                if args.repo.is_some() && args.commit.is_none() && started.is_empty() {
                    stderr!(
                        "warning: {}: no timestamp to find a commit by; pass `--commit`",
                        file.display()
                    );
                }
                let tree = tree_for(&started, file);
                corpus.add_pi(&session, &steps, tree.as_ref());
            }
            // (A suite never comes here.)
            ExtractFrom::ClaudeCode | ExtractFrom::Suite => {
                let transcript = match claude_code::read_transcript(file) {
                    Ok(t) => t,
                    Err(e) => {
                        stderr!("error: {e}; transcript skipped");
                        skipped += 1;
                        continue;
                    }
                };
                for p in &transcript.problems {
                    stderr!("warning: {p}");
                    skipped += 1;
                }
                let tree = tree_for(&transcript.started, file);
                corpus.add_claude_code(&transcript, tree.as_ref());
            }
        }
    }
    if let Err(e) = write_session_corpus(&args.out, &corpus) {
        return internal_error(&e.to_string());
    }
    if args.explain {
        for note in &corpus.left_out {
            stderr!("note: {note}");
        }
    }
    let c = &corpus.counts;
    stderr!(
        "{} edit call(s) from {} session(s): {} kept ({} applied, {} of them exactly; {} refused) written to {}",
        c.edit_calls,
        c.sessions,
        corpus.records.len(),
        c.applied,
        c.applied_exactly,
        c.refused,
        args.out.join("edits.jsonl").display()
    );
    stderr!(
        "left out: {} file unknown, {} not reproduced, {} refused for another reason, {} replace_all, {} user-modified, {} sequential MultiEdit; {} read(s) corrected the replayed file",
        c.unknown_file,
        c.not_reproduced,
        c.refused_otherwise,
        c.replace_all,
        c.user_modified,
        c.sequential,
        c.read_corrections
    );
    if !args.explain && !corpus.left_out.is_empty() {
        stderr!("hint: `--explain` names each call left out");
    }
    if skipped == 0 {
        ExitCode::SUCCESS
    } else {
        stderr!("error: {skipped} line(s) or file(s) skipped (named above)");
        ExitCode::from(exit::USAGE)
    }
}

/// `harness edits extract`: replays every cassette of the suite (recorded strategy, strict
/// comparison) into a scratch report folder and keeps its `edits.jsonl` and blobs.
async fn extract(args: &ExtractArgs) -> ExitCode {
    let tasks_dir = args
        .inputs
        .first()
        .cloned()
        .unwrap_or_else(|| PathBuf::from("tasks"));
    let (suite, problems) = crate::tasks::load_suite_lenient(&tasks_dir);
    for p in &problems {
        stderr!("error: {p}");
    }
    let selected = match crate::tasks::filter(suite, &args.task_globs, &[]) {
        Ok(selected) => selected,
        Err(e) => return usage_error(&e.to_string(), "`--task` takes a glob such as `py-*`"),
    };
    let tasks: Vec<Arc<crate::tasks::Task>> = selected.into_iter().map(Arc::new).collect();
    let scratch = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => return internal_error(&format!("failed to create a temp folder: {e}")),
    };
    let mut options =
        crate::runner::RunOptions::new(args.cassettes.clone(), scratch.path().join("report"));
    options.tasks_dir = tasks_dir;
    let planned = match crate::runner::plan_runs(&tasks, &options) {
        Ok(planned) if !planned.is_empty() => planned,
        Ok(_) => {
            return usage_error(
                &format!(
                    "no cassettes for these tasks in {}",
                    args.cassettes.display()
                ),
                "record some first, or pass `--cassettes DIR`",
            );
        }
        Err(e) => return usage_error(&e.to_string(), "pass a tasks folder with task.yaml files"),
    };
    let records = crate::runner::execute(planned, &options, Arc::new(crate::runner::Silent)).await;
    for r in records.iter().filter(|r| {
        r.outcome == crate::record::Outcome::Diverged || r.outcome == crate::record::Outcome::Error
    }) {
        stderr!(
            "warning: {} {}/{} did not replay to its end ({}); its corpus holds the calls made before",
            r.task_id,
            r.provider,
            r.model,
            r.reason
        );
    }
    let from = options.report_dir.clone();
    let copied = std::fs::create_dir_all(args.out.join("edits/blobs"))
        .and_then(|()| std::fs::copy(from.join("edits.jsonl"), args.out.join("edits.jsonl")))
        .and_then(|_| {
            for blob in std::fs::read_dir(from.join("edits/blobs"))?.flatten() {
                std::fs::copy(
                    blob.path(),
                    args.out.join("edits/blobs").join(blob.file_name()),
                )?;
            }
            Ok(())
        });
    if let Err(e) = copied {
        return internal_error(&format!(
            "failed to write the corpus to {}: {e}",
            args.out.display()
        ));
    }
    let calls = std::fs::read_to_string(args.out.join("edits.jsonl"))
        .map(|t| t.lines().count())
        .unwrap_or(0);
    stderr!(
        "{calls} edit call(s) from {} run(s) written to {}",
        records.len(),
        args.out.join("edits.jsonl").display()
    );
    if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(exit::USAGE)
    }
}

/// `harness edits strategies`: one line per strategy.
pub fn strategies_text() -> String {
    let width = STRATEGIES.iter().map(|s| s.name.len()).max().unwrap_or(0);
    let mut lines: Vec<String> = STRATEGIES
        .iter()
        .map(|s| format!("{:width$}  {}", s.name, s.summary))
        .collect();
    lines.push(format!(
        "{:width$}  an exact match first, then each chainable strategy in order (all but pi)",
        "chain:a,b,c"
    ));
    lines.join("\n")
}

/// Parses every `--strategy` up front; a bad one is a usage error naming the valid ones.
pub fn parse_strategies(names: &[String]) -> Result<Vec<Arc<dyn EditStrategy>>, ExitCode> {
    names
        .iter()
        .map(|name| parse_strategy(name).map_err(|e| usage_error(&e.to_string(), &e.hint())))
        .collect()
}

fn perturb(args: &PerturbArgs) -> ExitCode {
    let kinds = match args.kinds.as_deref().map(parse_kinds) {
        None => KINDS.to_vec(),
        Some(Ok(kinds)) => kinds,
        Some(Err(message)) => return usage_error(&message, "run without --kinds for all"),
    };
    let options = PerturbOptions {
        seed: args.seed,
        per_file: args.per_file,
        kinds,
    };
    if !args.input.exists() {
        return usage_error(
            &format!("`{}` does not exist", args.input.display()),
            "give an edit corpus or a folder of source files",
        );
    }
    let corpus_file = crate::edits::corpus::corpus_file(&args.input);
    let calls = if corpus_file.is_file() {
        let corpus = match read_corpus(&args.input) {
            Ok(corpus) => corpus,
            Err(e) => return usage_error(&e.to_string(), "give an edit corpus or a folder"),
        };
        for problem in &corpus.problems {
            stderr!("warning: {}: {problem}", corpus_file.display());
        }
        let (files, bases) = bases_from_corpus(&cases(&corpus));
        stderr!("{} gold edits usable as bases", bases.len());
        generate_from(&files, &bases, &options)
    } else {
        let files = sources_from_dir(&args.input);
        if files.is_empty() {
            return usage_error(
                &format!("no source files under `{}`", args.input.display()),
                "give a folder with .py, .rs, .js, ... files, or an edit corpus",
            );
        }
        stderr!("{} source files", files.len());
        generate(&files, &options)
    };
    match write_corpus(&args.out, &calls, args.seed) {
        Ok(n) => {
            stderr!(
                "wrote {n} calls to {}",
                args.out.join("edits.jsonl").display()
            );
            ExitCode::from(exit::SUCCESS)
        }
        Err(e) => internal_error(&e.to_string()),
    }
}

fn compare_command(args: &EditsCompareArgs) -> ExitCode {
    let strategies = match parse_strategies(&args.strategies) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let corpus = match read_corpus(&args.corpus) {
        Ok(corpus) => corpus,
        Err(e) => {
            return usage_error(
                &e.to_string(),
                "give a folder with edits.jsonl (from `harness run` or `harness edits perturb`)",
            );
        }
    };
    let file = crate::edits::corpus::corpus_file(&args.corpus);
    for problem in &corpus.problems {
        stderr!("warning: {}: {problem} (skipped)", file.display());
    }
    let cases = cases(&corpus);
    let names: Vec<String> = strategies.iter().map(|s| s.name().to_owned()).collect();
    let results = match compare(&cases, &strategies, args.jobs) {
        Ok(r) => r,
        Err(e) => return internal_error(&format!("failed to start the worker threads: {e}")),
    };
    let summary = summarize(&cases, &names, &results);
    let markdown = render_markdown(&summary, &cases);
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| file.parent().map(PathBuf::from).unwrap_or_default());
    if let Err(e) = std::fs::create_dir_all(&out) {
        return internal_error(&format!("failed to create `{}`: {e}", out.display()));
    }
    let csv_path = out.join("edits-compare.csv");
    let written = std::fs::File::create(&csv_path)
        .map_err(|e| e.to_string())
        .and_then(|f| write_csv(f, &cases, &names, &results).map_err(|e| e.to_string()));
    if let Err(e) = written {
        return internal_error(&format!("failed to write `{}`: {e}", csv_path.display()));
    }
    let md_path = out.join("edits-compare.md");
    if let Err(e) = std::fs::write(&md_path, &markdown) {
        return internal_error(&format!("failed to write `{}`: {e}", md_path.display()));
    }
    print_data(markdown.trim_end());
    stderr!("wrote {} and {}", csv_path.display(), md_path.display());
    ExitCode::from(exit::SUCCESS)
}
