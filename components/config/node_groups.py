"""GPU node groups from `gpuNodeGroups`: the rules beyond each field's shape.

The schema has checked every field's type, pattern and bound; here are the rules that need
several fields or the whole stack: one of fixed size or autoscaling, InfiniBand only on
8-GPU presets with a fabric, a platform Nebius lists (`components/gpu_platforms.py`) and a preset it offers there
(`components/resource_presets.py`), labels the stack owns or Nebius ignores, repeated taints, and
names that must stay unique and within Nebius's 63 characters once prefixed. Roll-out
strategy, auto-repair and capacity have their rules in `rollout.py`, shared with the system group.
"""

from __future__ import annotations

from collections.abc import Sequence

from components.config.capacity import parse_capacity
from components.config.errors import ConfigProblems, config_key, did_you_mean, shown, shown_name
from components.config.rollout import check_reserved_surge, parse_auto_repair, parse_strategy
from components.dra_constants import RESERVED_GPU_LABELS
from components.gpu_platforms import GPU_PLATFORMS, GPU_PLATFORMS_READ, TABLE_FILE
from components.input.node_groups import GpuNodeGroupInput, TaintInput
from components.labels import gpu_node_labels, system_node_labels
from components.model import GPU_ROLLOUT, Autoscaling, GpuNodeGroupConfig, NodeRange, Taint
from components.resource_presets import unoffered_preset

NAME_LIMIT = 63  # Nebius: names of clusters, node groups and GPU clusters are 1-63 characters.
INFINIBAND_GPUS = 8  # Nebius GPU clusters (InfiniBand fabrics) take only 8-GPU presets.
# Nebius ignores node labels whose key contains these (pulumi-nebius 0.6.73, template.metadata.labels).
IGNORED_LABEL_PARTS = ("kubernetes.io", "k8s.io")
SYSTEM_GROUP = "system"


def _where(name: str) -> str:
    return f"{config_key('gpuNodeGroups')} entry {shown_name(name)}"


def _scaling(entry: GpuNodeGroupInput, problems: ConfigProblems) -> tuple[int | None, Autoscaling | None]:
    where = _where(entry.name)
    if (entry.fixedNodeCount is None) == (entry.autoscaling is None):
        given = "neither" if entry.fixedNodeCount is None else "both"
        problems.add(where, f"set exactly one of fixedNodeCount or autoscaling: {{min, max}}; got {given}")
        return None, None
    if entry.autoscaling is None:
        return entry.fixedNodeCount, None
    low, high = entry.autoscaling.min, entry.autoscaling.max
    if low == 0:
        problems.add(
            where,
            "autoscaling.min is 0, but the cluster autoscaler cannot scale a group whose pods claim DRA devices up "
            "from zero nodes (it cannot see the devices a node would publish); set min to 1 or more",
        )
    if low > high:
        problems.add(where, f"autoscaling.min ({low}) is greater than autoscaling.max ({high})")
    return None, Autoscaling(min_nodes=low, max_nodes=high)


def _labels(entry: GpuNodeGroupInput, problems: ConfigProblems) -> dict[str, str]:
    labels = {}
    # The labels the stack sets on this group's nodes, from the one function that sets them: a user's value under one
    # of these keys would be overwritten silently.
    stack_labels = gpu_node_labels(entry.name, entry.driversPreset is not None, {})
    for key, value in entry.labels.items():
        if key in RESERVED_GPU_LABELS and value != RESERVED_GPU_LABELS[key]:
            problems.add(
                _where(entry.name),
                f"label {key} is set by the stack to {shown(RESERVED_GPU_LABELS[key])} so the DRA kubelet plugin finds the node; remove it",
            )
        elif key in stack_labels and value != stack_labels[key]:
            problems.add(
                _where(entry.name),
                f"label {key} is set by the stack to {shown(stack_labels[key])} on this group's nodes; remove it",
            )
        elif key in system_node_labels():
            # The system nodes' label is the node selector of the controllers that must avoid GPU nodes.
            problems.add(
                _where(entry.name),
                f"label {key} marks the stack's system nodes, where controllers that must avoid GPU nodes are placed; "
                "remove it",
            )
        elif any(part in key for part in IGNORED_LABEL_PARTS):
            problems.add(
                _where(entry.name),
                f"label key {shown(key)} contains {' or '.join(IGNORED_LABEL_PARTS)}: Nebius ignores such node labels "
                "(pulumi-nebius Mk8sV1NodeGroup template.metadata.labels), so it would never reach the nodes; use another prefix",
            )
        else:
            labels[key] = value
    return labels


