//! `harness import exercism DIR --into TASKS`: turn an Exercism track (or the aider polyglot
//! benchmark) into task folders. Says what changed (new, updated with the files, unchanged),
//! lists every exercise it could not import with the reason, and exits 2 when there was one
//! (the rest are imported all the same).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::import::exercism::{self, ImportOptions};

use super::exit;
use super::printer::Printer;

/// `harness import …`: the suites it can import.
#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// Exercism practice exercises: a track checkout (exercism/python, ...) or the aider
    /// polyglot benchmark (Aider-AI/polyglot-benchmark), one task per exercise.
    Exercism(ExercismArgs),
    /// Pi session files (~/.pi/agent/sessions/…/*.jsonl, every version) as regression tests: a
    /// task (the repository at the session's commit, the user's messages as prompts) and a
    /// cassette of the model's recorded turns, replayed with `harness run --on-divergence
    /// continue` against today's tools.
    PiSession(PiSessionArgs),
    /// ATIF trajectories (v1.4 to v1.8, as Harbor, Terminal-Bench and this harness write them)
    /// whose tools are ours, as the same task and cassette; a trajectory with other tools is
    /// listed with them and nothing is written for it.
    Atif(AtifArgs),
}

/// `harness import pi-session`.
#[derive(Debug, Args)]
pub struct PiSessionArgs {
    /// The session files.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Follow the session's tree to this entry id instead of the file's last entry.
    #[arg(long, value_name = "ID")]
    pub leaf: Option<String>,
    #[command(flatten)]
    pub common: RecordedRunArgs,
}

/// `harness import atif`.
#[derive(Debug, Args)]
pub struct AtifArgs {
    /// The trajectory files (`trajectory.json`).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The folder the run worked in, so that absolute paths in its calls become the
    /// workspace's (ATIF does not keep it).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,
    #[command(flatten)]
    pub common: RecordedRunArgs,
}

/// What importing a recorded run takes, whatever its format.
#[derive(Debug, Args)]
pub struct RecordedRunArgs {
    /// The repository the run worked in (its work tree or git directory).
    #[arg(long, value_name = "GIT_DIR")]
    pub repo: PathBuf,
    /// The commit the run started from (default: the last commit of HEAD made before its
    /// first timestamp).
    #[arg(long, value_name = "SHA")]
    pub commit: Option<String>,
    /// The tasks folder to write the tasks into.
    #[arg(long, value_name = "TASKS")]
    pub into: PathBuf,
    /// The cassettes folder.
    #[arg(long, value_name = "DIR", default_value = "cassettes")]
    pub cassettes: PathBuf,
    /// Write the cassette in this wire format instead of the run's own (repeatable: one
    /// cassette per format).
    #[arg(long = "format", value_name = "API", value_enum)]
    pub formats: Vec<crate::providers::ApiKind>,
    /// A check the task runs after the replay (repeatable); without one, the task checks that
    /// the files the run's edits and writes left are as it left them.
    #[arg(long = "check", value_name = "CMD")]
    pub checks: Vec<String>,
    /// The tool profile the requests are built under (`pi-0.73`, `pi-0.14`, `pi-0.7`);
    /// default: the one the run's date points to.
    #[arg(long, value_name = "PROFILE")]
    pub tool_profile: Option<String>,
}

/// `harness import exercism`.
#[derive(Debug, Args)]
pub struct ExercismArgs {
    /// A track root (with exercises/practice/) or the polyglot benchmark's root (with
    /// <language>/exercises/practice/).
    pub dir: PathBuf,
    /// The tasks folder to write the tasks into (created if needed).
    #[arg(long, value_name = "TASKS")]
    pub into: PathBuf,
    /// Only this track (cpp, go, java, javascript, python, rust); repeatable.
    #[arg(long = "language", value_name = "L")]
    pub languages: Vec<String>,
    /// Only exercises whose name matches this glob (`two-*`); repeatable.
    #[arg(long = "exercise", value_name = "GLOB")]
    pub exercises: Vec<String>,
    /// The prompt template instead of the built-in one: the prompt with `{instructions}`,
    /// `{files}`, `{language}` and `{exercise}` where those go.
    #[arg(long, value_name = "FILE")]
    pub prompt_template: Option<PathBuf>,
    /// Do not run `npm install` for the JavaScript exercises' shared dependencies.
    #[arg(long)]
    pub no_install: bool,
    /// List every updated task with its changed files, and every unchanged one.
    #[arg(long, short)]
    pub verbose: bool,
}

