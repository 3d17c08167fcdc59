"""Every rule of the pack, in the order the CLI and the offline plan report them, with its name, level and settings."""

from __future__ import annotations

from pulumi_policy import (
    PolicyConfigSchema,
)

from .claim_rules import (
    check_dra_api_version,
    check_network_claims_need_infiniband,
    check_network_device_requested_once,
    check_pcie_root_constraint_per_pair,
    check_workload_images_pinned,
)
from .cluster_rules import DEFAULT_MINIMUM_VERSION, MINIMUM_VERSION, check_cluster_version, check_dra_features_on_minor
from .cost_rules import MAX_HOURLY_USD, MIN_HOURLY_USD, check_max_hourly_cost, check_spot_ceiling_below_spot_price
from .framework import ADVISORY, MANDATORY, ResourceRule, StackRule
from .identity_rules import IDENTITY_RULES
from .node_group_rules import (
    CHECKED_PRESET_FIELDS,
    check_dra_autoscaling_minimum,
    check_gpu_drivers_preset_known,
    check_gpu_node_group_dra,
    check_gpu_node_group_strategy,
    check_infiniband_autoscaling,
    check_reserved_strict_surge,
    check_spot_infiniband,
)
from .planned import IB_DEVICE_CLASS, RDMA_DEVICE_CLASS
from .queue_rules import QUEUE_CHECKS
from .rdma_pod_rules import rdma_workload_violations
from .release_rules import (
    check_charts_mirrored,
    check_dra_driver_release,
    check_driver_root_serves_every_group,
    check_gpu_metrics_dra_attribution,
    check_gpu_metrics_present,
    check_gpu_operator_device_plugin,
    check_outage_accepted_only_where_stranded,
    check_single_dra_driver_release,
)

