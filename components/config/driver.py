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
from dataclasses import dataclass, field
from typing import Any

from components.config.chart_keys import chart_keys, credential_shaped_paths, unknown_key_problems
from components.config.errors import ConfigProblems, config_key, refuse_repeats, shown
from components.config.guards import floating_tag_problems, override_problems
from components.config.namespaces import fixed_release_namespaces, refuse_taken_namespace
from components.config.repositories import chart_repository
from components.dra_constants import (
    DEFAULT_DRIVER_NAMESPACE,
    HOST_DRIVER_ROOT,
    KUBERNETES_OCI_REPOSITORY,
    LEGACY_CHART,
    NGC_REPOSITORY,
    OPERANDS_OFF_LABEL,
    OPERATOR_DRIVER_ROOT,
    RENAMED_CHART,
    RESOURCE_API_VERSION,
)
from components.dra_minors import DRIVER_GATE_NEEDS, gate_off_reason
from components.input.stack import StackInput
from components.labels import kubelet_plugin_node_selector, tolerations_for
from components.model import DraDriverConfig, GpuNodeGroupConfig, Taint
from components.repository_model import ChartRepositoryConfig, RepositoryAccess

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
    # The release whose value keys (components/chart_keys/) every accepted version of the line is checked against.
    keys_version: str
    refused_versions: Mapping[str, str] = field(default_factory=dict)


CHART_LINES = {
    LEGACY_CHART: ChartLine(
        LEGACY_CHART,
        "25.12.0",
        re.compile(r"^25\.12\.0\Z"),
        "25.12.0 (the last release under this name)",
        (NGC_REPOSITORY,),
        "25.12.0",
    ),
    RENAMED_CHART: ChartLine(
        RENAMED_CHART,
        "0.4.1",
        re.compile(r"^0\.4\.[0-9]{1,3}\Z"),
        "0.4.x from 0.4.1, for example 0.4.1",
        # The kubernetes-sigs project's own registry first: the default repository of this line.
        (KUBERNETES_OCI_REPOSITORY, NGC_REPOSITORY),
        "0.4.1",
        {
            "0.4.0": "dra-driver-nvidia-gpu 0.4.0 with nameOverride renders duplicate label keys "
            "(kubernetes-sigs/dra-driver-nvidia-gpu#1184, fixed in 0.4.1); use 0.4.1",
        },
    ),
}

UPSTREAM_DRIVER_REPOSITORIES = {repository for line in CHART_LINES.values() for repository in line.repositories}


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
    return override_problems(guarded_values(driver, gpu_taints), driver.value_overrides, GUARD_REASONS)


def _version(settings: StackInput, line: ChartLine, problems: ConfigProblems) -> str:
    version = settings.draDriverVersion or line.default_version
    if version in line.refused_versions:
        problems.add(config_key("draDriverVersion"), f"got {shown(version)}: {line.refused_versions[version]}")
    elif not line.version_pattern.match(version):
        problems.add(
            config_key("draDriverVersion"),
            f"got {shown(version)} for chart {line.chart}; allowed: {line.allowed_versions}",
        )
    return version


def _repository(
    settings: StackInput, line: ChartLine, access: RepositoryAccess | None, problems: ConfigProblems
) -> ChartRepositoryConfig:
    """Any mirror is taken as it is; an upstream repository is refused for a chart line it does not serve."""
    repository = chart_repository(settings.draDriverRepository, line.repositories[0], access)
    if repository.url in UPSTREAM_DRIVER_REPOSITORIES and repository.url not in line.repositories:
        problems.add(
            config_key("draDriverRepository"),
            f"got {shown(repository.url)} for chart {line.chart}; allowed: {' or '.join(line.repositories)}",
        )
    return repository


def _namespace(settings: StackInput, gpu_operator: bool, network_operator: bool, problems: ConfigProblems) -> str:
    """Helm's create_namespace makes no Namespace resource, so two releases in one namespace plan without a clash;
    but the chart's RBAC and ConfigMaps, named without the release, and its uninstall would then touch the other's."""
    namespace = settings.draDriverNamespace
    refuse_taken_namespace(
        config_key("draDriverNamespace"),
        namespace,
        fixed_release_namespaces(settings, gpu_operator, network_operator),
        "the driver's privileged pods belong in a namespace of their own (the chart refuses to install into default); "
        f"use {DEFAULT_DRIVER_NAMESPACE}",
        problems,
    )
    return namespace


