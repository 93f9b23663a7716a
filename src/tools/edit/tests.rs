//! The edit tool against spec section 3: every error text, every [verified] example, the
//! line-ending, BOM and fuzzy-normalisation behaviour, the diff format, the strategies and the
//! EditReport of each outcome. Real files in temp dirs.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tempfile::TempDir;

use super::*;
use crate::tools::MatchTier;

fn dir_with(files: &[(&str, &str)]) -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    dir
}

fn read(dir: &TempDir, name: &str) -> String {
    String::from_utf8(std::fs::read(dir.path().join(name)).unwrap()).unwrap()
}

async fn run_with(dir: &TempDir, strategy: &str, args: Value) -> Result<ToolOutput, ToolError> {
    let mut ctx = ToolContext::new(dir.path());
    ctx.edit_strategy = strategy_by_name(strategy).unwrap();
    let tool = EditTool::new();
    tool.execute(tool.prepare_arguments(args), &ctx).await
}

async fn run(dir: &TempDir, args: Value) -> Result<ToolOutput, ToolError> {
    run_with(dir, "pi", args).await
}

fn one(path: &str, old: &str, new: &str) -> Value {
    json!({"path": path, "edits": [{"oldText": old, "newText": new}]})
}

fn text(out: &ToolOutput) -> &str {
    match &out.content[..] {
        [Content::Text { text, .. }] => text,
        other => panic!("expected one text block, got {other:?}"),
    }
}

fn report(strategy: &str, tiers: &[MatchTier], failure: Option<EditFailure>) -> Option<EditReport> {
    let located = tiers
        .iter()
        .map(|t| match t {
            MatchTier::Exact => LocatedEdit::exact("exact"),
            MatchTier::Fuzzy => LocatedEdit::fuzzy("fuzzy", None),
        })
        .collect();
    Some(EditReport::new(strategy, located, failure))
}

use MatchTier::{Exact, Fuzzy};

// ---- errors, in Pi's texts -------------------------------------------------------------------

#[tokio::test]
async fn empty_or_missing_edits_are_rejected_before_anything_else() {
    let dir = dir_with(&[]);
    for args in [
        json!({"path": "nofile.txt", "edits": []}),
        json!({"path": "nofile.txt"}),
        json!({"path": "nofile.txt", "edits": "not json"}),
    ] {
        let err = run(&dir, args).await.unwrap_err();
        assert_eq!(
            err.message,
            "Edit tool input is invalid. edits must contain at least one replacement."
        );
        assert_eq!(err.edit, report("pi", &[], Some(EditFailure::NoEdits)));
    }
}

#[tokio::test]
async fn a_missing_file_is_enoent_with_the_raw_path() {
    let dir = dir_with(&[]);
    let err = run(&dir, one("nofile.txt", "a", "b")).await.unwrap_err();
    assert_eq!(
        err.message,
        "Could not edit file: nofile.txt. Error code: ENOENT."
    );
    assert_eq!(err.edit, report("pi", &[], Some(EditFailure::File)));
    let err = run(&dir, one("@sub/../nofile.txt", "a", "b"))
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "Could not edit file: @sub/../nofile.txt. Error code: ENOENT."
    );
}

#[tokio::test]
async fn a_directory_passes_access_then_fails_on_read() {
    let dir = dir_with(&[("sub/x.txt", "x")]);
    let err = run(&dir, one("sub", "a", "b")).await.unwrap_err();
    assert_eq!(
        err.message,
        "EISDIR: illegal operation on a directory, read"
    );
    assert_eq!(err.edit, report("pi", &[], Some(EditFailure::File)));
}

#[tokio::test]
async fn empty_old_text_is_checked_first_for_every_edit() {
    let dir = dir_with(&[("f.txt", "abc\n")]);
    let err = run(&dir, one("f.txt", "", "x")).await.unwrap_err();
    assert_eq!(err.message, "oldText must not be empty in f.txt.");
    assert_eq!(
        err.edit,
        report("pi", &[], Some(EditFailure::EmptyOldText { index: 0 }))
    );
    // edits[0] is not found, but the empty check of edits[1] comes first.
    let args = json!({"path": "f.txt", "edits": [
        {"oldText": "zzz", "newText": "x"}, {"oldText": "", "newText": "y"}]});
    let err = run(&dir, args).await.unwrap_err();
    assert_eq!(err.message, "edits[1].oldText must not be empty in f.txt.");
    assert_eq!(
        err.edit,
        report("pi", &[], Some(EditFailure::EmptyOldText { index: 1 }))
    );
    assert_eq!(read(&dir, "f.txt"), "abc\n");
}

