//! Edit distance for the similarity tiers: Levenshtein over chars, bounded (a band around the
//! diagonal; gives up once the distance must exceed the bound), and the similarity
//! `1 - distance / max(len)` that Roo Code and opencode use.

/// The Levenshtein distance of `a` and `b` if it is at most `bound`.
pub(crate) fn bounded(a: &[char], b: &[char], bound: usize) -> Option<usize> {
    let (a, b) = if a.len() < b.len() { (b, a) } else { (a, b) };
    if a.len() - b.len() > bound {
        return None;
    }
    if b.is_empty() {
        return Some(a.len());
    }
    const FAR: usize = usize::MAX / 2;
    // prev[j]: distance of a[..i] and b[..j].
    let mut prev: Vec<usize> = (0..=b.len())
        .map(|j| if j <= bound { j } else { FAR })
        .collect();
    let mut cur = vec![FAR; b.len() + 1];
    for i in 1..=a.len() {
        let lo = i.saturating_sub(bound).max(1);
        let hi = (i + bound).min(b.len());
        cur[0] = if i <= bound { i } else { FAR };
        if lo > 1 {
            cur[lo - 1] = FAR;
        }
        let mut row_min = cur[0];
        for j in lo..=hi {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let v = (prev[j - 1] + cost).min(prev[j] + 1).min(cur[j - 1] + 1);
            cur[j] = v;
            row_min = row_min.min(v);
        }
        if hi < b.len() {
            cur[hi + 1] = FAR;
        }
        if row_min > bound {
            return None;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[b.len()];
    (d <= bound).then_some(d)
}

/// The Levenshtein distance of `a` and `b`.
pub(crate) fn distance(a: &[char], b: &[char]) -> usize {
    bounded(a, b, a.len().max(b.len())).unwrap_or(usize::MAX)
}

/// `1 - distance / max(len)`; 1 for two empty texts.
pub(crate) fn similarity(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let longest = a.len().max(b.len());
    if longest == 0 {
        return 1.0;
    }
    1.0 - distance(&a, &b) as f64 / longest as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn distances_match_the_textbook_values() {
        assert_eq!(distance(&chars("kitten"), &chars("sitting")), 3);
        assert_eq!(distance(&chars(""), &chars("abc")), 3);
        assert_eq!(distance(&chars("flaw"), &chars("lawn")), 2);
        assert_eq!(distance(&chars("é😀x"), &chars("e😀x")), 1);
        assert_eq!(bounded(&chars("kitten"), &chars("sitting"), 2), None);
        assert_eq!(bounded(&chars("kitten"), &chars("sitting"), 3), Some(3));
        assert_eq!(bounded(&chars("abcdef"), &chars("a"), 2), None);
    }

    #[test]
    fn the_band_agrees_with_the_full_table() {
        let words = [
            "", "a", "ab", "abc", "axc", "cba", "abcabc", "aabbcc", "xyz", "abxcy",
        ];
        for a in words {
            for b in words {
                let full = distance(&chars(a), &chars(b));
                for bound in 0..7 {
                    let banded = bounded(&chars(a), &chars(b), bound);
                    assert_eq!(
                        banded,
                        (full <= bound).then_some(full),
                        "{a:?} {b:?} {bound}"
                    );
                }
            }
        }
    }

    #[test]
    fn similarity_is_one_minus_the_normalised_distance() {
        assert!((similarity("abcd", "abed") - 0.75).abs() < 1e-12);
        assert_eq!(similarity("", ""), 1.0);
        assert_eq!(similarity("a", ""), 0.0);
    }
}
