"""Helm values for GPU metrics: the DCGM exporter in DRA mode, the optional kube-prometheus-stack, and the dashboard.

The guarded values (config/observability.py) are what makes the exporter attribute each GPU
to the pod and ResourceClaim holding it, on every GPU node; `gpuMetricsValues` is merged over
everything else. The field list is the chart's default set (dcgm-exporter 4.8.3
`templates/metrics-configmap.yaml`), as data, so the `basic` profile can leave out the
profiling fields and the dashboard can be checked against what is exported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from components.config.gpu_metrics import guarded_metrics_values
from components.dra_constants import (
    DCGM_CLAIM_LABEL,
    DCGM_CLAIM_NAMESPACE_LABEL,
    DCGM_DEVICE_LABEL,
    DCGM_EXPORTER_CHART,
    DCGM_NAMESPACE_LABEL,
    DCGM_POD_LABEL,
    DCGM_POOL_LABEL,
    GRAFANA_DASHBOARD_LABEL,
    KUBE_PROMETHEUS_STACK_CHART,
    MONITORING_NAMESPACE,
)
from components.merge import deep_merge
from components.model import BASIC_PROFILE, FULL_PROFILE, ObservabilityConfig, Taint
from components.values.release import ReleaseSpec, chart_location

PROFILING_PREFIX = "DCGM_FI_PROF_"
DASHBOARD_CONFIGMAP = "dra-gpu-dashboard"
DASHBOARD_FILE = "dra-gpus.json"
DASHBOARD_UID = "nebius-dra-gpus"
KPS_TIMEOUT_SECONDS = 900


@dataclass(frozen=True)
class MetricField:
    field: str
    kind: str
    help: str


# The fields dcgm-exporter 4.8.3's chart exports by default (its metrics ConfigMap, uncommented lines).
DEFAULT_FIELDS = (
    MetricField("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."),
    MetricField("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."),
    MetricField("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C)."),
    MetricField("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    MetricField("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."),
    MetricField("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ)."),
    MetricField("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries."),
    MetricField("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."),
    MetricField("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."),
    MetricField("DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %)."),
    MetricField("DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %)."),
    MetricField("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    MetricField("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB)."),
    MetricField("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."),
    MetricField(
        "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "gauge", "Total number of NVLink bandwidth counters for all lanes."
    ),
    MetricField("DCGM_FI_DEV_VGPU_LICENSE_STATUS", "gauge", "vGPU License status"),
    MetricField(
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors"
    ),
    MetricField("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for correctable errors"),
    MetricField("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed"),
    MetricField("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."),
    MetricField("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active."),
    MetricField("DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active."),
    MetricField(
        "DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "The rate of data transmitted over the PCIe bus, in bytes per second."
    ),
    MetricField(
        "DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "The rate of data received over the PCIe bus, in bytes per second."
    ),
)


def profile_fields(profile: str) -> tuple[MetricField, ...]:
    """`full`: the chart's default fields; `basic`: the same without DCGM's profiling (DCGM_FI_PROF_*) fields."""
    if profile == FULL_PROFILE:
        return DEFAULT_FIELDS
    if profile == BASIC_PROFILE:
        return tuple(field for field in DEFAULT_FIELDS if not field.field.startswith(PROFILING_PREFIX))
    raise ValueError(f"unknown metrics profile {profile!r}")


def metrics_csv(profile: str) -> str:
    """The exporter's field list in its CSV format: `field, Prometheus type, help`, one a line."""
    header = f"# nebius-dra GPU metrics profile {profile}: DCGM field, Prometheus metric type, help message"
    return "\n".join([header, *(f"{f.field}, {f.kind}, {f.help}" for f in profile_fields(profile))]) + "\n"


def dcgm_exporter_values(observability: ObservabilityConfig, gpu_taints: Iterable[Taint]) -> dict[str, Any]:
    """Guarded values (DRA mode, placement, ServiceMonitor), the profile's field list, then the user's overrides."""
    values = guarded_metrics_values(observability, gpu_taints)
    values["customMetrics"] = metrics_csv(observability.profile)
    if observability.runtime_class:
        values["runtimeClassName"] = observability.runtime_class
    return deep_merge(values, observability.value_overrides)


def dcgm_exporter_release(observability: ObservabilityConfig, gpu_taints: Iterable[Taint]) -> ReleaseSpec:
    return ReleaseSpec(
        release_name=DCGM_EXPORTER_CHART,
        version=observability.version,
        namespace=observability.namespace,
        values=dcgm_exporter_values(observability, gpu_taints),
        **chart_location(DCGM_EXPORTER_CHART, observability.repository),
    )


def kube_prometheus_stack_values(system_node_selector: Mapping[str, str]) -> dict[str, Any]:
    """Controllers on the system nodes; Prometheus reads every ServiceMonitor; no Alertmanager (no receiver is wired).

    Keys from kube-prometheus-stack 88.5.3's values.yaml, and for its subcharts from grafana 12.11.1
    (`nodeSelector`) and kube-state-metrics 8.4.0 (`nodeSelector`). The node exporter is a DaemonSet on
    every node and keeps its chart's placement.
    """
    system = dict(system_node_selector)
    return {
        "alertmanager": {"enabled": False},
        "prometheusOperator": {
            "nodeSelector": system,
            "admissionWebhooks": {"patch": {"nodeSelector": system}},
        },
        "prometheus": {
            "prometheusSpec": {
                "nodeSelector": system,
                # Select ServiceMonitors without the release label the chart would otherwise require.
                "serviceMonitorSelectorNilUsesHelmValues": False,
            }
        },
        "grafana": {"nodeSelector": system},
        "kube-state-metrics": {"nodeSelector": system},
    }


