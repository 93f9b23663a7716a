"""The .env format accepted by appcfg.envfile.

parse_env(text) returns a dict of the assignments in *text*; load_env(path) does the same
for a file. Format:
  * one KEY=value per line; blank lines and lines starting with '#' are ignored;
  * an optional leading 'export ' is allowed;
  * whitespace around the key and the value is stripped;
  * an unquoted value ends at ' #' (an inline comment);
  * "double quoted" values keep '#' and spaces and understand \\n, \\t, \\" and \\\\ escapes;
  * 'single quoted' values are taken literally;
  * a later assignment overrides an earlier one;
  * a line without '=' raises ValueError naming the line number ("line 3: ...").
"""
import os
import tempfile
import unittest

from appcfg.envfile import load_env, parse_env


class ParseEnvTest(unittest.TestCase):
    def test_simple_pairs(self):
        self.assertEqual(parse_env("A=1\nB=two\n"), {"A": "1", "B": "two"})

    def test_blank_lines_and_comments(self):
        text = "# settings\n\nA=1\n   # indented comment\n\nB=2"
        self.assertEqual(parse_env(text), {"A": "1", "B": "2"})

    def test_whitespace_is_stripped(self):
        self.assertEqual(parse_env("  NAME =  demo app  \n"), {"NAME": "demo app"})

    def test_export_prefix(self):
        self.assertEqual(parse_env("export TOKEN=abc\n"), {"TOKEN": "abc"})

    def test_inline_comment(self):
        self.assertEqual(parse_env("PORT=8080 # http\n"), {"PORT": "8080"})

    def test_hash_inside_value_without_space_is_kept(self):
        self.assertEqual(parse_env("COLOR=#ff0000\n"), {"COLOR": "#ff0000"})

    def test_double_quotes(self):
        text = 'GREETING="hello # world"\nMULTI="a\\nb\\t\\"c\\" \\\\"\n'
        self.assertEqual(parse_env(text), {"GREETING": "hello # world", "MULTI": 'a\nb\t"c" \\'})

    def test_single_quotes_are_literal(self):
        self.assertEqual(parse_env("RAW='a\\nb # c'\n"), {"RAW": "a\\nb # c"})

    def test_empty_value(self):
        self.assertEqual(parse_env("EMPTY=\nQ=\"\"\n"), {"EMPTY": "", "Q": ""})

    def test_later_assignment_wins(self):
        self.assertEqual(parse_env("A=1\nA=2\n"), {"A": "2"})

    def test_value_may_contain_equals(self):
        self.assertEqual(parse_env("URL=http://x/?a=1&b=2\n"), {"URL": "http://x/?a=1&b=2"})

    def test_line_without_equals_is_an_error(self):
        with self.assertRaises(ValueError) as ctx:
            parse_env("A=1\n\nnot an assignment\n")
        self.assertIn("line 3", str(ctx.exception))

    def test_crlf_line_endings(self):
        self.assertEqual(parse_env("A=1\r\nB=2\r\n"), {"A": "1", "B": "2"})


class LoadEnvTest(unittest.TestCase):
    def test_load_env_reads_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, ".env")
            with open(path, "w", encoding="utf-8") as f:
                f.write("export NAME=\"caf\u00e9\"\n")
            self.assertEqual(load_env(path), {"NAME": "caf\u00e9"})


if __name__ == "__main__":
    unittest.main()
