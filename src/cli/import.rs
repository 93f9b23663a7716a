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
                    &format!("cannot read the prompt template {}: {e}", path.display()),
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

fn usage(printer: &Printer, message: &str, hint: &str) -> ExitCode {
    printer.problems(&[crate::runner::problem::Problem::new(message, hint)])
}
