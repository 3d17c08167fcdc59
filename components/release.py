"""A pinned Helm release, installed the same way for the DRA driver and each Operator."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.values.release import ReleaseSpec


def pinned_release(
    name: str, spec: ReleaseSpec, provider: k8s.Provider, depends_on: Sequence[pulumi.Resource], parent: pulumi.Resource
) -> k8s.helm.v3.Release:
    return k8s.helm.v3.Release(
        name,
        k8s.helm.v3.ReleaseArgs(
            name=spec.release_name,
            chart=spec.chart,
            version=spec.version,
            namespace=spec.namespace,
            create_namespace=True,
            atomic=True,
            timeout=spec.timeout_seconds,
            values=pulumi.Output.secret(spec.values) if spec.secret_values else spec.values,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=spec.repository) if spec.repository else None,
        ),
        opts=pulumi.ResourceOptions(parent=parent, provider=provider, depends_on=list(depends_on)),
    )
