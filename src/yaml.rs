//! YAML that is not ours to trust (task files, `defaults.yaml`, `harness.yaml`, cassettes),
//! parsed with `serde_yaml_ng` after a pre-scan of its nesting that takes time linear in the
//! file.
//!
//! libyaml's scanner (under `serde_yaml_ng`) does work in proportion to the number of open flow
//! collections (`[`, `{`) for every token it reads, so a file nested 100,000 levels deep took
//! 39 seconds to be refused, although `serde_yaml_ng` refuses anything deeper than 128 levels
//! anyway. The pre-scan reads the tokens as libyaml does, only as far as it must to know where
//! a `[` or `{` opens a collection (not inside a quoted, plain or block scalar, nor a comment; a
//! block scalar ends where libyaml's indentation rules end it), and refuses a file whose flow
//! collections nest deeper than [`MAX_DEPTH`] before libyaml sees it. Wherever libyaml would
//! stop with a syntax error the pre-scan stops too and leaves the error to it. A file nested too
//! deep in block style (which libyaml reads in linear time) gets the same error from
//! `serde_yaml_ng`'s own limit.
//!
//! Depends on nothing else in the crate.

use serde::de::DeserializeOwned;

/// The deepest nesting read: `serde_yaml_ng`'s own recursion limit, so the pre-scan refuses
/// nothing `serde_yaml_ng` would accept.
pub const MAX_DEPTH: usize = 128;

/// A file nested deeper than [`MAX_DEPTH`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "nested more than {limit} levels deep at line {line} column {column} (a task, cassette or \
     config needs a few levels; the file is probably generated or corrupt)"
)]
pub struct TooDeep {
    /// Where the level past the limit opens (1-based).
    pub line: usize,
    pub column: usize,
    pub limit: usize,
}

