"""Rules on Helm releases: one DRA driver at an exact version, the GPU Operator's device plugin off on DRA nodes, GPU
metrics present and DRA-aware, and every chart from the mirror once one chart comes from it."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from .planned import (
    DCGM_EXPORTER_CHART,
    DRA_DRIVER_CHARTS,
    EXISTING_GPU_GROUP_TYPE,
    GPU_OPERATOR_CHART,
    HELM_RELEASE_TYPES,
    KUBE_PROMETHEUS_STACK_CHART,
    KUEUE_CHART,
    NETWORK_OPERATOR_CHART,
    PRESET_DRIVER_ROOT,
    PlannedResource,
    chart_name,
    field_at,
    group_driver_root,
    is_dcgm_exporter_release,
    is_dra_driver_release,
    is_dra_gpu_node_group,
    is_gpu_node_group,
    is_gpu_operator_release,
    named,
    operator_exporter_on,
    plugin_outage_accepted,
    written_group_name,
)
from .quoting import listed, shown

# dcgm-exporter's DRA mode reads resource.k8s.io/v1 ResourceSlices from chart 4.8.3 (image 4.6.0-4.8.3) on;
# earlier charts watch only v1beta1 (NVIDIA/dcgm-exporter#590).
MINIMUM_DCGM_EXPORTER_VERSION = (4, 8, 3)
# Where the program pulls each chart when no repository key names a mirror: the hosts of its upstream defaults
# (components/dra_constants.py, components/queue_model.py KUEUE_REPOSITORY; tests/test_architecture.py ties them).
UPSTREAM_CHART_HOSTS = frozenset(
    {"registry.k8s.io", "helm.ngc.nvidia.com", "nvidia.github.io", "prometheus-community.github.io"}
)
KUEUE_UPSTREAM = "oci://registry.k8s.io/kueue/charts"
KUEUE_IMAGE = "registry.k8s.io/kueue/kueue"
# The stack setting that moves each chart the program installs to a mirror: a key of nebius-dra, or a key and the
# field inside it (components/config/repositories.py release_repositories; tests/test_architecture.py ties them).
CHART_REPOSITORY_SETTINGS: Mapping[str, tuple[str, ...]] = {
    DRA_DRIVER_CHARTS[0]: ("draDriverRepository",),
    DRA_DRIVER_CHARTS[1]: ("draDriverRepository",),
    GPU_OPERATOR_CHART: ("gpuOperatorRepository",),
    NETWORK_OPERATOR_CHART: ("networkOperatorRepository",),
    DCGM_EXPORTER_CHART: ("dcgmExporterRepository",),
    KUBE_PROMETHEUS_STACK_CHART: ("kubePrometheusStackRepository",),
    KUEUE_CHART: ("queues", "repository"),
}
_EXACT_CHART_VERSION = re.compile(r"^v?\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?$")


def check_dra_driver_release(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    if not is_dra_driver_release(resource):
        return []
    problems = []
    if field_at(resource.props, "values", "gpuResourcesEnabledOverride") is not True:
        problems.append(
            f"{named(resource)} (chart {shown(chart_name(resource.props))}) does not set values.gpuResourcesEnabledOverride: true, "
            "so the chart refuses to serve GPUs through DRA. Set it to true in the release's values: on DRA node groups "
            "Nebius turns the legacy device plugin off, so the driver is the only one managing the GPUs."
        )
    version = field_at(resource.props, "version")
    if not isinstance(version, str) or not _EXACT_CHART_VERSION.match(version):
        given = f'version "{shown(version)}"' if version else "no chart version"
        problems.append(
            f"{named(resource)} has {given}, so each `pulumi up` may install a different driver release, and 0.4.x "
            "cannot be downgraded. Pin an exact chart version (for example 25.12.0 or 0.4.1) in the release's version."
        )
    namespace = field_at(resource.props, "namespace")
    if not namespace or namespace == "default":
        given = (
            'namespace "default"' if namespace else "no namespace, which puts it in the provider's default namespace"
        )
        problems.append(
            f"{named(resource)} is installed with {given}; the chart refuses the default namespace. "
            "Install it into its own namespace, for example nvidia-dra-driver-gpu."
        )
    return problems


def check_single_dra_driver_release(
    resources: Sequence[PlannedResource], config: Mapping[str, Any]
) -> list[tuple[str | None, str]]:
    dra_groups = [r.name for r in resources if is_dra_gpu_node_group(r)]
    releases = [r for r in resources if is_dra_driver_release(r)]
    if not dra_groups or len(releases) == 1:
        return []
    if not releases:
        return [
            (
                None,
                f"The stack has DRA GPU node groups ({listed(dra_groups)}) but no NVIDIA DRA driver release "
                f"(chart {' or '.join(DRA_DRIVER_CHARTS)}): Nebius does not install it, so no GPU is published to "
                "DRA and every GPU claim stays unallocated. Add one helm.v3.Release of the driver.",
            )
        ]
    names = ", ".join(named(r) for r in releases[:10]) + (
        f" and {len(releases) - 10} more" if len(releases) > 10 else ""
    )
    return [
        (
            release.urn,
            f"{named(release)} is one of {len(releases)} NVIDIA DRA driver releases ({names}): two drivers publish and "
            "prepare the same GPUs under one driver name. Keep exactly one release (and do not also let the GPU "
            "Operator install the driver).",
        )
        for release in releases
    ]


def check_driver_root_serves_every_group(
    resources: Sequence[PlannedResource], config: Mapping[str, Any]
) -> list[tuple[str | None, str]]:
    releases = [r for r in resources if is_dra_driver_release(r)]
    if len(releases) != 1:
        return []
    # The chart's own default is nvidiaDriverRoot: "/" (k8s-dra-driver-gpu deployments/helm values.yaml).
    root = field_at(releases[0].props, "values", "nvidiaDriverRoot") or PRESET_DRIVER_ROOT
    accepted = plugin_outage_accepted(resources)
    shown_root = shown(root)
    stranded = [
        group
        for group in resources
        if is_dra_gpu_node_group(group)
        and group_driver_root(group.props) != root
        and written_group_name(group) not in accepted
    ]
    return [
        (
            group.urn,
            f"{named(group)} (group {shown(written_group_name(group))}) has its GPU driver under "
            f"{group_driver_root(group.props)}, but the DRA driver's kubelet plugin reads it from nvidiaDriverRoot "
            f"{shown_root} on every node "
            "(docs/dra-driver.md: a root serves only the nodes of the mode whose root you choose): the plugin does not "
            "work on its nodes and its GPUs can never be claimed. Give every GPU group the same driver mode, or accept "
            f"the outage with nebius-dra:draPluginOutageAccepted: [{shown(written_group_name(group))}] until it is recreated.",
        )
        for group in stranded
    ]


def check_outage_accepted_only_where_stranded(
    resources: Sequence[PlannedResource], config: Mapping[str, Any]
) -> list[tuple[str | None, str]]:
    """A group named in draPluginOutageAccepted whose driver is at the DRA driver's root has no outage to accept; the
    standing acceptance would let a later driver-mode change of the group through without the mandatory finding."""
    releases = [r for r in resources if is_dra_driver_release(r)]
    if len(releases) != 1:
        return []
    root = field_at(releases[0].props, "values", "nvidiaDriverRoot") or PRESET_DRIVER_ROOT
    accepted = plugin_outage_accepted(resources)
    return [
        (
            group.urn,
            f"nebius-dra:draPluginOutageAccepted names {shown(written_group_name(group))}, but {named(group)} has its "
            f"GPU driver under {shown(root)}, the DRA driver's nvidiaDriverRoot: there is no plugin outage to accept, and the "
            "acceptance left standing would let a later driver-mode change of the group through silently. Remove "
            "the group from draPluginOutageAccepted.",
        )
        for group in resources
        if is_dra_gpu_node_group(group)
        and written_group_name(group) in accepted
        and group_driver_root(group.props) == root
    ]


def check_gpu_operator_device_plugin(
    resources: Sequence[PlannedResource], config: Mapping[str, Any]
) -> list[tuple[str | None, str]]:
    if not any(is_dra_gpu_node_group(r) for r in resources):
        return []
    return [
        (
            release.urn,
            f"{named(release)} (GPU Operator) does not set values.devicePlugin.enabled: false on a stack with DRA GPU "
            f"node groups; the Operator's default starts the legacy device plugin, which then manages the same GPUs as "
            "the DRA driver. Set devicePlugin.enabled to false (and cdi.enabled to true) in the release's values.",
        )
        for release in resources
        if is_gpu_operator_release(release)
        and field_at(release.props, "values", "devicePlugin", "enabled") is not False
    ]


def check_gpu_metrics_present(
    resources: Sequence[PlannedResource], config: Mapping[str, Any]
) -> list[tuple[str | None, str]]:
    # Groups of an existing cluster (existing-cluster mode) need their metrics as much as the ones the stack creates.
    gpu_groups = [r.name for r in resources if is_gpu_node_group(r) or r.type == EXISTING_GPU_GROUP_TYPE]
    if not gpu_groups or any(is_dcgm_exporter_release(r) or operator_exporter_on(r) for r in resources):
        return []
    return [
        (
            None,
            f"The stack has GPU node groups ({listed(gpu_groups)}) but no GPU metrics: no {DCGM_EXPORTER_CHART} "
            "release, and on DRA node groups Nebius turns off the device-plugin app that brought its exporter. Nobody "
            "sees GPU utilisation, memory or errors, let alone per pod. Install NVIDIA's DCGM exporter with "
            "kubernetesDRA.enabled: true (in this project: nebius-dra:gpuMetrics: true).",
        )
    ]


def _version_below(version: Any, minimum: tuple[int, ...]) -> bool:
    if not isinstance(version, str) or not _EXACT_CHART_VERSION.match(version):
        return True
    return tuple(int(part) for part in re.findall(r"\d+", version)[:3]) < minimum


def check_gpu_metrics_dra_attribution(
    resources: Sequence[PlannedResource], config: Mapping[str, Any]
) -> list[tuple[str | None, str]]:
    if not any(is_dra_gpu_node_group(r) for r in resources):
        return []
    minimum = ".".join(map(str, MINIMUM_DCGM_EXPORTER_VERSION))
    violations: list[tuple[str | None, str]] = []
    for release in resources:
        if is_dcgm_exporter_release(release):
            if field_at(release.props, "values", "kubernetesDRA", "enabled") is not True:
                violations.append(
                    (
                        release.urn,
                        f"{named(release)} ({DCGM_EXPORTER_CHART}) does not set values.kubernetesDRA.enabled: true on a "
                        "stack with DRA GPU node groups: the exporter then reads only the device plugin's pod resources, "
                        "which hold no DRA-allocated GPU, so no series names the pod or ResourceClaim using a GPU. Set "
                        "kubernetesDRA.enabled to true (in this project the stack sets it: take it out of "
                        "nebius-dra:gpuMetricsValues).",
                    )
                )
            if _version_below(field_at(release.props, "version"), MINIMUM_DCGM_EXPORTER_VERSION):
                violations.append(
                    (
                        release.urn,
                        f'{named(release)} ({DCGM_EXPORTER_CHART}) has version "{shown(field_at(release.props, "version"))}", '
                        f"not an exact {minimum} or later: earlier charts' DRA mode watches only resource.k8s.io/v1beta1 "
                        "ResourceSlices (NVIDIA/dcgm-exporter#590), so GPUs the DRA driver publishes in v1 are never "
                        f"attributed. Pin {minimum} or later (in this project: nebius-dra:dcgmExporterVersion).",
                    )
                )
        elif operator_exporter_on(release):
            violations.append(
                (
                    release.urn,
                    f"{named(release)} (GPU Operator) leaves values.dcgmExporter.enabled on, on a stack with DRA GPU "
                    "node groups: the Operator's exporter runs the device plugin's pod-resources path without DRA mode, "
                    "so it cannot tell which pod holds a GPU, and beside a DRA-mode exporter it scrapes every GPU "
                    f"twice. Set dcgmExporter.enabled to false and run one {DCGM_EXPORTER_CHART} release with "
                    "kubernetesDRA.enabled: true (in this project: nebius-dra:gpuMetrics).",
                )
            )
    return violations


def chart_host(release: PlannedResource) -> str | None:
    """The host a release's chart is pulled from: its classic repository's, or an OCI chart reference's."""
    repository = field_at(release.props, "repositoryOpts", "repo")
    chart = field_at(release.props, "chart")
    url = repository if isinstance(repository, str) and repository else chart
    if not isinstance(url, str) or "://" not in url:
        return None
    try:
        return (urlsplit(url).hostname or "").lower() or None
    except ValueError:
        return None


