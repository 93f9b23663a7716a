//! `harness import exercism` on small exercise trees written here in the Exercism layout, one
//! per language whose toolchain `.ci/run` installs: the import, the imported suite loads, and
//! each task's own check commands (as the import wrote them) pass with the reference solution
//! laid over the fixture and fail on the untouched fixture. Then re-importing is idempotent,
//! and bad exercises are skipped with their path and reason while the rest are imported.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use harness::sandbox::env::{base_env, run_env};
use harness::scoring::run_checks;
use harness::tasks::{Task, load_suite};
use harness::workspace::Workspace;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// One exercise: `files` relative to it, `.meta/config.json` from the lists.
fn exercise(
    dir: &Path,
    solution: &[&str],
    test: &[&str],
    example: &[&str],
    files: &[(&str, &str)],
) {
    let list = |l: &[&str]| {
        l.iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    write(
        &dir.join(".meta/config.json"),
        &format!(
            "{{\"authors\": [\"us\"], \"files\": {{\"solution\": [{}], \"test\": [{}], \"example\": [{}]}}, \"blurb\": \"b\"}}",
            list(solution),
            list(test),
            list(example)
        ),
    );
    for (path, text) in files {
        write(&dir.join(path), text);
    }
}

const INSTRUCTIONS: &str = "# Instructions\n\nReturn the reverse of a string.\n";

/// A polyglot-layout tree: `<language>/exercises/practice/reverse-string/` per language.
fn tracks(root: &Path) {
    let at = |lang: &str| root.join(lang).join("exercises/practice/reverse-string");
    exercise(
        &at("python"),
        &["reverse_string.py"],
        &["reverse_string_test.py"],
        &[".meta/example.py"],
        &[
            (".docs/instructions.md", INSTRUCTIONS),
            (".docs/instructions.append.md", "# Append\n\nUse slicing.\n"),
            ("reverse_string.py", "def reverse(text):\n    pass\n"),
            (
                "reverse_string_test.py",
                "import unittest\nfrom reverse_string import reverse\n\nclass T(unittest.TestCase):\n    def test_word(self):\n        self.assertEqual(reverse(\"abc\"), \"cba\")\n",
            ),
            (
                ".meta/example.py",
                "def reverse(text):\n    return text[::-1]\n",
            ),
        ],
    );
    exercise(
        &at("rust"),
        &["src/lib.rs", "Cargo.toml"],
        &["tests/reverse-string.rs"],
        &[".meta/example.rs"],
        &[
            (".docs/instructions.md", INSTRUCTIONS),
            (
                "Cargo.toml",
                "[package]\nname = \"reverse_string\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
            ),
            (
                "src/lib.rs",
                "pub fn reverse(input: &str) -> String {\n    input.to_string()\n}\n",
            ),
            (
                "tests/reverse-string.rs",
                "use reverse_string::reverse;\n\n#[test]\nfn empty() {\n    assert_eq!(reverse(\"\"), \"\");\n}\n\n#[test]\n#[ignore]\nfn word() {\n    assert_eq!(reverse(\"abc\"), \"cba\");\n}\n",
            ),
            (
                ".meta/example.rs",
                "pub fn reverse(input: &str) -> String {\n    input.chars().rev().collect()\n}\n",
            ),
        ],
    );
    exercise(
        &at("javascript"),
        &["reverse-string.js"],
        &["reverse-string.spec.js"],
        &[".meta/proof.ci.js"],
        &[
            (".docs/instructions.md", INSTRUCTIONS),
            (
                "package.json",
                "{\"name\": \"reverse-string\", \"private\": true, \"scripts\": {\"test\": \"node --test ./reverse-string.spec.js\"}}\n",
            ),
            ("reverse-string.js", "module.exports.reverse = (s) => s;\n"),
            (
                "reverse-string.spec.js",
                "const { test } = require('node:test');\nconst assert = require('node:assert');\nconst xtest = () => {};\nconst { reverse } = require('./reverse-string.js');\n\ntest('empty', () => assert.strictEqual(reverse(''), ''));\nxtest('word', () => assert.strictEqual(reverse('abc'), 'cba'));\n",
            ),
            (
                ".meta/proof.ci.js",
                "module.exports.reverse = (s) => [...s].reverse().join('');\n",
            ),
        ],
    );
    exercise(
        &at("go"),
        &["reverse_string.go"],
        &["reverse_string_test.go"],
        &[".meta/example.go"],
        &[
            (".docs/instructions.md", INSTRUCTIONS),
            ("go.mod", "module reverse\n\ngo 1.18\n"),
            (
                "reverse_string.go",
                "package reverse\n\nfunc Reverse(input string) string {\n\treturn input\n}\n",
            ),
            (
                "reverse_string_test.go",
                "package reverse\n\nimport \"testing\"\n\nfunc TestReverse(t *testing.T) {\n\tif got := Reverse(\"abc\"); got != \"cba\" {\n\t\tt.Fatalf(\"got %q\", got)\n\t}\n}\n",
            ),
            (
                ".meta/example.go",
                "package reverse\n\nfunc Reverse(input string) string {\n\tr := []rune(input)\n\tfor i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {\n\t\tr[i], r[j] = r[j], r[i]\n\t}\n\treturn string(r)\n}\n",
            ),
        ],
    );
    exercise(
        &at("java"),
        &["src/main/java/ReverseString.java"],
        &["src/test/java/ReverseStringTest.java"],
        &[".meta/src/reference/java/ReverseString.java"],
        &[
            (".docs/instructions.md", INSTRUCTIONS),
            (
                "build.gradle",
                "plugins { id \"java\" }\ndependencies {\n    testImplementation \"org.junit.jupiter:junit-jupiter\"\n    testImplementation \"org.assertj:assertj-core:3.25.1\"\n}\n",
            ),
            (
                "src/main/java/ReverseString.java",
                "class ReverseString {\n    String reverse(String s) {\n        return s;\n    }\n}\n",
            ),
            (
                "src/test/java/ReverseStringTest.java",
                "import org.junit.jupiter.api.Disabled;\nimport org.junit.jupiter.api.Test;\nimport static org.assertj.core.api.Assertions.assertThat;\n\npublic class ReverseStringTest {\n    @Test\n    public void empty() {\n        assertThat(new ReverseString().reverse(\"\")).isEqualTo(\"\");\n    }\n\n    @Disabled(\"Remove to run test\")\n    @Test\n    public void word() {\n        assertThat(new ReverseString().reverse(\"abc\")).isEqualTo(\"cba\");\n    }\n}\n",
            ),
            (
                ".meta/src/reference/java/ReverseString.java",
                "class ReverseString {\n    String reverse(String s) {\n        return new StringBuilder(s).reverse().toString();\n    }\n}\n",
            ),
        ],
    );
    exercise(
        &at("cpp"),
        &["reverse_string.cpp", "reverse_string.h"],
        &["reverse_string_test.cpp"],
        &[".meta/example.cpp", ".meta/example.h"],
        &[
            (".docs/instructions.md", INSTRUCTIONS),
            (
                "CMakeLists.txt",
                "cmake_minimum_required(VERSION 3.5.1)\nproject(reverse_string CXX)\nadd_executable(reverse_string reverse_string_test.cpp reverse_string.cpp)\nif(EXERCISM_RUN_ALL_TESTS)\n  target_compile_definitions(reverse_string PRIVATE EXERCISM_RUN_ALL_TESTS)\nendif()\nadd_custom_target(test_reverse_string ALL DEPENDS reverse_string COMMAND reverse_string)\n",
            ),
            (
                "reverse_string.h",
                "#pragma once\n#include <string>\nnamespace reverse_string {\nstd::string reverse_string(const std::string& s);\n}\n",
            ),
            (
                "reverse_string.cpp",
                "#include \"reverse_string.h\"\nnamespace reverse_string {\nstd::string reverse_string(const std::string& s) { return s; }\n}\n",
            ),
            (
                "reverse_string_test.cpp",
                "#include \"reverse_string.h\"\n#include <cstdio>\nint main() {\n  int failed = 0;\n  if (reverse_string::reverse_string(\"\") != \"\") failed++;\n#if defined(EXERCISM_RUN_ALL_TESTS)\n  if (reverse_string::reverse_string(\"abc\") != \"cba\") { std::puts(\"word: failed\"); failed++; }\n#endif\n  return failed;\n}\n",
            ),
            (
                ".meta/example.h",
                "#pragma once\n#include <string>\nnamespace reverse_string {\nstd::string reverse_string(const std::string& s);\n}\n",
            ),
            (
                ".meta/example.cpp",
                "#include \"reverse_string.h\"\n#include <algorithm>\nnamespace reverse_string {\nstd::string reverse_string(const std::string& s) { return std::string(s.rbegin(), s.rend()); }\n}\n",
            ),
        ],
    );
}

/// Runs the binary; returns (code, stdout, stderr).
fn harness(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn import(source: &Path, into: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "import",
        "exercism",
        source.to_str().unwrap(),
        "--into",
        into.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    harness(&args)
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == "node_modules") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(
                    path.strip_prefix(dir).unwrap().to_owned(),
                    std::fs::read(&path).unwrap(),
                );
            }
        }
    }
    out
}

