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

DRA_DRIVER_TYPE = "nebius-dra:driver:DraDriver"
# The component's one input, present only when the stack sets nebius-dra:draPluginOutageAccepted.
PLUGIN_OUTAGE_ACCEPTED = "pluginOutageAccepted"


@dataclass
class DraDriverArgs:
    driver: DraDriverConfig
    gpu_taints: Sequence[Taint]
    provider: k8s.Provider
    depends_on: Sequence[pulumi.Resource] = field(default_factory=list)


class DraDriver(pulumi.ComponentResource):
    release: k8s.helm.v3.Release

    def __init__(self, name: str, args: DraDriverArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        # The groups whose plugin outage the stack accepts are recorded, so the offline plan reads the stack's word.
        accepted = {PLUGIN_OUTAGE_ACCEPTED: list(args.driver.plugin_outage_accepted)}
        super().__init__(DRA_DRIVER_TYPE, name, accepted if args.driver.plugin_outage_accepted else None, opts)
        spec = dra_driver_release(args.driver, args.gpu_taints)
        self.release = pinned_release(f"{name}-release", spec, args.provider, args.depends_on, self)
        self.register_outputs({"status": self.release.status})
