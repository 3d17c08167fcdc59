"""Typed Nebius node-group arguments: the template CPU and GPU groups share, GPU settings, taints, scaling, versions,
and how a group is run: roll-out strategy, auto-repair and capacity (on-demand, reserved, spot)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

import pulumi

from components.labels import gpu_node_labels, system_node_labels
from components.model import (
    AutoRepairCondition,
    Capacity,
    GpuNodeGroupConfig,
    NodeAmount,
    RolloutStrategy,
    SystemNodeGroupConfig,
    Taint,
)
from components.nebius_sdk import nebius

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
    group: GpuNodeGroupConfig,
    gpu_cluster_id: str | pulumi.Output[str] | None,
    service_account_id: str | None,
    spot_pricing_policy_id: str | pulumi.Output[str] | None = None,
) -> nebius.Mk8sV1NodeGroupTemplateArgs:
    """`spot_pricing_policy_id` is the pricing policy of a spot group with a maximum price (see `pricing_policy_args`)."""
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
        **capacity_template_fields(group.capacity, spot_pricing_policy_id),
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


# Node condition status in Kubernetes spelling -> the enum `auto_repair.conditions[].status` takes (pulumi-nebius
# 0.6.73, Mk8sV1NodeGroupAutoRepairConditionArgs.status: "Possible values: CONDITION_STATUS_UNSPECIFIED, TRUE,
# FALSE, UNKNOWN").
NEBIUS_CONDITION_STATUSES = {"True": "TRUE", "False": "FALSE", "Unknown": "UNKNOWN"}


# Forward references, so importing this module does not import pulumi_nebius (components/nebius_sdk.py).
AmountArgs = TypeVar(
    "AmountArgs", "nebius.Mk8sV1NodeGroupStrategyMaxSurgeArgs", "nebius.Mk8sV1NodeGroupStrategyMaxUnavailableArgs"
)


def _amount_args(amount: NodeAmount, args_class: Callable[..., AmountArgs]) -> AmountArgs:
    """`{count}` or `{percent}`: the two "cannot be set alongside" each other."""
    if amount.percent is not None:
        return args_class(percent=amount.percent)
    return args_class(count=amount.count or 0)


def strategy_args(strategy: RolloutStrategy) -> nebius.Mk8sV1NodeGroupStrategyArgs:
    """Every field set, so Nebius's changing defaults (Q3 2026) never decide how a group rolls out."""
    return nebius.Mk8sV1NodeGroupStrategyArgs(
        max_surge=_amount_args(strategy.max_surge, nebius.Mk8sV1NodeGroupStrategyMaxSurgeArgs),
        max_unavailable=_amount_args(strategy.max_unavailable, nebius.Mk8sV1NodeGroupStrategyMaxUnavailableArgs),
        drain_timeout=strategy.drain_timeout,
    )


def auto_repair_args(conditions: tuple[AutoRepairCondition, ...]) -> nebius.Mk8sV1NodeGroupAutoRepairArgs | None:
    """None when nothing is tuned: Nebius's default rules apply (docs.nebius.com/kubernetes/maintenance/health-checks)."""
    if not conditions:
        return None
    return nebius.Mk8sV1NodeGroupAutoRepairArgs(
        conditions=[
            nebius.Mk8sV1NodeGroupAutoRepairConditionArgs(
                type=condition.type,
                status=NEBIUS_CONDITION_STATUSES[condition.status],
                disabled=True if condition.disabled else None,
                timeout=None if condition.disabled else condition.timeout,
            )
            for condition in conditions
        ]
    )


def capacity_template_fields(
    capacity: Capacity, spot_pricing_policy_id: str | pulumi.Output[str] | None
) -> dict[str, object]:
    """The template fields that say where the VMs come from; nothing at all for plain on-demand.

    On-demand sends no field, so an existing group's template (and its nodes) stay as they are;
    Nebius's default reservation policy AUTO then applies. Reserved sends `reservation_policy`
    (capacity block groups in the given order). Spot sends `preemptible` and either
    `follows_spot_price` or `spot_pricing_policy` (pulumi-nebius 0.6.73: the two, and `on_demand`,
    cannot be set alongside each other).
    """
    if capacity.spot:
        if capacity.max_price_per_gpu_hour is not None:
            if spot_pricing_policy_id is None:
                raise ValueError("a spot group with a maximum price needs its pricing policy's ID")
            pricing: dict[str, object] = {
                "spot_pricing_policy": nebius.Mk8sV1NodeGroupTemplateSpotPricingPolicyArgs(id=spot_pricing_policy_id)
            }
        else:
            pricing = {"follows_spot_price": nebius.Mk8sV1NodeGroupTemplateFollowsSpotPriceArgs()}
        return {"preemptible": nebius.Mk8sV1NodeGroupTemplatePreemptibleArgs(), **pricing}
    if capacity.reservation_policy is not None:
        return {
            "reservation_policy": nebius.Mk8sV1NodeGroupTemplateReservationPolicyArgs(
                policy=capacity.reservation_policy,
                reservation_ids=list(capacity.capacity_block_group_ids) or None,
            )
        }
    return {}


def pricing_policy_args(group: GpuNodeGroupConfig, project_id: str, name: str) -> nebius.BillingV1PricingPolicyArgs:
    """The maximum price of a spot group: a Nebius pricing policy for the group's platform in the project.

    pulumi-nebius 0.6.73, BillingV1PricingPolicyPricingMaxPriceV1Args.max_price: "Per-GPU hourly limit in
    USD, decimal string 3 digits precision ... Mutable only while status.running_vm_count is 0".
    """
    if group.capacity.max_price_per_gpu_hour is None:
        raise ValueError(f"group {group.name} has no maximum price")
    return nebius.BillingV1PricingPolicyArgs(
        name=name,
        parent_id=project_id,
        compute_instance_spec=nebius.BillingV1PricingPolicyComputeInstanceSpecArgs(
            v1=nebius.BillingV1PricingPolicyComputeInstanceSpecV1Args(platform=group.platform)
        ),
        pricing=nebius.BillingV1PricingPolicyPricingArgs(
            max_price_v1=nebius.BillingV1PricingPolicyPricingMaxPriceV1Args(
                max_price=group.capacity.max_price_per_gpu_hour
            )
        ),
    )


def described_gpu_group(group: GpuNodeGroupConfig) -> dict[str, object]:
    """What an existing cluster's GPU group must look like for the stack's driver, claims and samples to work there.

    In existing-cluster mode the stack creates no node group; this description is recorded in the state
    (and read by the policy pack) instead, so a preview shows what the nodes are expected to carry.
    """
    return {
        "name": group.name,
        "platform": group.platform,
        "preset": group.preset,
        "infiniband": group.infiniband,
        "gpuSettings": {"dra": True},
        "labels": gpu_node_labels(group.name, group.preinstalled_driver, group.labels),
        "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in group.taints],
    }
