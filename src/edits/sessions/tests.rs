//! Corpora from small sessions written here, on a throwaway git repository.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use super::*;
use crate::edits::corpus::read_corpus;
use crate::edits::gold::{GoldSource, derive_gold};
use crate::edits::reapply::cases;
use crate::sessions::{claude_code::read_transcript, pi::read_session};
use crate::tools::MatchTier;
use crate::tools::edit::generate_diff_string;

fn git(repo: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_COMMITTER_DATE", "2025-01-01T00:00:00Z")
        .env("GIT_AUTHOR_DATE", "2025-01-01T00:00:00Z")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A repository with `src/a.py` and `b.txt` committed; returns the commit.
fn repo(dir: &Path) -> String {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/a.py"), "def f():\n    return 1\n\nx = f()\n").unwrap();
    std::fs::write(dir.join("b.txt"), "one\ntwo\nthree\n").unwrap();
    git(dir, &["init", "-q"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "base"]);
    git(dir, &["rev-parse", "HEAD"])
}

struct Pi {
    lines: Vec<Value>,
    last: Option<String>,
    n: usize,
}

impl Pi {
    fn new(cwd: &str) -> Self {
        Pi {
            lines: vec![
                json!({"type": "session", "version": 3, "id": "pi-1", "timestamp": "2025-12-01T10:00:00Z", "cwd": cwd}),
            ],
            last: None,
            n: 0,
        }
    }

    fn entry(&mut self, message: Value) {
        self.n += 1;
        let id = format!("e{}", self.n);
        self.lines.push(json!({"type": "message", "id": id, "parentId": self.last, "timestamp": "t", "message": message}));
        self.last = Some(id);
    }

    /// One tool call and its result; `diff` is Pi's diff between two texts.
    fn call(
        &mut self,
        name: &str,
        args: Value,
        text: &str,
        is_error: bool,
        diff: Option<(&str, &str)>,
    ) {
        let id = format!("call{}", self.n);
        self.entry(json!({"role": "assistant", "content": [{"type": "toolCall", "id": id, "name": name, "arguments": args}],
            "api": "a", "provider": "p", "model": "m", "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
            "stopReason": "toolUse"}));
        let mut result = json!({"role": "toolResult", "toolCallId": id, "toolName": name,
            "content": [{"type": "text", "text": text}], "isError": is_error});
        if let Some((old, new)) = diff {
            result["details"] = json!({"diff": generate_diff_string(old, new, 4).diff});
        }
        self.entry(result);
    }

    fn write(&self, dir: &Path) -> PathBuf {
        let path = dir.join("session.jsonl");
        let text: String = self.lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).unwrap();
        path
    }
}

fn edit(path: &str, old: &str, new: &str) -> Value {
    json!({"path": path, "edits": [{"oldText": old, "newText": new}]})
}

