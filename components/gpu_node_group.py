"""A DRA-enabled GPU node group.

`gpu_settings.dra` prepares the nodes for DRA and turns off the legacy device plugin, so
the NVIDIA DRA driver alone manages the GPUs. A drivers preset is set only when the node
image ships the driver; otherwise the GPU Operator installs it. The group always sends its
roll-out strategy, and its auto-repair rules and capacity (on-demand, reserved, spot) when
set; a spot group with a maximum price gets its own Nebius pricing policy.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.model import GpuNodeGroupConfig
from components.nebius_sdk import nebius
from components.values.node_groups import (
    auto_repair_args,
    gpu_node_template,
    node_group_version,
    pricing_policy_args,
    scaling,
    strategy_args,
)


@dataclass
class GpuNodeGroupArgs:
    cluster_id: str | pulumi.Output[str]
    cluster_name: str
    group: GpuNodeGroupConfig
    gpu_cluster_id: str | pulumi.Output[str] | None
    service_account_id: str | None
    protect: bool
    kubernetes_version: str
    project_id: str = ""


class GpuNodeGroup(pulumi.ComponentResource):
    node_group: nebius.Mk8sV1NodeGroup
    pricing_policy: nebius.BillingV1PricingPolicy | None

    def __init__(self, name: str, args: GpuNodeGroupArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("nebius-dra:nodes:GpuNodeGroup", name, None, opts)
        group = args.group
        node_group_name = f"{args.cluster_name}-{group.name}"
        self.pricing_policy = None
        if group.capacity.spot and group.capacity.max_price_per_gpu_hour is not None:
            if not args.project_id:
                raise ValueError(
                    f"GpuNodeGroupArgs.project_id: group {group.name} needs the project for its pricing policy"
                )
            self.pricing_policy = nebius.BillingV1PricingPolicy(
                f"{name}-spot-price",
                pricing_policy_args(group, args.project_id, node_group_name),
                opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
            )
        self.node_group = nebius.Mk8sV1NodeGroup(
            f"{name}-nodes",
            name=node_group_name,
            parent_id=args.cluster_id,
            version=node_group_version(args.kubernetes_version),
            template=gpu_node_template(
                group,
                args.gpu_cluster_id,
                args.service_account_id,
                self.pricing_policy.id if self.pricing_policy is not None else None,
            ),
            strategy=strategy_args(group.strategy),
            auto_repair=auto_repair_args(group.auto_repair),
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
            **scaling(group),  # type: ignore[arg-type]
        )
        self.register_outputs({"node_group_id": self.node_group.id})
