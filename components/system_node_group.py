"""The CPU node group where controllers run: DRA controller, operators, CoreDNS.

Helm releases wait for this group, not for the GPU groups, so `pulumi up` does not
serialise GPU node provisioning behind chart installs.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.model import SystemNodeGroupConfig
from components.nebius_sdk import nebius
from components.values.node_groups import auto_repair_args, node_group_version, strategy_args, system_node_template


@dataclass
class SystemNodeGroupArgs:
    cluster_id: str | pulumi.Output[str]
    cluster_name: str
    settings: SystemNodeGroupConfig
    service_account_id: str | None
    kubernetes_version: str


class SystemNodeGroup(pulumi.ComponentResource):
    node_group: nebius.Mk8sV1NodeGroup

    def __init__(self, name: str, args: SystemNodeGroupArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("nebius-dra:nodes:SystemNodeGroup", name, None, opts)
        settings = args.settings
        self.node_group = nebius.Mk8sV1NodeGroup(
            f"{name}-nodes",
            name=f"{args.cluster_name}-system",
            parent_id=args.cluster_id,
            version=node_group_version(args.kubernetes_version),
            fixed_node_count=settings.node_count,
            template=system_node_template(settings, args.service_account_id),
            strategy=strategy_args(settings.strategy),
            auto_repair=auto_repair_args(settings.auto_repair),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"node_group_id": self.node_group.id})