#[test]
fn a_pi_session_is_replayed_on_the_repository_and_checked_against_its_outcomes() {
    let dir = tempfile::tempdir().unwrap();
    let repo_dir = dir.path().join("repo");
    let commit = repo(&repo_dir);
    let a0 = "def f():\n    return 1\n\nx = f()\n";
    let a1 = "def f():\n    return 2\n\nx = f()\n";
    let a2 = "def f():\n    return 2\n\ny = f()\n";
    let mut pi = Pi::new("/home/u/proj");
    // 1: applied exactly (legacy single-edit form, an absolute path under the cwd).
    pi.call(
        "edit",
        json!({"path": "/home/u/proj/src/a.py", "oldText": "return 1", "newText": "return 2"}),
        "Successfully replaced text in src/a.py.",
        false,
        Some((a0, a1)),
    );
    // 2: refused (the old text is already gone), then 3: the recovery from the same file.
    pi.call(
        "edit",
        edit("src/a.py", "x = f()  ", "y = f()"),
        "Could not find the exact text",
        true,
        None,
    );
    pi.call(
        "edit",
        edit("./src/a.py", "x = f()", "y = f()"),
        "Successfully replaced",
        false,
        Some((a1, a2)),
    );
    // A shell command changes b.txt behind the replay's back; 4: recorded as applied, but
    // it cannot be reproduced on the committed file.
    pi.call(
        "bash",
        json!({"command": "sed -i s/two/TWO/ b.txt"}),
        "",
        false,
        None,
    );
    pi.call(
        "edit",
        edit("b.txt", "TWO", "2"),
        "Successfully replaced",
        false,
        None,
    );
    // 5: b.txt is unknown now, until a whole read; 6: then it is known again.
    pi.call(
        "edit",
        edit("b.txt", "one", "1"),
        "Successfully replaced",
        false,
        None,
    );
    pi.call(
        "read",
        json!({"path": "b.txt"}),
        "one\nTWO\nthree\n",
        false,
        None,
    );
    pi.call(
        "edit",
        edit("b.txt", "TWO", "2"),
        "Successfully replaced",
        false,
        Some(("one\nTWO\nthree\n", "one\n2\nthree\n")),
    );
    // 7: a file outside the working directory is unknown; 8: a new file, written then edited.
    pi.call(
        "edit",
        edit("/etc/hosts", "a", "b"),
        "Successfully replaced",
        false,
        None,
    );
    pi.call(
        "write",
        json!({"path": "new.txt", "content": "n = 0\n"}),
        "ok",
        false,
        None,
    );
    pi.call(
        "edit",
        edit("new.txt", "n = 0", "n = 1"),
        "Successfully replaced",
        false,
        None,
    );
    // 9: applied by Pi's fuzzy matching (trailing spaces in the file): kept, not exact.
    pi.call(
        "write",
        json!({"path": "c.txt", "content": "alpha  \nbeta\n"}),
        "ok",
        false,
        None,
    );
    pi.call(
        "edit",
        edit("c.txt", "alpha\nbeta", "gamma\nbeta"),
        "Successfully replaced",
        false,
        None,
    );
    // 10: the diff Pi kept names other lines than the replay changes: not reproduced.
    pi.call(
        "write",
        json!({"path": "d.txt", "content": "k\nk2\n"}),
        "ok",
        false,
        None,
    );
    pi.call(
        "edit",
        edit("d.txt", "k2", "k3"),
        "Successfully replaced",
        false,
        Some(("z\nk\nk2\n", "z\nk\nk3\n")),
    );
    let file = pi.write(dir.path());

    let session = read_session(&file, None).unwrap();
    let (steps, problems) = session.tool_steps();
    assert_eq!(problems, vec![]);
    let tree = GitTree::open(&repo_dir, &commit).unwrap();
    let mut corpus = SessionCorpus::default();
    corpus.add_pi(&session, &steps, Some(&tree));
    assert_eq!(
        corpus.counts,
        ExtractCounts {
            sessions: 1,
            edit_calls: 10,
            applied: 5,
            refused: 1,
            applied_exactly: 4,
            unknown_file: 2,
            not_reproduced: 2,
            refused_otherwise: 0,
            replace_all: 0,
            user_modified: 0,
            sequential: 0,
            read_corrections: 0,
        }
    );
    let left_out: Vec<String> = corpus
        .left_out
        .iter()
        .map(|p| format!("{}: {}", p.line, p.message))
        .collect();
    assert_eq!(
        left_out,
        vec![
            "10: the `edit` call `call8` is left out: the agent applied it but it does not apply on the rebuilt file",
            "12: the `edit` call `call10` is left out: the file before it (`b.txt`) is not known",
            "18: the `edit` call `call16` is left out: the file before it (`/etc/hosts`) is not known",
            "30: the `edit` call `call28` is left out: on the rebuilt file it changes other lines than the agent's diff says",
        ]
    );
    let calls: Vec<(&str, bool, Option<Vec<MatchTier>>)> = corpus
        .records
        .iter()
        .map(|r| {
            let o = r.outcome.as_ref().unwrap();
            (
                r.path.as_str(),
                o.is_error,
                o.report.as_ref().map(|r| r.tiers.clone()),
            )
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            ("/home/u/proj/src/a.py", false, Some(vec![MatchTier::Exact])),
            ("src/a.py", true, Some(vec![])),
            ("./src/a.py", false, Some(vec![MatchTier::Exact])),
            ("b.txt", false, Some(vec![MatchTier::Exact])),
            ("new.txt", false, Some(vec![MatchTier::Exact])),
            ("c.txt", false, Some(vec![MatchTier::Fuzzy])),
        ]
    );
    assert_eq!(corpus.blobs[corpus.records[0].before.as_ref().unwrap()], a0);
    assert_eq!(
        corpus.blobs[corpus.records[2]
            .outcome
            .as_ref()
            .unwrap()
            .after
            .as_ref()
            .unwrap()],
        a2
    );

    // Written and read back, the gold answers are those of a run's corpus; the refused call's
    // path differs from its recovery's (`src/a.py`, `./src/a.py`), so it has none.
    let out = dir.path().join("corpus");
    write_session_corpus(&out, &corpus).unwrap();
    let read = read_corpus(&out).unwrap();
    assert_eq!(read.problems, vec![]);
    let records: Vec<&EditRecord> = read.records.iter().map(|(_, r)| r).collect();
    let sources: Vec<Option<GoldSource>> = derive_gold(&records)
        .into_iter()
        .map(|g| g.map(|g| g.source))
        .collect();
    use GoldSource::Kept;
    assert_eq!(
        sources,
        vec![Some(Kept), None, Some(Kept), Some(Kept), Some(Kept), None]
    );
    assert_eq!(cases(&read).len(), 6);
}

