"""How a problem message quotes what the user gave: the one quoting every layer uses, from the input model up."""

from __future__ import annotations

import json
import re
from typing import Any

from components.redaction import redacted_leaves

SHOWN_LIMIT = 120

# What a credential pasted into a value needs one of, as a URL or a connection string spells it: RFC 3986 section
# 3.2.1's userinfo ends at '@'; a query, fragment or parameter starts at '?', '#' or ';' and holds `name=value&...`;
# '%' and two hex digits percent-encode any of these; '\\' is a careless URL's '/'; and the look-alikes of '@', ':'
# and '=' (U+FF20, U+FE6B; U+FF1A, U+FE55, U+A789, U+2236, U+02D0; U+FF1D) that a terminal shows as them. A ':' is
# one too, unless it is a URL's `scheme://`, a port's digits, or a single name after it (a config key's
# `namespace:name`, an image's `repository:tag`), and an '@' unless it is an image's `@sha256:` digest. A text with
# one is described by `shape`, never quoted: no rule can list every way a credential is spelt, but each needs one of
# these to be one. (Every pattern is a single character class or fixed text, so each search is linear.)
_MARKERS = re.compile("[@?#;=&\\\\\uff20\ufe6b\uff1a\ufe55\ua789\u2236\u02d0\uff1d]|%[0-9A-Fa-f]{2}")
_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}\Z")
_SCHEME = re.compile(r"\A[A-Za-z][A-Za-z0-9+.-]{0,31}://")
_NAME_OR_PORT_AFTER_COLON = re.compile(r":(?:[0-9]{1,5}|[A-Za-z0-9_][A-Za-z0-9_.-]*)(?=/|\Z)")


def _may_hold_a_credential(text: str) -> bool:
    text = _DIGEST.sub("", _SCHEME.sub("", text, count=1), count=1)
    if _MARKERS.search(text):
        return True
    colons = text.count(":")
    return colons > 1 or (colons == 1 and _NAME_OR_PORT_AFTER_COLON.search(text) is None)


_CLASSES = (
    ("letters", re.compile(r"[A-Za-z]")),
    ("digits", re.compile(r"[0-9]")),
    ("spaces", re.compile(r" ")),
    ("control characters", re.compile(r"[\x00-\x1f\x7f]")),
    ("non-ASCII", re.compile(r"[^\x00-\x7f]")),
)
NOT_QUOTED = "hidden: may be a credential"


def shape(text: str) -> str:
    """What a message says of a text it must not quote: its length and what it is made of, its ASCII punctuation
    listed (the '@' or ':' that gave it a credential's shape is what the user needs to find)."""
    kinds = [name for name, pattern in _CLASSES if pattern.search(text)]
    punctuation = "".join(sorted({c for c in text if c.isascii() and c.isprintable() and not c.isalnum()} - {" "}))
    kinds += [punctuation] if punctuation else []
    return f"<{len(text)} characters: {', '.join(kinds) or 'none'}; {NOT_QUOTED}>"


def quotable(value: Any) -> Any:
    """`value` with every text in it that a message may not quote replaced by its `shape` (map keys too)."""
    if isinstance(value, str):
        return shape(value) if _may_hold_a_credential(value) else value
    if isinstance(value, dict):
        return {quotable(str(key)): quotable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [quotable(item) for item in value]
    return value


def shown(value: Any) -> str:
    """A value as the user wrote it, quoted so that empty strings, spaces and newlines are visible; long ones cut.

    A text that may hold a credential is shown by its shape instead (`quotable`); what is left is redacted as well
    (an inline kubeconfig's `token`), before the cut, so a cut never leaves the start of one behind, and before the
    value is JSON-encoded: a redaction of the encoded text could cut an escape in two.
    """
    text = json.dumps(redacted_leaves(quotable(value)), sort_keys=True, default=lambda other: shape(repr(other)))
    return text if len(text) <= SHOWN_LIMIT else f"{text[: SHOWN_LIMIT - 20]}... ({len(text)} characters)"
