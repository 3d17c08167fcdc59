"""Typed reads over the raw config strings Pulumi hands the program, each failure recorded against its key."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pulumi

from components.config.errors import ConfigProblems, config_key, shown
from components.config.stack_file import project_config_keys


class RawConfig:
    """Typed reads over the raw strings, each failure recorded against its key."""

    def __init__(self, raw: Mapping[str, str], problems: ConfigProblems) -> None:
        self.raw = raw
        self.problems = problems

    def _value(self, key: str) -> str | None:
        value = self.raw.get(key)
        return None if value is None or value == "" else value

    def text(self, key: str, required: bool = False) -> str | None:
        value = self._value(key)
        if value is None and required:
            self.problems.add(
                config_key(key), f"is required: set it with `pulumi config set {config_key(key)} <value>`"
            )
        return value

    def integer(self, key: str, minimum: int) -> int:
        value = self._value(key)
        try:
            number = int(str(value))
        except ValueError:
            self.problems.add(config_key(key), f"got {shown(value)}; expected a whole number >= {minimum}")
            return minimum
        if number < minimum:
            self.problems.add(config_key(key), f"got {number}; expected a whole number >= {minimum}")
        return number

    def boolean(self, key: str) -> bool:
        value = str(self._value(key)).lower()
        if value not in ("true", "false"):
            self.problems.add(config_key(key), f"got {shown(self.raw.get(key))}; expected true or false")
        return value == "true"

    def structured(self, key: str, default: Any) -> Any:
        value = self._value(key)
        if value is None:
            return default
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            self.problems.add(
                config_key(key),
                f"got {shown(value)}, which is not structured YAML/JSON; set it in the stack file as a YAML list or map",
            )
            return default


def read_raw_config(config: pulumi.Config, project_file: Path) -> dict[str, str]:
    return {key: value for key in project_config_keys(project_file) if (value := config.get(key)) is not None}
