"""The parts of a node group template that CPU and GPU groups share."""

from __future__ import annotations

from typing import Mapping, Optional

import pulumi_nebius as nebius

BOOT_DISK_TYPE = "NETWORK_SSD"


def node_template(
    platform: str,
    preset: str,
    boot_disk_gib: int,
    labels: Mapping[str, str],
    service_account_id: Optional[str],
    **extra: object,
) -> nebius.Mk8sV1NodeGroupTemplateArgs:
    return nebius.Mk8sV1NodeGroupTemplateArgs(
        resources=nebius.Mk8sV1NodeGroupTemplateResourcesArgs(platform=platform, preset=preset),
        boot_disk=nebius.Mk8sV1NodeGroupTemplateBootDiskArgs(size_gibibytes=boot_disk_gib, type=BOOT_DISK_TYPE),
        metadata=nebius.Mk8sV1NodeGroupTemplateMetadataArgs(labels=dict(labels)),
        service_account_id=service_account_id,
        **extra,  # type: ignore[arg-type]
    )