/// Why YAML text could not be read.
#[derive(Debug, thiserror::Error)]
pub enum YamlError {
    #[error(transparent)]
    TooDeep(#[from] TooDeep),
    #[error(transparent)]
    Syntax(#[from] serde_yaml_ng::Error),
}

impl YamlError {
    /// Where the problem is, as (line, column), 1-based.
    pub fn location(&self) -> Option<(usize, usize)> {
        match self {
            YamlError::TooDeep(d) => Some((d.line, d.column)),
            YamlError::Syntax(e) => e.location().map(|l| (l.line(), l.column())),
        }
    }
}

/// `serde_yaml_ng::from_str`, with nesting deeper than [`MAX_DEPTH`] refused first, in linear
/// time, and named as such however it is written.
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, YamlError> {
    // A byte-order mark opens the files some Windows editors save; YAML allows it there, and
    // the parser would take it for the start of a second document.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    check_depth(text)?;
    serde_yaml_ng::from_str(text).map_err(|e| {
        match e.location() {
            // Block-style nesting, which the pre-scan leaves to the parser.
            Some(at) if e.to_string().starts_with("recursion limit exceeded") => {
                YamlError::TooDeep(TooDeep {
                    line: at.line(),
                    column: at.column(),
                    limit: MAX_DEPTH,
                })
            }
            _ => YamlError::Syntax(e),
        }
    })
}

/// Refuses `text` if its flow collections (`[...]`, `{...}`) nest deeper than [`MAX_DEPTH`], in
/// one pass over it.
pub fn check_depth(text: &str) -> Result<(), TooDeep> {
    Scan::new(text).run().map(|_| ())
}

/// Where libyaml is in the text: what [`Scan`] needs of its state.
#[derive(Debug, Clone, Copy)]
struct Mark {
    line: usize,
    column: usize,
    /// Characters from the start.
    index: usize,
}

/// The pre-scan: a reading of libyaml's scanner (`yaml_parser_fetch_next_token` and the
/// scalar scanners) that keeps only the flow level, the block indentation (which ends block and
/// plain scalars) and the one possible simple key of the block context (whose `:` sets that
/// indentation).
struct Scan<'a> {
    s: &'a [u8],
    pos: usize,
    mark: Mark,
    flow: usize,
    /// The indentation of the innermost block collection (-1 outside any), and the outer ones.
    indent: isize,
    indents: Vec<isize>,
    key_allowed: bool,
    /// A token of the block context that may turn out to be a mapping key.
    key: Option<Mark>,
    deepest: usize,
}

/// libyaml stops here with a syntax error; the parser will say which.
struct Stop;

impl<'a> Scan<'a> {
    fn new(text: &'a str) -> Scan<'a> {
        Scan {
            s: text.as_bytes(),
            pos: 0,
            mark: Mark {
                line: 0,
                column: 0,
                index: 0,
            },
            flow: 0,
            indent: -1,
            indents: Vec::new(),
            key_allowed: true,
            key: None,
            deepest: 0,
        }
    }

    /// Reads to the end (or to where libyaml stops); the deepest flow level seen.
    fn run(mut self) -> Result<usize, TooDeep> {
        loop {
            match self.token() {
                Ok(true) => {}
                Ok(false) | Err(Ok(Stop)) => return Ok(self.deepest),
                Err(Err(deep)) => return Err(deep),
            }
        }
    }

    fn at(&self, k: usize) -> u8 {
        self.s.get(self.pos + k).copied().unwrap_or(0)
    }

    fn eof(&self) -> bool {
        self.pos >= self.s.len()
    }

    /// The length in bytes of the line break at `pos + k` (0 if there is none): `\r\n`, `\r`,
    /// `\n`, NEL, LS, PS, as libyaml reads them.
    fn break_at(&self, k: usize) -> usize {
        match (self.at(k), self.at(k + 1), self.at(k + 2)) {
            (b'\r', b'\n', _) => 2,
            (b'\r' | b'\n', _, _) => 1,
            (0xC2, 0x85, _) => 2,
            (0xE2, 0x80, 0xA8 | 0xA9) => 3,
            _ => 0,
        }
    }

    fn blank_at(&self, k: usize) -> bool {
        matches!(self.at(k), b' ' | b'\t')
    }

    fn blankz_at(&self, k: usize) -> bool {
        self.pos + k >= self.s.len() || self.blank_at(k) || self.break_at(k) > 0
    }

    fn breakz_at(&self, k: usize) -> bool {
        self.pos + k >= self.s.len() || self.break_at(k) > 0
    }

    /// Moves past one character (never a line break).
    fn skip(&mut self) {
        let width = match self.at(0) {
            b if b < 0x80 => 1,
            b if b >= 0xF0 => 4,
            b if b >= 0xE0 => 3,
            _ => 2,
        };
        self.pos = (self.pos + width).min(self.s.len());
        self.mark.column += 1;
        self.mark.index += 1;
    }

    /// Moves past the line break at `pos`.
    fn skip_break(&mut self) {
        self.pos += self.break_at(0).max(1);
        self.mark.line += 1;
        self.mark.column = 0;
        self.mark.index += 1;
    }

    fn skip_to_break(&mut self) {
        while !self.breakz_at(0) {
            self.skip();
        }
    }

    fn document_marker(&self) -> bool {
        self.mark.column == 0
            && (self.s[self.pos..].starts_with(b"---") || self.s[self.pos..].starts_with(b"..."))
            && self.blankz_at(3)
    }

    /// Reads one token; `Ok(false)` at the end of the text.
    fn token(&mut self) -> Result<bool, Result<Stop, TooDeep>> {
        self.skip_to_next_token();
        if self.eof() {
            return Ok(false);
        }
        // A simple key ends with its line, or 1024 characters on.
        if self
            .key
            .is_some_and(|k| k.line < self.mark.line || k.index + 1024 < self.mark.index)
        {
            self.key = None;
        }
        self.unroll(self.mark.column as isize);
        let c = self.at(0);
        if self.mark.column == 0 && c == b'%' {
            self.skip_to_break();
            self.key_allowed = false;
            return Ok(true);
        }
        if self.document_marker() {
            self.unroll(-1);
            self.key = None;
            self.key_allowed = false;
            for _ in 0..3 {
                self.skip();
            }
            return Ok(true);
        }
        let flow = self.flow > 0;
        match c {
            b'[' | b'{' => {
                self.save_key();
                self.flow += 1;
                if self.flow > MAX_DEPTH {
                    return Err(Err(self.too_deep()));
                }
                self.deepest = self.deepest.max(self.flow);
                self.key_allowed = true;
                self.skip();
            }
            b']' | b'}' => {
                self.flow = self.flow.saturating_sub(1);
                self.key_allowed = false;
                self.skip();
            }
            b',' => {
                self.key_allowed = true;
                self.skip();
            }
            b'-' if self.blankz_at(1) => {
                self.roll(self.mark.column);
                self.forget_key();
                self.key_allowed = true;
                self.skip();
            }
            b'?' if flow || self.blankz_at(1) => {
                self.roll(self.mark.column);
                self.forget_key();
                self.key_allowed = !flow;
                self.skip();
            }
            b':' if flow || self.blankz_at(1) => {
                if flow {
                    self.key_allowed = false;
                } else if let Some(key) = self.key.take() {
                    self.roll(key.column);
                    self.key_allowed = false;
                } else {
                    self.roll(self.mark.column);
                    self.key_allowed = true;
                }
                self.skip();
            }
            b'*' | b'&' => {
                self.save_key();
                self.skip();
                while self.at(0).is_ascii_alphanumeric() || matches!(self.at(0), b'_' | b'-') {
                    self.skip();
                }
                self.key_allowed = false;
            }
            b'!' => {
                self.save_key();
                self.tag()?;
                self.key_allowed = false;
            }
            b'|' | b'>' if !flow => {
                self.forget_key();
                self.key_allowed = true;
                self.block_scalar()?;
            }
            b'\'' | b'"' => {
                self.save_key();
                self.quoted(c);
                self.key_allowed = false;
            }
            _ => {
                let indicator = self.blankz_at(0) || b"-?:,[]{}#&*!|>'\"%@`".contains(&c);
                let plain = !indicator
                    || (c == b'-' && !self.blank_at(1))
                    || (!flow && matches!(c, b'?' | b':') && !self.blankz_at(1));
                if !plain {
                    return Err(Ok(Stop));
                }
                self.save_key();
                self.plain();
            }
        }
        Ok(true)
    }

    fn too_deep(&self) -> TooDeep {
        TooDeep {
            line: self.mark.line + 1,
            column: self.mark.column + 1,
            limit: MAX_DEPTH,
        }
    }

    /// Whitespace, comments and line breaks up to the next token.
    fn skip_to_next_token(&mut self) {
        loop {
            if self.mark.column == 0 && self.s[self.pos..].starts_with("\u{FEFF}".as_bytes()) {
                self.skip();
            }
            while self.at(0) == b' '
                || ((self.flow > 0 || !self.key_allowed) && self.at(0) == b'\t')
            {
                self.skip();
            }
            if self.at(0) == b'#' {
                self.skip_to_break();
            }
            if self.break_at(0) == 0 {
                return;
            }
            self.skip_break();
            if self.flow == 0 {
                self.key_allowed = true;
            }
        }
    }

    fn save_key(&mut self) {
        if self.key_allowed && self.flow == 0 {
            self.key = Some(self.mark);
        }
    }

    fn forget_key(&mut self) {
        if self.flow == 0 {
            self.key = None;
        }
    }

    /// A block collection at `column` opens, if it is deeper than the current one.
    fn roll(&mut self, column: usize) {
        if self.flow == 0 && self.indent < column as isize {
            self.indents.push(self.indent);
            self.indent = column as isize;
        }
    }

    /// The block collections deeper than `column` close.
    fn unroll(&mut self, column: isize) {
        if self.flow > 0 {
            return;
        }
        while self.indent > column {
            self.indent = self.indents.pop().unwrap_or(-1);
        }
    }

    /// A `'...'` or `"..."` scalar (`quote` is its quote), possibly over several lines.
    fn quoted(&mut self, quote: u8) {
        self.skip();
        while !self.eof() {
            let c = self.at(0);
            if self.break_at(0) > 0 {
                self.skip_break();
            } else if quote == b'\'' && c == b'\'' && self.at(1) == b'\'' {
                self.skip();
                self.skip();
            } else if quote == b'"' && c == b'\\' {
                self.skip();
                if self.break_at(0) > 0 {
                    self.skip_break();
                } else if !self.eof() {
                    self.skip();
                }
            } else if c == quote {
                self.skip();
                return;
            } else {
                self.skip();
            }
        }
    }

    /// A tag: `!<uri>`, `!handle!suffix` or `!suffix`.
    fn tag(&mut self) -> Result<(), Result<Stop, TooDeep>> {
        if self.at(1) == b'<' {
            while !self.blankz_at(0) && self.at(0) != b'>' {
                self.skip();
            }
            if self.at(0) != b'>' {
                return Err(Ok(Stop));
            }
            self.skip();
        } else {
            self.skip();
            while self.at(0).is_ascii_alphanumeric() || b"-_;/?:@&=+$.%!~*'()".contains(&self.at(0))
            {
                self.skip();
            }
        }
        if self.blankz_at(0) || (self.flow > 0 && self.at(0) == b',') {
            Ok(())
        } else {
            Err(Ok(Stop))
        }
    }

    /// A plain scalar: it ends at `: `, at ` #`, at a flow indicator in a flow collection, at
    /// a document marker, or at a line indented no deeper than its block collection.
    fn plain(&mut self) {
        let indent = self.indent + 1;
        let start = self.pos;
        let mut leading_blanks = false;
        loop {
            if self.document_marker() || self.at(0) == b'#' {
                break;
            }
            while !self.blankz_at(0) {
                let c = self.at(0);
                if (c == b':' && self.blankz_at(1))
                    || (self.flow > 0 && matches!(c, b',' | b'[' | b']' | b'{' | b'}'))
                    || (self.flow > 0 && c == b':' && b",?[]{}".contains(&self.at(1)))
                {
                    break;
                }
                self.skip();
            }
            if !(self.blank_at(0) || self.break_at(0) > 0) {
                break;
            }
            while self.blank_at(0) || self.break_at(0) > 0 {
                if self.blank_at(0) {
                    self.skip();
                } else {
                    self.skip_break();
                    leading_blanks = true;
                }
            }
            if self.flow == 0 && (self.mark.column as isize) < indent {
                break;
            }
        }
        if self.pos == start {
            // Nothing libyaml would read as a scalar; move on rather than loop.
            self.skip();
        }
        self.key_allowed = leading_blanks;
    }

    /// A `|` or `>` scalar: its header line, then every line indented at least as deep as its
    /// content (given, or found from the first line with text, and deeper than its block
    /// collection), and the empty lines between.
    fn block_scalar(&mut self) -> Result<(), Result<Stop, TooDeep>> {
        self.skip();
        let digit = |c: u8| (b'1'..=b'9').contains(&c);
        let mut increment = 0;
        if matches!(self.at(0), b'+' | b'-') {
            self.skip();
            if digit(self.at(0)) {
                increment = isize::from(self.at(0) - b'0');
                self.skip();
            }
        } else if digit(self.at(0)) {
            increment = isize::from(self.at(0) - b'0');
            self.skip();
            if matches!(self.at(0), b'+' | b'-') {
                self.skip();
            }
        }
        while self.blank_at(0) {
            self.skip();
        }
        if self.at(0) == b'#' {
            self.skip_to_break();
        }
        if !self.breakz_at(0) {
            return Err(Ok(Stop));
        }
        if !self.eof() {
            self.skip_break();
        }
        let mut indent = match increment {
            0 => 0,
            n if self.indent >= 0 => self.indent + n,
            n => n,
        };
        self.block_scalar_breaks(&mut indent)?;
        while self.mark.column as isize == indent && !self.eof() {
            self.skip_to_break();
            if self.eof() {
                break;
            }
            self.skip_break();
            self.block_scalar_breaks(&mut indent)?;
        }
        Ok(())
    }

    /// The indentation and empty lines before a line of a block scalar; settles `indent` (0:
    /// not known yet) on the first line with text.
    fn block_scalar_breaks(&mut self, indent: &mut isize) -> Result<(), Result<Stop, TooDeep>> {
        let mut deepest = 0;
        loop {
            while (*indent == 0 || (self.mark.column as isize) < *indent) && self.at(0) == b' ' {
                self.skip();
            }
            deepest = deepest.max(self.mark.column as isize);
            if (*indent == 0 || (self.mark.column as isize) < *indent) && self.at(0) == b'\t' {
                return Err(Ok(Stop));
            }
            if self.break_at(0) == 0 {
                break;
            }
            self.skip_break();
        }
        if *indent == 0 {
            *indent = deepest.max(self.indent + 1).max(1);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deepest(text: &str) -> usize {
        Scan::new(text).run().unwrap()
    }

    fn serde_accepts(text: &str) -> bool {
        serde_yaml_ng::from_str::<serde_yaml_ng::Value>(text).is_ok()
    }

    #[test]
    fn a_byte_order_mark_and_crlf_lines_read_as_without() {
        let plain = "id: t\nprompt: |\n  Do it.\n  Twice.\n";
        let windows = format!("\u{feff}{}", plain.replace('\n', "\r\n"));
        let read = |text: &str| from_str::<serde_yaml_ng::Value>(text).unwrap();
        assert_eq!(read(&windows), read(plain));
        assert_eq!(read(&format!("\u{feff}{plain}")), read(plain));
    }

    #[test]
    fn flow_nesting_past_the_limit_is_refused_where_it_passes_it() {
        let deep = format!(
            "id: deep\nchecks: {}{}\n",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert_eq!(
            check_depth(&deep),
            Err(TooDeep {
                line: 2,
                column: 9 + MAX_DEPTH,
                limit: MAX_DEPTH
            })
        );
        let err = from_str::<serde_yaml_ng::Value>(&deep).unwrap_err();
        assert_eq!(
            err.to_string(),
            "nested more than 128 levels deep at line 2 column 137 (a task, cassette or config \
             needs a few levels; the file is probably generated or corrupt)"
        );
        // Unclosed, in mappings, over lines: the same.
        assert!(check_depth(&"{a: ".repeat(1000)).is_err());
        assert!(check_depth(&"[\n".repeat(1000)).is_err());
        assert!(check_depth(&"- [".repeat(1000)).is_err());
    }

    #[test]
    fn nothing_serde_yaml_ng_accepts_is_refused() {
        // Around the limit, the pre-scan refuses only what the parser refuses too.
        for depth in MAX_DEPTH - 3..=MAX_DEPTH + 1 {
            for text in [
                format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
                format!("k: {}1{}", "{a: ".repeat(depth), "}".repeat(depth)),
            ] {
                if check_depth(&text).is_err() {
                    assert!(!serde_accepts(&text), "depth {depth}: {text}");
                }
            }
        }
        // And the limit is the parser's: one level less passes both, one more neither.
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(check_depth(&nested(MAX_DEPTH)).is_ok() && serde_accepts(&nested(MAX_DEPTH)));
        assert!(!serde_accepts(&nested(MAX_DEPTH + 1)));
    }

    #[test]
    fn brackets_inside_scalars_and_comments_are_text() {
        let many = "[{".repeat(MAX_DEPTH / 2 + 1);
        let texts = [
            // Quoted, over lines, with escapes and doubled quotes.
            format!("a: '{many} it''s\n  {many}'\nb: \"\\\" {many}\\\n {many}\"\n"),
            // Plain, in a line and continued on more indented lines.
            format!("a: x {many}\n  {many} more\nb: c#{many}\n"),
            format!("- x {many}\n- y\n  {many}\n"),
            // Comments.
            format!("# {many}\na: 1 # {many}\nb: [1, 2] #{many}\n"),
            // Block scalars: keep/strip, explicit indentation, empty lines, deeper lines.
            format!("a: |\n  {many}\n\n    {many}\nb: >-\n  {many}\n"),
            format!("- |2\n   {many}\n- k: |+\n\n    {many}\n  j: 1\n"),
            format!("a:\n  - b: |\n      {many}\n    c: >\n     {many}\n"),
            format!("--- |\n {many}\n...\n"),
            // Tags and anchors.
            format!("a: !!str &x '{many}'\nb: *x\nc: !<tag:x,2000:[a]> [1]\n"),
        ];
        for text in &texts {
            assert!(serde_accepts(text), "the test's own YAML is valid: {text}");
            assert!(deepest(text) <= 1, "{text}");
        }
    }

    #[test]
    fn a_deep_collection_after_scalars_is_still_found() {
        let deep = format!("[{}1{}]", "[".repeat(200), "]".repeat(200));
        for before in [
            "a: |\n  [[[\n  ]]]\n",
            "a: '[['\n",
            "a: \"[[\\\"\"\n",
            "a: x [[ y\n  z ]]\n",
            "# [[[\n",
            "- |2\n   text\n",
        ] {
            let text = format!("{before}b: {deep}\n");
            assert!(check_depth(&text).is_err(), "{text}");
            assert!(!serde_accepts(&text), "{text}");
        }
        // A block scalar ends at a line no deeper than its collection.
        let text = format!("k:\n  a: |\n    text\n  b: {deep}\n");
        assert!(check_depth(&text).is_err());
    }

    #[test]
    fn what_serde_writes_reads_flat() {
        // Strings full of indicators, as cassettes hold them (tool output, model text).
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let alphabet: Vec<char> = "[]{}'\"#:- |>!&*,?%@`\\\n\t xyz\u{85}\u{2028}é"
            .chars()
            .collect();
        for _ in 0..300 {
            let mut strings = Vec::new();
            for _ in 0..6 {
                let len = (rng % 40) as usize;
                let s: String = (0..len)
                    .map(|_| {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        alphabet[(rng % alphabet.len() as u64) as usize]
                    })
                    .collect();
                strings.push(s);
            }
            let value = serde_json::json!({
                "a": strings[0],
                "list": [strings[1], {"k": strings[2], "empty": [], "none": {}}],
                strings[3].clone(): [[strings[4]], strings[5]],
            });
            let text = serde_yaml_ng::to_string(&value).unwrap();
            assert!(serde_accepts(&text), "{text}");
            assert!(deepest(&text) <= 1, "{text:?}");
        }
    }

    #[test]
    fn the_shipped_suite_and_cassettes_read_as_they_are() {
        fn yaml_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    yaml_files(&path, out);
                } else if path.extension().is_some_and(|e| e == "yaml") {
                    out.push(path);
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        yaml_files(&root.join("tasks"), &mut files);
        yaml_files(&root.join("cassettes"), &mut files);
        assert!(files.len() > 40, "{files:?}");
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            assert!(deepest(&text) <= 2, "{}", file.display());
        }
    }

    #[test]
    fn block_nesting_past_the_limit_is_named_the_same_way() {
        let text = format!("a:\n{}x\n", "- ".repeat(200));
        assert!(
            check_depth(&text).is_ok(),
            "block style is the parser's to refuse"
        );
        let err = from_str::<serde_yaml_ng::Value>(&text).unwrap_err();
        assert!(matches!(err, YamlError::TooDeep(_)), "{err}");
        assert!(
            err.to_string()
                .starts_with("nested more than 128 levels deep")
        );
    }
}
