"""CEL string literals: a value written so that a selector compares it byte for byte."""

from __future__ import annotations


def cel_string(value: str) -> str:
    """A double-quoted CEL string literal that evaluates to `value`.

    JSON is not a subset of CEL here: `json.dumps` writes a character outside the Basic
    Multilingual Plane as a surrogate pair ("\\ud83d\\ude00"), which CEL refuses ("Unicode
    value \\ud83d is invalid"); CEL spells it \\U0001f600. Printable characters stay as they
    are; quotes, backslashes and non-printable characters are escaped.
    """
    out = ['"']
    for char in value:
        code = ord(char)
        if char in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[char])
        elif 0xD800 <= code <= 0xDFFF:
            raise ValueError(f"{value!r} holds the lone surrogate U+{code:04X}, which no CEL string can hold")
        elif char.isprintable():
            out.append(char)
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_SIMPLE_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
