//! The readers on small session files written here, one per format and version.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::claude_code::read_transcript;
use super::pi::{PiEntryKind, PiMessage, read_session};
use super::{SessionError, SessionKind, detect};
use crate::conversation::{Content, Message, UserContent};

fn write(dir: &Path, name: &str, lines: &[serde_json::Value]) -> PathBuf {
    let path = dir.join(name);
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn assistant(calls: &[(&str, &str, serde_json::Value)], text: &str) -> serde_json::Value {
    let mut content = vec![json!({"type": "text", "text": text})];
    for (id, name, args) in calls {
        content.push(json!({"type": "toolCall", "id": id, "name": name, "arguments": args}));
    }
    json!({"role": "assistant", "content": content, "api": "anthropic-messages",
           "provider": "anthropic", "model": "claude-x",
           "usage": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3,
                     "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
           "stopReason": if calls.is_empty() { "stop" } else { "toolUse" }, "timestamp": 1})
}

fn result(id: &str, name: &str, text: &str, is_error: bool) -> serde_json::Value {
    json!({"role": "toolResult", "toolCallId": id, "toolName": name,
           "content": [{"type": "text", "text": text}], "isError": is_error, "timestamp": 2})
}

fn user_texts(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::User {
                content: UserContent::Text(t),
            } => Some(t.clone()),
            Message::User {
                content: UserContent::Blocks(b),
            } => Some(b.iter().filter_map(Content::as_text).collect()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_byte_order_mark_before_the_first_line_is_no_part_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        json!({"type": "session", "id": "s1", "timestamp": "2025-11-01T10:00:00Z", "cwd": "/w"}),
        json!({"type": "message", "timestamp": "t", "message": {"role": "user", "content": "first", "timestamp": 1}}),
    ];
    let plain = write(dir.path(), "plain.jsonl", &lines);
    let marked = dir.path().join("marked.jsonl");
    let mut bytes = "\u{feff}".as_bytes().to_vec();
    bytes.extend(std::fs::read(&plain).unwrap());
    std::fs::write(&marked, bytes).unwrap();
    assert_eq!(detect(&marked).unwrap(), Some(SessionKind::Pi));
    let (a, b) = (
        read_session(&plain, None).unwrap(),
        read_session(&marked, None).unwrap(),
    );
    assert_eq!(b.problems, vec![]);
    assert_eq!(
        user_texts(&b.context().messages),
        user_texts(&a.context().messages)
    );
    assert_eq!(user_texts(&b.context().messages), vec!["first".to_owned()]);
}

#[test]
fn a_file_that_is_not_a_pi_session_says_what_one_opens_with_and_who_reads_the_other() {
    let dir = tempfile::tempdir().unwrap();
    // A Claude Code transcript's first line.
    let file = write(
        dir.path(),
        "cc.jsonl",
        &[json!({"type": "user", "sessionId": "s", "message": {"role": "user", "content": "hi"}})],
    );
    let err = read_session(&file, None).unwrap_err().to_string();
    assert!(
        err.contains("not a `session` header, which a Pi session opens with")
            && err.contains("`harness edits extract --from claude-code` reads those"),
        "{err}"
    );
}

#[test]
fn version_1_is_a_line_with_index_compactions_and_header_settings() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "v1.jsonl",
        &[
            json!({"type": "session", "id": "s1", "timestamp": "2025-11-01T10:00:00Z", "cwd": "/w",
                   "provider": "anthropic", "modelId": "claude-x", "thinkingLevel": "low"}),
            json!({"type": "message", "timestamp": "t", "message": {"role": "user", "content": "first", "timestamp": 1}}),
            json!({"type": "message", "timestamp": "t", "message": assistant(&[("c1", "read", json!({"path": "a.py"}))], "reading")}),
            json!({"type": "message", "timestamp": "t", "message": result("c1", "read", "x = 1\n", false)}),
            json!({"type": "message", "timestamp": "t", "message": {"role": "bashExecution", "command": "ls", "output": "a.py", "exitCode": 2, "cancelled": false, "truncated": false, "timestamp": 3}}),
            json!({"type": "thinking_level_change", "timestamp": "t", "thinkingLevel": "high"}),
            // Index 4 among the parsed lines (the header is 0): the bash execution.
            json!({"type": "compaction", "timestamp": "t", "summary": "did things", "firstKeptEntryIndex": 4, "tokensBefore": 900}),
            json!({"type": "message", "timestamp": "t", "message": {"role": "user", "content": [{"type": "text", "text": "second"}], "timestamp": 4}}),
        ],
    );
    assert_eq!(detect(&file).unwrap(), Some(SessionKind::Pi));
    let session = read_session(&file, None).unwrap();
    assert_eq!(session.version, 1);
    assert_eq!(session.started(), "2025-11-01T10:00:00Z");
    assert_eq!(session.problems, vec![]);
    assert_eq!(session.path.len(), 7, "every entry is on the one path");
    let ids: Vec<&str> = session.path_entries().map(|e| e.id.as_str()).collect();
    assert_eq!(ids[..2], ["line-2", "line-3"]);
    assert_eq!(session.entries[1].parent_id.as_deref(), Some("line-2"));
    let PiEntryKind::Compaction {
        first_kept_entry_id,
        tokens_before,
        ..
    } = &session.entries[5].kind
    else {
        panic!("{:?}", session.entries[5]);
    };
    assert_eq!(first_kept_entry_id.as_deref(), Some("line-5"));
    assert_eq!(*tokens_before, 900);

    let context = session.context();
    assert_eq!(context.thinking_level, "high");
    assert_eq!(
        context.model,
        Some(("anthropic".to_owned(), "claude-x".to_owned()))
    );
    // The summary, then from the first kept entry (the bash execution), then after.
    assert_eq!(
        user_texts(&context.messages),
        vec![
            "The conversation history before this point was compacted into the following summary:\n\n<summary>\ndid things\n</summary>".to_owned(),
            "Ran `ls`\n```\na.py\n```\n\nCommand exited with code 2".to_owned(),
            "second".to_owned(),
        ]
    );
    assert_eq!(context.messages.len(), 3);

    let (steps, problems) = session.tool_steps();
    assert_eq!(problems, vec![]);
    assert_eq!(steps.len(), 1);
    assert_eq!(
        (steps[0].line, steps[0].result_line, steps[0].turn),
        (3, 4, 1)
    );
    assert_eq!(steps[0].text, "x = 1\n");
}

