"""The check that keeps plain-data specs and their typed Pulumi form in step."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any


class UnknownFieldError(ValueError):
    """A spec carries a field its typed translation does not carry: it would be dropped silently."""


def fields_of(
    value: Mapping[str, Any], what: str, required: Collection[str], optional: Collection[str] = ()
) -> Mapping[str, Any]:
    """`value` itself, after checking it has every required field and nothing beyond required and optional."""
    known = {*required, *optional}
    unknown = sorted(set(value) - known)
    missing = sorted(set(required) - set(value))
    if unknown or missing:
        raise UnknownFieldError(
            f"{what} has unknown field(s) {unknown} or lacks {missing}; the typed translation knows {sorted(known)}"
        )
    return value
