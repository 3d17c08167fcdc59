"""How a problem message quotes what the user gave: the one quoting every layer uses, from the input model up."""

from __future__ import annotations

import json
from typing import Any

from components.redaction import redacted, redacted_leaves

SHOWN_LIMIT = 120


def shown(value: Any) -> str:
    """A value as the user wrote it, quoted so that empty strings, spaces and newlines are visible; long ones cut.

    Credentials in it (URL userinfo and parameters, an inline kubeconfig's token) are redacted before the cut, so a
    cut never leaves the start of one behind, and before the value is JSON-encoded: a redaction of the encoded text
    could cut an escape in two (`?a=b\\` ending a string would end the quote as `\"`).
    """
    text = json.dumps(redacted_leaves(value), sort_keys=True, default=lambda other: redacted(repr(other)))
    return text if len(text) <= SHOWN_LIMIT else f"{text[: SHOWN_LIMIT - 20]}... ({len(text)} characters)"
