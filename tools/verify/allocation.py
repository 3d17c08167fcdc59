"""Judging what a smoke pod got: its claim's allocation, what the container sees, and why it never ran.

These are the guide's "read the claim's allocation" and "`nvidia-smi` / `ls /sys/class/...`
inside the pod" steps as pure functions, so they are tested against real API objects and
real tool output without a cluster.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from tools.verify.checks import GPU_DRIVER, NETWORK_DRIVER, Discrepancy, Outcome, outcome
from tools.verify.objects import attribute, find_device, pod_state, waiting_reasons

GPU_LINE = re.compile(r"^GPU (\d+): (.+?) \(UUID: (GPU-[0-9A-Fa-f-]+)\)\s*$")
CANNOT_ALLOCATE = "cannot allocate all claims"


def parse_gpu_list(text: str) -> list[tuple[str, str]]:
    """(product name, UUID) of each whole GPU in `nvidia-smi -L` output; MIG lines are indented and skipped."""
    return [(match.group(2), match.group(3)) for line in text.splitlines() if (match := GPU_LINE.match(line))]


def claim_name_for(pod: Mapping[str, Any], pod_claim: str) -> str | None:
    """The ResourceClaim the controller generated for one of the pod's template claims."""
    for status in pod.get("status", {}).get("resourceClaimStatuses") or []:
        if status.get("name") == pod_claim:
            return status.get("resourceClaimName")
    return None


