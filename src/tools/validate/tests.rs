//! Every row of the verified table in spec section 7, plus the exact error text.

use serde_json::{Value, json};

use super::*;
use crate::tools::definitions::pi_definition;

fn params(tool: &str) -> Value {
    pi_definition(tool).parameters
}

fn ok(tool: &str, args: Value) -> Value {
    validate_arguments(tool, &params(tool), &args).unwrap_or_else(|e| panic!("{e}"))
}

fn err(tool: &str, args: Value) -> String {
    validate_arguments(tool, &params(tool), &args).unwrap_err()
}

/// The error lines between the header and "Received arguments".
fn error_lines(tool: &str, args: Value) -> Vec<String> {
    let text = err(tool, args);
    let body = text.split("\n\nReceived arguments:\n").next().unwrap();
    body.lines().skip(1).map(str::to_owned).collect()
}

#[test]
fn number_strings_are_converted() {
    let out = ok("read", json!({"path": "f", "offset": "5", "limit": "10"}));
    assert_eq!(out, json!({"path": "f", "offset": 5, "limit": 10}));
    assert_eq!(
        ok("read", json!({"path": "f", "offset": "  7  "}))["offset"],
        json!(7)
    );
    assert_eq!(
        ok("read", json!({"path": "f", "offset": "1e2"}))["offset"],
        json!(100)
    );
    assert_eq!(
        ok("read", json!({"path": "f", "offset": "5.5"}))["offset"],
        json!(5.5)
    );
    assert_eq!(
        ok("read", json!({"path": "f", "offset": ""}))["offset"],
        json!(0)
    );
    assert_eq!(
        ok("read", json!({"path": "f", "offset": null}))["offset"],
        json!(0)
    );
    assert_eq!(
        ok("read", json!({"path": "f", "offset": true}))["offset"],
        json!(1)
    );
    assert_eq!(
        ok("read", json!({"path": "f", "offset": "true"}))["offset"],
        json!(1)
    );
}

#[test]
fn integral_floats_come_out_as_integers() {
    assert_eq!(
        ok("read", json!({"path": "f", "offset": 5.0}))["offset"],
        json!(5)
    );
    assert!(ok("read", json!({"path": "f", "offset": 5.0}))["offset"].is_u64());
}

#[test]
fn non_numbers_must_be_number() {
    for bad in [
        json!("abc"),
        json!([5]),
        json!({}),
        json!("Infinity"),
        json!("1e400"),
    ] {
        assert_eq!(
            error_lines("read", json!({"path": "f.txt", "offset": bad})),
            ["  - offset: must be number"],
            "{bad}"
        );
    }
}

#[test]
fn the_full_error_text() {
    assert_eq!(
        err("read", json!({"path": "f.txt", "offset": "abc"})),
        "Validation failed for tool \"read\":\n  - offset: must be number\n\nReceived arguments:\n{\n  \"path\": \"f.txt\",\n  \"offset\": \"abc\"\n}"
    );
}

#[test]
fn strings_from_scalars() {
    assert_eq!(ok("read", json!({"path": 123}))["path"], json!("123"));
    assert_eq!(ok("read", json!({"path": null}))["path"], json!("null"));
    assert_eq!(ok("read", json!({"path": true}))["path"], json!("true"));
    assert_eq!(ok("read", json!({"path": 1.5}))["path"], json!("1.5"));
    assert_eq!(
        error_lines("read", json!({"path": ["a"]})),
        ["  - path: must be string"]
    );
}

#[test]
fn booleans() {
    for (input, expected) in [
        (json!("true"), true),
        (json!(1), true),
        (json!(0), false),
        (json!(null), false),
    ] {
        let out = ok("grep", json!({"pattern": "x", "ignoreCase": input}));
        assert_eq!(out["ignoreCase"], json!(expected), "{input}");
    }
    for bad in [json!("yes"), json!(2)] {
        assert_eq!(
            error_lines("grep", json!({"pattern": "x", "ignoreCase": bad})),
            ["  - ignoreCase: must be boolean"]
        );
    }
}

#[test]
fn edit_missing_everything() {
    assert_eq!(
        error_lines("edit", json!({})),
        ["  - path: must have required properties path, edits"]
    );
}

#[test]
fn edit_item_missing_new_text() {
    assert_eq!(
        error_lines("edit", json!({"path": "f", "edits": [{"oldText": "a"}]})),
        ["  - edits.0.newText: must have required properties newText"]
    );
}

#[test]
fn edit_item_extra_key() {
    assert_eq!(
        error_lines(
            "edit",
            json!({"path": "f", "edits": [{"oldText": "a", "newText": "b", "extra": 1}]})
        ),
        [
            "  - edits.0.extra: schema is false",
            "  - edits.0: must not have additional properties"
        ]
    );
}

#[test]
fn edit_top_level_extra_key() {
    assert_eq!(
        error_lines(
            "edit",
            json!({"path": "f", "edits": [{"oldText": "a", "newText": "b"}], "extra": true})
        ),
        [
            "  - extra: schema is false",
            "  - root: must not have additional properties"
        ]
    );
}

#[test]
fn edit_edits_as_a_string_is_wrapped_by_convert() {
    let text = err("edit", json!({"path": "f", "edits": "[]"}));
    assert_eq!(
        text,
        "Validation failed for tool \"edit\":\n  - edits.0: must be object\n\nReceived arguments:\n{\n  \"path\": \"f\",\n  \"edits\": \"[]\"\n}"
    );
}

