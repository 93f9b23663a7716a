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

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

use crate::cassettes::CassettePlan;
use crate::providers::catalog::{Catalog, CatalogError, ModelSelector};
use crate::runner::{PlannedRun, RunOptions};
use crate::tools::edit;

use super::run::RunArgs;

/// The most runs `--jobs` may keep in progress at once.
pub const MAX_JOBS: usize = 4096;

/// The most repetitions `--epochs` may ask for.
pub const MAX_EPOCHS: u32 = 10_000;

/// One thing wrong with the invocation: what, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The `error:` line, without the prefix.
    pub message: String,
    /// The `hint:` line, without the prefix.
    pub hint: String,
}

impl Problem {
    fn new(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Problem {
            message: message.into(),
            hint: hint.into(),
        }
    }
}

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
    let mut named: Vec<&str> = args.provider.iter().map(String::as_str).collect();
    named.extend(models.iter().map(|m| m.provider.as_str()));
    named.sort_unstable();
    named.dedup();
    for name in named {
        if let Err(e) = catalog.provider(name) {
            problems.push(Problem::new(e.to_string(), unknown_provider_hint()));
        }
    }
    if let Some(url) = &args.base_url {
        if let Err(why) = check_url(url) {
            problems.push(Problem::new(
                format!("`--base-url {url}` is not an http(s) URL: {why}"),
                "give the scheme and the host, for example `--base-url http://127.0.0.1:8000/v1`",
            ));
        }
    }
    let file = config.map_or_else(
        || "the provider catalog".to_owned(),
        |p| p.display().to_string(),
    );
    for entry in &catalog.providers {
        let place = format!("{file}: provider `{}`", entry.name);
        if let Err(why) = check_url(&entry.base_url) {
            problems.push(Problem::new(
                format!(
                    "{place}: base_url `{}` is not an http(s) URL: {why}",
                    entry.base_url
                ),
                "give the scheme and the host, for example `base_url: http://127.0.0.1:8000/v1`",
            ));
        }
        for (model, config) in &entry.models {
            let Some(price) = config.price else { continue };
            let fields = [
                ("input", price.input),
                ("output", price.output),
                ("cache_read", price.cache_read),
                ("cache_write", price.cache_write),
            ];
            for (field, value) in fields {
                if !value.is_finite() || value < 0.0 {
                    problems.push(Problem::new(
                        format!(
                            "{place}: model `{model}`: price `{field}: {value}` is not a price"
                        ),
                        "prices are dollars per million tokens: a finite amount of 0 or more",
                    ));
                }
            }
        }
        for (name, value) in &entry.headers {
            if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
                problems.push(Problem::new(
                    format!("{place}: `{name}` is not a valid HTTP header name"),
                    "header names are ASCII letters, digits and `-` (for example `x-team`)",
                ));
            } else if reqwest::header::HeaderValue::from_str(value).is_err() {
                // The value is not shown: headers often carry credentials.
                problems.push(Problem::new(
                    format!(
                        "{place}: the value of header `{name}` is not a valid HTTP header value"
                    ),
                    "header values are visible ASCII characters and spaces, without line breaks",
                ));
            }
        }
    }
    problems
}

/// The key of every provider that a planned run will call (`record`, `live` and `rerecord`
/// modes, and `auto` for tasks with no cassette yet), looked up as the runner looks it up (`options.key_env`):
/// one problem per provider without one, or per provider the catalog does not know.
pub fn check_keys(options: &RunOptions, planned: &[PlannedRun]) -> Vec<Problem> {
    // Provider -> (runs that call it, the first error resolving it).
    let mut calling: BTreeMap<&str, (usize, Option<CatalogError>)> = BTreeMap::new();
    for run in planned {
        match options.mode.plan(run.cassette.exists()) {
            CassettePlan::Replay => continue,
            // Under CI a re-recording only replays and says what it would re-record.
            CassettePlan::Rerecord if options.ci => continue,
            _ => {}
        }
        let slot = calling.entry(&run.model.provider).or_insert((0, None));
        slot.0 += 1;
        if slot.1.is_none() {
            slot.1 = options
                .catalog
                .resolve(
                    &run.model,
                    options.base_url.as_deref(),
                    true,
                    &*options.key_env,
                )
                .err();
        }
    }
    let mode = format!("{:?}", options.mode).to_lowercase();
    calling
        .into_values()
        .filter_map(|(runs, error)| {
            let error = error?;
            let hint = match &error {
                CatalogError::MissingKey { vars, .. } => format!(
                    "export {} (it never reaches the agent, reports or cassettes), or run from \
                     the cassettes with `--cassette-mode replay`",
                    vars.split(" or ").next().unwrap_or(vars)
                ),
                CatalogError::UnknownProvider { .. } => unknown_provider_hint().to_owned(),
                CatalogError::Config { .. } => "see the README's provider section".to_owned(),
            };
            let calls = if runs == 1 { "run calls" } else { "runs call" };
            Some(Problem::new(
                format!("{error} ({runs} {calls} the provider in {mode} mode)"),
                hint,
            ))
        })
        .collect()
}

/// Prints every problem as `error: …` / `hint: …` and returns the usage exit code (2).
pub fn report(problems: &[Problem]) -> ExitCode {
    let mut code = ExitCode::from(super::exit::USAGE);
    for p in problems {
        code = super::usage_error(&p.message, &p.hint);
    }
    code
}

fn unknown_provider_hint() -> &'static str {
    "use one of the known providers, or define it under `providers:` in harness.yaml \
     (see the README's provider section)"
}

/// Whether `url` can be a provider's base URL: it parses, its scheme is http or https, it names
/// a host.
fn check_url(url: &str) -> Result<(), String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("the scheme is `{}`", parsed.scheme()));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err("it names no host".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_need_an_http_scheme_and_a_host() {
        assert_eq!(check_url("http://127.0.0.1:8000/v1"), Ok(()));
        assert_eq!(check_url("https://api.anthropic.com"), Ok(()));
        assert_eq!(
            check_url("localhost:8000"),
            Err("the scheme is `localhost`".to_owned())
        );
        assert_eq!(
            check_url("127.0.0.1:8000"),
            Err("relative URL without a base".to_owned())
        );
        assert!(check_url("http://").is_err());
        assert!(check_url("ftp://host/x").is_err());
    }
}
