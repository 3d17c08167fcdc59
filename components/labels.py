"""Node labels and taints: what the DRA kubelet plugin selects on, and what workloads tolerate.

The GPU node groups, the driver's Helm values and the sample pods all derive from these
functions, so a label or taint is spelled in exactly one place.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from components.dra_constants import (
    DRIVER_MODE_LABEL,
    KUBELET_PLUGIN_LABEL,
    NODE_GROUP_LABEL,
    RESERVED_GPU_LABELS,
    SYSTEM_ROLE_LABEL,
)
from components.model import Taint

# On every Kubernetes object the stack creates itself (charts label their own).
MANAGED_LABELS = {"app.kubernetes.io/managed-by": "pulumi", "app.kubernetes.io/part-of": "nebius-dra"}


def gpu_node_labels(group_name: str, preinstalled_driver: bool, user_labels: Mapping[str, str]) -> dict[str, str]:
    """Labels every GPU node carries: the plugin's selector, the group and how its driver got there."""
    return {
        **user_labels,
        **RESERVED_GPU_LABELS,
        NODE_GROUP_LABEL: group_name,
        DRIVER_MODE_LABEL: "preinstalled" if preinstalled_driver else "operator",
    }


def system_node_labels() -> dict[str, str]:
    """The system nodes' label, which is also the node selector for controllers that must avoid GPU nodes."""
    return {SYSTEM_ROLE_LABEL: "system"}


def kubelet_plugin_node_selector() -> dict[str, str]:
    return {KUBELET_PLUGIN_LABEL: "true"}


def tolerations_for(taints: Iterable[Taint]) -> list[dict[str, str]]:
    """One toleration per distinct taint, in a stable order, so pods and plugins land on tainted GPU nodes."""
    distinct = sorted({(t.key, t.value, t.effect) for t in taints})
    return [
        {"key": key, "operator": "Equal", "value": value, "effect": effect}
        if value
        else {"key": key, "operator": "Exists", "effect": effect}
        for key, value, effect in distinct
    ]
