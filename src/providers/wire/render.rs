//! What every format's render direction shares: the options of a rendered reply
//! ([`RenderOptions`]) and the way text is cut into deltas ([`pieces`]).
//!
//! A format renders the blocks of an [`crate::conversation::AssistantMessage`] in order, with
//! its usage, stop reason, response id and model. What the message lacks is minted from the
//! numbers in [`RenderOptions`], deterministically, in the API's own shape: a tool-call id
//! (`toolu_03`, `call_03`, `call_03|fc_03`; Gemini sends none), a response id by turn (`msg_01`,
//! `chatcmpl-01`, `resp_01`, `gen_01`), a thinking signature (`sig_01`; Gemini's base64). So the
//! stream parser reads a rendered message back to itself when it carries its ids and signatures,
//! except for what the API cannot say: OpenAI Responses and Gemini count cache writes as input,
//! and a stop reason `error` or `aborted` comes back as `error` with the parser's message.
//!
//! Depends on nothing in the crate.

/// How many characters one text, thinking or argument delta carries.
pub const PIECE_CHARS: usize = 24;

/// The numbers and faults of one rendered reply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// The reply's number in its conversation (1-based): minted response ids, item ids and
    /// signatures.
    pub turn_no: usize,
    /// The number of the reply's first tool call in its conversation (1-based): minted call ids.
    pub first_call_no: usize,
    /// A stop value in the API's own words, sent instead of the reply's stop reason
    /// (`cancelled`, `SAFETY`; for OpenAI Responses `failed` ends with `response.failed`).
    pub wire_stop_reason: Option<String>,
    /// End the stream with this error event after the reply's first events, instead of the
    /// reply.
    pub stream_error: Option<StreamError>,
}

impl RenderOptions {
    /// The `turn_no`th reply of a conversation, its first tool call the `first_call_no`th.
    pub fn new(turn_no: usize, first_call_no: usize) -> Self {
        RenderOptions {
            turn_no,
            first_call_no,
            ..RenderOptions::default()
        }
    }
}

/// An error event in a streamed reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamError {
    pub message: String,
    /// The API's own name of the error (Anthropic's `error.type`, OpenAI's `type` or `code`,
    /// Gemini's `status`); `None` for the format's "overloaded" or "server error".
    pub kind: Option<String>,
}

/// Splits `text` into pieces of at most [`PIECE_CHARS`] characters, as deltas arrive; an empty
/// text is one empty piece.
pub fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars
        .chunks(PIECE_CHARS)
        .map(|c| c.iter().collect())
        .collect()
}

/// The error type Anthropic and OpenAI name an HTTP error status with.
pub fn error_type(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        429 => "rate_limit_error",
        529 | 503 => "overloaded_error",
        _ => "api_error",
    }
}
