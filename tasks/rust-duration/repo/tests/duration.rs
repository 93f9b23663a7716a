use durations::duration::{format, parse, ParseError};

#[test]
fn parses_single_units() {
    assert_eq!(parse("45s"), Ok(45));
    assert_eq!(parse("2m"), Ok(120));
    assert_eq!(parse("3h"), Ok(10_800));
    assert_eq!(parse("1d"), Ok(86_400));
    assert_eq!(parse("0s"), Ok(0));
}

#[test]
fn parses_combinations() {
    assert_eq!(parse("1h30m"), Ok(5_400));
    assert_eq!(parse("1d2h3m4s"), Ok(93_784));
    assert_eq!(parse("90m"), Ok(5_400));
    assert_eq!(parse("2d30s"), Ok(172_830));
}

#[test]
fn rejects_malformed_text() {
    assert_eq!(parse(""), Err(ParseError::Empty));
    assert_eq!(parse("10"), Err(ParseError::MissingUnit));
    assert_eq!(parse("1h30"), Err(ParseError::MissingUnit));
    assert_eq!(parse("h"), Err(ParseError::MissingNumber));
    assert_eq!(parse("1hm"), Err(ParseError::MissingNumber));
    assert_eq!(parse("5x"), Err(ParseError::UnknownUnit('x')));
    assert_eq!(parse("1h 30m"), Err(ParseError::UnknownUnit(' ')));
    assert_eq!(parse("-5s"), Err(ParseError::UnknownUnit('-')));
}

#[test]
fn rejects_units_out_of_order() {
    assert_eq!(parse("1m1h"), Err(ParseError::OutOfOrder));
    assert_eq!(parse("1h1h"), Err(ParseError::OutOfOrder));
}

#[test]
fn rejects_overflow() {
    assert_eq!(parse("99999999999999999999s"), Err(ParseError::Overflow));
    assert_eq!(parse("300000000000000d"), Err(ParseError::Overflow));
}

#[test]
fn errors_are_displayable() {
    let err: Box<dyn std::error::Error> = Box::new(ParseError::UnknownUnit('x'));
    assert!(err.to_string().contains('x'));
}

#[test]
fn formats_canonically() {
    assert_eq!(format(0), "0s");
    assert_eq!(format(59), "59s");
    assert_eq!(format(60), "1m");
    assert_eq!(format(5_400), "1h30m");
    assert_eq!(format(93_784), "1d2h3m4s");
    assert_eq!(format(172_830), "2d30s");
}

#[test]
fn round_trips() {
    for n in (0..200_000).step_by(37).chain([u64::MAX]) {
        assert_eq!(parse(&format(n)), Ok(n), "{n}");
    }
}
