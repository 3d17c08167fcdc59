"""How a problem message quotes what the user gave: the one quoting every layer uses, from the input model up."""

from __future__ import annotations

import json
from typing import Any

SHOWN_LIMIT = 120


def shown(value: Any) -> str:
    """A value as the user wrote it, quoted so that empty strings, spaces and newlines are visible; long ones cut."""
    text = json.dumps(value, sort_keys=True, default=repr)
    return text if len(text) <= SHOWN_LIMIT else f"{text[: SHOWN_LIMIT - 20]}... ({len(text)} characters)"
