//! Argument coercion and validation as pi-ai's `validateToolArguments` does it (spec section 7):
//! TypeBox's `Value.Convert`, then Pi's own `coerceWithJsonSchema`, then a TypeBox-style check
//! whose English messages and paths make up Pi's `Validation failed for tool "…"` text.
//!
//! The checker covers the JSON Schema keywords tool schemas use (`type`, `required`,
//! `properties`, `additionalProperties`, `items`, `enum`, `const`, `anyOf`/`oneOf`/`allOf`,
//! length, size and range bounds), in TypeBox's keyword order. Pure functions over
//! `serde_json::Value`; depends on nothing else in the crate except the JS number formatting
//! in `truncate`.

use serde_json::{Map, Number, Value};

use super::truncate::js_number as js_number_string;

/// Pi's `validateToolArguments`: returns the coerced arguments, or Pi's exact error text
/// (`Validation failed for tool "name":\n  - path: message\n...\n\nReceived arguments:\n{...}`).
///
/// `args` are the (prepared) arguments as the model sent them; the error text shows them
/// unchanged, formatted like `JSON.stringify(args, null, 2)`.
pub fn validate_arguments(tool_name: &str, schema: &Value, args: &Value) -> Result<Value, String> {
    let mut coerced = args.clone();
    convert_root(schema, &mut coerced);
    let next = coerce_with_json_schema(coerced.clone(), schema);
    if next != coerced {
        if is_record(&coerced) && is_record(&next) {
            coerced = next;
        } else {
            // Pi returns here without throwing (only reachable with a primitive root schema).
            return Ok(normalize_numbers(if check(schema, &next) {
                next
            } else {
                coerced
            }));
        }
    }
    let errors = collect_errors(schema, &coerced);
    if errors.is_empty() {
        return Ok(normalize_numbers(coerced));
    }
    let list = errors
        .iter()
        .map(|e| format!("  - {}: {}", e.display_path(), e.message))
        .collect::<Vec<_>>()
        .join("\n");
    Err(format!(
        "Validation failed for tool \"{tool_name}\":\n{list}\n\nReceived arguments:\n{}",
        js_stringify_pretty(args)
    ))
}

/// Whether `value` satisfies `schema` (TypeBox's `Check`).
pub fn check(schema: &Value, value: &Value) -> bool {
    collect_errors(schema, value).is_empty()
}

// ------------------------------------------------------------------------------------------------
// Value.Convert (TypeBox 1.x)
// ------------------------------------------------------------------------------------------------

/// `Value.Convert(schema, args)` with its return value ignored: only in-place changes survive,
/// which means the properties of an object root.
fn convert_root(schema: &Value, args: &mut Value) {
    if schema_type(schema) == Some("object") {
        if let Value::Object(map) = args {
            convert_properties(schema, map);
        }
    }
}

fn schema_type(schema: &Value) -> Option<&str> {
    schema.get("type").and_then(Value::as_str)
}

fn convert(schema: &Value, value: Value) -> Value {
    match schema_type(schema) {
        Some("array") => {
            let items = match value {
                Value::Array(items) => items,
                other => vec![other],
            };
            match schema.get("items") {
                Some(item_schema) if item_schema.is_object() => {
                    items.into_iter().map(|v| convert(item_schema, v)).collect()
                }
                _ => Value::Array(items),
            }
        }
        Some("boolean") => try_boolean(&value).map(Value::Bool).unwrap_or(value),
        Some("integer") => try_number(&value)
            .map(|n| number_value(n.trunc()))
            .unwrap_or(value),
        Some("number") => try_number(&value).map(number_value).unwrap_or(value),
        Some("null") => try_null(&value).unwrap_or(value),
        Some("string") => try_string(&value).map(Value::String).unwrap_or(value),
        Some("object") => match value {
            Value::Object(mut map) => {
                convert_properties(schema, &mut map);
                Value::Object(map)
            }
            other => other,
        },
        _ => value,
    }
}

fn convert_properties(schema: &Value, map: &mut Map<String, Value>) {
    map_properties(schema, map, convert);
}