#[test]
fn a_refused_pi_edit_followed_by_its_fix_is_a_recovered_case() {
    let dir = tempfile::tempdir().unwrap();
    let repo_dir = dir.path().join("repo");
    let commit = repo(&repo_dir);
    let mut pi = Pi::new("/p");
    pi.call(
        "edit",
        edit("b.txt", "tw0", "2"),
        "Could not find",
        true,
        None,
    );
    pi.call(
        "edit",
        edit("b.txt", "two", "2"),
        "Successfully replaced",
        false,
        None,
    );
    let file = pi.write(dir.path());
    let session = read_session(&file, None).unwrap();
    let (steps, _) = session.tool_steps();
    let mut corpus = SessionCorpus::default();
    corpus.add_pi(
        &session,
        &steps,
        Some(&GitTree::open(&repo_dir, &commit).unwrap()),
    );
    let records: Vec<&EditRecord> = corpus.records.iter().collect();
    let gold = derive_gold(&records);
    assert_eq!(
        gold[0].as_ref().map(|g| g.source),
        Some(GoldSource::Recovered)
    );
    assert_eq!(
        gold[0],
        gold[1].clone().map(|g| crate::edits::gold::GoldAnswer {
            source: GoldSource::Recovered,
            ..g
        })
    );
}

#[test]
fn a_commit_the_repository_does_not_have_is_named() {
    let dir = tempfile::tempdir().unwrap();
    repo(dir.path());
    let err = GitTree::open(dir.path(), "0123456789abcdef0123456789abcdef01234567").unwrap_err();
    assert!(
        err.to_string()
            .contains("has no commit `0123456789abcdef0123456789abcdef01234567`"),
        "{err}"
    );
    assert!(GitTree::commit_before(dir.path(), "2024-12-31T00:00:00Z").is_none());
    assert!(GitTree::commit_before(dir.path(), "2025-06-01T00:00:00Z").is_some());
}

fn cc_line(kind: &str, n: usize, body: Value) -> Value {
    let mut line = json!({"type": kind, "uuid": format!("u{n}"), "sessionId": "cc-1", "cwd": "/w",
        "timestamp": "2026-01-01T00:00:00Z", "isSidechain": false});
    for (k, v) in body.as_object().unwrap() {
        line[k] = v.clone();
    }
    line
}

