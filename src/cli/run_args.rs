//! The arguments of `harness run` and `harness validate`, and how a continued report folder
//! supplies them: `--resume DIR` and `--rerun-errors DIR` take the folder's options for every
//! flag not given (and a given one must agree), so the same suite runs the same way.

use std::collections::BTreeSet;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::cassettes::{self, CassetteMode};
use crate::providers::catalog::ModelSelector;
use crate::runner::RunOptions;
use crate::runner::manifest::Manifest;
use crate::runner::manifest::SuiteOptions;
use crate::runner::problem::Problem;
use crate::runner::resume::{Continuation, Continuing};
use crate::sandbox::secrets;

/// Arguments of `harness run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The tasks folder (one sub-folder per task, each with task.yaml and repo/), or one task's
    /// folder: that task alone, under its suite's defaults.yaml and harness.yaml.
    #[arg(default_value = "tasks")]
    pub tasks: PathBuf,

    /// Model to run, as PROVIDER/MODEL, or MODEL with `--provider` (repeatable). Without it,
    /// replay runs every cassette recorded for each task.
    #[arg(long = "model", value_name = "PROVIDER/MODEL")]
    pub models: Vec<String>,

    /// Provider of `--model NAME` when NAME has no `PROVIDER/` prefix.
    #[arg(long, value_name = "PROVIDER")]
    pub provider: Option<String>,

    /// Where cassettes are read and written.
    #[arg(long, default_value = "cassettes")]
    pub cassettes: PathBuf,

    /// replay (default; never touches the network), record (live, write cassettes),
    /// auto (replay what exists, record what is missing; replay under CI), live (no cassette).
    #[arg(long = "cassette-mode", value_enum)]
    pub cassette_mode: Option<CassetteMode>,

    /// What a replay does when a request differs from its recording: stop (default; the run is
    /// `diverged`) or continue (answer with the recorded responses anyway, run the recorded
    /// actions against today's tools, and report the real outcome with every difference).
    #[arg(long = "on-divergence", value_enum, default_value = "stop")]
    pub on_divergence: cassettes::OnDivergence,

    /// Compare the run's deterministic outcome table with this committed snapshot: equal is
    /// success; different prints a diff and, locally, writes FILE.new for `harness review`
    /// (under CI nothing is written). A missing snapshot is proposed the same way.
    #[arg(long, value_name = "FILE")]
    pub snapshot: Option<PathBuf>,

    /// Shorthand for `--cassette-mode record`.
    #[arg(long, conflicts_with = "cassette_mode")]
    pub record: bool,

    /// Base URL of the provider (an OpenAI-compatible server, a local test server).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// Runs at once (default: the number of cores).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,

    /// Only tasks whose id matches this glob (repeatable).
    #[arg(long = "task", value_name = "GLOB")]
    pub task_globs: Vec<String>,

    /// Only tasks with this tag (repeatable: any of them).
    #[arg(long = "tag")]
    pub tags: Vec<String>,

    /// Keep each run's workspace instead of deleting it.
    #[arg(long)]
    pub keep_workspaces: bool,

    /// Edit matching strategy (see `harness edits strategies`); repeat it to run each strategy
    /// as an arm of its own, compared in the summary paired by task and epoch.
    #[arg(long = "edit-strategy", value_name = "STRATEGY", default_value = "pi")]
    pub edit_strategies: Vec<String>,

    /// Whose words the tools answer in: `pi-0.73` (today's Pi, the default), `pi-0.14` or
    /// `pi-0.7` (the versions that recorded the public Pi sessions), to replay a session under
    /// the tools that recorded it.
    /// Repeat it to run each profile as an arm of its own (with each edit strategy), compared
    /// in the summary paired by task and epoch like edit strategies.
    #[arg(long = "tool-profile", value_name = "PROFILE")]
    pub tool_profiles: Vec<String>,

    /// Run every task this many times per model.
    #[arg(long, default_value_t = 1)]
    pub epochs: u32,

    /// Where report folders are written.
    #[arg(long, default_value = "reports")]
    pub reports: PathBuf,

    /// Thinking / reasoning level sent to models that support it (default: none sent).
    #[arg(long, value_enum)]
    pub thinking: Option<crate::providers::ThinkingLevel>,

    /// Stop starting new runs once this many dollars are spent (priced models only).
    #[arg(long, value_name = "DOLLARS")]
    pub max_cost: Option<f64>,

    /// Run again the runs of this report folder that ended in an infrastructure error (a
    /// provider, cassette or setup failure; never the model's own errors), and complete the
    /// folder in place: runs that never finished (a killed or interrupted suite) run too, as
    /// with `--resume`, but the cassettes of the runs being run may have changed. The folder's
    /// options are used for every flag not given.
    #[arg(long, value_name = "REPORT_DIR", conflicts_with = "resume")]
    pub rerun_errors: Option<PathBuf>,

    /// Complete this report folder in place: run only what it is missing (runs that never
    /// finished, interrupted ones, infrastructure errors) with its plan and options, refusing
    /// if the suite (tasks, cassettes, harness version, options) changed since.
    #[arg(long, value_name = "REPORT_DIR")]
    pub resume: Option<PathBuf>,

    /// Run one shard of the plan: `hash:M/N` (every run of a task in shard M of N, by a fixed
    /// hash of the task id) or `count:M/N` (the sorted plan dealt out round-robin); M is
    /// 1-based. `harness merge` puts the shards' reports together.
    #[arg(long, value_name = "KIND:M/N")]
    pub partition: Option<String>,

    /// No progress on stderr but errors; the summary still goes to stdout.
    #[arg(long, short = 'q')]
    pub quiet: bool,

    /// How the agent's commands and tools are confined: isolated (bubblewrap: no network, own
    /// namespaces, only the workspace writable; the default where bubblewrap works), workspace
    /// (file tools kept inside the workspace) or none (Pi's behaviour).
    #[arg(long, value_enum, value_name = "TIER")]
    pub sandbox: Option<crate::sandbox::Tier>,
}

