"""Parse .env files: KEY=value lines with comments, quotes and an optional `export`."""

_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}


def _unquote_double(body):
    out = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _parse_value(raw, lineno):
    raw = raw.strip()
    if raw[:1] in ('"', "'"):
        quote = raw[0]
        end = 1
        while end < len(raw):
            if raw[end] == "\\" and quote == '"':
                end += 2
                continue
            if raw[end] == quote:
                break
            end += 1
        if end >= len(raw):
            raise ValueError(f"line {lineno}: unterminated {quote} quote")
        body = raw[1:end]
        return _unquote_double(body) if quote == '"' else body
    comment = raw.find(" #")
    if comment >= 0:
        raw = raw[:comment]
    return raw.strip()


def parse_env(text):
    """Return the assignments in *text* as a dict; later keys override earlier ones."""
    values = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("export "):
            stripped = stripped[len("export "):].lstrip()
        key, sep, raw = stripped.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"line {lineno}: expected KEY=value, got {line.strip()!r}")
        values[key] = _parse_value(raw, lineno)
    return values


def load_env(path):
    """Parse the .env file at *path* (UTF-8)."""
    with open(path, encoding="utf-8") as f:
        return parse_env(f.read())
