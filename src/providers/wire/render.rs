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

/// The placeholders a cassette writes for this run's paths: a piece never ends inside one, so
/// that a replay, which restores each delta on its own, finds every one whole.
const PLACEHOLDERS: [&str; 3] = ["/workspace", "/tmp/harness-bash", "/tmp/harness-run"];

/// Splits `text` into pieces of at most [`PIECE_CHARS`] characters, as deltas arrive (longer
/// where a piece would end inside a path placeholder); an empty text is one empty piece.
pub fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    // The character ranges of every placeholder in the text.
    let mut held: Vec<(usize, usize)> = Vec::new();
    for placeholder in PLACEHOLDERS {
        for (byte, _) in text.match_indices(placeholder) {
            let start = text[..byte].chars().count();
            held.push((start, start + placeholder.chars().count()));
        }
    }
    let mut out = Vec::new();
    let mut from = 0;
    while from < chars.len() {
        let mut to = (from + PIECE_CHARS).min(chars.len());
        if let Some(&(_, end)) = held.iter().find(|(s, e)| *s < to && to < *e) {
            to = end;
        }
        out.push(chars[from..to].iter().collect());
        from = to;
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_join_to_the_text_and_never_cut_a_placeholder() {
        let text = format!(
            "{}cd /workspace/src && ls /tmp/harness-bash",
            "x".repeat(PIECE_CHARS - 5)
        );
        let parts = pieces(&text);
        assert_eq!(parts.concat(), text);
        assert!(parts.iter().any(|p| p.contains("/workspace")), "{parts:?}");
        assert!(
            parts.iter().any(|p| p.contains("/tmp/harness-bash")),
            "{parts:?}"
        );
        // Without a placeholder at the cut, pieces are PIECE_CHARS long.
        let plain = "y".repeat(PIECE_CHARS * 2 + 1);
        assert_eq!(
            pieces(&plain)
                .iter()
                .map(|p| p.chars().count())
                .collect::<Vec<_>>(),
            [PIECE_CHARS, PIECE_CHARS, 1]
        );
        assert_eq!(pieces(""), [""]);
    }
}