/// Replaces each value of `map` by `f(its schema, value)`: the schema of its key in
/// `properties`, else an object `additionalProperties`; values with neither stay.
fn map_properties(
    schema: &Value,
    map: &mut Map<String, Value>,
    f: impl Fn(&Value, Value) -> Value,
) {
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(properties) = properties {
        for (key, prop_schema) in properties {
            if let Some(v) = map.get_mut(key) {
                *v = f(prop_schema, v.take());
            }
        }
    }
    if let Some(additional) = schema.get("additionalProperties").filter(|a| a.is_object()) {
        for (key, v) in map.iter_mut() {
            if !properties.is_some_and(|p| p.contains_key(key)) {
                *v = f(additional, v.take());
            }
        }
    }
}

/// TypeBox `TryNumber`: finite numbers, booleans, null, and strings that JS's `+s` makes finite,
/// `"true"`/`"false"` in any case, or bigint-like text (`12n`, `1.5`) in the safe range.
fn try_number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::Null => Some(0.0),
        Value::String(s) => {
            if let Some(n) = js_string_to_number(s).filter(|n| n.is_finite()) {
                return Some(n);
            }
            let lower = s.to_lowercase();
            if lower == "false" {
                return Some(0.0);
            }
            if lower == "true" {
                return Some(1.0);
            }
            try_bigint_string(s).filter(|n| n.abs() <= 9_007_199_254_740_991.0)
        }
        _ => None,
    }
}

/// TypeBox `TryBigInt` on a string: `-?(0|[1-9]\d*)n`, decimals (integer part), integers.
fn try_bigint_string(s: &str) -> Option<f64> {
    let body = s.strip_suffix('n').unwrap_or(s);
    let (int_part, frac) = match body.split_once('.') {
        Some((i, f)) if !s.ends_with('n') => (i, Some(f)),
        Some(_) => return None,
        None => (body, None),
    };
    let digits = int_part.strip_prefix('-').unwrap_or(int_part);
    let int_ok = digits == "0"
        || (!digits.is_empty()
            && !digits.starts_with('0')
            && digits.bytes().all(|b| b.is_ascii_digit()));
    let frac_ok = frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()));
    if int_ok && frac_ok {
        int_part.parse::<f64>().ok()
    } else {
        None
    }
}

/// TypeBox `TryBoolean`.
fn try_boolean(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_f64() {
            Some(0.0) => Some(false),
            Some(1.0) => Some(true),
            _ => None,
        },
        Value::Null => Some(false),
        Value::String(s) => match s.to_lowercase().as_str() {
            "false" | "0" => Some(false),
            "true" | "1" => Some(true),
            _ => None,
        },
        _ => None,
    }
}

/// TypeBox `TryString`: numbers and booleans as JS prints them, `null` as `"null"`.
fn try_string(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(js_number_string(n.as_f64().unwrap_or(0.0))),
        Value::Null => Some("null".to_owned()),
        _ => None,
    }
}

/// TypeBox `TryNull`.
fn try_null(value: &Value) -> Option<Value> {
    let ok = match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => {
            let lower = s.to_lowercase();
            lower == "undefined" || lower == "null" || s.is_empty() || s == "0"
        }
        _ => false,
    };
    ok.then_some(Value::Null)
}

/// JavaScript's `Number(string)` / `+string`: trims JS whitespace, `""` is 0, decimal literals
/// (with `Infinity`), and `0x`/`0o`/`0b` integers. `None` stands for NaN.
pub(crate) fn js_string_to_number(s: &str) -> Option<f64> {
    let t = s.trim_matches(is_js_whitespace);
    if t.is_empty() {
        return Some(0.0);
    }
    for (prefix, radix) in [
        ("0x", 16),
        ("0X", 16),
        ("0o", 8),
        ("0O", 8),
        ("0b", 2),
        ("0B", 2),
    ] {
        if let Some(digits) = t.strip_prefix(prefix) {
            if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
                return None;
            }
            let mut n = 0f64;
            for c in digits.chars() {
                n = n * radix as f64 + c.to_digit(radix).expect("checked") as f64;
            }
            return Some(n);
        }
    }
    let (sign, unsigned) = match t.as_bytes()[0] {
        b'+' => (1.0, &t[1..]),
        b'-' => (-1.0, &t[1..]),
        _ => (1.0, t),
    };
    if unsigned == "Infinity" {
        return Some(sign * f64::INFINITY);
    }
    if !is_decimal_literal(unsigned) {
        return None;
    }
    unsigned.parse::<f64>().ok().map(|n| sign * n)
}

