//! The checks a suite's runner makes before its first run starts: every base URL, header and
//! price of the provider catalog (`harness.yaml`), the key of every provider a planned run
//! will call, and what each task's checks need on the machine (`requires:`: programs, Python
//! modules, files). Each problem is one [`Problem`], all of them at once, so nothing starts (and
//! spends money) only to fail every run the same way. A missing requirement does not stop the
//! suite: its tasks are skipped with the reason, and the rest run.
//!
//! The runs keep their own checks as a backstop (a run with a missing key is still an `error`
//! run, never a panic). Depends on the provider catalog and the plan; prints nothing.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cassettes::CassettePlan;
use crate::providers::catalog::{Catalog, CatalogError};
use crate::tasks::Task;

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
                    crate::sandbox::secrets::masked_url(&entry.base_url)
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

/// Tasks whose `requires:` is not met on this machine, found before the first run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnmetRequirements {
    /// Task id -> why its runs are skipped (`needs \`go\`, which is not on PATH; ...`).
    pub skipped: BTreeMap<String, String>,
    /// One line per missing thing, with the tasks that need it and what to install, for the
    /// user to read before the runs start.
    pub missing: Vec<Problem>,
}

/// One thing a task needs that the machine lacks.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Missing {
    Program(String),
    PythonModule(String),
    File(PathBuf),
}

impl Missing {
    fn what(&self) -> String {
        match self {
            Missing::Program(name) => format!("`{name}`, which is not on PATH"),
            Missing::PythonModule(name) => {
                format!("the Python module `{name}`, which `python3` cannot import")
            }
            Missing::File(path) => format!("{}, which does not exist", path.display()),
        }
    }

    /// The built-in advice: what to install.
    fn advice(&self) -> String {
        match self {
            Missing::Program(name) => install_hint(name),
            Missing::PythonModule(name) => format!("install it: `python3 -m pip install {name}`"),
            Missing::File(_) => "create it (the task's `requires.files` names it)".to_owned(),
        }
    }
}

/// What to install for a program the recipes of `harness import` use.
fn install_hint(program: &str) -> String {
    let base = Path::new(program)
        .file_name()
        .map_or_else(|| program.to_owned(), |n| n.to_string_lossy().into_owned());
    let what = match base.as_str() {
        "cargo" | "rustc" => "install Rust with rustup (https://rustup.rs)",
        "go" => "install Go (Debian: `apt-get install golang-go`)",
        "node" | "npm" | "npx" => "install Node.js and npm (Debian: `apt-get install nodejs npm`)",
        "cmake" => "install CMake (Debian: `apt-get install cmake`)",
        "make" => "install make (Debian: `apt-get install make`)",
        "g++" | "c++" | "gcc" | "cc" => "install a C++ compiler (Debian: `apt-get install g++`)",
        "java" | "javac" => "install a JDK (Debian: `apt-get install default-jdk-headless`)",
        "python3" | "python" => "install Python 3 (Debian: `apt-get install python3`)",
        _ => return format!("install `{program}` or put it on PATH"),
    };
    what.to_owned()
}

/// Looks up what every task of `tasks` requires (`requires:` of `task.yaml`): programs on the
/// `PATH` its checks get (`path`, or the task's own `PATH` in `env:`), modules `python3`
/// imports, files. Each lookup is made once however many tasks share it.
pub fn check_requirements(tasks: &[Arc<Task>], path: Option<OsString>) -> UnmetRequirements {
    let mut programs: BTreeMap<(String, Option<String>), bool> = BTreeMap::new();
    let mut modules: BTreeMap<(String, Option<String>), bool> = BTreeMap::new();
    // Missing thing -> (tasks needing it, the first task's own hint).
    let mut by_missing: BTreeMap<Missing, (Vec<String>, Option<String>)> = BTreeMap::new();
    let mut out = UnmetRequirements::default();
    let mut seen = std::collections::BTreeSet::new();
    for task in tasks {
        if task.requires.is_empty() || !seen.insert(task.id.clone()) {
            continue;
        }
        let own_path = task
            .env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone());
        let search = own_path
            .clone()
            .map(OsString::from)
            .or_else(|| path.clone())
            .unwrap_or_default();
        let mut missing = Vec::new();
        for program in &task.requires.programs {
            let found = *programs
                .entry((program.clone(), own_path.clone()))
                .or_insert_with(|| find_program(program, &search).is_some());
            if !found {
                missing.push(Missing::Program(program.clone()));
            }
        }
        for module in &task.requires.python_modules {
            let found = *modules
                .entry((module.clone(), own_path.clone()))
                .or_insert_with(|| python_imports(module, &search));
            if !found {
                missing.push(Missing::PythonModule(module.clone()));
            }
        }
        for file in &task.requires.files {
            let full = task.dir.join(file);
            if !full.exists() {
                missing.push(Missing::File(full));
            }
        }
        if missing.is_empty() {
            continue;
        }
        let reason = missing
            .iter()
            .map(|m| {
                let hint = task.requires.hint.clone().unwrap_or_else(|| m.advice());
                format!("needs {} ({hint})", m.what())
            })
            .collect::<Vec<_>>()
            .join("; ");
        out.skipped
            .insert(task.id.clone(), format!("not started: {reason}"));
        for m in missing {
            let slot = by_missing
                .entry(m)
                .or_insert_with(|| (Vec::new(), task.requires.hint.clone()));
            slot.0.push(task.id.clone());
        }
    }
    for (missing, (ids, hint)) in by_missing {
        let n = ids.len();
        let shown: Vec<&str> = ids.iter().take(5).map(String::as_str).collect();
        let more = if n > shown.len() {
            format!(", and {} more", n - shown.len())
        } else {
            String::new()
        };
        let tasks = if n == 1 { "task needs" } else { "tasks need" };
        out.missing.push(Problem::new(
            format!(
                "{n} {tasks} {}: skipped ({}{more})",
                missing.what(),
                shown.join(", ")
            ),
            hint.unwrap_or_else(|| missing.advice()),
        ));
    }
    out
}