#[tokio::test]
async fn not_found_texts_for_one_and_many_edits() {
    let dir = dir_with(&[("f.txt", "alpha\nbeta\n")]);
    let err = run(&dir, one("f.txt", "gamma", "x")).await.unwrap_err();
    assert_eq!(
        err.message,
        "Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines."
    );
    assert_eq!(
        err.edit,
        report("pi", &[], Some(EditFailure::NotFound { index: 0 }))
    );
    let args = json!({"path": "f.txt", "edits": [
        {"oldText": "alpha", "newText": "A"}, {"oldText": "gamma", "newText": "G"}]});
    let err = run(&dir, args).await.unwrap_err();
    assert_eq!(
        err.message,
        "Could not find edits[1] in f.txt. The oldText must match exactly including all whitespace and newlines."
    );
    assert_eq!(
        err.edit,
        report("pi", &[Exact], Some(EditFailure::NotFound { index: 1 }))
    );
    assert_eq!(read(&dir, "f.txt"), "alpha\nbeta\n");
}

#[tokio::test]
async fn not_unique_texts_for_one_and_many_edits() {
    let dir = dir_with(&[("f.txt", "x = 1\nx = 1\nx = 1\ny\n")]);
    let err = run(&dir, one("f.txt", "x = 1", "x = 2")).await.unwrap_err();
    assert_eq!(
        err.message,
        "Found 3 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique."
    );
    assert_eq!(
        err.edit,
        report(
            "pi",
            &[],
            Some(EditFailure::NotUnique { index: 0, count: 3 })
        )
    );
    let args = json!({"path": "f.txt", "edits": [
        {"oldText": "y", "newText": "Y"}, {"oldText": "x = 1\n", "newText": ""}]});
    let err = run(&dir, args).await.unwrap_err();
    assert_eq!(
        err.message,
        "Found 3 occurrences of edits[1] in f.txt. Each oldText must be unique. Please provide more context to make it unique."
    );
    assert_eq!(
        err.edit,
        report(
            "pi",
            &[Exact],
            Some(EditFailure::NotUnique { index: 1, count: 3 })
        )
    );
}

#[tokio::test]
async fn overlap_names_the_original_indices_in_position_order() {
    let dir = dir_with(&[("f.txt", "abcdef\n")]);
    let args = json!({"path": "f.txt", "edits": [
        {"oldText": "cde", "newText": "X"}, {"oldText": "abc", "newText": "Y"}]});
    let err = run(&dir, args).await.unwrap_err();
    assert_eq!(
        err.message,
        "edits[1] and edits[0] overlap in f.txt. Merge them into one edit or target disjoint regions."
    );
    assert_eq!(
        err.edit,
        report(
            "pi",
            &[Exact, Exact],
            Some(EditFailure::Overlap {
                first: 1,
                second: 0
            })
        )
    );
    // Touching edits are fine.
    let args = json!({"path": "f.txt", "edits": [
        {"oldText": "def", "newText": "2"}, {"oldText": "abc", "newText": "1"}]});
    let out = run(&dir, args).await.unwrap();
    assert_eq!(text(&out), "Successfully replaced 2 block(s) in f.txt.");
    assert_eq!(read(&dir, "f.txt"), "12\n");
}

#[tokio::test]
async fn no_change_texts_for_one_and_many_edits() {
    let dir = dir_with(&[("f.txt", "same\nother\n")]);
    let err = run(&dir, one("f.txt", "same", "same")).await.unwrap_err();
    assert_eq!(
        err.message,
        "No changes made to f.txt. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
    );
    assert_eq!(
        err.edit,
        report("pi", &[Exact], Some(EditFailure::NoChange))
    );
    let args = json!({"path": "f.txt", "edits": [
        {"oldText": "same", "newText": "same"}, {"oldText": "other", "newText": "other"}]});
    let err = run(&dir, args).await.unwrap_err();
    assert_eq!(
        err.message,
        "No changes made to f.txt. The replacements produced identical content."
    );
    assert_eq!(
        err.edit,
        report("pi", &[Exact, Exact], Some(EditFailure::NoChange))
    );
}

#[tokio::test]
async fn errors_come_in_pis_order_not_found_before_later_duplicates() {
    let dir = dir_with(&[("f.txt", "a\na\nb\n")]);
    // edits[0] is duplicated and edits[1] missing: the per-edit loop stops at edits[0].
    let args = json!({"path": "f.txt", "edits": [
        {"oldText": "a", "newText": "x"}, {"oldText": "zz", "newText": "y"}]});
    let err = run(&dir, args).await.unwrap_err();
    assert_eq!(
        err.edit.unwrap().failure,
        Some(EditFailure::NotUnique { index: 0, count: 2 })
    );
}

// ---- success, line endings, BOM ----------------------------------------------------------------