/// `StrUnsignedDecimalLiteral` without `Infinity`: digits with an optional fraction (at least one
/// digit overall) and an optional exponent.
fn is_decimal_literal(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let mut digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let frac_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        digits += i - frac_start;
    }
    if digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let exp_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start {
            return false;
        }
    }
    i == b.len()
}

/// The characters JS `String.prototype.trim`/`trimEnd` remove: ECMAScript WhiteSpace (TAB, VT, FF, SP,
/// NBSP, ZWNBSP and every `Zs` char) and LineTerminator (LF, CR, LS, PS). Unlike
/// `char::is_whitespace` this includes U+FEFF and excludes U+0085.
pub(crate) fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}' | '\u{A}' | '\u{B}' | '\u{C}' | '\u{D}' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// A JS number as a JSON value: integral values in the safe range become integers, so that tools
/// reading `as_u64()` see `5` whether the model sent `5`, `5.0` or `"5"`.
fn number_value(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_991.0 {
        Value::Number(Number::from(n as i64))
    } else {
        Number::from_f64(n)
            .map(Value::Number)
            .unwrap_or(Value::Null)
    }
}

/// Every number made a JS number (see [`number_value`]).
fn normalize_numbers(value: Value) -> Value {
    match value {
        Value::Number(n) => match n.as_f64() {
            Some(f) if !(n.is_i64() || n.is_u64()) || f.abs() > 9_007_199_254_740_991.0 => {
                number_value(f)
            }
            _ => Value::Number(n),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(normalize_numbers).collect()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, normalize_numbers(v)))
                .collect(),
        ),
        other => other,
    }
}

// ------------------------------------------------------------------------------------------------
// coerceWithJsonSchema (pi-ai)
// ------------------------------------------------------------------------------------------------

fn is_record(value: &Value) -> bool {
    matches!(value, Value::Object(_) | Value::Array(_))
}

fn schema_types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn matches_json_type(value: &Value, ty: &str) -> bool {
    match ty {
        "number" => value.is_number(),
        "integer" => value.as_f64().is_some_and(|f| f.fract() == 0.0),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "null" => value.is_null(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => false,
    }
}

/// Pi's `coercePrimitiveByType`; `None` when nothing changes.
fn coerce_primitive(value: &Value, ty: &str) -> Option<Value> {
    match ty {
        "number" | "integer" => match value {
            Value::Null => Some(Value::from(0)),
            Value::String(s) if !s.trim_matches(is_js_whitespace).is_empty() => {
                let parsed = js_string_to_number(s)?;
                let ok = if ty == "number" {
                    parsed.is_finite()
                } else {
                    parsed.is_finite() && parsed.fract() == 0.0
                };
                ok.then(|| number_value(parsed))
            }
            Value::Bool(b) => Some(Value::from(u8::from(*b))),
            _ => None,
        },
        "boolean" => match value {
            Value::Null => Some(Value::Bool(false)),
            Value::String(s) if s == "true" => Some(Value::Bool(true)),
            Value::String(s) if s == "false" => Some(Value::Bool(false)),
            Value::Number(n) if n.as_f64() == Some(1.0) => Some(Value::Bool(true)),
            Value::Number(n) if n.as_f64() == Some(0.0) => Some(Value::Bool(false)),
            _ => None,
        },
        "string" => match value {
            Value::Null => Some(Value::String(String::new())),
            Value::Number(_) | Value::Bool(_) => try_string(value).map(Value::String),
            _ => None,
        },
        "null" => match value {
            Value::String(s) if s.is_empty() => Some(Value::Null),
            Value::Number(n) if n.as_f64() == Some(0.0) => Some(Value::Null),
            Value::Bool(false) => Some(Value::Null),
            _ => None,
        },
        _ => None,
    }
}

fn coerce_union(value: Value, schemas: &[Value]) -> Value {
    for schema in schemas {
        let coerced = coerce_with_json_schema(value.clone(), schema);
        if schema.is_object() && check(schema, &coerced) {
            return coerced;
        }
    }
    value
}

/// Pi's `coerceWithJsonSchema`.
fn coerce_with_json_schema(value: Value, schema: &Value) -> Value {
    if !schema.is_object() {
        return value;
    }
    let mut next = value;
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        for nested in all {
            next = coerce_with_json_schema(next, nested);
        }
    }
    if let Some(any) = schema.get("anyOf").and_then(Value::as_array) {
        next = coerce_union(next, any);
    }
    if let Some(one) = schema.get("oneOf").and_then(Value::as_array) {
        next = coerce_union(next, one);
    }
    let types = schema_types(schema);
    let matches_union_member = types.len() > 1 && types.iter().any(|t| matches_json_type(&next, t));
    if !types.is_empty() && !matches_union_member {
        for ty in &types {
            if let Some(candidate) = coerce_primitive(&next, ty) {
                if candidate != next {
                    next = candidate;
                    break;
                }
            }
        }
    }
    if types.contains(&"object") {
        if let Value::Object(map) = &mut next {
            map_properties(schema, map, |s, v| coerce_with_json_schema(v, s));
        }
    }
    if types.contains(&"array") {
        if let Value::Array(items) = &mut next {
            match schema.get("items") {
                Some(Value::Array(tuple)) => {
                    for (item, item_schema) in items.iter_mut().zip(tuple) {
                        *item = coerce_with_json_schema(item.take(), item_schema);
                    }
                }
                Some(item_schema) if item_schema.is_object() => {
                    for item in items.iter_mut() {
                        *item = coerce_with_json_schema(item.take(), item_schema);
                    }
                }
                _ => {}
            }
        }
    }
    next
}

