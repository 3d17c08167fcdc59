"""GPU metrics: the exporter's values built from parsed config, the chart's keys, profiles, the dashboard, and the
releases the real program registers for dev, prod and mutated configs."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from components.config.chart_keys import keys_file
from components.config.errors import ConfigError
from components.config.gpu_metrics import GUARD_REASONS, automatic_profile, profile_for_platform
from components.dra_constants import (
    DCGM_CLAIM_LABEL,
    DCGM_EXPORTER_REPOSITORY,
    DCGM_EXPORTER_VERSION,
    KUBE_PROMETHEUS_STACK_VERSION,
    KUBELET_PLUGIN_LABEL,
    PROMETHEUS_COMMUNITY_REPOSITORY,
)
from components.labels import system_node_labels
from components.model import BASIC_PROFILE, FULL_PROFILE, StackConfig
from components.resource_presets import OFFERED_PRESETS
from components.values.gpu_metrics import (
    CLAIM_LABELS,
    DASHBOARD_FILE,
    PROFILING_PREFIX,
    dashboard_configmap_data,
    dashboard_panels,
    dcgm_exporter_values,
    grafana_dashboard,
    kube_prometheus_stack_values,
    metrics_csv,
    profile_fields,
)
from components.values.gpu_operator import gpu_operator_values
from tests.helm_values import leaf_paths, undefined_keys
from tests.kubernetes_manifests import releases
from tests.stack_configs import mutated, parsed, without_presets
from tools.plan.mock_engine import ProgramRun

CONFIGMAP = "kubernetes:core/v1:ConfigMap"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}


def exporter_keys(version: str = DCGM_EXPORTER_VERSION) -> set[str]:
    """The key list kept for the pinned chart; 4.8.x patch releases are checked against 4.8.3's keys."""
    lines = keys_file("dcgm-exporter", version).read_text().splitlines()
    return {line for line in lines if line and not line.startswith("#")}


def exporter_values(config: StackConfig) -> dict[str, Any]:
    taints = [taint for group in config.gpu_node_groups for taint in group.taints]
    return dcgm_exporter_values(config.observability, taints)


def refusal(stack: str = "dev", **overrides: Any) -> str:
    with pytest.raises(ConfigError) as raised:
        parsed(stack, **overrides)
    return str(raised.value)


def with_platform(stack: str, platform: str, *names: str) -> list[dict]:
    """The stack's groups (all on the preset driver) with the named ones (every one when none is named) moved to
    `platform`, on the first preset Nebius offers there (components/resource_presets.json)."""
    groups = yaml.safe_load(json.dumps(without_presets(stack)))
    for group in groups:
        group["driversPreset"] = "cuda13.0"
        if not names or group["name"] in names:
            group.update(platform=platform, preset=OFFERED_PRESETS[platform].presets[0])
    return groups


# The exporter's values, built from parsed config


def test_prod_exporter_attributes_gpus_to_pods_on_every_tainted_gpu_node():
    values = exporter_values(parsed("prod"))
    assert values["kubernetesDRA"] == {"enabled": True}
    assert values["kubeletPath"] == "/var/lib/kubelet/pod-resources"
    assert values["nodeSelector"] == {KUBELET_PLUGIN_LABEL: "true"}
    assert values["tolerations"] == [GPU_TOLERATION]
    assert values["serviceMonitor"] == {"enabled": False}
    assert "runtimeClassName" not in values


def test_operator_mode_runs_the_exporter_with_the_operators_runtime_class():
    assert exporter_values(parsed("dev", gpuNodeGroups=without_presets("dev")))["runtimeClassName"] == "nvidia"


CHART_CASES = {
    "dev": ("dev", {}),
    "prod": ("prod", {}),
    "operator": ("prod", {"gpuNodeGroups": "operator"}),
    "service-monitor": ("dev", {"prometheusServiceMonitor": "true"}),
    "kube-prometheus-stack": ("prod", {"kubePrometheusStack": "true", "gpuMetricsProfile": "basic"}),
    "overrides": ("dev", {"gpuMetricsValues": {"resources": {"limits": {"memory": "1Gi"}}, "priorityClassName": "x"}}),
}


@pytest.mark.parametrize("case", CHART_CASES)
def test_rendered_values_use_only_keys_the_pinned_chart_defines(case):
    stack, settings = CHART_CASES[case]
    settings = dict(settings)
    if settings.get("gpuNodeGroups") == "operator":
        settings["gpuNodeGroups"] = without_presets("prod")
    config = parsed(stack, **settings)
    assert config.observability.version == DCGM_EXPORTER_VERSION
    assert undefined_keys(exporter_values(config), exporter_keys()) == []


