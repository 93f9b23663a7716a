//! Roman numerals: conversion between `u32` and the standard subtractive notation (1..=3999).

/// Value and symbol pairs, largest first, including the subtractive pairs.
const NUMERALS: [(u32, &str); 13] = [
    (1000, "M"),
    (900, "CM"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
];

/// Formats `n` as a Roman numeral; `None` outside 1..=3999.
pub fn to_roman(mut n: u32) -> Option<String> {
    if n == 0 || n > 3999 {
        return None;
    }
    let mut out = String::new();
    for &(value, symbol) in NUMERALS.iter() {
        while n >= value {
            out.push_str(symbol);
            n -= value;
        }
    }
    Some(out)
}

/// The value of a single Roman digit.
fn digit_value(c: char) -> Option<u32> {
    match c {
        'I' => Some(1),
        'V' => Some(5),
        'X' => Some(10),
        'L' => Some(50),
        'C' => Some(100),
        'D' => Some(500),
        'M' => Some(1000),
        _ => None,
    }
}

/// Parses a canonical Roman numeral (upper case); `None` if it is empty, has other
/// characters, or is not the canonical spelling of its value (e.g. "IIII" or "IC").
pub fn from_roman(s: &str) -> Option<u32> {
    let values: Vec<u32> = s.chars().map(digit_value).collect::<Option<_>>()?;
    let mut total: i64 = 0;
    for i in 0..values.len() {
        // A digit smaller than the one after it is subtracted (the I in IV).
        if i + 1 < values.len() && values[i] < values[i + 1] {
            total -= i64::from(values[i]);
        } else {
            total += i64::from(values[i]);
        }
    }
    let total = u32::try_from(total).ok()?;
    // Only the canonical spelling round-trips, which rejects "IIII", "VX" and "".
    (to_roman(total)? == s).then_some(total)
}