RULES: tuple[ResourceRule | StackRule, ...] = (
    ResourceRule(
        "mk8s-cluster-version",
        "The mk8s cluster runs a Kubernetes version that serves DRA as resource.k8s.io/v1 (1.34 or later).",
        MANDATORY,
        check_cluster_version,
        PolicyConfigSchema(
            properties={
                "minimumVersion": {
                    "type": "string",
                    "pattern": MINIMUM_VERSION.pattern,
                    "default": DEFAULT_MINIMUM_VERSION,
                    "description": "Lowest accepted MAJOR.MINOR of controlPlane.version.",
                },
            }
        ),
    ),
    ResourceRule(
        "gpu-node-group-dra-enabled",
        "Every GPU node group sets gpuSettings.dra = true.",
        MANDATORY,
        check_gpu_node_group_dra,
    ),
    ResourceRule(
        "dra-driver-release-settings",
        "The NVIDIA DRA driver release sets gpuResourcesEnabledOverride, pins its chart version and stays out of the default namespace.",
        MANDATORY,
        check_dra_driver_release,
    ),
    ResourceRule(
        "dra-api-version-v1",
        "ResourceClaimTemplates, ResourceClaims and DeviceClasses use resource.k8s.io/v1 and its request shape.",
        MANDATORY,
        check_dra_api_version,
    ),
    ResourceRule(
        "network-device-requested-once",
        f"A claim does not request both {RDMA_DEVICE_CLASS} and {IB_DEVICE_CLASS} for what is one NIC.",
        ADVISORY,
        check_network_device_requested_once,
    ),
    ResourceRule(
        "pcie-root-constraint-per-pair",
        "A claim's resource.kubernetes.io/pcieRoot constraint covers at most one GPU and one NIC: more holds only on "
        "nodes whose PCIe roots each hold that many devices.",
        ADVISORY,
        check_pcie_root_constraint_per_pair,
    ),
    ResourceRule(
        "dra-autoscaling-min-nodes",
        "Autoscaled DRA GPU node groups keep minNodeCount >= 1.",
        MANDATORY,
        check_dra_autoscaling_minimum,
    ),
    ResourceRule(
        "infiniband-autoscaling",
        "InfiniBand DRA GPU node groups use a fixed size: the autoscaler was seen never adding InfiniBand DRA nodes.",
        ADVISORY,
        check_infiniband_autoscaling,
    ),
    ResourceRule(
        "gpu-drivers-preset-known",
        "A GPU node group's driversPreset is one Nebius lists for its platform and Kubernetes minor in the dated table, "
        "or one the team checked (checkedPresets).",
        ADVISORY,
        check_gpu_drivers_preset_known,
        PolicyConfigSchema(
            properties={
                "checkedPresets": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            key: {"type": "string", "pattern": pattern.pattern}
                            for key, pattern in CHECKED_PRESET_FIELDS.items()
                        },
                        "required": list(CHECKED_PRESET_FIELDS),
                        "additionalProperties": False,
                    },
                    "description": "Presets confirmed with `nebius mk8s node-group get-compatibility-matrix` that "
                    "the dated table does not list, each with its Kubernetes MAJOR.MINOR, platform and the day "
                    "(YYYY-MM-DD) it was checked; they pass like listed ones.",
                },
            }
        ),
    ),
    ResourceRule(
        "gpu-node-group-strategy",
        "Every GPU node group sets its roll-out strategy (maxSurge, maxUnavailable, drainTimeout) instead of Nebius's changing defaults.",
        MANDATORY,
        check_gpu_node_group_strategy,
    ),
    ResourceRule(
        "reserved-strict-no-surge",
        "A GPU node group on reserved capacity with reservationPolicy STRICT does not surge.",
        MANDATORY,
        check_reserved_strict_surge,
    ),
    ResourceRule(
        "spot-infiniband",
        "Preemptible (spot) GPU node groups stay out of InfiniBand GPU clusters, where a preemption restarts the whole job.",
        ADVISORY,
        check_spot_infiniband,
    ),
    ResourceRule(
        "workload-images-pinned",
        "Sample workload images are pinned to a release tag (not latest, main, nightly or another that moves), or a digest.",
        ADVISORY,
        check_workload_images_pinned,
    ),
    StackRule(
        "single-dra-driver-release",
        "A stack with DRA GPU node groups has exactly one NVIDIA DRA driver release.",
        MANDATORY,
        check_single_dra_driver_release,
    ),
    StackRule(
        "dra-driver-root-serves-every-group",
        "Every DRA GPU group's driver lives at the DRA driver's nvidiaDriverRoot (/ for a drivers preset, "
        "/run/nvidia/driver for the GPU Operator), unless draPluginOutageAccepted names the group.",
        MANDATORY,
        check_driver_root_serves_every_group,
    ),
    StackRule(
        "outage-accepted-only-where-stranded",
        "draPluginOutageAccepted names only groups whose driver is not at the DRA driver's nvidiaDriverRoot.",
        ADVISORY,
        check_outage_accepted_only_where_stranded,
    ),
    StackRule(
        "network-claims-need-infiniband",
        "Claims for RDMA or InfiniBand NICs exist only on a stack with an InfiniBand DRA node group.",
        MANDATORY,
        check_network_claims_need_infiniband,
    ),
    StackRule(
        "gpu-metrics-present",
        "A stack with GPU node groups exports GPU metrics (a dcgm-exporter release).",
        ADVISORY,
        check_gpu_metrics_present,
    ),
    StackRule(
        "gpu-metrics-dra-attribution",
        "GPU metrics on DRA node groups come from an exporter in DRA mode (dcgm-exporter 4.8.3 or later with "
        "kubernetesDRA.enabled), never from the GPU Operator's exporter on the device plugin's path.",
        MANDATORY,
        check_gpu_metrics_dra_attribution,
    ),
    StackRule(
        "max-hourly-cost",
        "The stack's GPU and CPU nodes at their largest size cost at most maxHourlyUsd per hour (set it in the "
        "policy config; without it the policy checks nothing).",
        ADVISORY,
        check_max_hourly_cost,
        PolicyConfigSchema(
            properties={
                "maxHourlyUsd": {
                    "type": "number",
                    "minimum": MIN_HOURLY_USD,
                    "maximum": MAX_HOURLY_USD,
                    "description": "Most the stack's nodes may cost per hour, in US dollars, at fixed counts and "
                    "autoscaling maxima, priced from the program's cost estimate.",
                },
            }
        ),
        needs="maxHourlyUsd",
    ),
    StackRule(
        "spot-ceiling-below-spot-price",
        "A spot group's maxPricePerGpuHour is at or above the price table's spot price (below it, no node may be placed).",
        ADVISORY,
        check_spot_ceiling_below_spot_price,
    ),
    StackRule(
        "dra-features-on-cluster-minor",
        "DRA fields, DeviceClass fields, nvidia.com/gpu requests and DRA driver gates are used only where the cluster's "
        "Kubernetes minor turns their feature gate on by default (the table policies/dra_minors.json).",
        MANDATORY,
        check_dra_features_on_minor,
    ),
    StackRule(
        "gpu-operator-device-plugin-disabled",
        "A GPU Operator release on a stack with DRA GPU node groups sets devicePlugin.enabled = false.",
        MANDATORY,
        check_gpu_operator_device_plugin,
    ),
    StackRule(
        "charts-mirrored",
        "Where one of the stack's charts comes from a mirror, every release's chart does: each one pulled from its "
        "upstream is named with the setting that moves it.",
        ADVISORY,
        check_charts_mirrored,
    ),
    *(StackRule(*rule) for rule in IDENTITY_RULES),
    StackRule(
        "rdma-pod-memlock",
        "Containers handed an InfiniBand/RDMA claim add the IPC_LOCK capability RDMA needs to pin memory "
        "(policies/dra_guardrails/rdma_pod_rules.py).",
        MANDATORY,
        lambda resources, _config: rdma_workload_violations([(r.urn, r.type, r.name, r.props) for r in resources]),
    ),
    *(
        StackRule(name, text, ADVISORY if level == "advisory" else MANDATORY, check)
        for name, text, level, check in QUEUE_CHECKS
    ),
)

POLICIES = [rule.policy() for rule in RULES]
