//! One recipe per Exercism language: the command that runs the exercise's tests (written into
//! `task.yaml` as its check), what that command needs on the machine (`requires:`), the
//! variables it reads, how the track's tests are switched on (Exercism skips all but the first
//! test in some tracks), and which extra reference files a track keeps in `.meta/`.
//!
//! The commands work offline: the runner's `isolated` sandbox has no network. Depends on
//! `tasks` (for [`Requires`]) only.

use crate::tasks::Requires;

/// The languages a recipe exists for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Language {
    Cpp,
    Go,
    Java,
    JavaScript,
    Python,
    Rust,
}

impl Language {
    /// Every language, in the order of their track names.
    pub const ALL: [Language; 6] = [
        Language::Cpp,
        Language::Go,
        Language::Java,
        Language::JavaScript,
        Language::Python,
        Language::Rust,
    ];

    /// The language of an Exercism track, by its slug (`cpp`, `javascript`, ...).
    pub fn from_track(slug: &str) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.slug() == slug)
    }

    /// The track slug, also the task id prefix and tag.
    pub fn slug(self) -> &'static str {
        match self {
            Language::Cpp => "cpp",
            Language::Go => "go",
            Language::Java => "java",
            Language::JavaScript => "javascript",
            Language::Python => "python",
            Language::Rust => "rust",
        }
    }

    /// The name the prompt uses.
    pub fn display(self) -> &'static str {
        match self {
            Language::Cpp => "C++",
            Language::Go => "Go",
            Language::Java => "Java",
            Language::JavaScript => "JavaScript",
            Language::Python => "Python",
            Language::Rust => "Rust",
        }
    }

    /// The slugs of every language, for messages.
    pub fn known() -> String {
        Language::ALL.map(Language::slug).join(", ")
    }
}

/// Where the Java recipe finds JUnit's console launcher and AssertJ (Debian's `junit5` and
/// `libassertj-core-java`); the task's `env:` may point elsewhere.
pub const JUNIT_CONSOLE_JAR: &str = "/usr/share/java/junit-platform-console-standalone.jar";
/// See [`JUNIT_CONSOLE_JAR`].
pub const ASSERTJ_JAR: &str = "/usr/share/java/assertj-core.jar";

/// A header of Boost's date_time (Debian's `libboost-date-time-dev`), which two C++ exercises
/// build against.
pub const BOOST_HEADER: &str = "/usr/include/boost/date_time.hpp";

/// The folder, inside the tasks folder, of the JavaScript exercises' shared dependency install
/// (a leading `_` keeps the suite loader out of it).
pub const NODE_DEPS_DIR: &str = "_exercism/javascript";

/// What the import knows about one exercise when it picks its recipe.
#[derive(Debug, Clone)]
pub struct ExerciseFacts<'a> {
    /// The exercise's slug (its folder's name).
    pub slug: &'a str,
    /// The test files (relative to the exercise folder), after the tests were switched on.
    pub tests: &'a [(String, String)],
    /// `build.gradle`, for Java.
    pub gradle: Option<&'a str>,
    /// `CMakeLists.txt`, for C++.
    pub cmake: Option<&'a str>,
    /// The absolute `node_modules` of the shared JavaScript install.
    pub node_modules: Option<&'a str>,
}

/// A check command and what it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipe {
    /// The check's name and its `bash -c` command, run in the workspace.
    pub run: String,
    pub requires: Requires,
    /// Variables the command reads (`env:` of `task.yaml`).
    pub env: Vec<(String, String)>,
}

