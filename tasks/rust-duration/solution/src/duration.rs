//! Parsing and formatting of durations written as NUMBER UNIT pairs, such as "1h30m".

use std::fmt;

/// Units from largest to smallest, with their length in seconds.
const UNITS: [(char, u64); 4] = [('d', 86_400), ('h', 3_600), ('m', 60), ('s', 1)];

/// Why a duration text could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// The text is empty.
    Empty,
    /// A unit with no digits before it.
    MissingNumber,
    /// Digits at the end of the text with no unit after them.
    MissingUnit,
    /// A character that is neither a digit nor a known unit.
    UnknownUnit(char),
    /// A unit that is repeated or comes after a smaller unit.
    OutOfOrder,
    /// The total does not fit in a `u64`.
    Overflow,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Empty => write!(f, "empty duration"),
            ParseError::MissingNumber => write!(f, "unit without a number"),
            ParseError::MissingUnit => write!(f, "number without a unit"),
            ParseError::UnknownUnit(c) => write!(f, "unknown unit {c:?} (expected d, h, m or s)"),
            ParseError::OutOfOrder => write!(f, "units must appear once each, largest first"),
            ParseError::Overflow => write!(f, "duration too large"),
        }
    }
}

impl std::error::Error for ParseError {}

/// Parses `text` ("1d2h3m4s", "90m", ...) into a number of seconds.
pub fn parse(text: &str) -> Result<u64, ParseError> {
    if text.is_empty() {
        return Err(ParseError::Empty);
    }
    let mut total: u64 = 0;
    let mut number: Option<u64> = None;
    // Index into UNITS of the next unit allowed; each unit moves it past itself.
    let mut next_unit = 0;
    for c in text.chars() {
        if let Some(digit) = c.to_digit(10) {
            let value = number.unwrap_or(0);
            let value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(digit)))
                .ok_or(ParseError::Overflow)?;
            number = Some(value);
            continue;
        }
        let position = UNITS
            .iter()
            .position(|&(unit, _)| unit == c)
            .ok_or(ParseError::UnknownUnit(c))?;
        let value = number.take().ok_or(ParseError::MissingNumber)?;
        if position < next_unit {
            return Err(ParseError::OutOfOrder);
        }
        next_unit = position + 1;
        let seconds = value
            .checked_mul(UNITS[position].1)
            .ok_or(ParseError::Overflow)?;
        total = total.checked_add(seconds).ok_or(ParseError::Overflow)?;
    }
    if number.is_some() {
        return Err(ParseError::MissingUnit);
    }
    Ok(total)
}

/// Formats `seconds` canonically: largest units first, zero parts omitted, `0` as "0s".
pub fn format(seconds: u64) -> String {
    if seconds == 0 {
        return "0s".to_string();
    }
    let mut rest = seconds;
    let mut out = String::new();
    for &(unit, size) in UNITS.iter() {
        let count = rest / size;
        if count > 0 {
            out.push_str(&count.to_string());
            out.push(unit);
            rest %= size;
        }
    }
    out
}