def test_the_key_check_flags_keys_the_exporter_chart_does_not_define():
    values = {"kubernetesDRA": {"enable": True}, "nodeSelector": {"any/label": "x"}, "dra": {"enabled": True}}
    assert undefined_keys(values, exporter_keys()) == ["kubernetesDRA.enable", "dra"]


GUARDED_OVERRIDES = {
    "kubernetesDRA.enabled": {"kubernetesDRA": {"enabled": False}},
    "nodeSelector": {"nodeSelector": {"gpu": "yes"}},
    "tolerations": {"tolerations": [{"operator": "Exists"}]},
    "customMetrics": {"customMetrics": "DCGM_FI_DEV_GPU_UTIL, gauge, util"},
    "serviceMonitor.enabled": {"serviceMonitor": {"enabled": True}},
    "kubeletPath": {"kubeletPath": "/var/lib/kubelet/other"},
}


def test_every_guarded_exporter_value_has_a_refusal_case():
    assert set(GUARDED_OVERRIDES) == set(GUARD_REASONS)


@pytest.mark.parametrize("path", sorted(GUARDED_OVERRIDES))
def test_every_guarded_override_is_refused_with_its_path(path):
    message = refusal("prod", gpuMetricsValues=GUARDED_OVERRIDES[path])
    assert f"nebius-dra:gpuMetricsValues: {path}: the override" in message


def test_an_override_equal_to_the_guarded_value_and_other_values_are_accepted():
    config = parsed("dev", gpuMetricsValues={"kubernetesDRA": {"enabled": True}, "runtimeClassName": "nvidia"})
    values = exporter_values(config)
    assert values["runtimeClassName"] == "nvidia" and values["kubernetesDRA"] == {"enabled": True}


# Profiles: the field list by platform family


def test_l40s_platforms_get_no_profiling_fields_and_others_get_them():
    assert profile_for_platform("gpu-l40s-a") == BASIC_PROFILE
    assert profile_for_platform("gpu-l40s-d") == BASIC_PROFILE
    assert profile_for_platform("gpu-h200-sxm") == FULL_PROFILE
    assert profile_for_platform("gpu-b300-sxm") == FULL_PROFILE


def test_one_l40s_group_turns_profiling_off_for_the_one_exporter():
    assert (
        parsed("prod", gpuNodeGroups=with_platform("prod", "gpu-l40s-a", "h200-burst")).observability.profile
        == BASIC_PROFILE
    )
    assert parsed("prod").observability.profile == FULL_PROFILE
    assert automatic_profile([]) == FULL_PROFILE


def test_the_profile_can_be_overridden_either_way():
    l40s = with_platform("dev", "gpu-l40s-a")
    assert parsed("dev", gpuNodeGroups=l40s, gpuMetricsProfile="full").observability.profile == FULL_PROFILE
    assert parsed("dev", gpuMetricsProfile="basic").observability.profile == BASIC_PROFILE


def test_the_basic_profile_exports_no_dcgm_profiling_field():
    basic = exporter_values(parsed("dev", gpuNodeGroups=with_platform("dev", "gpu-l40s-a")))["customMetrics"]
    full = exporter_values(parsed("dev"))["customMetrics"]
    assert PROFILING_PREFIX not in basic
    assert "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE" in full and "DCGM_FI_DEV_GPU_UTIL" in basic


def test_the_field_list_is_the_exporters_csv_format():
    """Each line: DCGM field, Prometheus type (gauge or counter), help; '#' lines are comments."""
    for profile in (FULL_PROFILE, BASIC_PROFILE):
        for line in metrics_csv(profile).splitlines():
            if line.startswith("#"):
                continue
            field, kind, help_text = (part.strip() for part in line.split(",", 2))
            assert re.match(r"^DCGM_FI_[A-Z0-9_]+\Z", field) and kind in ("gauge", "counter") and help_text


def test_an_unknown_profile_is_an_error():
    with pytest.raises(ValueError, match="unknown metrics profile"):
        profile_fields("verbose")
    assert 'nebius-dra:gpuMetricsProfile: got "verbose"; allowed: full' in refusal("dev", gpuMetricsProfile="verbose")


# The dashboard


