"""Helm values the stack guards: a user's overrides are merged last, but may not change these."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.config.errors import shown
from components.input.fields import floating_tag
from components.merge import deep_merge

_MISSING = object()


def _lookup(values: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(values, Mapping) or part not in values:
            return _MISSING
        values = values[part]
    return values


def override_problems(
    guarded: Mapping[str, Any], overrides: Mapping[str, Any], reasons: Mapping[str, str]
) -> list[tuple[str, str]]:
    """(path, complaint) for every guarded path (a key of `reasons`) that merging `overrides` would change."""
    merged = deep_merge(guarded, overrides)
    problems = []
    for path, reason in reasons.items():
        wanted, result = _lookup(guarded, path), _lookup(merged, path)
        if result is not wanted and result != wanted:
            given = "removes it" if result is _MISSING else f"sets it to {shown(result)}"
            problems.append((path, f"the override {given}, but it {reason}"))
    return problems


def floating_tag_problems(overrides: Mapping[str, Any], example: str) -> list[tuple[str, str]]:
    """(path, complaint) when the overrides set a chart's `image.tag` to a tag that names no release (`latest`,
    `main`, `nightly`: components/input/fields.py FLOATING_TAGS), not the release the chart pins: every chart values
    override of the stack (draDriverValues, gpuMetricsValues) is held to it, as the sample images are. `example` is a
    version of the chart's image the complaint suggests."""
    image = overrides.get("image")
    tag = image.get("tag") if isinstance(image, Mapping) else None
    if isinstance(tag, str) and (why := floating_tag(tag)):
        return [("image.tag", f"got {shown(tag)}, a tag that moves ({why}); give a version such as {example}")]
    return []
