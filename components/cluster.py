"""The Nebius mk8s cluster: the control plane the rest of the stack hangs off.

The control plane takes the configured version as MAJOR.MINOR only; a `-nebius-node.N`
suffix goes to the node groups (components.values.node_groups.control_plane_version).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.model import ClusterConfig
from components.nebius_sdk import nebius
from components.values.node_groups import control_plane_version


@dataclass
class Mk8sClusterArgs:
    settings: ClusterConfig
    protect: bool


class Mk8sCluster(pulumi.ComponentResource):
    cluster: nebius.Mk8sV1Cluster
    cluster_id: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    ca_certificate: pulumi.Output[str]

    def __init__(self, name: str, args: Mk8sClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("nebius-dra:cluster:Mk8sCluster", name, None, opts)
        settings = args.settings
        endpoints = nebius.Mk8sV1ClusterControlPlaneEndpointsArgs(
            public_endpoint=nebius.Mk8sV1ClusterControlPlaneEndpointsPublicEndpointArgs()
            if settings.public_endpoint
            else None,
        )
        self.cluster = nebius.Mk8sV1Cluster(
            f"{name}-cluster",
            name=settings.name,
            parent_id=settings.parent_id,
            control_plane=nebius.Mk8sV1ClusterControlPlaneArgs(
                subnet_id=settings.subnet_id,
                version=control_plane_version(settings.kubernetes_version),
                etcd_cluster_size=settings.etcd_cluster_size,
                endpoints=endpoints,
            ),
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
        )
        self.cluster_id = self.cluster.id
        control_plane = self.cluster.status.apply(lambda status: status.control_plane if status else None)
        self.endpoint = control_plane.apply(_endpoint_of)
        self.ca_certificate = control_plane.apply(
            lambda cp: (cp.auth.cluster_ca_certificate or "") if cp and cp.auth else ""
        )
        self.register_outputs({"cluster_id": self.cluster_id, "endpoint": self.endpoint})


def _endpoint_of(control_plane) -> str:
    """The public endpoint when there is one, else the private one (reachable from inside the VPC)."""
    if control_plane is None or control_plane.endpoints is None:
        return ""
    return control_plane.endpoints.public_endpoint or control_plane.endpoints.private_endpoint or ""
