"""A DRA-enabled GPU node group.

`gpu_settings.dra` prepares the nodes for DRA and turns off the legacy device plugin, so
the NVIDIA DRA driver alone manages the GPUs. A drivers preset is set only when the node
image ships the driver; otherwise the GPU Operator installs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pulumi
import pulumi_nebius as nebius

from components.config import GpuNodeGroupConfig
from components.labels import gpu_node_labels
from components.node_template import node_template


def gpu_settings(group: GpuNodeGroupConfig) -> nebius.Mk8sV1NodeGroupTemplateGpuSettingsArgs:
    return nebius.Mk8sV1NodeGroupTemplateGpuSettingsArgs(dra=True, drivers_preset=group.drivers_preset)


def scaling(group: GpuNodeGroupConfig) -> dict[str, object]:
    if group.autoscaling is not None:
        return {
            "autoscaling": nebius.Mk8sV1NodeGroupAutoscalingArgs(
                min_node_count=group.autoscaling.min_nodes,
                max_node_count=group.autoscaling.max_nodes,
            )
        }
    return {"fixed_node_count": group.fixed_node_count}


@dataclass
class GpuNodeGroupArgs:
    cluster_id: pulumi.Input[str]
    cluster_name: str
    group: GpuNodeGroupConfig
    gpu_cluster_id: Optional[pulumi.Input[str]]
    service_account_id: Optional[str]
    protect: bool


class GpuNodeGroup(pulumi.ComponentResource):
    node_group: nebius.Mk8sV1NodeGroup

    def __init__(self, name: str, args: GpuNodeGroupArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__("nebius-dra:nodes:GpuNodeGroup", name, None, opts)
        group = args.group
        fabric = nebius.Mk8sV1NodeGroupTemplateGpuClusterArgs(id=args.gpu_cluster_id) if args.gpu_cluster_id is not None else None
        self.node_group = nebius.Mk8sV1NodeGroup(
            f"{name}-nodes",
            name=f"{args.cluster_name}-{group.name}",
            parent_id=args.cluster_id,
            template=node_template(
                group.platform,
                group.preset,
                group.boot_disk_gib,
                gpu_node_labels(group.name, group.preinstalled_driver, group.labels),
                args.service_account_id,
                gpu_settings=gpu_settings(group),
                gpu_cluster=fabric,
                taints=[nebius.Mk8sV1NodeGroupTemplateTaintArgs(key=t.key, value=t.value, effect=t.effect) for t in group.taints] or None,
            ),
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
            **scaling(group),  # type: ignore[arg-type]
        )
        self.register_outputs({"node_group_id": self.node_group.id})
