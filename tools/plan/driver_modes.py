"""A move between driver modes (preset images, the GPU Operator's driver, both) against the baseline, as steps.

A group's mode is its template: a `driversPreset` means the node image ships the driver at `/`,
none means the GPU Operator installs it under `/run/nvidia/driver` (components/config/driver.py).
The DRA driver's kubelet plugin reads the driver from one root on every node (`nvidiaDriverRoot`),
so a change of root leaves every group whose driver lives elsewhere without a working plugin: a
mandatory finding, since claims on those nodes are no longer prepared. The GPU Operator's opt-out
label `nvidia.com/gpu.deploy.operands: "false"` is a template label, which Nebius gives only to
nodes created afterwards (the table's `template.metadata` row): existing preset nodes must be
labelled by hand before the Operator arrives, or it installs its driver on them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from components.dra_constants import NODE_GROUP_LABEL, OPERANDS_OFF_LABEL
from components.dra_driver import DRA_DRIVER_TYPE, PLUGIN_OUTAGE_ACCEPTED
from policies.dra_guardrails import Finding
from policies.dra_guardrails.planned import group_driver_root
from tools.plan.baseline import Baseline
from tools.plan.changes import written_name
from tools.plan.mock_engine import RegisteredResource

POLICY = "driver-mode-transition"


def _mode(group: Mapping[str, Any]) -> str | None:
    """`preset`, `operator`, or None for a CPU group."""
    template = group.get("template") or {}
    settings = template.get("gpuSettings")
    if not isinstance(settings, Mapping):
        return None
    return "preset" if settings.get("driversPreset") else "operator"


def _labels(group: Mapping[str, Any]) -> Mapping[str, Any]:
    return ((group.get("template") or {}).get("metadata") or {}).get("labels") or {}


@dataclass(frozen=True)
class Transition:
    steps: tuple[str, ...]
    findings: tuple[Finding, ...]


def accepted_outages(resources: Iterable[RegisteredResource]) -> tuple[str, ...]:
    """The groups the stack names in nebius-dra:draPluginOutageAccepted, as the DraDriver component records them."""
    return tuple(
        str(name)
        for resource in resources
        if resource.type == DRA_DRIVER_TYPE
        for name in resource.inputs.get(PLUGIN_OUTAGE_ACCEPTED) or []
    )


def driver_mode_transition(
    baseline: Baseline, current: Mapping[str, Any], accepted: tuple[str, ...] = ()
) -> Transition:
    """The steps a move between modes takes, in the safe order, and what breaks if it is applied as it is.

    The outage of a group named in `accepted` (draPluginOutageAccepted) is a step, not a finding."""
    if baseline.legacy:
        return Transition((), ())
    groups = {g["urn"]: g for g in current["nodeGroups"] if _mode(g)}
    operator_after = any(_mode(g) == "operator" for g in groups.values())
    operator_before = any(_mode(g) == "operator" for g in baseline.groups.values())
    steps: list[str] = []
    findings: list[Finding] = []
    for urn, group in groups.items():
        before = baseline.groups.get(urn)
        name = written_name(group)
        if before is None or _mode(group) != "preset" or not operator_after or operator_before:
            continue
        if _labels(before).get(OPERANDS_OFF_LABEL) != "false":
            steps.append(
                f"relabel before `pulumi up`: kubectl label nodes -l {NODE_GROUP_LABEL}={name} "
                f"{OPERANDS_OFF_LABEL}=false --overwrite (group {name}'s existing nodes lack the opt-out label, which "
                "Nebius gives only to new nodes; without it the GPU Operator installs its driver on them too)"
            )
    old_root, new_root = baseline.driver_root, current.get("driverRoot")
    if old_root and new_root and old_root != new_root:
        broken = [
            written_name(g) for urn, g in groups.items() if urn in baseline.groups and group_driver_root(g) == old_root
        ]
        unaccepted = [name for name in broken if name not in accepted]
        if broken:
            message = (
                f"draDriverRoot moves from {old_root} to {new_root}: the DRA kubelet plugin then looks for the GPU "
                f"driver under {new_root} on every node, so the existing group(s) {', '.join(broken)}, whose driver "
                f"lives at {old_root}, are left without a working DRA plugin (no claim on them is prepared). Safe "
                f"order: add the new group(s) with the root unchanged, move the workloads, then recreate or remove "
                f"{', '.join(broken)} before changing the root"
            )
            if unaccepted:
                findings.append(
                    Finding(
                        POLICY,
                        True,
                        None,
                        f"{message}; or accept it with nebius-dra:draPluginOutageAccepted: [{', '.join(unaccepted)}]",
                    )
                )
            steps.append(
                f"{', '.join(broken)} lose their DRA plugin at `pulumi up`"
                + (" (accepted by draPluginOutageAccepted)" if not unaccepted else "")
                + ": recreate them in the new mode (a drivers preset change or removal replaces their nodes) or remove them"
            )
    for urn, group in groups.items():
        root = group_driver_root(group)
        if new_root and urn not in baseline.groups and root != new_root:
            steps.append(
                f"new group {written_name(group)} has its driver under {root}, not at draDriverRoot {new_root}: its DRA "
                "plugin cannot work and its GPUs are never claimed (policy dra-driver-root-serves-every-group"
                + (", accepted by draPluginOutageAccepted)" if written_name(group) in accepted else ")")
            )
    return Transition(tuple(steps), tuple(findings))