#[tokio::test]
async fn success_text_and_details() {
    let dir = dir_with(&[("f.txt", "alpha\nbeta\ngamma\n")]);
    let out = run(&dir, one("f.txt", "beta", "BETA")).await.unwrap();
    assert_eq!(text(&out), "Successfully replaced 1 block(s) in f.txt.");
    assert_eq!(
        out.details,
        Some(json!({"diff": " 1 alpha\n-2 beta\n+2 BETA\n 3 gamma", "firstChangedLine": 2}))
    );
    assert_eq!(out.edit, report("pi", &[Exact], None));
    assert_eq!(read(&dir, "f.txt"), "alpha\nBETA\ngamma\n");
}

#[tokio::test]
async fn mixed_line_endings_are_unified_to_the_first() {
    let dir = dir_with(&[("lf.txt", "a\nb\r\nc\rd\n"), ("crlf.txt", "a\r\nb\nc\n")]);
    run(&dir, one("lf.txt", "a", "A")).await.unwrap();
    assert_eq!(read(&dir, "lf.txt"), "A\nb\nc\nd\n");
    run(&dir, one("crlf.txt", "a", "A")).await.unwrap();
    assert_eq!(read(&dir, "crlf.txt"), "A\r\nb\r\nc\r\n");
}

#[tokio::test]
async fn crlf_old_and_new_texts_are_lf_normalised() {
    let dir = dir_with(&[("f.txt", "one\r\ntwo\r\nthree\r\n")]);
    let out = run(&dir, one("f.txt", "one\r\ntwo", "uno\ndos\r\nmas"))
        .await
        .unwrap();
    assert_eq!(read(&dir, "f.txt"), "uno\r\ndos\r\nmas\r\nthree\r\n");
    assert_eq!(out.edit, report("pi", &[Exact], None));
    assert_eq!(out.details.unwrap()["firstChangedLine"], 1);
}

#[tokio::test]
async fn bom_is_kept_and_fuzzy_matching_works_behind_it() {
    let dir = dir_with(&[("b.txt", "\u{FEFF}say “hi”  \nnext\n")]);
    let out = run(&dir, one("b.txt", "say \"hi\"", "say \"yo\""))
        .await
        .unwrap();
    assert_eq!(read(&dir, "b.txt"), "\u{FEFF}say \"yo\"\nnext\n");
    assert_eq!(out.edit, report("pi", &[Fuzzy], None));
    assert_eq!(
        out.details,
        Some(json!({"diff": "-1 say \"hi\"\n+1 say \"yo\"\n 2 next", "firstChangedLine": 1}))
    );
}

// ---- fuzzy matching ----------------------------------------------------------------------------

#[tokio::test]
async fn smart_quotes_and_dashes_match_ascii() {
    let dir = dir_with(&[("q.txt", "it’s a ‘test’ — “quoted” – 1−2\n")]);
    let out = run(
        &dir,
        one("q.txt", "it's a 'test' - \"quoted\" - 1-2", "done"),
    )
    .await
    .unwrap();
    assert_eq!(read(&dir, "q.txt"), "done\n");
    assert_eq!(out.edit, report("pi", &[Fuzzy], None));
}

#[tokio::test]
async fn trailing_whitespace_is_ignored_on_both_sides() {
    // oldText with trailing spaces matches a file without them [verified].
    let dir = dir_with(&[("t.txt", "fn main() {\n    body();\n}\n")]);
    let out = run(&dir, one("t.txt", "    body();   \n}", "    other();\n}"))
        .await
        .unwrap();
    assert_eq!(read(&dir, "t.txt"), "fn main() {\n    other();\n}\n");
    assert_eq!(out.edit, report("pi", &[Fuzzy], None));
    // A file with trailing whitespace matches an oldText without it, across lines.
    let dir = dir_with(&[("t.txt", "a = 1  \t\nb = 2\n")]);
    run(&dir, one("t.txt", "a = 1\nb = 2", "c = 3"))
        .await
        .unwrap();
    assert_eq!(read(&dir, "t.txt"), "c = 3\n");
}

#[tokio::test]
async fn a_fuzzy_edit_rewrites_the_whole_file_normalised() {
    let content = "title: “Intro”  \nﬁle… ＡＢＣ\u{A0}x\nit’s — fine\t\ntarget line   \n";
    let dir = dir_with(&[("n.txt", content)]);
    let out = run(&dir, one("n.txt", "it's - fine", "changed"))
        .await
        .unwrap();
    assert_eq!(
        read(&dir, "n.txt"),
        "title: \"Intro\"\nfile... ABC x\nchanged\ntarget line\n"
    );
    // The diff is computed on the normalised base, so it shows only the edited line.
    assert_eq!(
        out.details,
        Some(json!({
            "diff": " 1 title: \"Intro\"\n 2 file... ABC x\n-3 it's - fine\n+3 changed\n 4 target line",
            "firstChangedLine": 3
        }))
    );
    assert_eq!(out.edit, report("pi", &[Fuzzy], None));
}

