//! Differential test of `edit` against Pi's own edit tool (`@mariozechner/pi-coding-agent`
//! 0.73.1, pinned in `benches/pi/package.json`). Needs node and Pi installed in `benches/pi`;
//! without them it prints `SKIPPED: ...` and passes, unless `HARNESS_REQUIRE_PI` is set, as
//! `.ci/run` does after installing them:
//!
//! ```text
//! (cd benches/pi && npm ci) && cargo test --test integration edit_matches_pi
//! ```
//!
//! Every case (hand-written ones for each rule of spec section 3, then a few hundred generated
//! from a fixed seed) runs through Pi's `prepareArguments` + `execute` in node and through our
//! `prepare_arguments` + `execute`; the error flag, the text, `details` and the bytes left in
//! every file must be identical.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use harness::tools::edit::EditTool;
use harness::tools::{Content, Tool, ToolContext};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

struct Case {
    name: String,
    files: Vec<(String, Vec<u8>)>,
    args: Value,
}

fn case(name: &str, files: &[(&str, &str)], args: Value) -> Case {
    Case {
        name: name.to_owned(),
        files: files
            .iter()
            .map(|(p, c)| ((*p).to_owned(), c.as_bytes().to_vec()))
            .collect(),
        args,
    }
}

fn one(old: &str, new: &str) -> Value {
    json!({"path": "f.txt", "edits": [{"oldText": old, "newText": new}]})
}

fn many(pairs: &[(&str, &str)]) -> Value {
    let edits: Vec<Value> = pairs
        .iter()
        .map(|(o, n)| json!({"oldText": o, "newText": n}))
        .collect();
    json!({"path": "f.txt", "edits": edits})
}

