"""The InfiniBand fabric: one Nebius GPU cluster that every InfiniBand node group joins."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.nebius_sdk import nebius


@dataclass
class InfinibandFabricArgs:
    parent_id: str
    cluster_name: str
    fabric: str
    protect: bool


class InfinibandFabric(pulumi.ComponentResource):
    gpu_cluster: nebius.ComputeV1GpuCluster

    def __init__(self, name: str, args: InfinibandFabricArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("nebius-dra:fabric:InfinibandFabric", name, None, opts)
        self.gpu_cluster = nebius.ComputeV1GpuCluster(
            f"{name}-gpu-cluster",
            name=f"{args.cluster_name}-{args.fabric}",
            parent_id=args.parent_id,
            infiniband_fabric=args.fabric,
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
        )
        self.register_outputs({"gpu_cluster_id": self.gpu_cluster.id})
