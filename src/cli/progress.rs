//! Live progress of `harness run` on stderr, as runs finish.
//!
//! On a terminal: a progress bar (runs done of total, passed, failed, errors, dollars spent so
//! far, ETA) that moves on every finished run, with a line printed above it for each run that did
//! not pass (and why). Elsewhere (a CI log, a pipe): plain lines, one per finished run, in the
//! order they finish. `NO_COLOR` (set to anything non-empty) turns colour off; `-q` prints
//! nothing but errors: runs that ended in `error` and cassettes that could not be written.
//!
//! A [`Reporter`] of runner events; it never reads the runs' files. The terminal check happens
//! once, in [`Progress::for_stderr`]; everything else takes its decisions as values, so the tests
//! drive it with a buffer.

use std::io::Write;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::record::{Outcome, RunRecord};
use crate::runner::{Reporter, RunnerEvent};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A progress bar, for a terminal.
    Bar,
    /// One line per finished run.
    Lines,
    /// Only errors.
    Quiet,
}

/// Running counts of the finished runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProgressCounts {
    pub total: usize,
    pub done: usize,
    pub passed: usize,
    /// Finished but not passed: failed, diverged, limit reached (and any other verdict).
    pub failed: usize,
    pub errors: usize,
    pub skipped: usize,
    /// Dollars spent by the priced runs so far; `None` while no run had a price.
    pub spent: Option<f64>,
}

impl ProgressCounts {
    fn add(&mut self, r: &RunRecord) {
        self.done += 1;
        match r.outcome {
            Outcome::Passed => self.passed += 1,
            Outcome::Error => self.errors += 1,
            Outcome::Skipped => self.skipped += 1,
            _ => self.failed += 1,
        }
        if let Some(cost) = r.cost {
            self.spent = Some(self.spent.unwrap_or(0.0) + cost);
        }
    }

    /// `12 passed · 1 failed · 0 errors · $0.0123` (the skipped count and the spend only when
    /// there are some).
    pub fn message(&self) -> String {
        let mut out = format!(
            "{} passed · {} failed · {} error{}",
            self.passed,
            self.failed,
            self.errors,
            if self.errors == 1 { "" } else { "s" }
        );
        if self.skipped > 0 {
            out.push_str(&format!(" · {} skipped", self.skipped));
        }
        if let Some(spent) = self.spent {
            out.push_str(&format!(" · ${spent:.4} spent"));
        }
        out
    }
}

/// Progress on stderr (or, in tests, any writer).
pub struct Progress {
    mode: Mode,
    colour: bool,
    state: Mutex<State>,
}

struct State {
    tally: ProgressCounts,
    bar: Option<ProgressBar>,
    out: Box<dyn Write + Send>,
    /// Notes already said.
    notices: std::collections::HashSet<String>,
}

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const YELLOW: &str = "\x1b[33m";
const RESET: &str = "\x1b[0m";

impl Progress {
    /// How the progress is shown.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Progress in `mode`, lines to `out` (the bar draws on stderr, hidden unless a terminal).
    pub fn new(mode: Mode, colour: bool, out: Box<dyn Write + Send>) -> Progress {
        Progress {
            mode,
            colour,
            state: Mutex::new(State {
                tally: ProgressCounts::default(),
                bar: None,
                out,
                notices: Default::default(),
            }),
        }
    }

    /// The counts so far.
    pub fn tally(&self) -> ProgressCounts {
        self.state.lock().expect("progress state").tally.clone()
    }

    /// Removes the bar (before the summary is printed).
    pub fn finish(&self) {
        if let Some(bar) = self.state.lock().expect("progress state").bar.take() {
            bar.finish_and_clear();
        }
    }