/// The recipe of `language` for the exercise of `facts`, or why there is none.
pub fn recipe(language: Language, facts: &ExerciseFacts<'_>) -> Result<Recipe, String> {
    let programs = |names: &[&str]| names.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let recipe = match language {
        Language::Python => {
            let files: Vec<&str> = facts.tests.iter().map(|(p, _)| p.as_str()).collect();
            let uses_pytest = facts.tests.iter().any(|(_, text)| {
                text.lines().any(|l| {
                    let l = l.trim_start();
                    l.starts_with("import pytest") || l.starts_with("from pytest")
                })
            });
            if uses_pytest {
                Recipe {
                    run: format!("python3 -m pytest -q {}", quote_all(&files)),
                    requires: Requires {
                        programs: programs(&["python3"]),
                        python_modules: vec!["pytest".into()],
                        ..Requires::default()
                    },
                    env: vec![],
                }
            } else {
                Recipe {
                    run: format!("python3 -m unittest {}", quote_all(&files)),
                    requires: Requires {
                        programs: programs(&["python3"]),
                        ..Requires::default()
                    },
                    env: vec![],
                }
            }
        }
        Language::Rust => Recipe {
            // Exercism marks all but the first test `#[ignore]`; they all count here.
            run: "cargo test --offline -- --include-ignored".into(),
            requires: Requires {
                programs: programs(&["cargo"]),
                ..Requires::default()
            },
            env: vec![],
        },
        Language::Go => Recipe {
            run: "go test ./...".into(),
            requires: Requires {
                programs: programs(&["go"]),
                ..Requires::default()
            },
            // Offline: no module downloads, no toolchain switch to the version go.mod names.
            env: vec![
                ("GOPROXY".into(), "off".into()),
                ("GOTOOLCHAIN".into(), "local".into()),
            ],
        },
        Language::JavaScript => {
            let node_modules = facts
                .node_modules
                .ok_or("no shared JavaScript install to point the tests at")?;
            Recipe {
                run:
                    "[ -e node_modules ] || ln -s \"$EXERCISM_NODE_MODULES\" node_modules\nnpm test"
                        .into(),
                requires: Requires {
                    programs: programs(&["node", "npm"]),
                    files: vec![node_modules.to_owned()],
                    hint: Some(format!(
                        "install the JavaScript exercises' shared dependencies: `npm install` in {} \
                         (`harness import exercism` does it unless given --no-install)",
                        std::path::Path::new(node_modules)
                            .parent()
                            .map_or_else(String::new, |p| p.display().to_string())
                    )),
                    ..Requires::default()
                },
                env: vec![
                    ("EXERCISM_NODE_MODULES".into(), node_modules.to_owned()),
                    ("NPM_CONFIG_UPDATE_NOTIFIER".into(), "false".into()),
                ],
            }
        }
        Language::Cpp => {
            // The track's CMakeLists.txt names the project, the sources and the test after its
            // folder, and the workspace folder has another name: the build runs on a copy in a
            // folder named after the exercise. The build runs the test binary.
            let mut requires = Requires {
                programs: programs(&["cmake", "make", "g++"]),
                ..Requires::default()
            };
            if facts
                .cmake
                .is_some_and(|c| c.contains("find_package(Boost"))
            {
                requires.files.push(BOOST_HEADER.into());
                requires.hint = Some(
                    "install CMake, make, g++ and Boost's date_time (Debian: `apt-get install \
                     cmake make g++ libboost-date-time-dev`)"
                        .into(),
                );
            }
            Recipe {
                run: format!(
                    "src=\"${{TMPDIR:-/tmp}}/harness-cmake/{slug}\" && rm -rf \"$src\" && mkdir -p \"$src\" && cp -r . \"$src\" && \\\n\
                     cmake -S \"$src\" -B \"$src/build\" -DEXERCISM_RUN_ALL_TESTS=ON > /dev/null && \\\n\
                     cmake --build \"$src/build\"",
                    slug = facts.slug
                ),
                requires,
                env: vec![],
            }
        }
        Language::Java => {
            if let Some(gradle) = facts.gradle {
                let extra = gradle_dependencies(gradle);
                if !extra.is_empty() {
                    return Err(format!(
                        "build.gradle needs {} from Maven Central; the offline Java recipe has \
                         only JUnit 5 and AssertJ",
                        extra.join(", ")
                    ));
                }
            }
            Recipe {
                // Gradle would download itself and the test libraries; javac and JUnit's
                // console launcher need neither.
                run: "rm -rf build/harness && mkdir -p build/harness\n\
                      javac -nowarn -encoding UTF-8 -d build/harness -cp \"$JUNIT_CONSOLE_JAR:$ASSERTJ_JAR\" $(find src/main/java src/test/java -name '*.java')\n\
                      java -jar \"$JUNIT_CONSOLE_JAR\" --disable-banner --details=tree --fail-if-no-tests -cp \"build/harness:$ASSERTJ_JAR\" --scan-class-path"
                    .replace('\n', " && \\\n"),
                requires: Requires {
                    programs: programs(&["java", "javac"]),
                    files: vec![JUNIT_CONSOLE_JAR.into(), ASSERTJ_JAR.into()],
                    hint: Some(
                        "install a JDK, JUnit 5 and AssertJ (Debian: `apt-get install \
                         default-jdk-headless junit5 libassertj-core-java`), or point \
                         JUNIT_CONSOLE_JAR and ASSERTJ_JAR in the task's env at the jars"
                            .into(),
                    ),
                    ..Requires::default()
                },
                env: vec![
                    ("ASSERTJ_JAR".into(), ASSERTJ_JAR.into()),
                    ("JUNIT_CONSOLE_JAR".into(), JUNIT_CONSOLE_JAR.into()),
                ],
            }
        }
    };
    Ok(recipe)
}