def repository_setting(chart: str) -> str | None:
    """The stack setting that moves `chart` to a mirror, as a user names it; None for a chart the program does not
    install."""
    setting = CHART_REPOSITORY_SETTINGS.get(chart)
    return f"nebius-dra:{' '.join(setting)}" if setting else None


def _upstream_advice(release: PlannedResource) -> str:
    chart = chart_name(release.props)
    setting = repository_setting(chart)
    if chart == KUEUE_CHART:
        return (
            f"Set {setting} to the mirror's copy of {KUEUE_UPSTREAM}; the controller image {KUEUE_IMAGE} is pulled "
            "by the nodes, so their registry mirror must serve it too."
        )
    if setting:
        return f"Set {setting} to the mirror's copy of the chart."
    return "Point the release's repositoryOpts.repo (or its oci:// chart reference) at the mirror's copy of the chart."


def check_charts_mirrored(
    resources: Sequence[PlannedResource], config: Mapping[str, Any]
) -> list[tuple[str | None, str]]:
    """A chart from a mirror says the cluster pulls through one (air-gapped or proxied); a release whose chart comes
    from its upstream then is the pull that fails, at `pulumi up`, after the mirrored releases were installed."""
    releases = [r for r in resources if r.type in HELM_RELEASE_TYPES]
    hosts = {release.urn: chart_host(release) for release in releases}
    mirrored = sorted(
        {
            f"{shown(chart_name(r.props))} from {shown(host)}"
            for r in releases
            if (host := hosts[r.urn]) and host not in UPSTREAM_CHART_HOSTS
        }
    )
    if not mirrored:
        return []
    mirrors = ", ".join(mirrored[:10]) + (f" and {len(mirrored) - 10} more" if len(mirrored) > 10 else "")
    return [
        (
            release.urn,
            f"{named(release)} (chart {shown(chart_name(release.props))}) pulls its chart from "
            f"{shown(hosts[release.urn])}, its upstream, while the stack's other charts come from a mirror "
            f"({mirrors}): a cluster that pulls through the mirror cannot reach it. {_upstream_advice(release)}",
        )
        for release in releases
        if hosts[release.urn] in UPSTREAM_CHART_HOSTS
    ]
