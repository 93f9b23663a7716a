//! What `harness run` adds for folders that outlive one invocation: the interrupt (Ctrl-C or
//! SIGTERM stops the suite, a second one exits at once), `--resume DIR` and `--rerun-errors DIR`
//! (the folder's manifest supplies every option not given, and a given one must agree), the
//! fingerprint check that refuses to complete a folder with another suite, and the cleanup of
//! temporary folders a killed harness left.
//!
//! The bookkeeping itself (plans, journals, manifests) is the runner's; this module turns it
//! into flags, messages and exit codes.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::ValueEnum;

use crate::cassettes::{self, CassetteMode};
use crate::providers::catalog::ModelSelector;
use crate::runner::manifest::{Difference, Manifest, SuiteOptions};
use crate::runner::resume::{Continuation, SuitePlan};
use crate::runner::{CancellationToken, PlannedRun};
use crate::sandbox::Sandbox;

use super::exit;
use super::preflight::Problem;
use super::run::RunArgs;

/// The arguments given on the command line (their clap ids), as opposed to defaults.
#[derive(Debug, Clone, Default)]
pub struct Given(BTreeSet<String>);

impl Given {
    /// The arguments of `matches` that came from the command line or the environment.
    pub fn of(matches: Option<&clap::ArgMatches>) -> Given {
        use clap::parser::ValueSource;
        let Some(m) = matches else {
            return Given::default();
        };
        Given(
            m.ids()
                .filter(|id| {
                    matches!(
                        m.value_source(id.as_str()),
                        Some(ValueSource::CommandLine | ValueSource::EnvVariable)
                    )
                })
                .map(|id| id.as_str().to_owned())
                .collect(),
        )
    }

    /// These arguments, by id (tests).
    pub fn ids<'a>(ids: impl IntoIterator<Item = &'a str>) -> Given {
        Given(ids.into_iter().map(str::to_owned).collect())
    }

    fn has(&self, id: &str) -> bool {
        self.0.contains(id)
    }
}

/// The name a value enum has on the command line.
fn name<T: ValueEnum>(value: &T) -> String {
    value
        .to_possible_value()
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default()
}

fn parse<T: ValueEnum>(name: &str) -> Option<T> {
    T::from_str(name, false).ok()
}

/// The options of this invocation as its manifest keeps them (`models` resolved, `mode` in
/// force).
pub fn suite_options(args: &RunArgs, models: &[ModelSelector], mode: CassetteMode) -> SuiteOptions {
    SuiteOptions {
        tasks: args.tasks.clone(),
        cassettes: args.cassettes.clone(),
        models: models.iter().map(ToString::to_string).collect(),
        mode: name(&mode),
        on_divergence: name(&args.on_divergence),
        epochs: args.epochs,
        edit_strategies: args.edit_strategies.clone(),
        task_globs: args.task_globs.clone(),
        tags: args.tags.clone(),
        thinking: args.thinking.as_ref().map(name),
        base_url: args.base_url.clone(),
        sandbox: args.sandbox.as_ref().map(name),
        max_cost: args.max_cost,
    }
}

/// The tasks folder `harness run` will use: the one given, else (`--resume`, `--rerun-errors`)
/// the report's, else the default.
pub fn tasks_dir(args: &RunArgs, given: &Given) -> PathBuf {
    if given.has("tasks") {
        return args.tasks.clone();
    }
    args.resume
        .as_ref()
        .or(args.rerun_errors.as_ref())
        .and_then(|dir| Manifest::read(dir).ok())
        .map_or_else(|| args.tasks.clone(), |m| m.options.tasks)
}

/// A report folder run again.
#[derive(Debug)]
pub struct Continuing {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub how: Continuation,
}

