"""DRA guardrails: the failure modes that break GPU and NIC allocation, as rules over planned resources.

Each rule reads resources with the engine's (camelCase) property names and returns messages
that say what is wrong, on which resource, and how to fix it. The same rule objects serve
`pulumi preview --policy-pack policies` (through `__main__.py`), the offline plan
(`check_resources`) and the tests, so a verdict never depends on where it was computed.

This module imports nothing from the program: the Pulumi CLI runs the pack from inside
`policies/`, where the project's packages are not importable.
"""

from __future__ import annotations

import datetime
import difflib
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

try:
    from policies.identity_rules import IDENTITY_RULES
except ModuleNotFoundError:  # the Pulumi CLI imports the pack's modules from inside policies/
    from identity_rules import IDENTITY_RULES  # type: ignore[import-not-found,no-redef]
try:  # the CLI runs the pack from inside policies/, the tests import it as the policies package
    from policies.queue_rules import QUEUE_CHECKS
except ImportError:
    from queue_rules import QUEUE_CHECKS  # type: ignore[no-redef,import-not-found]
try:  # the CLI runs the pack from inside policies/ (a sibling module); the program and tests import the package
    from policies.rdma_pod_rules import rdma_workload_violations
except ModuleNotFoundError:
    from rdma_pod_rules import rdma_workload_violations  # type: ignore[import-not-found,no-redef]

CLUSTER_TYPE = "nebius:index/mk8sV1Cluster:Mk8sV1Cluster"
NODE_GROUP_TYPE = "nebius:index/mk8sV1NodeGroup:Mk8sV1NodeGroup"
# Existing-cluster mode: a GPU group the stack describes but does not create (components/existing_gpu_node_group.py).
EXISTING_GPU_GROUP_TYPE = "nebius-dra:nodes:ExistingGpuNodeGroup"
HELM_RELEASE_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart")
POD_TYPE = "kubernetes:core/v1:Pod"
# The program registers its cost estimate as this component (components/cost.py); its inputs carry
# each node group's price per node-hour with the price's source and date.
COST_ESTIMATE_TYPE = "nebius-dra:cost:CostEstimate"
HOURS_PER_30_DAYS = 24 * 30
# A budget below a cent per hour is a typo; JSON Schema's `minimum` means the same in every draft the CLI may use.
MIN_HOURLY_USD = 0.01
DRA_DRIVER_CHARTS = ("nvidia-dra-driver-gpu", "dra-driver-nvidia-gpu")
GPU_OPERATOR_CHART = "gpu-operator"
DCGM_EXPORTER_CHART = "dcgm-exporter"
# dcgm-exporter's DRA mode reads resource.k8s.io/v1 ResourceSlices from chart 4.8.3 (image 4.6.0-4.8.3) on;
# earlier charts watch only v1beta1 (NVIDIA/dcgm-exporter#590).
MINIMUM_DCGM_EXPORTER_VERSION = (4, 8, 3)
DRA_API_VERSION = "v1"
RDMA_DEVICE_CLASS = "rdma.networking.nebius.ai"
IB_DEVICE_CLASS = "ib.networking.nebius.ai"
NETWORK_DEVICE_CLASSES = (RDMA_DEVICE_CLASS, IB_DEVICE_CLASS)
DEFAULT_MINIMUM_VERSION = "1.34"
# What each supported Kubernetes minor enables for DRA: the table the program reads too (components/dra_minors.py),
# kept beside the pack because the CLI runs the pack from this directory.
DRA_MINORS: Mapping[str, Any] = json.loads(Path(__file__).with_name("dra_minors.json").read_text(encoding="utf-8"))
# A Pod asking for this extended resource is served by DRA only where DRAExtendedResource is on: both NVIDIA DRA charts
# give the gpu.nvidia.com DeviceClass extendedResourceName nvidia.com/gpu (templates/deviceclass-gpu.yaml of
# nvidia-dra-driver-gpu 25.12.0 and dra-driver-nvidia-gpu 0.4.1), and DRA node groups have no device plugin.
LEGACY_GPU_RESOURCE = "nvidia.com/gpu"

_DRA_OBJECT_TYPE = re.compile(
    r"^kubernetes:resource\.k8s\.io/(?P<version>[^:]+):(?P<kind>ResourceClaimTemplate|ResourceClaim|DeviceClass)(?:Patch)?$"
)
_CLUSTER_VERSION = re.compile(r"^(?P<major>[0-9]{1,3})\.(?P<minor>[0-9]{1,3})(?:-nebius-node\.[0-9]{1,6})?\Z")
# Patterns the pack serves in a config schema (this one and CHECKED_PRESET_FIELDS) are compiled by the
# Pulumi CLI with Go's regexp (pulumi pkg/v3 resource/analyzer/config.go validates policy config with
# xeipuuv/gojsonschema v1.2.0, schema.go: regexp.Compile): RE2 syntax, ASCII classes, `$` the end of the
# text. The pack matches them with fullmatch, so a trailing newline fails here as it fails there.
_MINIMUM_VERSION = re.compile(r"^[0-9]+\.[0-9]+$")
_EXACT_CHART_VERSION = re.compile(r"^v?\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?$")
_IMAGE_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
_IMAGE_TAG = re.compile(r":([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})$")
_POD_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


@dataclass(frozen=True)
class PlannedResource:
    """A resource as the engine sees it; `props` uses engine (camelCase) property names."""

    urn: str
    type: str
    name: str
    props: Mapping[str, Any]


@dataclass(frozen=True)
class Finding:
    """One violation; `urn` is None when the stack as a whole is at fault."""

    policy: str
    mandatory: bool
    urn: str | None
    message: str


class PolicyConfigError(ValueError):
    """A `--policy-pack-config` document the rules cannot use; the message names the entry and what is allowed."""


ALL_POLICIES = "all"
LEVEL_KEY = "enforcementLevel"


