//! `harness run` and `harness validate`: turn the flags into a suite request, hand it to the
//! runner ([`crate::runner::suite`]), print what it returns and map it to an exit status.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use crate::cassettes::{self, CassetteMode};
use crate::providers::catalog::Catalog;
use crate::providers::config::HarnessConfig;
use crate::runner::CancellationToken;
use crate::runner::resume::Continuing;
use crate::runner::suite::{self, FinishOptions, SuiteError, SuiteRequest};
use crate::sandbox::Sandbox;
use crate::sandbox::secrets::Vault;
use crate::tasks;

use super::exit;
use super::printer::Printer;
use super::run_args::{
    Given, RunArgs, ValidateArgs, config_candidates, continuing, model_selectors, suite_options,
};

/// `harness validate`: check every task, report every problem, run nothing.
pub fn validate(args: ValidateArgs) -> ExitCode {
    let printer = Printer::from_env(false);
    if args.schema {
        printer.data(tasks::task_schema());
        return ExitCode::SUCCESS;
    }
    if args.oracle {
        return super::oracle::validate_with_oracle(args);
    }
    match tasks::load_suite(&args.tasks) {
        Ok(suite) => {
            let n = suite.tasks.len();
            let (tasks, are) = if n == 1 {
                ("task", "is")
            } else {
                ("tasks", "are")
            };
            printer.data(&format!(
                "{n} {tasks} in {} {are} valid",
                args.tasks.display()
            ));
            ExitCode::SUCCESS
        }
        Err(errors) => {
            printer.message(&errors.to_string());
            ExitCode::from(exit::USAGE)
        }
    }
}

/// `harness run`; `vault` holds the keys sealed away at start, `given` names the flags given
/// on the command line (`--resume` takes the report's for the others).
pub fn run(mut args: RunArgs, given: Given, vault: Arc<Vault>) -> ExitCode {
    let printer = Printer::from_env(args.quiet);
    // `--resume DIR` / `--rerun-errors DIR`: that folder's options, unless given; first, since
    // the sandbox is made for the tier they name.
    let continuing = match continuing(&mut args, &given) {
        Ok(continuing) => continuing,
        Err(problems) => return printer.problems(&problems),
    };
    let jobs = args
        .jobs
        .unwrap_or_else(crate::runner::options::default_jobs);
    let runtime = match super::runtime::runtime_for_runs(jobs) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    // A root harness runs the agent's commands as `nobody` outside `isolated`: root could read
    // the keys in the harness's memory.
    let sandbox = Sandbox::detect(args.sandbox).with_unprivileged_commands();
    if let Some(notice) = sandbox.notice() {
        printer.warn(notice);
    }
    let stop = CancellationToken::new();
    let code = runtime.block_on(async {
        super::signals::watch_signals(stop.clone(), sandbox.clone());
        run_async(
            args,
            continuing,
            vault,
            sandbox.clone(),
            stop.clone(),
            &printer,
        )
        .await
    });
    // Whatever a command of this invocation left running ends with the harness.
    sandbox.kill_all();
    if stop.is_cancelled() {
        // A cancelled tool may still be in a blocking thread (a grep of a huge tree): no waiting.
        runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    }
    code
}