#[test]
fn edit_single_object_is_wrapped_into_an_array() {
    let out = ok(
        "edit",
        json!({"path": "f", "edits": {"oldText": "a", "newText": "b"}}),
    );
    assert_eq!(
        out,
        json!({"path": "f", "edits": [{"oldText": "a", "newText": "b"}]})
    );
}

#[test]
fn edit_item_fields_are_coerced_to_strings() {
    let out = ok(
        "edit",
        json!({"path": "f", "edits": [{"oldText": 1, "newText": null}]}),
    );
    assert_eq!(out["edits"][0], json!({"oldText": "1", "newText": "null"}));
}

#[test]
fn non_object_arguments() {
    for (args, shown) in [
        (json!("str"), "\"str\""),
        (json!(null), "null"),
        (json!([]), "[]"),
    ] {
        assert_eq!(
            err("read", args.clone()),
            format!(
                "Validation failed for tool \"read\":\n  - root: must be object\n\nReceived arguments:\n{shown}"
            ),
            "{args}"
        );
    }
}

#[test]
fn read_accepts_extra_keys() {
    let out = ok("read", json!({"path": "f", "whatever": [1, 2]}));
    assert_eq!(out, json!({"path": "f", "whatever": [1, 2]}));
}

#[test]
fn several_errors_in_typebox_order() {
    assert_eq!(
        error_lines(
            "edit",
            json!({"path": ["x"], "edits": [{"newText": "b", "x": 1}, 7], "z": 0})
        ),
        [
            "  - z: schema is false",
            "  - root: must not have additional properties",
            "  - path: must be string",
            "  - edits.0.oldText: must have required properties oldText",
            "  - edits.0.x: schema is false",
            "  - edits.0: must not have additional properties",
            "  - edits.1: must be object",
        ]
    );
}

#[test]
fn received_arguments_are_the_originals_formatted_like_json_stringify() {
    let text = err(
        "read",
        json!({"path": "é\u{1}\"", "offset": "abc", "n": [1.0, 2.5, 1e21, {}, []], "o": {"a": null}}),
    );
    let received = text.split("\n\nReceived arguments:\n").nth(1).unwrap();
    assert_eq!(
        received,
        "{\n  \"path\": \"é\\u0001\\\"\",\n  \"offset\": \"abc\",\n  \"n\": [\n    1,\n    2.5,\n    1e+21,\n    {},\n    []\n  ],\n  \"o\": {\n    \"a\": null\n  }\n}"
    );
}

#[test]
fn integer_like_keys_come_first_as_in_js_objects() {
    let text = err(
        "read",
        json!({"path": [], "b": 1, "10": 2, "2": 3, "01": 4}),
    );
    let received = text.split("\n\nReceived arguments:\n").nth(1).unwrap();
    assert_eq!(
        received,
        "{\n  \"2\": 3,\n  \"10\": 2,\n  \"path\": [],\n  \"b\": 1,\n  \"01\": 4\n}"
    );
}

#[test]
fn js_string_to_number_matches_javascript() {
    for (s, n) in [
        ("", Some(0.0)),
        ("  ", Some(0.0)),
        ("0x1A", Some(26.0)),
        ("0b101", Some(5.0)),
        ("-5", Some(-5.0)),
        ("+.5", Some(0.5)),
        ("5.", Some(5.0)),
        ("1e2", Some(100.0)),
        ("\u{A0}3\n", Some(3.0)),
    ] {
        assert_eq!(js_string_to_number(s), n, "{s:?}");
    }
    for s in ["abc", "1e", ".", "-0x5", "inf", "NaN", "1_000", "5n"] {
        assert_eq!(js_string_to_number(s), None, "{s:?}");
    }
    assert_eq!(js_string_to_number("Infinity"), Some(f64::INFINITY));
}

#[test]
fn typebox_number_conversion_extras() {
    // "TRUE" (any case) and bigint literals convert for numbers; "yes" does not.
    assert_eq!(
        ok("read", json!({"path": "f", "limit": "TRUE"}))["limit"],
        json!(1)
    );
    assert_eq!(
        ok("read", json!({"path": "f", "limit": "12n"}))["limit"],
        json!(12)
    );
}

#[test]
fn schema_features_beyond_pi_tools() {
    let schema = json!({
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1},
            "kind": {"enum": ["a", "b"]},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
            "either": {"type": ["string", "number"]}
        }
    });
    let out = validate_arguments("t", &schema, &json!({"n": "3.7", "tags": ["x", 1]})).unwrap();
    assert_eq!(out, json!({"n": 3, "tags": ["x", "1"]}));
    let text = validate_arguments(
        "t",
        &schema,
        &json!({"n": 0, "kind": "c", "tags": ["a", "b", "c"], "either": [1]}),
    )
    .unwrap_err();
    assert!(text.contains("  - n: must be >= 1\n"), "{text}");
    assert!(
        text.contains("  - kind: must be equal to one of the allowed values\n"),
        "{text}"
    );
    assert!(
        text.contains("  - tags: must not have more than 2 items\n"),
        "{text}"
    );
    assert!(
        text.contains("  - either: must be either string or number\n"),
        "{text}"
    );
}
