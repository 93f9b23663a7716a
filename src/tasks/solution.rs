//! A task's reference solution, beside its `task.yaml`: a `solution/` folder (every file in it
//! laid over the workspace at the same relative path; files are added or replaced, never
//! deleted) or a `solution.sh` (a bash script the oracle runs in the workspace with the `bash`
//! tool). The oracle ([`crate::providers::oracle`]) applies it through the agent's tools, so
//! everything about it that can be checked is checked when the task loads: one kind only, text
//! files only (`write` takes text), no links, nothing that would land outside the fixture or on
//! one of its folders, and the tools the oracle needs among the task's tools.
//!
//! Depends on the oracle's [`Reference`] (what it applies), the tools' names and the sandbox's
//! path confinement; never on the runner.

use std::path::{Path, PathBuf};

use crate::providers::oracle::{Reference, ReferenceFile};
use crate::sandbox::confine;

use super::problem::TaskProblem;

/// The solution folder's name in a task folder.
pub const SOLUTION_DIR: &str = "solution";

/// The solution script's name in a task folder.
pub const SOLUTION_SCRIPT: &str = "solution.sh";

/// The reference solution of the task in `folder` whose tools are `tools`: `None` when it has
/// none, or when something is wrong with it (every problem pushed to `problems`).
pub(super) fn load(
    folder: &Path,
    tools: &[String],
    problems: &mut Vec<TaskProblem>,
) -> Option<Reference> {
    let dir = folder.join(SOLUTION_DIR);
    let script = folder.join(SOLUTION_SCRIPT);
    let dir_meta = std::fs::symlink_metadata(&dir).ok();
    let script_meta = std::fs::symlink_metadata(&script).ok();
    let before = problems.len();
    let needs = |tool: &str, path: &Path, why: &str, problems: &mut Vec<TaskProblem>| {
        if !tools.iter().any(|t| t == tool) {
            problems.push(TaskProblem::new(
                path,
                None,
                format!(
                    "the oracle {why} with the `{tool}` tool, which this task's tools ({}) do \
                     not include",
                    tools.join(", ")
                ),
            ));
        }
    };
    let reference = match (dir_meta, script_meta) {
        (None, None) => return None,
        (Some(_), Some(_)) => {
            problems.push(TaskProblem::new(
                folder,
                None,
                format!(
                    "both {SOLUTION_DIR}/ and {SOLUTION_SCRIPT}: a task has one reference \
                     solution (keep the folder of files, or the script)"
                ),
            ));
            return None;
        }
        (Some(meta), None) => {
            if !meta.is_dir() {
                problems.push(TaskProblem::new(
                    &dir,
                    None,
                    format!(
                        "not a folder (a symlink or a file): the reference solution is a \
                         folder of files laid over the fixture, or a script {SOLUTION_SCRIPT}"
                    ),
                ));
                return None;
            }
            let files = folder_files(&dir, &folder.join("repo"), problems);
            if files.is_empty() && problems.len() == before {
                problems.push(TaskProblem::new(
                    &dir,
                    None,
                    "the folder holds no file: add the files of the reference solution, or \
                     remove the folder",
                ));
            }
            needs("write", &dir, "writes the reference files", problems);
            if files.iter().any(|f| f.executable) {
                needs("bash", &dir, "makes executable files executable", problems);
            }
            Reference::Files(files)
        }
        (None, Some(meta)) => {
            if !meta.is_file() {
                problems.push(TaskProblem::new(
                    &script,
                    None,
                    "not a regular file (a symlink, a folder): the script must be the file itself",
                ));
                return None;
            }
            needs("bash", &script, "runs the reference script", problems);
            match text_of(&script, problems) {
                Some(text) if text.trim().is_empty() => {
                    problems.push(TaskProblem::new(
                        &script,
                        None,
                        "the script is empty: write the commands that solve the task",
                    ));
                    return None;
                }
                Some(text) => Reference::Script(text),
                None => return None,
            }
        }
    };
    (problems.len() == before).then_some(reference)
}

/// Every file under `dir`, as laid over `repo`, sorted by path; a problem for each entry that
/// cannot be written there with `write`.
fn folder_files(dir: &Path, repo: &Path, problems: &mut Vec<TaskProblem>) -> Vec<ReferenceFile> {
    let mut files = Vec::new();
    walk(dir, dir, repo, &mut files, problems);
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

fn walk(
    root: &Path,
    dir: &Path,
    repo: &Path,
    files: &mut Vec<ReferenceFile>,
    problems: &mut Vec<TaskProblem>,
) {
    use std::os::unix::fs::PermissionsExt;
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            problems.push(TaskProblem::new(dir, None, format!("failed to read: {e}")));
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            problems.push(TaskProblem::new(&path, None, "failed to read"));
            continue;
        };
        let rel = path.strip_prefix(root).unwrap_or(&path);
        let Some(rel_text) = rel.to_str() else {
            problems.push(TaskProblem::new(
                &path,
                None,
                "the name is not UTF-8: the oracle names the files it writes in text",
            ));
            continue;
        };
        if meta.file_type().is_symlink() {
            problems.push(TaskProblem::new(
                &path,
                None,
                format!(
                    "a symlink cannot be a reference file (the oracle writes file contents with \
                     `write`): copy the file it points to in, or make the link in a \
                     {SOLUTION_SCRIPT} instead"
                ),
            ));
        } else if meta.is_dir() {
            walk(root, &path, repo, files, problems);
        } else if !meta.is_file() {
            problems.push(TaskProblem::new(
                &path,
                None,
                "not a regular file: a reference solution holds files and folders only",
            ));
        } else if let Some(why) = overlay_problem(repo, rel) {
            problems.push(TaskProblem::new(&path, None, why));
        } else if let Some(content) = text_of(&path, problems) {
            files.push(ReferenceFile {
                path: rel_text.to_owned(),
                content,
                executable: meta.permissions().mode() & 0o111 != 0,
            });
        }
    }
}