def _taints(entry: GpuNodeGroupInput, problems: ConfigProblems) -> tuple[Taint, ...]:
    seen: dict[tuple[str, str], TaintInput] = {}
    for index, taint in enumerate(entry.taints):
        if (taint.key, taint.effect) in seen:
            problems.add(
                _where(entry.name),
                f"taints[{index}] repeats key {taint.key} with effect {taint.effect}; a node holds one taint per key and effect",
            )
        seen[(taint.key, taint.effect)] = taint
    return tuple(Taint(key=t.key, value=t.value, effect=t.effect) for t in seen.values())


def _group(entry: GpuNodeGroupInput, fabric: str, problems: ConfigProblems) -> GpuNodeGroupConfig:
    where = _where(entry.name)
    known = ", ".join(GPU_PLATFORMS)
    if not entry.platform.startswith("gpu-"):
        problems.add(
            where,
            f"platform got {shown(entry.platform)}; gpuNodeGroups takes GPU platforms only ({known}); CPU nodes "
            "belong in the system node group",
        )
    elif entry.platform not in GPU_PLATFORMS:
        problems.add(
            where,
            f"platform got {shown(entry.platform)}, which is no GPU platform Nebius lists{did_you_mean(entry.platform, GPU_PLATFORMS)} "
            f"(known: {known}; {TABLE_FILE.relative_to(TABLE_FILE.parents[2])}, read {GPU_PLATFORMS_READ}: add a new "
            "platform there with its source)",
        )
    elif (unoffered := unoffered_preset(entry.platform, entry.preset)) is not None:
        problems.add(where, f"preset got {unoffered}")
    fixed, autoscaling = _scaling(entry, problems)
    smallest = NodeRange.of(fixed, autoscaling).smallest
    # Named in the problems that read it, so that they wait while the count is refused and a default stands in.
    size_from = (
        "autoscaling.min"
        if autoscaling
        else "fixedNodeCount"
        if fixed is not None
        else "fixedNodeCount or autoscaling.min"
    )
    strategy = parse_strategy(entry.strategy, GPU_ROLLOUT, smallest, size_from, where, problems)
    capacity = parse_capacity(entry.capacity, where, problems)
    check_reserved_surge(capacity, strategy, smallest, size_from, where, problems)
    group = GpuNodeGroupConfig(
        settings=entry,
        fixed_node_count=fixed,
        autoscaling=autoscaling,
        labels=_labels(entry, problems),
        taints=_taints(entry, problems),
        strategy=strategy,
        auto_repair=parse_auto_repair(entry.autoRepair, where, problems),
        capacity=capacity,
    )
    if group.infiniband and not fabric:
        problems.add(
            where,
            f"infiniband is true but {config_key('infinibandFabric')} is not set; set it to the fabric of your GPU "
            "platform and region (for example fabric-3)",
        )
    if group.infiniband and group.gpus_per_node != INFINIBAND_GPUS:
        problems.add(
            where,
            f"infiniband is true on preset {group.preset}, but Nebius GPU clusters take only {INFINIBAND_GPUS}-GPU presets "
            "(such as 8gpu-128vcpu-1600gb); use one or set infiniband: false",
        )
    return group


def parse_gpu_node_groups(
    entries: Sequence[GpuNodeGroupInput], fabric: str, problems: ConfigProblems
) -> tuple[GpuNodeGroupConfig, ...]:
    groups = tuple(_group(entry, fabric, problems) for entry in entries)
    seen: set[str] = set()
    for group in groups:
        if group.name in seen:
            problems.add(
                config_key("gpuNodeGroups"),
                f"name {shown(group.name)} is used by more than one group; names must be unique",
            )
        seen.add(group.name)
    return groups


def check_node_group_names(
    cluster_name: str, groups: Sequence[GpuNodeGroupConfig], fabric: str, problems: ConfigProblems
) -> None:
    """The names the stack gives Nebius, `<cluster>-<group>` and `<cluster>-<fabric>`, stay unique and within 63."""
    for group in groups:
        if group.name == SYSTEM_GROUP:
            problems.add(
                _where(group.name),
                f"name {SYSTEM_GROUP} would give the node group {cluster_name}-{SYSTEM_GROUP}, the name of the system node "
                "group; choose another name",
            )
    names = [*(f"{cluster_name}-{group.name}" for group in groups), f"{cluster_name}-{SYSTEM_GROUP}"]
    if fabric and any(group.infiniband for group in groups):
        names.append(f"{cluster_name}-{fabric}")
    too_long = [name for name in names if len(name) > NAME_LIMIT]
    if too_long:
        problems.add(
            config_key("clusterName"),
            f"gives Nebius names longer than {NAME_LIMIT} characters: {', '.join(too_long)}; shorten clusterName "
            "(empty means dra-<stack>) or the group names",
        )