def _shown(value: Any) -> str:
    """A config value as it would appear in the JSON document."""
    try:
        return json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def _did_you_mean(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f' (did you mean "{close[0]}"?)' if close else ""


def _unknown_setting_message(policy: str, key: str, value: Any, known: Sequence[str]) -> str:
    allowed = (
        f"its settings are {', '.join([LEVEL_KEY, *known])}" if known else f"it takes no settings, only {LEVEL_KEY}"
    )
    return f'{policy}: unknown setting "{key}" (given {_shown(value)}){_did_you_mean(key, known)}; {allowed}'


ResourceCheck = Callable[[PlannedResource, Mapping[str, Any]], list[str]]
StackCheck = Callable[[Sequence[PlannedResource], Mapping[str, Any]], list[tuple[str | None, str]]]


def field_at(value: Any, *path: str) -> Any:
    """The value at `path`, or None where a level is missing or is not an object."""
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _has_key(mapping: Any, key: str) -> bool:
    """Presence without reading the value, which may still be unknown during a preview."""
    return isinstance(mapping, Mapping) and any(existing == key for existing in mapping)


def _items(value: Any) -> list:
    if isinstance(value, Sequence) and not isinstance(value, str):
        return list(value)
    return []


def _kind(resource: PlannedResource) -> str:
    return resource.type.rsplit(":", 1)[-1]


def _named(resource: PlannedResource) -> str:
    return f'{_kind(resource)} "{resource.name}"'


def is_gpu_node_group(resource: PlannedResource) -> bool:
    if resource.type != NODE_GROUP_TYPE:
        return False
    platform = field_at(resource.props, "template", "resources", "platform")
    return isinstance(platform, str) and platform.startswith("gpu-")


def is_dra_gpu_node_group(resource: PlannedResource) -> bool:
    return is_gpu_node_group(resource) and field_at(resource.props, "template", "gpuSettings", "dra") is True


def is_infiniband_dra_node_group(resource: PlannedResource) -> bool:
    return is_dra_gpu_node_group(resource) and _has_key(field_at(resource.props, "template"), "gpuCluster")


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


def _dra_object(resource: PlannedResource) -> re.Match | None:
    return _DRA_OBJECT_TYPE.match(resource.type)


def claim_requests(resource: PlannedResource) -> list:
    """The device requests of a ResourceClaimTemplate or ResourceClaim, of any API version."""
    match = _dra_object(resource)
    if match is None or match["kind"] == "DeviceClass":
        return []
    claim_spec = (
        field_at(resource.props, "spec", "spec")
        if match["kind"] == "ResourceClaimTemplate"
        else field_at(resource.props, "spec")
    )
    return _items(field_at(claim_spec, "devices", "requests"))


def _exact_device_class(request: Any) -> str | None:
    """The class a request allocates from: `exactly` in v1, flat on the request in v1beta1."""
    return field_at(request, "exactly", "deviceClassName") or field_at(request, "deviceClassName")


def requested_device_classes(resource: PlannedResource) -> set[str]:
    """Every class a claim may allocate from, including each alternative of a `firstAvailable` list."""
    classes = set()
    for request in claim_requests(resource):
        classes.add(_exact_device_class(request))
        classes.update(field_at(sub, "deviceClassName") for sub in _items(field_at(request, "firstAvailable")))
    return {device_class for device_class in classes if isinstance(device_class, str)}


def _minor_version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor.split("-")[0])


