"""Access to the cluster: the kubeconfig as a secret, and the Kubernetes provider built on it.

The kubeconfig is built from the mk8s cluster the stack creates, or, in existing-cluster mode,
is the one the user gave as a secret. `cluster_identifier` pins the provider's identity to the
cluster, so a kubeconfig that changes text (a rotated CA, a new endpoint, a refreshed token)
does not replace every Kubernetes resource.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from components.values.kubeconfig import build_kubeconfig


@dataclass
class ClusterAccessArgs:
    cluster_name: str
    cluster_id: str | pulumi.Output[str]
    endpoint: pulumi.Output[str] | None = None
    ca_certificate: pulumi.Output[str] | None = None
    nebius_profile: str | None = None
    existing_kubeconfig: str | None = None


class ClusterAccess(pulumi.ComponentResource):
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider

    def __init__(self, name: str, args: ClusterAccessArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("nebius-dra:access:ClusterAccess", name, None, opts)
        if args.existing_kubeconfig is not None:
            self.kubeconfig = pulumi.Output.secret(args.existing_kubeconfig)
        else:
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