/// A Claude Code call and its result line.
fn cc_call(
    lines: &mut Vec<Value>,
    name: &str,
    input: Value,
    text: &str,
    is_error: bool,
    result: Value,
) {
    let n = lines.len();
    let id = format!("t{n}");
    lines.push(cc_line(
        "assistant",
        n,
        json!({"message": {"id": format!("m{n}"), "role": "assistant",
        "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]}}),
    ));
    lines.push(cc_line("user", n + 1, json!({"message": {"role": "user",
        "content": [{"type": "tool_result", "tool_use_id": id, "content": text, "is_error": is_error}]},
        "toolUseResult": result})));
}

#[test]
fn a_claude_code_transcript_maps_edit_multi_edit_and_replace_all() {
    let dir = tempfile::tempdir().unwrap();
    let a0 = "a = 1\nb = 2\nb = 2\n";
    let mut lines = Vec::new();
    let e = |old: &str, new: &str| json!({"file_path": "/w/a.py", "old_string": old, "new_string": new});
    // 1: refused (the model misremembered), before the file was ever read: unknown, left out.
    cc_call(
        &mut lines,
        "Edit",
        e("a = 0", "a = 9"),
        "<tool_use_error>String to replace not found in file.",
        true,
        json!("Error: String to replace not found in file."),
    );
    // A whole read makes the file known; 2: refused, then 3: its fix (with originalFile).
    cc_call(
        &mut lines,
        "Read",
        json!({"file_path": "/w/a.py"}),
        "     1→a = 1",
        false,
        json!({"type": "text", "file": {"filePath": "/w/a.py", "content": a0, "numLines": 4, "startLine": 1, "totalLines": 4}}),
    );
    cc_call(
        &mut lines,
        "Edit",
        e("a = 0", "a = 9"),
        "<tool_use_error>String to replace not found in file.",
        true,
        json!("Error: String to replace not found in file."),
    );
    cc_call(
        &mut lines,
        "Edit",
        e("a = 1", "a = 9"),
        "The file /w/a.py has been updated.",
        false,
        json!({"filePath": "/w/a.py", "oldString": "a = 1", "newString": "a = 9", "originalFile": a0, "structuredPatch": [], "userModified": false, "replaceAll": false}),
    );
    // 4: replace_all over two occurrences: left out, but the file follows it.
    cc_call(
        &mut lines,
        "Edit",
        json!({"file_path": "/w/a.py", "old_string": "b = 2", "new_string": "b = 3", "replace_all": true}),
        "updated",
        false,
        json!({"filePath": "/w/a.py", "originalFile": "a = 9\nb = 2\nb = 2\n", "userModified": false, "replaceAll": true}),
    );
    // 5: a MultiEdit whose second edit needs the first's result: left out (sequential).
    cc_call(
        &mut lines,
        "MultiEdit",
        json!({"file_path": "/w/a.py", "edits": [
        {"old_string": "a = 9", "new_string": "a = 10"}, {"old_string": "a = 10\nb", "new_string": "a = 11\nb"}]}),
        "Applied 2 edits",
        false,
        json!({"filePath": "/w/a.py", "originalFileContents": "a = 9\nb = 3\nb = 3\n", "structuredPatch": []}),
    );
    // 6: a MultiEdit of independent edits: kept as one call of two edits.
    cc_call(
        &mut lines,
        "MultiEdit",
        json!({"file_path": "/w/a.py", "edits": [
        {"old_string": "a = 11", "new_string": "a = 12"}, {"old_string": "b = 3\nb = 3", "new_string": "b = 4\nb = 4"}]}),
        "Applied 2 edits",
        false,
        json!({"filePath": "/w/a.py", "originalFileContents": "a = 11\nb = 3\nb = 3\n", "structuredPatch": []}),
    );
    // 7: the user changed the edit before accepting it: left out.
    cc_call(
        &mut lines,
        "Edit",
        e("a = 12", "a = 13"),
        "updated",
        false,
        json!({"filePath": "/w/a.py", "originalFile": "a = 12\nb = 4\nb = 4\n", "userModified": true}),
    );
    // 8: refused by the user although it would apply: left out.
    cc_call(
        &mut lines,
        "Write",
        json!({"file_path": "/w/n.txt", "content": "q\n"}),
        "File created",
        false,
        json!({"type": "create"}),
    );
    cc_call(
        &mut lines,
        "Edit",
        json!({"file_path": "/w/n.txt", "old_string": "q", "new_string": "r"}),
        "The user doesn't want to proceed with this tool use.",
        true,
        json!("Error: rejected"),
    );
    let file = dir.path().join("cc.jsonl");
    std::fs::write(
        &file,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();

    let transcript = read_transcript(&file).unwrap();
    assert_eq!(transcript.problems, vec![]);
    let mut corpus = SessionCorpus::default();
    corpus.add_claude_code(&transcript, None);
    assert_eq!(
        corpus.counts,
        ExtractCounts {
            sessions: 1,
            edit_calls: 8,
            applied: 2,
            refused: 1,
            applied_exactly: 2,
            unknown_file: 1,
            not_reproduced: 0,
            refused_otherwise: 1,
            replace_all: 1,
            user_modified: 1,
            sequential: 1,
            read_corrections: 0,
        }
    );
    assert_eq!(corpus.left_out.len(), 5);
    assert!(
        corpus.left_out[1]
            .message
            .contains("`replace_all` over several occurrences")
    );
    let args: Vec<&Value> = corpus.records.iter().map(|r| &r.arguments).collect();
    assert_eq!(
        args,
        vec![
            &json!({"path": "/w/a.py", "edits": [{"oldText": "a = 0", "newText": "a = 9"}]}),
            &json!({"path": "/w/a.py", "edits": [{"oldText": "a = 1", "newText": "a = 9"}]}),
            &json!({"path": "/w/a.py", "edits": [{"oldText": "a = 11", "newText": "a = 12"}, {"oldText": "b = 3\nb = 3", "newText": "b = 4\nb = 4"}]}),
        ]
    );
    assert!(
        corpus
            .records
            .iter()
            .all(|r| r.outcome.as_ref().unwrap().strategy == CLAUDE_CODE)
    );
    let records: Vec<&EditRecord> = corpus.records.iter().collect();
    let sources: Vec<Option<GoldSource>> = derive_gold(&records)
        .into_iter()
        .map(|g| g.map(|g| g.source))
        .collect();
    assert_eq!(
        sources,
        vec![
            Some(GoldSource::Recovered),
            Some(GoldSource::Kept),
            Some(GoldSource::Kept)
        ]
    );
}