fn v2_tree(dir: &Path, version: u32, custom_role: &str) -> PathBuf {
    write(
        dir,
        &format!("v{version}.jsonl"),
        &[
            json!({"type": "session", "version": version, "id": "s2", "timestamp": "2025-12-01T10:00:00Z", "cwd": "/w"}),
            json!({"type": "message", "id": "a1", "parentId": null, "timestamp": "2025-12-01T10:00:01Z", "message": {"role": "user", "content": "fix it"}}),
            json!({"type": "message", "id": "a2", "parentId": "a1", "timestamp": "2025-12-01T10:00:02Z", "message": assistant(&[("c1", "edit", json!({"path": "a.py", "edits": [{"oldText": "1", "newText": "2"}]}))], "")}),
            json!({"type": "message", "id": "a3", "parentId": "a2", "timestamp": "2025-12-01T10:00:03Z", "message": result("c1", "edit", "Successfully replaced 1 block(s) in a.py.", false)}),
            // The first branch: a model change and a reply.
            json!({"type": "model_change", "id": "b1", "parentId": "a3", "timestamp": "2025-12-01T10:00:04Z", "provider": "openai", "modelId": "gpt-x"}),
            json!({"type": "message", "id": "b2", "parentId": "b1", "timestamp": "2025-12-01T10:00:05Z", "message": assistant(&[], "done on b")}),
            // The second branch, back from the first with a summary; the last entry of the file.
            json!({"type": "branch_summary", "id": "c1s", "parentId": "a3", "timestamp": "2025-12-01T10:00:06Z", "fromId": "b2", "summary": "tried b"}),
            json!({"type": "custom", "id": "c2", "parentId": "c1s", "timestamp": "2025-12-01T10:00:07Z", "customType": "ext", "data": {"n": 1}}),
            json!({"type": "message", "id": "c3", "parentId": "c2", "timestamp": "2025-12-01T10:00:08Z", "message": {"role": custom_role, "customType": "ext", "content": "from ext", "display": true, "timestamp": 9}}),
            json!({"type": "custom_message", "id": "c4", "parentId": "c3", "timestamp": "2025-12-01T10:00:09Z", "customType": "ext", "content": [{"type": "text", "text": "injected"}], "display": false}),
            json!({"type": "label", "id": "c5", "parentId": "c4", "timestamp": "2025-12-01T10:00:10Z", "targetId": "a1", "label": "start"}),
            json!({"type": "session_info", "id": "c6", "parentId": "c5", "timestamp": "2025-12-01T10:00:11Z", "name": "fixing"}),
        ],
    )
}

