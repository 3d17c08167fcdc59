"""Registered inputs made fit to show a reviewer.

The mock engine hands back what the engine saw: numbers as floats (`fixedNodeCount: 1.0`),
secrets as wrapped maps, and IDs that only exist because the mock invented them
(`<name>-id`). A plan that printed those would mislead, so every value the plan shows or
writes passes through `presentable` first: whole floats become integers, secrets become a
placeholder, and a mock ID becomes a reference to the resource it stands for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pulumi.runtime import rpc

from tools.plan.mock_engine import RegisteredResource

SECRET_PLACEHOLDER = "[secret]"


def mock_id_references(resources: Iterable[RegisteredResource]) -> dict[str, str]:
    """Each ID the mock engine invented, mapped to how the plan names it: `${<resource>.id}`."""
    return {f"{resource.name}-id": f"${{{resource.name}.id}}" for resource in resources if resource.custom}


def presentable(value: Any, id_references: Mapping[str, str]) -> Any:
    if rpc.is_rpc_secret(value):
        return SECRET_PLACEHOLDER
    if isinstance(value, dict):
        return {key: presentable(item, id_references) for key, item in value.items()}
    if isinstance(value, list):
        return [presentable(item, id_references) for item in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        return id_references.get(value, value)
    return value
