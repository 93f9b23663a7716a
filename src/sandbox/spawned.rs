//! A running command of the agent or the checks, whoever spawned it: the harness itself outside
//! `isolated` ([`spawn`]), or the run sandbox's supervisor under it. Dropping it kills everything
//! the command started (see [`super::process`] for how).

use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

use super::bwrap::CommandSpec;
use super::process::{TAG_VAR, Tags, kill_tagged, own_children, resolve_program, spawn_own};

/// Spawns `spec` directly (outside `isolated`), tagged with a fresh tag of `tags`, as `user`
/// when given.
pub(crate) fn spawn(
    spec: CommandSpec<'_>,
    tags: &Arc<Tags>,
    user: Option<&super::user::CommandUser>,
) -> io::Result<Spawned> {
    let tag = tags.next();
    // Found here, so that std spawns it without copying the harness (`resolve_program`); as
    // another user, std forks anyway, and that user's `execvp` looks it up as before.
    let shell = match user {
        None => resolve_program(spec.shell, spec.env, spec.cwd),
        Some(_) => spec.shell.to_path_buf(),
    };
    let mut cmd = tokio::process::Command::new(shell);
    // `$0` stays the name as given.
    cmd.arg0(spec.shell)
        .arg("-c")
        .arg(spec.script)
        .current_dir(spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .env(TAG_VAR, &tag)
        .stdin(Stdio::null())
        .stdout(Stdio::from(spec.stdout))
        .stderr(Stdio::from(spec.stderr))
        .process_group(0);
    if let Some(user) = user {
        // std drops the supplementary groups too when root changes the user.
        cmd.uid(user.uid).gid(user.gid);
    }
    let spawned = spawn_own(&mut cmd);
    // The Command holds copies of the caller's pipe ends; let them go so EOF can arrive.
    drop(cmd);
    let child = spawned?;
    let pgid = child.id().map(|p| p as i32);
    if let Some(pid) = pgid {
        // The first the kernel's OOM killer takes, as under `isolated`: a command that eats the
        // memory ends its own run, not the harness and the suite. Set as the shell starts (std
        // spawns without a fork of the harness, so not in the child): what it starts inherits
        // it, but for what it forks in the first microseconds.
        let _ = std::fs::write(
            format!("/proc/{pid}/oom_score_adj"),
            super::supervisor::OOM_SCORE_ADJ,
        );
    }
    Ok(Spawned {
        inner: Inner::Direct { child, pgid },
        tag,
        cleaned: false,
    })
}

/// A running command. Dropping it kills everything it started.
pub struct Spawned {
    inner: Inner,
    tag: String,
    cleaned: bool,
}

enum Inner {
    /// Spawned by the harness (outside `isolated`).
    Direct {
        child: tokio::process::Child,
        pgid: Option<i32>,
    },
    /// Spawned by the supervisor of the run's sandbox.
    Supervised(super::isolated::SandboxedCommand),
}

impl Spawned {
    pub(crate) fn supervised(command: super::isolated::SandboxedCommand, tag: String) -> Spawned {
        Spawned {
            inner: Inner::Supervised(command),
            tag,
            cleaned: false,
        }
    }

    /// The tag in the environment of every process of this command.
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// Waits for the command's shell to end. Cancel-safe: a wait given up in a `select!` loses
    /// nothing, and once ended the status is kept. Under `isolated`, a command that could not
    /// start says so here, as a [`super::NotStarted`] error.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        match &mut self.inner {
            Inner::Direct { child, .. } => child.wait().await,
            Inner::Supervised(command) => command.wait().await.map(ExitStatus::from_raw),
        }
    }

    /// Kills the command's process group at once (Pi's `killProcessTree`); [`Spawned::kill_all`]
    /// gets the rest.
    pub fn kill_group(&self) {
        match &self.inner {
            Inner::Direct { pgid, .. } => {
                if let Some(pid) = *pgid {
                    if killpg(Pid::from_raw(pid), Signal::SIGKILL).is_err() {
                        let _gone = kill(Pid::from_raw(pid), Signal::SIGKILL);
                    }
                }
            }
            Inner::Supervised(command) => command.kill_group(),
        }
    }

    /// Kills the command and every process it started (see the module docs).
    pub async fn kill_all(&mut self) {
        match &mut self.inner {
            Inner::Direct { pgid, .. } => {
                let tag = self.tag.clone();
                let pgid = *pgid;
                let _done =
                    tokio::task::spawn_blocking(move || kill_tagged(pgid, &tag, true)).await;
            }
            Inner::Supervised(command) => command.clean().await,
        }
        self.cleaned = true;
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        match &self.inner {
            Inner::Direct { pgid, .. } => {
                if !self.cleaned {
                    kill_tagged(*pgid, &self.tag, true);
                }
                // Waited for by now, or handed to tokio's reaper of dropped children: no longer
                // one [`kill_orphans`] must leave alone.
                if let Some(pid) = pgid {
                    own_children().remove(pid);
                }
            }
            Inner::Supervised(command) => {
                if !self.cleaned {
                    command.clean_later();
                }
            }
        }
    }
}