#[test]
fn versions_2_and_3_follow_the_tree_to_the_last_entry_or_the_leaf_given() {
    for (version, role) in [(2, "hookMessage"), (3, "custom")] {
        let dir = tempfile::tempdir().unwrap();
        let file = v2_tree(dir.path(), version, role);
        let session = read_session(&file, None).unwrap();
        assert_eq!(session.problems, vec![], "v{version}");
        assert_eq!(session.started(), "2025-12-01T10:00:00Z");
        let ids: Vec<&str> = session.path_entries().map(|e| e.id.as_str()).collect();
        assert_eq!(
            ids,
            ["a1", "a2", "a3", "c1s", "c2", "c3", "c4", "c5", "c6"],
            "v{version}"
        );
        assert!(matches!(
            session.entries[7].kind,
            PiEntryKind::Message(PiMessage::Custom { .. })
        ));
        let context = session.context();
        assert_eq!(
            user_texts(&context.messages),
            vec![
                "fix it".to_owned(),
                "The following is a summary of a branch that this conversation came back from:\n\n<summary>\ntried b</summary>".to_owned(),
                "from ext".to_owned(),
                "injected".to_owned(),
            ]
        );
        assert_eq!(
            context.model,
            Some(("anthropic".to_owned(), "claude-x".to_owned()))
        );

        let other = read_session(&file, Some("b2")).unwrap();
        let ids: Vec<&str> = other.path_entries().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["a1", "a2", "a3", "b1", "b2"]);
        assert_eq!(
            other.context().model,
            Some(("anthropic".to_owned(), "claude-x".to_owned())),
            "the reply after the model change names its own model"
        );
        let (steps, problems) = other.tool_steps();
        assert_eq!(problems, vec![]);
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0].name, "edit");
    }
}

#[test]
fn bad_lines_are_named_with_file_and_line_and_reading_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.jsonl");
    let lines = [
        json!({"type": "session", "version": 3, "id": "s3", "timestamp": "t", "cwd": "/w"}).to_string(),
        json!({"type": "message", "id": "a1", "parentId": null, "timestamp": "t", "message": {"role": "user", "content": "go"}}).to_string(),
        // A line cut short by a crash.
        r#"{"type":"message","id":"zz","parentId":"a1","message":{"role":"user","con"#.to_owned(),
        json!({"type": "message", "id": "a2", "parentId": "a1", "timestamp": "t", "message": assistant(&[("c1", "read", json!({"path": "a"})), ("c2", "bash", json!({"command": "ls"}))], "")}).to_string(),
        json!({"type": "message", "id": "a3", "parentId": "a2", "timestamp": "t", "message": result("c1", "read", "A", false)}).to_string(),
        // A type Pi may add later: named, and the tree still goes through it.
        json!({"type": "checkpoint", "id": "a4", "parentId": "a3", "timestamp": "t"}).to_string(),
        json!({"type": "message", "id": "a5", "parentId": "a4", "timestamp": "t", "message": {"role": "user", "content": "more"}}).to_string(),
    ];
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let session = read_session(&file, None).unwrap();
    let named: Vec<String> = session.problems.iter().map(ToString::to_string).collect();
    assert_eq!(named.len(), 2, "{named:?}");
    assert!(
        named[0].starts_with(&format!("{}:3: not valid JSON", file.display())),
        "{named:?}"
    );
    assert_eq!(
        named[1],
        format!(
            "{}:6: unknown entry type `checkpoint`; left out",
            file.display()
        )
    );
    let ids: Vec<&str> = session.path_entries().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["a1", "a2", "a3", "a4", "a5"]);
    let (steps, unanswered) = session.tool_steps();
    assert_eq!(steps.len(), 1);
    assert_eq!(
        unanswered
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>(),
        vec![format!(
            "{}:4: the `bash` call `c2` has no result on the session's path; left out",
            file.display()
        )]
    );
}