def kube_prometheus_stack_spec(
    observability: ObservabilityConfig, system_node_selector: Mapping[str, str]
) -> ReleaseSpec:
    return ReleaseSpec(
        release_name=KUBE_PROMETHEUS_STACK_CHART,
        version=observability.kube_prometheus_stack_version,
        namespace=MONITORING_NAMESPACE,
        values=kube_prometheus_stack_values(system_node_selector),
        timeout_seconds=KPS_TIMEOUT_SECONDS,
        **chart_location(KUBE_PROMETHEUS_STACK_CHART, observability.kube_prometheus_stack_repository),
    )


# Every series of a GPU held through DRA carries these labels; the dashboard groups by them.
CLAIM_LABELS = (
    DCGM_NAMESPACE_LABEL,
    DCGM_POD_LABEL,
    DCGM_CLAIM_NAMESPACE_LABEL,
    DCGM_CLAIM_LABEL,
    DCGM_POOL_LABEL,
    DCGM_DEVICE_LABEL,
)
CLAIMED = f'{DCGM_CLAIM_LABEL}!="",{DCGM_NAMESPACE_LABEL}=~"$namespace"'
LEGEND = "{{namespace}}/{{pod}} claim {{dra_claim_name}} ({{dra_pool_name}}/{{dra_device_name}})"


def _by_claim(metric: str) -> str:
    return f"max by ({', '.join(CLAIM_LABELS)}) ({metric}{{{CLAIMED}}})"


def _panel(index: int, title: str, expr: str, unit: str, kind: str = "timeseries") -> dict[str, Any]:
    return {
        "id": index + 1,
        "type": kind,
        "title": title,
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "gridPos": {"h": 8, "w": 12, "x": 12 * (index % 2), "y": 8 * (index // 2)},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": [{"refId": "A", "expr": expr, "legendFormat": LEGEND if kind == "timeseries" else ""}],
    }


def dashboard_panels(profile: str) -> list[tuple[str, str, str, str]]:
    """(title, PromQL, unit, panel type) of each panel; profiling panels only when the profile exports them."""
    panels = [
        ("GPU utilization per pod and claim", _by_claim("DCGM_FI_DEV_GPU_UTIL"), "percent", "timeseries"),
        ("GPU memory used per pod and claim", _by_claim("DCGM_FI_DEV_FB_USED"), "decmbytes", "timeseries"),
        ("Power draw per pod and claim", _by_claim("DCGM_FI_DEV_POWER_USAGE"), "watt", "timeseries"),
        ("GPU temperature per pod and claim", _by_claim("DCGM_FI_DEV_GPU_TEMP"), "celsius", "timeseries"),
        (
            "GPUs no claim holds, per node",
            f'count by ({DCGM_POOL_LABEL}, hostname, Hostname) (DCGM_FI_DEV_GPU_UTIL{{{DCGM_CLAIM_LABEL}=""}})',
            "none",
            "timeseries",
        ),
        ("Claimed GPUs", _by_claim("DCGM_FI_DEV_FB_USED"), "decmbytes", "table"),
    ]
    if profile == FULL_PROFILE:
        panels += [
            (
                "Tensor pipe active per pod and claim",
                _by_claim("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"),
                "percentunit",
                "timeseries",
            ),
            (
                "Graphics engine active per pod and claim",
                _by_claim("DCGM_FI_PROF_GR_ENGINE_ACTIVE"),
                "percentunit",
                "timeseries",
            ),
        ]
    return panels


def grafana_dashboard(profile: str) -> dict[str, Any]:
    """A Grafana dashboard of DRA-held GPUs: each series is one GPU of one claim of one pod."""
    return {
        "uid": DASHBOARD_UID,
        "title": "DRA GPUs: per pod and ResourceClaim",
        "tags": ["gpu", "dra", "dcgm"],
        "timezone": "browser",
        "schemaVersion": 39,
        "refresh": "30s",
        "time": {"from": "now-1h", "to": "now"},
        "templating": {
            "list": [
                {"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Prometheus"},
                {
                    "name": "namespace",
                    "type": "query",
                    "label": "Pod namespace",
                    "datasource": {"type": "prometheus", "uid": "${datasource}"},
                    "query": f'label_values(DCGM_FI_DEV_GPU_UTIL{{{DCGM_CLAIM_LABEL}!=""}}, {DCGM_NAMESPACE_LABEL})',
                    "includeAll": True,
                    "multi": True,
                    "allValue": ".*",
                    "refresh": 2,
                },
            ]
        },
        "panels": [
            _panel(index, title, expr, unit, kind)
            for index, (title, expr, unit, kind) in enumerate(dashboard_panels(profile))
        ],
    }


def dashboard_configmap_data(profile: str) -> dict[str, str]:
    return {DASHBOARD_FILE: json.dumps(grafana_dashboard(profile), indent=2, sort_keys=True)}


def dashboard_labels() -> dict[str, str]:
    """The label the Grafana sidecar loads dashboards by (grafana chart 12.11.1 sidecar.dashboards.label/labelValue)."""
    return {GRAFANA_DASHBOARD_LABEL: "1"}
