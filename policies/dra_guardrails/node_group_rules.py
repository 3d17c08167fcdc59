"""Rules on node groups: DRA labels, autoscaling of InfiniBand and DRA groups, roll-out strategy, spot with InfiniBand, driver presets."""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .consequences import consequences_of
from .driver_presets import DRIVER_PRESETS, DRIVER_PRESETS_READ
from .framework import PolicyConfigError
from .planned import (
    CLUSTER_VERSION,
    NODE_GROUP_TYPE,
    PlannedResource,
    as_json,
    field_at,
    has_key,
    is_dra_gpu_node_group,
    is_gpu_node_group,
    is_infiniband_dra_node_group,
    listing,
    named,
    planned_number,
)
from .quoting import shown


def check_gpu_node_group_dra(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    if not is_gpu_node_group(resource) or is_dra_gpu_node_group(resource):
        return []
    platform = field_at(resource.props, "template", "resources", "platform")
    [change] = consequences_of(NODE_GROUP_TYPE, "template.gpuSettings.dra")
    return [
        f"{named(resource)} (platform {shown(platform)}) does not set template.gpuSettings.dra = true: its GPUs stay "
        "with the legacy device plugin, the DRA driver publishes none of them, and network claims fail with "
        f'"cannot allocate all claims". Set template.gpuSettings.dra = true (a change of it: {change.effect.value}).'
    ]


def check_infiniband_autoscaling(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    if not is_infiniband_dra_node_group(resource) or not isinstance(field_at(resource.props, "autoscaling"), Mapping):
        return []
    low = planned_number(resource, "autoscaling", "minNodeCount") or 0
    high = planned_number(resource, "autoscaling", "maxNodeCount") or 0
    return [
        f"{named(resource)} is an InfiniBand DRA group that autoscales ({low:g}..{high:g}): a Nebius measurement "
        "(solutions-library, 2026-10) saw the cluster autoscaler never add InfiniBand DRA nodes, so plan on "
        "minNodeCount nodes only, or use fixedNodeCount for training fabrics."
    ]


# A team's own record of `get-compatibility-matrix`: what the table does not list yet, with the day it was checked.
CHECKED_PRESET_FIELDS = {
    # No leading zero, as minimumVersion (cluster_rules.py): "1.034" names no minor, so its entry matched nothing.
    "kubernetesVersion": re.compile(r"^(0|[1-9][0-9]{0,2})\.(0|[1-9][0-9]{0,2})$"),
    "platform": re.compile(r"^gpu-[a-z0-9][a-z0-9-]{0,61}$"),
    "driversPreset": re.compile(r"^cuda[0-9]{1,3}(\.[0-9]{1,3})?$"),
    "checkedOn": re.compile(r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$"),
}
# What each field of an entry looks like, for the refusal of one that is missing or malformed.
CHECKED_PRESET_FORMS = {
    "kubernetesVersion": 'the cluster\'s MAJOR.MINOR, such as "1.34"',
    "platform": 'a GPU platform, gpu-<name>, such as "gpu-h200-sxm"',
    "driversPreset": 'cuda<MAJOR> or cuda<MAJOR>.<MINOR>, such as "cuda13.0" or "cuda12"',
    "checkedOn": 'the day of the check, YYYY-MM-DD (UTC), not after today, such as "2026-11-30"',
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


def _wrong_field(key: str, entry: Mapping[str, Any]) -> str:
    if key not in CHECKED_PRESET_FIELDS:
        return (
            f'"{shown(str(key))}" is not a field of an entry (its fields: {", ".join(sorted(CHECKED_PRESET_FIELDS))})'
        )
    if key not in entry:
        return f"{key} is missing: {CHECKED_PRESET_FORMS[key]}"
    return f"{key} got {shown(as_json(entry[key]))}: expected {CHECKED_PRESET_FORMS[key]}"


def _checked_presets(config: Mapping[str, Any], today: datetime.date | None = None) -> set[tuple[str, str, str]]:
    """(minor, platform, preset) of each `checkedPresets` entry; PolicyConfigError names a malformed one, or one
    checked after `today` (the UTC day, by default)."""
    today = today or datetime.datetime.now(datetime.UTC).date()
    entries = config.get("checkedPresets", [])
    expected = f"expected a list of objects like {as_json(CHECKED_PRESET_EXAMPLE)}"
    if not isinstance(entries, Sequence) or isinstance(entries, str):
        raise PolicyConfigError(f"gpu-drivers-preset-known: checkedPresets {expected}, got {shown(as_json(entries))}")
    first_of: dict[tuple[str, str, str], int] = {}
    for index, entry in enumerate(entries):
        where = f"gpu-drivers-preset-known: checkedPresets entry {index}"
        if not isinstance(entry, Mapping):
            raise PolicyConfigError(f"{where}: {expected}, got {shown(as_json(entry))}")
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
            # Each wrong field named with what it must look like; the entry is not echoed whole (a value of it may
            # be a credential pasted by mistake: `shown` quotes each field's value).
            details = "; ".join(_wrong_field(key, entry) for key in wrong)
            raise PolicyConfigError(
                f"{where} ({', '.join(wrong)} missing, unknown or malformed): {details}; {expected}"
            )
        if not _is_calendar_day(entry["checkedOn"]):
            raise PolicyConfigError(f'{where}: checkedOn "{shown(entry["checkedOn"])}" is not a day of the calendar')
        if datetime.date.fromisoformat(entry["checkedOn"]) > today:
            raise PolicyConfigError(
                f'{where}: checkedOn "{entry["checkedOn"]}" is after today ({today.isoformat()}, UTC); a check is '
                f"recorded on the day it was made: {CHECKED_PRESET_FORMS['checkedOn']}"
            )
        preset = (entry["kubernetesVersion"], entry["platform"], entry["driversPreset"])
        if preset in first_of:
            # A second record of one preset changes nothing the rule decides: it is a paste or a stale check left beside
            # a new one, and which checkedOn stands would be the reader's guess.
            raise PolicyConfigError(
                f'{where} repeats entry {first_of[preset]}: both record kubernetesVersion "{shown(preset[0])}", platform '
                f'"{shown(preset[1])}", driversPreset "{shown(preset[2])}"; keep one entry per preset, with the day of the '
                "latest check"
            )
        first_of[preset] = index
    return set(first_of)


def check_gpu_drivers_preset_known(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    checked = _checked_presets(config)
    preset = field_at(resource.props, "template", "gpuSettings", "driversPreset")
    version = field_at(resource.props, "version")
    if not is_gpu_node_group(resource) or not isinstance(preset, str) or not isinstance(version, str):
        return []
    match = CLUSTER_VERSION.match(version)
    if match is None:
        return []
    minor = f"{match['major']}.{match['minor']}"
    platform = field_at(resource.props, "template", "resources", "platform")
    row = DRIVER_PRESETS.get(minor)
    listed = None if row is None else row.get(platform)
    if (listed is not None and preset in listed) or (minor, platform, preset) in checked:
        return []
    if row is None:
        found = f"has no row for {minor} (its rows: {listing(sorted(DRIVER_PRESETS))})"
    elif listed is None:
        found = f"lists no preinstalled-driver image for {shown(platform)} on {minor}"
    else:
        found = f"lists only {listing(listed)} for {shown(platform)} on {minor}"
    return [
        f'{named(resource)} asks for driversPreset "{shown(preset)}" on {shown(platform)} with Kubernetes {minor}; the '
        "dated table "
        f"of Nebius driver presets (read {DRIVER_PRESETS_READ}) {found}. Confirm the preset before `pulumi up` with "
        f"`nebius mk8s node-group get-compatibility-matrix --cluster-kubernetes-version {minor} --platform {shown(platform)}` "
        "and record what it lists in this policy's checkedPresets setting, or leave driversPreset out to have the GPU "
        "Operator install the driver."
    ]


def check_dra_autoscaling_minimum(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    if not is_dra_gpu_node_group(resource) or not isinstance(field_at(resource.props, "autoscaling"), Mapping):
        return []
    minimum = planned_number(resource, "autoscaling", "minNodeCount") or 0
    if minimum >= 1:
        return []
    return [
        f"{named(resource)} autoscales from autoscaling.minNodeCount {minimum:g}: the cluster autoscaler cannot scale "
        "a DRA group up from zero nodes, so pods that claim its GPUs stay Pending for ever. Set autoscaling.minNodeCount "
        "to at least 1 (in this project: autoscaling.min of the gpuNodeGroups entry)."
    ]


# Nebius's node-group strategy defaults change in Q3 2026 (pulumi-nebius 0.6.73 Mk8sV1NodeGroupStrategyArgs):
# drain timeout 0 -> 10m, max surge 1 -> 0, max unavailable 0 -> 1.
STRATEGY_FIELDS = ("maxSurge", "maxUnavailable", "drainTimeout")
STRATEGY_DEFAULTS_CHANGE = "drain timeout 0 -> 10m, max surge 1 -> 0, max unavailable 0 -> 1"


def _amount_is_set(amount: Any) -> bool:
    return has_key(amount, "count") or has_key(amount, "percent")


def check_gpu_node_group_strategy(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    if not is_gpu_node_group(resource):
        return []
    strategy = field_at(resource.props, "strategy")
    missing = [
        key
        for key in STRATEGY_FIELDS
        if not (has_key(strategy, key) if key == "drainTimeout" else _amount_is_set(field_at(strategy, key)))
    ]
    if not missing:
        return []
    return [
        f"{named(resource)} leaves strategy.{', strategy.'.join(missing)} to Nebius's defaults, which change in Q3 2026 "
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
        amount = f"{percent:g}%" if percent else f"{count:g}"
        given = f"strategy.maxSurge {amount}"
    else:
        given = "no strategy.maxSurge, so Nebius's default (1 until Q3 2026)"
    return [
        f"{named(resource)} runs on reserved capacity with reservationPolicy STRICT and has {given}: every surge node "
        "must come from a free block of the reservation, and when the reservation is fully used the roll-out stalls "
        "(Nebius solutions-library PR #1091). Set strategy.maxSurge to 0 and maxUnavailable to 1 or more (in this "
        "project: strategy of the gpuNodeGroups entry)."
    ]


def check_spot_infiniband(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    template = field_at(resource.props, "template")
    if not is_gpu_node_group(resource) or not (has_key(template, "preemptible") and has_key(template, "gpuCluster")):
        return []
    return [
        f"{named(resource)} runs preemptible (spot) VMs in an InfiniBand GPU cluster: Nebius may stop a node with 60 "
        "seconds' notice, and a multi-node job over the fabric then restarts as a whole from its last checkpoint, so "
        "every preemption costs the whole job's progress since then. Prefer reserved or on-demand capacity for the "
        "fabric group and keep spot for single-node work (in this project: capacity of the gpuNodeGroups entry)."
    ]