/// Why the file `rel` of a solution cannot be laid over the fixture `repo`: it would replace one
/// of its folders, need a folder where the fixture has a file, or land outside the fixture
/// through one of its links.
fn overlay_problem(repo: &Path, rel: &Path) -> Option<String> {
    let target = repo.join(rel);
    if target.is_dir() {
        return Some(format!(
            "repo/{} is a folder in the fixture: a reference file cannot replace a folder",
            rel.display()
        ));
    }
    let mut ancestor = rel.parent();
    while let Some(part) = ancestor.filter(|p| !p.as_os_str().is_empty()) {
        let at = repo.join(part);
        if at.exists() && !at.is_dir() {
            return Some(format!(
                "repo/{} is a file in the fixture, so nothing can be written under it",
                part.display()
            ));
        }
        ancestor = part.parent();
    }
    let root = repo.canonicalize().ok()?;
    if !confine::is_inside(&root.join(rel), &root) {
        return Some(format!(
            "repo/{} leads outside the fixture through a symlink, so the oracle would write \
             outside the workspace",
            rel.display()
        ));
    }
    None
}

/// The text of `path`, or a problem saying why it is not text.
fn text_of(path: &Path, problems: &mut Vec<TaskProblem>) -> Option<String> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) => {
            problems.push(TaskProblem::new(path, None, format!("failed to read: {e}")));
            return None;
        }
    };
    match String::from_utf8(bytes) {
        Ok(text) => Some(text),
        Err(e) => {
            problems.push(TaskProblem::new(
                path,
                None,
                format!(
                    "not UTF-8 text (a binary file? invalid byte at offset {}): the oracle \
                     applies a reference with the agent's tools, and `write` takes text; \
                     produce binary files with a {SOLUTION_SCRIPT} instead",
                    e.utf8_error().valid_up_to()
                ),
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use pretty_assertions::assert_eq;

    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn tools(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn a_folder_is_its_files_sorted_with_their_executable_bit() {
        let dir = tempfile::tempdir().unwrap();
        let task = dir.path();
        write(&task.join("repo/src/a.rs"), "old\n");
        write(&task.join("solution/src/a.rs"), "new\n");
        write(&task.join("solution/bin/run.sh"), "#!/bin/sh\n");
        std::fs::set_permissions(
            task.join("solution/bin/run.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        let mut problems = Vec::new();
        let reference = load(task, &tools(&["read", "write", "bash"]), &mut problems);
        assert_eq!(problems, vec![]);
        assert_eq!(
            reference,
            Some(Reference::Files(vec![
                ReferenceFile {
                    path: "bin/run.sh".into(),
                    content: "#!/bin/sh\n".into(),
                    executable: true,
                },
                ReferenceFile {
                    path: "src/a.rs".into(),
                    content: "new\n".into(),
                    executable: false,
                },
            ]))
        );
        // Without `bash` the executable bit cannot be set: said, with the tools there are.
        let mut problems = Vec::new();
        assert_eq!(load(task, &tools(&["read", "write"]), &mut problems), None);
        assert_eq!(problems.len(), 1);
        assert_eq!(
            problems[0].message,
            "the oracle makes executable files executable with the `bash` tool, which this \
             task's tools (read, write) do not include"
        );
    }

    #[test]
    fn a_script_needs_bash_and_text() {
        let dir = tempfile::tempdir().unwrap();
        let task = dir.path();
        std::fs::create_dir_all(task.join("repo")).unwrap();
        let mut problems = Vec::new();
        assert_eq!(load(task, &tools(&["bash"]), &mut problems), None);
        assert_eq!(problems, vec![], "no solution is no problem");
        write(&task.join(SOLUTION_SCRIPT), "  \n");
        assert_eq!(load(task, &tools(&["bash"]), &mut problems), None);
        assert_eq!(
            problems[0].message,
            "the script is empty: write the commands that solve the task"
        );
        write(&task.join(SOLUTION_SCRIPT), "sed -i s/a/b/ x\n");
        let mut problems = Vec::new();
        assert_eq!(
            load(task, &tools(&["bash"]), &mut problems),
            Some(Reference::Script("sed -i s/a/b/ x\n".into()))
        );
        assert_eq!(load(task, &tools(&["read"]), &mut problems), None);
        assert_eq!(problems[0].path, task.join(SOLUTION_SCRIPT));
    }
}
