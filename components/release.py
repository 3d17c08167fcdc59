"""A pinned Helm release, installed the same way for the DRA driver and each Operator."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.values.release import ReleaseSpec

# The release's input (and output) that holds Helm's repository options, as the engine names it.
REPOSITORY_OPTS = "repositoryOpts"


def repository_options(spec: ReleaseSpec) -> k8s.helm.v3.RepositoryOptsArgs | None:
    """Helm's repository options (pulumi-kubernetes 4.34.2 `helm.v3.RepositoryOptsArgs`): the URL of a classic
    repository and, for a repository the stack names, its credentials and TLS files. The password (and a username
    set as a secret) is a Pulumi secret: encrypted in the state, `[secret]` in every preview and diff."""
    access = spec.access
    if access is None:
        return k8s.helm.v3.RepositoryOptsArgs(repo=spec.repository) if spec.repository else None
    username = pulumi.Output.secret(access.username) if access.secret_username else access.username
    return k8s.helm.v3.RepositoryOptsArgs(
        repo=spec.repository,
        username=username if access.username else None,
        password=pulumi.Output.secret(access.password) if access.password else None,
        ca_file=access.ca_file or None,
        cert_file=access.cert_file or None,
        key_file=access.key_file or None,
    )


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
            repository_opts=repository_options(spec),
        ),
        opts=pulumi.ResourceOptions(
            parent=parent,
            provider=provider,
            depends_on=list(depends_on),
            # Pulumi creates a replacement before it deletes the original unless deleteBeforeReplace is set
            # (https://www.pulumi.com/docs/iac/concepts/options/deletebeforereplace/). Every chart the stack pins (the
            # DRA driver, the GPU and Network Operators, dcgm-exporter, kube-prometheus-stack, Kueue) installs
            # cluster-scoped objects under fixed names (DeviceClasses, ClusterRoles, CRDs, webhooks), and Helm refuses
            # to install an object another release owns (helm v3.20.2 pkg/action/validate.go existingResourceConflict:
            # "invalid ownership metadata ... meta.helm.sh/release-namespace must equal ..."): a release moved to
            # another namespace created first would fail `pulumi up`, so the old one is uninstalled first.
            delete_before_replace=True,
            # The provider echoes its inputs as outputs: the options that carry a credential stay secret there too.
            additional_secret_outputs=[REPOSITORY_OPTS] if spec.access and spec.access.password else None,
        ),
    )