/// Arguments of `harness validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The tasks folder, or one task's folder.
    #[arg(default_value = "tasks")]
    pub tasks: PathBuf,

    /// Print the task format's JSON Schema instead.
    #[arg(long, conflicts_with = "oracle")]
    pub schema: bool,

    /// Also run every task with the oracle: its reference solution must pass its checks
    /// (`oracle/reference`), and the untouched fixture must fail them (`oracle/none`). Lists
    /// every task that does not hold, and exits 1 when there is one.
    #[arg(long)]
    pub oracle: bool,

    /// With `--oracle`: runs at once (default: the number of cores).
    #[arg(long, short = 'j', requires = "oracle")]
    pub jobs: Option<usize>,

    /// With `--oracle`: only tasks whose id matches this glob (repeatable).
    #[arg(long = "task", value_name = "GLOB", requires = "oracle")]
    pub task_globs: Vec<String>,

    /// With `--oracle`: how the runs' commands are confined (as `harness run --sandbox`).
    #[arg(long, value_enum, value_name = "TIER", requires = "oracle")]
    pub sandbox: Option<crate::sandbox::Tier>,

    /// With `--oracle`: no progress on stderr; the table still goes to stdout.
    #[arg(long, short = 'q', requires = "oracle")]
    pub quiet: bool,
}

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
        base_url: args.base_url.as_deref().map(secrets::masked_url),
        sandbox: args.sandbox.as_ref().map(name),
        max_cost: args.max_cost,
        tool_profiles: args.tool_profiles.clone(),
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

