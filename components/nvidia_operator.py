"""The NVIDIA GPU Operator, and the Network Operator beside it, for GPU groups without a drivers preset.

Without a preset the node image has no NVIDIA driver: the GPU Operator installs the
driver and container toolkit, with its legacy device plugin off so the DRA driver alone
manages the GPUs. Groups on InfiniBand also get the Network Operator. Both are installed
before the DRA driver, whose kubelet plugin reads the driver the Operator provides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.release import pinned_release
from components.values.release import ReleaseSpec


@dataclass
class NvidiaOperatorArgs:
    spec: ReleaseSpec
    provider: k8s.Provider
    depends_on: Sequence[pulumi.Resource] = field(default_factory=list)


class NvidiaOperator(pulumi.ComponentResource):
    """One of NVIDIA's Operators (GPU or Network), pinned and waited for like the DRA driver."""

    release: k8s.helm.v3.Release

    def __init__(self, name: str, args: NvidiaOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("nebius-dra:driver:NvidiaOperator", name, None, opts)
        self.release = pinned_release(f"{name}-release", args.spec, args.provider, args.depends_on, self)
        self.register_outputs({"status": self.release.status})
