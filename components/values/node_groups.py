"""Typed Nebius node-group arguments: the template CPU and GPU groups share, GPU settings and scaling."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_nebius as nebius

from components.labels import gpu_node_labels, system_node_labels
from components.model import GpuNodeGroupConfig, SystemNodeGroupConfig

BOOT_DISK_TYPE = "NETWORK_SSD"


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
        taints=[
            nebius.Mk8sV1NodeGroupTemplateTaintArgs(key=t.key, value=t.value, effect=t.effect) for t in group.taints
        ]
        or None,
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
