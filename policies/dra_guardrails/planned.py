"""What the pack reads of a planned resource: the types it knows, its copies of the program's names, predicates.

This package imports nothing from the program: the Pulumi CLI runs the pack from inside
`policies/`, where the project's packages are not importable. So it keeps its own copies of
type tokens, chart names and DeviceClasses; tests/test_architecture.py ties each to the program's value."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .quoting import shown

CLUSTER_TYPE = "nebius:index/mk8sV1Cluster:Mk8sV1Cluster"
NODE_GROUP_TYPE = "nebius:index/mk8sV1NodeGroup:Mk8sV1NodeGroup"
# Existing-cluster mode: a GPU group the stack describes but does not create (components/existing_gpu_node_group.py).
EXISTING_GPU_GROUP_TYPE = "nebius-dra:nodes:ExistingGpuNodeGroup"
HELM_RELEASE_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart")
POD_TYPE = "kubernetes:core/v1:Pod"
# The program registers its cost estimate as this component (components/cost.py); its inputs carry
# each node group's price per node-hour with the price's source and date.
COST_ESTIMATE_TYPE = "nebius-dra:cost:CostEstimate"
# An estimate group's `priceFrom` when its rate came from the stack's overrides, not the price table (the origin
# components/config/prices.py gives nebius-dra:priceOverrides' rates; the document's `priceBasis` names them too).
PRICE_OVERRIDES_ORIGIN = "nebius-dra:priceOverrides"
# The DRA driver component (components/dra_driver.py) records the groups named by nebius-dra:draPluginOutageAccepted.
DRA_DRIVER_COMPONENT_TYPE = "nebius-dra:driver:DraDriver"
PLUGIN_OUTAGE_ACCEPTED = "pluginOutageAccepted"
# Where a GPU node's driver lives: a drivers preset ships it in the image at /, the GPU Operator installs it under
# /run/nvidia/driver (components/dra_constants.py); the DRA kubelet plugin reads it from one root, nvidiaDriverRoot.
PRESET_DRIVER_ROOT = "/"
# Every node carries its group's stack-file name under this label (components/dra_constants.py NODE_GROUP_LABEL).
GROUP_LABEL = "nebius-dra/node-group"
OPERATOR_DRIVER_ROOT = "/run/nvidia/driver"
DRA_DRIVER_CHARTS = ("nvidia-dra-driver-gpu", "dra-driver-nvidia-gpu")
GPU_OPERATOR_CHART = "gpu-operator"
DCGM_EXPORTER_CHART = "dcgm-exporter"
NETWORK_OPERATOR_CHART = "network-operator"
KUBE_PROMETHEUS_STACK_CHART = "kube-prometheus-stack"
KUEUE_CHART = "kueue"
DRA_API_VERSION = "v1"
RDMA_DEVICE_CLASS = "rdma.networking.nebius.ai"
IB_DEVICE_CLASS = "ib.networking.nebius.ai"
NETWORK_DEVICE_CLASSES = (RDMA_DEVICE_CLASS, IB_DEVICE_CLASS)
GPU_DEVICE_CLASSES = ("gpu.nvidia.com", "vfio.gpu.nvidia.com")
PCIE_ROOT_ATTRIBUTE = "resource.kubernetes.io/pcieRoot"
# What each supported Kubernetes minor enables for DRA: the table the program reads too (components/dra_minors.py),
# kept beside the pack because the CLI runs the pack from this directory.
DRA_MINORS: Mapping[str, Any] = json.loads(
    Path(__file__).parents[1].joinpath("dra_minors.json").read_text(encoding="utf-8")
)
# A Pod asking for this extended resource is served by DRA only where DRAExtendedResource is on: both NVIDIA DRA charts
# give the gpu.nvidia.com DeviceClass extendedResourceName nvidia.com/gpu (templates/deviceclass-gpu.yaml of
# nvidia-dra-driver-gpu 25.12.0 and dra-driver-nvidia-gpu 0.4.1), and DRA node groups have no device plugin.
LEGACY_GPU_RESOURCE = "nvidia.com/gpu"

_DRA_OBJECT_TYPE = re.compile(
    r"^kubernetes:resource\.k8s\.io/(?P<version>[^:]+):(?P<kind>ResourceClaimTemplate|ResourceClaim|DeviceClass)(?:Patch)?$"
)
CLUSTER_VERSION = re.compile(r"^(?P<major>[0-9]{1,3})\.(?P<minor>[0-9]{1,3})(?:-nebius-node\.[0-9]{1,6})?\Z")
POD_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


@dataclass(frozen=True)
class PlannedResource:
    """A resource as the engine sees it; `props` uses engine (camelCase) property names."""

    urn: str
    type: str
    name: str
    props: Mapping[str, Any]


def as_json(value: Any) -> str:
    """A config value as it would appear in the JSON document."""
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def field_at(value: Any, *path: str) -> Any:
    """The value at `path`, or None where a level is missing or is not an object."""
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


# The policy SDK's stand-in for a value not known until the update (pulumi_policy/proxy.py, UNKNOWN_STRING_VALUE;
# pulumi's rpc UNKNOWN), as it sits in properties read without the SDK's proxy (the offline plan's inputs).
UNKNOWN_VALUE = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"


class NotANumberError(ValueError):
    """A resource input a rule compares or adds up that is no finite number (a string, null, a boolean, infinity).

    The rule cannot judge it, and judging a stand-in (0 for a count of "3") passes what it never saw: the framework
    reports the message as the rule's violation (framework.py), `urn` naming the resource."""

    def __init__(self, resource: PlannedResource, path: Sequence[str], value: Any) -> None:
        self.urn = resource.urn
        super().__init__(
            f"{named(resource)} has {'.'.join(path)} {shown(as_json(value))}, which is no finite number: this rule "
            "compares it, so it cannot judge the resource; the stack registers a whole number there"
        )