/// With `--resume` or `--rerun-errors`: reads the folder's manifest and makes `args` the
/// report's options (every plan option not given is the report's; a given one must be the
/// report's). `Ok(None)` for a fresh report.
pub fn continuing(args: &mut RunArgs, given: &Given) -> Result<Option<Continuing>, Vec<Problem>> {
    let (dir, how) = match (&args.resume, &args.rerun_errors) {
        (Some(dir), _) => (dir.clone(), Continuation::Resume),
        (None, Some(dir)) => (dir.clone(), Continuation::RerunErrors),
        (None, None) => return Ok(None),
    };
    let flag = match how {
        Continuation::Resume => "--resume",
        Continuation::RerunErrors => "--rerun-errors",
    };
    let manifest = Manifest::read(&dir).map_err(|e| {
        let text = e.to_string();
        let (message, hint) = text.split_once("\nhint: ").unwrap_or((&text, ""));
        vec![Problem {
            message: format!("{flag}: {message}"),
            hint: if hint.is_empty() {
                "pass a report folder written by `harness run`".to_owned()
            } else {
                hint.to_owned()
            },
        }]
    })?;
    let problems = adopt(args, &manifest.options, given);
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Some(Continuing { dir, manifest, how }))
}

/// Makes `args` carry the report's options `then` wherever none was given; a given one that
/// differs is a problem.
pub fn adopt(args: &mut RunArgs, then: &SuiteOptions, given: &Given) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut differs = |flag: &str, now: String, was: String| {
        problems.push(Problem {
            message: format!("`{flag} {now}` is not what the report was run with (`{flag} {was}`)"),
            hint: "leave the flag out to use the report's, or start a new report without \
                   `--resume`/`--rerun-errors`"
                .to_owned(),
        });
    };
    let list = |v: &[String]| {
        if v.is_empty() {
            "(none)".to_owned()
        } else {
            v.join(" ")
        }
    };
    // Where the suite is may change between machines; what it holds is fingerprinted.
    if !given.has("tasks") {
        args.tasks = then.tasks.clone();
    }
    if !given.has("cassettes") {
        args.cassettes = then.cassettes.clone();
    }
    if given.has("models") || given.has("provider") {
        let now: Vec<String> = super::run::model_selectors(&args.models, args.provider.as_deref())
            .map(|m| m.iter().map(ToString::to_string).collect())
            .unwrap_or_else(|_| args.models.clone());
        if now != then.models {
            differs("--model", list(&now), list(&then.models));
        }
    } else {
        args.models = then.models.clone();
        args.provider = None;
    }
    if given.has("cassette_mode") || given.has("record") {
        let flag = if args.record {
            Some(CassetteMode::Record)
        } else {
            args.cassette_mode
        };
        if let Ok(mode) = cassettes::resolve_mode(flag, |k| std::env::var(k).ok()) {
            if name(&mode) != then.mode {
                differs("--cassette-mode", name(&mode), then.mode.clone());
            }
        }
    } else {
        args.cassette_mode = parse(&then.mode);
        args.record = false;
    }
    macro_rules! same {
        ($id:literal, $flag:literal, $field:expr, $then:expr, $show:expr) => {
            if given.has($id) {
                if $field != $then {
                    differs($flag, $show(&$field), $show(&$then));
                }
            } else {
                $field = $then;
            }
        };
    }
    let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".to_owned());
    let on_div: Option<cassettes::OnDivergence> = parse(&then.on_divergence);
    if let Some(on_div) = on_div {
        same!(
            "on_divergence",
            "--on-divergence",
            args.on_divergence,
            on_div,
            name
        );
    }
    same!("epochs", "--epochs", args.epochs, then.epochs, |e: &u32| e
        .to_string());
    same!(
        "edit_strategies",
        "--edit-strategy",
        args.edit_strategies,
        then.edit_strategies.clone(),
        |v: &Vec<String>| list(v)
    );
    same!(
        "task_globs",
        "--task",
        args.task_globs,
        then.task_globs.clone(),
        |v: &Vec<String>| list(v)
    );
    same!("tags", "--tag", args.tags, then.tags.clone(), |v: &Vec<
        String,
    >| list(
        v
    ));
    same!(
        "base_url",
        "--base-url",
        args.base_url,
        then.base_url.clone(),
        opt
    );
    let thinking = then.thinking.as_deref().and_then(parse);
    same!(
        "thinking",
        "--thinking",
        args.thinking,
        thinking,
        |t: &Option<crate::providers::ThinkingLevel>| t.as_ref().map_or("(none)".into(), name)
    );
    let sandbox = then.sandbox.as_deref().and_then(parse);
    same!(
        "sandbox",
        "--sandbox",
        args.sandbox,
        sandbox,
        |t: &Option<crate::sandbox::Tier>| t.as_ref().map_or("(none)".into(), name)
    );
    same!(
        "max_cost",
        "--max-cost",
        args.max_cost,
        then.max_cost,
        |c: &Option<f64>| c.map_or("(none)".into(), |c| c.to_string())
    );
    problems
}

