"""Rules on what workloads ask for: resource.k8s.io/v1 objects, network devices requested once and only where InfiniBand exists, pinned images."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .planned import (
    DRA_API_VERSION,
    GPU_DEVICE_CLASSES,
    IB_DEVICE_CLASS,
    NETWORK_DEVICE_CLASSES,
    PCIE_ROOT_ATTRIBUTE,
    POD_CONTAINER_LISTS,
    POD_TYPE,
    RDMA_DEVICE_CLASS,
    PlannedResource,
    as_list,
    claim_devices,
    claim_requests,
    dra_object,
    exact_device_class,
    field_at,
    is_existing_infiniband_group,
    is_infiniband_dra_node_group,
    named,
    planned_number,
    requested_device_classes,
)
from .quoting import listed, shown

_IMAGE_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
_IMAGE_TAG = re.compile(r":([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})$")
# The tags that name no release, in any case: the program's list (components/input/fields.py FLOATING_TAGS, where each
# says why it moves), which the pack cannot import; tests/test_architecture.py keeps the two in step.
FLOATING_TAGS = frozenset(
    {
        "latest", "main", "master", "trunk", "head", "dev", "develop", "devel", "edge", "nightly", "snapshot",
        "canary", "alpha", "beta", "preview", "next", "testing", "unstable", "experimental", "stable", "current",
        "release", "lts", "mainline", "rolling",
    }
)  # fmt: skip


def check_dra_api_version(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    match = dra_object(resource)
    if match is None:
        return []
    if match["version"] != DRA_API_VERSION:
        return [
            f"{named(resource)} uses resource.k8s.io/{shown(match['version'])}; the stack's clusters serve DRA as "
            f"resource.k8s.io/{DRA_API_VERSION}, and the beta and alpha versions are deprecated or switched off. "
            f"Declare it with the resource.k8s.io/{DRA_API_VERSION} type (pulumi_kubernetes.resource.v1.{match['kind']})."
        ]
    flat = [field_at(request, "name") for request in claim_requests(resource) if field_at(request, "deviceClassName")]
    if flat:
        return [
            f"{named(resource)} writes deviceClassName directly on request(s) {listed(flat)}, the "
            f"v1beta1 shape, which resource.k8s.io/{DRA_API_VERSION} rejects. Move each request's fields under "
            "`exactly` (or list alternatives under `firstAvailable`)."
        ]
    return []


def check_network_device_requested_once(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    by_class: dict[str, list[str]] = {}
    nic_requests = 0
    for request in claim_requests(resource):
        exact = exact_device_class(request)
        alternatives: list[Any] = [exact] if exact else []
        alternatives += [field_at(sub, "deviceClassName") for sub in as_list(field_at(request, "firstAvailable"))]
        if not alternatives or not all(device_class in NETWORK_DEVICE_CLASSES for device_class in alternatives):
            continue
        nic_requests += 1
        for device_class in dict.fromkeys(alternatives):
            by_class.setdefault(str(device_class), []).append(str(field_at(request, "name")))
    if nic_requests < 2 or len(by_class) < len(NETWORK_DEVICE_CLASSES):
        return []
    return [
        f"{named(resource)} requests both {RDMA_DEVICE_CLASS} (request {listed(by_class[RDMA_DEVICE_CLASS])}) and "
        f"{IB_DEVICE_CLASS} (request {listed(by_class[IB_DEVICE_CLASS])}): Kubernetes allocates two separate NICs. "
        f"An InfiniBand interface is already RDMA-capable: keep only {IB_DEVICE_CLASS} for InfiniBand, only "
        f"{RDMA_DEVICE_CLASS} for any RDMA NIC, or one request with firstAvailable to accept either. "
        "Keep both only when the workload really needs two NICs."
    ]


def _more(items: Sequence[Any], limit: int = 10) -> str:
    return f" and {len(items) - limit} more" if len(items) > limit else ""


def image_is_pinned(image: str) -> bool:
    """A digest, or a tag that names a release (none of FLOATING_TAGS): a reference without a tag means `latest`."""
    if _IMAGE_DIGEST.search(image):
        return True
    tag = _IMAGE_TAG.search(image.rsplit("/", 1)[-1])
    return tag is not None and tag.group(1).lower() not in FLOATING_TAGS


def check_workload_images_pinned(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    if resource.type != POD_TYPE:
        return []
    unpinned = [
        f"{shown(field_at(container, 'name'))} ({shown(field_at(container, 'image') or 'no image')})"
        for list_name in POD_CONTAINER_LISTS
        for container in as_list(field_at(resource.props, "spec", list_name))
        if not image_is_pinned(str(field_at(container, "image") or ""))
    ]
    if not unpinned:
        return []
    return [
        f"{named(resource)} runs unpinned images in container(s) {', '.join(unpinned[:10])}{_more(unpinned)}: a tag that moves (`latest`, `main`, `nightly`, ...) or no tag means a "
        "different image on each pull, so a sample that passed yesterday can fail today. Pin a tag such as "
        "nvidia/cuda:13.1.1-runtime-ubuntu24.04, or a digest."
    ]


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
                    f"{named(resource)} requests {', '.join(network_classes)}, but no DRA GPU node group joins an "
                    "InfiniBand GPU cluster (template.gpuCluster), so DRANet publishes no NIC and the claim never "
                    "allocates. Add an InfiniBand DRA node group (in this project: infiniband: true on a gpuNodeGroups "
                    "entry, with nebius-dra:infinibandFabric) or drop the network claim.",
                )
            )
    return violations


# What `allocationMode: All` takes, counted as "more than one": the pack does not know the nodes' device counts.
_EVERY_DEVICE = 2


def _takes_all(selection: Any) -> bool:
    return field_at(selection, "allocationMode") == "All"


def _devices_taken(resource: PlannedResource, selection: Any) -> tuple[int, int]:
    """(GPUs, NICs) one `exactly` or `firstAvailable` entry takes; devices of other classes are not counted. A count
    that is no number is the rule's violation (planned_number), never counted as 0 or 1 devices."""
    device_class = field_at(selection, "deviceClassName")
    count = planned_number(resource, "count", within=selection) if isinstance(selection, Mapping) else None
    wanted = _EVERY_DEVICE if _takes_all(selection) else int(count or 1)
    return (
        wanted if device_class in GPU_DEVICE_CLASSES else 0,
        wanted if device_class in NETWORK_DEVICE_CLASSES else 0,
    )


