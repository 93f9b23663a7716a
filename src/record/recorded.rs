//! The outcome of the run a cassette was recorded from, as the cassette's header keeps it
//! ([`RecordedOutcome`]), and as a replay's record names it ([`Recorded`]).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::outcome::Outcome;

/// The outcome of the run a cassette was recorded from: its verdict, each check, the edit calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedOutcome {
    /// The verdict (`passed`, `failed`, `limit_reached`, ...).
    pub outcome: Outcome,
    #[serde(default)]
    pub checks: Vec<RecordedCheck>,
    #[serde(default)]
    pub edits: RecordedEdits,
}

/// One check of the recording run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedCheck {
    pub name: String,
    pub passed: bool,
}

/// The edit calls of the recording run, by outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedEdits {
    pub calls: u32,
    pub exact: u32,
    pub fuzzy: u32,
    pub failed: u32,
}

/// What a replay's cassette says its recording scored: a verdict, or `unknown` when the
/// cassette kept none (recorded before outcomes were kept). Serialised as the verdict's name or
/// `unknown`, as `runs.csv`'s `recorded_outcome` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Recorded {
    Known(Outcome),
    Unknown,
}

impl Recorded {
    /// The name in reports: the outcome's, or `unknown`.
    pub fn name(self) -> &'static str {
        match self {
            Recorded::Known(outcome) => outcome.name(),
            Recorded::Unknown => "unknown",
        }
    }

    /// The verdict named `name`; anything else is [`Recorded::Unknown`].
    pub fn from_name(name: &str) -> Recorded {
        Outcome::from_name(name).map_or(Recorded::Unknown, Recorded::Known)
    }
}

impl fmt::Display for Recorded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Recorded {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Recorded {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<str>::deserialize(d)?;
        Ok(Recorded::from_name(&name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_verdict_reads_and_writes_as_its_name() {
        for outcome in Outcome::ALL {
            let r = Recorded::Known(outcome);
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, format!("\"{}\"", outcome.name()));
            assert_eq!(serde_json::from_str::<Recorded>(&json).unwrap(), r);
        }
        assert_eq!(
            serde_json::to_string(&Recorded::Unknown).unwrap(),
            "\"unknown\""
        );
        assert_eq!(
            serde_json::from_str::<Recorded>("\"unknown\"").unwrap(),
            Recorded::Unknown
        );
    }

    #[test]
    fn a_header_with_a_verdict_that_is_no_outcome_is_refused() {
        let bad = serde_json::from_str::<RecordedOutcome>(r#"{"outcome":"great"}"#);
        assert!(bad.is_err());
        let good: RecordedOutcome = serde_json::from_str(r#"{"outcome":"limit_reached"}"#).unwrap();
        assert_eq!(good.outcome, Outcome::LimitReached);
    }
}