    fn bar(&self, total: usize) -> ProgressBar {
        let template = if self.colour {
            "{spinner:.cyan} [{bar:28.cyan/blue}] {pos}/{len} runs · {msg} · {elapsed} elapsed, ETA {eta}"
        } else {
            "{spinner} [{bar:28}] {pos}/{len} runs · {msg} · {elapsed} elapsed, ETA {eta}"
        };
        let style = ProgressStyle::with_template(template)
            .expect("a valid template")
            .progress_chars("=> ");
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr())
            .with_style(style);
        bar.enable_steady_tick(Duration::from_millis(250));
        bar
    }

    /// `[3/36] task provider/model: outcome (5 turns, 3/3 checks)`, the outcome coloured.
    fn line(&self, tally: &ProgressCounts, r: &RunRecord) -> String {
        let outcome = r.outcome.name();
        let outcome = if self.colour {
            let c = match r.outcome {
                Outcome::Passed => GREEN,
                Outcome::Failed | Outcome::Error => RED,
                _ => YELLOW,
            };
            format!("{c}{outcome}{RESET}")
        } else {
            outcome.to_owned()
        };
        format!(
            "[{}/{}] {} {}/{}: {} ({} turns, {}/{} checks)",
            tally.done,
            tally.total,
            r.task_id,
            r.provider,
            r.model,
            outcome,
            r.turns,
            r.checks_passed,
            r.checks_total
        )
    }
}

impl Reporter for Progress {
    fn event(&self, event: &RunnerEvent) {
        let mut guard = self.state.lock().expect("progress state");
        let state = &mut *guard;
        let mut lines: Vec<String> = Vec::new();
        match event {
            RunnerEvent::SuiteStarted { runs } => {
                state.tally.total = *runs;
                if self.mode == Mode::Bar {
                    let bar = self.bar(*runs);
                    bar.set_message(state.tally.message());
                    state.bar = Some(bar);
                }
            }
            RunnerEvent::RunFinished { record, .. } => {
                state.tally.add(record);
                let mut line = self.line(&state.tally, record);
                // A replay that drifted from its cassette says where, and whether its outcome
                // held, under its line.
                if let Some(drift) = record.drift_line() {
                    line.push_str(&format!("\n      {drift}"));
                }
                let explained = || format!("{line}\n{}", explain(record).trim_end());
                match self.mode {
                    Mode::Bar => {
                        if let Some(bar) = &state.bar {
                            bar.inc(1);
                            bar.set_message(state.tally.message());
                            if record.outcome != Outcome::Passed {
                                bar.println(explained());
                            } else if record.divergences > 0 {
                                bar.println(line);
                            }
                        }
                    }
                    Mode::Lines if record.outcome == Outcome::Passed => lines.push(line),
                    Mode::Lines => lines.push(explained()),
                    Mode::Quiet if record.outcome == Outcome::Error => lines.push(explained()),
                    Mode::Quiet => {}
                }
            }
            RunnerEvent::CassetteWritten { path, .. } if self.mode != Mode::Quiet => {
                lines.push(format!("   cassette written: {}", path.display()));
            }
            RunnerEvent::CassetteNotWritten { reason, .. } => {
                lines.push(format!("   cassette not written: {reason}"));
            }
            RunnerEvent::CassetteProposed { path, .. } if self.mode != Mode::Quiet => {
                lines.push(format!(
                    "   re-recorded cassette written to {} (review it with `{}`)",
                    path.display(),
                    crate::cassettes::review::review_command_for(path)
                ));
            }
            // The same note for many runs (a replay under another strategy) is said once.
            RunnerEvent::Notice { message, .. }
                if self.mode != Mode::Quiet && state.notices.insert(message.clone()) =>
            {
                lines.push(format!("   note: {message}"));
            }
            _ => {}
        }
        for line in lines {
            match &state.bar {
                Some(bar) => bar.println(line),
                None => {
                    let _ = writeln!(state.out, "{line}");
                    let _ = state.out.flush();
                }
            }
        }
    }
}

