"""GPU metrics: NVIDIA's DCGM exporter in DRA mode on every GPU node, a Grafana dashboard, optionally Prometheus.

The exporter is a DaemonSet, so like the DRA driver it waits for the cluster and the system
node group only, never for a GPU group: its pods start as GPU nodes join. It waits for the
GPU Operator when there is one (the Operator creates the `nvidia` RuntimeClass its pods use)
and for kube-prometheus-stack when the stack installs it (its CRDs define the ServiceMonitor).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as k8s
from pulumi_kubernetes.core import v1 as core
from pulumi_kubernetes.meta import v1 as meta

from components.labels import MANAGED_LABELS
from components.model import ObservabilityConfig, Taint
from components.release import pinned_release
from components.values.gpu_metrics import (
    DASHBOARD_CONFIGMAP,
    dashboard_configmap_data,
    dashboard_labels,
    dcgm_exporter_release,
    kube_prometheus_stack_spec,
)


@dataclass
class GpuMetricsArgs:
    observability: ObservabilityConfig
    gpu_taints: Sequence[Taint]
    system_node_selector: Mapping[str, str]
    provider: k8s.Provider
    depends_on: Sequence[pulumi.Resource] = field(default_factory=list)


class GpuMetrics(pulumi.ComponentResource):
    prometheus: k8s.helm.v3.Release | None
    exporter: k8s.helm.v3.Release
    dashboard: core.ConfigMap

    def __init__(self, name: str, args: GpuMetricsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("nebius-dra:observability:GpuMetrics", name, None, opts)
        observability = args.observability
        if not observability.enabled:
            raise ValueError(
                "GpuMetrics needs observability.enabled: the platform builds it only when gpuMetrics is on"
            )
        self.prometheus = (
            pinned_release(
                f"{name}-prometheus",
                kube_prometheus_stack_spec(observability, args.system_node_selector),
                args.provider,
                args.depends_on,
                self,
            )
            if observability.kube_prometheus_stack
            else None
        )
        self.exporter = pinned_release(
            f"{name}-exporter",
            dcgm_exporter_release(observability, args.gpu_taints),
            args.provider,
            [*args.depends_on, *([self.prometheus] if self.prometheus else [])],
            self,
        )
        self.dashboard = core.ConfigMap(
            f"{name}-dashboard",
            metadata=meta.ObjectMetaArgs(
                name=DASHBOARD_CONFIGMAP,
                namespace=self.exporter.namespace,
                labels={**MANAGED_LABELS, **dashboard_labels()},
            ),
            data=dashboard_configmap_data(observability.profile),
            opts=pulumi.ResourceOptions(parent=self, provider=args.provider, depends_on=[self.exporter]),
        )
        self.register_outputs({"exporter": self.exporter.status, "dashboard": DASHBOARD_CONFIGMAP})
