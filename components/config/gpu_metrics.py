"""GPU metrics from stack config: the DCGM exporter in DRA mode, its field profile, and the Prometheus around it.

One exporter serves every GPU node in both driver modes; the GPU Operator's own exporter is
turned off (components/values/gpu_operator.py), so no GPU is scraped twice. Per-pod
attribution under DRA needs the exporter's DRA mode, which reads resource.k8s.io/v1
ResourceSlices from chart 4.8.3 on (NVIDIA/dcgm-exporter#590, fixed in 4.6.0-4.8.3); older
charts watch only v1beta1 and are refused. Everything is checked here, so a bad
combination stops the program before any resource is registered.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from components.config.chart_keys import chart_keys, credential_shaped_paths, unknown_key_problems
from components.config.errors import ConfigProblems, config_key, shown
from components.config.guards import floating_tag_problems, override_problems
from components.config.namespaces import refuse_taken_namespace, release_namespaces
from components.config.repositories import chart_repository
from components.dra_constants import (
    DCGM_EXPORTER_CHART,
    DCGM_EXPORTER_REPOSITORY,
    DCGM_EXPORTER_VERSION,
    DEFAULT_METRICS_NAMESPACE,
    KUBE_PROMETHEUS_STACK_VERSION,
    PROMETHEUS_COMMUNITY_REPOSITORY,
)
from components.input.stack import StackInput
from components.labels import kubelet_plugin_node_selector, tolerations_for
from components.model import (
    BASIC_PROFILE,
    FULL_PROFILE,
    DraDriverConfig,
    GpuNodeGroupConfig,
    ObservabilityConfig,
    Taint,
)
from components.repository_model import RepositoryAccess

# The DCGM profiling module fails on Nebius L40S VMs, so DCGM_FI_PROF_* fields must stay off there
# (field report in the project's facts sheet; Nebius's L40S platforms are named gpu-l40s-*, for
# example gpu-l40s-a). Every other platform family gets the full profile.
PROFILE_BY_PLATFORM_PREFIX = {"gpu-l40s": BASIC_PROFILE}

# 4.8.x from 4.8.3: 4.8.3 is the first chart whose DRA mode reads resource.k8s.io/v1, and the stack's
# value keys were read from 4.8.3's values.yaml (components/chart_keys/dcgm-exporter-4.8.3.keys), which
# every accepted 4.8.x is checked against.
DCGM_VERSION_PATTERN = re.compile(r"^4\.8\.([3-9]|[1-9][0-9]{1,2})\Z")
# 88.5.x from 88.5.3, whose values.yaml the kube-prometheus-stack keys were read from.
KPS_VERSION_PATTERN = re.compile(r"^88\.5\.([3-9]|[1-9][0-9]{1,2})\Z")

GUARD_REASONS = {
    "kubernetesDRA.enabled": "must stay true: without DRA mode the exporter reads the device plugin's pod resources, "
    "which carry no DRA-allocated GPU, so no series names the pod or claim holding a GPU",
    "nodeSelector": "must stay the label every GPU node group carries, or the exporter lands on no GPU node",
    "tolerations": "is derived from the taints of nebius-dra:gpuNodeGroups; add the taint to the group instead",
    "customMetrics": "is the field list of nebius-dra:gpuMetricsProfile; set that key instead",
    "serviceMonitor.enabled": "is set from nebius-dra:prometheusServiceMonitor and nebius-dra:kubePrometheusStack; "
    "a ServiceMonitor without the Prometheus Operator's CRDs fails the install",
    "kubeletPath": "must stay the kubelet's pod-resources directory: the exporter learns which pod holds which GPU from its socket",
}


def profile_for_platform(platform: str) -> str:
    for prefix, profile in PROFILE_BY_PLATFORM_PREFIX.items():
        if platform.startswith(prefix):
            return profile
    return FULL_PROFILE


def automatic_profile(groups: Iterable[GpuNodeGroupConfig]) -> str:
    """One exporter serves every GPU node with one field list: profiling only when every group's platform takes it."""
    profiles = {profile_for_platform(group.platform) for group in groups}
    return BASIC_PROFILE if BASIC_PROFILE in profiles else FULL_PROFILE


def guarded_metrics_values(observability: ObservabilityConfig, gpu_taints: Iterable[Taint]) -> dict[str, Any]:
    """The values that make the exporter attribute GPUs to pods and claims on every GPU node; no override may change them.

    `customMetrics` is filled in by the value builder (components/values/gpu_metrics.py);
    here it only needs to exist, so the guard sees any override of it.
    """
    return {
        "kubernetesDRA": {"enabled": True},
        "kubeletPath": "/var/lib/kubelet/pod-resources",
        "nodeSelector": kubelet_plugin_node_selector(),
        "tolerations": tolerations_for(gpu_taints),
        "serviceMonitor": {"enabled": observability.scraped},
    }