/// Why a run did not pass, indented under its progress line: the reason, then the detail (the
/// divergence diff, the provider error, the hint), at most 40 lines.
pub fn explain(record: &RunRecord) -> String {
    const MAX_LINES: usize = 40;
    let mut out = format!("      {}\n", record.reason);
    if let Some(detail) = &record.detail {
        let lines: Vec<&str> = detail
            .lines()
            .filter(|l| !l.trim().is_empty() && !record.reason.ends_with(l.trim()))
            .collect();
        for line in lines.iter().take(MAX_LINES) {
            out.push_str(&format!("      {line}\n"));
        }
        if lines.len() > MAX_LINES {
            out.push_str(&format!(
                "      ... {} more lines in the run's report\n",
                lines.len() - MAX_LINES
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Buffer {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    fn record(task: &str, outcome: Outcome, cost: Option<f64>) -> Box<RunRecord> {
        let mut r = crate::record::RunRecord::skipped(task, "p", "m", 1, "why it ended so");
        r.outcome = outcome;
        r.cost = cost;
        if outcome == Outcome::Error {
            r.error_kind = Some(crate::record::ErrorKind::from_name("rate_limited"));
            r.detail = Some("429 Too Many Requests\nretry later".into());
        }
        Box::new(r)
    }

    fn drive(progress: &Progress) {
        progress.event(&RunnerEvent::SuiteStarted { runs: 3 });
        progress.event(&RunnerEvent::RunStarted {
            index: 0,
            label: "a".into(),
        });
        for (index, (task, outcome, cost)) in [
            ("a", Outcome::Passed, Some(0.01)),
            ("b", Outcome::Diverged, None),
            ("c", Outcome::Error, Some(0.002)),
        ]
        .into_iter()
        .enumerate()
        {
            progress.event(&RunnerEvent::RunFinished {
                index,
                record: record(task, outcome, cost),
            });
        }
    }

    #[test]
    fn lines_say_each_run_as_it_finishes_with_why_it_did_not_pass() {
        let buffer = Buffer::default();
        let progress = Progress::new(Mode::Lines, false, Box::new(buffer.clone()));
        drive(&progress);
        assert_eq!(
            buffer.text(),
            "[1/3] a p/m: passed (0 turns, 0/0 checks)\n\
             [2/3] b p/m: diverged (0 turns, 0/0 checks)\n      why it ended so\n\
             [3/3] c p/m: error (0 turns, 0/0 checks)\n      why it ended so\n      429 Too Many Requests\n      retry later\n"
        );
        let tally = progress.tally();
        assert_eq!(
            (tally.done, tally.passed, tally.failed, tally.errors),
            (3, 1, 1, 1)
        );
        assert_eq!(
            tally.message(),
            "1 passed · 1 failed · 1 error · $0.0120 spent"
        );
    }

    #[test]
    fn quiet_prints_only_errors_and_colour_only_when_asked() {
        let buffer = Buffer::default();
        let progress = Progress::new(Mode::Quiet, false, Box::new(buffer.clone()));
        drive(&progress);
        progress.event(&RunnerEvent::CassetteNotWritten {
            index: 0,
            reason: "a key in the traffic".into(),
        });
        let text = buffer.text();
        assert!(text.starts_with("[3/3] c p/m: error"), "{text}");
        assert!(
            !text.contains("passed") && !text.contains("diverged"),
            "{text}"
        );
        assert!(
            text.ends_with("   cassette not written: a key in the traffic\n"),
            "{text}"
        );
        assert!(!text.contains('\x1b'));
        let coloured = Buffer::default();
        drive(&Progress::new(
            Mode::Lines,
            true,
            Box::new(coloured.clone()),
        ));
        assert!(coloured.text().contains("\x1b[32mpassed\x1b[0m"));
    }

    #[test]
    fn the_bar_counts_every_finished_run() {
        let buffer = Buffer::default();
        let progress = Progress::new(Mode::Bar, false, Box::new(buffer.clone()));
        drive(&progress);
        let bar = progress.state.lock().unwrap().bar.clone().unwrap();
        assert_eq!((bar.position(), bar.length()), (3, Some(3)));
        assert_eq!(
            bar.message(),
            "1 passed · 1 failed · 1 error · $0.0120 spent"
        );
        progress.finish();
        assert!(
            buffer.text().is_empty(),
            "the bar prints above itself, not to the buffer"
        );
    }
}