@pytest.mark.parametrize("profile", [FULL_PROFILE, BASIC_PROFILE])
def test_the_dashboard_queries_only_fields_the_profile_exports(profile):
    exported = {field.field for field in profile_fields(profile)}
    queried = {
        name for _, expr, _, _ in dashboard_panels(profile) for name in re.findall(r"\b(DCGM_FI_[A-Z0-9_]+)\b", expr)
    }
    assert queried and queried <= exported, queried - exported


def test_the_dashboard_shows_each_gpu_by_pod_and_claim():
    dashboard = grafana_dashboard(FULL_PROFILE)
    claimed = [panel for panel in dashboard["panels"] if DCGM_CLAIM_LABEL + '!=""' in panel["targets"][0]["expr"]]
    assert len(claimed) >= 5
    for panel in claimed:
        assert all(label in panel["targets"][0]["expr"] for label in CLAIM_LABELS)
    assert len({panel["id"] for panel in dashboard["panels"]}) == len(dashboard["panels"])
    assert json.loads(dashboard_configmap_data(BASIC_PROFILE)[DASHBOARD_FILE])["uid"] == dashboard["uid"]


# kube-prometheus-stack and the GPU Operator

# Value paths the stack sets, read from kube-prometheus-stack 88.5.3's values.yaml (prometheus-community/helm-charts,
# tag kube-prometheus-stack-88.5.3), and for its subcharts: grafana 12.11.1 (grafana-community/helm-charts,
# nodeSelector) and kube-state-metrics 8.4.0 (nodeSelector), the versions 88.5.3's Chart.yaml depends on.
KUBE_PROMETHEUS_STACK_KEYS = {
    "alertmanager.enabled",
    "prometheusOperator.nodeSelector",
    "prometheusOperator.admissionWebhooks.patch.nodeSelector",
    "prometheus.prometheusSpec.nodeSelector",
    "prometheus.prometheusSpec.serviceMonitorSelectorNilUsesHelmValues",
    "grafana.nodeSelector",
    "kube-state-metrics.nodeSelector",
}


def test_kube_prometheus_stack_runs_its_controllers_on_the_system_nodes_and_reads_every_service_monitor():
    values = kube_prometheus_stack_values(system_node_labels())
    selectors = {
        path.split(".nodeSelector.")[0] + ".nodeSelector" for path in leaf_paths(values) if ".nodeSelector." in path
    }
    others = {path for path in leaf_paths(values) if ".nodeSelector." not in path}
    assert selectors | others <= KUBE_PROMETHEUS_STACK_KEYS, (selectors | others) - KUBE_PROMETHEUS_STACK_KEYS
    assert values["prometheus"]["prometheusSpec"]["nodeSelector"] == system_node_labels()
    assert values["prometheus"]["prometheusSpec"]["serviceMonitorSelectorNilUsesHelmValues"] is False


def test_the_gpu_operators_exporter_is_off_so_no_gpu_is_scraped_twice():
    assert gpu_operator_values([], [])["dcgmExporter"] == {"enabled": False}


# Config mistakes, named by key


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"dcgmExporterVersion": "4.8.2"}, 'nebius-dra:dcgmExporterVersion: got "4.8.2"; allowed: 4.8.x from 4.8.3'),
        ({"dcgmExporterVersion": "latest"}, 'nebius-dra:dcgmExporterVersion: got "latest"; expected an exact chart'),
        ({"kubePrometheusStackVersion": "77.0.0"}, 'kubePrometheusStackVersion: got "77.0.0"; allowed: 88.5.x from'),
        ({"gpuMetricsNamespace": "kube-system"}, 'nebius-dra:gpuMetricsNamespace: got "kube-system", a namespace'),
        ({"gpuMetricsNamespace": "dra-samples"}, "the namespace of the claim templates (nebius-dra:claimNamespace)"),
        (
            {"gpuMetricsNamespace": "nvidia-dra-driver-gpu"},
            "the namespace of the DRA driver's release (nebius-dra:draDriverNamespace)",
        ),
        ({"gpuMetricsNamespace": "monitoring", "kubePrometheusStack": "true"}, "kube-prometheus-stack release"),
        ({"gpuMetrics": "false", "prometheusServiceMonitor": "true"}, "nebius-dra:prometheusServiceMonitor: is true"),
        ({"gpuMetrics": "false", "kubePrometheusStack": "true"}, "nebius-dra:kubePrometheusStack: is true while"),
        ({"gpuMetricsValues": [1]}, "nebius-dra:gpuMetricsValues: got [1]; expected a map of chart values"),
    ],
)
def test_bad_metrics_settings_are_refused_by_key(settings, expected):
    assert expected in refusal("dev", **settings)


