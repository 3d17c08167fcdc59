"""Reading Kubernetes API objects as the API server returns them (camelCase JSON as dicts).

Nothing here talks to a cluster; the checks and the tests share these readers so that a
fixture captured with `kubectl get -o json` means the same thing to both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

ATTRIBUTE_VALUE_KINDS = ("string", "bool", "int", "version")


def name_of(obj: Mapping[str, Any]) -> str:
    return obj.get("metadata", {}).get("name", "")


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return obj.get("metadata", {}).get("labels") or {}


def condition(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    conditions = obj.get("status", {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == kind), {})


def repeated_condition(obj: Mapping[str, Any]) -> str | None:
    """The first condition type the object lists twice, or None: each type is listed once (the API keys the list by
    type), so `condition` reads its one entry; an answer that repeats one has no single verdict."""
    status = obj.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    seen: set[str] = set()
    for entry in conditions if isinstance(conditions, list) else []:
        kind = entry.get("type") if isinstance(entry, dict) else None
        if isinstance(kind, str):
            if kind in seen:
                return kind
            seen.add(kind)
    return None


def condition_true(obj: Mapping[str, Any], kind: str) -> bool:
    return condition(obj, kind).get("status") == "True"


def condition_text(obj: Mapping[str, Any], kind: str) -> str:
    """`Ready=False (KubeletNotReady: container runtime is down)`, or that the condition is missing."""
    found = condition(obj, kind)
    if not found:
        return f"no {kind} condition"
    detail = ": ".join(part for part in (found.get("reason"), found.get("message")) if part)
    return f"{kind}={found.get('status')}" + (f" ({detail})" if detail else "")


def node_taints(node: Mapping[str, Any]) -> list[str]:
    """Taints as kubectl prints them: key=value:Effect."""
    taints = node.get("spec", {}).get("taints") or []
    return [
        f"{t['key']}={t.get('value', '')}:{t['effect']}" if t.get("value") else f"{t['key']}:{t['effect']}"
        for t in taints
    ]


def pod_ready(pod: Mapping[str, Any]) -> bool:
    return pod.get("status", {}).get("phase") == "Running" and condition_true(pod, "Ready")


def _container_state(status: Mapping[str, Any]) -> str:
    state = status.get("state") or {}
    if "waiting" in state:
        detail = state["waiting"].get("reason", "Waiting")
    elif "terminated" in state:
        detail = (
            f"terminated: {state['terminated'].get('reason', 'exit')} (exit code {state['terminated'].get('exitCode')})"
        )
    else:
        detail = "running" if status.get("ready") else "running, not ready"
    restarts = status.get("restartCount", 0)
    return f"{status.get('name')}: {detail}" + (f", {restarts} restarts" if restarts else "")


def pod_state(pod: Mapping[str, Any]) -> str:
    """One line, close to `kubectl get pod`: phase, ready containers and what the others are doing."""
    status = pod.get("status", {})
    containers = status.get("containerStatuses") or []
    ready = sum(1 for c in containers if c.get("ready"))
    total = len(pod.get("spec", {}).get("containers") or containers)
    troubled = [_container_state(c) for c in containers if not c.get("ready")]
    text = f"{status.get('phase', 'Unknown')}, {ready}/{total} containers ready"
    return f"{text} ({'; '.join(troubled)})" if troubled else text


def waiting_reasons(pod: Mapping[str, Any]) -> set[str]:
    statuses = [
        *(pod.get("status", {}).get("initContainerStatuses") or []),
        *(pod.get("status", {}).get("containerStatuses") or []),
    ]
    reasons: set[str] = set()
    for status in statuses:
        for moment in ("state", "lastState"):
            state = status.get(moment) or {}
            reasons.update(v.get("reason", "") for v in state.values() if isinstance(v, dict))
    return reasons - {""}


def attribute(device: Mapping[str, Any], driver: str, key: str) -> Any | None:
    """A device attribute's value, whether the slice wrote it as `key` or as `<driver>/key`.

    ResourceSlices in resource.k8s.io/v1 store each attribute as a one-field object such as
    `{"string": "NVIDIA H200"}`; an unqualified key belongs to the driver's own domain.
    """
    attributes = device.get("attributes") or {}
    value = attributes.get(key, attributes.get(f"{driver}/{key}"))
    if not isinstance(value, dict):
        return None
    return next((value[kind] for kind in ATTRIBUTE_VALUE_KINDS if kind in value), None)


def _pool(item: Mapping[str, Any]) -> tuple[str, int]:
    pool = item["spec"].get("pool", {})
    return pool.get("name", ""), int(pool.get("generation", 0))


def current_slices(slices: Iterable[Mapping[str, Any]], driver: str) -> list[Mapping[str, Any]]:
    """The driver's slices of the newest generation of each pool: older ones are being replaced."""
    mine = [s for s in slices if s.get("spec", {}).get("driver") == driver]
    newest: dict[str, int] = {}
    for item in mine:
        name, generation = _pool(item)
        newest[name] = max(newest.get(name, generation), generation)
    return [s for s in mine if _pool(s)[1] == newest[_pool(s)[0]]]


def devices_on_node(slices: Iterable[Mapping[str, Any]], driver: str, node: str) -> list[Mapping[str, Any]]:
    return [
        device
        for item in current_slices(slices, driver)
        if item["spec"].get("nodeName") == node
        for device in item["spec"].get("devices") or []
    ]


def find_device(slices: Iterable[Mapping[str, Any]], driver: str, pool: str, device: str) -> Mapping[str, Any] | None:
    for item in current_slices(slices, driver):
        if item["spec"].get("pool", {}).get("name") == pool:
            for candidate in item["spec"].get("devices") or []:
                if candidate.get("name") == device:
                    return candidate
    return None
