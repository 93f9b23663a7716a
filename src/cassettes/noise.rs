//! The built-in normalisation rules for volatile tool output: what every common test runner and
//! shell tool prints that differs between two identical runs (durations, dates, process ids, the
//! random name of bash's full-output file), so a replay of an unchanged run matches its cassette
//! without any rule the user writes.
//!
//! Like a task's `normalize` rules they are applied at compare time to both the recorded and the
//! new request ([`super::normalize::apply_rules`]), so a new rule never forces a re-record. A task
//! or `tasks/defaults.yaml` turns them off with `normalize_defaults: false`. Every rule is listed,
//! with an example, in [`NOISE.md`](NOISE.md), and tested against a match and a near miss that
//! must still differ: they are anchored on each tool's exact phrasing (a whole line where the
//! tool prints one) so that a number in code or in a file's content is left alone wherever the
//! two cannot be told apart by their shape.
//!
//! Pure data and regexes; depends on [`super::normalize`] only.

use std::sync::OnceLock;

use super::normalize::{NormalizeRule, Rules};

/// What bash's full-output file path is compared as (the file is named at random outside the
/// workspace: `/tmp/harness-bash-XXXX/pi-bash-<16 hex>.log`).
pub const BASH_OUTPUT_PLACEHOLDER: &str = "<bash-output>/pi-bash.log";

/// One built-in rule, with the documentation shown in `NOISE.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoiseRule {
    /// A stable, kebab-case name (`python-unittest`).
    pub name: &'static str,
    /// What it normalises, in a few words.
    pub what: &'static str,
    /// The regex (Rust `regex` syntax; `(?m)` rules anchor on whole lines).
    pub pattern: &'static str,
    /// The replacement (`$1`, `${1}` groups allowed).
    pub replacement: &'static str,
    /// A line the rule normalises, as the tool prints it.
    pub example: &'static str,
    /// Applied even when a task sets `normalize_defaults: false`: the text is the harness's own
    /// doing (like the workspace path), not the tool's.
    pub always: bool,
}

// `ls -l` building blocks: permissions (with an optional ACL/SELinux marker), the size column
// (bytes, `-h` sizes, a device's `major, minor`, or an already normalised `<size>`) and the date
// column in the C locale's two forms, `--full-time` and the ISO styles.
macro_rules! ls_perms {
    () => {
        r"[-bcdlps][r-][w-][xsS-][r-][w-][xsS-][r-][w-][xtT-][.+@]?"
    };
}
macro_rules! ls_size {
    () => {
        r"(?:\d+, +\d+|\d+(?:[.,]\d+)?[KMGTPEZY]?|<size>)"
    };
}
macro_rules! ls_date {
    () => {
        r"(?:[A-Z][a-z]{2} [ \d]\d (?:\d{2}:\d{2}| \d{4})|\d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?: [+-]\d{4})?|<date>)"
    };
}

macro_rules! weekday {
    () => {
        "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
    };
}
macro_rules! month {
    () => {
        "(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
    };
}