async fn run_async(
    args: RunArgs,
    continuing: Option<Continuing>,
    vault: Arc<Vault>,
    sandbox: Sandbox,
    stop: CancellationToken,
    printer: &Printer,
) -> ExitCode {
    // What a harness killed earlier left in the temp folder, provably dead, goes first.
    let cleanup = crate::sandbox::stale::clean_stale(&std::env::temp_dir());
    if let Some(note) = cleanup.note(&std::env::temp_dir()) {
        printer.note(&note);
    }
    for (path, e) in &cleanup.failed {
        printer.warn(&format!(
            "failed to remove {}, left by a harness that was killed: {e}",
            path.display()
        ));
    }
    let flag = if args.record {
        Some(CassetteMode::Record)
    } else {
        args.cassette_mode
    };
    let mode = match cassettes::resolve_mode(flag, |k| std::env::var(k).ok()) {
        Ok(mode) => mode,
        Err(e) => return usage(printer, &e.to_string(), "use replay, record, auto or live"),
    };
    let models = match model_selectors(&args.models, args.provider.as_deref()) {
        Ok(models) => models,
        Err(e) => {
            let hint = args
                .models
                .iter()
                .find_map(|m| {
                    let provider = provider_of_model(m)?;
                    Some(format!("did you mean `--model {provider}/{m}`?"))
                })
                .unwrap_or_else(|| "for example `--model anthropic/claude-sonnet-4-5`".to_owned());
            return usage(printer, &e, &hint);
        }
    };
    let (config, config_path) = match HarnessConfig::load_first(&config_candidates(&args.tasks)) {
        Ok(found) => found,
        Err(e) => return usage(printer, &e.to_string(), "fix or remove the file"),
    };
    let catalog = match Catalog::with_config(&config) {
        Ok(catalog) => catalog,
        Err(e) => return usage(printer, &e.to_string(), "see the README's provider section"),
    };
    let mut problems =
        super::preflight::check_flags(&args, &catalog, &models, config_path.as_deref());
    let partition =
        crate::runner::resume::partition(args.partition.as_deref(), continuing.as_ref())
            .unwrap_or_else(|p| {
                // A malformed `--partition` is already among the flags' problems.
                if !problems.contains(&p) {
                    problems.push(p);
                }
                None
            });
    if !problems.is_empty() {
        return printer.problems(&problems);
    }
    if !args.tasks.exists() {
        return usage(
            printer,
            &format!("no task suite at {}", args.tasks.display()),
            "run from the folder that holds `tasks/`, or name the suite's folder (or one \
             task's): `harness run path/to/tasks`",
        );
    }
    let (all_tasks, task_problems) = tasks::load_suite_lenient(&args.tasks);
    for problem in &task_problems {
        printer.error(&problem.to_string());
    }
    let ids: Vec<String> = all_tasks.iter().map(|t| t.id.clone()).collect();
    let known_tags: std::collections::BTreeSet<String> = all_tasks
        .iter()
        .flat_map(|t| t.tags.iter().cloned())
        .collect();
    let selected = match tasks::filter(all_tasks, &args.task_globs, &args.tags) {
        Ok(selected) => selected,
        Err(e) => {
            return usage(
                printer,
                &e.to_string(),
                "`--task` takes a glob such as `py-*`",
            );
        }
    };
    if selected.is_empty() && !ids.is_empty() {
        let (message, hint) =
            selects_nothing(&args.task_globs, &args.tags, &ids, &known_tags, &args.tasks);
        return usage(printer, &message, &hint);
    }
    let reports_existed = args.reports.exists();
    let report_dir = match &continuing {
        Some(c) => c.dir.clone(),
        None => match fresh_report_dir(&args.reports) {
            Ok(dir) => dir,
            Err(e) => {
                return failed(
                    printer,
                    SuiteError::Failed(format!(
                        "failed to create a report folder in {}: {e}",
                        args.reports.display()
                    )),
                );
            }
        },
    };
    // A fresh folder (and `--reports` itself, when it was made for it) goes again if the suite
    // is refused: nothing ran.
    let fresh = continuing.is_none().then(|| {
        let mut made = vec![report_dir.clone()];
        if !reports_existed {
            made.push(args.reports.clone());
        }
        made
    });
    let mut options =
        super::run_args::run_options(&args, models.clone(), mode, report_dir, sandbox);
    // Credentials in a base URL (a gateway's `?key=`, `https://user:password@proxy`) are
    // redacted like the sealed keys.
    let url_secrets: Vec<String> = args
        .base_url
        .iter()
        .chain(catalog.providers.iter().map(|p| &p.base_url))
        .flat_map(|url| crate::sandbox::secrets::url_secrets(url))
        .collect();
    options.catalog = Arc::new(catalog);
    options.redactor = vault.redactor().with(url_secrets);
    options.key_env = Arc::new(move |k| vault.lookup(k));
    let ci = options.ci;
    let request = SuiteRequest {
        tasks: selected.into_iter().map(Arc::new).collect(),
        options,
        suite_options: suite_options(&args, &models, mode),
        partition,
        continuing,
        config: config_path.as_deref().and_then(|p| std::fs::read(p).ok()),
        finish: FinishOptions {
            step_summary: printer.step_summary(),
            snapshot: args.snapshot.clone(),
            ci,
        },
    };
    let prepared = match suite::prepare(request) {
        Ok(prepared) => prepared,
        Err(e) => {
            // Nothing was run: the folder made for it goes (only if still empty).
            for dir in fresh.iter().flatten() {
                let _ = std::fs::remove_dir(dir);
            }
            return failed(printer, e);
        }
    };
    for line in prepared.skipped_journal_lines() {
        printer.warn(&line);
    }
    for missing in prepared.missing_requirements() {
        printer.warn(&missing.message);
        printer.message(&format!("hint: {}", missing.hint));
    }
    if let Some(c) = prepared.continued() {
        super::outcome::say_continued(printer, &c);
    }
    let progress = Arc::new(printer.progress());
    let outcome = match prepared.execute(progress.clone(), stop).await {
        Ok(outcome) => outcome,
        Err(e) => return failed(printer, e),
    };
    progress.finish();
    let code = super::outcome::print_outcome(printer, &outcome, &[], |paths| {
        format!(
            "reports written to {} (open {})",
            paths.dir.display(),
            paths
                .report_html
                .clone()
                .unwrap_or_else(|| paths.dir.join("summary.md"))
                .display()
        )
    });
    if !task_problems.is_empty() && code != ExitCode::from(exit::INTERNAL) && !outcome.interrupted {
        printer.error(&format!(
            "{} problem(s) in the task suite (see above); the valid tasks ran",
            task_problems.len()
        ));
        return ExitCode::from(exit::USAGE);
    }
    code
}