/// Runs an import subcommand.
pub fn run(command: ImportCommand) -> ExitCode {
    match command {
        ImportCommand::Exercism(args) => exercism_cmd(args),
        ImportCommand::PiSession(args) => recorded_runs_cmd(
            &args.files,
            &args.common,
            &|file, options, catalog, runtime| {
                runtime.block_on(crate::import::session::import_session(
                    file,
                    &crate::import::session::SessionImportOptions {
                        leaf: args.leaf.clone(),
                        ..options.clone()
                    },
                    catalog,
                ))
            },
        ),
        ImportCommand::Atif(args) => recorded_runs_cmd(
            &args.files,
            &args.common,
            &|file, options, catalog, runtime| {
                let source = crate::import::atif::read_atif(
                    file,
                    args.cwd.as_deref(),
                    options.formats.first().copied(),
                )?;
                runtime.block_on(crate::import::session::import_source(
                    source, options, catalog,
                ))
            },
        ),
    }
}

fn exercism_cmd(args: ExercismArgs) -> ExitCode {
    let printer = Printer::from_env(false);
    let template = match &args.prompt_template {
        None => None,
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) if text.contains("{instructions}") => Some(text),
            Ok(_) => {
                let e = crate::import::ImportError::Template { path: path.clone() };
                return usage(&printer, &e.to_string(), &e.hint());
            }
            Err(e) => {
                return usage(
                    &printer,
                    &format!("failed to read the prompt template {}: {e}", path.display()),
                    "give the path of a text file",
                );
            }
        },
    };
    let options = ImportOptions {
        source: args.dir.clone(),
        into: args.into.clone(),
        languages: args.languages.clone(),
        exercises: args.exercises.clone(),
        template,
        install: !args.no_install,
    };
    let summary = match exercism::import(&options) {
        Ok(summary) => summary,
        Err(e) => return usage(&printer, &e.to_string(), &e.hint()),
    };
    for line in &summary.done {
        printer.note(line);
    }
    for note in &summary.notes {
        printer.warn(note);
    }
    for skipped in &summary.skipped {
        printer.message(&format!(
            "skipped {}: {}",
            skipped.path.display(),
            skipped.reason
        ));
    }
    for (id, files) in &summary.updated {
        if args.verbose || files.len() <= 3 {
            printer.note(&format!("updated {id}: {}", files.join(", ")));
        } else {
            printer.note(&format!(
                "updated {id}: {}, and {} more",
                files[..3].join(", "),
                files.len() - 3
            ));
        }
    }
    if args.verbose {
        for id in &summary.new {
            printer.note(&format!("new {id}"));
        }
    }
    let languages = summary
        .per_language
        .iter()
        .map(|(l, n)| format!("{l} {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    printer.data(&format!(
        "imported {} exercises into {} ({}): new {}, updated {}, unchanged {}; skipped {}",
        summary.imported(),
        args.into.display(),
        if languages.is_empty() {
            "none"
        } else {
            &languages
        },
        summary.new.len(),
        summary.updated.len(),
        summary.unchanged.len(),
        summary.skipped.len()
    ));
    if summary.skipped.is_empty() {
        ExitCode::from(exit::SUCCESS)
    } else {
        ExitCode::from(exit::USAGE)
    }
}

