"""Access to the cluster: the kubeconfig as a secret, and the Kubernetes provider built on it.

`cluster_identifier` pins the provider's identity to the cluster ID, so a kubeconfig that
changes text (a rotated CA, a new endpoint) does not replace every Kubernetes resource.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.values.kubeconfig import build_kubeconfig


@dataclass
class ClusterAccessArgs:
    cluster_name: str
    cluster_id: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    ca_certificate: pulumi.Output[str]
    nebius_profile: str | None


class ClusterAccess(pulumi.ComponentResource):
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider

    def __init__(self, name: str, args: ClusterAccessArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("nebius-dra:access:ClusterAccess", name, None, opts)
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(args.endpoint, args.ca_certificate).apply(
                lambda parts: build_kubeconfig(args.cluster_name, parts[0], parts[1], args.nebius_profile)
            )
        )
        self.provider = k8s.Provider(
            f"{name}-provider",
            kubeconfig=self.kubeconfig,
            cluster_identifier=args.cluster_id,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"kubeconfig": self.kubeconfig})
