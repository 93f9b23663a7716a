//! A validator for the part of JSON Schema (draft 2020-12) that `task.schema.json` uses, so that
//! every problem of a task file is found at once, each with the location of the value at fault.
//!
//! It implements exactly the keywords in [`KEYWORDS`]; [`Validator::new`] refuses a schema with any
//! other keyword, so a keyword added to the schema without an implementation here fails the first
//! test that loads a task instead of being silently ignored. References are local (`#/...`).
//! Messages are worded by the caller (`tasks::schema_message`); [`SchemaError`]'s `Display` is
//! the generic wording for the kinds the caller does not reword.
//!
//! Depends on `serde_json` and `regex` only.

use std::collections::HashMap;
use std::fmt;

use regex::Regex;
use serde_json::{Map, Value};

/// Every keyword the validator knows: the first five are annotations or containers, the rest
/// are checked.
pub const KEYWORDS: [&str; 19] = [
    "$schema",
    "$id",
    "$defs",
    "title",
    "description",
    "$ref",
    "type",
    "enum",
    "oneOf",
    "properties",
    "required",
    "additionalProperties",
    "propertyNames",
    "items",
    "minItems",
    "uniqueItems",
    "minLength",
    "pattern",
    "minimum",
];

/// One step of the path to a value: an object's property or an array's index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Property(String),
    Index(usize),
}

/// What is wrong with a value.
#[derive(Debug, Clone, PartialEq)]
pub enum SchemaErrorKind {
    /// Properties that neither `properties` nor a schema in `additionalProperties` allows, in the
    /// order they appear in the object.
    AdditionalProperties {
        unexpected: Vec<String>,
    },
    Required {
        property: String,
    },
    Type {
        expected: String,
    },
    Enum {
        options: Value,
    },
    OneOfNotValid,
    OneOfMultipleValid,
    MinItems {
        limit: u64,
    },
    UniqueItems,
    MinLength {
        limit: u64,
    },
    Pattern {
        pattern: String,
    },
    Minimum {
        limit: Value,
    },
    /// The schema is `false`: no value is valid.
    FalseSchema,
}

/// A value that breaks the schema: where it is, what it is, and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaError<'a> {
    /// The path to the value at fault (for a property name, to its object).
    pub path: Vec<Segment>,
    /// The value at fault (for a property name, the name as a string).
    pub instance: std::borrow::Cow<'a, Value>,
    pub kind: SchemaErrorKind,
}

impl fmt::Display for SchemaError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let instance = &self.instance;
        let plural = |n: u64| if n == 1 { "" } else { "s" };
        match &self.kind {
            SchemaErrorKind::AdditionalProperties { unexpected } => {
                let names: Vec<String> = unexpected.iter().map(|u| format!("'{u}'")).collect();
                let verb = if unexpected.len() == 1 { "was" } else { "were" };
                write!(
                    f,
                    "Additional properties are not allowed ({} {verb} unexpected)",
                    names.join(", ")
                )
            }
            SchemaErrorKind::Required { property } => {
                write!(f, "\"{property}\" is a required property")
            }
            SchemaErrorKind::Type { expected } => {
                write!(f, "{instance} is not of type \"{expected}\"")
            }
            SchemaErrorKind::Enum { options } => {
                write!(f, "{instance} is not one of ")?;
                let options = options.as_array().map(Vec::as_slice).unwrap_or_default();
                if options.len() <= 3 {
                    for (i, option) in options.iter().enumerate() {
                        match i {
                            0 => write!(f, "{option}")?,
                            _ if i + 1 == options.len() => write!(f, " or {option}")?,
                            _ => write!(f, ", {option}")?,
                        }
                    }
                    Ok(())
                } else {
                    let shown: Vec<String> = options[..2].iter().map(Value::to_string).collect();
                    write!(
                        f,
                        "{} or {} other candidates",
                        shown.join(", "),
                        options.len() - 2
                    )
                }
            }
            SchemaErrorKind::OneOfNotValid => write!(
                f,
                "{instance} is not valid under any of the schemas listed in the 'oneOf' keyword"
            ),
            SchemaErrorKind::OneOfMultipleValid => write!(
                f,
                "{instance} is valid under more than one of the schemas listed in the 'oneOf' keyword"
            ),
            SchemaErrorKind::MinItems { limit } => {
                write!(f, "{instance} has less than {limit} item{}", plural(*limit))
            }
            SchemaErrorKind::UniqueItems => write!(f, "{instance} has non-unique elements"),
            SchemaErrorKind::MinLength { limit } => write!(
                f,
                "{instance} is shorter than {limit} character{}",
                plural(*limit)
            ),
            SchemaErrorKind::Pattern { pattern } => {
                write!(f, "{instance} does not match \"{pattern}\"")
            }
            SchemaErrorKind::Minimum { limit } => {
                write!(f, "{instance} is less than the minimum of {limit}")
            }
            SchemaErrorKind::FalseSchema => write!(f, "False schema does not allow {instance}"),
        }
    }
}

