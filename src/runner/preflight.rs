//! The checks a suite's runner makes before its first run starts: every base URL, header and
//! price of the provider catalog (`harness.yaml`), and the key of every provider a planned run
//! will call. Each problem is one [`Problem`], all of them at once, so nothing starts (and
//! spends money) only to fail every run the same way.
//!
//! The runs keep their own checks as a backstop (a run with a missing key is still an `error`
//! run, never a panic). Depends on the provider catalog and the plan; prints nothing.

use std::collections::BTreeMap;
use std::path::Path;

use crate::cassettes::CassettePlan;
use crate::providers::catalog::{Catalog, CatalogError};

use super::options::RunOptions;
use super::plan::PlannedRun;
use super::problem::Problem;

/// Everything wrong with the providers of `catalog` (`config`: the `harness.yaml` it was read
/// from, to name it): base URLs, prices, header names and values.
pub fn check_catalog(catalog: &Catalog, config: Option<&Path>) -> Vec<Problem> {
    let mut problems = Vec::new();
    let file = config.map_or_else(
        || "the provider catalog".to_owned(),
        |p| p.display().to_string(),
    );
    for entry in &catalog.providers {
        if crate::providers::oracle::is_oracle(&entry.name) {
            // In-process: no URL, header or price of its own to check.
            continue;
        }
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

/// What to do about a provider the catalog does not know.
pub fn unknown_provider_hint() -> &'static str {
    "use one of the known providers, or define it under `providers:` in harness.yaml \
     (see the README's provider section)"
}

/// Whether `url` can be a provider's base URL: it parses, its scheme is http or https, it names
/// a host.
pub fn check_url(url: &str) -> Result<(), String> {
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
