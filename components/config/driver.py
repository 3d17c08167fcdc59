"""Which NVIDIA DRA driver chart to install, where, and whether the GPU Operator installs the GPU driver.

Two chart lines are supported: `nvidia-dra-driver-gpu` (the name the Nebius guide installs,
last released as 25.12.0) and its successor `dra-driver-nvidia-gpu` (0.4.x). The driver
mode follows from the GPU node groups: a group with a Nebius drivers preset runs the
driver shipped in the image; a group without one needs the GPU Operator to install it.
Everything is checked here, so a bad combination stops the program before any resource
is registered.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components.config.errors import ConfigProblems, config_key, shown
from components.config.raw import RawConfig
from components.dra_constants import (
    DEFAULT_DRIVER_NAMESPACE,
    GPU_OPERATOR_VERSION,
    HOST_DRIVER_ROOT,
    KUBERNETES_OCI_REPOSITORY,
    LEGACY_CHART,
    NETWORK_OPERATOR_VERSION,
    NGC_REPOSITORY,
    OPERANDS_OFF_LABEL,
    OPERATOR_DRIVER_ROOT,
    RENAMED_CHART,
    RESOURCE_API_VERSION,
)
from components.labels import DNS_LABEL, kubelet_plugin_node_selector, tolerations_for
from components.merge import deep_merge
from components.model import DraDriverConfig, GpuNodeGroupConfig, Taint

OPERATOR_VERSION_PATTERN = re.compile(r"^v?\d+\.\d+\.\d+$")
_MISSING = object()

GUARD_REASONS = {
    "gpuResourcesEnabledOverride": "must stay true: the chart refuses to serve GPUs without it, and DRA node groups have the legacy device plugin turned off",
    "resources.gpus.enabled": "must stay true: allocating GPUs through DRA is what the stack installs the driver for",
    "resources.computeDomains.enabled": "is set from nebius-dra:draComputeDomains; set that key instead",
    "resourceApiVersion": f"must stay {RESOURCE_API_VERSION}: the cluster serves DRA's GA API and the stack's claims use it",
    "nvidiaDriverRoot": "is set from nebius-dra:draDriverRoot (or from the driver mode); set that key instead",
    "nameOverride": "is set by the stack: the renamed chart keeps the old object names so an upgrade adopts them",
    "allowDefaultNamespace": "must stay unset: the driver gets a namespace of its own (nebius-dra:draDriverNamespace)",
    "kubeletPlugin.nodeSelector": "must stay the label every GPU node group carries, or the plugin lands on no GPU node",
    "kubeletPlugin.tolerations": "is derived from the taints of nebius-dra:gpuNodeGroups; add the taint to the group instead",
}


@dataclass(frozen=True)
class ChartLine:
    chart: str
    default_version: str
    version_pattern: re.Pattern[str]
    allowed_versions: str
    repositories: tuple[str, ...]


CHART_LINES = {
    LEGACY_CHART: ChartLine(
        LEGACY_CHART,
        "25.12.0",
        re.compile(r"^25\.12\.0$"),
        "25.12.0 (the last release under this name)",
        (NGC_REPOSITORY,),
    ),
    RENAMED_CHART: ChartLine(
        RENAMED_CHART,
        "0.4.1",
        re.compile(r"^0\.4\.\d+$"),
        "0.4.x, for example 0.4.1",
        (NGC_REPOSITORY, KUBERNETES_OCI_REPOSITORY),
    ),
}


def _lookup(values: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(values, Mapping) or part not in values:
            return _MISSING
        values = values[part]
    return values


def guarded_values(driver: DraDriverConfig, gpu_taints: Iterable[Taint]) -> dict[str, Any]:
    """The values that make the driver serve GPUs on these node groups; no override may change them."""
    values: dict[str, Any] = {
        "gpuResourcesEnabledOverride": True,
        "resourceApiVersion": RESOURCE_API_VERSION,
        "nvidiaDriverRoot": driver.driver_root,
        "resources": {
            "gpus": {"enabled": True},
            "computeDomains": {"enabled": driver.compute_domains},
        },
        "kubeletPlugin": {
            "nodeSelector": kubelet_plugin_node_selector(),
            "tolerations": tolerations_for(gpu_taints),
        },
    }
    if driver.name_override:
        values["nameOverride"] = driver.name_override
    return values


def guarded_override_problems(driver: DraDriverConfig, gpu_taints: Iterable[Taint]) -> list[tuple[str, str]]:
    """(path, complaint) for every guarded value the user's overrides would change."""
    guarded = guarded_values(driver, gpu_taints)
    merged = deep_merge(guarded, driver.value_overrides)
    problems = []
    for path, reason in GUARD_REASONS.items():
        wanted, result = _lookup(guarded, path), _lookup(merged, path)
        if result is not wanted and result != wanted:
            given = "removes it" if result is _MISSING else f"sets it to {shown(result)}"
            problems.append((path, f"the override {given}, but it {reason}"))
    return problems


def _chart_line(read: RawConfig, problems: ConfigProblems) -> ChartLine:
    chart = read.text("draDriverChart") or LEGACY_CHART
    if chart not in CHART_LINES:
        problems.add(
            config_key("draDriverChart"), f"got {shown(chart)}; allowed: {LEGACY_CHART} (default) or {RENAMED_CHART}"
        )
        return CHART_LINES[LEGACY_CHART]
    return CHART_LINES[chart]