/// A schema that cannot be used: an unknown keyword, a bad regex, a reference that leads nowhere.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid schema at {at}: {why}")]
pub struct InvalidSchema {
    /// The JSON pointer of the schema node at fault.
    pub at: String,
    pub why: String,
}

/// A schema checked once, its regexes compiled, ready to validate any number of values.
#[derive(Debug)]
pub struct Validator {
    root: Value,
    regexes: HashMap<String, Regex>,
}

impl Validator {
    /// Checks every node of `root` (every keyword known, every value of the right shape, every
    /// reference resolvable) and compiles its patterns.
    pub fn new(root: Value) -> Result<Self, InvalidSchema> {
        let mut regexes = HashMap::new();
        check_node(&root, &root, "#", &mut regexes)?;
        Ok(Validator { root, regexes })
    }

    /// Every error of `value`, the way the JSON Schema spec evaluates it: each keyword on its
    /// own, into every property and item; `oneOf` reports one error for the whole value.
    pub fn errors<'a>(&self, value: &'a Value) -> Vec<SchemaError<'a>> {
        let mut out = Vec::new();
        self.collect(&self.root, value, &mut Vec::new(), &mut out);
        out
    }

    /// Whether `value` is valid (stops at the first error).
    pub fn is_valid(&self, value: &Value) -> bool {
        self.valid(&self.root, value)
    }

    fn resolve<'s>(&'s self, reference: &str) -> &'s Value {
        pointer(&self.root, reference).expect("references were checked by Validator::new")
    }

    fn collect<'a>(
        &self,
        schema: &Value,
        value: &'a Value,
        path: &mut Vec<Segment>,
        out: &mut Vec<SchemaError<'a>>,
    ) {
        let schema = match schema {
            Value::Object(schema) => schema,
            Value::Bool(false) => {
                return out.push(error(path, value, SchemaErrorKind::FalseSchema));
            }
            _ => return,
        };
        let mut push = |kind| out.push(error(path, value, kind));
        if let Some(Value::String(expected)) = schema.get("type") {
            if !has_type(value, expected) {
                let expected = expected.clone();
                push(SchemaErrorKind::Type { expected });
            }
        }
        if let Some(options @ Value::Array(list)) = schema.get("enum") {
            if !list.iter().any(|o| json_equal(o, value)) {
                let options = options.clone();
                push(SchemaErrorKind::Enum { options });
            }
        }
        if let Some(Value::Array(branches)) = schema.get("oneOf") {
            match branches.iter().filter(|b| self.valid(b, value)).count() {
                0 => push(SchemaErrorKind::OneOfNotValid),
                1 => {}
                _ => push(SchemaErrorKind::OneOfMultipleValid),
            }
        }
        match value {
            Value::Array(items) => {
                let min = schema.get("minItems").and_then(Value::as_u64);
                if let Some(limit) = min.filter(|limit| (items.len() as u64) < *limit) {
                    push(SchemaErrorKind::MinItems { limit });
                }
                if schema.get("uniqueItems") == Some(&Value::Bool(true)) && !unique(items) {
                    push(SchemaErrorKind::UniqueItems);
                }
            }
            Value::String(text) => {
                let min = schema.get("minLength").and_then(Value::as_u64);
                if let Some(limit) = min.filter(|limit| (text.chars().count() as u64) < *limit) {
                    push(SchemaErrorKind::MinLength { limit });
                }
                if let Some(Value::String(pattern)) = schema.get("pattern") {
                    if !self.regexes[pattern].is_match(text) {
                        let pattern = pattern.clone();
                        push(SchemaErrorKind::Pattern { pattern });
                    }
                }
            }
            Value::Number(n) => {
                if let Some(Value::Number(limit)) = schema.get("minimum") {
                    if less_than(n, limit) {
                        let limit = Value::Number(limit.clone());
                        push(SchemaErrorKind::Minimum { limit });
                    }
                }
            }
            Value::Object(_) | Value::Null | Value::Bool(_) => {}
        }
        if let Some(Value::String(reference)) = schema.get("$ref") {
            self.collect(self.resolve(reference), value, path, out);
        }
        match value {
            Value::Object(object) => self.collect_object(schema, object, value, path, out),
            Value::Array(items) => {
                if let Some(item_schema) = schema.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        path.push(Segment::Index(i));
                        self.collect(item_schema, item, path, out);
                        path.pop();
                    }
                }
            }
            _ => {}
        }
    }

    fn collect_object<'a>(
        &self,
        schema: &Map<String, Value>,
        object: &'a Map<String, Value>,
        value: &'a Value,
        path: &mut Vec<Segment>,
        out: &mut Vec<SchemaError<'a>>,
    ) {
        if let Some(Value::Array(required)) = schema.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !object.contains_key(name) {
                    let property = name.to_owned();
                    out.push(error(path, value, SchemaErrorKind::Required { property }));
                }
            }
        }
        if let Some(names_schema) = schema.get("propertyNames") {
            for name in object.keys() {
                let name_value = Value::String(name.clone());
                let mut found = Vec::new();
                self.collect(names_schema, &name_value, &mut Vec::new(), &mut found);
                out.extend(found.into_iter().map(|e| SchemaError {
                    path: path.clone(),
                    instance: std::borrow::Cow::Owned(e.instance.into_owned()),
                    kind: e.kind,
                }));
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        let additional = schema.get("additionalProperties");
        let mut unexpected = Vec::new();
        for (name, item) in object {
            let item_schema = match properties.and_then(|p| p.get(name)) {
                Some(declared) => declared,
                None => match additional {
                    Some(Value::Bool(false)) => {
                        unexpected.push(name.clone());
                        continue;
                    }
                    Some(extra @ Value::Object(_)) => extra,
                    _ => continue,
                },
            };
            path.push(Segment::Property(name.clone()));
            self.collect(item_schema, item, path, out);
            path.pop();
        }
        if !unexpected.is_empty() {
            out.push(error(
                path,
                value,
                SchemaErrorKind::AdditionalProperties { unexpected },
            ));
        }
    }

    fn valid(&self, schema: &Value, value: &Value) -> bool {
        let mut out = Vec::new();
        self.collect(schema, value, &mut Vec::new(), &mut out);
        out.is_empty()
    }
}

