"""The key paths of Helm values, and those a chart's key list does not define."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def undefined_keys(values: Mapping[str, Any], keys: set[str], prefix: str = "") -> list[str]:
    undefined = []
    for key, value in values.items():
        path = f"{prefix}{key}"
        if f"{path}.*" in keys:
            continue
        if path not in keys:
            undefined.append(path)
        elif isinstance(value, Mapping):
            undefined.extend(undefined_keys(value, keys, f"{path}."))
    return undefined


def leaf_paths(values: Mapping[str, Any], prefix: str = "") -> set[str]:
    paths: set[str] = set()
    for key, value in values.items():
        path = f"{prefix}{key}"
        paths |= leaf_paths(value, f"{path}.") if isinstance(value, Mapping) else {path}
    return paths