def check_cluster_version(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    if resource.type != CLUSTER_TYPE:
        return []
    minimum = config.get("minimumVersion", DEFAULT_MINIMUM_VERSION)
    if not isinstance(minimum, str) or not _MINIMUM_VERSION.fullmatch(minimum):
        raise PolicyConfigError(f'mk8s-cluster-version: minimumVersion must be "MAJOR.MINOR", got {minimum!r}')
    version = field_at(resource.props, "controlPlane", "version")
    fix = f'Set controlPlane.version to "{minimum}" or later (in this project: nebius-dra:kubernetesVersion).'
    if not version:
        return [
            f"{_named(resource)} sets no controlPlane.version, so Nebius picks its default, which may be older than {minimum}. {fix}"
        ]
    if not isinstance(version, str) or not _CLUSTER_VERSION.match(version):
        return [
            f'{_named(resource)} has controlPlane.version "{version}", which is neither MAJOR.MINOR nor MAJOR.MINOR-nebius-node.N. {fix}'
        ]
    if _minor_version(version) < _minor_version(minimum):
        return [
            f"{_named(resource)} runs Kubernetes {version}, below the required {minimum}: resource.k8s.io/v1, "
            f"the DRA API the claim templates and the driver use, is served from 1.34 on. {fix}"
        ]
    return []


def check_gpu_node_group_dra(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    if not is_gpu_node_group(resource) or is_dra_gpu_node_group(resource):
        return []
    platform = field_at(resource.props, "template", "resources", "platform")
    return [
        f"{_named(resource)} (platform {platform}) does not set template.gpuSettings.dra = true: its GPUs stay "
        "with the legacy device plugin, the DRA driver publishes none of them, and network claims fail with "
        '"cannot allocate all claims". Set template.gpuSettings.dra = true (changing it recreates the group\'s nodes).'
    ]


def check_dra_driver_release(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    if not is_dra_driver_release(resource):
        return []
    problems = []
    if field_at(resource.props, "values", "gpuResourcesEnabledOverride") is not True:
        problems.append(
            f"{_named(resource)} (chart {chart_name(resource.props)}) does not set values.gpuResourcesEnabledOverride: true, "
            "so the chart refuses to serve GPUs through DRA. Set it to true in the release's values: on DRA node groups "
            "Nebius turns the legacy device plugin off, so the driver is the only one managing the GPUs."
        )
    version = field_at(resource.props, "version")
    if not isinstance(version, str) or not _EXACT_CHART_VERSION.match(version):
        shown = f'version "{version}"' if version else "no chart version"
        problems.append(
            f"{_named(resource)} has {shown}, so each `pulumi up` may install a different driver release, and 0.4.x "
            "cannot be downgraded. Pin an exact chart version (for example 25.12.0 or 0.4.1) in the release's version."
        )
    namespace = field_at(resource.props, "namespace")
    if not namespace or namespace == "default":
        shown = (
            'namespace "default"' if namespace else "no namespace, which puts it in the provider's default namespace"
        )
        problems.append(
            f"{_named(resource)} is installed with {shown}; the chart refuses the default namespace. "
            "Install it into its own namespace, for example nvidia-dra-driver-gpu."
        )
    return problems


def check_dra_api_version(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    match = _dra_object(resource)
    if match is None:
        return []
    if match["version"] != DRA_API_VERSION:
        return [
            f"{_named(resource)} uses resource.k8s.io/{match['version']}; the stack's clusters serve DRA as "
            f"resource.k8s.io/{DRA_API_VERSION}, and the beta and alpha versions are deprecated or switched off. "
            f"Declare it with the resource.k8s.io/{DRA_API_VERSION} type (pulumi_kubernetes.resource.v1.{match['kind']})."
        ]
    flat = [field_at(request, "name") for request in claim_requests(resource) if field_at(request, "deviceClassName")]
    if flat:
        return [
            f"{_named(resource)} writes deviceClassName directly on request(s) {', '.join(map(str, flat))}, the "
            f"v1beta1 shape, which resource.k8s.io/{DRA_API_VERSION} rejects. Move each request's fields under "
            "`exactly` (or list alternatives under `firstAvailable`)."
        ]
    return []


def check_network_device_requested_once(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    by_class: dict[str, list[str]] = {}
    nic_requests = 0
    for request in claim_requests(resource):
        exact = _exact_device_class(request)
        alternatives: list[Any] = [exact] if exact else []
        alternatives += [field_at(sub, "deviceClassName") for sub in _items(field_at(request, "firstAvailable"))]
        if not alternatives or not all(device_class in NETWORK_DEVICE_CLASSES for device_class in alternatives):
            continue
        nic_requests += 1
        for device_class in dict.fromkeys(alternatives):
            by_class.setdefault(str(device_class), []).append(str(field_at(request, "name")))
    if nic_requests < 2 or len(by_class) < len(NETWORK_DEVICE_CLASSES):
        return []
    return [
        f"{_named(resource)} requests both {RDMA_DEVICE_CLASS} (request {', '.join(by_class[RDMA_DEVICE_CLASS])}) and "
        f"{IB_DEVICE_CLASS} (request {', '.join(by_class[IB_DEVICE_CLASS])}): Kubernetes allocates two separate NICs. "
        f"An InfiniBand interface is already RDMA-capable: keep only {IB_DEVICE_CLASS} for InfiniBand, only "
        f"{RDMA_DEVICE_CLASS} for any RDMA NIC, or one request with firstAvailable to accept either. "
        "Keep both only when the workload really needs two NICs."
    ]


def check_infiniband_autoscaling(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    if not is_infiniband_dra_node_group(resource) or not isinstance(field_at(resource.props, "autoscaling"), Mapping):
        return []
    low = field_at(resource.props, "autoscaling", "minNodeCount") or 0
    high = field_at(resource.props, "autoscaling", "maxNodeCount") or 0
    return [
        f"{_named(resource)} is an InfiniBand DRA group that autoscales ({low:g}..{high:g}): a Nebius measurement "
        "(solutions-library, 2026-10) saw the cluster autoscaler never add InfiniBand DRA nodes, so plan on "
        "minNodeCount nodes only, or use fixedNodeCount for training fabrics."
    ]


# The driver presets Nebius publishes per Kubernetes minor and GPU platform, as the checks Nebius's own Terraform runs
# before it creates preinstalled-driver node groups list them (nebius/nebius-solutions-library,
# soperator/installations/example/driver_presets.tf: 1.32 and 1.33 from the file's earlier version, 1.35 and 1.36 from
# commit 9a187732a69e500115f78a088dc2ceb3981540e3), read on DRIVER_PRESETS_READ. No published source lists 1.34.
# The authority is `nebius mk8s node-group get-compatibility-matrix` (pulumi-nebius 0.6.73, GpuSettings.drivers_preset).
DRIVER_PRESETS_READ = "2026-11-30"
_CUDA13 = ("cuda13.0",)
# Every platform of the 1.33 row, which later rows keep and extend.
_PRESET_PLATFORMS = (
    "gpu-l40s-a",
    "gpu-l40s-d",
    "gpu-h100-sxm",
    "gpu-h200-sxm",
    "gpu-b200-sxm",
    "gpu-b200-sxm-a",
    "gpu-b300-sxm",
    "gpu-rtx6000",
)
DRIVER_PRESETS: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "1.32": {
        **dict.fromkeys(_PRESET_PLATFORMS, ("cuda12", "cuda12.8", "cuda13.0")),
        "gpu-b300-sxm": _CUDA13,
        "gpu-rtx6000": _CUDA13,
    },
    "1.33": {**dict.fromkeys(_PRESET_PLATFORMS, _CUDA13), "gpu-b200-sxm-a": ("cuda12.8", "cuda13.0")},
    "1.35": dict.fromkeys((*_PRESET_PLATFORMS, "gpu-gb300"), _CUDA13),
    "1.36": dict.fromkeys((*_PRESET_PLATFORMS, "gpu-gb300", "gpu-rtx6000-a"), _CUDA13),
}


def _listing(values: Sequence[str]) -> str:
    return ", ".join(values[:-1]) + f" and {values[-1]}" if len(values) > 1 else values[0]


# A team's own record of `get-compatibility-matrix`: what the table does not list yet, with the day it was checked.
CHECKED_PRESET_FIELDS = {
    "kubernetesVersion": re.compile(r"^[0-9]{1,3}\.[0-9]{1,3}$"),
    "platform": re.compile(r"^gpu-[a-z0-9][a-z0-9-]{0,61}$"),
    "driversPreset": re.compile(r"^cuda[0-9]{1,3}(\.[0-9]{1,3})?$"),
    "checkedOn": re.compile(r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"),
}
CHECKED_PRESET_EXAMPLE = {
    "kubernetesVersion": "1.34",
    "platform": "gpu-h200-sxm",
    "driversPreset": "cuda13.0",
    "checkedOn": "2026-11-30",
}


def _is_calendar_day(text: str) -> bool:
    """The pattern takes 2026-02-31; the calendar does not."""
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _checked_presets(config: Mapping[str, Any]) -> set[tuple[str, str, str]]:
    """(minor, platform, preset) of each `checkedPresets` entry; PolicyConfigError names a malformed one."""
    entries = config.get("checkedPresets", [])
    expected = f"expected a list of objects like {_shown(CHECKED_PRESET_EXAMPLE)}"
    if not isinstance(entries, Sequence) or isinstance(entries, str):
        raise PolicyConfigError(f"gpu-drivers-preset-known: checkedPresets {expected}, got {_shown(entries)}")
    checked = set()
    for index, entry in enumerate(entries):
        where = f"gpu-drivers-preset-known: checkedPresets entry {index}"
        if not isinstance(entry, Mapping):
            raise PolicyConfigError(f"{where}: {expected}, got {_shown(entry)}")
        wrong = sorted(
            key
            for key in {*entry, *CHECKED_PRESET_FIELDS}
            if not (
                key in CHECKED_PRESET_FIELDS
                and isinstance(entry.get(key), str)
                and CHECKED_PRESET_FIELDS[key].fullmatch(entry[key])
            )
        )
        if wrong:
            raise PolicyConfigError(
                f"{where} ({', '.join(wrong)} missing, unknown or malformed): {expected}, got {_shown(entry)}"
            )
        if not _is_calendar_day(entry["checkedOn"]):
            raise PolicyConfigError(f"{where}: checkedOn {_shown(entry['checkedOn'])} is not a day of the calendar")
        checked.add((entry["kubernetesVersion"], entry["platform"], entry["driversPreset"]))
    return checked


def check_gpu_drivers_preset_known(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    checked = _checked_presets(config)
    preset = field_at(resource.props, "template", "gpuSettings", "driversPreset")
    version = field_at(resource.props, "version")
    if not is_gpu_node_group(resource) or not isinstance(preset, str) or not isinstance(version, str):
        return []
    match = _CLUSTER_VERSION.match(version)
    if match is None:
        return []
    minor = f"{match['major']}.{match['minor']}"
    platform = field_at(resource.props, "template", "resources", "platform")
    row = DRIVER_PRESETS.get(minor)
    listed = None if row is None else row.get(platform)
    if (listed is not None and preset in listed) or (minor, platform, preset) in checked:
        return []
    if row is None:
        found = f"has no row for {minor} (its rows: {_listing(sorted(DRIVER_PRESETS))})"
    elif listed is None:
        found = f"lists no preinstalled-driver image for {platform} on {minor}"
    else:
        found = f"lists only {_listing(listed)} for {platform} on {minor}"
    return [
        f'{_named(resource)} asks for driversPreset "{preset}" on {platform} with Kubernetes {minor}; the dated table '
        f"of Nebius driver presets (read {DRIVER_PRESETS_READ}) {found}. Confirm the preset before `pulumi up` with "
        f"`nebius mk8s node-group get-compatibility-matrix --cluster-kubernetes-version {minor} --platform {platform}` "
        "and record what it lists in this policy's checkedPresets setting, or leave driversPreset out to have the GPU "
        "Operator install the driver."
    ]


def check_dra_autoscaling_minimum(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    if not is_dra_gpu_node_group(resource) or not isinstance(field_at(resource.props, "autoscaling"), Mapping):
        return []
    minimum = field_at(resource.props, "autoscaling", "minNodeCount") or 0
    if minimum >= 1:
        return []
    return [
        f"{_named(resource)} autoscales from autoscaling.minNodeCount {minimum:g}: the cluster autoscaler cannot scale "
        "a DRA group up from zero nodes, so pods that claim its GPUs stay Pending for ever. Set autoscaling.minNodeCount "
        "to at least 1 (in this project: autoscaling.min of the gpuNodeGroups entry)."
    ]


# Nebius's node-group strategy defaults change in Q3 2026 (pulumi-nebius 0.6.73 Mk8sV1NodeGroupStrategyArgs):
# drain timeout 0 -> 10m, max surge 1 -> 0, max unavailable 0 -> 1.
STRATEGY_FIELDS = ("maxSurge", "maxUnavailable", "drainTimeout")
STRATEGY_DEFAULTS_CHANGE = "drain timeout 0 -> 10m, max surge 1 -> 0, max unavailable 0 -> 1"


def _amount_is_set(amount: Any) -> bool:
    return _has_key(amount, "count") or _has_key(amount, "percent")


def check_gpu_node_group_strategy(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    if not is_gpu_node_group(resource):
        return []
    strategy = field_at(resource.props, "strategy")
    missing = [
        key
        for key in STRATEGY_FIELDS
        if not (_has_key(strategy, key) if key == "drainTimeout" else _amount_is_set(field_at(strategy, key)))
    ]
    if not missing:
        return []
    return [
        f"{_named(resource)} leaves strategy.{', strategy.'.join(missing)} to Nebius's defaults, which change in Q3 2026 "
        f"({STRATEGY_DEFAULTS_CHANGE}): how its GPU nodes are replaced on the next template change would then depend "
        "on the date, not on this stack. Set maxSurge, maxUnavailable and drainTimeout (in this project: strategy of "
        "the gpuNodeGroups entry; its defaults are 0, 1 and 30m)."
    ]


def check_reserved_strict_surge(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    if (
        not is_gpu_node_group(resource)
        or field_at(resource.props, "template", "reservationPolicy", "policy") != "STRICT"
    ):
        return []
    surge = field_at(resource.props, "strategy", "maxSurge")
    if _amount_is_set(surge):
        count, percent = field_at(surge, "count") or 0, field_at(surge, "percent") or 0
        if count <= 0 and percent <= 0:
            return []
        shown = f"{percent:g}%" if percent else f"{count:g}"
        given = f"strategy.maxSurge {shown}"
    else:
        given = "no strategy.maxSurge, so Nebius's default (1 until Q3 2026)"
    return [
        f"{_named(resource)} runs on reserved capacity with reservationPolicy STRICT and has {given}: every surge node "
        "must come from a free block of the reservation, and when the reservation is fully used the roll-out stalls "
        "(Nebius solutions-library PR #1091). Set strategy.maxSurge to 0 and maxUnavailable to 1 or more (in this "
        "project: strategy of the gpuNodeGroups entry)."
    ]


def check_spot_infiniband(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    template = field_at(resource.props, "template")
    if not is_gpu_node_group(resource) or not (_has_key(template, "preemptible") and _has_key(template, "gpuCluster")):
        return []
    return [
        f"{_named(resource)} runs preemptible (spot) VMs in an InfiniBand GPU cluster: Nebius may stop a node with 60 "
        "seconds' notice, and a multi-node job over the fabric then restarts as a whole from its last checkpoint, so "
        "every preemption costs the whole job's progress since then. Prefer reserved or on-demand capacity for the "
        "fabric group and keep spot for single-node work (in this project: capacity of the gpuNodeGroups entry)."
    ]


def image_is_pinned(image: str) -> bool:
    """A digest, or a tag other than `latest`: a reference without a tag means `latest`."""
    if _IMAGE_DIGEST.search(image):
        return True
    tag = _IMAGE_TAG.search(image.rsplit("/", 1)[-1])
    return tag is not None and tag.group(1) != "latest"


def check_workload_images_pinned(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    if resource.type != POD_TYPE:
        return []
    unpinned = [
        f"{field_at(container, 'name')} ({field_at(container, 'image') or 'no image'})"
        for list_name in _POD_CONTAINER_LISTS
        for container in _items(field_at(resource.props, "spec", list_name))
        if not image_is_pinned(str(field_at(container, "image") or ""))
    ]
    if not unpinned:
        return []
    return [
        f"{_named(resource)} runs unpinned images in container(s) {', '.join(unpinned)}: `latest` or no tag means a "
        "different image on each pull, so a sample that passed yesterday can fail today. Pin a tag such as "
        "nvidia/cuda:13.1.1-runtime-ubuntu24.04, or a digest."
    ]


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
                f"The stack has DRA GPU node groups ({', '.join(dra_groups)}) but no NVIDIA DRA driver release "
                f"(chart {' or '.join(DRA_DRIVER_CHARTS)}): Nebius does not install it, so no GPU is published to "
                "DRA and every GPU claim stays unallocated. Add one helm.v3.Release of the driver.",
            )
        ]
    names = ", ".join(_named(r) for r in releases)
    return [
        (
            release.urn,
            f"{_named(release)} is one of {len(releases)} NVIDIA DRA driver releases ({names}): two drivers publish and "
            "prepare the same GPUs under one driver name. Keep exactly one release (and do not also let the GPU "
            "Operator install the driver).",
        )
        for release in releases
    ]


def is_existing_infiniband_group(resource: PlannedResource) -> bool:
    return resource.type == EXISTING_GPU_GROUP_TYPE and field_at(resource.props, "infiniband") is True


def check_network_claims_need_infiniband(
    resources: Sequence[PlannedResource], config: Mapping[str, Any]
) -> list[tuple[str | None, str]]:
    if any(is_infiniband_dra_node_group(r) or is_existing_infiniband_group(r) for r in resources):
        return []
    violations: list[tuple[str | None, str]] = []
    for resource in resources:
        network_classes = sorted(requested_device_classes(resource) & set(NETWORK_DEVICE_CLASSES))
        if network_classes:
            violations.append(
                (
                    resource.urn,
                    f"{_named(resource)} requests {', '.join(network_classes)}, but no DRA GPU node group joins an "
                    "InfiniBand GPU cluster (template.gpuCluster), so DRANet publishes no NIC and the claim never "
                    "allocates. Add an InfiniBand DRA node group (in this project: infiniband: true on a gpuNodeGroups "
                    "entry, with nebius-dra:infinibandFabric) or drop the network claim.",
                )
            )
    return violations


def check_gpu_operator_device_plugin(
    resources: Sequence[PlannedResource], config: Mapping[str, Any]
) -> list[tuple[str | None, str]]:
    if not any(is_dra_gpu_node_group(r) for r in resources):
        return []
    return [
        (
            release.urn,
            f"{_named(release)} (GPU Operator) does not set values.devicePlugin.enabled: false on a stack with DRA GPU "
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
            f"The stack has GPU node groups ({', '.join(gpu_groups)}) but no GPU metrics: no {DCGM_EXPORTER_CHART} "
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
                        f"{_named(release)} ({DCGM_EXPORTER_CHART}) does not set values.kubernetesDRA.enabled: true on a "
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
                        f'{_named(release)} ({DCGM_EXPORTER_CHART}) has version "{field_at(release.props, "version")}", '
                        f"not an exact {minimum} or later: earlier charts' DRA mode watches only resource.k8s.io/v1beta1 "
                        "ResourceSlices (NVIDIA/dcgm-exporter#590), so GPUs the DRA driver publishes in v1 are never "
                        f"attributed. Pin {minimum} or later (in this project: nebius-dra:dcgmExporterVersion).",
                    )
                )
        elif operator_exporter_on(release):
            violations.append(
                (
                    release.urn,
                    f"{_named(release)} (GPU Operator) leaves values.dcgmExporter.enabled on, on a stack with DRA GPU "
                    "node groups: the Operator's exporter runs the device plugin's pod-resources path without DRA mode, "
                    "so it cannot tell which pod holds a GPU, and beside a DRA-mode exporter it scrapes every GPU "
                    f"twice. Set dcgmExporter.enabled to false and run one {DCGM_EXPORTER_CHART} release with "
                    "kubernetesDRA.enabled: true (in this project: nebius-dra:gpuMetrics).",
                )
            )
    return violations


def _usd(amount: float) -> str:
    return f"${amount:,.2f}" if amount >= 1 else f"${amount:.4f}".rstrip("0").rstrip(".")


def _max_hourly_usd(config: Mapping[str, Any]) -> float | None:
    limit = config.get("maxHourlyUsd")
    if limit is None:
        return None
    amount = isinstance(limit, (int, float)) and not isinstance(limit, bool) and math.isfinite(limit)
    if not amount or limit < MIN_HOURLY_USD:
        raise PolicyConfigError(
            f"max-hourly-cost: maxHourlyUsd must be a number of US dollars per hour, at least {MIN_HOURLY_USD}, "
            f"got {_shown(limit)}"
        )
    return float(limit)


def _largest_node_count(group: PlannedResource) -> float:
    autoscaling = field_at(group.props, "autoscaling")
    if isinstance(autoscaling, Mapping):
        return float(field_at(autoscaling, "maxNodeCount") or 0)
    return float(field_at(group.props, "fixedNodeCount") or 0)


def _estimated_groups(resources: Sequence[PlannedResource]) -> dict[str, Mapping[str, Any]]:
    """The program's estimate per Nebius node group name."""
    found: dict[str, Mapping[str, Any]] = {}
    for estimate in (r for r in resources if r.type == COST_ESTIMATE_TYPE):
        for entry in _items(field_at(estimate.props, "groups")):
            name = field_at(entry, "nodeGroup")
            if isinstance(name, str):
                found.setdefault(name, entry)
    return found


def _unpriced_reason(group: PlannedResource, entry: Mapping[str, Any] | None) -> str | None:
    """Why the estimate's price does not fit the node group as planned, or None when it does."""
    if entry is None:
        return f"the stack's cost estimate ({COST_ESTIMATE_TYPE}) has no price for it"
    planned = (
        field_at(group.props, "template", "resources", "platform"),
        field_at(group.props, "template", "resources", "preset"),
    )
    estimated = (field_at(entry, "platform"), field_at(entry, "preset"))
    if planned != estimated:
        return f"the cost estimate prices {' '.join(map(str, estimated))}, but the node group runs {' '.join(map(str, planned))}"
    preemptible = _has_key(field_at(group.props, "template"), "preemptible")
    capacity = field_at(entry, "capacity")
    if preemptible != (capacity == "spot"):
        planned_capacity = "preemptible (template.preemptible)" if preemptible else "on-demand"
        return f"the cost estimate prices it {capacity}, but the node group is {planned_capacity}"
    if not isinstance(field_at(entry, "usdPerNodeHour"), (int, float)):
        return str(field_at(entry, "unpriced") or "the estimate gives no price per node-hour")
    return None


def check_max_hourly_cost(
    resources: Sequence[PlannedResource], config: Mapping[str, Any]
) -> list[tuple[str | None, str]]:
    """The stack's nodes at their largest size (fixed counts, autoscaling maxima) against maxHourlyUsd.

    Node counts, platforms and presets come from the node groups as planned; each node's price comes from the
    program's estimate, which carries the price table and the stack's overrides with every price's source
    and date. A node group that cannot be priced is a violation too: a budget gate must not pass what it
    cannot see.
    """
    limit = _max_hourly_usd(config)
    if limit is None:
        return []
    estimated = _estimated_groups(resources)
    violations: list[tuple[str | None, str]] = []
    parts: list[str] = []
    dates: set[str] = set()
    total = 0.0
    groups = sorted((r for r in resources if r.type == NODE_GROUP_TYPE), key=lambda r: str(field_at(r.props, "name")))
    for group in groups:
        name = str(field_at(group.props, "name") or group.name)
        entry = estimated.get(name)
        reason = _unpriced_reason(group, entry)
        if reason is not None or entry is None:
            violations.append(
                (
                    group.urn,
                    f"{_named(group)} (node group {name}) cannot be priced: {reason}. So the stack's cost cannot be "
                    f"checked against max-hourly-cost.maxHourlyUsd ({_usd(limit)} per hour). Add the platform and "
                    "preset to the price table (in this project: prices/nebius.yaml, or nebius-dra:priceOverrides "
                    "for one stack), with the price's source and date.",
                )
            )
            continue
        price, nodes = float(field_at(entry, "usdPerNodeHour")), _largest_node_count(group)
        total += price * nodes
        parts.append(f"{name} {nodes:g} x {_usd(price)}")
        dates.add(str(field_at(entry, "priceDate")))
    if round(total, 4) > limit:
        dated = f"{min(dates)}..{max(dates)}" if len(dates) > 1 else next(iter(dates), "?")
        violations.append(
            (
                None,
                f"The stack's nodes cost up to {_usd(total)} per hour ({_usd(total * HOURS_PER_30_DAYS)} per 30 days) "
                f"at their largest size, over max-hourly-cost.maxHourlyUsd {_usd(limit)}: {', '.join(parts)} "
                f"(list prices of {dated}; boot disks, network, egress and storage not included). Lower "
                "fixedNodeCount or autoscaling max, choose smaller presets, or raise maxHourlyUsd in the policy config.",
            )
        )
    return violations


def _table_minor(version: str) -> str:
    """The table row a cluster version is judged by: its minor, or the newest row for a newer minor."""
    number = _minor_version(version)
    known = [minor for minor in DRA_MINORS["minors"] if _minor_version(minor) <= number]
    return known[-1] if known else next(iter(DRA_MINORS["minors"]))


def _gate_off(gate: str, minor: str) -> str | None:
    """Why `gate` is off on `minor`, naming where it turns on; None when it is on there."""
    row = DRA_MINORS["gates"][gate]
    if row[minor]["default"]:
        return None
    turns_on = next((m for m in DRA_MINORS["minors"] if row[m]["default"]), None)
    fix = (
        f'it is on by default from {turns_on}: run the cluster on "{turns_on}" or later'
        if turns_on
        else "no supported minor turns it on"
    )
    return f"the Kubernetes feature gate {gate}, {row[minor]['stage']} and off by default in {minor}, which Nebius managed clusters do not enable; {fix}"


def _selection_fields(request: Any) -> list[tuple[str, str, Any]]:
    """(where, API type, body) of a request's `exactly` and each `firstAvailable` entry."""
    name = field_at(request, "name")
    found = [(f"request {name}: exactly", "ExactDeviceRequest", field_at(request, "exactly"))]
    found += [
        (f"request {name}: firstAvailable[{index}]", "DeviceSubRequest", sub)
        for index, sub in enumerate(_items(field_at(request, "firstAvailable")))
    ]
    return [entry for entry in found if isinstance(entry[2], Mapping)]


def gated_fields_used(resource: PlannedResource) -> list[tuple[str, str]]:
    """(where, API field as `Type.field`) of every gated DRA field the resource sets."""
    used = []
    match = _dra_object(resource)
    if match and match["kind"] == "DeviceClass":
        if field_at(resource.props, "spec", "extendedResourceName"):
            used.append(("spec.extendedResourceName", "DeviceClassSpec.extendedResourceName"))
        return used
    for request in claim_requests(resource):
        if field_at(request, "firstAvailable"):
            used.append((f"request {field_at(request, 'name')}: firstAvailable", "DeviceRequest.firstAvailable"))
        for where, api_type, body in _selection_fields(request):
            for name in ("tolerations", "capacity", "adminAccess"):
                if field_at(body, name) not in (None, False, []) and f"{api_type}.{name}" in DRA_MINORS["fields"]:
                    used.append((f"{where}.{name}", f"{api_type}.{name}"))
    claim = (
        field_at(resource.props, "spec", "spec")
        if match and match["kind"] == "ResourceClaimTemplate"
        else field_at(resource.props, "spec")
    )
    for index, constraint in enumerate(_items(field_at(claim, "devices", "constraints")) if match else []):
        if field_at(constraint, "distinctAttribute"):
            used.append((f"constraints[{index}].distinctAttribute", "DeviceConstraint.distinctAttribute"))
    return used


def _legacy_gpu_containers(resource: PlannedResource) -> list[str]:
    """Containers of a Pod that ask for the extended resource nvidia.com/gpu."""
    if resource.type != POD_TYPE:
        return []
    return [
        str(field_at(container, "name"))
        for kind in _POD_CONTAINER_LISTS
        for container in _items(field_at(resource.props, "spec", kind))
        if any(_has_key(field_at(container, "resources", part), LEGACY_GPU_RESOURCE) for part in ("limits", "requests"))
    ]


def _feature_uses(resources: Sequence[PlannedResource]) -> list[tuple[PlannedResource, str, str, str]]:
    """(resource, what it does up to the gate's reason, the gate it needs, the fix) for every gated feature used."""
    uses = []
    dra_groups = any(is_dra_gpu_node_group(r) for r in resources)
    for resource in resources:
        for where, api_field in gated_fields_used(resource):
            uses.append(
                (
                    resource,
                    f"sets {where}, which needs",
                    DRA_MINORS["fields"][api_field],
                    "Remove the field or move the cluster.",
                )
            )
        containers = _legacy_gpu_containers(resource) if dra_groups else []
        if containers:
            uses.append(
                (
                    resource,
                    f"asks for {LEGACY_GPU_RESOURCE} in container(s) {', '.join(containers)}: DRA node groups run no "
                    "device plugin, and DRA serves that resource through the gpu.nvidia.com DeviceClass's "
                    "extendedResourceName only with",
                    "DRAExtendedResource",
                    "Claim a GPU through a ResourceClaimTemplate instead.",
                )
            )
        gates = field_at(resource.props, "values", "featureGates") if is_dra_driver_release(resource) else None
        for driver_gate, needs in DRA_MINORS["driverGates"]["needs"].items():
            if field_at(gates, driver_gate) is True:
                uses.append(
                    (
                        resource,
                        f"turns on the driver's feature gate {driver_gate}, which needs",
                        needs,
                        f"Turn {driver_gate} off in the release's values.featureGates.",
                    )
                )
    return uses


def check_dra_features_on_minor(
    resources: Sequence[PlannedResource], config: Mapping[str, Any]
) -> list[tuple[str | None, str]]:
    uses = _feature_uses(resources)
    versions = (
        [field_at(r.props, "controlPlane", "version") for r in resources if r.type == CLUSTER_TYPE] if uses else []
    )
    if len(versions) != 1 or not isinstance(versions[0], str) or not _CLUSTER_VERSION.match(versions[0]):
        return []  # nothing gated, or no cluster of a known version here (existing-cluster mode, or mk8s-cluster-version's finding)
    minor = _table_minor(versions[0])
    violations: list[tuple[str | None, str]] = []
    for resource, what, gate, fix in uses:
        reason = _gate_off(gate, minor)
        if reason:
            violations.append((resource.urn, f"{_named(resource)} {what} {reason}. {fix}"))
    return violations


@dataclass(frozen=True)
class _Rule:
    name: str
    description: str
    level: EnforcementLevel
    check: Callable[..., list]
    config_schema: PolicyConfigSchema | None = None

    def setting_names(self) -> list[str]:
        """The settings this rule reads: its config schema's properties."""
        return sorted(self.config_schema.properties) if self.config_schema else []

    def check_settings(self, given: Mapping[str, Any]) -> None:
        """PolicyConfigError for a setting the rule does not read, so a misspelt one cannot quietly do nothing.

        The pack has to check this itself: a policy's config schema reaches the CLI as properties
        and required only, and the CLI validates against an object schema that allows any other key.
        """
        for key in given:
            if key not in self.setting_names():
                raise PolicyConfigError(_unknown_setting_message(self.name, key, given[key], self.setting_names()))

    def _settings(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Schema defaults under the given config: the CLI may or may not have filled them in."""
        self.check_settings(given)
        properties = self.config_schema.properties if self.config_schema else {}
        return {**{key: spec["default"] for key, spec in properties.items() if "default" in spec}, **given}

    def _policy_fields(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "enforcement_level": self.level,
            "config_schema": self.config_schema,
        }


class ResourceRule(_Rule):
    """A rule that judges one resource at a time; `check` is a ResourceCheck."""

    def policy(self) -> ResourceValidationPolicy:
        def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
            resource = PlannedResource(args.urn, args.resource_type, args.name, args.props)
            for message in self.check(resource, self._settings(args.get_config())):
                report_violation(message, None)

        return ResourceValidationPolicy(validate=validate, **self._policy_fields())


class StackRule(_Rule):
    """A rule that needs the whole stack; `check` is a StackCheck."""

    def policy(self) -> StackValidationPolicy:
        def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
            resources = [PlannedResource(r.urn, r.resource_type, r.name, r.props) for r in args.resources]
            for urn, message in self.check(resources, self._settings(args.get_config())):
                report_violation(message, urn)

        return StackValidationPolicy(validate=validate, **self._policy_fields())


MANDATORY = EnforcementLevel.MANDATORY
ADVISORY = EnforcementLevel.ADVISORY

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
                    "pattern": _MINIMUM_VERSION.pattern,
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
        "Sample workload images are pinned to a tag other than latest, or a digest.",
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
                    "description": "Most the stack's nodes may cost per hour, in US dollars, at fixed counts and "
                    "autoscaling maxima, priced from the program's cost estimate.",
                },
            }
        ),
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
    *(StackRule(*rule) for rule in IDENTITY_RULES),
    StackRule(
        "rdma-pod-memlock",
        "Containers handed an InfiniBand/RDMA claim add the IPC_LOCK capability RDMA needs to pin memory (policies/rdma_pod_rules.py).",
        MANDATORY,
        lambda resources, _config: rdma_workload_violations([(r.urn, r.type, r.name, r.props) for r in resources]),
    ),
)

RULES = (
    *RULES,
    *(
        StackRule(name, text, ADVISORY if level == "advisory" else MANDATORY, check)
        for name, text, level, check in QUEUE_CHECKS
    ),
)
POLICIES = [rule.policy() for rule in RULES]

_LEVELS = {level.value: level for level in EnforcementLevel}
_NO_OPTIONS = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [])


def sdk_props(props: Mapping[str, Any]) -> Mapping[str, Any]:
    """Properties as the policy SDK hands them to a rule: secrets unwrapped, unknowns guarded."""
    return unknown_checking_proxy(deserialize_properties(dict(props)))


def _level(name: str, text: Any) -> EnforcementLevel:
    if not isinstance(text, str) or text not in _LEVELS:
        raise PolicyConfigError(f"{name}: enforcement level {_shown(text)} is not one of {', '.join(_LEVELS)}")
    return _LEVELS[text]


def _config_entry(name: str, entry: Any) -> tuple[EnforcementLevel | None, dict]:
    """One entry of a `--policy-pack-config` document: a level, or settings with an optional `enforcementLevel`."""
    if isinstance(entry, str):
        return _level(name, entry), {}
    if not isinstance(entry, Mapping):
        raise PolicyConfigError(f"{name}: expected an enforcement level or an object of settings, got {entry!r}")
    properties = dict(entry)
    if LEVEL_KEY not in properties:
        return None, properties
    # Present is used: false, "" or null is refused like any other wrong level, never read as "not set".
    return _level(name, properties.pop(LEVEL_KEY)), properties


def _level_and_properties(
    name: str, default: EnforcementLevel, config: Mapping[str, Any]
) -> tuple[EnforcementLevel, dict]:
    """The policy's own entry wins over `all`, which wins over the policy's built-in level."""
    pack_level, _ = _config_entry(ALL_POLICIES, config.get(ALL_POLICIES, {}))
    level, properties = _config_entry(name, config.get(name, {}))
    return level or pack_level or default, properties


def validate_policy_config(config: Any) -> None:
    """PolicyConfigError unless every entry of a `--policy-pack-config` document would take effect.

    Refused: a policy name the pack does not have (the Pulumi CLI keeps such an entry without a
    word), a setting the policy does not read, settings under `all` (which sets only a level),
    and an entry that is neither a level nor an object. Settings' values are checked by the rules.
    """
    if config is None:
        return
    if not isinstance(config, Mapping):
        raise PolicyConfigError(f"expected an object of policy names, got a {type(config).__name__}")
    rules = {rule.name: rule for rule in RULES}
    for name, entry in config.items():
        if name != ALL_POLICIES and name not in rules:
            raise PolicyConfigError(
                f'unknown policy "{name}" (given {_shown(entry)}){_did_you_mean(str(name), sorted(rules))}; '
                f"the pack's policies are {', '.join(sorted(rules))}, or {ALL_POLICIES} for every policy"
            )
        _, properties = _config_entry(name, entry)
        if name in rules:
            rules[name].check_settings(properties)
        elif properties:
            key = next(iter(properties))
            raise PolicyConfigError(
                f'{ALL_POLICIES}: unknown setting "{key}" (given {_shown(properties[key])}); "{ALL_POLICIES}" '
                f"takes only {LEVEL_KEY}, settings go under the policy that reads them"
            )


def _reported(policy: Any, args: Any, subject: str | None) -> list[tuple[str | None, str, bool]]:
    """(urn, message, checked) for each violation; an unknown value is reported as unchecked, as the SDK does."""
    reported: list[tuple[str | None, str, bool]] = []
    try:
        policy.validate(args, lambda message, urn=None: reported.append((urn or subject, message, True)))
    except UnknownValueError as unknown:
        reported.append((subject, f"cannot be checked before the update: {unknown.message}", False))
    return reported


def check_resources(resources: Sequence[PlannedResource], config: Mapping[str, Any] | None = None) -> list[Finding]:
    """Every rule over `resources`, through the same validate entry points `pulumi preview --policy-pack` calls.

    `config` has the shape of a `--policy-pack-config` file: policy name (or `all`) to a level
    ("advisory", "mandatory", "disabled") or to an object of settings and `enforcementLevel`;
    a document the rules cannot use, or with an entry that would do nothing (an unknown policy
    or setting), raises PolicyConfigError.
    """
    validate_policy_config(config)
    findings: list[Finding] = []
    props = [sdk_props(r.props) for r in resources]
    for rule, policy in zip(RULES, POLICIES):
        level, properties = _level_and_properties(rule.name, rule.level, config or {})
        if level == EnforcementLevel.DISABLED:
            continue
        if isinstance(policy, ResourceValidationPolicy):
            reported = [
                violation
                for r, r_props in zip(resources, props)
                for violation in _reported(
                    policy, ResourceValidationArgs(r.type, r_props, r.urn, r.name, _NO_OPTIONS, None, properties), r.urn
                )
            ]
        else:
            stack = [
                PolicyResource(r.type, r_props, r.urn, r.name, _NO_OPTIONS, None, None, [], {})
                for r, r_props in zip(resources, props)
            ]
            reported = _reported(policy, StackValidationArgs(stack, properties), None)
        mandatory = level in (EnforcementLevel.MANDATORY, EnforcementLevel.REMEDIATE)
        findings.extend(Finding(rule.name, mandatory and checked, urn, message) for urn, message, checked in reported)
    return findings