#[test]
fn branches_that_cannot_be_followed_are_errors_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let header = json!({"type": "session", "version": 2, "id": "s", "timestamp": "t", "cwd": "/w"});
    let user = |id: &str, parent: Option<&str>| json!({"type": "message", "id": id, "parentId": parent, "timestamp": "t", "message": {"role": "user", "content": "x"}});
    let missing = write(
        dir.path(),
        "missing.jsonl",
        &[header.clone(), user("a", None), user("b", Some("gone"))],
    );
    let err = read_session(&missing, None).unwrap_err();
    assert!(matches!(err, SessionError::Branch { line: 3, .. }), "{err}");
    assert!(err.to_string().contains("names the parent `gone`"), "{err}");

    let cycle = write(
        dir.path(),
        "cycle.jsonl",
        &[header.clone(), user("a", Some("b")), user("b", Some("a"))],
    );
    let err = read_session(&cycle, None).unwrap_err();
    assert!(err.to_string().contains("form a cycle"), "{err}");

    let ok = write(dir.path(), "ok.jsonl", &[header, user("a", None)]);
    let err = read_session(&ok, Some("nope")).unwrap_err();
    assert!(err.to_string().contains("`nope`"), "{err}");

    let not_pi = write(dir.path(), "cc.jsonl", &[json!({"type": "user"})]);
    let err = read_session(&not_pi, None).unwrap_err();
    assert!(err.to_string().contains("--from claude-code"), "{err}");
}

#[test]
fn claude_code_transcripts_pair_tool_uses_with_results_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    let base = |kind: &str, uuid: &str| {
        json!({"type": kind, "uuid": uuid, "parentUuid": null, "sessionId": "cc-1", "cwd": "/w",
               "timestamp": "2026-01-01T00:00:00Z", "isSidechain": false})
    };
    let mut reply = base("assistant", "u2");
    reply["message"] = json!({"id": "msg_1", "role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": "/w/a.py", "old_string": "1", "new_string": "2"}}]});
    let mut reply2 = base("assistant", "u3");
    reply2["message"] = json!({"id": "msg_1", "role": "assistant", "content": [
        {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "ls"}}]});
    let mut answer = base("user", "u4");
    answer["message"] = json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "The file /w/a.py has been updated."}]});
    answer["toolUseResult"] = json!({"filePath": "/w/a.py", "oldString": "1", "newString": "2",
        "originalFile": "x = 1\n", "structuredPatch": [], "userModified": false, "replaceAll": false});
    let mut side = base("assistant", "u5");
    side["isSidechain"] = json!(true);
    side["message"] = json!({"id": "msg_2", "role": "assistant", "content": [
        {"type": "tool_use", "id": "t9", "name": "Read", "input": {"file_path": "/w/b"}}]});
    let mut user = base("user", "u1");
    user["message"] = json!({"role": "user", "content": "change it"});
    let file = dir.path().join("cc.jsonl");
    let lines = [
        json!({"type": "summary", "summary": "s", "leafUuid": "u4"}).to_string(),
        user.to_string(),
        reply.to_string(),
        reply2.to_string(),
        "{\"type\":\"user\",".to_owned(),
        answer.to_string(),
        json!({"type": "mystery"}).to_string(),
        side.to_string(),
    ];
    std::fs::write(&file, lines.join("\n")).unwrap();
    assert_eq!(detect(&file).unwrap(), Some(SessionKind::ClaudeCode));
    let t = read_transcript(&file).unwrap();
    assert_eq!((t.session_id.as_str(), t.cwd.as_str()), ("cc-1", "/w"));
    assert_eq!(t.steps.len(), 1);
    let step = &t.steps[0];
    assert_eq!(
        (step.line, step.result_line, step.turn, step.name.as_str()),
        (3, 6, 1, "Edit")
    );
    assert_eq!(step.text, "The file /w/a.py has been updated.");
    assert_eq!(
        step.details.as_ref().unwrap()["originalFile"],
        json!("x = 1\n")
    );
    let named: Vec<String> = t.problems.iter().map(ToString::to_string).collect();
    let f = file.display();
    assert_eq!(named.len(), 3, "{named:?}");
    assert_eq!(
        named[0],
        format!("{f}:4: the `Bash` call `t2` has no result in the transcript; left out")
    );
    assert!(
        named[1].starts_with(&format!("{f}:5: not valid JSON")),
        "{named:?}"
    );
    assert_eq!(
        named[2],
        format!("{f}:7: unknown line type `mystery`; skipped")
    );
}
