//! `harness import exercism`: the practice exercises of Exercism tracks as harness tasks.
//!
//! A track (`exercism/python`, ...) keeps its exercises in `exercises/practice/<exercise>/`; the
//! aider polyglot benchmark keeps six tracks side by side (`<language>/exercises/practice/...`).
//! An exercise has `.docs/instructions.md` (and maybe `instructions.append.md`), stub files, tests,
//! build files, and `.meta/config.json` naming its solution, test and example (reference) files.
//! Each becomes the task `<language>-<exercise>`, tagged `[<language>, exercism]`:
//!
//! * `repo/`: the exercise without `.meta/` (and without `.approaches/` and `.articles/`,
//!   which discuss solutions), its tests switched on ([`recipes::enable_tests`]);
//! * `solution/`: the reference solution, laid over the fixture at the solution files' paths;
//! * `task.yaml`: the prompt ([`prompt`]), the language's test command ([`recipes`]), a check
//!   that the tests are unchanged (their SHA-256), and what the command needs (`requires:`).
//!
//! The JavaScript exercises share one dependency install, `<into>/_exercism/javascript/`
//! (`npm install` at import time; their checks link to it, so they run offline).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::prompt::{self, PromptParts};
use super::recipes::{self, ExerciseFacts, Language};
use super::tree::{self, OutFile, Tree, TreeChange};
use super::{ImportError, ImportSummary, Skipped};
use crate::tasks::Requires;

/// What to import and how.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// A track root, or the root of the polyglot benchmark.
    pub source: PathBuf,
    /// The tasks folder to write into.
    pub into: PathBuf,
    /// Only these tracks (slugs); all when empty.
    pub languages: Vec<String>,
    /// Only exercises whose slug matches one of these globs; all when empty.
    pub exercises: Vec<String>,
    /// The prompt template; the built-in one when `None`.
    pub template: Option<String>,
    /// Run `npm install` for the JavaScript exercises' shared install when it is missing or
    /// out of date.
    pub install: bool,
}

/// The folders of an exercise left out of the fixture.
const NOT_IN_FIXTURE: [&str; 4] = [".meta", ".approaches", ".articles", "node_modules"];

/// One track found under the source folder.
#[derive(Debug, Clone)]
struct Track {
    slug: String,
    /// `<track>/exercises/practice`.
    practice: PathBuf,
}

/// `.meta/config.json`, the part the import reads.
#[derive(Debug, Deserialize)]
struct Config {
    files: ConfigFiles,
}

#[derive(Debug, Deserialize)]
struct ConfigFiles {
    #[serde(default)]
    solution: Vec<String>,
    #[serde(default)]
    test: Vec<String>,
    #[serde(default)]
    example: Vec<String>,
    /// Files the student may read but not change (Go's `cases_test.go`).
    #[serde(default)]
    editor: Vec<String>,
}

/// `task.yaml` as the import writes it.
#[derive(Debug, Serialize)]
struct TaskYaml<'a> {
    id: &'a str,
    prompt: &'a str,
    checks: Vec<CheckYaml>,
    tags: Vec<&'a str>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    env: BTreeMap<String, String>,
    requires: &'a Requires,
}

#[derive(Debug, Serialize)]
struct CheckYaml {
    name: String,
    run: String,
}