# How the dcgm-exporter chart lets a value reach the exporter besides the guarded keys, read from its templates
# (dcgm-exporter 4.8.2, templates/daemonset.yaml and templates/metrics-configmap.yaml; values.yaml for the defaults):
# - `customMetrics` becomes the ConfigMap exporter-metrics-config-map, which `extraConfigMapVolumes` and
#   `extraVolumeMounts` mount over /etc/dcgm-exporter/default-counters.csv, which `arguments` hands to the exporter
#   with `-f`. A list replaces the chart's whole, so new lists there unmount or bypass the field list;
# - `extraEnv` is appended after the env the chart writes (DCGM_EXPORTER_KUBERNETES, KUBERNETES_ENABLE_DRA,
#   DCGM_EXPORTER_LISTEN, ...), and of two entries of one name Kubernetes keeps the last: an entry of the chart's
#   names, or any DCGM_EXPORTER_ setting the exporter reads from its environment, turns DRA mode off or replaces
#   what the chart set;
# - `image.tag` picks the exporter's image: a tag that moves (`latest`, `main`: FLOATING_TAGS) is not the release the
#   chart pins.
CHART_ARGUMENTS = ("-f", "/etc/dcgm-exporter/default-counters.csv")
# Flags that name another field list (`-f`/`--collectors`, `-m`/`--configmap-data`), as values.yaml documents them.
FIELD_LIST_FLAGS = ("-f", "--collectors", "-m", "--configmap-data")
CHART_ENV = ("KUBERNETES_ENABLE_DRA", "NODE_NAME")
EXPORTER_ENV_PREFIX = "DCGM_EXPORTER_"
FIELD_LIST_MOUNTS = ("extraConfigMapVolumes", "extraVolumeMounts")


def _arguments_problem(arguments: Any) -> str | None:
    if not isinstance(arguments, list) or any(not isinstance(argument, str) for argument in arguments):
        return f"got {shown(arguments)}; expected a list of strings that starts with {shown(list(CHART_ARGUMENTS))}"
    extra = arguments[len(CHART_ARGUMENTS) :]
    flags = sorted({argument.split("=", 1)[0] for argument in extra} & set(FIELD_LIST_FLAGS))
    if tuple(arguments[: len(CHART_ARGUMENTS)]) != CHART_ARGUMENTS or flags:
        return (
            f"got {shown(arguments)}: the list replaces the chart's, whose {' '.join(CHART_ARGUMENTS)} hands the "
            "exporter the field list of nebius-dra:gpuMetricsProfile; keep it first and add no "
            f"{'/'.join(FIELD_LIST_FLAGS)} after it"
        )
    return None


def _env_problems(entries: Any) -> list[str]:
    if not isinstance(entries, list) or any(not isinstance(entry, dict) for entry in entries):
        return [f"got {shown(entries)}; expected a list of {{name, value}} entries"]
    return [
        f"[{index}] sets {shown(entry.get('name'))}, which the chart sets (or, as DCGM_EXPORTER_*, an exporter setting "
        "the chart owns), and Kubernetes keeps the last of two entries of one name: it would turn DRA mode off or "
        "replace what the stack set; set the chart value instead"
        for index, entry in enumerate(entries)
        if str(entry.get("name")) in CHART_ENV or str(entry.get("name")).startswith(EXPORTER_ENV_PREFIX)
    ]


def chart_side_door_problems(overrides: dict[str, Any]) -> list[tuple[str, str]]:
    """(path, complaint) for each override that would reach a guarded value around its key (see above)."""
    problems: list[tuple[str, str]] = []
    if "arguments" in overrides and (problem := _arguments_problem(overrides["arguments"])):
        problems.append(("arguments", problem))
    problems += [("extraEnv", problem) for problem in _env_problems(overrides.get("extraEnv", []))]
    problems += [
        (key, "replaces the chart's list, which mounts the field list of nebius-dra:gpuMetricsProfile; leave it out")
        for key in FIELD_LIST_MOUNTS
        if key in overrides
    ]
    return problems + floating_tag_problems(overrides, "4.5.3-4.8.2-distroless")


def guarded_override_problems(observability: ObservabilityConfig, gpu_taints: Iterable[Taint]) -> list[tuple[str, str]]:
    """(path, complaint) for every guarded value the user's overrides would change.

    `customMetrics` is the one guarded value the builder fills later, so any override of it is refused.
    """
    value_reasons = {path: reason for path, reason in GUARD_REASONS.items() if path != "customMetrics"}
    problems = override_problems(
        guarded_metrics_values(observability, gpu_taints), observability.value_overrides, value_reasons
    )
    if "customMetrics" in observability.value_overrides:
        problems.append(("customMetrics", f"the override sets it, but it {GUARD_REASONS['customMetrics']}"))
    return problems + chart_side_door_problems(dict(observability.value_overrides))