fn failed(printer: &Printer, e: SuiteError) -> ExitCode {
    match e {
        SuiteError::Refused(problems) => printer.problems(&problems),
        SuiteError::Failed(message) => internal(printer, &message),
    }
}

/// The built-in provider a model id without one most likely belongs to, by its family's prefix
/// (`gpt-4o` is OpenAI's): for the hint when `--model` lacks its `PROVIDER/`.
fn provider_of_model(model: &str) -> Option<&'static str> {
    if model.contains('/') {
        return None;
    }
    let families: [(&[&str], &str); 5] = [
        (&["claude"], "anthropic"),
        (&["gpt-", "o1", "o3", "o4", "chatgpt"], "openai"),
        (&["gemini"], "google"),
        (&["grok"], "xai"),
        (&["deepseek"], "deepseek"),
    ];
    let lower = model.to_ascii_lowercase();
    families
        .iter()
        .find(|(prefixes, _)| prefixes.iter().any(|p| lower.starts_with(p)))
        .map(|(_, provider)| *provider)
}

/// What to say when `--task` and `--tag` leave none of the suite's tasks: a typo is the usual
/// cause, so the ids (the first few) and the tags the suite has are listed.
fn selects_nothing(
    globs: &[String],
    tags: &[String],
    ids: &[String],
    known_tags: &std::collections::BTreeSet<String>,
    suite: &std::path::Path,
) -> (String, String) {
    let flags: Vec<String> = globs
        .iter()
        .map(|g| format!("`--task {g}`"))
        .chain(tags.iter().map(|t| format!("`--tag {t}`")))
        .collect();
    let message = format!(
        "{} {} none of the {} task(s) in {}",
        flags.join(" and "),
        if flags.len() == 1 { "matches" } else { "match" },
        ids.len(),
        suite.display()
    );
    let mut hints = Vec::new();
    if !globs.is_empty() {
        hints.push(format!(
            "`--task` matches task ids (globs such as `py-*`); the ids are {}",
            first_few(ids.iter())
        ));
    }
    if !tags.is_empty() {
        hints.push(if known_tags.is_empty() {
            "no task has a tag".to_owned()
        } else {
            format!("the tags are {}", first_few(known_tags.iter()))
        });
    }
    (message, hints.join("; "))
}

/// The first dozen of `items`, and how many more.
fn first_few<'a>(items: impl ExactSizeIterator<Item = &'a String>) -> String {
    const SHOWN: usize = 12;
    let n = items.len();
    let mut shown: Vec<&str> = items.take(SHOWN).map(String::as_str).collect();
    let more = (n > SHOWN).then(|| format!("and {} more", n - SHOWN));
    shown.extend(more.as_deref());
    shown.join(", ")
}

fn usage(printer: &Printer, message: &str, hint: &str) -> ExitCode {
    printer.problems(&[crate::runner::problem::Problem::new(message, hint)])
}

fn internal(printer: &Printer, message: &str) -> ExitCode {
    printer.error(message);
    ExitCode::from(exit::INTERNAL)
}

/// A new report folder under `reports`, named by the time (`20261205-001942-788`, then `-2`,
/// `-3`, ... when taken), made here: two harnesses started in the same millisecond (shards
/// started together) each get a folder of their own.
fn fresh_report_dir(reports: &std::path::Path) -> std::io::Result<PathBuf> {
    let stamp = chrono::Utc::now().format("%Y%m%d-%H%M%S-%3f").to_string();
    fresh_dir_named(reports, &stamp)
}

/// `reports/stamp`, or the first of `reports/stamp-2`, `-3`, ... not taken, created.
fn fresh_dir_named(reports: &std::path::Path, stamp: &str) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(reports)?;
    let mut dir = reports.join(stamp);
    let mut n = 2;
    loop {
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                dir = reports.join(format!("{stamp}-{n}"));
                n += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fresh_dir_named;

    #[test]
    fn harnesses_started_in_the_same_millisecond_get_folders_of_their_own() {
        let reports = tempfile::tempdir().unwrap();
        let stamp = "20261205-005209-448";
        let made: Vec<_> = std::thread::scope(|scope| {
            let threads: Vec<_> = (0..8)
                .map(|_| scope.spawn(|| fresh_dir_named(reports.path(), stamp).unwrap()))
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).collect()
        });
        let mut names: Vec<String> = made
            .iter()
            .map(|d| d.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        names.sort();
        let mut expected = vec![stamp.to_owned()];
        expected.extend((2..=8).map(|n| format!("{stamp}-{n}")));
        expected.sort();
        assert_eq!(names, expected);
        assert!(made.iter().all(|d| d.is_dir()));
    }
}