/// `program` on `path` (or the path itself when it has a `/`), when it is an executable file.
pub fn find_program(program: &str, path: &std::ffi::OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    std::env::split_paths(path)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}

/// Whether the `python3` on `path` can import `module` (found without running it).
fn python_imports(module: &str, path: &std::ffi::OsStr) -> bool {
    let Some(python) = find_program("python3", path) else {
        return false;
    };
    std::process::Command::new(python)
        .args([
            "-c",
            "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec(sys.argv[1]) else 1)",
            module,
        ])
        .env("PATH", path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
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

    fn task(id: &str, dir: &Path, requires: crate::tasks::Requires) -> Arc<Task> {
        Arc::new(Task {
            requires,
            ..Task::bare(id, dir)
        })
    }

    #[test]
    fn missing_programs_modules_and_files_skip_their_tasks_with_what_to_install() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("here"), "#!/bin/sh\n").unwrap();
        std::fs::write(bin.join("not-executable"), "").unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(bin.join("here"), std::fs::Permissions::from_mode(0o755))
                .unwrap();
        }
        std::fs::write(dir.path().join("present.txt"), "").unwrap();
        let req = |programs: &[&str], files: &[&str], hint: Option<&str>| crate::tasks::Requires {
            programs: programs.iter().map(|s| s.to_string()).collect(),
            files: files.iter().map(|s| s.to_string()).collect(),
            hint: hint.map(str::to_owned),
            ..Default::default()
        };
        let tasks = vec![
            task("ok", dir.path(), req(&["here"], &["present.txt"], None)),
            task("go-a", dir.path(), req(&["here", "go"], &[], None)),
            task("go-b", dir.path(), req(&["go"], &[], None)),
            task("noexec", dir.path(), req(&["not-executable"], &[], None)),
            task(
                "js",
                dir.path(),
                req(&[], &["deps/node_modules"], Some("run npm install")),
            ),
        ];
        let unmet = check_requirements(&tasks, Some(bin.clone().into_os_string()));
        assert_eq!(
            unmet.skipped.keys().collect::<Vec<_>>(),
            ["go-a", "go-b", "js", "noexec"]
        );
        assert_eq!(
            unmet.skipped["go-b"],
            "not started: needs `go`, which is not on PATH (install Go (Debian: `apt-get install golang-go`))"
        );
        let js = dir.path().join("deps/node_modules");
        assert_eq!(
            unmet.skipped["js"],
            format!(
                "not started: needs {}, which does not exist (run npm install)",
                js.display()
            )
        );
        assert_eq!(
            unmet.missing,
            vec![
                Problem::new(
                    "2 tasks need `go`, which is not on PATH: skipped (go-a, go-b)",
                    "install Go (Debian: `apt-get install golang-go`)"
                ),
                Problem::new(
                    "1 task needs `not-executable`, which is not on PATH: skipped (noexec)",
                    "install `not-executable` or put it on PATH"
                ),
                Problem::new(
                    format!(
                        "1 task needs {}, which does not exist: skipped (js)",
                        js.display()
                    ),
                    "run npm install"
                ),
            ]
        );
    }

    #[test]
    fn python_modules_are_looked_up_with_the_python3_on_path() {
        let Some(host) = std::env::var_os("PATH") else {
            return;
        };
        if find_program("python3", &host).is_none() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let req = crate::tasks::Requires {
            python_modules: vec!["json".into(), "no_such_module_for_harness".into()],
            ..Default::default()
        };
        let unmet = check_requirements(&[task("py", dir.path(), req)], Some(host));
        assert_eq!(
            unmet.skipped["py"],
            "not started: needs the Python module `no_such_module_for_harness`, which `python3` \
             cannot import (install it: `python3 -m pip install no_such_module_for_harness`)"
        );
    }

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
