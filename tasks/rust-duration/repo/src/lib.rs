//! Human-friendly durations such as "1h30m" or "45s", for configuration files and log output.
//!
//! The `duration` module provides:
//!
//! * `pub fn parse(text: &str) -> Result<u64, ParseError>`: the number of seconds in `text`,
//!   which is one or more NUMBER UNIT pairs with no spaces. Units are `d` (86400 s), `h` (3600),
//!   `m` (60) and `s` (1); each unit appears at most once, larger units first.
//! * `pub fn format(seconds: u64) -> String`: the canonical text for `seconds`, largest units
//!   first, zero parts left out; `0` formats as `"0s"`. `parse(&format(n)) == Ok(n)` for all n.
//! * `pub enum ParseError` (`Debug`, `Clone`, `PartialEq`, `Eq`, implements `Display` and
//!   `std::error::Error`) with the variants
//!   `Empty` (the text is empty), `MissingNumber` (a unit with no digits before it),
//!   `MissingUnit` (digits at the end with no unit), `UnknownUnit(char)` (any other character
//!   where a unit is expected), `OutOfOrder` (a unit repeated or after a smaller one) and
//!   `Overflow` (the total does not fit in a `u64`).

pub mod duration;