def planned_number(resource: PlannedResource, *path: str, within: Any = None) -> float | None:
    """The finite number at `path` of the resource's inputs (or of `within`, a part of them), as rules compare it;
    None where it is absent or not yet known (UNKNOWN_VALUE), and NotANumberError where it is anything else."""
    parent = field_at(resource.props if within is None else within, *path[:-1])
    if not has_key(parent, path[-1]):
        return None
    value = parent[path[-1]]
    if value == UNKNOWN_VALUE:
        return None
    if not is_finite_number(value):
        raise NotANumberError(resource, path, value)
    return float(value)


def is_finite_number(value: Any) -> bool:
    """A JSON number a rule may compare or add up: no boolean (Python's True is 1), no infinity or NaN (every
    comparison with NaN is false, so a total of NaN passes any limit)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def planned_node_range(resource: PlannedResource) -> tuple[float, float] | None:
    """(fewest, most) nodes of a planned node group: its autoscaling min and max, or its fixedNodeCount as both;
    None while a count is unknown (a preview) or absent, NotANumberError for one of another kind. The program's is
    components.model.NodeRange."""
    if isinstance(field_at(resource.props, "autoscaling"), Mapping):
        low, high = (
            planned_number(resource, "autoscaling", "minNodeCount"),
            planned_number(resource, "autoscaling", "maxNodeCount"),
        )
    else:
        low = high = planned_number(resource, "fixedNodeCount")
    return None if low is None or high is None else (low, high)


def has_key(mapping: Any, key: str) -> bool:
    """Presence without reading the value, which may still be unknown during a preview."""
    return isinstance(mapping, Mapping) and any(existing == key for existing in mapping)


def as_list(value: Any) -> list:
    """A list, also from the policy SDK's proxy of one (a Sequence, not a list); [] for anything else."""
    return list(value) if isinstance(value, Sequence) and not isinstance(value, str) else []


def _kind(resource: PlannedResource) -> str:
    return resource.type.rsplit(":", 1)[-1]


def named(resource: PlannedResource) -> str:
    """The resource's kind and name as a message names it, both `shown`: a name is the program's, or the user's."""
    return f'{shown(_kind(resource))} "{shown(resource.name)}"'


def is_gpu_node_group(resource: PlannedResource) -> bool:
    if resource.type != NODE_GROUP_TYPE:
        return False
    platform = field_at(resource.props, "template", "resources", "platform")
    return isinstance(platform, str) and platform.startswith("gpu-")


def is_dra_gpu_node_group(resource: PlannedResource) -> bool:
    return is_gpu_node_group(resource) and field_at(resource.props, "template", "gpuSettings", "dra") is True