def _version(key: str, given: str, pattern: re.Pattern[str], allowed: str, why: str, problems: ConfigProblems) -> str:
    if not pattern.match(given):
        problems.add(config_key(key), f"got {shown(given)}; allowed: {allowed} ({why})")
    return given


def _namespace(settings: StackInput, driver: DraDriverConfig, problems: ConfigProblems) -> str:
    namespace = settings.gpuMetricsNamespace
    taken = {
        **release_namespaces(settings, driver, with_metrics=False),
        settings.claimNamespace: "the claim templates (nebius-dra:claimNamespace), which the stack deletes with them",
    }
    refuse_taken_namespace(
        config_key("gpuMetricsNamespace"),
        namespace,
        taken,
        "the exporter's privileged pods, and its ConfigMap and Role, which the chart names without the release name, "
        "need a namespace of their own",
        problems,
        example=DEFAULT_METRICS_NAMESPACE,
    )
    return namespace


def parse_observability_config(
    settings: StackInput,
    groups: Sequence[GpuNodeGroupConfig],
    driver: DraDriverConfig,
    access: RepositoryAccess | None,
    problems: ConfigProblems,
) -> ObservabilityConfig:
    """Reads the GPU metrics keys; `groups` choose the profile and the exporter's tolerations, `driver` its runtime;
    `access` goes with each repository the stack names."""
    if settings.prometheusServiceMonitor and not settings.gpuMetrics:
        problems.add(
            config_key("prometheusServiceMonitor"),
            "is true while nebius-dra:gpuMetrics is false: the ServiceMonitor comes with the exporter; turn gpuMetrics on "
            "or the ServiceMonitor off",
        )
    if settings.kubePrometheusStack and not settings.gpuMetrics:
        problems.add(
            config_key("kubePrometheusStack"),
            "is true while nebius-dra:gpuMetrics is false: the stack installs kube-prometheus-stack to scrape the GPU "
            "exporter; turn gpuMetrics on, or install your own Prometheus outside the stack",
        )
    every_group_operator = bool(groups) and not any(group.preinstalled_driver for group in groups)
    observability = ObservabilityConfig(
        enabled=settings.gpuMetrics,
        version=_version(
            "dcgmExporterVersion",
            settings.dcgmExporterVersion,
            DCGM_VERSION_PATTERN,
            f"4.8.x from {DCGM_EXPORTER_VERSION}",
            "older charts' DRA mode watches only resource.k8s.io/v1beta1 ResourceSlices, NVIDIA/dcgm-exporter#590",
            problems,
        ),
        namespace=_namespace(settings, driver, problems),
        profile=settings.gpuMetricsProfile or automatic_profile(groups),
        value_overrides=settings.gpuMetricsValues,
        service_monitor=settings.prometheusServiceMonitor,
        kube_prometheus_stack=settings.kubePrometheusStack,
        kube_prometheus_stack_version=_version(
            "kubePrometheusStackVersion",
            settings.kubePrometheusStackVersion,
            KPS_VERSION_PATTERN,
            f"88.5.x from {KUBE_PROMETHEUS_STACK_VERSION}",
            "the release whose values the stack's keys were checked against",
            problems,
        ),
        # The GPU Operator creates the RuntimeClass `nvidia` (gpu-operator v25.10.1 values operator.runtimeClass) and
        # runs its own operands with it; preset images run the exporter with the node's default runtime.
        runtime_class="nvidia" if every_group_operator else None,
        repository=chart_repository(settings.dcgmExporterRepository, DCGM_EXPORTER_REPOSITORY, access),
        kube_prometheus_stack_repository=chart_repository(
            settings.kubePrometheusStackRepository, PROMETHEUS_COMMUNITY_REPOSITORY, access
        ),
    )
    for unknown in unknown_key_problems(
        settings.gpuMetricsValues, chart_keys(DCGM_EXPORTER_CHART, DCGM_EXPORTER_VERSION)
    ):
        problems.add(config_key("gpuMetricsValues"), unknown)
    for path in credential_shaped_paths(settings.gpuMetricsValues):
        problems.add(
            config_key("gpuMetricsValues"),
            f"{path} may hold a credential (the plan's values file hides it, `pulumi up` would send it in plain text), "
            f"and {config_key('gpuMetricsValues')} cannot be set as a secret: change it",
        )
    taints = [taint for group in groups for taint in group.taints]
    for path, message in guarded_override_problems(observability, taints):
        problems.add(config_key("gpuMetricsValues"), f"{path}: {message}")
    return observability