/// The test file as the check runs it: Exercism's JavaScript track skips all but the first
/// test (`xtest`), its Java track disables them (`@Disabled`); both are switched on. (Rust's
/// `#[ignore]` is lifted by the command, C++'s by `EXERCISM_RUN_ALL_TESTS`.)
pub fn enable_tests(language: Language, text: &str) -> String {
    match language {
        Language::JavaScript => {
            static SKIPPED: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
            let re = SKIPPED.get_or_init(|| {
                regex::Regex::new(r"\bx(test|it|describe)\(").expect("a valid regex")
            });
            re.replace_all(text, "$1(").into_owned()
        }
        Language::Java => {
            let mut out = String::with_capacity(text.len());
            for line in text.split_inclusive('\n') {
                let t = line.trim();
                let disabled =
                    t == "@Disabled" || (t.starts_with("@Disabled(") && t.ends_with(')'));
                if !disabled {
                    out.push_str(line);
                }
            }
            out
        }
        _ => text.to_owned(),
    }
}

/// Where a reference file of `.meta/` goes in the solution when the track's config does not
/// say (Rust's `Cargo-example.toml`, the manifest of a reference that uses crates).
pub fn extra_reference_files(language: Language) -> &'static [(&'static str, &'static str)] {
    match language {
        Language::Rust => &[(".meta/Cargo-example.toml", "Cargo.toml")],
        _ => &[],
    }
}

/// The non-test dependencies of a `build.gradle` (`implementation "group:name:version"`).
fn gradle_dependencies(gradle: &str) -> Vec<String> {
    gradle
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("implementation ") || l.starts_with("implementation("))
        .filter_map(|l| {
            let start = l.find(['"', '\''])?;
            let rest = &l[start + 1..];
            let end = rest.find(['"', '\''])?;
            Some(format!("`{}`", &rest[..end]))
        })
        .collect()
}

/// Each path single-quoted for bash when it needs it.
fn quote_all(paths: &[&str]) -> String {
    paths
        .iter()
        .map(|p| {
            if p.chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c))
            {
                (*p).to_owned()
            } else {
                format!("'{}'", p.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skipped_javascript_and_disabled_java_tests_are_switched_on() {
        assert_eq!(
            enable_tests(
                Language::JavaScript,
                "test('a', () => {});\nxtest('b', () => {});\nxit('c');\nxdescribe('d');\nmaxtest(1);\n"
            ),
            "test('a', () => {});\ntest('b', () => {});\nit('c');\ndescribe('d');\nmaxtest(1);\n"
        );
        assert_eq!(
            enable_tests(
                Language::Java,
                "    @Disabled(\"Remove to run test\")\n    @Test\n    @Disabled\n    void a() {}\n"
            ),
            "    @Test\n    void a() {}\n"
        );
        assert_eq!(enable_tests(Language::Rust, "#[ignore]\n"), "#[ignore]\n");
    }

    #[test]
    fn java_with_maven_dependencies_has_no_offline_recipe() {
        let gradle = "dependencies {\n    implementation \"org.json:json:20190722\"\n    testImplementation \"org.junit.jupiter:junit-jupiter\"\n}\n";
        let facts = ExerciseFacts {
            slug: "x",
            tests: &[],
            gradle: Some(gradle),
            cmake: None,
            node_modules: None,
        };
        assert_eq!(
            recipe(Language::Java, &facts).unwrap_err(),
            "build.gradle needs `org.json:json:20190722` from Maven Central; the offline Java \
             recipe has only JUnit 5 and AssertJ"
        );
    }

    #[test]
    fn python_uses_pytest_only_when_a_test_imports_it() {
        let plain = [("a_test.py".to_owned(), "import unittest\n".to_owned())];
        let facts = ExerciseFacts {
            slug: "a",
            tests: &plain,
            gradle: None,
            cmake: None,
            node_modules: None,
        };
        let r = recipe(Language::Python, &facts).unwrap();
        assert_eq!(r.run, "python3 -m unittest a_test.py");
        assert!(r.requires.python_modules.is_empty());
        let with = [("a test.py".to_owned(), "import pytest\n".to_owned())];
        let facts = ExerciseFacts {
            tests: &with,
            ..facts
        };
        let r = recipe(Language::Python, &facts).unwrap();
        assert_eq!(r.run, "python3 -m pytest -q 'a test.py'");
        assert_eq!(r.requires.python_modules, ["pytest"]);
    }
}