#[tokio::test]
async fn exact_edits_leave_other_bytes_alone() {
    let content = "title: “Intro”  \nﬁle… ＡＢＣ\u{A0}x\ntarget line   \n";
    let dir = dir_with(&[("n.txt", content)]);
    run(&dir, one("n.txt", "target", "goal")).await.unwrap();
    assert_eq!(read(&dir, "n.txt"), content.replace("target", "goal"));
}

#[tokio::test]
async fn one_fuzzy_edit_makes_every_edit_match_in_normalised_space() {
    let dir = dir_with(&[("m.txt", "x = “a”\ny = 2   \nz = 3\n")]);
    let args = json!({"path": "m.txt", "edits": [
        {"oldText": "z = 3", "newText": "z = 4"}, {"oldText": "x = \"a\"", "newText": "x = 'b'"}]});
    let out = run(&dir, args).await.unwrap();
    assert_eq!(read(&dir, "m.txt"), "x = 'b'\ny = 2\nz = 4\n");
    assert_eq!(out.edit, report("pi", &[Exact, Fuzzy], None));
}

#[tokio::test]
async fn an_exact_match_can_be_not_unique_in_fuzzy_space() {
    let dir = dir_with(&[("q2.txt", "it’s here\nit's here\n")]);
    let err = run(&dir, one("q2.txt", "it's here", "gone"))
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "Found 2 occurrences of the text in q2.txt. The text must be unique. Please provide more context to make it unique."
    );
    assert_eq!(
        err.edit,
        report(
            "pi",
            &[],
            Some(EditFailure::NotUnique { index: 0, count: 2 })
        )
    );
    // The exact strategy counts exactly, so the same call succeeds there.
    let out = run_with(&dir, "exact", one("q2.txt", "it's here", "gone"))
        .await
        .unwrap();
    assert_eq!(read(&dir, "q2.txt"), "it’s here\ngone\n");
    assert_eq!(out.edit, report("exact", &[Exact], None));
}

#[tokio::test]
async fn whitespace_only_old_text_counts_utf16_units_like_js_split() {
    // normalize("  ") is "", so Pi's split("") counts code units: "abc" gives 2.
    let dir = dir_with(&[("w.txt", "abc")]);
    let err = run(&dir, one("w.txt", "  ", "x")).await.unwrap_err();
    assert_eq!(
        err.edit.unwrap().failure,
        Some(EditFailure::NotUnique { index: 0, count: 2 })
    );
    // In a two-unit file the count is 1 and the empty fuzzy match inserts at the start.
    let dir = dir_with(&[("w.txt", "ab")]);
    run(&dir, one("w.txt", "  ", "x")).await.unwrap();
    assert_eq!(read(&dir, "w.txt"), "xab");
}

#[tokio::test]
async fn edits_are_matched_against_the_original_not_incrementally() {
    let dir = dir_with(&[("o.txt", "one two\n")]);
    let args = json!({"path": "o.txt", "edits": [
        {"oldText": "one", "newText": "two"}, {"oldText": "two", "newText": "three"}]});
    let out = run(&dir, args).await.unwrap();
    assert_eq!(read(&dir, "o.txt"), "two three\n");
    assert_eq!(text(&out), "Successfully replaced 2 block(s) in o.txt.");
}

// ---- strategies ---------------------------------------------------------------------------------

#[tokio::test]
async fn exact_strategy_refuses_what_pi_accepts_fuzzily() {
    let dir = dir_with(&[("s.txt", "say “hi”\n")]);
    let err = run_with(&dir, "exact", one("s.txt", "say \"hi\"", "x"))
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "Could not find the exact text in s.txt. The old text must match exactly including all whitespace and newlines."
    );
    assert_eq!(
        err.edit,
        report("exact", &[], Some(EditFailure::NotFound { index: 0 }))
    );
    assert_eq!(read(&dir, "s.txt"), "say “hi”\n");
    let out = run_with(&dir, "pi", one("s.txt", "say \"hi\"", "x"))
        .await
        .unwrap();
    assert_eq!(out.edit, report("pi", &[Fuzzy], None));
    assert_eq!(read(&dir, "s.txt"), "x\n");
}

