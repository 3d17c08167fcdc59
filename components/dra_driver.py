"""The NVIDIA DRA driver as a Helm release: the `gpu.nvidia.com` DeviceClass and a kubelet plugin per GPU node.

The release waits for the cluster and the system node group only. The kubelet plugin is a
DaemonSet, so its pods start as GPU nodes join; waiting for the GPU groups would put the
slowest node group and the chart install end to end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s

from components.model import DraDriverConfig, Taint
from components.release import pinned_release
from components.values.dra_driver import dra_driver_release


@dataclass
class DraDriverArgs:
    driver: DraDriverConfig
    gpu_taints: Sequence[Taint]
    provider: k8s.Provider
    depends_on: Sequence[pulumi.Resource] = field(default_factory=list)


class DraDriver(pulumi.ComponentResource):
    release: k8s.helm.v3.Release

    def __init__(self, name: str, args: DraDriverArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("nebius-dra:driver:DraDriver", name, None, opts)
        spec = dra_driver_release(args.driver, args.gpu_taints)
        self.release = pinned_release(f"{name}-release", spec, args.provider, args.depends_on, self)
        self.register_outputs({"status": self.release.status})