def is_infiniband_dra_node_group(resource: PlannedResource) -> bool:
    return is_dra_gpu_node_group(resource) and has_key(field_at(resource.props, "template"), "gpuCluster")


def chart_name(props: Mapping[str, Any]) -> str:
    """The chart's own name, whether given bare, as `repo/chart` or as an OCI reference."""
    chart = field_at(props, "chart")
    return chart.rstrip("/").rsplit("/", 1)[-1] if isinstance(chart, str) else ""


def _is_release_of(resource: PlannedResource, charts: Sequence[str]) -> bool:
    return resource.type in HELM_RELEASE_TYPES and chart_name(resource.props) in charts


def is_dra_driver_release(resource: PlannedResource) -> bool:
    return _is_release_of(resource, DRA_DRIVER_CHARTS)


def is_gpu_operator_release(resource: PlannedResource) -> bool:
    return _is_release_of(resource, (GPU_OPERATOR_CHART,))


def is_dcgm_exporter_release(resource: PlannedResource) -> bool:
    return _is_release_of(resource, (DCGM_EXPORTER_CHART,))


def operator_exporter_on(resource: PlannedResource) -> bool:
    """A GPU Operator release whose own DCGM exporter runs (the chart's default)."""
    return (
        is_gpu_operator_release(resource) and field_at(resource.props, "values", "dcgmExporter", "enabled") is not False
    )


def dra_object(resource: PlannedResource) -> re.Match | None:
    return _DRA_OBJECT_TYPE.match(resource.type)


def claim_devices(resource: PlannedResource) -> Any:
    """`spec.devices` of a ResourceClaim or of the claim a ResourceClaimTemplate makes (None for anything else)."""
    match = dra_object(resource)
    if match is None or match["kind"] == "DeviceClass":
        return None
    claim_spec = (
        field_at(resource.props, "spec", "spec")
        if match["kind"] == "ResourceClaimTemplate"
        else field_at(resource.props, "spec")
    )
    return field_at(claim_spec, "devices")


def claim_requests(resource: PlannedResource) -> list:
    """The device requests of a ResourceClaimTemplate or ResourceClaim, of any API version."""
    return as_list(field_at(claim_devices(resource), "requests"))


def exact_device_class(request: Any) -> str | None:
    """The class a request allocates from: `exactly` in v1, flat on the request in v1beta1."""
    return field_at(request, "exactly", "deviceClassName") or field_at(request, "deviceClassName")


def requested_device_classes(resource: PlannedResource) -> set[str]:
    """Every class a claim may allocate from, including each alternative of a `firstAvailable` list."""
    classes = set()
    for request in claim_requests(resource):
        classes.add(exact_device_class(request))
        classes.update(field_at(sub, "deviceClassName") for sub in as_list(field_at(request, "firstAvailable")))
    return {device_class for device_class in classes if isinstance(device_class, str)}


def minor_version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor.split("-")[0])


def listing(values: Sequence[str]) -> str:
    return ", ".join(values[:-1]) + f" and {values[-1]}" if len(values) > 1 else values[0]


def is_existing_infiniband_group(resource: PlannedResource) -> bool:
    return resource.type == EXISTING_GPU_GROUP_TYPE and field_at(resource.props, "infiniband") is True


def group_driver_root(group: Mapping[str, Any]) -> str:
    """Where a GPU group's driver lives (its inputs, or the plan's record of them): in its preset image at /, else
    where the GPU Operator puts it."""
    preset = field_at(group, "template", "gpuSettings", "driversPreset")
    return PRESET_DRIVER_ROOT if preset else OPERATOR_DRIVER_ROOT


def plugin_outage_accepted(resources: Sequence[PlannedResource]) -> tuple[str, ...]:
    """The groups the stack names in nebius-dra:draPluginOutageAccepted."""
    return tuple(
        str(name)
        for resource in resources
        if resource.type == DRA_DRIVER_COMPONENT_TYPE
        for name in (resource.props.get(PLUGIN_OUTAGE_ACCEPTED) or [])
    )


def written_group_name(resource: PlannedResource) -> str:
    """The stack file's name of a node group, as its nodes' label carries it; else its resource name."""
    labels = field_at(resource.props, "template", "metadata", "labels")
    name = labels.get(GROUP_LABEL) if isinstance(labels, Mapping) else None
    return str(name or resource.name)
