"""The stack's configuration, parsed once into typed objects.

`__main__.py` hands `parse_stack_config` the raw strings Pulumi gives the program
(structured values arrive as JSON text); everything deeper receives these dataclasses and
never reads `pulumi.Config`. Defaults live in `Pulumi.yaml`, which the Pulumi CLI (and
the offline plan) merges in before the program runs, so every key is present here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

import pulumi
import yaml

from components.claims_config import NO_CLAIMS, ClaimsConfig, parse_claims_config
from components.config_errors import NAMESPACE, ConfigProblems, config_key, shown
from components.driver_config import DraDriverConfig, parse_driver_config
from components.labels import (
    LABEL_KEY_RULE,
    LABEL_VALUE_RULE,
    RESERVED_GPU_LABELS,
    TAINT_EFFECTS,
    Taint,
    valid_label_key,
    valid_label_value,
)

MIN_KUBERNETES = (1, 34)
VERSION_PATTERN = re.compile(r"^(\d+)\.(\d+)(?:-nebius-node\.(\d+))?$")
PATCH_VERSION_PATTERN = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
GPU_PRESET_PATTERN = re.compile(r"^(\d+)gpu-\d+vcpu-\d+gb$")
DRIVERS_PRESET_PATTERN = re.compile(r"^cuda\d+(\.\d+)?$")
GROUP_NAME_PATTERN = re.compile(r"^[a-z]([a-z0-9-]{0,30}[a-z0-9])?$")
ETCD_SIZES = (1, 3, 5)
GPU_GROUP_FIELDS = {
    "name", "platform", "preset", "fixedNodeCount", "autoscaling", "driversPreset",
    "infiniband", "bootDiskSizeGib", "labels", "taints",
}


@dataclass(frozen=True)
class Autoscaling:
    min_nodes: int
    max_nodes: int


@dataclass(frozen=True)
class GpuNodeGroupConfig:
    name: str
    platform: str
    preset: str
    fixed_node_count: Optional[int]
    autoscaling: Optional[Autoscaling]
    drivers_preset: Optional[str]
    infiniband: bool
    boot_disk_gib: int
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()

    @property
    def preinstalled_driver(self) -> bool:
        """A drivers preset means the node image ships the NVIDIA driver; without one the GPU Operator installs it."""
        return self.drivers_preset is not None

    @property
    def gpus_per_node(self) -> int:
        match = GPU_PRESET_PATTERN.match(self.preset)
        return int(match.group(1)) if match else 0


@dataclass(frozen=True)
class ClusterConfig:
    name: str
    parent_id: str
    subnet_id: str
    kubernetes_version: str
    etcd_cluster_size: int
    public_endpoint: bool
    nebius_profile: Optional[str]


@dataclass(frozen=True)
class SystemNodeGroupConfig:
    platform: str
    preset: str
    node_count: int
    boot_disk_gib: int


@dataclass(frozen=True)
class StackConfig:
    cluster: ClusterConfig
    system_nodes: SystemNodeGroupConfig
    gpu_node_groups: tuple[GpuNodeGroupConfig, ...]
    infiniband_fabric: Optional[str]
    protect: bool
    node_service_account_id: Optional[str]
    driver: DraDriverConfig
    claims: ClaimsConfig = NO_CLAIMS

    @property
    def infiniband_groups(self) -> tuple[GpuNodeGroupConfig, ...]:
        return tuple(group for group in self.gpu_node_groups if group.infiniband)


class RawConfig:
    """Typed reads over the raw strings, each failure recorded against its key."""

    def __init__(self, raw: Mapping[str, str], problems: ConfigProblems) -> None:
        self.raw = raw
        self.problems = problems

    def _value(self, key: str) -> Optional[str]:
        value = self.raw.get(key)
        return None if value is None or value == "" else value

    def text(self, key: str, required: bool = False) -> Optional[str]:
        value = self._value(key)
        if value is None and required:
            self.problems.add(config_key(key), f"is required: set it with `pulumi config set {config_key(key)} <value>`")
        return value

    def integer(self, key: str, minimum: int) -> int:
        value = self._value(key)
        try:
            number = int(str(value))
        except ValueError:
            self.problems.add(config_key(key), f"got {shown(value)}; expected a whole number >= {minimum}")
            return minimum
        if number < minimum:
            self.problems.add(config_key(key), f"got {number}; expected a whole number >= {minimum}")
        return number

    def boolean(self, key: str) -> bool:
        value = str(self._value(key)).lower()
        if value not in ("true", "false"):
            self.problems.add(config_key(key), f"got {shown(self.raw.get(key))}; expected true or false")
        return value == "true"

    def structured(self, key: str, default: Any) -> Any:
        value = self._value(key)
        if value is None:
            return default
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            self.problems.add(config_key(key), f"got {shown(value)}, which is not structured YAML/JSON; set it in the stack file as a YAML list or map")
            return default


def parse_kubernetes_version(version: Optional[str], problems: ConfigProblems) -> str:
    key = config_key("kubernetesVersion")
    allowed = 'MAJOR.MINOR (for example "1.34") or MAJOR.MINOR-nebius-node.N, at least 1.34'
    if version is None:
        problems.add(key, f"is required; allowed: {allowed}")
        return ""
    patch = PATCH_VERSION_PATTERN.match(version)
    if patch:
        problems.add(key, f"got {shown(version)}: Nebius mk8s takes no patch version; write \"{patch.group(1)}.{patch.group(2)}\" (allowed: {allowed})")
        return version
    match = VERSION_PATTERN.match(version)
    if not match:
        problems.add(key, f"got {shown(version)}; allowed: {allowed}")
        return version
    if (int(match.group(1)), int(match.group(2))) < MIN_KUBERNETES:
        hint = " (an unquoted 1.30 in YAML reads as 1.3: quote the version)" if re.match(r"^\d+\.\d$", version) else ""
        problems.add(key, f"got {shown(version)}: DRA's resource.k8s.io/v1 API is GA from Kubernetes 1.34, so the stack needs 1.34 or later; write \"1.34\"{hint}")
    return version


def _whole(entry: Mapping[str, Any], field_name: str, minimum: int, where: str, problems: ConfigProblems) -> Optional[int]:
    value = entry.get(field_name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value or value < minimum:
        problems.add(where, f"{field_name} got {shown(value)}; expected a whole number >= {minimum}")
        return None
    return int(value)


def _parse_labels(value: Any, where: str, problems: ConfigProblems) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.add(where, f"labels got {shown(value)}; expected a map of label key to string value")
        return {}
    labels: dict[str, str] = {}
    for key, label_value in value.items():
        if not valid_label_key(key):
            problems.add(where, f"label key {shown(key)} is malformed; {LABEL_KEY_RULE}")
        elif not isinstance(label_value, str) or not valid_label_value(label_value):
            problems.add(where, f"label {key} got {shown(label_value)}; {LABEL_VALUE_RULE}")
        elif key in RESERVED_GPU_LABELS and label_value != RESERVED_GPU_LABELS[key]:
            problems.add(where, f"label {key} is set by the stack to {shown(RESERVED_GPU_LABELS[key])} so the DRA kubelet plugin finds the node; remove it")
        else:
            labels[key] = label_value
    return labels


def _parse_taints(value: Any, where: str, problems: ConfigProblems) -> tuple[Taint, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.add(where, f"taints got {shown(value)}; expected a list of {{key, value, effect}}")
        return ()
    taints = []
    for index, item in enumerate(value):
        spot = f"taints[{index}]"
        if not isinstance(item, dict) or set(item) - {"key", "value", "effect"} or "key" not in item or "effect" not in item:
            problems.add(where, f"{spot} got {shown(item)}; expected {{key, value, effect}} (value may be empty)")
            continue
        key, taint_value, effect = item["key"], item.get("value", ""), item["effect"]
        if not isinstance(key, str) or not valid_label_key(key):
            problems.add(where, f"{spot}.key {shown(key)} is malformed; {LABEL_KEY_RULE}")
        elif not isinstance(taint_value, str) or not valid_label_value(taint_value):
            problems.add(where, f"{spot}.value got {shown(taint_value)}; {LABEL_VALUE_RULE}")
        elif effect not in TAINT_EFFECTS:
            problems.add(where, f"{spot}.effect got {shown(effect)}; allowed: {', '.join(TAINT_EFFECTS)}")
        else:
            taints.append(Taint(key=key, value=taint_value, effect=effect))
    return tuple(taints)


def _parse_scaling(entry: Mapping[str, Any], where: str, problems: ConfigProblems) -> tuple[Optional[int], Optional[Autoscaling]]:
    has_fixed, has_autoscaling = "fixedNodeCount" in entry, "autoscaling" in entry
    if has_fixed == has_autoscaling:
        given = "both" if has_fixed else "neither"
        problems.add(where, f"set exactly one of fixedNodeCount or autoscaling: {{min, max}}; got {given}")
        return None, None
    if has_fixed:
        return _whole(entry, "fixedNodeCount", 1, where, problems), None
    scaling = entry["autoscaling"]
    if not isinstance(scaling, dict) or set(scaling) != {"min", "max"}:
        problems.add(where, f"autoscaling got {shown(scaling)}; expected {{min: N, max: M}}")
        return None, None
    low = _whole(scaling, "min", 0, f"{where} autoscaling", problems)
    high = _whole(scaling, "max", 1, f"{where} autoscaling", problems)
    if low is None or high is None:
        return None, None
    if low == 0:
        problems.add(where, "autoscaling.min is 0, but the cluster autoscaler cannot scale a group whose pods claim DRA devices up from zero nodes (it cannot see the devices a node would publish); set min to 1 or more")
    if low > high:
        problems.add(where, f"autoscaling.min ({low}) is greater than autoscaling.max ({high})")
    return None, Autoscaling(min_nodes=low, max_nodes=high)


def _parse_gpu_group(entry: Any, index: int, problems: ConfigProblems) -> Optional[GpuNodeGroupConfig]:
    key = config_key("gpuNodeGroups")
    label = entry.get("name") if isinstance(entry, dict) and isinstance(entry.get("name"), str) else f"[{index}]"
    where = f"{key} entry {label}"
    if not isinstance(entry, dict):
        problems.add(key, f"entry [{index}] got {shown(entry)}; expected a map with name, platform, preset, ...")
        return None
    unknown = sorted(set(entry) - GPU_GROUP_FIELDS)
    if unknown:
        problems.add(where, f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(GPU_GROUP_FIELDS))}")
    name = entry.get("name")
    if not isinstance(name, str) or not GROUP_NAME_PATTERN.match(name):
        problems.add(where, f"name got {shown(name)}; expected lowercase letters, digits and '-', starting with a letter, at most 32 characters")
    platform = entry.get("platform")
    if not isinstance(platform, str) or not platform.startswith("gpu-"):
        problems.add(where, f"platform got {shown(platform)}; gpuNodeGroups takes GPU platforms only (gpu-h100-sxm, gpu-h200-sxm, gpu-b200-sxm-a, gpu-b300-sxm, ...); CPU nodes belong in the system node group")
    preset = entry.get("preset")
    if not isinstance(preset, str) or not GPU_PRESET_PATTERN.match(preset):
        problems.add(where, f"preset got {shown(preset)}; expected a GPU preset such as 8gpu-128vcpu-1600gb or 1gpu-16vcpu-200gb")
    drivers_preset = entry.get("driversPreset")
    if drivers_preset is not None and (not isinstance(drivers_preset, str) or not DRIVERS_PRESET_PATTERN.match(drivers_preset)):
        problems.add(where, f"driversPreset got {shown(drivers_preset)}; expected a Nebius driver preset such as cuda13.0, or leave it out to have the GPU Operator install the driver")
    infiniband = entry.get("infiniband", False)
    if not isinstance(infiniband, bool):
        problems.add(where, f"infiniband got {shown(infiniband)}; expected true or false")
    boot_disk = _whole(entry, "bootDiskSizeGib", 64, where, problems) if "bootDiskSizeGib" in entry else 200
    fixed, autoscaling = _parse_scaling(entry, where, problems)
    return GpuNodeGroupConfig(
        name=name if isinstance(name, str) else "",
        platform=platform if isinstance(platform, str) else "",
        preset=preset if isinstance(preset, str) else "",
        fixed_node_count=fixed,
        autoscaling=autoscaling,
        drivers_preset=drivers_preset if isinstance(drivers_preset, str) else None,
        infiniband=infiniband is True,
        boot_disk_gib=boot_disk or 200,
        labels=_parse_labels(entry.get("labels"), where, problems),
        taints=_parse_taints(entry.get("taints"), where, problems),
    )


def parse_gpu_node_groups(value: Any, problems: ConfigProblems) -> tuple[GpuNodeGroupConfig, ...]:
    key = config_key("gpuNodeGroups")
    if not isinstance(value, list) or not value:
        problems.add(key, f"got {shown(value)}; expected a non-empty list of GPU node groups in the stack file")
        return ()
    groups = [group for index, entry in enumerate(value) if (group := _parse_gpu_group(entry, index, problems))]
    seen: set[str] = set()
    for group in groups:
        if group.name in seen:
            problems.add(key, f"name {shown(group.name)} is used by more than one group; names must be unique")
        seen.add(group.name)
    return tuple(groups)


def parse_stack_config(raw: Mapping[str, str], stack: str) -> StackConfig:
    """Turns the raw config into a `StackConfig`, or raises one error listing every problem."""
    problems = ConfigProblems()
    read = RawConfig(raw, problems)
    cluster = ClusterConfig(
        name=read.text("clusterName") or f"dra-{stack}",
        parent_id=read.text("parentId", required=True) or "",
        subnet_id=read.text("subnetId", required=True) or "",
        kubernetes_version=parse_kubernetes_version(read.text("kubernetesVersion"), problems),
        etcd_cluster_size=read.integer("etcdClusterSize", 1),
        public_endpoint=read.boolean("publicEndpoint"),
        nebius_profile=read.text("nebiusProfile"),
    )
    if cluster.etcd_cluster_size not in ETCD_SIZES:
        problems.add(config_key("etcdClusterSize"), f"got {cluster.etcd_cluster_size}; allowed: {', '.join(map(str, ETCD_SIZES))} (3 for production)")
    system_nodes = SystemNodeGroupConfig(
        platform=read.text("systemNodePlatform", required=True) or "",
        preset=read.text("systemNodePreset", required=True) or "",
        node_count=read.integer("systemNodeCount", 1),
        boot_disk_gib=read.integer("systemNodeBootDiskGib", 64),
    )
    if system_nodes.platform.startswith("gpu-"):
        problems.add(config_key("systemNodePlatform"), f"got {shown(system_nodes.platform)}; the system node group runs controllers and needs a CPU platform such as cpu-d3")
    gpu_groups = parse_gpu_node_groups(read.structured("gpuNodeGroups", None), problems)
    fabric = read.text("infinibandFabric")
    for group in gpu_groups:
        if group.infiniband and fabric is None:
            problems.add(f"{config_key('gpuNodeGroups')} entry {group.name}", f"infiniband is true but {config_key('infinibandFabric')} is not set; set it to the fabric of your GPU platform and region (for example fabric-3)")
    config = StackConfig(
        cluster=cluster,
        system_nodes=system_nodes,
        gpu_node_groups=gpu_groups,
        infiniband_fabric=fabric,
        protect=read.boolean("protect"),
        node_service_account_id=read.text("nodeServiceAccountId"),
        driver=parse_driver_config(read, gpu_groups, problems),
        claims=parse_claims_config(read, gpu_groups, problems),
    )
    problems.raise_if_any()
    return config


def load_yaml_file(path: Path) -> Any:
    """Safe YAML through libyaml when the PyYAML wheel has it: the pure-Python parser costs a plan ~30 ms a file."""
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def project_config_keys(project_file: Path) -> list[str]:
    """The keys `Pulumi.yaml` declares, without the namespace: the one list of what the stack reads."""
    declared = load_yaml_file(project_file).get("config", {})
    return [key.split(":", 1)[1] for key in declared if key.startswith(f"{NAMESPACE}:")]


def read_raw_config(config: pulumi.Config, project_file: Path) -> dict[str, str]:
    return {key: value for key in project_config_keys(project_file) if (value := config.get(key)) is not None}