fn error<'a>(path: &[Segment], value: &'a Value, kind: SchemaErrorKind) -> SchemaError<'a> {
    SchemaError {
        path: path.to_vec(),
        instance: std::borrow::Cow::Borrowed(value),
        kind,
    }
}

/// Whether `value` is of the JSON Schema type `name` (an integer is any number without a
/// fractional part, `3.0` included, as drafts 6 and later say).
fn has_type(value: &Value, name: &str) -> bool {
    match (name, value) {
        ("object", Value::Object(_))
        | ("array", Value::Array(_))
        | ("string", Value::String(_))
        | ("boolean", Value::Bool(_))
        | ("null", Value::Null)
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

/// JSON equality: numbers by value (`1` equals `1.0`), objects whatever their key order.
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x == y,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

fn unique(items: &[Value]) -> bool {
    items
        .iter()
        .enumerate()
        .all(|(i, a)| items[i + 1..].iter().all(|b| !json_equal(a, b)))
}

fn less_than(n: &serde_json::Number, limit: &serde_json::Number) -> bool {
    match (n.as_i64(), limit.as_i64()) {
        (Some(n), Some(limit)) => n < limit,
        _ => match (n.as_u64(), limit.as_u64()) {
            (Some(n), Some(limit)) => n < limit,
            _ => n.as_f64().unwrap_or(f64::NAN) < limit.as_f64().unwrap_or(f64::NAN),
        },
    }
}

/// The node a local reference (`#/$defs/check`) points at.
fn pointer<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    let path = reference.strip_prefix('#')?;
    if path.is_empty() {
        return Some(root);
    }
    root.pointer(path)
}

/// Checks one schema node and every node under it.
fn check_node(
    node: &Value,
    root: &Value,
    at: &str,
    regexes: &mut HashMap<String, Regex>,
) -> Result<(), InvalidSchema> {
    let bad = |why: String| InvalidSchema {
        at: at.to_owned(),
        why,
    };
    let object = match node {
        Value::Bool(_) => return Ok(()),
        Value::Object(object) => object,
        other => {
            return Err(bad(format!(
                "a schema is an object or a boolean, not {other}"
            )));
        }
    };
    let child = |key: &str, sub: &Value, regexes: &mut HashMap<String, Regex>| {
        check_node(sub, root, &format!("{at}/{key}"), regexes)
    };
    for (key, value) in object {
        let shape_ok = match key.as_str() {
            "$schema" | "$id" | "title" | "description" => value.is_string(),
            "$defs" | "properties" => match value.as_object() {
                Some(map) => {
                    for (name, sub) in map {
                        child(&format!("{key}/{name}"), sub, regexes)?;
                    }
                    true
                }
                None => false,
            },
            "$ref" => match value.as_str() {
                Some(reference) => {
                    if pointer(root, reference).is_none() {
                        return Err(bad(format!("the reference {reference} leads nowhere")));
                    }
                    true
                }
                None => false,
            },
            "type" => value.as_str().is_some_and(|t| {
                [
                    "object", "array", "string", "integer", "number", "boolean", "null",
                ]
                .contains(&t)
            }),
            "enum" => value.is_array(),
            "oneOf" => match value.as_array() {
                Some(branches) if !branches.is_empty() => {
                    for (i, sub) in branches.iter().enumerate() {
                        child(&format!("oneOf/{i}"), sub, regexes)?;
                    }
                    true
                }
                _ => false,
            },
            "required" => value
                .as_array()
                .is_some_and(|names| names.iter().all(Value::is_string)),
            "additionalProperties" | "propertyNames" | "items" => {
                child(key, value, regexes)?;
                true
            }
            "minItems" | "minLength" => value.is_u64(),
            "uniqueItems" => value.is_boolean(),
            "minimum" => value.is_number(),
            "pattern" => match value.as_str() {
                Some(pattern) => {
                    let regex = Regex::new(pattern)
                        .map_err(|e| bad(format!("invalid pattern {pattern}: {e}")))?;
                    regexes.insert(pattern.to_owned(), regex);
                    true
                }
                None => false,
            },
            unknown => {
                return Err(bad(format!(
                    "the keyword '{unknown}' is not implemented (known: {})",
                    KEYWORDS.join(", ")
                )));
            }
        };
        if !shape_ok {
            return Err(bad(format!("'{key}' cannot be {value}")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn shown(schema: Value, value: Value) -> Vec<String> {
        let validator = Validator::new(schema).unwrap();
        let mut shown: Vec<String> = validator
            .errors(&value)
            .iter()
            .map(|e| format!("{:?}: {e}", e.path))
            .collect();
        shown.sort();
        shown
    }

    #[test]
    fn a_keyword_it_does_not_implement_is_refused() {
        let err = Validator::new(json!({"properties": {"a": {"maxLength": 3}}})).unwrap_err();
        assert_eq!(err.at, "#/properties/a");
        assert!(
            err.why
                .starts_with("the keyword 'maxLength' is not implemented"),
            "{err}"
        );
        let err = Validator::new(json!({"type": "integr"})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid schema at #: 'type' cannot be \"integr\""
        );
        let err = Validator::new(json!({"items": {"$ref": "#/$defs/nope"}})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid schema at #/items: the reference #/$defs/nope leads nowhere"
        );
        let err = Validator::new(json!({"pattern": "("})).unwrap_err();
        assert!(err.why.starts_with("invalid pattern ("), "{err}");
    }

    #[test]
    fn integers_are_numbers_without_a_fraction() {
        let schema = json!({"type": "integer", "minimum": 1});
        assert!(
            Validator::new(schema.clone())
                .unwrap()
                .is_valid(&json!(3.0))
        );
        assert_eq!(
            shown(schema, json!(0.5)),
            [
                "[]: 0.5 is less than the minimum of 1",
                "[]: 0.5 is not of type \"integer\""
            ]
        );
    }

    #[test]
    fn every_keyword_reports_where_and_what() {
        let schema = json!({
            "type": "object",
            "required": ["a", "b"],
            "additionalProperties": false,
            "properties": {
                "a": {"type": "array", "minItems": 3, "uniqueItems": true,
                      "items": {"enum": ["x", "y", 1.0]}},
                "b": {"oneOf": [{"type": "string"}, {"type": "array"},
                             {"type": "string", "minLength": 2}]},
                "c": {"$ref": "#/$defs/c"},
                "d": false
            },
            "$defs": {"c": {"propertyNames": {"pattern": "^[a-z]+$"},
                            "additionalProperties": {"type": "string"}}}
        });
        assert_eq!(
            shown(
                schema.clone(),
                json!({"a": ["x", "x", 1, "z"], "c": {"Up": 1, "ok": "s"}, "d": 1, "e": 1, "f": 2})
            ),
            [
                "[Property(\"a\"), Index(3)]: \"z\" is not one of \"x\", \"y\" or 1.0",
                "[Property(\"a\")]: [\"x\",\"x\",1,\"z\"] has non-unique elements",
                "[Property(\"c\"), Property(\"Up\")]: 1 is not of type \"string\"",
                "[Property(\"c\")]: \"Up\" does not match \"^[a-z]+$\"",
                "[Property(\"d\")]: False schema does not allow 1",
                "[]: \"b\" is a required property",
                "[]: Additional properties are not allowed ('e', 'f' were unexpected)",
            ]
        );
        assert_eq!(
            shown(schema.clone(), json!({"a": [], "b": "long"})),
            [
                "[Property(\"a\")]: [] has less than 3 items",
                "[Property(\"b\")]: \"long\" is valid under more than one of the schemas listed in the 'oneOf' keyword"
            ]
        );
        assert_eq!(
            shown(schema, json!({"a": ["x", "y", 1], "b": 7})),
            [
                "[Property(\"b\")]: 7 is not valid under any of the schemas listed in the 'oneOf' keyword"
            ]
        );
    }
}