/// Imports one recorded run: `(file, options, catalog, runtime)` to what was imported.
type ImportOne<'a> = dyn Fn(
        &std::path::Path,
        &crate::import::session::SessionImportOptions,
        &crate::providers::catalog::Catalog,
        &tokio::runtime::Runtime,
    ) -> Result<
        crate::import::session::ImportedSession,
        crate::import::session::SessionImportError,
    > + 'a;

fn recorded_runs_cmd(
    files: &[PathBuf],
    args: &RecordedRunArgs,
    import: &ImportOne<'_>,
) -> ExitCode {
    use crate::import::session::SessionImportOptions;
    use crate::import::tree::TreeChange;
    let printer = Printer::from_env(false);
    let (config, _) = match crate::providers::config::HarnessConfig::load_first(
        &super::run_args::config_candidates(&args.into),
    ) {
        Ok(found) => found,
        Err(e) => return usage(&printer, &e.to_string(), "fix or remove the file"),
    };
    let catalog = match crate::providers::catalog::Catalog::with_config(&config) {
        Ok(catalog) => catalog,
        Err(e) => {
            return usage(
                &printer,
                &e.to_string(),
                "see the README's provider section",
            );
        }
    };
    let profile = match args
        .tool_profile
        .as_deref()
        .map(crate::tools::profile::ToolProfile::parse)
    {
        None => None,
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => return usage(&printer, &e, "`--tool-profile pi-0.73` is today's tools"),
    };
    let options = SessionImportOptions {
        profile,
        repo: args.repo.clone(),
        commit: args.commit.clone(),
        leaf: None,
        into: args.into.clone(),
        cassettes: args.cassettes.clone(),
        formats: args.formats.clone(),
        checks: args.checks.clone(),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            return usage(
                &printer,
                &format!("failed to start a runtime: {e}"),
                "try again",
            );
        }
    };
    let (mut failed, mut imported, mut unreadable) = (0usize, 0usize, 0usize);
    for file in files {
        match import(file, &options, &catalog, &runtime) {
            Ok(done) => {
                imported += 1;
                let change = match &done.change {
                    TreeChange::New => "new".to_owned(),
                    TreeChange::Unchanged => "unchanged".to_owned(),
                    TreeChange::Updated(files) => format!("updated ({} files)", files.len()),
                };
                let calls = done
                    .calls
                    .iter()
                    .map(|(name, n)| format!("{name} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                printer.note(&format!(
                    "{}: task {} {change}: {} prompts, {} turns ({} interrupted or failed), calls: {}; commit {} ({})",
                    file.display(),
                    done.task,
                    done.prompts,
                    done.turns,
                    done.interrupted,
                    if calls.is_empty() { "none".to_owned() } else { calls },
                    &done.commit[..done.commit.len().min(12)],
                    done.commit_why,
                ));
                for cassette in &done.cassettes {
                    printer.note(&format!("  cassette {}", cassette.display()));
                }
                printer.note(&format!(
                    "  tool profile {} ({}); replay under it with `--tool-profile {}`",
                    done.profile, done.profile_why, done.profile
                ));
                if let Some(stopped) = &done.stopped {
                    printer.warn(&format!(
                        "{}: imported up to {stopped}; the rest of the session is left out",
                        file.display()
                    ));
                }
                for note in &done.notes {
                    printer.warn(&format!("{}: {note}", file.display()));
                }
                for problem in &done.problems {
                    printer.message(problem);
                }
                unreadable += usize::from(!done.problems.is_empty());
            }
            Err(e) => {
                failed += 1;
                printer.message(&format!("skipped {e}"));
            }
        }
    }
    printer.data(&format!(
        "imported {imported} recorded run(s) into {} and {} ({unreadable} with unreadable lines); skipped {failed}",
        args.into.display(),
        args.cassettes.display()
    ));
    if failed == 0 && unreadable == 0 {
        ExitCode::from(exit::SUCCESS)
    } else {
        ExitCode::from(exit::USAGE)
    }
}

fn usage(printer: &Printer, message: &str, hint: &str) -> ExitCode {
    printer.problems(&[crate::runner::problem::Problem::new(message, hint)])
}