def allocation_results(claim: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return claim.get("status", {}).get("allocation", {}).get("devices", {}).get("results") or []


def requested_count(template: Mapping[str, Any]) -> int | None:
    """How many devices the template asks for, or None when the count depends on the node (All, firstAvailable)."""
    total = 0
    for request in template.get("spec", {}).get("spec", {}).get("devices", {}).get("requests") or []:
        exactly = request.get("exactly")
        if exactly is None or exactly.get("allocationMode", "ExactCount") != "ExactCount":
            return None
        total += int(exactly.get("count", 1))
    return total


def describe_allocation(results: Sequence[Mapping[str, Any]]) -> str:
    return (
        ", ".join(f"{r.get('driver')} {r.get('pool')}/{r.get('device')} (request {r.get('request')})" for r in results)
        or "nothing"
    )


def allocation_findings(template: Mapping[str, Any], claim: Mapping[str, Any] | None, driver: str) -> list[Discrepancy]:
    """The claim is allocated, from the expected driver, with as many devices as the template asked for."""
    template_name = template.get("metadata", {}).get("name", "")
    if claim is None:
        return [
            Discrepancy(
                subject=f"claim from template {template_name}",
                expected="a ResourceClaim generated for the pod",
                found="none in the pod's status.resourceClaimStatuses",
                likely_cause="the resourceclaim controller did not create the claim: check kube-controller-manager's DRA support (Kubernetes 1.34 or later)",
            )
        ]
    claim_name = claim.get("metadata", {}).get("name", "")
    results = allocation_results(claim)
    findings = []
    wanted = requested_count(template)
    if not results or (wanted is not None and len(results) != wanted):
        findings.append(
            Discrepancy(
                subject=f"ResourceClaim {claim_name}",
                expected=f"{wanted if wanted is not None else 'at least one'} device(s) in status.allocation.devices.results",
                found=describe_allocation(results),
                likely_cause="the scheduler allocated a different number of devices than the template requests: compare the template with `kubectl get resourceclaim -o yaml`",
            )
        )
    strangers = [r for r in results if r.get("driver") != driver]
    if strangers:
        findings.append(
            Discrepancy(
                subject=f"ResourceClaim {claim_name}",
                expected=f"devices from driver {driver}",
                found=describe_allocation(strangers),
                likely_cause=f"the template's DeviceClass selects devices of another driver: it should use the class that {driver} serves",
            )
        )
    return findings


def judge_gpu_workload(
    claim: Mapping[str, Any], slices: Sequence[Mapping[str, Any]], outputs: Sequence[str]
) -> Outcome:
    """`nvidia-smi -L` in the pod lists exactly the GPUs whose UUIDs the claim's devices publish."""
    findings = []
    results = allocation_results(claim)
    claimed: dict[str, str] = {}
    for result in results:
        device = find_device(slices, GPU_DRIVER, str(result.get("pool")), str(result.get("device")))
        uuid = attribute(device, GPU_DRIVER, "uuid") if device else None
        if device is None or uuid is None:
            findings.append(
                Discrepancy(
                    subject=f"device {result.get('pool')}/{result.get('device')}",
                    expected=f"the device in a current {GPU_DRIVER} ResourceSlice, with a uuid attribute",
                    found="not found" if device is None else "no uuid attribute",
                    likely_cause="the kubelet plugin republished its slices during the test (a restart); run the verification again",
                )
            )
        else:
            claimed[uuid] = str(attribute(device, GPU_DRIVER, "productName"))
    listed = parse_gpu_list(outputs[0])
    listed_uuids = {uuid for _, uuid in listed}
    if not findings and listed_uuids != set(claimed):
        extra = listed_uuids - set(claimed)
        findings.append(
            Discrepancy(
                subject="nvidia-smi -L in the smoke pod",
                expected=f"exactly the claimed GPU(s): {', '.join(sorted(claimed))}",
                found=f"{len(listed)} GPU(s): {', '.join(uuid for _, uuid in listed) or 'none'}",
                likely_cause=(
                    "the container sees GPUs it did not claim: the legacy device plugin or the container runtime exposes every GPU "
                    "(NVIDIA_VISIBLE_DEVICES=all in the image, or a privileged container)"
                    if extra
                    else "the driver did not inject the claimed GPU into the container: read the kubelet plugin's logs on the node (CDI preparation)"
                ),
            )
        )
    described = ", ".join(f"{name} {uuid}" for uuid, name in claimed.items())
    return outcome(
        findings,
        f"claim got {describe_allocation(results)}; nvidia-smi -L lists exactly it ({described})",
        "the pod does not see exactly the claimed GPUs",
    )


def judge_network_workload(
    claim: Mapping[str, Any], slices: Sequence[Mapping[str, Any]], outputs: Sequence[str]
) -> Outcome:
    """The claimed NIC's interface is in the pod's /sys/class/net and its RDMA device in /sys/class/infiniband."""
    findings = []
    interfaces, rdma_devices = (set(text.split()) for text in outputs)
    results = allocation_results(claim)
    for result in results:
        device = find_device(slices, NETWORK_DRIVER, str(result.get("pool")), str(result.get("device"))) or {}
        subject = f"device {result.get('pool')}/{result.get('device')}"
        if_name = attribute(device, NETWORK_DRIVER, "ifName")
        rdma_device = attribute(device, NETWORK_DRIVER, "rdmaDevice")
        if attribute(device, NETWORK_DRIVER, "rdma") is not True:
            findings.append(
                Discrepancy(
                    subject,
                    f"{NETWORK_DRIVER}/rdma=true on the allocated device",
                    "not RDMA-capable (or not in a current slice)",
                    "the DeviceClass selected a NIC without RDMA: ib.networking.nebius.ai should select InfiniBand NICs only",
                )
            )
        if if_name and if_name not in interfaces:
            findings.append(
                Discrepancy(
                    subject,
                    f"interface {if_name} in the pod's /sys/class/net",
                    ", ".join(sorted(interfaces)),
                    "DRANet did not move the interface into the pod's network namespace: read the dranet pod's logs on the node",
                )
            )
        if (rdma_device and rdma_device not in rdma_devices) or not rdma_devices:
            findings.append(
                Discrepancy(
                    subject,
                    f"RDMA device {rdma_device or '(any)'} in the pod's /sys/class/infiniband",
                    ", ".join(sorted(rdma_devices)) or "empty",
                    "the RDMA device was not passed to the container: DRANet's RDMA handling depends on the host's RDMA netns mode; read the dranet logs",
                )
            )
    return outcome(
        findings,
        f"claim got {describe_allocation(results)}; /sys/class/net: {' '.join(sorted(interfaces))}; /sys/class/infiniband: {' '.join(sorted(rdma_devices))}",
        "the pod does not see the claimed NIC",
    )


def _scheduling_messages(pod: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> list[str]:
    conditions = pod.get("status", {}).get("conditions") or []
    messages = [
        c.get("message", "") for c in conditions if c.get("type") == "PodScheduled" and c.get("status") != "True"
    ]
    messages += [e.get("message", "") for e in events if e.get("type") == "Warning"]
    return [m for m in messages if m]


def pending_reason(pod: Mapping[str, Any]) -> str:
    """What the pod waits for, for the live progress line."""
    messages = _scheduling_messages(pod, [])
    return messages[0] if messages else pod_state(pod)


def diagnose_not_running(
    pod: Mapping[str, Any], events: Sequence[Mapping[str, Any]], waited_s: float, namespace: str
) -> Discrepancy:
    """Why a smoke pod never reached Running, from its status and its Warning events."""
    name = pod.get("metadata", {}).get("name", "")
    messages = _scheduling_messages(pod, events)
    text = " ".join(messages)
    reasons = waiting_reasons(pod)
    if CANNOT_ALLOCATE in text:
        cause = (
            "no free device satisfies the claim on any node the pod may use: DRA is not enabled on the GPU node group "
            "(gpu_settings.dra), the driver published no devices there (see the slice checks), or every device is already "
            "allocated to other pods (`kubectl get resourceclaims -A`)"
        )
    elif "untolerated taint" in text:
        cause = "the GPU nodes carry a taint the stack's config does not list, so the smoke pod does not tolerate it: add it to the group's taints"
    elif reasons & {"ImagePullBackOff", "ErrImagePull"}:
        cause = "the node cannot pull the smoke image: check egress to the registry, or pass --image with an image the nodes can pull"
    elif (
        "FailedPrepareDynamicResources" in {e.get("reason") for e in events}
        or "prepare dynamic resources" in text.lower()
    ):
        cause = "the kubelet plugin failed to prepare the device for the container: read the kubelet plugin's logs on the node"
    else:
        cause = f"`kubectl -n {namespace} describe pod {name}` shows why (rerun with a longer --timeout if the image is large)"
    found = pod_state(pod) + (f"; {messages[-1]}" if messages else "")
    return Discrepancy(f"pod {name}", f"Running within {waited_s:.0f}s", found, cause)
