//! One thing wrong with what a suite was asked to do, found before its first run starts: what
//! is wrong and how to fix it. The CLI prints each as an `error:` line and a `hint:` line.

/// One thing wrong with the invocation: what, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The `error:` line, without the prefix.
    pub message: String,
    /// The `hint:` line, without the prefix.
    pub hint: String,
}

impl Problem {
    /// A problem with its hint.
    pub fn new(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Problem {
            message: message.into(),
            hint: hint.into(),
        }
    }
}
