//! A text with its whitespace runs collapsed to one space, mapped back to the original offsets:
//! what the `whitespace` tier searches, built once per call by the `Haystack` (a leaf, so that
//! the line views and the tier do not import each other).

/// A text with whitespace runs collapsed, and the original offset of every byte of it.
pub(crate) struct Collapsed {
    pub text: String,
    /// For each byte of `text`, the original offset of the char it starts (or continues).
    pub origin: Vec<usize>,
}

impl Collapsed {
    pub fn new(original: &str) -> Self {
        let mut text = String::with_capacity(original.len());
        let mut origin = Vec::with_capacity(original.len());
        let mut in_space = false;
        for (at, c) in original.char_indices() {
            if c.is_whitespace() {
                if !in_space {
                    text.push(' ');
                    origin.push(at);
                }
                in_space = true;
                continue;
            }
            in_space = false;
            text.push(c);
            origin.extend(std::iter::repeat_n(at, c.len_utf8()));
        }
        Collapsed { text, origin }
    }
}