// ------------------------------------------------------------------------------------------------
// Check and errors (TypeBox 1.x, en_US messages)
// ------------------------------------------------------------------------------------------------

/// One validation error: the JSON-pointer-like instance path (unescaped, as TypeBox builds it),
/// the first missing property for `required`, and the English message.
#[derive(Debug, Clone, PartialEq)]
struct ValidationError {
    instance_path: String,
    first_required: Option<String>,
    message: String,
}

impl ValidationError {
    /// Pi's `formatValidationPath`.
    fn display_path(&self) -> String {
        let base = self
            .instance_path
            .strip_prefix('/')
            .unwrap_or(&self.instance_path)
            .replace('/', ".");
        match &self.first_required {
            Some(key) if base.is_empty() => key.clone(),
            Some(key) => format!("{base}.{key}"),
            None if base.is_empty() => "root".to_owned(),
            None => base,
        }
    }
}

fn collect_errors(schema: &Value, value: &Value) -> Vec<ValidationError> {
    let mut errors = Vec::new();
    schema_errors(schema, value, "", &mut errors);
    errors
}

fn push(errors: &mut Vec<ValidationError>, path: &str, message: String) {
    errors.push(ValidationError {
        instance_path: path.to_owned(),
        first_required: None,
        message,
    });
}

fn check_type_name(ty: &str, value: &Value) -> bool {
    match ty {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "boolean" => value.is_boolean(),
        "integer" => value
            .as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0),
        "number" => value.as_f64().is_some_and(f64::is_finite),
        "null" => value.is_null(),
        "string" => value.is_string(),
        _ => true,
    }
}

/// JS `String.length`: UTF-16 code units.
fn js_length(s: &str) -> usize {
    s.encode_utf16().count()
}

fn limit_text(v: &Value) -> String {
    v.as_f64()
        .map(js_number_string)
        .unwrap_or_else(|| v.to_string())
}

