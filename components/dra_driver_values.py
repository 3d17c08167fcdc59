"""Helm values for the NVIDIA DRA driver and the Operators that install GPU drivers.

The guarded values are what makes the driver work on DRA node groups at all; a user's
`draDriverValues` are merged over everything else, but may not change a guarded value.
Values are built here, as plain data, and tested directly; the components only pass
them to Helm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Mapping

from components.claim_specs import RESOURCE_API_VERSION
from components.config_errors import shown
from components.labels import Taint, kubelet_plugin_node_selector, tolerations_for

if TYPE_CHECKING:
    from components.driver_config import DraDriverConfig

_MISSING = object()

GUARD_REASONS = {
    "gpuResourcesEnabledOverride": "must stay true: the chart refuses to serve GPUs without it, and DRA node groups have the legacy device plugin turned off",
    "resources.gpus.enabled": "must stay true: allocating GPUs through DRA is what the stack installs the driver for",
    "resources.computeDomains.enabled": "is set from nebius-dra:draComputeDomains; set that key instead",
    "resourceApiVersion": f"must stay {RESOURCE_API_VERSION}: the cluster serves DRA's GA API and the stack's claims use it",
    "nvidiaDriverRoot": "is set from nebius-dra:draDriverRoot (or from the driver mode); set that key instead",
    "nameOverride": "is set by the stack: the renamed chart keeps the old object names so an upgrade adopts them",
    "allowDefaultNamespace": "must stay unset: the driver gets a namespace of its own (nebius-dra:draDriverNamespace)",
    "kubeletPlugin.nodeSelector": "must stay the label every GPU node group carries, or the plugin lands on no GPU node",
    "kubeletPlugin.tolerations": "is derived from the taints of nebius-dra:gpuNodeGroups; add the taint to the group instead",
}


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Helm's rule: maps merge key by key; anything else (lists, scalars, null) replaces."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _lookup(values: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(values, Mapping) or part not in values:
            return _MISSING
        values = values[part]
    return values


def guarded_values(driver: DraDriverConfig, gpu_taints: Iterable[Taint]) -> dict[str, Any]:
    """The values that make the driver serve GPUs on these node groups; no override may change them."""
    values: dict[str, Any] = {
        "gpuResourcesEnabledOverride": True,
        "resourceApiVersion": RESOURCE_API_VERSION,
        "nvidiaDriverRoot": driver.driver_root,
        "resources": {
            "gpus": {"enabled": True},
            "computeDomains": {"enabled": driver.compute_domains},
        },
        "kubeletPlugin": {
            "nodeSelector": kubelet_plugin_node_selector(),
            "tolerations": tolerations_for(gpu_taints),
        },
    }
    if driver.name_override:
        values["nameOverride"] = driver.name_override
    return values


def guarded_override_problems(driver: DraDriverConfig, gpu_taints: Iterable[Taint]) -> list[tuple[str, str]]:
    """(path, complaint) for every guarded value the user's overrides would change."""
    guarded = guarded_values(driver, gpu_taints)
    merged = deep_merge(guarded, driver.value_overrides)
    problems = []
    for path, reason in GUARD_REASONS.items():
        wanted, result = _lookup(guarded, path), _lookup(merged, path)
        if result is not wanted and result != wanted:
            given = "removes it" if result is _MISSING else f"sets it to {shown(result)}"
            problems.append((path, f"the override {given}, but it {reason}"))
    return problems


def controller_placement(driver: DraDriverConfig, system_node_selector: Mapping[str, str]) -> dict[str, Any]:
    """Puts the compute-domain controller on the system nodes.

    25.12.0 requires a control-plane node, which a managed cluster never schedules on, so
    its required node affinity is replaced; 0.4.x only prefers one, and the selector suffices.
    """
    placement: dict[str, Any] = {"nodeSelector": dict(system_node_selector)}
    if not driver.renamed_chart:
        term = {"matchExpressions": [{"key": key, "operator": "In", "values": [value]} for key, value in system_node_selector.items()]}
        placement["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
    return placement


def dra_driver_values(driver: DraDriverConfig, gpu_taints: Iterable[Taint], system_node_selector: Mapping[str, str]) -> dict[str, Any]:
    """The DRA driver's values: guarded values, controller placement, then the user's overrides."""
    values = guarded_values(driver, gpu_taints)
    if driver.compute_domains:
        values["controller"] = controller_placement(driver, system_node_selector)
    return deep_merge(values, driver.value_overrides)


def gpu_operator_values(operator_taints: Iterable[Taint]) -> dict[str, Any]:
    """The Operator installs the driver and toolkit, never the legacy device plugin: the DRA driver owns the GPUs.

    Node Feature Discovery's worker tolerates the same taints as the operands: the Operator
    treats a node without NFD's NVIDIA PCI label as GPU-less, resets nvidia.com/gpu.present
    and deploys no driver there, and the chart's worker tolerates only nvidia.com/gpu.
    """
    tolerations = tolerations_for(operator_taints)
    return {
        "devicePlugin": {"enabled": False},
        "cdi": {"enabled": True},
        "driver": {"enabled": True},
        "daemonsets": {"tolerations": tolerations},
        "node-feature-discovery": {"worker": {"tolerations": tolerations}},
    }


def network_operator_values() -> dict[str, Any]:
    """Node Feature Discovery comes from the GPU Operator; a second instance would fight over the same labels.

    Its NodeFeatureRule is left out too: its CRD arrives with the GPU Operator's NFD, which
    this release does not wait for, and that NFD already labels Mellanox NICs (pci-15b3.present).
    """
    return {"nfd": {"enabled": False, "deployNodeFeatureRules": False}}
