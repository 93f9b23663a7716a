use wordcount::{count_words, top_words, words};

#[test]
fn splits_on_any_whitespace() {
    assert_eq!(words("one two\tthree\nfour  five"), ["one", "two", "three", "four", "five"]);
}

#[test]
fn strips_punctuation_and_lowercases() {
    assert_eq!(words("Hello, World! \"Don't\" -- panic."), ["hello", "world", "don't", "panic"]);
}

#[test]
fn counts_case_insensitively() {
    let counts = count_words("The cat and the hat.\nTHE END");
    assert_eq!(counts.get("the"), Some(&3));
    assert_eq!(counts.get("cat"), Some(&1));
    assert_eq!(counts.get("end"), Some(&1));
    assert_eq!(counts.len(), 5);
}

#[test]
fn ranks_by_count_then_alphabetically() {
    let text = "pear fig apple\nfig apple kiwi\napple date";
    let expected: Vec<(String, usize)> = vec![
        ("apple".into(), 3),
        ("fig".into(), 2),
        ("date".into(), 1),
        ("kiwi".into(), 1),
    ];
    assert_eq!(top_words(text, 4), expected);
}

#[test]
fn top_words_of_empty_text() {
    assert!(top_words("  \n\t ", 3).is_empty());
}
