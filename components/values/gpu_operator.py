"""Helm releases for NVIDIA's GPU Operator and Network Operator, for GPU groups without a drivers preset."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from components.dra_constants import (
    GPU_OPERATOR_CHART,
    GPU_OPERATOR_NAMESPACE,
    GPU_OPERATOR_VERSION,
    KUBELET_PLUGIN_LABEL,
    NETWORK_OPERATOR_CHART,
    NETWORK_OPERATOR_NAMESPACE,
)
from components.labels import tolerations_for
from components.model import DraDriverConfig, Taint
from components.values.release import ReleaseSpec, chart_location

OPERATOR_TIMEOUT_SECONDS = 900


# NVIDIA's GPU Operator guide for the DRA driver ("NVIDIA DRA Driver for GPUs", Known issues,
# docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/dra-intro-install.html): the driver
# manager before GPU Operator 26.x does not know the DRA kubelet plugin and does not evict it when it
# upgrades the driver, unless it is told the node label that marks the plugin's nodes. The stack labels
# every GPU node with KUBELET_PLUGIN_LABEL (components.labels.gpu_node_labels). `driver.manager.env` is
# a list in gpu-operator v25.10.1's and v26.7.0's values.yaml (default empty).
GPU_POD_EVICTION_ENV = "NODE_LABEL_FOR_GPU_POD_EVICTION"
# GPU Operator v26.7.0 (2026-08-20) ships k8s-driver-manager v0.12.0 (its values.yaml driver.manager.version),
# which drains the DRA kubelet plugin across driver reloads itself (NVIDIA/k8s-driver-manager PR #203): from
# this release on the workaround above is left out. The first release known to have it; earlier 26.x are not.
DRAINS_DRA_PLUGIN_FROM = (26, 7, 0)
_OPERATOR_VERSION = re.compile(r"^v?([0-9]+)\.([0-9]+)\.([0-9]+)")


def needs_eviction_workaround(version: str) -> bool:
    """Whether this GPU Operator's driver manager must be told the DRA kubelet plugin's node label to evict it."""
    match = _OPERATOR_VERSION.match(version)
    return match is None or tuple(int(part) for part in match.groups()) < DRAINS_DRA_PLUGIN_FROM


def gpu_operator_values(
    operator_taints: Iterable[Taint], gpu_taints: Iterable[Taint], version: str = GPU_OPERATOR_VERSION
) -> dict[str, Any]:
    """The Operator installs the driver and toolkit, never the legacy device plugin or its exporter: the DRA driver owns the GPUs.

    `operator_taints` are the taints of the groups whose driver the Operator installs; its
    operands (`daemonsets.tolerations`) tolerate those only, so they stay off the preset groups.
    `gpu_taints` are every GPU group's taints: Node Feature Discovery's worker must run on every
    GPU node, preset groups included (their operands are off through the
    nvidia.com/gpu.deploy.operands=false label), because the Operator sets nvidia.com/gpu.present
    to false on any node without NFD's NVIDIA PCI label, and the DRA kubelet plugin then leaves
    that node. The chart's own worker tolerations cover only nvidia.com/gpu. `version` decides the
    driver manager's eviction workaround (`needs_eviction_workaround`).
    """
    operator_taints = list(operator_taints)
    manager = (
        {"manager": {"env": [{"name": GPU_POD_EVICTION_ENV, "value": KUBELET_PLUGIN_LABEL}]}}
        if needs_eviction_workaround(version)
        else {}
    )
    return {
        "devicePlugin": {"enabled": False},
        # The Operator's exporter (4.4.2-4.7.0 in v25.10.1; 4.6.0-4.8.3 in v26.7.0, DRA-capable, but the stack
        # keeps one exporter for both driver modes) reads only the device plugin's pod resources: without DRA
        # mode it cannot tell which pod holds a GPU. The stack runs one exporter in DRA mode instead
        # (components/gpu_metrics.py), so GPUs are never scraped twice.
        "dcgmExporter": {"enabled": False},
        "cdi": {"enabled": True},
        "driver": {"enabled": True, **manager},
        "daemonsets": {"tolerations": tolerations_for(operator_taints)},
        "node-feature-discovery": {"worker": {"tolerations": tolerations_for([*operator_taints, *gpu_taints])}},
    }


def network_operator_values() -> dict[str, Any]:
    """Node Feature Discovery comes from the GPU Operator; a second instance would fight over the same labels.

    Its NodeFeatureRule is left out too: its CRD arrives with the GPU Operator's NFD, which
    this release does not wait for, and that NFD already labels Mellanox NICs (pci-15b3.present).
    """
    return {"nfd": {"enabled": False, "deployNodeFeatureRules": False}}


def gpu_operator_spec(
    driver: DraDriverConfig, operator_taints: Sequence[Taint], gpu_taints: Sequence[Taint]
) -> ReleaseSpec:
    return ReleaseSpec(
        release_name=GPU_OPERATOR_CHART,
        version=driver.gpu_operator_version,
        namespace=GPU_OPERATOR_NAMESPACE,
        values=gpu_operator_values(operator_taints, gpu_taints, driver.gpu_operator_version),
        timeout_seconds=OPERATOR_TIMEOUT_SECONDS,
        **chart_location(GPU_OPERATOR_CHART, driver.gpu_operator_repository),
    )


def network_operator_spec(driver: DraDriverConfig) -> ReleaseSpec:
    return ReleaseSpec(
        release_name=NETWORK_OPERATOR_CHART,
        version=driver.network_operator_version,
        namespace=NETWORK_OPERATOR_NAMESPACE,
        values=network_operator_values(),
        timeout_seconds=OPERATOR_TIMEOUT_SECONDS,
        **chart_location(NETWORK_OPERATOR_CHART, driver.network_operator_repository),
    )
