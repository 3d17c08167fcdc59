"""A DRA-enabled GPU node group.

`gpu_settings.dra` prepares the nodes for DRA and turns off the legacy device plugin, so
the NVIDIA DRA driver alone manages the GPUs. A drivers preset is set only when the node
image ships the driver; otherwise the GPU Operator installs it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_nebius as nebius

from components.model import GpuNodeGroupConfig
from components.values.node_groups import gpu_node_template, node_group_version, scaling


@dataclass
class GpuNodeGroupArgs:
    cluster_id: pulumi.Input[str]
    cluster_name: str
    group: GpuNodeGroupConfig
    gpu_cluster_id: pulumi.Input[str] | None
    service_account_id: str | None
    protect: bool
    kubernetes_version: str


class GpuNodeGroup(pulumi.ComponentResource):
    node_group: nebius.Mk8sV1NodeGroup

    def __init__(self, name: str, args: GpuNodeGroupArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("nebius-dra:nodes:GpuNodeGroup", name, None, opts)
        group = args.group
        self.node_group = nebius.Mk8sV1NodeGroup(
            f"{name}-nodes",
            name=f"{args.cluster_name}-{group.name}",
            parent_id=args.cluster_id,
            version=node_group_version(args.kubernetes_version),
            template=gpu_node_template(group, args.gpu_cluster_id, args.service_account_id),
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
            **scaling(group),  # type: ignore[arg-type]
        )
        self.register_outputs({"node_group_id": self.node_group.id})