#[tokio::test]
async fn exact_strategy_shares_pis_error_texts() {
    let dir = dir_with(&[("f.txt", "ab ab cd\n")]);
    let err = run_with(&dir, "exact", one("f.txt", "ab", "x"))
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "Found 2 occurrences of the text in f.txt. The text must be unique. Please provide more context to make it unique."
    );
    let args = json!({"path": "f.txt", "edits": [
        {"oldText": "b cd", "newText": "1"}, {"oldText": "ab c", "newText": "2"}]});
    let err = run_with(&dir, "exact", args).await.unwrap_err();
    assert_eq!(
        err.edit,
        report(
            "exact",
            &[Exact, Exact],
            Some(EditFailure::Overlap {
                first: 1,
                second: 0
            })
        )
    );
    let err = run_with(&dir, "exact", one("f.txt", "cd", "cd"))
        .await
        .unwrap_err();
    assert_eq!(
        err.edit,
        report("exact", &[Exact], Some(EditFailure::NoChange))
    );
}

#[tokio::test]
async fn a_near_copy_is_refused_with_the_line_that_differs_and_the_file_untouched() {
    let file = "def limit():\n    retries = 3\n    timeout = 30\n    return retries * timeout\n";
    let dir = dir_with(&[("cfg.py", file)]);
    let old = "def limit():\n    retries = 3\n    timeout = 60\n    return retries * timeout\n";
    let err = run_with(
        &dir,
        "safe",
        one("cfg.py", old, "def limit():\n    return 90\n"),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.message,
        "Could not find the exact text in cfg.py. The old text must match exactly including all whitespace and newlines. Lines 1-4 of the file are nearly the same text, but line 3 differs: the file has `    timeout = 30` where oldText has `    timeout = 60`. Read the file again and copy oldText from it."
    );
    assert_eq!(
        err.edit,
        report("safe", &[], Some(EditFailure::NotFound { index: 0 }))
    );
    assert_eq!(read(&dir, "cfg.py"), file);
}

#[test]
fn strategies_are_found_by_name() {
    assert_eq!(strategy_names()[..2], ["pi", "exact"]);
    for name in strategy_names() {
        let name = name.replace(":T", ":0.9");
        assert_eq!(strategy_by_name(&name).unwrap().name(), name);
    }
    assert!(strategy_by_name("nope").is_none());
}

// ---- prepareArguments ------------------------------------------------------------------------

#[test]
fn prepare_parses_edits_sent_as_a_json_string_in_place() {
    let tool = EditTool::new();
    let args = json!({"edits": "[{\"oldText\":\"a\",\"newText\":\"b\"}]", "path": "f.txt"});
    let prepared = tool.prepare_arguments(args);
    assert_eq!(
        serde_json::to_string(&prepared).unwrap(),
        r#"{"edits":[{"oldText":"a","newText":"b"}],"path":"f.txt"}"#
    );
    // Not an array, or not JSON: left alone.
    let args = json!({"path": "f.txt", "edits": "{\"oldText\":\"a\"}"});
    assert_eq!(tool.prepare_arguments(args.clone()), args);
    let args = json!({"path": "f.txt", "edits": "[oops"});
    assert_eq!(tool.prepare_arguments(args.clone()), args);
    assert_eq!(tool.prepare_arguments(json!("str")), json!("str"));
    assert_eq!(tool.prepare_arguments(Value::Null), Value::Null);
}