/// TypeBox's `ErrorSchema`: every keyword adds its errors, in TypeBox's keyword order.
fn schema_errors(schema: &Value, value: &Value, path: &str, errors: &mut Vec<ValidationError>) {
    let obj = match schema {
        Value::Bool(true) => return,
        Value::Bool(false) => return push(errors, path, "schema is false".into()),
        Value::Object(obj) => obj,
        _ => return,
    };
    match obj.get("type") {
        Some(Value::String(ty)) if !check_type_name(ty, value) => {
            push(errors, path, format!("must be {ty}"));
        }
        Some(Value::Array(tys)) => {
            let names: Vec<&str> = tys.iter().filter_map(Value::as_str).collect();
            if !names.iter().any(|t| check_type_name(t, value)) {
                push(
                    errors,
                    path,
                    format!("must be either {}", names.join(" or ")),
                );
            }
        }
        _ => {}
    }
    if let Value::Object(map) = value {
        object_errors(obj, map, path, errors);
    }
    if let Value::Array(items) = value {
        array_errors(obj, items, path, errors);
    }
    if let Value::String(s) = value {
        let len = js_length(s);
        if let Some(max) = obj.get("maxLength").and_then(Value::as_f64) {
            if len as f64 > max {
                push(
                    errors,
                    path,
                    format!(
                        "must not have more than {} characters",
                        js_number_string(max)
                    ),
                );
            }
        }
        if let Some(min) = obj.get("minLength").and_then(Value::as_f64) {
            if (len as f64) < min {
                push(
                    errors,
                    path,
                    format!(
                        "must not have fewer than {} characters",
                        js_number_string(min)
                    ),
                );
            }
        }
    }
    if let Some(x) = value.as_f64() {
        type Bound = (&'static str, &'static str, fn(f64, f64) -> bool);
        let bounds: [Bound; 4] = [
            ("exclusiveMaximum", "<", |x, l| x < l),
            ("exclusiveMinimum", ">", |x, l| x > l),
            ("maximum", "<=", |x, l| x <= l),
            ("minimum", ">=", |x, l| x >= l),
        ];
        for (keyword, comparison, ok) in bounds {
            if let Some(limit) = obj.get(keyword) {
                if limit.as_f64().is_some_and(|l| !ok(x, l)) {
                    push(
                        errors,
                        path,
                        format!("must be {comparison} {}", limit_text(limit)),
                    );
                }
            }
        }
    }
    if let Some(c) = obj.get("const") {
        if !json_equal(c, value) {
            push(errors, path, "must be equal to constant".into());
        }
    }
    if let Some(Value::Array(options)) = obj.get("enum") {
        if !options.iter().any(|o| json_equal(o, value)) {
            push(
                errors,
                path,
                "must be equal to one of the allowed values".into(),
            );
        }
    }
    if let Some(Value::Array(all)) = obj.get("allOf") {
        for nested in all {
            schema_errors(nested, value, path, errors);
        }
    }
    if let Some(Value::Array(any)) = obj.get("anyOf") {
        if !any.iter().any(|s| check(s, value)) {
            push(errors, path, "must match a schema in anyOf".into());
        }
    }
    if let Some(Value::Array(one)) = obj.get("oneOf") {
        if one.iter().filter(|s| check(s, value)).count() != 1 {
            push(
                errors,
                path,
                "must match exactly one schema in oneOf".into(),
            );
        }
    }
}

