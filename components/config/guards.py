"""Helm values the stack guards: a user's overrides are merged last, but may not change these."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from components.config.errors import shown
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


def latest_tag_problems(overrides: Mapping[str, Any], example: str) -> list[tuple[str, str]]:
    """(path, complaint) when the overrides set a chart's `image.tag` to `latest`, which is whatever was pushed last,
    not the release the chart pins: every chart values override of the stack (draDriverValues, gpuMetricsValues) is
    held to it, as sampleGpuImage is. `example` is a version of the chart's image the complaint suggests."""
    image = overrides.get("image")
    tag = image.get("tag") if isinstance(image, Mapping) else None
    if isinstance(tag, str) and tag.strip().lower() == "latest":
        return [("image.tag", f"got {shown(tag)}, which is whatever was pushed last; give a version such as {example}")]
    return []