fn hand_written() -> Vec<Case> {
    let twenty: String = (1..=20).map(|n| format!("line {n}\n")).collect();
    vec![
        case(
            "success",
            &[("f.txt", "alpha\nbeta\ngamma\n")],
            one("beta", "BETA"),
        ),
        case(
            "enoent",
            &[],
            json!({"path": "nofile.txt", "edits": [{"oldText": "a", "newText": "b"}]}),
        ),
        case(
            "eisdir",
            &[("sub/x.txt", "x")],
            json!({"path": "sub", "edits": [{"oldText": "a", "newText": "b"}]}),
        ),
        case(
            "no-edits",
            &[("f.txt", "a")],
            json!({"path": "f.txt", "edits": []}),
        ),
        case("empty-old-1", &[("f.txt", "a")], one("", "x")),
        case(
            "empty-old-n",
            &[("f.txt", "a")],
            many(&[("zz", "x"), ("", "y")]),
        ),
        case("not-found-1", &[("f.txt", "abc\n")], one("zz", "x")),
        case(
            "not-found-n",
            &[("f.txt", "abc\n")],
            many(&[("a", "x"), ("zz", "y")]),
        ),
        case("dup-1", &[("f.txt", "x\nx\nx\n")], one("x", "y")),
        case(
            "dup-n",
            &[("f.txt", "x\nx\ny\n")],
            many(&[("y", "Y"), ("x", "z")]),
        ),
        case(
            "overlap",
            &[("f.txt", "abcdef\n")],
            many(&[("cde", "X"), ("abc", "Y")]),
        ),
        case(
            "adjacent",
            &[("f.txt", "abcdef\n")],
            many(&[("def", "2"), ("abc", "1")]),
        ),
        case("no-change-1", &[("f.txt", "a\n")], one("a", "a")),
        case(
            "no-change-n",
            &[("f.txt", "a b\n")],
            many(&[("a", "a"), ("b", "b")]),
        ),
        case("mixed-lf", &[("f.txt", "a\nb\r\nc\rd\n")], one("a", "A")),
        case("mixed-crlf", &[("f.txt", "a\r\nb\nc\n")], one("a", "A")),
        case(
            "crlf-multiline",
            &[("f.txt", "one\r\ntwo\r\nthree\r\n")],
            one("one\r\ntwo", "uno\ndos\r\nmas"),
        ),
        case(
            "bom-fuzzy",
            &[("f.txt", "\u{FEFF}say “hi”  \nnext\n")],
            one("say \"hi\"", "say \"yo\""),
        ),
        case(
            "smart",
            &[("f.txt", "it’s a ‘test’ — “quoted” – 1−2\n")],
            one("it's a 'test' - \"quoted\" - 1-2", "done"),
        ),
        case(
            "trailing-old",
            &[("f.txt", "fn main() {\n    body();\n}\n")],
            one("    body();   \n}", "    other();\n}"),
        ),
        case(
            "trailing-file",
            &[("f.txt", "a = 1  \t\nb = 2\n")],
            one("a = 1\nb = 2", "c = 3"),
        ),
        case(
            "normalise-all",
            &[(
                "f.txt",
                "title: “Intro”  \nﬁle… ＡＢＣ\u{A0}x\nit’s — fine\t\ntarget line   \n",
            )],
            one("it's - fine", "changed"),
        ),
        case(
            "exact-keeps",
            &[(
                "f.txt",
                "title: “Intro”  \nﬁle… ＡＢＣ\u{A0}x\ntarget line   \n",
            )],
            one("target", "goal"),
        ),
        case(
            "mixed-tiers",
            &[("f.txt", "x = “a”\ny = 2   \nz = 3\n")],
            many(&[("z = 3", "z = 4"), ("x = \"a\"", "x = 'b'")]),
        ),
        case(
            "fuzzy-dup",
            &[("f.txt", "it’s here\nit's here\n")],
            one("it's here", "gone"),
        ),
        case("ws-only-3", &[("f.txt", "abc")], one("  ", "x")),
        case("ws-only-2", &[("f.txt", "ab")], one("  ", "x")),
        case("ws-only-emoji", &[("f.txt", "😀")], one(" \t", "x")),
        case(
            "original-not-incremental",
            &[("f.txt", "one two\n")],
            many(&[("one", "two"), ("two", "three")]),
        ),
        case(
            "legacy",
            &[("f.txt", "left right\n")],
            json!({"path": "f.txt", "oldText": "left", "newText": "L"}),
        ),
        case(
            "legacy-plus",
            &[("f.txt", "left right\n")],
            json!({"path": "f.txt", "edits": [{"oldText": "right", "newText": "R"}], "oldText": "left", "newText": "L"}),
        ),
        case(
            "edits-string",
            &[("f.txt", "left right\n")],
            json!({"path": "f.txt", "edits": "[{\"oldText\":\"right\",\"newText\":\"R\"}]"}),
        ),
        case(
            "diff-w2",
            &[("f.txt", &twenty)],
            many(&[("line 3\n", ""), ("line 15\n", "LINE 15\n")]),
        ),
        case("no-final-newline", &[("f.txt", "a\nb")], one("b", "b\n")),
        case(
            "emoji-fuzzy",
            &[("f.txt", "😀 “a” 😀\nb 😀 x\n")],
            many(&[("\"a\"", "A"), ("x", "X")]),
        ),
        case("nfkc-old", &[("f.txt", "file\n")], one("ﬁle", "doc")),
        case(
            "decomposed",
            &[("f.txt", "cafe\u{301} menu\n")],
            one("café", "bar"),
        ),
        case(
            "nbsp-path",
            &[("my file.txt", "x\n")],
            json!({"path": "@my\u{202F}file.txt", "edits": [{"oldText": "x", "newText": "y"}]}),
        ),
        case("delete-all", &[("f.txt", "only\n")], one("only\n", "")),
        case(
            "insert-lines",
            &[("f.txt", "a\nb\n")],
            one("a\n", "a\n1\n2\n3\n"),
        ),
    ]
}

/// Small files over an alphabet full of things the normalisation touches, and edits cut from
/// them (sometimes respelled with ASCII quotes or extra trailing spaces).
fn generated(count: usize) -> Vec<Case> {
    const PIECES: &[&str] = &[
        "a", "b", "c", " ", "  ", "\t", "\n", "\n", "\r\n", "\r", "’", "'", "“", "\"", "—", "-",
        "…", "ﬁ", "\u{A0}", "é", "e\u{301}", "😀", "Ａ", "x", "y", "\n", "foo", "bar",
    ];
    let mut rng = StdRng::seed_from_u64(0x5eed_ed17);
    let mut cases = Vec::new();
    for n in 0..count {
        let len = rng.gen_range(1..80);
        let mut content: String = (0..len)
            .map(|_| PIECES[rng.gen_range(0..PIECES.len())])
            .collect();
        if rng.gen_bool(0.1) {
            content.insert(0, '\u{FEFF}');
        }
        let chars: Vec<char> = content.chars().collect();
        let edits: Vec<Value> = (0..rng.gen_range(1..4))
            .map(|_| {
                let start = rng.gen_range(0..chars.len());
                let end = rng.gen_range(start..=chars.len().min(start + 8));
                let mut old: String = chars[start..end].iter().collect();
                match rng.gen_range(0..5) {
                    0 => old = old.replace(['’', '‘'], "'").replace(['“', '”'], "\""),
                    1 => old.push_str("  "),
                    2 => old = old.replace('—', "-"),
                    _ => {}
                }
                let new = PIECES[rng.gen_range(0..PIECES.len())].repeat(rng.gen_range(0..3));
                json!({"oldText": old, "newText": new})
            })
            .collect();
        cases.push(Case {
            name: format!("gen-{n}"),
            files: vec![("f.txt".to_owned(), content.into_bytes())],
            args: json!({"path": "f.txt", "edits": edits}),
        });
    }
    cases
}