fn object_errors(
    schema: &Map<String, Value>,
    map: &Map<String, Value>,
    path: &str,
    errors: &mut Vec<ValidationError>,
) {
    if let Some(Value::Array(required)) = schema.get("required") {
        let missing: Vec<&str> = required
            .iter()
            .filter_map(Value::as_str)
            .filter(|k| !map.contains_key(*k))
            .collect();
        if !missing.is_empty() {
            errors.push(ValidationError {
                instance_path: path.to_owned(),
                first_required: Some(missing[0].to_owned()),
                message: format!("must have required properties {}", missing.join(", ")),
            });
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    if let Some(additional) = schema.get("additionalProperties") {
        let mut extra = false;
        for (key, v) in map {
            if properties.is_some_and(|p| p.contains_key(key)) {
                continue;
            }
            let before = errors.len();
            schema_errors(additional, v, &format!("{path}/{key}"), errors);
            extra |= errors.len() > before;
        }
        if extra {
            push(errors, path, "must not have additional properties".into());
        }
    }
    if let Some(properties) = properties {
        for (key, prop_schema) in properties {
            if let Some(v) = map.get(key) {
                schema_errors(prop_schema, v, &format!("{path}/{key}"), errors);
            }
        }
    }
    if let Some(min) = schema.get("minProperties").and_then(Value::as_f64) {
        if (map.len() as f64) < min {
            push(
                errors,
                path,
                format!(
                    "must not have fewer than {} properties",
                    js_number_string(min)
                ),
            );
        }
    }
    if let Some(max) = schema.get("maxProperties").and_then(Value::as_f64) {
        if map.len() as f64 > max {
            push(
                errors,
                path,
                format!(
                    "must not have more than {} properties",
                    js_number_string(max)
                ),
            );
        }
    }
}

fn array_errors(
    schema: &Map<String, Value>,
    items: &[Value],
    path: &str,
    errors: &mut Vec<ValidationError>,
) {
    match schema.get("items") {
        Some(Value::Array(tuple)) => {
            for (i, (item, item_schema)) in items.iter().zip(tuple).enumerate() {
                schema_errors(item_schema, item, &format!("{path}/{i}"), errors);
            }
        }
        Some(item_schema @ (Value::Object(_) | Value::Bool(_))) => {
            for (i, item) in items.iter().enumerate() {
                schema_errors(item_schema, item, &format!("{path}/{i}"), errors);
            }
        }
        _ => {}
    }
    if let Some(max) = schema.get("maxItems").and_then(Value::as_f64) {
        if items.len() as f64 > max {
            push(
                errors,
                path,
                format!("must not have more than {} items", js_number_string(max)),
            );
        }
    }
    if let Some(min) = schema.get("minItems").and_then(Value::as_f64) {
        if (items.len() as f64) < min {
            push(
                errors,
                path,
                format!("must not have fewer than {} items", js_number_string(min)),
            );
        }
    }
}

/// Structural equality with JS number semantics (`1` equals `1.0`).
fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

// ------------------------------------------------------------------------------------------------
// JSON.stringify(value, null, 2)
// ------------------------------------------------------------------------------------------------

/// `JSON.stringify(value, null, 2)`: two-space indentation, numbers as JavaScript prints them
/// (`5.0` is `5`, big integers lose precision like a double), strings escaped as JS does.
pub fn js_stringify_pretty(value: &Value) -> String {
    let mut out = String::new();
    write_pretty(value, 0, &mut out);
    out
}

fn write_pretty(value: &Value, depth: usize, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&js_json_number(n)),
        Value::String(s) => out.push_str(&serde_json::to_string(s).expect("string serialises")),
        Value::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                out.push_str(&"  ".repeat(depth + 1));
                write_pretty(item, depth + 1, out);
                if i + 1 < items.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            out.push_str(&"  ".repeat(depth));
            out.push(']');
        }
        Value::Object(map) => {
            if map.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push_str("{\n");
            // JS objects list array-index keys first, in numeric order, then the rest in
            // insertion order.
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by_key(|(k, _)| array_index(k).map_or((1, 0), |i| (0, i)));
            for (i, (key, item)) in entries.into_iter().enumerate() {
                out.push_str(&"  ".repeat(depth + 1));
                out.push_str(&serde_json::to_string(key).expect("string serialises"));
                out.push_str(": ");
                write_pretty(item, depth + 1, out);
                if i + 1 < map.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            out.push_str(&"  ".repeat(depth));
            out.push('}');
        }
    }
}

/// The key as an array index (`"0"`, `"17"`; not `"01"`), as JS orders object keys.
fn array_index(key: &str) -> Option<u64> {
    if key.is_empty() || (key.len() > 1 && key.starts_with('0')) {
        return None;
    }
    if !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u64>().ok().filter(|i| *i < u64::from(u32::MAX))
}

fn js_json_number(n: &Number) -> String {
    match (n.as_i64(), n.as_u64()) {
        (Some(i), _) if i.unsigned_abs() <= 9_007_199_254_740_991 => i.to_string(),
        (None, Some(u)) if u <= 9_007_199_254_740_991 => u.to_string(),
        _ => match n.as_f64() {
            Some(f) if f.is_finite() => js_number_string(f),
            _ => "null".to_owned(),
        },
    }
}

#[cfg(test)]
mod tests;