/// Every built-in rule, in the order they are applied.
pub const RULES: &[NoiseRule] = &[
    NoiseRule {
        name: "bash-output-path",
        what: "the random path of bash's full-output file, in its truncation notice",
        pattern: r"[^\s\]]*pi-bash-[0-9a-f]{16}\.log",
        replacement: BASH_OUTPUT_PLACEHOLDER,
        example: "[Showing lines 2-2001 of 2001. Full output: /tmp/harness-bash-Xy12ab/pi-bash-00ff1e2d3c4b5a69.log]",
        always: true,
    },
    NoiseRule {
        name: "python-unittest",
        what: "the run time in Python unittest's summary line",
        pattern: r"(?m)^(Ran \d+ tests? in )\d+\.\d+s$",
        replacement: "${1}<duration>",
        example: "Ran 3 tests in 0.002s",
        always: false,
    },
    NoiseRule {
        name: "pytest-summary",
        what: "the run time in pytest's closing line (with or without the `=` bar)",
        pattern: r"(?m)^(=+ )?((?:\d+ (?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?|rerun)(?:, )?)+|no tests ran) in \d+(?:\.\d+)?s(?: \(\d+:\d{2}:\d{2}\))?( =+)?$",
        replacement: "${1}${2} in <duration>${3}",
        example: "======== 1 failed, 2 passed, 1 warning in 1.03s ========",
        always: false,
    },
    NoiseRule {
        name: "pytest-durations",
        what: "the times of pytest's `--durations` table",
        pattern: r"(?m)^\d+\.\d+s( +(?:call|setup|teardown) +\S+)$",
        replacement: "<duration>${1}",
        example: "0.12s call     tests/test_api.py::test_login",
        always: false,
    },
    NoiseRule {
        name: "node-test-duration",
        what: "`duration_ms` of node's test runner (TAP per-test blocks and summary, spec summary)",
        pattern: r"(?m)^((?:#|ℹ) duration_ms |[ \t]+duration_ms: )\d+(?:\.\d+)?$",
        replacement: "${1}<duration>",
        example: "# duration_ms 189.98362",
        always: false,
    },
    NoiseRule {
        name: "test-line-duration",
        what: "the time after a test name in node's spec reporter, jest and mocha (`✔ name (5.1ms)`)",
        pattern: r"(?m)^([ \t]*[✔✓✖✕×√﹣] .*?) \(\d+(?:\.\d+)? ?ms\)( # (?:SKIP|TODO)\b.*)?$",
        replacement: "${1} (<duration>)${2}",
        example: "✔ adds two numbers (5.108589ms)",
        always: false,
    },
    NoiseRule {
        name: "jest-time",
        what: "jest's `Time:` summary line",
        pattern: r"(?m)^(Time: +)\d+(?:\.\d+)? ?m?s(?:, estimated \d+(?:\.\d+)? ?m?s)?$",
        replacement: "${1}<duration>",
        example: "Time:        1.234 s, estimated 2 s",
        always: false,
    },
    NoiseRule {
        name: "jest-suite",
        what: "the time jest shows after a slow test file's `PASS`/`FAIL` line",
        pattern: r"(?m)^((?:PASS|FAIL) +\S+) \(\d+(?:\.\d+)? ?m?s\)$",
        replacement: "${1} (<duration>)",
        example: "PASS src/sum.test.js (5.123 s)",
        always: false,
    },
    NoiseRule {
        name: "vitest-duration",
        what: "vitest's `Duration` summary line and its breakdown",
        pattern: r"(?m)^([ \t]*Duration +)\d+(?:\.\d+)?m?s(?: \([a-z]+ \d+(?:\.\d+)?m?s(?:, [a-z]+ \d+(?:\.\d+)?m?s)*\))?$",
        replacement: "${1}<duration>",
        example: "   Duration  512ms (transform 20ms, setup 0ms, collect 15ms, tests 3ms, environment 0ms, prepare 60ms)",
        always: false,
    },
    NoiseRule {
        name: "vitest-start",
        what: "vitest's `Start at` clock time",
        pattern: r"(?m)^([ \t]*Start at +)\d{2}:\d{2}:\d{2}$",
        replacement: "${1}<time>",
        example: "   Start at  08:57:31",
        always: false,
    },
    NoiseRule {
        name: "vitest-file",
        what: "the time after a test file's line in vitest",
        pattern: r"(?m)^([ \t]*[✓❯×↓] \S+ \(\d+ tests?(?: \| \d+ [a-z]+)*\)) \d+(?:\.\d+)?m?s$",
        replacement: "${1} <duration>",
        example: " ✓ src/sum.test.ts (3 tests) 5ms",
        always: false,
    },
    NoiseRule {
        name: "mocha-passing",
        what: "the run time in mocha's `N passing` line",
        pattern: r"(?m)^([ \t]*\d+ passing \()\d+(?:\.\d+)?(?:ms|s|m)\)$",
        replacement: "${1}<duration>)",
        example: "  3 passing (12ms)",
        always: false,
    },
    NoiseRule {
        name: "cargo-test-result",
        what: "`finished in` of cargo test's result line",
        pattern: r"(?m)^(test result: (?:ok|FAILED)\. \d+ passed; \d+ failed; .*; finished in )\d+\.\d+s$",
        replacement: "${1}<duration>",
        example: "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
        always: false,
    },
    NoiseRule {
        name: "cargo-finished",
        what: "the build time in cargo's `Finished` line",
        pattern: r"(?m)^([ \t]+Finished .*target\(s\) in )(?:\d+m )?\d+(?:\.\d+)?s$",
        replacement: "${1}<duration>",
        example: "    Finished `test` profile [unoptimized + debuginfo] target(s) in 1.23s",
        always: false,
    },
    NoiseRule {
        name: "go-test-package",
        what: "the time (or `(cached)`) in go test's per-package line",
        pattern: r"(?m)^((?:ok  |FAIL)\t\S+\t)(?:\d+\.\d+s|\(cached\))",
        replacement: "${1}<duration>",
        example: "ok  \texample.com/calc\t0.012s",
        always: false,
    },
    NoiseRule {
        name: "go-test-case",
        what: "the time in go test's `--- PASS: TestX (0.00s)` lines",
        pattern: r"(?m)^([ \t]*--- (?:PASS|FAIL|SKIP): \S+ \()\d+\.\d+s\)$",
        replacement: "${1}<duration>)",
        example: "--- PASS: TestAdd (0.00s)",
        always: false,
    },
    NoiseRule {
        name: "shell-time",
        what: "the figures of bash's `time` keyword",
        pattern: r"(?m)^((?:real|user|sys)\t)\d+m\d+[.,]\d+s$",
        replacement: "${1}<duration>",
        example: "real\t0m0.003s",
        always: false,
    },
    NoiseRule {
        name: "ls-long-total",
        what: "the block count above an `ls -l` listing (it depends on the file system)",
        pattern: concat!(
            r"(?m)^total \d+(?:[.,]\d+)?[KMGTPEZY]?\n(",
            ls_perms!(),
            " )"
        ),
        replacement: "total <blocks>\n${1}",
        example: "total 12\n-rw-r--r-- 1 alice staff 120 Jan  1  2000 README.md",
        always: false,
    },
    NoiseRule {
        name: "ls-long-dir-size",
        what: "the size of a folder in `ls -l` (it depends on the file system)",
        pattern: concat!(
            r"(?m)^(d[r-][w-][xsS-][r-][w-][xsS-][r-][w-][xtT-][.+@]? +\d+ +\S+ +\S+ +)\d+( +",
            ls_date!(),
            " )"
        ),
        replacement: "${1}<size>${2}",
        example: "drwxr-xr-x 2 alice staff 4096 Jan  1  2000 src",
        always: false,
    },
    NoiseRule {
        name: "ls-long-owner",
        what: "the owner and group in `ls -l` (the user the harness runs as)",
        pattern: concat!(
            "(?m)^(",
            ls_perms!(),
            r" +\d+ )\S+ +\S+ +(",
            ls_size!(),
            " +",
            ls_date!(),
            " )"
        ),
        replacement: "${1}<user> <group> ${2}",
        example: "-rw-r--r-- 1 alice staff 120 Jan  1  2000 README.md",
        always: false,
    },
    NoiseRule {
        name: "ls-long-date",
        what: "the date in `ls -l`, in its `Mon DD HH:MM`, `Mon DD  YYYY`, `--full-time` and ISO forms",
        pattern: concat!(
            "(?m)^(",
            ls_perms!(),
            r" +\d+ +\S+ +\S+ +",
            ls_size!(),
            " +)",
            ls_date!(),
            "( )"
        ),
        replacement: "${1}<date>${2}",
        example: "-rw-r--r-- 1 alice staff 38 Dec  1 08:57 notes.txt",
        always: false,
    },
    NoiseRule {
        name: "stat-device-inode",
        what: "the device and inode numbers in `stat` output",
        pattern: r"(?m)^Device: \S+([ \t]+)Inode: \d+([ \t]+Links: \d+)",
        replacement: "Device: <device>${1}Inode: <inode>${2}",
        example: "Device: 803h/2051d\tInode: 1234567     Links: 1",
        always: false,
    },
    NoiseRule {
        name: "stat-owner",
        what: "the owner and group in `stat` output",
        pattern: r"(?m)^(Access: \([0-7]{4}/[-a-zA-Z]{10}\)[ \t]+)Uid: \([ \t]*\d+/[ \t]*\S+\)([ \t]+)Gid: \([ \t]*\d+/[ \t]*\S+\)$",
        replacement: "${1}Uid: (<user>)${2}Gid: (<group>)",
        example: "Access: (0644/-rw-r--r--)  Uid: ( 1000/   alice)   Gid: ( 1000/   staff)",
        always: false,
    },
    NoiseRule {
        name: "iso-timestamp",
        what: "ISO 8601 / RFC 3339 timestamps with seconds (a bare date is kept)",
        pattern: r"\b\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])[T ](?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:[.,]\d{1,9})?(?:Z|[+-][01]\d:?[0-5]\d| [+-]\d{4})?",
        replacement: "<timestamp>",
        example: "built at 2026-12-01T08:57:31.123456+00:00",
        always: false,
    },
    NoiseRule {
        name: "date-default",
        what: "`date`'s default output (C locale), `date -R` and Python's `time.ctime()`",
        pattern: concat!(
            r"\b(?:",
            weekday!(),
            " ",
            month!(),
            r" [ \d]\d (?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?: (?:[A-Z]{1,5}|[+-]\d{4}))? \d{4}|",
            weekday!(),
            r", \d{2} ",
            month!(),
            r" \d{4} (?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d [+-]\d{4})\b"
        ),
        replacement: "<date>",
        example: "Tue Dec  1 08:57:31 UTC 2026",
        always: false,
    },
    NoiseRule {
        name: "bash-job-pid",
        what: "the process id in bash's job lines (`[1] 12345`, `jobs -l`)",
        pattern: r"(?m)^(\[\d+\][+-]? +)\d+( +(?:Running|Done|Exit \d+|Stopped|Terminated|Killed)\b.*)?$",
        replacement: "${1}<pid>${2}",
        example: "[1] 12345",
        always: false,
    },
    NoiseRule {
        name: "bash-killed-pid",
        what: "the process id in bash's notice of a killed or terminated job",
        pattern: r"(?m)^(\S*bash: line \d+: +)\d+( (?:Killed|Terminated|Aborted|Segmentation fault|Hangup|Done)\b)",
        replacement: "${1}<pid>${2}",
        example: "bash: line 1: 4242 Killed                  sleep 10",
        always: false,
    },
];