#[derive(Debug, PartialEq)]
struct Outcome {
    is_error: bool,
    text: String,
    details: Value,
    files: BTreeMap<String, Option<String>>,
}

fn run_pi(cases: &[Case], work: &Path) -> Vec<Outcome> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let list: Vec<Value> = cases
        .iter()
        .map(|c| {
            let files: serde_json::Map<String, Value> = c
                .files
                .iter()
                .map(|(p, b)| (p.clone(), Value::String(B64.encode(b))))
                .collect();
            json!({"name": c.name, "files": files, "args": c.args})
        })
        .collect();
    let input = work.join("cases.json");
    std::fs::write(&input, serde_json::to_vec(&list).unwrap()).unwrap();
    let out = Command::new("node")
        .arg(root.join("benches/pi/run-cases.mjs"))
        .arg(&input)
        .output()
        .expect("node runs (install it and run `npm install` in benches/pi)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    results
        .into_iter()
        .map(|r| Outcome {
            is_error: r["isError"].as_bool().unwrap(),
            text: r["text"].as_str().unwrap().to_owned(),
            details: r["details"].clone(),
            files: r["files"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().map(str::to_owned)))
                .collect(),
        })
        .collect()
}

async fn run_ours(c: &Case) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    for (rel, bytes) in &c.files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let tool = EditTool::new();
    let ctx = ToolContext::new(dir.path());
    let result = tool
        .execute(tool.prepare_arguments(c.args.clone()), &ctx)
        .await;
    let (is_error, text, details) = match result {
        Ok(out) => {
            let text = out
                .content
                .iter()
                .map(|b| match b {
                    Content::Text { text, .. } => text.clone(),
                    other => panic!("unexpected block {other:?}"),
                })
                .collect();
            (false, text, out.details.unwrap_or(Value::Null))
        }
        Err(err) => (true, err.message, Value::Null),
    };
    let files = c
        .files
        .iter()
        .map(|(rel, _)| {
            let bytes = std::fs::read(dir.path().join(rel)).ok();
            (rel.clone(), bytes.map(|b| B64.encode(b)))
        })
        .collect();
    Outcome {
        is_error,
        text,
        details,
        files,
    }
}

#[tokio::test]
async fn edit_matches_pi() {
    const VAR: &str = "HARNESS_REQUIRE_PI";
    let pi = super::run::repo_root().join("benches/pi/node_modules/@mariozechner/pi-coding-agent");
    if Command::new("node").arg("--version").output().is_err() {
        return super::browser::skip(VAR, "edit_matches_pi: node not found (install nodejs)");
    }
    if !pi.is_dir() {
        return super::browser::skip(
            VAR,
            &format!(
                "edit_matches_pi: Pi is not installed at {} (run `npm ci` in benches/pi)",
                pi.display()
            ),
        );
    }
    let mut cases = hand_written();
    cases.extend(generated(1000));
    let work = tempfile::tempdir().unwrap();
    let pi = run_pi(&cases, work.path());
    assert_eq!(pi.len(), cases.len());
    let mut mismatches = Vec::new();
    for (c, theirs) in cases.iter().zip(pi) {
        let ours = run_ours(c).await;
        if ours != theirs {
            mismatches.push(format!(
                "{}: args {}\n  ours: {ours:?}\n  pi:   {theirs:?}",
                c.name, c.args
            ));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} cases differ:\n{}",
        mismatches.len(),
        cases.len(),
        mismatches.join("\n")
    );
}
