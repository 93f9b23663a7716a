//! The environment of the agent's commands (bash calls and checks), built from an allow-list,
//! never from the host's environment minus a deny-list:
//!
//! * from the host: `PATH`, `LANG`, `LC_ALL`, `TERM` (when set), and where toolchain managers
//!   keep their toolchains ([`TOOLCHAIN_HOMES`]: `RUSTUP_HOME`, `CARGO_HOME`, `PYENV_ROOT`,
//!   `NVM_DIR`, each defaulting to its folder in the host's home when that exists, since `HOME`
//!   changes and rustup's `cargo` or pyenv's `python3` shims would otherwise find no toolchain;
//!   and `RUSTUP_TOOLCHAIN`, `PYENV_VERSION` when set);
//! * set by the harness: `PYTHONDONTWRITEBYTECODE=1` (Python's bytecode cache compares source
//!   mtimes in whole seconds, so an edit of the same size within a second of a test run would
//!   run the stale code);
//! * per run: `HOME` and `TMPDIR`, fresh folders of the run (see [`super::Scratch`]);
//! * what the task declares (`env:` in `task.yaml`), last, so a task may override `PATH`.
//!
//! Depends on nothing else in the crate.

use std::path::Path;

/// Variables passed through from the host when set.
pub const PASSED_THROUGH: [&str; 6] = [
    "PATH",
    "LANG",
    "LC_ALL",
    "TERM",
    "RUSTUP_TOOLCHAIN",
    "PYENV_VERSION",
];

/// Toolchain managers' home variables and their default folder under the host's home.
pub const TOOLCHAIN_HOMES: [(&str, &str); 4] = [
    ("RUSTUP_HOME", ".rustup"),
    ("CARGO_HOME", ".cargo"),
    ("PYENV_ROOT", ".pyenv"),
    ("NVM_DIR", ".nvm"),
];

/// Variables a task may not declare: the harness sets them per run.
pub const RESERVED: [&str; 3] = ["HOME", "TMPDIR", super::process::TAG_VAR];

/// `PATH` when the host has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The allow-listed part of the host environment `host`, with `HOME` and `TMPDIR` of the host
/// (the runner replaces both per run; `harness tool` keeps them).
pub fn base_env(host: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
    let host: Vec<(String, String)> = host.into_iter().collect();
    let get = |name: &str| {
        host.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let mut env: Vec<(String, String)> = Vec::new();
    for name in PASSED_THROUGH {
        match get(name) {
            Some(v) => env.push((name.to_owned(), v)),
            None if name == "PATH" => env.push(("PATH".to_owned(), DEFAULT_PATH.to_owned())),
            None => {}
        }
    }
    env.push(("PYTHONDONTWRITEBYTECODE".to_owned(), "1".to_owned()));
    let home = get("HOME");
    for (name, dir) in TOOLCHAIN_HOMES {
        let value = get(name).or_else(|| {
            let home = home.as_ref()?;
            let candidate = Path::new(home).join(dir);
            candidate
                .is_dir()
                .then(|| candidate.to_string_lossy().into_owned())
        });
        if let Some(v) = value {
            env.push((name.to_owned(), v));
        }
    }
    for name in ["HOME", "TMPDIR"] {
        if let Some(v) = get(name) {
            env.push((name.to_owned(), v));
        }
    }
    env
}

/// The environment of one run's commands: `base` with `HOME` and `TMPDIR` set to the run's
/// folders, then the task's `declared` variables.
pub fn run_env(
    base: &[(String, String)],
    home: &Path,
    tmp: &Path,
    declared: &[(String, String)],
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = base
        .iter()
        .filter(|(k, _)| k != "HOME" && k != "TMPDIR")
        .cloned()
        .collect();
    env.push(("HOME".to_owned(), home.to_string_lossy().into_owned()));
    env.push(("TMPDIR".to_owned(), tmp.to_string_lossy().into_owned()));
    for (k, v) in declared {
        env.retain(|(existing, _)| existing != k);
        env.push((k.clone(), v.clone()));
    }
    env
}

/// Whether `name` is a valid variable name for a task to declare (`[A-Za-z_][A-Za-z0-9_]*`).
pub fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn only_the_allow_list_passes() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".cargo")).unwrap();
        let host = vars(&[
            ("PATH", "/bin"),
            ("HOME", &home.path().to_string_lossy()),
            ("ANTHROPIC_API_KEY", "sk-ant-x"),
            ("DATABASE_URL", "postgres://u:p@h/db"),
            ("SOMETHING_ELSE", "1"),
            ("TERM", "xterm"),
        ]);
        let env = base_env(host);
        let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "PATH",
                "TERM",
                "PYTHONDONTWRITEBYTECODE",
                "CARGO_HOME",
                "HOME"
            ]
        );
        assert_eq!(
            env[3].1,
            home.path().join(".cargo").to_string_lossy().into_owned()
        );
    }

    #[test]
    fn run_env_sets_home_and_tmpdir_and_the_task_has_the_last_word() {
        let base = vars(&[("PATH", "/bin"), ("HOME", "/root"), ("LANG", "C.UTF-8")]);
        let env = run_env(
            &base,
            Path::new("/r/home"),
            Path::new("/r/tmp"),
            &vars(&[("PATH", "/opt/bin:/bin"), ("PYTHONHASHSEED", "0")]),
        );
        assert_eq!(
            env,
            vars(&[
                ("LANG", "C.UTF-8"),
                ("HOME", "/r/home"),
                ("TMPDIR", "/r/tmp"),
                ("PATH", "/opt/bin:/bin"),
                ("PYTHONHASHSEED", "0"),
            ])
        );
    }

    #[test]
    fn names() {
        assert!(is_valid_name("PYTHONHASHSEED"));
        assert!(is_valid_name("_x1"));
        assert!(!is_valid_name("1X"));
        assert!(!is_valid_name("A-B"));
        assert!(!is_valid_name(""));
    }
}
