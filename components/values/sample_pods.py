"""The sample Pods that prove a claim allocates, as plain data in Kubernetes field names, then typed Args.

Each Pod names a pod-level claim made from one of the stack's templates, and its container
consumes that claim through `resources.claims`: without the second link the device is
allocated but never handed to the container.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pulumi_kubernetes.core import v1 as core

from components.dra_constants import GPU_TEMPLATE, IB_TEMPLATE
from components.labels import tolerations_for
from components.model import ClaimsConfig, GpuNodeGroupConfig
from components.values.strict import fields_of

GPU_WORKLOAD = "gpu-workload"
RDMA_WORKLOAD = "rdma-workload"
CONTAINER_NAME = "workload"
# What a container handed an InfiniBand/RDMA NIC needs to pin RDMA buffers (policy rdma-pod-memlock).
MEMLOCK_CAPABILITY = "IPC_LOCK"


def sample_pod_spec(
    claim_name: str,
    template_name: str,
    image: str,
    command: Sequence[str],
    tolerations: Iterable[Mapping[str, str]] = (),
    capabilities: Sequence[str] = (),
) -> dict[str, Any]:
    """A Pod spec that runs `command` with one claim from `template_name` handed to its container.

    `capabilities` are added to the container's: a NIC's RDMA needs IPC_LOCK (policies/dra_guardrails/rdma_pod_rules.py).
    """
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "resourceClaims": [{"name": claim_name, "resourceClaimTemplateName": template_name}],
        "containers": [
            {
                "name": CONTAINER_NAME,
                "image": image,
                "command": list(command),
                "resources": {"claims": [{"name": claim_name}]},
            }
        ],
    }
    if capabilities:
        spec["containers"][0]["securityContext"] = {"capabilities": {"add": list(capabilities)}}
    listed = [dict(toleration) for toleration in tolerations]
    if listed:
        spec["tolerations"] = listed
    return spec


def sample_pod_specs(claims: ClaimsConfig, gpu_groups: Sequence[GpuNodeGroupConfig]) -> dict[str, dict[str, Any]]:
    """`gpu-workload` on any GPU node; `rdma-workload` only where DRANet publishes InfiniBand NICs."""
    if not claims.sample_pods:
        return {}
    pods = {
        GPU_WORKLOAD: sample_pod_spec(
            "gpu",
            GPU_TEMPLATE,
            claims.sample_gpu_image,
            ["sh", "-c", "nvidia-smi && sleep infinity"],
            tolerations_for(taint for group in gpu_groups for taint in group.taints),
        )
    }
    if claims.infiniband:
        pods[RDMA_WORKLOAD] = sample_pod_spec(
            "network",
            IB_TEMPLATE,
            claims.sample_rdma_image,
            ["sleep", "infinity"],
            tolerations_for(taint for group in gpu_groups if group.infiniband for taint in group.taints),
            [MEMLOCK_CAPABILITY],
        )
    return pods


def _container_args(container: Mapping[str, Any]) -> core.ContainerArgs:
    fields = fields_of(
        container, "container", required={"name", "image", "command", "resources"}, optional={"securityContext"}
    )
    resources = fields_of(fields["resources"], "resources", required={"claims"})
    context = fields_of(fields.get("securityContext", {}), "securityContext", (), {"capabilities"})
    capabilities = fields_of(context.get("capabilities", {}), "capabilities", (), {"add"})
    return core.ContainerArgs(
        name=fields["name"],
        image=fields["image"],
        command=fields["command"],
        resources=core.ResourceRequirementsArgs(
            claims=[
                core.ResourceClaimArgs(name=fields_of(claim, "claim", required={"name"})["name"])
                for claim in resources["claims"]
            ]
        ),
        security_context=core.SecurityContextArgs(capabilities=core.CapabilitiesArgs(add=capabilities["add"]))
        if "add" in capabilities
        else None,
    )


def _toleration_args(toleration: Mapping[str, Any]) -> core.TolerationArgs:
    fields = fields_of(toleration, "toleration", required={"key", "operator", "effect"}, optional={"value"})
    return core.TolerationArgs(
        key=fields["key"], operator=fields["operator"], value=fields.get("value"), effect=fields["effect"]
    )


def _claim_args(claim: Mapping[str, Any]) -> core.PodResourceClaimArgs:
    fields = fields_of(claim, "resourceClaim", required={"name", "resourceClaimTemplateName"})
    return core.PodResourceClaimArgs(
        name=fields["name"], resource_claim_template_name=fields["resourceClaimTemplateName"]
    )


def pod_spec_args(spec: Mapping[str, Any]) -> core.PodSpecArgs:
    """The typed form of a sample Pod spec; an unknown field anywhere raises instead of being dropped."""
    fields = fields_of(
        spec, "pod spec", required={"restartPolicy", "resourceClaims", "containers"}, optional={"tolerations"}
    )
    return core.PodSpecArgs(
        restart_policy=fields["restartPolicy"],
        resource_claims=[_claim_args(claim) for claim in fields["resourceClaims"]],
        containers=[_container_args(container) for container in fields["containers"]],
        tolerations=[_toleration_args(t) for t in fields.get("tolerations", [])] or None,
    )
