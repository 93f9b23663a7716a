//! The interrupt of `harness run`: the first Ctrl-C or SIGTERM stops the suite (it winds down
//! and writes its partial report), a second one exits at once.

use crate::runner::CancellationToken;
use crate::sandbox::Sandbox;

use super::exit;

/// Installs the interrupt: the first Ctrl-C or SIGTERM cancels `stop` (the suite winds down and
/// writes its partial report), a second kills what the sandbox started and exits at once with
/// [`exit::INTERRUPTED`]. Needs a tokio runtime.
pub fn watch_signals(stop: CancellationToken, sandbox: Sandbox) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        super::printer::warn(
            "failed to install the Ctrl-C handler; an interrupt ends the harness at once",
        );
        return;
    };
    tokio::spawn(async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        stderr!(
            "interrupted: no more runs start and the running ones are stopped; the partial \
             report follows (interrupt again to exit at once)"
        );
        stop.cancel();
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
        stderr!("interrupted again: exiting now");
        sandbox.kill_all();
        std::process::exit(i32::from(exit::INTERRUPTED));
    });
}
