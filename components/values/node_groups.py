"""Typed Nebius node-group arguments: the template CPU and GPU groups share, GPU settings, taints, scaling, versions."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import pulumi
import pulumi_nebius as nebius

from components.labels import gpu_node_labels, system_node_labels
from components.model import GpuNodeGroupConfig, SystemNodeGroupConfig, Taint

BOOT_DISK_TYPE = "NETWORK_SSD"

# Kubernetes taint effect -> the Nebius API enum `template.taints[].effect` takes (pulumi-nebius
# 0.6.73, Mk8sV1NodeGroupTemplateTaintArgs.effect: "Possible values: EFFECT_UNSPECIFIED, NO_EXECUTE,
# NO_SCHEDULE, PREFER_NO_SCHEDULE"). Only the Nebius field takes the enum: tolerations built from
# the same taints (components.labels.tolerations_for) keep the Kubernetes spelling.
NEBIUS_TAINT_EFFECTS = {
    "NoSchedule": "NO_SCHEDULE",
    "PreferNoSchedule": "PREFER_NO_SCHEDULE",
    "NoExecute": "NO_EXECUTE",
}

# MAJOR.MINOR, optionally with the node infrastructure version Nebius appends for node groups.
_KUBERNETES_VERSION = re.compile(r"^(\d+\.\d+)(-nebius-node\.\d+)?$")


def _split_version(version: str) -> tuple[str, str]:
    match = _KUBERNETES_VERSION.match(version)
    if not match:
        raise ValueError(f"kubernetes version {version!r} is neither MAJOR.MINOR nor MAJOR.MINOR-nebius-node.N")
    return match.group(1), version


def control_plane_version(version: str) -> str:
    """What `Mk8sV1Cluster.control_plane.version` takes: MAJOR.MINOR only.

    pulumi-nebius 0.6.73, `Mk8sV1ClusterControlPlaneArgs.version` (and the Terraform provider's
    docs for `nebius_mk8s_v1_cluster`, control_plane.version): "Desired Kubernetes version of the
    cluster. ... For now only acceptable format is `<major>.<minor>` like "1.31"." The control
    plane's own build is reported, never requested, as `status.control_plane.version`
    (`<major>.<minor>.<patch>-nebius-cp.<infra_version>`), so a `-nebius-node.N` suffix is dropped.
    """
    return _split_version(version)[0]


def node_group_version(version: str) -> str:
    """What `Mk8sV1NodeGroup.version` takes: MAJOR.MINOR, or MAJOR.MINOR-nebius-node.N to pin the node build.

    pulumi-nebius 0.6.73, `Mk8sV1NodeGroupArgs.version` (and the Terraform provider's docs for
    `nebius_mk8s_v1_node_group`, version): "Version is desired Kubernetes version of the cluster.
    For now only acceptable format is `<major>.<minor>` like "1.31". ... By default the cluster
    control plane `<major>.<minor>` version will be used." The node group's `status.version` has
    the format `<major>.<minor>.<patch>-nebius-node.<infra_version>`, where `<infra_version>` is
    the node infrastructure and configuration version; Nebius's own Terraform
    (nebius/nebius-solutions-library, soperator/modules/k8s/k8s_ng_workers_v2.tf) requests it as
    `version = "${var.k8s_version}-nebius-node.${var.node_group_version}"`, and its k8s-training
    variables accept "1.36 or 1.36-nebius-node.2; patch versions such as 1.36.3 are not accepted".
    The field is always set, so a version change in the stack upgrades the node groups too
    (after the cluster, which they depend on), instead of leaving them on the version they were
    created with.
    """
    return _split_version(version)[1]


def nebius_taints(taints: Iterable[Taint]) -> list[nebius.Mk8sV1NodeGroupTemplateTaintArgs] | None:
    """Taints as the Nebius API takes them: the effect as its upper-case enum, never Kubernetes' spelling."""
    converted = []
    for taint in taints:
        effect = NEBIUS_TAINT_EFFECTS.get(taint.effect)
        if effect is None:
            raise ValueError(
                f"taint {taint.key} has effect {taint.effect!r}; Kubernetes effects are {', '.join(NEBIUS_TAINT_EFFECTS)}"
            )
        converted.append(nebius.Mk8sV1NodeGroupTemplateTaintArgs(key=taint.key, value=taint.value, effect=effect))
    return converted or None


def node_template(
    platform: str,
    preset: str,
    boot_disk_gib: int,
    labels: Mapping[str, str],
    service_account_id: str | None,
    **extra: object,
) -> nebius.Mk8sV1NodeGroupTemplateArgs:
    return nebius.Mk8sV1NodeGroupTemplateArgs(
        resources=nebius.Mk8sV1NodeGroupTemplateResourcesArgs(platform=platform, preset=preset),
        boot_disk=nebius.Mk8sV1NodeGroupTemplateBootDiskArgs(size_gibibytes=boot_disk_gib, type=BOOT_DISK_TYPE),
        metadata=nebius.Mk8sV1NodeGroupTemplateMetadataArgs(labels=dict(labels)),
        service_account_id=service_account_id,
        **extra,  # type: ignore[arg-type]
    )


def system_node_template(
    settings: SystemNodeGroupConfig, service_account_id: str | None
) -> nebius.Mk8sV1NodeGroupTemplateArgs:
    return node_template(
        settings.platform, settings.preset, settings.boot_disk_gib, system_node_labels(), service_account_id
    )


def gpu_settings(group: GpuNodeGroupConfig) -> nebius.Mk8sV1NodeGroupTemplateGpuSettingsArgs:
    return nebius.Mk8sV1NodeGroupTemplateGpuSettingsArgs(dra=True, drivers_preset=group.drivers_preset)


def gpu_node_template(
    group: GpuNodeGroupConfig, gpu_cluster_id: pulumi.Input[str] | None, service_account_id: str | None
) -> nebius.Mk8sV1NodeGroupTemplateArgs:
    fabric = nebius.Mk8sV1NodeGroupTemplateGpuClusterArgs(id=gpu_cluster_id) if gpu_cluster_id is not None else None
    return node_template(
        group.platform,
        group.preset,
        group.boot_disk_gib,
        gpu_node_labels(group.name, group.preinstalled_driver, group.labels),
        service_account_id,
        gpu_settings=gpu_settings(group),
        gpu_cluster=fabric,
        taints=nebius_taints(group.taints),
    )


def scaling(group: GpuNodeGroupConfig) -> dict[str, int | nebius.Mk8sV1NodeGroupAutoscalingArgs | None]:
    if group.autoscaling is not None:
        return {
            "autoscaling": nebius.Mk8sV1NodeGroupAutoscalingArgs(
                min_node_count=group.autoscaling.min_nodes,
                max_node_count=group.autoscaling.max_nodes,
            )
        }
    return {"fixed_node_count": group.fixed_node_count}
