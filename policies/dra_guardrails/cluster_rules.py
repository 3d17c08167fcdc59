"""Rules on the cluster's Kubernetes minor: a version that serves DRA as resource.k8s.io/v1, and the DRA features each minor turns on."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .framework import PolicyConfigError
from .planned import (
    CLUSTER_TYPE,
    CLUSTER_VERSION,
    DRA_MINORS,
    LEGACY_GPU_RESOURCE,
    POD_CONTAINER_LISTS,
    POD_TYPE,
    PlannedResource,
    as_list,
    claim_requests,
    dra_object,
    field_at,
    has_key,
    is_dra_driver_release,
    is_dra_gpu_node_group,
    minor_version,
    named,
)
from .quoting import listed, shown

# The first Kubernetes minor that serves DRA as resource.k8s.io/v1 (GA in 1.34): the lowest minimumVersion the pack
# takes, since a lower one would only weaken a mandatory gate (every minor the stack runs is this one or later).
DRA_V1_MINOR = "1.34"
DEFAULT_MINIMUM_VERSION = DRA_V1_MINOR
# A minimumVersion longer than this is no Kubernetes minor: refused before its digits are read as numbers.
MINIMUM_VERSION_LIMIT = 16
# Patterns the pack serves in a config schema (this one and CHECKED_PRESET_FIELDS) are compiled by the
# Pulumi CLI with Go's regexp (pulumi pkg/v3 resource/analyzer/config.go validates policy config with
# xeipuuv/gojsonschema v1.2.0, schema.go: regexp.Compile): RE2 syntax, ASCII classes, `$` the end of the
# text. The pack matches them with fullmatch, so a trailing newline fails here as it fails there.
# No leading zero: "01.34" and "1.034" name no minor (the stack's kubernetesVersion refuses them too).
MINIMUM_VERSION = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")


def check_cluster_version(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    if resource.type != CLUSTER_TYPE:
        return []
    minimum = config.get("minimumVersion", DEFAULT_MINIMUM_VERSION)
    if not isinstance(minimum, str) or not MINIMUM_VERSION.fullmatch(minimum) or len(minimum) > MINIMUM_VERSION_LIMIT:
        raise PolicyConfigError(f'mk8s-cluster-version: minimumVersion must be "MAJOR.MINOR", got {shown(minimum)}')
    if minor_version(minimum) < minor_version(DRA_V1_MINOR):
        raise PolicyConfigError(
            f'mk8s-cluster-version: minimumVersion "{shown(minimum)}" is below {DRA_V1_MINOR}, the first minor that '
            f"serves resource.k8s.io/v1 (the DRA API the claim templates and the driver use), so it would only weaken "
            f'this mandatory gate; allowed: "{DRA_V1_MINOR}" or a later MAJOR.MINOR (for example "1.35", not "1.3")'
        )
    version = field_at(resource.props, "controlPlane", "version")
    fix = f'Set controlPlane.version to "{minimum}" or later (in this project: nebius-dra:kubernetesVersion).'
    if not version:
        return [
            f"{named(resource)} sets no controlPlane.version, so Nebius picks its default, which may be older than {minimum}. {fix}"
        ]
    if not isinstance(version, str) or not CLUSTER_VERSION.match(version):
        return [
            f'{named(resource)} has controlPlane.version "{shown(version)}", which is neither MAJOR.MINOR nor MAJOR.MINOR-nebius-node.N. {fix}'
        ]
    if minor_version(version) < minor_version(minimum):
        # The reason is the one that holds for this version: the DRA API below 1.34, else only the config's minimum
        # (newcomer4 F8: a 1.34 cluster under minimumVersion 1.35 read "... is served from 1.34 on").
        reason = (
            f"resource.k8s.io/v1, the DRA API the claim templates and the driver use, is served from {DRA_V1_MINOR} on"
            if minor_version(version) < minor_version(DRA_V1_MINOR)
            else f"the policy config's mk8s-cluster-version.minimumVersion asks for {minimum} or later, above "
            f"{DRA_V1_MINOR}, the first minor that serves the DRA API (resource.k8s.io/v1)"
        )
        return [f"{named(resource)} runs Kubernetes {shown(version)}, below the required {minimum}: {reason}. {fix}"]
    return []


def _table_minor(version: str) -> str:
    """The table row a cluster version is judged by: its minor, or the newest row for a newer minor."""
    number = minor_version(version)
    known = [minor for minor in DRA_MINORS["minors"] if minor_version(minor) <= number]
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
    name = shown(field_at(request, "name"))
    found = [(f"request {name}: exactly", "ExactDeviceRequest", field_at(request, "exactly"))]
    found += [
        (f"request {name}: firstAvailable[{index}]", "DeviceSubRequest", sub)
        for index, sub in enumerate(as_list(field_at(request, "firstAvailable")))
    ]
    return [entry for entry in found if isinstance(entry[2], Mapping)]


def gated_fields_used(resource: PlannedResource) -> list[tuple[str, str]]:
    """(where, API field as `Type.field`) of every gated DRA field the resource sets."""
    used = []
    match = dra_object(resource)
    if match and match["kind"] == "DeviceClass":
        if field_at(resource.props, "spec", "extendedResourceName"):
            used.append(("spec.extendedResourceName", "DeviceClassSpec.extendedResourceName"))
        return used
    for request in claim_requests(resource):
        if field_at(request, "firstAvailable"):
            used.append((f"request {shown(field_at(request, 'name'))}: firstAvailable", "DeviceRequest.firstAvailable"))
        for where, api_type, body in _selection_fields(request):
            for name in ("tolerations", "capacity", "adminAccess"):
                if field_at(body, name) not in (None, False, []) and f"{api_type}.{name}" in DRA_MINORS["fields"]:
                    used.append((f"{where}.{name}", f"{api_type}.{name}"))
    claim = (
        field_at(resource.props, "spec", "spec")
        if match and match["kind"] == "ResourceClaimTemplate"
        else field_at(resource.props, "spec")
    )
    for index, constraint in enumerate(as_list(field_at(claim, "devices", "constraints")) if match else []):
        if field_at(constraint, "distinctAttribute"):
            used.append((f"constraints[{index}].distinctAttribute", "DeviceConstraint.distinctAttribute"))
    return used


def _legacy_gpu_containers(resource: PlannedResource) -> list[str]:
    """Containers of a Pod that ask for the extended resource nvidia.com/gpu."""
    if resource.type != POD_TYPE:
        return []
    return [
        str(field_at(container, "name"))
        for kind in POD_CONTAINER_LISTS
        for container in as_list(field_at(resource.props, "spec", kind))
        if any(has_key(field_at(container, "resources", part), LEGACY_GPU_RESOURCE) for part in ("limits", "requests"))
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
                    f"asks for {LEGACY_GPU_RESOURCE} in container(s) {listed(containers)}: DRA node groups run no "
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
    if len(versions) != 1 or not isinstance(versions[0], str) or not CLUSTER_VERSION.match(versions[0]):
        return []  # nothing gated, or no cluster of a known version here (existing-cluster mode, or mk8s-cluster-version's finding)
    minor = _table_minor(versions[0])
    violations: list[tuple[str | None, str]] = []
    for resource, what, gate, fix in uses:
        reason = _gate_off(gate, minor)
        if reason:
            violations.append((resource.urn, f"{named(resource)} {what} {reason}. {fix}"))
    return violations
