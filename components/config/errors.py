"""How bad configuration is reported.

Every parser in this project collects its complaints into a `ConfigProblems` and raises
them together, so a user fixing a stack file sees every mistake in one run instead of
one per `pulumi preview`.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi

from components.dra_constants import NAMESPACE


def config_key(key: str) -> str:
    """The key as users type it with `pulumi config set`."""
    return f"{NAMESPACE}:{key}"


def shown(value: Any) -> str:
    """A value as the user wrote it, quoted so that empty strings and spaces are visible."""
    return json.dumps(value, sort_keys=True)


class ConfigError(pulumi.RunError):
    """Raised before any resource is registered; `pulumi.RunError` exits without a traceback."""


class ConfigProblems:
    """Collects `key: problem` lines and raises them as one `ConfigError`."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, key: str, message: str) -> None:
        self.lines.append(f"{key}: {message}")

    def raise_if_any(self) -> None:
        if self.lines:
            count = len(self.lines)
            heading = f"invalid stack configuration ({count} problem{'s' if count > 1 else ''}):"
            raise ConfigError("\n".join([heading, *(f"  - {line}" for line in self.lines)]))