def _version(read: RawConfig, line: ChartLine, problems: ConfigProblems) -> str:
    version = read.text("draDriverVersion") or line.default_version
    if not line.version_pattern.match(version):
        problems.add(
            config_key("draDriverVersion"),
            f"got {shown(version)} for chart {line.chart}; allowed: {line.allowed_versions}",
        )
    return version


def _repository(read: RawConfig, line: ChartLine, problems: ConfigProblems) -> str:
    repository = (read.text("draDriverRepository") or NGC_REPOSITORY).rstrip("/")
    if repository not in line.repositories:
        problems.add(
            config_key("draDriverRepository"),
            f"got {shown(repository)} for chart {line.chart}; allowed: {' or '.join(line.repositories)}",
        )
    return repository


def _namespace(read: RawConfig, problems: ConfigProblems) -> str:
    namespace = read.text("draDriverNamespace") or DEFAULT_DRIVER_NAMESPACE
    key = config_key("draDriverNamespace")
    if namespace == "default":
        problems.add(
            key,
            f'got "default": the chart refuses to install into the default namespace, and the driver\'s privileged pods belong in a namespace of their own; use {DEFAULT_DRIVER_NAMESPACE}',
        )
    elif not DNS_LABEL.match(namespace):
        problems.add(
            key,
            f"got {shown(namespace)}; expected a namespace name: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit",
        )
    return namespace


def _operator_version(read: RawConfig, key: str, default: str, problems: ConfigProblems) -> str:
    version = read.text(key) or default
    if not OPERATOR_VERSION_PATTERN.match(version):
        problems.add(
            config_key(key),
            f"got {shown(version)}; expected an exact chart version such as {default} (ranges are not pinned)",
        )
    return version


def _check_mixed_modes(groups: Sequence[GpuNodeGroupConfig], problems: ConfigProblems) -> None:
    """The GPU Operator must not touch nodes whose image already ships the driver."""
    exposed = [
        group.name for group in groups if group.preinstalled_driver and group.labels.get(OPERANDS_OFF_LABEL) != "false"
    ]
    if exposed:
        problems.add(
            config_key("gpuNodeGroups"),
            f"groups {', '.join(exposed)} have a driversPreset while other groups leave the driver to the GPU Operator; "
            f"the Operator would also install its driver and toolkit on the preset nodes. Either give every group a driversPreset, "
            f'remove it from every group, or keep the Operator off the preset groups with labels: {{{OPERANDS_OFF_LABEL}: "false"}}',
        )


def _driver_root(read: RawConfig, groups: Sequence[GpuNodeGroupConfig], problems: ConfigProblems) -> str:
    key = config_key("draDriverRoot")
    given = read.text("draDriverRoot")
    if given is not None and not given.startswith("/"):
        problems.add(
            key,
            f"got {shown(given)}; expected an absolute path on the node, such as {HOST_DRIVER_ROOT} or {OPERATOR_DRIVER_ROOT}",
        )
    modes = {group.preinstalled_driver for group in groups}
    if given is None and len(modes) > 1:
        problems.add(
            key,
            f"is required when some GPU groups have a driversPreset and others do not: the DRA driver reads the GPU driver from one root on every node, "
            f"{HOST_DRIVER_ROOT} for preset images, {OPERATOR_DRIVER_ROOT} for the GPU Operator's driver; its kubelet plugin works only on the nodes whose driver lives there",
        )
    if given is not None:
        return given
    return HOST_DRIVER_ROOT if all(modes) else OPERATOR_DRIVER_ROOT


def _value_overrides(read: RawConfig, problems: ConfigProblems) -> dict[str, Any]:
    overrides = read.structured("draDriverValues", {})
    if not isinstance(overrides, dict):
        problems.add(config_key("draDriverValues"), f"got {shown(overrides)}; expected a map of chart values")
        return {}
    return overrides


def parse_driver_config(
    read: RawConfig, groups: Sequence[GpuNodeGroupConfig], problems: ConfigProblems
) -> DraDriverConfig:
    """Reads the driver keys; `groups` decides the driver mode and whether the Operators are needed."""
    line = _chart_line(read, problems)
    operator_groups = tuple(group for group in groups if not group.preinstalled_driver)
    if operator_groups:
        _check_mixed_modes(groups, problems)
    driver = DraDriverConfig(
        chart=line.chart,
        version=_version(read, line, problems),
        repository=_repository(read, line, problems),
        namespace=_namespace(read, problems),
        driver_root=_driver_root(read, groups, problems),
        compute_domains=read.boolean("draComputeDomains"),
        value_overrides=_value_overrides(read, problems),
        gpu_operator=bool(operator_groups),
        network_operator=any(group.infiniband for group in operator_groups),
        gpu_operator_version=_operator_version(read, "gpuOperatorVersion", GPU_OPERATOR_VERSION, problems),
        network_operator_version=_operator_version(read, "networkOperatorVersion", NETWORK_OPERATOR_VERSION, problems),
    )
    taints = [taint for group in groups for taint in group.taints]
    for path, message in guarded_override_problems(driver, taints):
        problems.add(config_key("draDriverValues"), f"{path}: {message}")
    return driver
