"""GPU node groups from `gpuNodeGroups`: names, platforms, presets, scaling, labels and taints."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from components.config.errors import ConfigProblems, config_key, shown
from components.dra_constants import RESERVED_GPU_LABELS, TAINT_EFFECTS
from components.labels import LABEL_KEY_RULE, LABEL_VALUE_RULE, valid_label_key, valid_label_value
from components.model import GPU_PRESET_PATTERN, Autoscaling, GpuNodeGroupConfig, Taint

DRIVERS_PRESET_PATTERN = re.compile(r"^cuda\d+(\.\d+)?$")
GROUP_NAME_PATTERN = re.compile(r"^[a-z]([a-z0-9-]{0,30}[a-z0-9])?$")
GPU_GROUP_FIELDS = {
    "name",
    "platform",
    "preset",
    "fixedNodeCount",
    "autoscaling",
    "driversPreset",
    "infiniband",
    "bootDiskSizeGib",
    "labels",
    "taints",
}


def _whole(entry: Mapping[str, Any], field_name: str, minimum: int, where: str, problems: ConfigProblems) -> int | None:
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
            problems.add(
                where,
                f"label {key} is set by the stack to {shown(RESERVED_GPU_LABELS[key])} so the DRA kubelet plugin finds the node; remove it",
            )
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
        if (
            not isinstance(item, dict)
            or set(item) - {"key", "value", "effect"}
            or "key" not in item
            or "effect" not in item
        ):
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


def _parse_scaling(
    entry: Mapping[str, Any], where: str, problems: ConfigProblems
) -> tuple[int | None, Autoscaling | None]:
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
        problems.add(
            where,
            "autoscaling.min is 0, but the cluster autoscaler cannot scale a group whose pods claim DRA devices up from zero nodes (it cannot see the devices a node would publish); set min to 1 or more",
        )
    if low > high:
        problems.add(where, f"autoscaling.min ({low}) is greater than autoscaling.max ({high})")
    return None, Autoscaling(min_nodes=low, max_nodes=high)


def _parse_gpu_group(entry: Any, index: int, problems: ConfigProblems) -> GpuNodeGroupConfig | None:
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
        problems.add(
            where,
            f"name got {shown(name)}; expected lowercase letters, digits and '-', starting with a letter, at most 32 characters",
        )
    platform = entry.get("platform")
    if not isinstance(platform, str) or not platform.startswith("gpu-"):
        problems.add(
            where,
            f"platform got {shown(platform)}; gpuNodeGroups takes GPU platforms only (gpu-h100-sxm, gpu-h200-sxm, gpu-b200-sxm-a, gpu-b300-sxm, ...); CPU nodes belong in the system node group",
        )
    preset = entry.get("preset")
    if not isinstance(preset, str) or not GPU_PRESET_PATTERN.match(preset):
        problems.add(
            where, f"preset got {shown(preset)}; expected a GPU preset such as 8gpu-128vcpu-1600gb or 1gpu-16vcpu-200gb"
        )
    drivers_preset = entry.get("driversPreset")
    if drivers_preset is not None and (
        not isinstance(drivers_preset, str) or not DRIVERS_PRESET_PATTERN.match(drivers_preset)
    ):
        problems.add(
            where,
            f"driversPreset got {shown(drivers_preset)}; expected a Nebius driver preset such as cuda13.0, or leave it out to have the GPU Operator install the driver",
        )
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
