import unittest

from textkit.slug import slugify


class SlugifyTest(unittest.TestCase):
    def test_plain_ascii(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")

    def test_surrounding_punctuation_is_dropped(self):
        self.assertEqual(slugify("  --Release notes (v2)--  "), "release-notes-v2")

    def test_accents_are_transliterated(self):
        self.assertEqual(slugify("Cr\u00e8me Br\u00fbl\u00e9e \u2013 A Recipe"), "creme-brulee-a-recipe")

    def test_more_accents(self):
        self.assertEqual(slugify("D\u00e9j\u00e0 vu, na\u00efve caf\u00e9"), "deja-vu-naive-cafe")

    def test_full_width_letters(self):
        self.assertEqual(slugify("\uff21\uff22\uff23 news"), "abc-news")

    def test_letters_without_ascii_form_are_dropped(self):
        self.assertEqual(slugify("\u03a9mega \u2192 final"), "mega-final")

    def test_max_length_does_not_end_with_dash(self):
        self.assertEqual(slugify("Cr\u00e8me br\u00fbl\u00e9e recipe", max_length=6), "creme")


if __name__ == "__main__":
    unittest.main()