#[test]
fn prepare_appends_the_legacy_pair_to_edits() {
    let tool = EditTool::new();
    let args = json!({"path": "f.txt", "oldText": "a", "newText": "b"});
    assert_eq!(
        serde_json::to_string(&tool.prepare_arguments(args)).unwrap(),
        r#"{"path":"f.txt","edits":[{"oldText":"a","newText":"b"}]}"#
    );
    let args = json!({"edits": [{"oldText": "x", "newText": "y"}], "oldText": "a", "newText": "b", "path": "f"});
    assert_eq!(
        serde_json::to_string(&tool.prepare_arguments(args)).unwrap(),
        r#"{"edits":[{"oldText":"x","newText":"y"},{"oldText":"a","newText":"b"}],"path":"f"}"#
    );
    // A JSON-string edits is parsed first, then the pair appended; a non-array edits is dropped.
    let args = json!({"path": "f", "edits": "[{\"oldText\":\"x\",\"newText\":\"y\"}]", "oldText": "a", "newText": "b"});
    assert_eq!(
        tool.prepare_arguments(args)["edits"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let args = json!({"path": "f", "edits": 5, "oldText": "a", "newText": "b"});
    assert_eq!(
        tool.prepare_arguments(args)["edits"],
        json!([{"oldText": "a", "newText": "b"}])
    );
    // Only when both are strings.
    let args = json!({"path": "f", "oldText": "a", "newText": 1});
    assert_eq!(tool.prepare_arguments(args.clone()), args);
}

#[tokio::test]
async fn legacy_and_string_edits_run_end_to_end() {
    let dir = dir_with(&[("f.txt", "left right\n")]);
    run(
        &dir,
        json!({"path": "f.txt", "oldText": "left", "newText": "L"}),
    )
    .await
    .unwrap();
    run(
        &dir,
        json!({"path": "f.txt", "edits": "[{\"oldText\":\"right\",\"newText\":\"R\"}]"}),
    )
    .await
    .unwrap();
    assert_eq!(read(&dir, "f.txt"), "L R\n");
}

// ---- diff ----------------------------------------------------------------------------------------

#[test]
fn diff_with_two_digit_width_elides_long_context() {
    let old: String = (1..=20).map(|n| format!("line {n}\n")).collect();
    let new = old
        .replace("line 3\n", "")
        .replace("line 15\n", "LINE 15\n");
    let d = generate_diff_string(&old, &new, 4);
    assert_eq!(
        d.diff,
        [
            "  1 line 1",
            "  2 line 2",
            "- 3 line 3",
            "  4 line 4",
            "  5 line 5",
            "  6 line 6",
            "  7 line 7",
            "    ...",
            " 11 line 11",
            " 12 line 12",
            " 13 line 13",
            " 14 line 14",
            "-15 line 15",
            "+14 LINE 15",
            " 16 line 16",
            " 17 line 17",
            " 18 line 18",
            " 19 line 19",
            "    ...",
        ]
        .join("\n")
    );
    assert_eq!(d.first_changed_line, Some(3));
}

#[test]
fn diff_context_rules() {
    let lines =
        |r: std::ops::RangeInclusive<u32>| -> String { r.map(|n| format!("{n}\n")).collect() };
    // Eight unchanged lines between two changes are all shown; nine are elided to 4 + 4.
    let old = lines(1..=10);
    let new = format!("a\n{}b\n", lines(2..=9));
    let d = generate_diff_string(&old, &new, 4);
    assert_eq!(d.diff.lines().filter(|l| l.contains("...")).count(), 0);
    let old = lines(1..=11);
    let new = format!("a\n{}b\n", lines(2..=10));
    let d = generate_diff_string(&old, &new, 4);
    assert_eq!(
        d.diff,
        "- 1 1\n+ 1 a\n  2 2\n  3 3\n  4 4\n  5 5\n    ...\n  7 7\n  8 8\n  9 9\n 10 10\n-11 11\n+11 b"
    );
    // A final line without newline differs from one with a newline.
    let d = generate_diff_string("a\nb", "a\nb\n", 4);
    assert_eq!(d.diff, " 1 a\n-2 b\n+2 b");
    assert_eq!(d.first_changed_line, Some(2));
    // Nothing changed: empty diff and no first line.
    let d = generate_diff_string("a\n", "a\n", 4);
    assert_eq!(
        d,
        DiffString {
            diff: String::new(),
            first_changed_line: None
        }
    );
}

#[test]
fn diff_breaks_ties_like_jsdiff() {
    // Outputs of Pi's generateDiffString for these inputs.
    for (old, new, expected, first) in [
        ("a\nb\n", "b\na\n", "-1 a\n 2 b\n+2 a", 1),
        ("x\n\ny\n", "x\ny\n\n", " 1 x\n-2 \n 3 y\n+3 ", 2),
        ("1\n2\n3\n", "3\n2\n1\n", "-1 1\n-2 2\n 3 3\n+2 2\n+3 1", 1),
    ] {
        let d = generate_diff_string(old, new, 4);
        assert_eq!(
            (d.diff.as_str(), d.first_changed_line),
            (expected, Some(first)),
            "{old:?} -> {new:?}"
        );
    }
}

// ---- queue, abort, paths -------------------------------------------------------------------------

#[tokio::test]
async fn same_file_edits_apply_in_call_order() {
    let dir = dir_with(&[("f.txt", "a\n")]);
    let ctx = ToolContext::new(dir.path());
    let tool = EditTool::new();
    let first = tool.execute(one("f.txt", "a", "b"), &ctx);
    let second = tool.execute(one("./f.txt", "b", "c"), &ctx);
    let (first, second) = tokio::join!(first, second);
    first.unwrap();
    second.unwrap();
    assert_eq!(read(&dir, "f.txt"), "c\n");
}

#[tokio::test]
async fn an_aborted_call_changes_nothing() {
    let dir = dir_with(&[("f.txt", "a\n")]);
    let ctx = ToolContext::new(dir.path());
    ctx.cancel.cancel();
    let err = EditTool::new()
        .execute(one("f.txt", "a", "b"), &ctx)
        .await
        .unwrap_err();
    assert_eq!(err.message, "Operation aborted");
    assert_eq!(err.edit, report("pi", &[], None));
    assert_eq!(read(&dir, "f.txt"), "a\n");
}

#[tokio::test]
async fn paths_resolve_like_pi() {
    let dir = dir_with(&[("sub/my file.txt", "x\n")]);
    // A leading @ is dropped and a narrow no-break space becomes a space.
    run(&dir, one("@sub/my\u{202F}file.txt", "x", "y"))
        .await
        .unwrap();
    assert_eq!(read(&dir, "sub/my file.txt"), "y\n");
    let abs = dir.path().join("sub/./../sub/my file.txt");
    let out = run(&dir, one(abs.to_str().unwrap(), "y", "z"))
        .await
        .unwrap();
    assert_eq!(
        text(&out),
        format!("Successfully replaced 1 block(s) in {}.", abs.display())
    );
    let home = Path::new("/home/u");
    assert_eq!(
        crate::tools::path::resolve_to_cwd("~", Path::new("/c"), home),
        std::path::PathBuf::from("/home/u")
    );
    assert_eq!(
        crate::tools::path::resolve_to_cwd("~/a/../b", Path::new("/c"), home),
        std::path::PathBuf::from("/home/u/a/../b")
    );
    assert_eq!(
        crate::tools::path::resolve_to_cwd("~x/a", Path::new("/c"), home),
        std::path::PathBuf::from("/c/~x/a")
    );
    assert_eq!(
        crate::tools::path::resolve_to_cwd("../d/./e/", Path::new("/c/w"), home),
        std::path::PathBuf::from("/c/d/e")
    );
}

#[tokio::test]
async fn invalid_utf8_is_decoded_with_replacement_characters() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bin.txt"), b"ok \xff\xfe end\n").unwrap();
    run(&dir, one("bin.txt", "ok", "OK")).await.unwrap();
    assert_eq!(read(&dir, "bin.txt"), "OK \u{FFFD}\u{FFFD} end\n");
}

#[test]
fn the_default_context_uses_pis_strategy() {
    let ctx = ToolContext::new("/tmp");
    assert_eq!(ctx.edit_strategy.name(), "pi");
    let strategy: Arc<dyn EditStrategy> = Arc::new(ExactStrategy);
    assert_eq!(strategy.name(), "exact");
}

#[tokio::test]
async fn arguments_that_bypassed_validation_are_invalid_arguments() {
    let dir = dir_with(&[("f.txt", "a\n")]);
    let err = run(
        &dir,
        json!({"path": 5, "edits": [{"oldText": "a", "newText": "b"}]}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.message,
        "Edit tool input is invalid. path must be a string."
    );
    assert_eq!(
        err.edit,
        report("pi", &[], Some(EditFailure::InvalidArguments))
    );
    let err = run(&dir, json!({"path": "f.txt", "edits": [{"oldText": "a"}]}))
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "Edit tool input is invalid. edits[0] must have string oldText and newText."
    );
    assert_eq!(
        err.edit,
        report("pi", &[], Some(EditFailure::InvalidArguments))
    );
    assert_eq!(read(&dir, "f.txt"), "a\n");
}

#[tokio::test]
async fn a_fuzzy_edit_in_a_crlf_file_keeps_crlf_and_normalises_every_line() {
    let dir = dir_with(&[("c.txt", "a “q”  \r\nb — c\r\nkeep\t\r\n")]);
    let out = run(&dir, one("c.txt", "a \"q\"", "A")).await.unwrap();
    assert_eq!(read(&dir, "c.txt"), "A\r\nb - c\r\nkeep\r\n");
    assert_eq!(out.edit, report("pi", &[Fuzzy], None));
}

// ---- the other strategies through the tool: the bytes written ----------------------------------

#[tokio::test]
async fn reindented_edits_keep_crlf_and_the_bom() {
    let dir = dir_with(&[(
        "w.py",
        "\u{FEFF}def f():\r\n    if x:\r\n        return 1\r\n",
    )]);
    let out = run_with(
        &dir,
        "safe",
        one(
            "w.py",
            "if x:\n    return 1\n",
            "if x:\n    log()\n    return 2\n",
        ),
    )
    .await
    .unwrap();
    assert_eq!(
        read(&dir, "w.py"),
        "\u{FEFF}def f():\r\n    if x:\r\n        log()\r\n        return 2\r\n"
    );
    let report = out.edit.unwrap();
    assert_eq!(report.strategy, "safe");
    assert_eq!(report.tiers, vec![Fuzzy]);
    assert_eq!(report.located[0].tier, "indent");
    assert_eq!(
        details_diff(&out.details),
        " 1 def f():\n 2     if x:\n-3         return 1\n+3         log()\n+4         return 2"
    );
}

fn details_diff(details: &Option<Value>) -> String {
    details.as_ref().unwrap()["diff"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_tab_indented_file_gets_tabs_back() {
    let dir = dir_with(&[("t.go", "func f() {\n\tif a {\n\t\tb()\n\t}\n}\n")]);
    run_with(
        &dir,
        "chain:exact,indent",
        one(
            "t.go",
            "if a {\n    b()\n}\n",
            "if a {\n    c()\n    b()\n}\n",
        ),
    )
    .await
    .unwrap();
    assert_eq!(
        read(&dir, "t.go"),
        "func f() {\n\tif a {\n\t\tc()\n\t\tb()\n\t}\n}\n"
    );
}

#[tokio::test]
async fn pi_local_changes_only_the_matched_span_in_a_crlf_file() {
    let dir = dir_with(&[("c.txt", "a  \r\n\u{201C}q\u{201D}  \r\nz \r\n")]);
    let out = run_with(&dir, "pi-local", one("c.txt", "\"q\"", "'q'"))
        .await
        .unwrap();
    assert_eq!(read(&dir, "c.txt"), "a  \r\n'q'  \r\nz \r\n");
    assert_eq!(out.edit.unwrap().located[0].tier, "pi-local");
    // Pi itself rewrites every line normalised.
    let dir = dir_with(&[("c.txt", "a  \r\n\u{201C}q\u{201D}  \r\nz \r\n")]);
    run(&dir, one("c.txt", "\"q\"", "'q'")).await.unwrap();
    assert_eq!(read(&dir, "c.txt"), "a\r\n'q'\r\nz\r\n");
}

#[tokio::test]
async fn an_ambiguous_fuzzy_match_is_refused_with_the_count_and_leaves_the_file() {
    let dir = dir_with(&[("d.py", "  x = 1\n    x = 1\n")]);
    let err = run_with(&dir, "chain:trimmed-lines", one("d.py", "x = 1\n", "y\n"))
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "Found 2 occurrences of the text in d.py. The text must be unique. Please provide more context to make it unique."
    );
    assert_eq!(read(&dir, "d.py"), "  x = 1\n    x = 1\n");
}

#[tokio::test]
async fn scores_of_similarity_tiers_reach_the_report() {
    let dir = dir_with(&[(
        "s.rs",
        "fn main() {\n    let total = compute(1, 2);\n    println!(\"{total}\");\n}\n",
    )]);
    let out = run_with(
        &dir,
        "similarity:0.9",
        one(
            "s.rs",
            "    let total = compute(1, 2);\n    println!(\"{totl}\");\n",
            "    run();\n",
        ),
    )
    .await
    .unwrap();
    assert_eq!(read(&dir, "s.rs"), "fn main() {\n    run();\n}\n");
    let located = &out.edit.unwrap().located[0];
    assert_eq!(located.tier, "similarity");
    assert!(
        located.score.is_some_and(|s| s > 0.9 && s < 1.0),
        "{located:?}"
    );
}

#[test]
fn edit_reports_serialise_tier_names_and_read_older_records() {
    let report = EditReport::new(
        "safe",
        vec![
            LocatedEdit::exact("exact"),
            LocatedEdit::fuzzy("anchors", Some(0.9)),
        ],
        None,
    );
    assert_eq!(
        serde_json::to_value(&report).unwrap(),
        json!({"strategy": "safe", "tiers": ["exact", "fuzzy"], "located": [
            {"kind": "exact", "tier": "exact"},
            {"kind": "fuzzy", "tier": "anchors", "score": 0.9}]})
    );
    let older: EditReport =
        serde_json::from_value(json!({"strategy": "pi", "tiers": ["fuzzy"]})).unwrap();
    assert_eq!((older.tiers, older.located), (vec![Fuzzy], vec![]));
}

#[tokio::test]
async fn a_file_too_large_for_node_fails_as_in_pi_without_being_read() {
    // Sparse files: a command makes one of any size at once. Pi's `readFile(...).toString()`
    // fails on them for their size; read into memory, the 3 GiB one would take 3 GiB.
    let dir = dir_with(&[]);
    for (name, len, message) in [
        (
            "huge.bin",
            3 << 30,
            "File size (3221225472) is greater than 2 GiB",
        ),
        (
            "large.bin",
            crate::tools::path::NODE_MAX_STRING + 1,
            "Cannot create a string longer than 0x1fffffe8 characters",
        ),
    ] {
        let file = std::fs::File::create(dir.path().join(name)).unwrap();
        file.set_len(len).unwrap();
        let err = run(&dir, one(name, "a", "b")).await.unwrap_err();
        assert_eq!(err.message, message);
        assert_eq!(std::fs::metadata(dir.path().join(name)).unwrap().len(), len);
    }
}