/// The task's checks, as it wrote them, in a copy of its fixture, with its reference solution
/// laid over first when `solved`: (check name, passed) in order.
async fn checks(task: &Task, solved: bool) -> Vec<(String, bool, String)> {
    let ws = Workspace::create(task, false).unwrap();
    if solved {
        let solution = task.dir.join("solution");
        let status = Command::new("cp")
            .arg("-a")
            .arg(format!("{}/.", solution.display()))
            .arg(ws.path())
            .status()
            .unwrap();
        assert!(status.success());
    }
    let home = tempfile::tempdir().unwrap();
    let env = run_env(
        &base_env(std::env::vars()),
        home.path(),
        home.path(),
        &task.env,
    );
    run_checks(task, ws.path(), &env)
        .await
        .unwrap()
        .into_iter()
        .map(|c| (c.name, c.passed, c.detail))
        .collect()
}

const JUNIT: &str = "/usr/share/java/junit-platform-console-standalone.jar";
const ASSERTJ: &str = "/usr/share/java/assertj-core.jar";

/// Whether the toolchain of `language` is here; CI (`HARNESS_REQUIRE_TOOLCHAINS`) requires it.
fn have(programs: &[&str]) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let missing: Vec<&&str> = programs
        .iter()
        .filter(|p| {
            if p.starts_with('/') {
                !Path::new(p).is_file()
            } else {
                harness::runner::preflight::find_program(p, &path).is_none()
            }
        })
        .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("HARNESS_REQUIRE_TOOLCHAINS").is_none(),
        "{missing:?} not on PATH, and HARNESS_REQUIRE_TOOLCHAINS is set"
    );
    eprintln!("SKIPPED the {missing:?} tasks: not on PATH");
    false
}