def _check_driver_gates(overrides: Mapping[str, Any], kubernetes_version: str, problems: ConfigProblems) -> None:
    """A driver gate that publishes what the cluster's minor cannot store (device taints, shared counters) is refused."""
    gates = overrides.get("featureGates")
    for driver_gate, needs in DRIVER_GATE_NEEDS.items():
        reason = (
            gate_off_reason(needs, kubernetes_version)
            if isinstance(gates, Mapping) and gates.get(driver_gate) is True
            else None
        )
        if reason:
            problems.add(
                config_key("draDriverValues"),
                f"featureGates.{driver_gate}: true needs {reason}, or set it to false",
            )


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


def _driver_root(settings: StackInput, groups: Sequence[GpuNodeGroupConfig], problems: ConfigProblems) -> str:
    given = settings.draDriverRoot or None
    modes = {group.preinstalled_driver for group in groups}
    if given is None and len(modes) > 1:
        problems.add(
            config_key("draDriverRoot"),
            "is required when some GPU groups have a driversPreset and others do not: the DRA driver reads the GPU "
            f"driver from one root on every node, {HOST_DRIVER_ROOT} for preset images, {OPERATOR_DRIVER_ROOT} for the "
            "GPU Operator's driver; its kubelet plugin works only on the nodes whose driver lives there",
        )
    if given is not None:
        return given
    return HOST_DRIVER_ROOT if all(modes) else OPERATOR_DRIVER_ROOT


def _outage_accepted(
    settings: StackInput, groups: Sequence[GpuNodeGroupConfig], problems: ConfigProblems
) -> tuple[str, ...]:
    """The groups named by draPluginOutageAccepted; a name that is no GPU group is refused, never ignored."""
    known = [group.name for group in groups]
    refuse_repeats("draPluginOutageAccepted", settings.draPluginOutageAccepted, problems)
    unknown = [name for name in settings.draPluginOutageAccepted if name not in known]
    if unknown:
        problems.add(
            config_key("draPluginOutageAccepted"),
            f"names {', '.join(map(shown, unknown))}, which no entry of gpuNodeGroups is; allowed: {', '.join(known) or 'none'}",
        )
    return tuple(dict.fromkeys(name for name in settings.draPluginOutageAccepted if name in known))


def parse_driver_config(
    settings: StackInput,
    groups: Sequence[GpuNodeGroupConfig],
    secret_values: bool,
    access: RepositoryAccess | None,
    problems: ConfigProblems,
) -> DraDriverConfig:
    """Reads the driver keys; `groups` decides the driver mode and whether the Operators are needed; `access` goes
    with each repository the stack names."""
    line = CHART_LINES[settings.draDriverChart]
    operator_groups = tuple(group for group in groups if not group.preinstalled_driver)
    if operator_groups:
        _check_mixed_modes(groups, problems)
    driver = DraDriverConfig(
        chart=line.chart,
        version=_version(settings, line, problems),
        repository=_repository(settings, line, access, problems),
        namespace=_namespace(
            settings, bool(operator_groups), any(group.infiniband for group in operator_groups), problems
        ),
        driver_root=_driver_root(settings, groups, problems),
        compute_domains=settings.draComputeDomains,
        value_overrides=settings.draDriverValues,
        gpu_operator=bool(operator_groups),
        network_operator=any(group.infiniband for group in operator_groups),
        gpu_operator_version=settings.gpuOperatorVersion,
        network_operator_version=settings.networkOperatorVersion,
        gpu_operator_repository=chart_repository(settings.gpuOperatorRepository, NGC_REPOSITORY, access),
        network_operator_repository=chart_repository(settings.networkOperatorRepository, NGC_REPOSITORY, access),
        secret_values=secret_values,
        plugin_outage_accepted=_outage_accepted(settings, groups, problems),
    )
    _check_driver_gates(settings.draDriverValues, settings.kubernetesVersion, problems)
    taints = [taint for group in groups for taint in group.taints]
    for unknown in unknown_key_problems(settings.draDriverValues, chart_keys(line.chart, line.keys_version)):
        problems.add(config_key("draDriverValues"), unknown)
    if not secret_values:
        for path in credential_shaped_paths(settings.draDriverValues):
            problems.add(
                config_key("draDriverValues"),
                f"{path} may hold a credential (the plan's values file hides it, `pulumi up` would send it in plain "
                f"text): set it as a secret, `pulumi config set --path --secret '{config_key('draDriverValues')}."
                f"{path}' <value>`, or change it",
            )
    for path, message in [
        *guarded_override_problems(driver, taints),
        *floating_tag_problems(settings.draDriverValues, f"v{driver.version}"),
    ]:
        problems.add(config_key("draDriverValues"), f"{path}: {message}")
    return driver