def _covered_selections(requests: Sequence[Any], names: Sequence[Any]) -> list[list[Any]]:
    """Each covered request's alternatives: a whole request, one `request/subrequest`, or every request when none is named."""
    covered = []
    for request in requests:
        name = field_at(request, "name")
        alternatives = as_list(field_at(request, "firstAvailable"))
        if not names or name in names:
            covered.append(alternatives or [field_at(request, "exactly")])
        covered += [[sub] for sub in alternatives if f"{name}/{field_at(sub, 'name')}" in names]
    return covered


def check_pcie_root_constraint_per_pair(resource: PlannedResource, config: Mapping[str, Any]) -> list[str]:
    """A pcieRoot constraint over more than one GPU or NIC holds only where one root holds them all, which nodes differ in."""
    devices = claim_devices(resource)
    requests = as_list(field_at(devices, "requests"))
    violations = []
    for index, constraint in enumerate(as_list(field_at(devices, "constraints"))):
        if field_at(constraint, "matchAttribute") != PCIE_ROOT_ATTRIBUTE:
            continue
        gpus = nics = 0
        covered = _covered_selections(requests, as_list(field_at(constraint, "requests")))
        for alternatives in covered:
            taken = [_devices_taken(resource, selection) for selection in alternatives]
            gpus += min(t[0] for t in taken)
            nics += min(t[1] for t in taken)
        every = any(_takes_all(selection) for alternatives in covered for selection in alternatives)
        if gpus > 1 or nics > 1:
            asked = "every device of an allocationMode: All request" if every else f"{gpus} GPU(s) and {nics} NIC(s)"
            violations.append(
                f"{named(resource)}: constraints[{index}] asks one PCIe root ({PCIE_ROOT_ATTRIBUTE}) for {asked}. "
                "It allocates only on a node where one root holds all of them, which depends on the node's PCIe layout: "
                "Nebius's 8-GPU layout is not captured here, and on the e2e's model (one GPU per root) it never allocates. "
                "Check the pcieRoot attributes in your nodes' ResourceSlices; to pair each GPU with its NIC, use one GPU "
                "request and one NIC request per pair, each pair with its own constraint."
            )
    return violations
