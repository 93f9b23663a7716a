//! The checks `harness run` makes before its first run starts: every flag, every provider named
//! on the command line, the key of every provider a run will call, every base URL, header and
//! price of `harness.yaml`. Each problem is one `error:` line and one `hint:` line, all of them
//! at once, and the command exits 2 without starting anything, instead of failing every run the
//! same way after it has started (and after other runs have spent money).
//!
//! The runner keeps its own checks as a backstop (a run with a missing key is still an `error`
//! run, never a panic); these only make sure that, from the command line, it never gets there.
//! Depends on the CLI's arguments, the provider catalog, the edit strategies and the runner's
//! plan; prints nothing itself except through [`report`].

use std::path::Path;
use std::process::ExitCode;

use crate::providers::catalog::{Catalog, ModelSelector};
use crate::providers::oracle;
pub use crate::runner::problem::Problem;
use crate::tools::edit;

use super::run_args::RunArgs;

/// The most runs `--jobs` may keep in progress at once.
pub const MAX_JOBS: usize = 4096;

/// The most repetitions `--epochs` may ask for.
pub const MAX_EPOCHS: u32 = 10_000;

/// Everything wrong with the flags, the providers the command line names (`models`, parsed from
/// `--model` and `--provider`), and the providers of `catalog` (`config`: the `harness.yaml` it
/// was read from, to name it). Needs no plan, so it runs before anything is planned.
pub fn check_flags(
    args: &RunArgs,
    catalog: &Catalog,
    models: &[ModelSelector],
    config: Option<&Path>,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    match args.jobs {
        Some(0) => problems.push(Problem::new(
            "`--jobs 0` would run nothing",
            format!("pass `--jobs N` with N from 1 to {MAX_JOBS}, or leave it out (one per core)"),
        )),
        Some(n) if n > MAX_JOBS => problems.push(Problem::new(
            format!("`--jobs {n}` is more runs at once than the harness allows ({MAX_JOBS})"),
            format!("pass `--jobs N` with N from 1 to {MAX_JOBS}"),
        )),
        _ => {}
    }
    if args.epochs == 0 || args.epochs > MAX_EPOCHS {
        problems.push(Problem::new(
            format!("`--epochs {}` is out of range", args.epochs),
            format!("pass `--epochs N` with N from 1 to {MAX_EPOCHS} (default 1)"),
        ));
    }
    if let Some(cost) = args.max_cost {
        if !cost.is_finite() || cost < 0.0 {
            problems.push(Problem::new(
                format!("`--max-cost {cost}` is not an amount of dollars"),
                "pass a finite amount of 0 or more, for example `--max-cost 5`",
            ));
        }
    }
    if let Some(partition) = &args.partition {
        if let Err(e) = partition.parse::<crate::runner::partition::Partition>() {
            problems.push(Problem::new(e.to_string(), e.hint()));
        }
    }
    for strategy in &args.edit_strategies {
        if let Err(e) = edit::parse_strategy(strategy) {
            problems.push(Problem::new(e.to_string(), e.hint()));
        }
    }
    for profile in &args.tool_profiles {
        if let Err(e) = crate::tools::profile::ToolProfile::parse(profile) {
            problems.push(Problem::new(
                e,
                "`--tool-profile pi-0.73` is today's tools; see the README's profiles",
            ));
        }
    }
    let mut named: Vec<&str> = args.provider.iter().map(String::as_str).collect();
    named.extend(models.iter().map(|m| m.provider.as_str()));
    named.sort_unstable();
    named.dedup();
    for name in named {
        if let Err(e) = catalog.provider(name) {
            problems.push(Problem::new(
                e.to_string(),
                crate::runner::preflight::unknown_provider_hint(),
            ));
        }
    }
    for model in models.iter().filter(|m| oracle::is_oracle(&m.provider)) {
        if let Err(e) = oracle::check_model(&model.model) {
            problems.push(Problem::new(
                e.to_string(),
                "`harness validate --oracle TASKS` runs both oracle models on every task",
            ));
        }
    }
    if let Some(url) = &args.base_url {
        if let Err(why) = crate::runner::preflight::check_url(url) {
            problems.push(Problem::new(
                format!(
                    "`--base-url {}` is not an http(s) URL: {why}",
                    crate::sandbox::secrets::masked_url(url)
                ),
                "give the scheme and the host, for example `--base-url http://127.0.0.1:8000/v1`",
            ));
        }
    }
    problems.extend(crate::runner::preflight::check_catalog(catalog, config));
    problems
}

/// Prints every problem as `error: …` / `hint: …` and returns the usage exit code (2).
pub fn report(problems: &[Problem]) -> ExitCode {
    let mut code = ExitCode::from(super::exit::USAGE);
    for p in problems {
        code = super::printer::usage_error(&p.message, &p.hint);
    }
    code
}
