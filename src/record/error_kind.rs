//! What failed in a run that ended in `error`: a provider failure, a cassette or setup failure
//! of the harness (infrastructure errors, left out of pass rates), or the model's own error
//! (counted against it). One enum, spelled once; `runs.csv`, `run.json` and the journal keep its
//! snake_case name.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What kind of failure ended an `error` run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ErrorKind {
    /// The provider refused the key (401, 403, a wrong Gemini key).
    Authentication,
    /// 429, or the provider's rate-limit error.
    RateLimited,
    /// 529, `overloaded_error`.
    Overloaded,
    /// A 5xx or an error event in the stream.
    ServerError,
    /// The conversation no longer fits the model's context: the model's (or its agent's) doing.
    ContextTooLong,
    /// The provider rejected the request (400, 404, 422).
    InvalidRequest,
    /// No connection could be made.
    ConnectionFailed,
    /// The stream ended before its closing event.
    StreamCut,
    /// The stream sent nothing for too long.
    StreamStalled,
    /// A reply the wire format cannot parse.
    Protocol,
    /// A cassette is missing, broken or could not be written.
    Cassette,
    /// The run could not be set up (workspace, temp folders, an unknown provider, a crash), or
    /// a check could not be started.
    Setup,
    /// The model's reply ended in error: a refusal, an error event it caused.
    ModelError,
    /// An error that came without a kind (or a kind this harness does not know, read from a
    /// report written by another version).
    Unknown,
}

impl ErrorKind {
    /// Every kind, in a stable order.
    pub const ALL: [ErrorKind; 14] = [
        ErrorKind::Authentication,
        ErrorKind::RateLimited,
        ErrorKind::Overloaded,
        ErrorKind::ServerError,
        ErrorKind::ContextTooLong,
        ErrorKind::InvalidRequest,
        ErrorKind::ConnectionFailed,
        ErrorKind::StreamCut,
        ErrorKind::StreamStalled,
        ErrorKind::Protocol,
        ErrorKind::Cassette,
        ErrorKind::Setup,
        ErrorKind::ModelError,
        ErrorKind::Unknown,
    ];

    /// The stable name used in reports (`rate_limited`).
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Authentication => "authentication",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::Overloaded => "overloaded",
            ErrorKind::ServerError => "server_error",
            ErrorKind::ContextTooLong => "context_too_long",
            ErrorKind::InvalidRequest => "invalid_request",
            ErrorKind::ConnectionFailed => "connection_failed",
            ErrorKind::StreamCut => "stream_cut",
            ErrorKind::StreamStalled => "stream_stalled",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Cassette => "cassette",
            ErrorKind::Setup => "setup",
            ErrorKind::ModelError => "model_error",
            ErrorKind::Unknown => "unknown",
        }
    }

    /// The kind named `name`; a name this harness does not know is [`ErrorKind::Unknown`].
    pub fn from_name(name: &str) -> ErrorKind {
        ErrorKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .unwrap_or(ErrorKind::Unknown)
    }

    /// Whether the failure is the model's own doing (or the conversation it built): such a run
    /// counts against the model like a failure. Every other kind is an infrastructure error,
    /// left out of pass rates.
    pub fn is_model_error(self) -> bool {
        matches!(self, ErrorKind::ModelError | ErrorKind::ContextTooLong)
    }

    /// Whether the failure was not the model's (provider, cassette, setup, unknown).
    pub fn is_infrastructure(self) -> bool {
        !self.is_model_error()
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq<&str> for ErrorKind {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

impl Serialize for ErrorKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for ErrorKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<str>::deserialize(d)?;
        Ok(ErrorKind::from_name(&name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_read_as_unknown() {
        for kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_name(kind.name()), kind);
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.name()));
            assert_eq!(serde_json::from_str::<ErrorKind>(&json).unwrap(), kind);
        }
        assert_eq!(
            serde_json::from_str::<ErrorKind>("\"a_kind_from_the_future\"").unwrap(),
            ErrorKind::Unknown
        );
    }

    #[test]
    fn only_the_models_own_errors_count_against_it() {
        let model: Vec<ErrorKind> = ErrorKind::ALL
            .into_iter()
            .filter(|k| k.is_model_error())
            .collect();
        assert_eq!(model, [ErrorKind::ContextTooLong, ErrorKind::ModelError]);
        assert!(ErrorKind::Unknown.is_infrastructure());
        assert!(ErrorKind::Cassette.is_infrastructure());
    }
}