/// Whether this invocation may complete `c`'s folder: the same plan and the same suite. Under
/// `--rerun-errors` a changed cassette is allowed when the runs being rerun are the ones that
/// use it (fixing what made them fail is the point).
pub fn check_same_suite(
    c: &Continuing,
    fingerprint: &crate::runner::manifest::Fingerprint,
    plan: &SuitePlan,
    rerun: &[PlannedRun],
    cassettes_dir: &Path,
) -> Result<(), Problem> {
    let rerun_cassettes: BTreeSet<String> = rerun
        .iter()
        .map(|r| {
            r.cassette
                .strip_prefix(cassettes_dir)
                .unwrap_or(&r.cassette)
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let differences: Vec<Difference> = c
        .manifest
        .fingerprint
        .differences(fingerprint)
        .into_iter()
        .filter(|d| match (c.how, d.cassette()) {
            (Continuation::RerunErrors, Some(path)) => !rerun_cassettes.contains(path),
            _ => true,
        })
        .collect();
    let mut what: Vec<String> = differences.iter().map(ToString::to_string).collect();
    let keys = plan.keys();
    if keys != c.manifest.plan {
        let new = keys.iter().filter(|k| !c.manifest.plan.contains(k)).count();
        let gone = c.manifest.plan.iter().filter(|k| !keys.contains(k)).count();
        what.push(format!(
            "the plan differs ({new} run(s) not in the report's, {gone} of its runs not planned now)"
        ));
    }
    if what.is_empty() {
        return Ok(());
    }
    Err(Problem {
        message: format!(
            "{} was run with another suite: {}",
            c.dir.display(),
            what.join("; ")
        ),
        hint: match c.how {
            Continuation::Resume => "a report is completed only with the suite it was run with: \
                 undo the changes, or start a new report without `--resume` (to rerun the \
                 errored runs with fixed cassettes, use `--rerun-errors`)"
                .to_owned(),
            Continuation::RerunErrors => "only the cassettes of the errored runs may change: undo \
                 the other changes, or start a new report"
                .to_owned(),
        },
    })
}

/// The partition of this invocation: the flag's, else (continuing) the report's; a flag that is
/// not the report's is a problem.
pub fn partition(
    flag: Option<&str>,
    continuing: Option<&Continuing>,
) -> Result<Option<crate::runner::partition::Partition>, Problem> {
    let then = continuing.and_then(|c| c.manifest.partition.clone());
    let chosen = match (flag, &then) {
        (Some(f), Some(t)) if f != t => {
            return Err(Problem {
                message: format!(
                    "`--partition {f}` is not the report's partition (`--partition {t}`)"
                ),
                hint: "leave `--partition` out to resume the report's own shard".to_owned(),
            });
        }
        (Some(f), None) if continuing.is_some() => {
            return Err(Problem {
                message: format!("`--partition {f}`: the report is not a shard"),
                hint: "leave `--partition` out to complete the whole report".to_owned(),
            });
        }
        (Some(f), _) => Some(f.to_owned()),
        (None, t) => t.clone(),
    };
    chosen
        .map(|p| {
            p.parse()
                .map_err(|e: crate::runner::partition::PartitionError| Problem {
                    hint: e.hint().to_owned(),
                    message: e.to_string(),
                })
        })
        .transpose()
}

/// Installs the interrupt: the first Ctrl-C or SIGTERM cancels `stop` (the suite winds down and
/// writes its partial report), a second kills what the sandbox started and exits at once with
/// [`exit::INTERRUPTED`]. Needs a tokio runtime.
pub fn watch_signals(stop: CancellationToken, sandbox: Sandbox) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        super::warn("could not install the Ctrl-C handler; an interrupt ends the harness at once");
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

/// Removes the temporary folders of harness processes that are gone (a SIGKILL leaves them),
/// saying so unless `quiet`.
pub fn clean_stale_temp(quiet: bool) {
    let cleanup = crate::sandbox::stale::clean_stale(&std::env::temp_dir());
    if !cleanup.removed.is_empty() && !quiet {
        stderr!(
            "removed {} temporary folder(s) left by a harness that was killed (in {})",
            cleanup.removed.len(),
            std::env::temp_dir().display()
        );
    }
    for (path, e) in &cleanup.failed {
        super::warn(&format!(
            "could not remove {}, left by a harness that was killed: {e}",
            path.display()
        ));
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn args(argv: &[&str]) -> (RunArgs, Given) {
        #[derive(Parser)]
        struct Wrap {
            #[command(flatten)]
            run: RunArgs,
        }
        let mut full = vec!["harness"];
        full.extend_from_slice(argv);
        let matches = <Wrap as clap::CommandFactory>::command().get_matches_from(&full);
        let wrap = <Wrap as clap::FromArgMatches>::from_arg_matches(&matches).unwrap();
        (wrap.run, Given::of(Some(&matches)))
    }

    fn report_options() -> SuiteOptions {
        let (a, _) = args(&[
            "suite/tasks",
            "--epochs",
            "3",
            "--model",
            "anthropic/m",
            "--edit-strategy",
            "exact",
            "--tag",
            "py",
            "--sandbox",
            "none",
        ]);
        suite_options(
            &a,
            &super::super::run::model_selectors(&a.models, None).unwrap(),
            CassetteMode::Replay,
        )
    }

    #[test]
    fn a_resume_takes_the_reports_options_unless_given() {
        let then = report_options();
        let (mut a, given) = args(&["--resume", "r", "--jobs", "2"]);
        assert!(adopt(&mut a, &then, &given).is_empty());
        let models = super::super::run::model_selectors(&a.models, None).unwrap();
        let mode = cassettes::resolve_mode(a.cassette_mode, |_| None).unwrap();
        assert_eq!(suite_options(&a, &models, mode), then);
        assert_eq!(a.jobs, Some(2), "per-invocation flags stay");
        // Given and equal: fine; given and different: named.
        let (mut a, given) = args(&["--resume", "r", "--epochs", "3", "--model", "anthropic/m"]);
        assert!(adopt(&mut a, &then, &given).is_empty());
        let (mut a, given) = args(&["--resume", "r", "--epochs", "1", "--sandbox", "isolated"]);
        let problems: Vec<String> = adopt(&mut a, &then, &given)
            .into_iter()
            .map(|p| p.message)
            .collect();
        assert_eq!(
            problems,
            [
                "`--epochs 1` is not what the report was run with (`--epochs 3`)",
                "`--sandbox isolated` is not what the report was run with (`--sandbox none`)"
            ]
        );
    }

    #[test]
    fn the_partition_is_the_reports_unless_given_otherwise() {
        assert_eq!(partition(None, None).unwrap(), None);
        assert_eq!(
            partition(Some("hash:2/3"), None)
                .unwrap()
                .unwrap()
                .to_string(),
            "hash:2/3"
        );
        let err = partition(Some("hash:4/3"), None).unwrap_err();
        assert!(err.message.contains("from 1 to 3"), "{err:?}");
        assert!(err.hint.contains("hash:M/N"), "{err:?}");
    }
}