#[tokio::test]
#[ignore = "slow: .ci/run runs it (`cargo test -- --ignored`)"]
async fn imported_exercises_pass_with_their_reference_and_fail_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("polyglot");
    tracks(&source);
    let into = dir.path().join("tasks");
    let (code, out, err) = import(&source, &into, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(
        out.trim(),
        format!(
            "imported 6 exercises into {} (cpp 1, go 1, java 1, javascript 1, python 1, rust 1): new 6, updated 0, unchanged 0; skipped 0",
            into.display()
        ),
        "{err}"
    );
    let suite = load_suite(&into).unwrap();
    let ids: Vec<&str> = suite.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "cpp-reverse-string",
            "go-reverse-string",
            "java-reverse-string",
            "javascript-reverse-string",
            "python-reverse-string",
            "rust-reverse-string"
        ]
    );
    let python = &suite.tasks[4];
    assert_eq!(python.tags, ["python", "exercism"]);
    assert_eq!(python.requires.programs, ["python3"]);
    assert!(python.prompts[0].starts_with("# Instructions\n\nReturn the reverse of a string.\n\n# Append\n\nUse slicing.\n\n# Your task\n"), "{}", python.prompts[0]);
    assert!(python.prompts[0].contains("- `reverse_string.py`"));
    // The reference stays beside the fixture, never in it; the metadata is not copied.
    assert!(
        into.join("python-reverse-string/solution/reverse_string.py")
            .is_file()
    );
    assert!(!into.join("python-reverse-string/repo/.meta").exists());
    // The JavaScript track's skipped tests are switched on in the fixture.
    let spec =
        std::fs::read_to_string(into.join("javascript-reverse-string/repo/reverse-string.spec.js"))
            .unwrap();
    assert!(spec.contains("\ntest('word'"), "{spec}");

    let toolchains: [(&str, &[&str]); 6] = [
        ("cpp-reverse-string", &["cmake", "make", "g++"]),
        ("go-reverse-string", &["go"]),
        ("java-reverse-string", &["java", "javac", JUNIT, ASSERTJ]),
        ("javascript-reverse-string", &["node", "npm"]),
        ("python-reverse-string", &["python3"]),
        ("rust-reverse-string", &["cargo"]),
    ];
    // Every toolchain's checks at once, untouched and with the reference (each in its own
    // workspace): most of their time is compilers and JVMs starting.
    let runs = toolchains
        .iter()
        .filter(|(_, programs)| have(programs))
        .map(|(id, _)| {
            let task = suite.tasks.iter().find(|t| t.id == *id).unwrap();
            async move { (*id, checks(task, false).await, checks(task, true).await) }
        });
    for (id, untouched, solved) in futures::future::join_all(runs).await {
        assert_eq!(
            untouched
                .iter()
                .map(|(n, p, _)| (n.as_str(), *p))
                .collect::<Vec<_>>(),
            [("tests", false), ("tests unchanged", true)],
            "{id} untouched: {untouched:#?}"
        );
        assert_eq!(
            solved
                .iter()
                .map(|(n, p, _)| (n.as_str(), *p))
                .collect::<Vec<_>>(),
            [("tests", true), ("tests unchanged", true)],
            "{id} with its reference: {solved:#?}"
        );
    }

    // The oracle says the same through the agent's own tools: every imported task whose
    // toolchain is here passes with its reference (`oracle/reference` writes `solution/` over the
    // fixture) and fails untouched (`oracle/none`).
    let present: Vec<&str> = toolchains
        .iter()
        .filter(|(_, programs)| have(programs))
        .map(|(id, _)| *id)
        .collect();
    let mut args = vec![
        "validate",
        "--oracle",
        into.to_str().unwrap(),
        "--jobs",
        "2",
    ];
    for id in &present {
        args.extend(["--task", id]);
    }
    let (code, out, err) = harness(&args);
    assert_eq!(code, 0, "{out}\n{err}");
    for id in &present {
        let row = out
            .lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("{id} not in\n{out}"));
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells, [id, "pass", "fail", "ok"], "{out}");
    }
    assert!(
        out.contains(&format!("{} task(s) hold", present.len())),
        "{out}"
    );

    // A test file changed in the workspace fails the second check.
    let task = &suite.tasks[4];
    let ws = Workspace::create(task, false).unwrap();
    std::fs::write(ws.path().join("reverse_string_test.py"), "").unwrap();
    let home = tempfile::tempdir().unwrap();
    let env = run_env(
        &base_env(std::env::vars()),
        home.path(),
        home.path(),
        &task.env,
    );
    let results = run_checks(task, ws.path(), &env).await.unwrap();
    assert!(!results[1].passed, "{results:#?}");

    // Importing again changes nothing, byte for byte, and says so.
    let before = snapshot(&into);
    let (code, out, _) = import(&source, &into, &[]);
    assert_eq!(code, 0);
    assert!(
        out.contains("new 0, updated 0, unchanged 6; skipped 0"),
        "{out}"
    );
    assert_eq!(snapshot(&into), before);

    // A changed stub updates that task only, and names the file.
    write(
        &source.join("python/exercises/practice/reverse-string/reverse_string.py"),
        "def reverse(text):\n    raise NotImplementedError\n",
    );
    let (code, out, err) = import(&source, &into, &["--language", "python"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("(python 1): new 0, updated 1, unchanged 0"),
        "{out}"
    );
    assert!(
        err.contains("updated python-reverse-string: repo/reverse_string.py"),
        "{err}"
    );
}

