//! Word frequencies for plain text: splitting, counting and ranking words.

use std::collections::HashMap;

/// Splits `text` into words.
///
/// Words are separated by any whitespace (spaces, tabs, newlines), lose leading and trailing
/// punctuation ("world!" is "world", "don't" stays "don't"), and are lower-cased so that
/// "The" and "the" are the same word. Tokens made only of punctuation are dropped.
pub fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|token| token.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|token| !token.is_empty())
        .map(|token| token.to_lowercase())
        .collect()
}

/// Counts how often each word of `text` occurs.
pub fn count_words(text: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for word in words(text) {
        *counts.entry(word).or_insert(0) += 1;
    }
    counts
}

/// The `n` most frequent words of `text` with their counts: most frequent first, and words
/// with the same count in alphabetical order.
pub fn top_words(text: &str, n: usize) -> Vec<(String, usize)> {
    let mut ranked: Vec<(String, usize)> = count_words(text).into_iter().collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.truncate(n);
    ranked
}
