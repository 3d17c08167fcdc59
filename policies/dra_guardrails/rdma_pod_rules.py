"""What a pod needs to use an InfiniBand/RDMA NIC it claims: the memory-locking right NCCL's RDMA path needs.

Nebius runs InfiniBand workloads in containers with the NIC's devices and `IPC_LOCK`
(`--device=/dev/infiniband --cap-add=IPC_LOCK`, the Docker options SkyPilot's Nebius provisioner
applies "based on Nebius documentation": skypilot-org/skypilot sky/provision/nebius/constants.py,
with Nebius's own nccl-tests image). Under DRA the devices come with the claim (DRANet hands the
NIC's /dev/infiniband/uverbs* to the pod), so what is left for the pod to say is the memlock right:
RDMA registers (pins) every buffer it sends from, `ibv_reg_mr` fails with ENOMEM past RLIMIT_MEMLOCK
unless the process has CAP_IPC_LOCK (Linux drivers/infiniband/core/umem.c, ib_umem_get), and
Nebius node images set an 8 MiB memlock limit (/work/shared/reference/facts.md): far below the
hundreds of MiB NCCL registers per GPU. Kubernetes has no per-pod ulimit, so `IPC_LOCK` in the
container's capabilities (or a privileged container, which has every capability) is the setting.

The rule reads pod specs in the API's (camelCase) field names, so the policy pack (engine
properties of Pods, Jobs, Deployments and the other workloads) and the live verifier (the burn-in
Job it is about to create) judge the same shape. It imports nothing from the program, and of the
pack only `planned` (its reading of planned properties).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from .planned import as_list, field_at
from .quoting import listed, quoted, shown

MEMLOCK_CAPABILITY = "IPC_LOCK"
NETWORK_DEVICE_CLASSES = ("ib.networking.nebius.ai", "rdma.networking.nebius.ai")
CLAIM_TEMPLATE_TYPE = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"
CLAIM_TYPE = "kubernetes:resource.k8s.io/v1:ResourceClaim"
# Where each workload kind keeps the pod spec it runs (the engine's type tokens, pulumi-kubernetes).
POD_SPEC_PATHS: Mapping[str, tuple[str, ...]] = {
    "kubernetes:core/v1:Pod": ("spec",),
    "kubernetes:batch/v1:Job": ("spec", "template", "spec"),
    "kubernetes:batch/v1:CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
    "kubernetes:apps/v1:Deployment": ("spec", "template", "spec"),
    "kubernetes:apps/v1:StatefulSet": ("spec", "template", "spec"),
    "kubernetes:apps/v1:DaemonSet": ("spec", "template", "spec"),
    "kubernetes:apps/v1:ReplicaSet": ("spec", "template", "spec"),
    "kubernetes:core/v1:PodTemplate": ("template", "spec"),
}
_CONTAINER_LISTS = ("initContainers", "containers")


def requested_classes(claim_spec: Any) -> set[str]:
    """The DeviceClasses a ResourceClaim spec (`devices.requests`) asks for, exact or among alternatives."""
    classes = set()
    for request in as_list(field_at(claim_spec, "devices", "requests")):
        for selection in [field_at(request, "exactly"), *as_list(field_at(request, "firstAvailable"))]:
            name = field_at(selection, "deviceClassName")
            if isinstance(name, str):
                classes.add(name)
    return classes


def network_claim_sources(resources: Sequence[tuple[str, Mapping[str, Any]]]) -> set[str]:
    """Names of the claim templates and claims among `(type, props)` that ask for an InfiniBand/RDMA NIC."""
    sources = set()
    for resource_type, props in resources:
        spec = field_at(props, "spec", "spec") if resource_type == CLAIM_TEMPLATE_TYPE else field_at(props, "spec")
        name = field_at(props, "metadata", "name")
        network = requested_classes(spec) & set(NETWORK_DEVICE_CLASSES)
        if resource_type in (CLAIM_TEMPLATE_TYPE, CLAIM_TYPE) and isinstance(name, str) and network:
            sources.add(name)
    return sources


def _network_pod_claims(pod_spec: Mapping[str, Any], sources: Collection[str]) -> set[str]:
    return {
        claim["name"]
        for claim in as_list(pod_spec.get("resourceClaims"))
        if isinstance(claim, Mapping)
        and isinstance(claim.get("name"), str)
        and (claim.get("resourceClaimTemplateName") in sources or claim.get("resourceClaimName") in sources)
    }


def _can_lock_memory(container: Mapping[str, Any]) -> bool:
    context = container.get("securityContext")
    if field_at(context, "privileged") is True:
        return True
    added = {str(cap).upper().removeprefix("CAP_") for cap in as_list(field_at(context, "capabilities", "add"))}
    return MEMLOCK_CAPABILITY in added


def _claiming_containers(pod_spec: Mapping[str, Any], claims: set[str]) -> Iterator[tuple[Mapping[str, Any], list]]:
    for list_name in _CONTAINER_LISTS:
        for container in as_list(pod_spec.get(list_name)):
            if isinstance(container, Mapping):
                used = [
                    claim.get("name")
                    for claim in as_list(field_at(container, "resources", "claims"))
                    if isinstance(claim, Mapping) and claim.get("name") in claims
                ]
                if used:
                    yield container, used


def rdma_pod_problems(pod_spec: Any, sources: Collection[str]) -> list[str]:
    """One line per container that is handed an InfiniBand/RDMA claim from `sources` but cannot lock memory."""
    if not isinstance(pod_spec, Mapping):
        return []
    claims = _network_pod_claims(pod_spec, sources)
    return [
        f"container {quoted(container.get('name'))} uses the network claim(s) {listed(used)} without "
        f"securityContext.capabilities.add [{MEMLOCK_CAPABILITY}]: RDMA pins its buffers, and past the node's "
        "8 MiB memlock limit ibv_reg_mr fails (NCCL falls back to sockets or stops with 'NET/IB : ... failed'); "
        f"add {MEMLOCK_CAPABILITY} to that container's capabilities"
        for container, used in _claiming_containers(pod_spec, claims)
        if not _can_lock_memory(container)
    ]


def rdma_workload_violations(
    resources: Sequence[tuple[str, str, str, Mapping[str, Any]]],
) -> list[tuple[str, str]]:
    """`(urn, message)` for each workload among `(urn, type, name, props)` whose RDMA-claiming containers lack IPC_LOCK."""
    sources = network_claim_sources([(resource_type, props) for _, resource_type, _, props in resources])
    violations: list[tuple[str, str]] = []
    for urn, resource_type, name, props in resources:
        path = POD_SPEC_PATHS.get(resource_type)
        if path is None:
            continue
        kind = resource_type.rsplit(":", 1)[-1]
        violations.extend(
            (urn, f'{shown(kind)} "{shown(name)}": {problem}')
            for problem in rdma_pod_problems(field_at(props, *path), sources)
        )
    return violations