/// Imports every exercise of `options.source` into `options.into`.
pub fn import(options: &ImportOptions) -> Result<ImportSummary, ImportError> {
    let template = options
        .template
        .clone()
        .unwrap_or_else(|| prompt::DEFAULT_TEMPLATE.to_owned());
    let globs = exercise_globs(&options.exercises)?;
    let tracks = find_tracks(&options.source)?;
    std::fs::create_dir_all(&options.into).map_err(|source| ImportError::Write {
        path: options.into.clone(),
        source,
    })?;
    let into = options
        .into
        .canonicalize()
        .map_err(|source| ImportError::Read {
            path: options.into.clone(),
            source,
        })?;
    let mut summary = ImportSummary::default();
    for slug in &options.languages {
        if !tracks.iter().any(|t| &t.slug == slug) {
            summary.notes.push(format!(
                "--language {slug}: no such track in {} (found: {})",
                options.source.display(),
                tracks
                    .iter()
                    .map(|t| t.slug.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    for track in &tracks {
        if !options.languages.is_empty() && !options.languages.contains(&track.slug) {
            continue;
        }
        let exercises = list_dirs(&track.practice)?;
        let exercises: Vec<PathBuf> = exercises
            .into_iter()
            .filter(|dir| {
                let name = dir.file_name().unwrap_or_default().to_string_lossy();
                globs.as_ref().is_none_or(|g| g.is_match(name.as_ref()))
            })
            .collect();
        let Some(language) = Language::from_track(&track.slug) else {
            for dir in exercises {
                summary.skipped.push(Skipped {
                    path: dir,
                    reason: format!(
                        "unknown language `{}` (the track folder's name); harness has recipes for {}",
                        track.slug,
                        Language::known()
                    ),
                });
            }
            continue;
        };
        let node_modules = if language == Language::JavaScript && !exercises.is_empty() {
            Some(shared_node_install(
                &into,
                &exercises,
                options.install,
                &mut summary,
            )?)
        } else {
            None
        };
        for dir in exercises {
            let slug = dir
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let built = build_task(
                language,
                &slug,
                &dir,
                &options.source,
                &template,
                node_modules.as_deref(),
            );
            let (id, task) = match built {
                Ok(built) => built,
                Err(skip) => {
                    summary.skipped.push(skip);
                    continue;
                }
            };
            if language == Language::Rust && options.install {
                fetch_crates(&id, &task, &mut summary);
            }
            let folder = into.join(&id);
            let written =
                tree::write_tree(&folder, &task).map_err(|source| ImportError::Write {
                    path: folder.clone(),
                    source,
                })?;
            match written {
                TreeChange::New => summary.new.push(id),
                TreeChange::Updated(files) => summary.updated.push((id, files)),
                TreeChange::Unchanged => summary.unchanged.push(id),
            }
            summary.count(language.slug());
        }
    }
    Ok(summary)
}

fn exercise_globs(patterns: &[String]) -> Result<Option<globset::GlobSet>, ImportError> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut builder = globset::GlobSetBuilder::new();
    for pattern in patterns {
        let glob = globset::Glob::new(pattern).map_err(|source| ImportError::Glob {
            pattern: pattern.clone(),
            source,
        })?;
        builder.add(glob);
    }
    builder
        .build()
        .map(Some)
        .map_err(|source| ImportError::Glob {
            pattern: patterns.join(","),
            source,
        })
}

/// The tracks under `source`: itself when it has `exercises/practice/`, else each subfolder
/// that has one (the polyglot benchmark).
fn find_tracks(source: &Path) -> Result<Vec<Track>, ImportError> {
    if !source.is_dir() {
        return Err(ImportError::Read {
            path: source.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "not a folder"),
        });
    }
    let practice = source.join("exercises/practice");
    if practice.is_dir() {
        return Ok(vec![Track {
            slug: track_slug(source),
            practice,
        }]);
    }
    let tracks: Vec<Track> = list_dirs(source)?
        .into_iter()
        .filter(|dir| dir.join("exercises/practice").is_dir())
        .map(|dir| Track {
            slug: track_slug(&dir),
            practice: dir.join("exercises/practice"),
        })
        .collect();
    if tracks.is_empty() {
        return Err(ImportError::NoExercises {
            path: source.to_path_buf(),
        });
    }
    Ok(tracks)
}

/// A track's slug: `slug` of its `config.json` when it has one, else its folder's name.
fn track_slug(dir: &Path) -> String {
    #[derive(Deserialize)]
    struct TrackConfig {
        slug: String,
    }
    let from_config = std::fs::read_to_string(dir.join("config.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<TrackConfig>(&text).ok())
        .map(|c| c.slug);
    from_config.unwrap_or_else(|| {
        let name = dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_default();
        // A checkout of exercism/python is often named `python` or `exercism-python`.
        name.strip_prefix("exercism-").unwrap_or(&name).to_owned()
    })
}

/// The subfolders of `dir` not starting with `.`, sorted.
fn list_dirs(dir: &Path) -> Result<Vec<PathBuf>, ImportError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ImportError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    Ok(dirs)
}

/// The task folder of one exercise, or why it is skipped.
fn build_task(
    language: Language,
    slug: &str,
    dir: &Path,
    source: &Path,
    template: &str,
    node_modules: Option<&str>,
) -> Result<(String, Tree), Skipped> {
    let skip = |path: &Path, reason: String| Skipped {
        path: path.to_path_buf(),
        reason,
    };
    let id = format!("{}-{slug}", language.slug());
    if !slug
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
    {
        return Err(skip(
            dir,
            format!("`{id}` is not a valid task id (lowercase letters, digits, '-' and '_')"),
        ));
    }
    let config_path = dir.join(".meta/config.json");
    let config_text = std::fs::read_to_string(&config_path)
        .map_err(|e| skip(&config_path, format!("failed to read it: {e}")))?;
    let config: Config = serde_json::from_str(&config_text)
        .map_err(|e| skip(&config_path, format!("malformed config.json: {e}")))?;
    let files = config.files;
    if files.solution.is_empty() {
        return Err(skip(
            &config_path,
            "`files.solution` names no solution file".into(),
        ));
    }
    if files.test.is_empty() {
        return Err(skip(
            &config_path,
            "`files.test` names no test file: nothing would check the exercise".into(),
        ));
    }
    if files.example.is_empty() {
        return Err(skip(
            &config_path,
            "`files.example` names no reference solution".into(),
        ));
    }
    for name in files
        .solution
        .iter()
        .chain(&files.test)
        .chain(&files.example)
        .chain(&files.editor)
    {
        if !is_relative_inside(name) {
            return Err(skip(
                &config_path,
                format!("`{name}` is not a relative path inside the exercise"),
            ));
        }
    }
    let instructions_path = dir.join(".docs/instructions.md");
    let main = std::fs::read_to_string(&instructions_path).map_err(|e| {
        skip(
            &instructions_path,
            if e.kind() == std::io::ErrorKind::NotFound {
                "missing: the exercise has no instructions".to_owned()
            } else {
                format!("failed to read it: {e}")
            },
        )
    })?;
    let append_path = dir.join(".docs/instructions.append.md");
    let append = match std::fs::read_to_string(&append_path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(skip(&append_path, format!("failed to read it: {e}"))),
    };

    // The fixture: the exercise without its metadata, tests switched on.
    let listed = tree::list_files(dir, &NOT_IN_FIXTURE)
        .map_err(|e| skip(dir, format!("failed to read the exercise: {e}")))?;
    let mut task = Tree::new();
    let mut tests: Vec<(String, String)> = Vec::new();
    for name in &files.test {
        if !listed.iter().any(|(rel, _)| rel == name) {
            return Err(skip(
                &dir.join(name),
                "missing: the test file config.json names is not there".into(),
            ));
        }
    }
    for (rel, path) in &listed {
        let file = read_out(path).map_err(|e| skip(path, format!("failed to read it: {e}")))?;
        let file = if files.test.contains(rel) {
            let text = String::from_utf8(file.bytes)
                .map_err(|_| skip(path, "the test file is not UTF-8 text".into()))?;
            let enabled = recipes::enable_tests(language, &text);
            tests.push((rel.clone(), enabled.clone()));
            OutFile {
                bytes: enabled.into_bytes(),
                executable: file.executable,
            }
        } else {
            file
        };
        task.insert(format!("repo/{rel}"), file);
    }

    // The reference solution, at the solution files' paths.
    let mut taken: Vec<&str> = Vec::new();
    for example in &files.example {
        let path = dir.join(example);
        let file = read_out(&path).map_err(|e| {
            skip(
                &path,
                if e.kind() == std::io::ErrorKind::NotFound {
                    "missing: the reference solution file config.json names is not there".to_owned()
                } else {
                    format!("failed to read it: {e}")
                },
            )
        })?;
        let target = solution_target(example, &files.solution, &taken).ok_or_else(|| {
            skip(
                &path,
                format!(
                    "cannot tell which solution file ({}) this reference file replaces",
                    files.solution.join(", ")
                ),
            )
        })?;
        // The track gives the student its own copy of a file it may not change (Java's
        // `Winner.java` beside `Connect.java`): the fixture's stays, checked unchanged.
        if files.editor.contains(&target) {
            continue;
        }
        if files.solution.iter().any(|s| s == &target) {
            taken.push(
                files
                    .solution
                    .iter()
                    .find(|s| **s == target)
                    .map(String::as_str)
                    .unwrap_or_default(),
            );
        }
        task.insert(format!("solution/{target}"), file);
    }
    for (extra, target) in recipes::extra_reference_files(language) {
        let path = dir.join(extra);
        if path.is_file() {
            let file =
                read_out(&path).map_err(|e| skip(&path, format!("failed to read it: {e}")))?;
            task.insert(format!("solution/{target}"), file);
        }
    }

    let gradle = std::fs::read_to_string(dir.join("build.gradle")).ok();
    let cmake = std::fs::read_to_string(dir.join("CMakeLists.txt")).ok();
    let facts = ExerciseFacts {
        slug,
        tests: &tests,
        gradle: gradle.as_deref(),
        cmake: cmake.as_deref(),
        node_modules,
    };
    let recipe = recipes::recipe(language, &facts).map_err(|why| skip(dir, why))?;

    // The tests (and the files the student may not change) must stay as they are.
    let mut guarded: Vec<&String> = files.test.iter().chain(&files.editor).collect();
    guarded.sort();
    guarded.dedup();
    let mut sums = String::new();
    for name in guarded {
        let Some(file) = task.get(&format!("repo/{name}")) else {
            continue;
        };
        sums.push_str(&format!("{:x}  {name}\n", Sha256::digest(&file.bytes)));
    }
    let unchanged = format!("sha256sum --quiet --check - <<'EOF'\n{sums}EOF");

    let text = prompt::instructions(&main, append.as_deref());
    let prompt = prompt::render(
        template,
        &PromptParts {
            instructions: &text,
            files: &files.solution,
            language: language.display(),
            exercise: slug,
        },
    );
    let yaml = TaskYaml {
        id: &id,
        prompt: &prompt,
        checks: vec![
            CheckYaml {
                name: "tests".into(),
                run: recipe.run,
            },
            CheckYaml {
                name: "tests unchanged".into(),
                run: unchanged,
            },
        ],
        tags: vec![language.slug(), "exercism"],
        env: recipe.env.into_iter().collect(),
        requires: &recipe.requires,
    };
    let body = serde_yaml_ng::to_string(&yaml)
        .map_err(|e| skip(dir, format!("failed to write task.yaml: {e}")))?;
    let from = dir.strip_prefix(source).unwrap_or(dir);
    let header = format!(
        "# Imported by `harness import exercism` from {}; importing again rewrites this folder.\n",
        from.display()
    );
    task.insert(
        "task.yaml".into(),
        OutFile {
            bytes: format!("{header}{body}").into_bytes(),
            executable: false,
        },
    );
    Ok((id, task))
}

/// The solution path a reference file replaces: the solution file of the same name, else the
/// only one (not yet taken) with its extension, else (Java) its place under `src/main/`.
fn solution_target(example: &str, solution: &[String], taken: &[&str]) -> Option<String> {
    let name = Path::new(example)
        .file_name()?
        .to_string_lossy()
        .into_owned();
    let same_name: Vec<&String> = solution
        .iter()
        .filter(|s| {
            Path::new(s)
                .file_name()
                .is_some_and(|n| n.to_string_lossy() == name)
        })
        .collect();
    if same_name.len() == 1 {
        return Some(same_name[0].clone());
    }
    let ext = Path::new(example).extension();
    let same_ext: Vec<&String> = solution
        .iter()
        .filter(|s| Path::new(s).extension() == ext && !taken.contains(&s.as_str()))
        .collect();
    if same_ext.len() == 1 && example.starts_with(".meta/") && !example.starts_with(".meta/src/") {
        return Some(same_ext[0].clone());
    }
    // Java keeps the reference as `.meta/src/reference/java/X.java` for `src/main/java/X.java`.
    example
        .strip_prefix(".meta/src/reference/")
        .map(|rest| format!("src/main/{rest}"))
}

fn is_relative_inside(path: &str) -> bool {
    let p = Path::new(path);
    !path.is_empty()
        && p.is_relative()
        && p.components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

fn read_out(path: &Path) -> std::io::Result<OutFile> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path)?;
    Ok(OutFile {
        bytes: std::fs::read(path)?,
        executable: meta.permissions().mode() & 0o111 != 0,
    })
}

/// The crates a Rust task's manifests name (the stub's and the reference's), fetched into
/// Cargo's cache so that its offline check finds them.
fn fetch_crates(id: &str, task: &Tree, summary: &mut ImportSummary) {
    for manifest in ["repo/Cargo.toml", "solution/Cargo.toml"] {
        let Some(file) = task.get(manifest) else {
            continue;
        };
        let text = String::from_utf8_lossy(&file.bytes);
        if !names_crates(&text) {
            continue;
        }
        let Ok(dir) = tempfile::tempdir() else {
            continue;
        };
        let written = std::fs::create_dir_all(dir.path().join("src"))
            .and_then(|()| std::fs::write(dir.path().join("src/lib.rs"), ""))
            .and_then(|()| std::fs::write(dir.path().join("Cargo.toml"), text.as_bytes()));
        if written.is_err() {
            continue;
        }
        let fetched = std::process::Command::new("cargo")
            .args(["fetch", "--quiet"])
            .current_dir(dir.path())
            .stdin(std::process::Stdio::null())
            .output();
        match fetched {
            Ok(out) if out.status.success() => {}
            Ok(out) => summary.notes.push(format!(
                "{id}: `cargo fetch` for {manifest} failed, so its offline check may not build: {}",
                String::from_utf8_lossy(&out.stderr).lines().next().unwrap_or_default()
            )),
            Err(e) => summary.notes.push(format!(
                "{id}: failed to run `cargo fetch` for {manifest} ({e}); its offline check may not build"
            )),
        }
    }
}

/// Whether a `Cargo.toml` has a `[dependencies]` (or dev-dependencies) entry.
fn names_crates(manifest: &str) -> bool {
    let mut in_deps = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line.ends_with("dependencies]");
        } else if in_deps && !line.is_empty() && !line.starts_with('#') {
            return true;
        }
    }
    false
}

/// The JavaScript exercises' shared dependency install: `<into>/_exercism/javascript/` with a
/// `package.json` of every dependency the exercises' `package.json` files name, and
/// `node_modules/` from `npm install` (when `install` and it is missing or out of date).
/// Returns the absolute `node_modules` path the checks link to.
fn shared_node_install(
    into: &Path,
    exercises: &[PathBuf],
    install: bool,
    summary: &mut ImportSummary,
) -> Result<String, ImportError> {
    let dir = into.join(recipes::NODE_DEPS_DIR);
    let mut deps: BTreeMap<String, String> = BTreeMap::new();
    for exercise in exercises {
        let path = exercise.join("package.json");
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
            // The exercise itself is still imported; its own `npm test` will say what is wrong.
            summary.notes.push(format!(
                "{}: malformed package.json, left out of the shared install",
                path.display()
            ));
            continue;
        };
        for field in ["dependencies", "devDependencies"] {
            let Some(map) = json.get(field).and_then(|v| v.as_object()) else {
                continue;
            };
            for (name, version) in map {
                let version = version.as_str().unwrap_or_default().to_owned();
                match deps.get(name) {
                    Some(have) if have != &version => summary.notes.push(format!(
                        "{}: wants {name} {version}; the shared install has {have}",
                        path.display()
                    )),
                    Some(_) => {}
                    None => {
                        deps.insert(name.clone(), version);
                    }
                }
            }
        }
    }
    let package = serde_json::json!({
        "name": "harness-exercism-javascript",
        "private": true,
        "description": "The dependencies of the imported JavaScript exercises, installed once (harness import exercism).",
        "devDependencies": deps,
    });
    let text = format!(
        "{}\n",
        serde_json::to_string_pretty(&package).expect("JSON")
    );
    std::fs::create_dir_all(&dir).map_err(|source| ImportError::Write {
        path: dir.clone(),
        source,
    })?;
    let package_path = dir.join("package.json");
    if std::fs::read_to_string(&package_path).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&package_path, &text).map_err(|source| ImportError::Write {
            path: package_path.clone(),
            source,
        })?;
    }
    let node_modules = dir.join("node_modules");
    let marker = node_modules.join(".harness-package.json");
    let current = std::fs::read_to_string(&marker).ok().as_deref() == Some(text.as_str());
    if !current && install {
        let status = std::process::Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--no-package-lock",
            ])
            .current_dir(&dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .status();
        match status {
            Ok(s) if s.success() => {
                std::fs::create_dir_all(&node_modules).map_err(|source| ImportError::Write {
                    path: node_modules.clone(),
                    source,
                })?;
                std::fs::write(&marker, &text).map_err(|source| ImportError::Write {
                    path: marker.clone(),
                    source,
                })?;
                summary.done.push(format!(
                    "installed the JavaScript exercises' dependencies in {}",
                    node_modules.display()
                ));
            }
            Ok(s) => summary.notes.push(format!(
                "`npm install` in {} failed ({s}); the JavaScript tasks are skipped until it succeeds",
                dir.display()
            )),
            Err(e) => summary.notes.push(format!(
                "failed to run `npm install` in {} ({e}); the JavaScript tasks are skipped until their dependencies are installed there",
                dir.display()
            )),
        }
    } else if !current {
        summary.notes.push(format!(
            "the JavaScript exercises' dependencies are not installed: run `npm install` in {} (the JavaScript tasks are skipped until then)",
            dir.display()
        ));
    }
    Ok(node_modules.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_files_find_the_solution_file_they_replace() {
        let sol = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let cpp = sol(&["all_your_base.cpp", "all_your_base.h"]);
        assert_eq!(
            solution_target(".meta/example.cpp", &cpp, &[]).as_deref(),
            Some("all_your_base.cpp")
        );
        assert_eq!(
            solution_target(".meta/example.h", &cpp, &[]).as_deref(),
            Some("all_your_base.h")
        );
        let rust = sol(&["src/lib.rs", "Cargo.toml"]);
        assert_eq!(
            solution_target(".meta/example.rs", &rust, &[]).as_deref(),
            Some("src/lib.rs")
        );
        let java = sol(&["src/main/java/AffineCipher.java"]);
        assert_eq!(
            solution_target(".meta/src/reference/java/AffineCipher.java", &java, &[]).as_deref(),
            Some("src/main/java/AffineCipher.java")
        );
        assert_eq!(
            solution_target(".meta/src/reference/java/Helper.java", &java, &[]).as_deref(),
            Some("src/main/java/Helper.java")
        );
        let two_py = sol(&["a.py", "b.py"]);
        assert_eq!(solution_target(".meta/example.py", &two_py, &[]), None);
        assert_eq!(
            solution_target(".meta/example.py", &two_py, &["a.py"]).as_deref(),
            Some("b.py")
        );
    }
}
