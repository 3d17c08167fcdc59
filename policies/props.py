"""Reading planned resources' properties, which arrive as plain dicts or as the policy SDK's proxies of them.

Shared by the rule modules that must not import `dra_rules` (it imports them to register their rules).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def field_at(value: Any, *path: str) -> Any:
    """The value at `path`, or None where a level is missing or is not an object."""
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def as_list(value: Any) -> list:
    """A list, also from the policy SDK's proxy of one (a Sequence, not a list); [] for anything else."""
    return list(value) if isinstance(value, Sequence) and not isinstance(value, str) else []
