//! The one place that decides what the `harness` binary writes where (uv's `Printer`): data on
//! stdout, messages on stderr (`error: …` and `hint: …`, `warning: …`, notes that `-q` silences),
//! colour only on a terminal and never with `NO_COLOR`, progress as a bar on a terminal and one
//! line per run elsewhere, and `$GITHUB_STEP_SUMMARY` (GitHub Actions' job summary) when set.
//!
//! A closed stdout or stderr (`harness run | head`) loses the line quietly instead of panicking.
//! Commands take a [`Printer`] made once from the environment; tests make their own.

use std::ffi::OsStr;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use super::exit;
use super::progress::{Mode, Progress};
use crate::runner::problem::Problem;

/// Where the binary's output goes, and how it looks.
#[derive(Debug, Clone)]
pub struct Printer {
    /// `-q`: stderr carries errors and warnings only.
    quiet: bool,
    /// Colour on stdout (a terminal, and no `NO_COLOR`).
    colour_stdout: bool,
    /// stderr is a terminal: progress draws a bar there.
    stderr_terminal: bool,
    /// Colour on stderr.
    colour_stderr: bool,
    /// `$GITHUB_STEP_SUMMARY`, when set and not empty.
    step_summary: Option<PathBuf>,
}

impl Printer {
    /// The printer of this process: its terminals, `NO_COLOR` and `$GITHUB_STEP_SUMMARY`.
    pub fn from_env(quiet: bool) -> Printer {
        Printer::new(
            quiet,
            std::io::stdout().is_terminal(),
            std::io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR").as_deref(),
            std::env::var_os("GITHUB_STEP_SUMMARY").as_deref(),
        )
    }

    /// A printer for the given terminals and variables (`NO_COLOR` set to anything non-empty
    /// turns colour off; an empty `GITHUB_STEP_SUMMARY` is none).
    pub fn new(
        quiet: bool,
        stdout_terminal: bool,
        stderr_terminal: bool,
        no_color: Option<&OsStr>,
        step_summary: Option<&OsStr>,
    ) -> Printer {
        let colour = no_color.is_none_or(|v| v.is_empty());
        Printer {
            quiet,
            colour_stdout: colour && stdout_terminal,
            stderr_terminal,
            colour_stderr: colour && stderr_terminal,
            step_summary: step_summary.filter(|v| !v.is_empty()).map(PathBuf::from),
        }
    }

    /// Whether data on stdout may carry colour.
    pub fn colour(&self) -> bool {
        self.colour_stdout
    }

    /// Whether `-q` was given.
    pub fn quiet(&self) -> bool {
        self.quiet
    }

    /// `$GITHUB_STEP_SUMMARY`, the file summaries are appended to.
    pub fn step_summary(&self) -> Option<PathBuf> {
        self.step_summary.clone()
    }

    /// The progress of a suite on stderr: a bar on a terminal, a line per finished run
    /// elsewhere, errors only when quiet.
    pub fn progress(&self) -> Progress {
        let mode = match (self.quiet, self.stderr_terminal) {
            (true, _) => Mode::Quiet,
            (false, true) => Mode::Bar,
            (false, false) => Mode::Lines,
        };
        Progress::new(mode, self.colour_stderr, Box::new(std::io::stderr()))
    }

    /// Data on stdout.
    pub fn data(&self, text: &str) {
        data(text);
    }

    /// A note on stderr, unless quiet.
    pub fn note(&self, text: &str) {
        if !self.quiet {
            line(text);
        }
    }

    /// A line on stderr, quiet or not (a notice the user must see).
    pub fn message(&self, text: &str) {
        line(text);
    }

    /// `warning: …` on stderr, quiet or not.
    pub fn warn(&self, text: &str) {
        warn(text);
    }

    /// `error: …` on stderr.
    pub fn error(&self, text: &str) {
        line(&format!("error: {text}"));
    }

    /// Every problem as `error: …` and `hint: …`; the usage exit status.
    pub fn problems(&self, problems: &[Problem]) -> ExitCode {
        for p in problems {
            self.error(&p.message);
            line(&format!("hint: {}", p.hint));
        }
        ExitCode::from(exit::USAGE)
    }
}

/// Writes data and a line break to stdout and flushes it; unlike `println!`, a closed pipe is an
/// error to handle, not a panic.
pub(crate) fn print_line(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()
}

/// Writes data to stdout, ending quietly if the reader has gone (`| head`).
pub(crate) fn print_data(text: &str) {
    data(text);
}

/// Writes data to stdout, ending quietly if the reader has gone (`| head`).
pub(crate) fn data(text: &str) {
    let _ = print_line(text);
}

/// Writes `text` and a line break to stderr. Unlike `eprintln!`, a closed stderr is not a
/// panic: the line is lost, the harness goes on.
pub(crate) fn line(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}").and_then(|()| err.flush());
}

/// `warning: {message}` on stderr.
pub(crate) fn warn(message: &str) {
    line(&format!("warning: {message}"));
}

/// Prints `error: {message}` and `hint: {hint}` to stderr and returns [`exit::USAGE`].
pub(crate) fn usage_error(message: &str, hint: &str) -> ExitCode {
    line(&format!("error: {message}"));
    line(&format!("hint: {hint}"));
    ExitCode::from(exit::USAGE)
}

/// Prints `error: {message}` to stderr and returns [`exit::INTERNAL`].
pub(crate) fn internal_error(message: &str) -> ExitCode {
    line(&format!("error: {message}"));
    ExitCode::from(exit::INTERNAL)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_needs_a_terminal_and_no_no_color() {
        let p = Printer::new(false, true, true, None, None);
        assert!(p.colour());
        assert!(!Printer::new(false, false, true, None, None).colour());
        assert!(!Printer::new(false, true, true, Some(OsStr::new("1")), None).colour());
        // An empty NO_COLOR is as good as none (no-color.org).
        assert!(Printer::new(false, true, true, Some(OsStr::new("")), None).colour());
    }

    #[test]
    fn the_step_summary_is_the_variable_unless_empty() {
        let set = Printer::new(false, false, false, None, Some(OsStr::new("/tmp/s.md")));
        assert_eq!(set.step_summary(), Some(PathBuf::from("/tmp/s.md")));
        let empty = Printer::new(false, false, false, None, Some(OsStr::new("")));
        assert_eq!(empty.step_summary(), None);
    }

    #[test]
    fn progress_is_a_bar_on_a_terminal_lines_elsewhere_nothing_when_quiet() {
        assert_eq!(
            Printer::new(false, false, true, None, None)
                .progress()
                .mode(),
            Mode::Bar
        );
        assert_eq!(
            Printer::new(false, true, false, None, None)
                .progress()
                .mode(),
            Mode::Lines
        );
        assert_eq!(
            Printer::new(true, true, true, None, None).progress().mode(),
            Mode::Quiet
        );
    }
}
