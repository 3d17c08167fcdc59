"""Node labels and taints: what the DRA kubelet plugin selects on, and what workloads tolerate.

The GPU node groups, the driver's Helm values and the sample pods all derive from these
functions, so a label or taint is spelled in exactly one place.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from components.dra_constants import (
    DRIVER_MODE_LABEL,
    KUBELET_PLUGIN_LABEL,
    NODE_GROUP_LABEL,
    RESERVED_GPU_LABELS,
    SYSTEM_ROLE_LABEL,
)
from components.model import Taint

_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_PREFIX = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_LABEL_KEY = re.compile(rf"^({_PREFIX}/)?{_NAME}$")
_LABEL_VALUE = re.compile(rf"^({_NAME})?$")
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
LABEL_KEY_RULE = "expected [prefix/]name: an optional DNS-subdomain prefix (at most 253 characters) and a name of at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
LABEL_VALUE_RULE = "expected a string of at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit (or empty)"


def valid_label_key(key: object) -> bool:
    if not isinstance(key, str) or not _LABEL_KEY.match(key):
        return False
    prefix, _, _ = key.rpartition("/")
    return len(prefix) <= 253


def valid_label_value(value: object) -> bool:
    return isinstance(value, str) and bool(_LABEL_VALUE.match(value))


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
