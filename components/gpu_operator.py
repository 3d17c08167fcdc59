"""The NVIDIA GPU Operator, and the Network Operator beside it, for GPU groups without a drivers preset.

Without a preset the node image has no NVIDIA driver: the GPU Operator installs the
driver and container toolkit, with its legacy device plugin off so the DRA driver alone
manages the GPUs. Groups on InfiniBand also get the Network Operator. Both are installed
before the DRA driver, whose kubelet plugin reads the driver the Operator provides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.dra_driver import ReleaseSpec, pinned_release
from components.dra_driver_values import gpu_operator_values, network_operator_values
from components.driver_config import GPU_OPERATOR_CHART, NETWORK_OPERATOR_CHART, NGC_REPOSITORY
from components.labels import Taint

GPU_OPERATOR_NAMESPACE = "gpu-operator"
NETWORK_OPERATOR_NAMESPACE = "nvidia-network-operator"
OPERATOR_TIMEOUT_SECONDS = 900


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


@dataclass
class NvidiaOperatorArgs:
    spec: ReleaseSpec
    provider: k8s.Provider
    depends_on: Sequence[pulumi.Resource] = field(default_factory=list)


class NvidiaOperator(pulumi.ComponentResource):
    """One of NVIDIA's Operators (GPU or Network), pinned and waited for like the DRA driver."""

    release: k8s.helm.v3.Release

    def __init__(self, name: str, args: NvidiaOperatorArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__("nebius-dra:driver:NvidiaOperator", name, None, opts)
        self.release = pinned_release(f"{name}-release", args.spec, args.provider, args.depends_on, self)
        self.register_outputs({"status": self.release.status})
