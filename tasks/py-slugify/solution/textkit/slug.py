"""Turn post titles into URL slugs."""

import re
import unicodedata

_SEPARATORS = re.compile(r"[^a-z0-9]+")


def slugify(title, max_length=None):
    """Return a lower-case, ASCII-only slug for *title*.

    “Crème Brûlée – A Recipe” becomes ‘creme-brulee-a-recipe’.
    """
    # NFKD splits accented letters into a base letter and a combining mark, and folds
    # full-width forms; encoding to ASCII then drops the marks.
    text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    text = text.lower()
    # Collapse every run of non-alphanumerics – spaces, punctuation – into one dash.
    slug = _SEPARATORS.sub("-", text).strip("-")
    if max_length is not None:
        slug = slug[:max_length].rstrip("-")
    return slug
