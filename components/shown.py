"""How a problem message quotes what the user gave: the one quoting every layer uses, from the input model up."""

from __future__ import annotations

import json
from typing import Any

from components.redaction import redacted

SHOWN_LIMIT = 120


def shown(value: Any) -> str:
    """A value as the user wrote it, quoted so that empty strings, spaces and newlines are visible; long ones cut.

    Credentials in it (URL userinfo and parameters, an inline kubeconfig's token) are redacted before the cut, so a
    cut never leaves the start of one behind.
    """
    text = redacted(json.dumps(value, sort_keys=True, default=repr))
    return text if len(text) <= SHOWN_LIMIT else f"{text[: SHOWN_LIMIT - 20]}... ({len(text)} characters)"