#[test]
fn bad_exercises_are_skipped_with_their_path_and_the_rest_imported() {
    let dir = tempfile::tempdir().unwrap();
    let track = dir.path().join("python");
    let practice = track.join("exercises/practice");
    let good = |name: &str| {
        exercise(
            &practice.join(name),
            &["a.py"],
            &["a_test.py"],
            &[".meta/example.py"],
            &[
                (".docs/instructions.md", INSTRUCTIONS),
                ("a.py", ""),
                ("a_test.py", "import unittest\n"),
                (".meta/example.py", "x = 1\n"),
            ],
        )
    };
    good("fine");
    good("malformed");
    write(
        &practice.join("malformed/.meta/config.json"),
        "{\"files\": [",
    );
    good("no-instructions");
    std::fs::remove_file(practice.join("no-instructions/.docs/instructions.md")).unwrap();
    good("no-tests");
    std::fs::remove_file(practice.join("no-tests/a_test.py")).unwrap();
    good("no-reference");
    std::fs::remove_file(practice.join("no-reference/.meta/example.py")).unwrap();
    // A track of a language without a recipe.
    let cobol = dir.path().join("cobol/exercises/practice/hello");
    exercise(
        &cobol,
        &["hello.cob"],
        &["test.cob"],
        &[".meta/example.cob"],
        &[(".docs/instructions.md", INSTRUCTIONS)],
    );

    let into = dir.path().join("tasks");
    let (code, out, err) = import(dir.path(), &into, &[]);
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(out.contains("imported 1 exercises"), "{out}");
    let p = |rel: &str| dir.path().join(rel).display().to_string();
    let expected = [
        format!(
            "skipped {}: unknown language `cobol` (the track folder's name); harness has recipes for cpp, go, java, javascript, python, rust",
            p("cobol/exercises/practice/hello")
        ),
        format!(
            "skipped {}: malformed config.json: EOF while parsing a list at line 1 column 11",
            p("python/exercises/practice/malformed/.meta/config.json")
        ),
        format!(
            "skipped {}: missing: the exercise has no instructions",
            p("python/exercises/practice/no-instructions/.docs/instructions.md")
        ),
        format!(
            "skipped {}: missing: the reference solution file config.json names is not there",
            p("python/exercises/practice/no-reference/.meta/example.py")
        ),
        format!(
            "skipped {}: missing: the test file config.json names is not there",
            p("python/exercises/practice/no-tests/a_test.py")
        ),
    ];
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("skipped ")).collect();
    assert_eq!(lines, expected, "{err}");
    assert!(load_suite(&into).unwrap().tasks.len() == 1);

    // Nothing to import at all is a usage error naming the folder.
    let (code, _, err) = import(&dir.path().join("python/exercises"), &into, &[]);
    assert_eq!(code, 2);
    assert!(err.starts_with("error: no Exercism exercises in"), "{err}");
}
