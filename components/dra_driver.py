"""The NVIDIA DRA driver as a Helm release: the `gpu.nvidia.com` DeviceClass and a kubelet plugin per GPU node.

The release waits for the cluster and the system node group only. The kubelet plugin is a
DaemonSet, so its pods start as GPU nodes join; waiting for the GPU groups would put the
slowest node group and the chart install end to end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import pulumi
import pulumi_kubernetes as k8s

from components.driver_config import RELEASE_NAME, DraDriverConfig
from components.dra_driver_values import dra_driver_values
from components.labels import Taint, system_node_labels

RELEASE_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class ReleaseSpec:
    """One pinned chart: installed atomically (a failed install rolls back) into its own namespace."""

    release_name: str
    chart: str
    version: str
    namespace: str
    values: dict[str, Any]
    repository: Optional[str]
    timeout_seconds: int = RELEASE_TIMEOUT_SECONDS


def pinned_release(name: str, spec: ReleaseSpec, provider: k8s.Provider, depends_on: Sequence[pulumi.Resource], parent: pulumi.Resource) -> k8s.helm.v3.Release:
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
            values=spec.values,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=spec.repository) if spec.repository else None,
        ),
        opts=pulumi.ResourceOptions(parent=parent, provider=provider, depends_on=list(depends_on)),
    )


@dataclass
class DraDriverArgs:
    driver: DraDriverConfig
    gpu_taints: Sequence[Taint]
    provider: k8s.Provider
    depends_on: Sequence[pulumi.Resource] = field(default_factory=list)


class DraDriver(pulumi.ComponentResource):
    release: k8s.helm.v3.Release

    def __init__(self, name: str, args: DraDriverArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__("nebius-dra:driver:DraDriver", name, None, opts)
        driver = args.driver
        spec = ReleaseSpec(
            release_name=RELEASE_NAME,
            chart=driver.chart_reference,
            version=driver.version,
            namespace=driver.namespace,
            values=dra_driver_values(driver, args.gpu_taints, system_node_labels()),
            repository=None if driver.from_oci else driver.repository,
        )
        self.release = pinned_release(f"{name}-release", spec, args.provider, args.depends_on, self)
        self.register_outputs({"status": self.release.status})