/// Every built-in rule, compiled once per process (cloning a compiled regex is cheap).
fn compiled() -> &'static [(NoiseRule, NormalizeRule)] {
    static COMPILED: OnceLock<Vec<(NoiseRule, NormalizeRule)>> = OnceLock::new();
    COMPILED.get_or_init(|| {
        RULES
            .iter()
            .map(|r| {
                let rule = NormalizeRule::new(r.pattern, r.replacement)
                    .unwrap_or_else(|e| panic!("built-in rule {}: {e}", r.name));
                (*r, rule)
            })
            .collect()
    })
}

/// The rules a replay applies before the task's own: all of [`RULES`] when `defaults` (the
/// task's `normalize_defaults`), else only those marked [`NoiseRule::always`].
pub fn rules(defaults: bool) -> Rules {
    static SETS: OnceLock<[Rules; 2]> = OnceLock::new();
    let [always, all] = SETS.get_or_init(|| {
        let set = |defaults: bool| -> Rules {
            compiled()
                .iter()
                .filter(|(doc, _)| defaults || doc.always)
                .map(|(_, rule)| rule.clone())
                .collect()
        };
        [set(false), set(true)]
    });
    if defaults {
        all.clone()
    } else {
        always.clone()
    }
}

/// Every built-in rule, compiled: `rules(true)`.
pub fn default_rules() -> Rules {
    rules(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassettes::normalize::apply_rules;

    fn norm(s: &str) -> String {
        apply_rules(s, &default_rules())
    }

    fn rule(name: &str) -> &'static NoiseRule {
        RULES
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("no rule {name}"))
    }

    /// Only `name` applied to `s`.
    fn only(name: &str, s: &str) -> String {
        let r = rule(name);
        let compiled = compiled()
            .iter()
            .find(|(doc, _)| doc.name == r.name)
            .map(|(_, rule)| rule.clone())
            .unwrap();
        apply_rules(s, &[compiled])
    }

    /// (rule, input, what the rule alone makes of it).
    const MATCHES: &[(&str, &str, &str)] = &[
        (
            "bash-output-path",
            "[Showing lines 2-2001 of 2001. Full output: /tmp/harness-bash-Xy12ab/pi-bash-00ff1e2d3c4b5a69.log]",
            "[Showing lines 2-2001 of 2001. Full output: <bash-output>/pi-bash.log]",
        ),
        (
            "python-unittest",
            "..F\nRan 3 tests in 0.002s\n\nFAILED (failures=1)",
            "..F\nRan 3 tests in <duration>\n\nFAILED (failures=1)",
        ),
        (
            "python-unittest",
            "Ran 1 test in 12.500s",
            "Ran 1 test in <duration>",
        ),
        (
            "pytest-summary",
            "3 passed in 0.12s",
            "3 passed in <duration>",
        ),
        (
            "pytest-summary",
            "======== 1 failed, 2 passed, 1 warning in 1.03s ========",
            "======== 1 failed, 2 passed, 1 warning in <duration> ========",
        ),
        (
            "pytest-summary",
            "2 passed in 75.20s (0:01:15)",
            "2 passed in <duration>",
        ),
        (
            "pytest-summary",
            "=== no tests ran in 0.01s ===",
            "=== no tests ran in <duration> ===",
        ),
        (
            "pytest-durations",
            "0.12s call     tests/test_api.py::test_login",
            "<duration> call     tests/test_api.py::test_login",
        ),
        (
            "node-test-duration",
            "ok 1 - adds\n  ---\n  duration_ms: 1.047893\n  ...",
            "ok 1 - adds\n  ---\n  duration_ms: <duration>\n  ...",
        ),
        (
            "node-test-duration",
            "# pass 1\n# duration_ms 189.98362",
            "# pass 1\n# duration_ms <duration>",
        ),
        (
            "node-test-duration",
            "ℹ fail 0\nℹ duration_ms 295.08696",
            "ℹ fail 0\nℹ duration_ms <duration>",
        ),
        (
            "test-line-duration",
            "✔ adds two numbers (5.108589ms)\n✖ fails (1.064728ms)",
            "✔ adds two numbers (<duration>)\n✖ fails (<duration>)",
        ),
        (
            "test-line-duration",
            "    ✓ renders the list (3 ms)",
            "    ✓ renders the list (<duration>)",
        ),
        (
            "test-line-duration",
            "﹣ slow path (0.2ms) # SKIP",
            "﹣ slow path (<duration>) # SKIP",
        ),
        (
            "jest-time",
            "Tests:       3 passed, 3 total\nTime:        1.234 s, estimated 2 s",
            "Tests:       3 passed, 3 total\nTime:        <duration>",
        ),
        (
            "jest-suite",
            "PASS src/sum.test.js (5.123 s)\nFAIL src/api.test.js (12 ms)",
            "PASS src/sum.test.js (<duration>)\nFAIL src/api.test.js (<duration>)",
        ),
        (
            "vitest-duration",
            "   Duration  512ms (transform 20ms, setup 0ms, collect 15ms, tests 3ms, environment 0ms, prepare 60ms)",
            "   Duration  <duration>",
        ),
        (
            "vitest-start",
            "   Start at  08:57:31",
            "   Start at  <time>",
        ),
        (
            "vitest-file",
            " ✓ src/sum.test.ts (3 tests) 5ms",
            " ✓ src/sum.test.ts (3 tests) <duration>",
        ),
        (
            "vitest-file",
            " ❯ src/sum.test.ts (3 tests | 1 failed) 7ms",
            " ❯ src/sum.test.ts (3 tests | 1 failed) <duration>",
        ),
        (
            "mocha-passing",
            "  3 passing (12ms)",
            "  3 passing (<duration>)",
        ),
        (
            "mocha-passing",
            "  12 passing (2s)",
            "  12 passing (<duration>)",
        ),
        (
            "cargo-test-result",
            "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
            "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in <duration>",
        ),
        (
            "cargo-finished",
            "    Finished `test` profile [unoptimized + debuginfo] target(s) in 1.23s",
            "    Finished `test` profile [unoptimized + debuginfo] target(s) in <duration>",
        ),
        (
            "cargo-finished",
            "    Finished `release` profile [optimized] target(s) in 1m 02s",
            "    Finished `release` profile [optimized] target(s) in <duration>",
        ),
        (
            "go-test-package",
            "ok  \texample.com/calc\t0.012s\nFAIL\texample.com/api\t(cached)",
            "ok  \texample.com/calc\t<duration>\nFAIL\texample.com/api\t<duration>",
        ),
        (
            "go-test-package",
            "ok  \texample.com/calc\t0.012s\tcoverage: 80.0% of statements",
            "ok  \texample.com/calc\t<duration>\tcoverage: 80.0% of statements",
        ),
        (
            "go-test-case",
            "=== RUN   TestAdd\n--- PASS: TestAdd (0.00s)\n    --- FAIL: TestAdd/neg (0.01s)",
            "=== RUN   TestAdd\n--- PASS: TestAdd (<duration>)\n    --- FAIL: TestAdd/neg (<duration>)",
        ),
        (
            "shell-time",
            "\nreal\t0m0.003s\nuser\t0m0.001s\nsys\t0m0.002s",
            "\nreal\t<duration>\nuser\t<duration>\nsys\t<duration>",
        ),
        (
            "ls-long-total",
            "total 12\n-rw-r--r-- 1 alice staff 120 Jan  1  2000 README.md",
            "total <blocks>\n-rw-r--r-- 1 alice staff 120 Jan  1  2000 README.md",
        ),
        (
            "ls-long-dir-size",
            "drwxr-xr-x 2 alice staff 4096 Jan  1  2000 src",
            "drwxr-xr-x 2 alice staff <size> Jan  1  2000 src",
        ),
        (
            "ls-long-owner",
            "-rw-r--r-- 1 alice staff 120 Jan  1  2000 README.md\nlrwxrwxrwx  1 root  root    6 Dec  1 08:57 link -> README.md",
            "-rw-r--r-- 1 <user> <group> 120 Jan  1  2000 README.md\nlrwxrwxrwx  1 <user> <group> 6 Dec  1 08:57 link -> README.md",
        ),
        (
            "ls-long-date",
            "-rw-r--r-- 1 alice staff 38 Dec  1 08:57 notes.txt\n-rwxr-xr-x. 1 alice staff 1.2K Jan  1  2000 run.sh",
            "-rw-r--r-- 1 alice staff 38 <date> notes.txt\n-rwxr-xr-x. 1 alice staff 1.2K <date> run.sh",
        ),
        (
            "ls-long-date",
            "-rw-r--r-- 1 alice staff 38 2026-12-01 08:57:31.123456789 +0000 notes.txt",
            "-rw-r--r-- 1 alice staff 38 <date> notes.txt",
        ),
        (
            "ls-long-date",
            "-rw-r--r-- 1 alice staff 38 2026-12-01 08:57 notes.txt",
            "-rw-r--r-- 1 alice staff 38 <date> notes.txt",
        ),
        (
            "stat-device-inode",
            "Device: 803h/2051d\tInode: 1234567     Links: 1",
            "Device: <device>\tInode: <inode>     Links: 1",
        ),
        (
            "stat-owner",
            "Access: (0644/-rw-r--r--)  Uid: ( 1000/   alice)   Gid: ( 1000/   staff)",
            "Access: (0644/-rw-r--r--)  Uid: (<user>)   Gid: (<group>)",
        ),
        (
            "iso-timestamp",
            "built at 2026-12-01T08:57:31.123456+00:00; stat: 2026-12-01 08:57:31.123456789 +0000; log 2026-12-01 08:57:31,123 INFO; utc 2026-12-01T08:57:31Z",
            "built at <timestamp>; stat: <timestamp>; log <timestamp> INFO; utc <timestamp>",
        ),
        (
            "date-default",
            "Tue Dec  1 08:57:31 UTC 2026\nTue, 01 Dec 2026 08:57:31 +0000\nTue Dec  1 08:57:31 2026",
            "<date>\n<date>\n<date>",
        ),
        (
            "bash-job-pid",
            "[1] 12345\n[2]+ 12346 Running                 sleep 5 &",
            "[1] <pid>\n[2]+ <pid> Running                 sleep 5 &",
        ),
        (
            "bash-killed-pid",
            "bash: line 1: 4242 Killed                  sleep 10",
            "bash: line 1: <pid> Killed                  sleep 10",
        ),
    ];

    #[test]
    fn every_rule_normalises_its_matches() {
        for (name, input, want) in MATCHES {
            assert_eq!(&only(name, input), want, "rule {name} on {input:?}");
        }
        for r in RULES {
            assert!(
                MATCHES.iter().any(|(n, _, _)| *n == r.name),
                "rule {} has no match test",
                r.name
            );
            assert_ne!(
                only(r.name, r.example),
                r.example,
                "rule {}: its documented example is not normalised",
                r.name
            );
        }
    }

    /// Two outputs that differ in something real: after every default rule they must still differ.
    const NEAR_MISSES: &[(&str, &str, &str)] = &[
        (
            "bash-output-path",
            "Full output: /tmp/x/pi-bash-00ff1e2d3c4b5a69.log]",
            "Full output: /tmp/x/pi-bash-00ff1e2d3c4b5a6.log]",
        ),
        (
            "python-unittest",
            "Ran 3 tests in 0.002s",
            "Ran 4 tests in 0.002s",
        ),
        (
            "python-unittest",
            "Ran 3 tests in 0.002s\nOK",
            "Ran 3 tests in 0.002s\nFAILED (failures=1)",
        ),
        (
            "pytest-summary",
            "3 passed in 0.12s",
            "2 passed, 1 failed in 0.12s",
        ),
        (
            "pytest-durations",
            "0.12s call     tests/a.py::test_x",
            "0.12s call     tests/a.py::test_y",
        ),
        (
            "node-test-duration",
            "# tests 3\n# duration_ms 12.3",
            "# tests 4\n# duration_ms 12.3",
        ),
        ("node-test-duration", "# pass 3", "# pass 2"),
        ("test-line-duration", "✔ adds (5.1ms)", "✖ adds (5.1ms)"),
        ("test-line-duration", "✔ adds 2 (5ms)", "✔ adds 3 (5ms)"),
        (
            "jest-time",
            "Tests:       3 passed, 3 total",
            "Tests:       2 passed, 3 total",
        ),
        (
            "jest-suite",
            "PASS src/sum.test.js (5.123 s)",
            "FAIL src/sum.test.js (5.123 s)",
        ),
        (
            "vitest-duration",
            "   Test Files  1 passed (1)",
            "   Test Files  1 failed (1)",
        ),
        (
            "vitest-start",
            "   Start at  08:57:31",
            "   Stop at  08:57:32",
        ),
        (
            "vitest-file",
            " ✓ src/a.test.ts (3 tests) 5ms",
            " ✓ src/a.test.ts (4 tests) 5ms",
        ),
        ("mocha-passing", "  3 passing (12ms)", "  4 passing (12ms)"),
        (
            "mocha-passing",
            "  3 passing (12ms)\n  1 failing",
            "  3 passing (12ms)\n  2 failing",
        ),
        (
            "cargo-test-result",
            "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
            "test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
        ),
        (
            "cargo-finished",
            "    Finished `test` profile [unoptimized + debuginfo] target(s) in 1.23s",
            "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 1.23s",
        ),
        (
            "go-test-package",
            "ok  \texample.com/calc\t0.012s",
            "FAIL\texample.com/calc\t0.012s",
        ),
        (
            "go-test-case",
            "--- PASS: TestAdd (0.00s)",
            "--- FAIL: TestAdd (0.00s)",
        ),
        ("shell-time", "real\t0m0.003s", "real\t1m0.003s extra"),
        (
            "ls-long-total",
            "total 12\n-rw-r--r-- 1 a b 120 Jan  1  2000 x",
            "total 12\n-rw-r--r-- 1 a b 121 Jan  1  2000 x",
        ),
        (
            "ls-long-dir-size",
            "drwxr-xr-x 2 a b 4096 Jan  1  2000 src",
            "drwxr-xr-x 3 a b 4096 Jan  1  2000 src",
        ),
        (
            "ls-long-owner",
            "-rw-r--r-- 1 a b 120 Jan  1  2000 README.md",
            "-rwxr-xr-x 1 a b 120 Jan  1  2000 README.md",
        ),
        (
            "ls-long-date",
            "-rw-r--r-- 1 a b 38 Dec  1 08:57 notes.txt",
            "-rw-r--r-- 1 a b 38 Dec  1 08:57 notes.md",
        ),
        (
            "ls-long-date",
            "-rw-r--r-- 1 a b 38 Dec  1 08:57 notes.txt",
            "-rw-r--r-- 1 a b 39 Dec  1 08:57 notes.txt",
        ),
        (
            "stat-device-inode",
            "Device: 803h/2051d\tInode: 12     Links: 1",
            "Device: 803h/2051d\tInode: 12     Links: 2",
        ),
        (
            "stat-owner",
            "Access: (0644/-rw-r--r--)  Uid: ( 1000/   alice)   Gid: ( 1000/   staff)",
            "Access: (0755/-rwxr-xr-x)  Uid: ( 1000/   alice)   Gid: ( 1000/   staff)",
        ),
        (
            "iso-timestamp",
            "released 2026-12-01",
            "released 2026-12-02",
        ),
        ("iso-timestamp", "at 12:30:00", "at 12:30:01"),
        ("date-default", "Tue Dec  1", "Wed Dec  2"),
        (
            "bash-job-pid",
            "[1]+  Done                    true",
            "[1]+  Done                    false",
        ),
        ("bash-job-pid", "[12] 34 apples", "[12] 35 apples"),
        (
            "bash-killed-pid",
            "bash: line 1: 4242 Killed",
            "bash: line 2: 4242 Killed",
        ),
    ];

    #[test]
    fn near_misses_still_differ() {
        for (name, a, b) in NEAR_MISSES {
            assert_ne!(
                norm(a),
                norm(b),
                "rule {name}: {a:?} and {b:?} must still differ"
            );
        }
        for r in RULES {
            assert!(
                NEAR_MISSES.iter().any(|(n, _, _)| *n == r.name),
                "rule {} has no near-miss test",
                r.name
            );
        }
    }

    /// Text that merely looks like volatile output, inside code or a file's content, is kept.
    #[test]
    fn lookalikes_in_code_and_content_are_kept() {
        let kept = [
            "    print('Ran 3 tests in 0.002s')",
            "assert elapsed == '0.12s'",
            "const duration_ms = 12.3;",
            "timeout = 500ms",
            "    sleep(Duration::from_millis(5)); // (5ms)",
            "    3 passing tests (12ms budget)",
            "Time: 12:30",
            "see [1] 2019 edition",
            "the 2026-12-01 release",
            "Released Dec  1 2026",
            "1\tfoo\t0.012s",
            "-rw-r--r-- is the mode",
            "Ran 3 tests",
            "Duration 512ms of silence",
        ];
        for text in kept {
            assert_eq!(norm(text), text, "{text:?} must be kept as is");
        }
    }

    #[test]
    fn a_full_ls_la_listing_keeps_names_sizes_modes_and_links() {
        let listing = "\
total 16
drwxr-xr-x 3 alice staff 4096 Jan  1  2000 .
drwx------ 3 alice staff 4096 Jan  1  2000 ..
-rw-r--r-- 1 alice staff  120 Jan  1  2000 README.md
-rw-r--r-- 1 alice staff   38 Dec  1 08:57 notes.txt
lrwxrwxrwx 1 alice staff    9 Jan  1  2000 link -> README.md
drwxr-xr-x 2 alice staff 4096 Jan  1  2000 src";
        let other_host = "\
total 24
drwxr-xr-x 3 runner docker 60 Jan  1  2000 .
drwx------ 3 runner docker 60 Jan  1  2000 ..
-rw-r--r-- 1 runner docker  120 Jan  1  2000 README.md
-rw-r--r-- 1 runner docker   38 Dec  1 09:03 notes.txt
lrwxrwxrwx 1 runner docker    9 Jan  1  2000 link -> README.md
drwxr-xr-x 2 runner docker 60 Jan  1  2000 src";
        insta::assert_snapshot!(norm(listing), @r"
        total <blocks>
        drwxr-xr-x 3 <user> <group> <size> <date> .
        drwx------ 3 <user> <group> <size> <date> ..
        -rw-r--r-- 1 <user> <group> 120 <date> README.md
        -rw-r--r-- 1 <user> <group> 38 <date> notes.txt
        lrwxrwxrwx 1 <user> <group> 9 <date> link -> README.md
        drwxr-xr-x 2 <user> <group> <size> <date> src
        ");
        assert_eq!(norm(listing), norm(other_host));
        // A changed size, mode, name or link target still shows.
        for changed in [
            listing.replace(" 120 ", " 121 "),
            listing.replace(
                "-rw-r--r-- 1 alice staff   38",
                "-rwxr--r-- 1 alice staff   38",
            ),
            listing.replace("notes.txt", "notes.md"),
            listing.replace("-> README.md", "-> src"),
        ] {
            assert_ne!(norm(listing), norm(&changed), "{changed}");
        }
    }

    #[test]
    fn turning_the_defaults_off_keeps_the_harness_own_rules() {
        assert_eq!(rules(true).len(), RULES.len());
        let kept = rules(false);
        assert_eq!(kept.len(), 1);
        let notice = "Full output: /tmp/harness-bash-Xy/pi-bash-00ff1e2d3c4b5a69.log]";
        assert_eq!(
            apply_rules(notice, &kept),
            "Full output: <bash-output>/pi-bash.log]"
        );
        assert_eq!(
            apply_rules("Ran 3 tests in 0.002s", &kept),
            "Ran 3 tests in 0.002s"
        );
    }

    #[test]
    fn rules_are_documented_in_noise_md() {
        let doc = include_str!("NOISE.md");
        for r in RULES {
            assert!(
                doc.contains(&format!("`{}`", r.name)),
                "NOISE.md does not list rule `{}`",
                r.name
            );
            let example = r.example.replace('\t', "\\t").replace('\n', "\\n");
            assert!(
                doc.contains(&example),
                "NOISE.md does not show the example of `{}`: {example}",
                r.name
            );
        }
    }
}