def test_the_monitoring_namespace_is_free_without_kube_prometheus_stack():
    assert parsed("dev", gpuMetricsNamespace="monitoring").observability.namespace == "monitoring"


# The releases the real program registers


def exporter_release(run: ProgramRun):
    (release,) = releases(run, "dcgm-exporter")
    return release


def test_dev_and_prod_plan_the_exporter_in_dra_mode_with_their_gpu_tolerations(dev_run, prod_run):
    for run, tolerations in ((dev_run, []), (prod_run, [GPU_TOLERATION])):
        release = exporter_release(run)
        inputs = release.inputs
        assert (inputs["chart"], inputs["version"], inputs["name"]) == ("dcgm-exporter", "4.8.3", "dcgm-exporter")
        assert inputs["repositoryOpts"] == {"repo": DCGM_EXPORTER_REPOSITORY}
        assert inputs["namespace"] == "gpu-metrics" and inputs["createNamespace"] is True and inputs["atomic"] is True
        assert inputs["values"]["kubernetesDRA"] == {"enabled": True}
        assert inputs["values"]["nodeSelector"] == {KUBELET_PLUGIN_LABEL: "true"}
        assert inputs["values"]["tolerations"] == tolerations, run.stack
        assert inputs["values"]["serviceMonitor"] == {"enabled": False}
        assert releases(run, "kube-prometheus-stack") == []


def test_the_dashboard_configmap_waits_for_the_exporters_namespace(dev_run):
    (dashboard,) = dev_run.of_type(CONFIGMAP)
    assert dashboard.inputs["metadata"]["namespace"] == "gpu-metrics"
    assert dashboard.inputs["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert exporter_release(dev_run).urn in dashboard.dependencies
    assert json.loads(dashboard.inputs["data"][DASHBOARD_FILE])["title"].startswith("DRA GPUs")


def test_operator_mode_exporter_waits_for_the_operator_whose_runtime_class_it_uses(stack_config):
    run = mutated(stack_config, "dev", groups=without_presets("dev"))
    assert run.error is None, run.error
    (operator,) = releases(run, "gpu-operator")
    release = exporter_release(run)
    assert operator.inputs["values"]["dcgmExporter"] == {"enabled": False}
    assert operator.urn in release.dependencies
    assert release.inputs["values"]["runtimeClassName"] == "nvidia"


def test_kube_prometheus_stack_comes_first_and_the_exporter_renders_a_service_monitor(stack_config):
    run = mutated(stack_config, "prod", kubePrometheusStack="true")
    assert run.error is None, run.error
    (prometheus,) = releases(run, "kube-prometheus-stack")
    assert (prometheus.inputs["version"], prometheus.inputs["namespace"]) == (
        KUBE_PROMETHEUS_STACK_VERSION,
        "monitoring",
    )
    assert prometheus.inputs["repositoryOpts"] == {"repo": PROMETHEUS_COMMUNITY_REPOSITORY}
    release = exporter_release(run)
    assert prometheus.urn in release.dependencies
    assert release.inputs["values"]["serviceMonitor"] == {"enabled": True}


def test_a_service_monitor_for_your_own_prometheus_operator(stack_config):
    run = mutated(stack_config, "dev", prometheusServiceMonitor="true")
    assert exporter_release(run).inputs["values"]["serviceMonitor"] == {"enabled": True}
    assert releases(run, "kube-prometheus-stack") == []


def test_gpu_metrics_off_installs_no_exporter_and_no_dashboard(stack_config):
    run = mutated(stack_config, "prod", gpuMetrics="false")
    assert run.error is None, run.error
    assert releases(run, "dcgm-exporter") == [] and run.of_type(CONFIGMAP) == []
    assert len(releases(run, "nvidia-dra-driver-gpu")) == 1


def test_an_l40s_stack_plans_the_basic_profile(stack_config):
    run = mutated(stack_config, "prod", groups=with_platform("prod", "gpu-l40s-a", "h200-burst"))
    assert run.error is None, run.error
    values = exporter_release(run).inputs["values"]
    assert "DCGM_FI_PROF_" not in values["customMetrics"]
    (dashboard,) = run.of_type(CONFIGMAP)
    assert "DCGM_FI_PROF_" not in dashboard.inputs["data"][DASHBOARD_FILE]
