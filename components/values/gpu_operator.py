"""Helm releases for NVIDIA's GPU Operator and Network Operator, for GPU groups without a drivers preset."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from components.dra_constants import (
    GPU_OPERATOR_CHART,
    GPU_OPERATOR_NAMESPACE,
    NETWORK_OPERATOR_CHART,
    NETWORK_OPERATOR_NAMESPACE,
    NGC_REPOSITORY,
)
from components.labels import tolerations_for
from components.model import Taint
from components.values.release import ReleaseSpec

OPERATOR_TIMEOUT_SECONDS = 900


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


def gpu_operator_spec(version: str, operator_taints: Sequence[Taint]) -> ReleaseSpec:
    return ReleaseSpec(
        release_name=GPU_OPERATOR_CHART,
        chart=GPU_OPERATOR_CHART,
        version=version,
        namespace=GPU_OPERATOR_NAMESPACE,
        values=gpu_operator_values(operator_taints),
        repository=NGC_REPOSITORY,
        timeout_seconds=OPERATOR_TIMEOUT_SECONDS,
    )


def network_operator_spec(version: str) -> ReleaseSpec:
    return ReleaseSpec(
        release_name=NETWORK_OPERATOR_CHART,
        chart=NETWORK_OPERATOR_CHART,
        version=version,
        namespace=NETWORK_OPERATOR_NAMESPACE,
        values=network_operator_values(),
        repository=NGC_REPOSITORY,
        timeout_seconds=OPERATOR_TIMEOUT_SECONDS,
    )
