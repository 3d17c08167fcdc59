"""The sample Pods that prove a claim allocates, as plain data in Kubernetes field names.

Each Pod names a pod-level claim made from one of the stack's templates, and its container
consumes that claim through `resources.claims`: without the second link the device is
allocated but never handed to the container.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from components.claim_specs import GPU_TEMPLATE, IB_TEMPLATE
from components.claims_config import ClaimsConfig
from components.config import GpuNodeGroupConfig
from components.labels import tolerations_for

GPU_WORKLOAD = "gpu-workload"
RDMA_WORKLOAD = "rdma-workload"
CONTAINER_NAME = "workload"


def sample_pod_spec(
    claim_name: str,
    template_name: str,
    image: str,
    command: Sequence[str],
    tolerations: Iterable[Mapping[str, str]] = (),
) -> dict[str, Any]:
    """A Pod spec that runs `command` with one claim from `template_name` handed to its container."""
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
        )
    return pods
