use roman::{from_roman, to_roman};

#[test]
fn formats_numbers() {
    assert_eq!(to_roman(1).as_deref(), Some("I"));
    assert_eq!(to_roman(4).as_deref(), Some("IV"));
    assert_eq!(to_roman(14).as_deref(), Some("XIV"));
    assert_eq!(to_roman(1994).as_deref(), Some("MCMXCIV"));
    assert_eq!(to_roman(2024).as_deref(), Some("MMXXIV"));
    assert_eq!(to_roman(3999).as_deref(), Some("MMMCMXCIX"));
}

#[test]
fn rejects_out_of_range() {
    assert_eq!(to_roman(0), None);
    assert_eq!(to_roman(4000), None);
}

#[test]
fn parses_subtractive_forms() {
    assert_eq!(from_roman("IV"), Some(4));
    assert_eq!(from_roman("IX"), Some(9));
    assert_eq!(from_roman("MCMXCIV"), Some(1994));
}

#[test]
fn parses_repeated_digits() {
    assert_eq!(from_roman("III"), Some(3));
    assert_eq!(from_roman("XX"), Some(20));
    assert_eq!(from_roman("MMXXIV"), Some(2024));
    assert_eq!(from_roman("MMMCMXCIX"), Some(3999));
}

#[test]
fn rejects_invalid_input() {
    assert_eq!(from_roman(""), None);
    assert_eq!(from_roman("IIII"), None);
    assert_eq!(from_roman("VX"), None);
    assert_eq!(from_roman("abc"), None);
}

#[test]
fn round_trips_every_value() {
    for n in 1..=3999 {
        let s = to_roman(n).unwrap();
        assert_eq!(from_roman(&s), Some(n), "{s}");
    }
}