/// With `--resume` or `--rerun-errors`: reads the folder's manifest and makes `args` the
/// report's options (every plan option not given is the report's; a given one must be the
/// report's). `Ok(None)` for a fresh report.
pub fn continuing(args: &mut RunArgs, given: &Given) -> Result<Option<Continuing>, Vec<Problem>> {
    let (dir, how) = match (&args.resume, &args.rerun_errors) {
        (Some(dir), _) => (dir.clone(), Continuation::Resume),
        (None, Some(dir)) => (dir.clone(), Continuation::RerunErrors),
        (None, None) => return Ok(None),
    };
    let continuing = Continuing::open(&dir, how).map_err(|p| vec![p])?;
    let problems = adopt(args, &continuing.manifest.options, given);
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Some(continuing))
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
        let now: Vec<String> = model_selectors(&args.models, args.provider.as_deref())
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
        "tool_profiles",
        "--tool-profile",
        args.tool_profiles,
        then.tool_profiles.clone(),
        |v: &Vec<String>| list(v)
    );
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
    // The report keeps the base URL without its credentials (`masked_url`): one that had some
    // must be given again, and is compared as the report keeps it.
    let masked = |url: &Option<String>| url.as_deref().map(secrets::masked_url);
    if given.has("base_url") {
        if masked(&args.base_url) != then.base_url {
            differs(
                "--base-url",
                opt(&masked(&args.base_url)),
                opt(&then.base_url),
            );
        }
    } else if !then
        .base_url
        .as_deref()
        .is_some_and(|url| url.contains(secrets::REDACTED))
    {
        args.base_url = then.base_url.clone();
    }
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
    if !given.has("base_url")
        && let Some(url) = then
            .base_url
            .as_deref()
            .filter(|url| url.contains(secrets::REDACTED))
    {
        problems.push(Problem {
            message: format!(
                "the report was run with `--base-url {url}`, and does not keep its credentials"
            ),
            hint: "give `--base-url` again, with its credentials".to_owned(),
        });
    }
    problems
}

/// The run options the flags ask for (`models` and `mode` as resolved, the sandbox detected);
/// the catalog and the keys are the caller's to set.
pub fn run_options(
    args: &RunArgs,
    models: Vec<ModelSelector>,
    mode: CassetteMode,
    report_dir: PathBuf,
    sandbox: crate::sandbox::Sandbox,
) -> RunOptions {
    let mut options = RunOptions::with_sandbox(args.cassettes.clone(), report_dir, sandbox);
    options.tasks_dir = args.tasks.clone();
    options.models = models;
    options.mode = mode;
    options.on_divergence = args.on_divergence;
    options.ci = cassettes::ci_set(std::env::var("CI").ok().as_deref());
    if let Some(jobs) = args.jobs {
        options.jobs = jobs.max(1);
    }
    options.keep_workspaces = args.keep_workspaces;
    options.edit_strategies = args.edit_strategies.clone();
    options.base_url = args.base_url.clone();
    options.epochs = args.epochs.max(1);
    options.max_cost = args.max_cost;
    options.request.thinking = args.thinking;
    options.tool_profiles = args
        .tool_profiles
        .iter()
        .filter_map(|p| crate::tools::profile::ToolProfile::parse(p).ok())
        .collect();
    options
}

/// Where `harness.yaml` is looked for: the tasks folder (the suite's, when it names one task), then
/// the current folder.
pub(crate) fn config_candidates(tasks: &std::path::Path) -> Vec<PathBuf> {
    vec![
        crate::tasks::suite_dir_of(tasks).join("harness.yaml"),
        PathBuf::from("harness.yaml"),
    ]
}

/// Turns `--model` values into selectors: `PROVIDER/MODEL`, or `MODEL` with `--provider`.
pub(crate) fn model_selectors(
    models: &[String],
    provider: Option<&str>,
) -> Result<Vec<ModelSelector>, String> {
    models
        .iter()
        .map(|m| match provider {
            Some(p) if !m.contains('/') => format!("{p}/{m}").parse(),
            _ => m.parse(),
        })
        .collect()
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
            &model_selectors(&a.models, None).unwrap(),
            CassetteMode::Replay,
        )
    }

    #[test]
    fn a_resume_takes_the_reports_options_unless_given() {
        let then = report_options();
        let (mut a, given) = args(&["--resume", "r", "--jobs", "2"]);
        assert!(adopt(&mut a, &then, &given).is_empty());
        let models = model_selectors(&a.models, None).unwrap();
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
}
