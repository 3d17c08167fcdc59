"""How a problem message quotes what the user gave: the one quoting every layer uses, from the input model up."""

from __future__ import annotations

import json
import re
from typing import Any

from components.redaction import may_hold_a_credential, redacted_leaves

SHOWN_LIMIT = 120

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
        return shape(value) if may_hold_a_credential(value) else value
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
