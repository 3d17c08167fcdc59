"""ResourceClaimTemplate specs as plain data in Kubernetes field names (`resource.k8s.io/v1`).

The component turns these into typed Pulumi arguments and the tests validate them against
the Kubernetes schema and evaluate their CEL, so both see exactly the same objects.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional, Sequence

if TYPE_CHECKING:
    from components.claims_config import ClaimsConfig, UserClaimTemplate

RESOURCE_API_VERSION = "resource.k8s.io/v1"
GPU_DRIVER = "gpu.nvidia.com"
GPU_CLASS = "gpu.nvidia.com"
MIG_CLASS = "mig.nvidia.com"
IB_CLASS = "ib.networking.nebius.ai"
RDMA_CLASS = "rdma.networking.nebius.ai"
NETWORK_CLASSES = (IB_CLASS, RDMA_CLASS)
KNOWN_DEVICE_CLASSES = (GPU_CLASS, MIG_CLASS, IB_CLASS, RDMA_CLASS)
NETWORK_DRIVER = "dra.net"
CLASS_DRIVERS = {GPU_CLASS: GPU_DRIVER, MIG_CLASS: GPU_DRIVER, IB_CLASS: NETWORK_DRIVER, RDMA_CLASS: NETWORK_DRIVER}
PCIE_ROOT_ATTRIBUTE = "resource.kubernetes.io/pcieRoot"
EXACT_COUNT, ALL_DEVICES = "ExactCount", "All"

GPU_TEMPLATE = "gpu"
MULTI_GPU_TEMPLATE = "multi-gpu"
GPU_BY_PRODUCT_TEMPLATE = "gpu-by-product"
IB_TEMPLATE = "ib-network"
RDMA_TEMPLATE = "rdma-network"
GPU_NIC_TEMPLATE = "gpu-nic-aligned"
BUILTIN_TEMPLATES = (GPU_TEMPLATE, MULTI_GPU_TEMPLATE, GPU_BY_PRODUCT_TEMPLATE, IB_TEMPLATE, RDMA_TEMPLATE, GPU_NIC_TEMPLATE)
NETWORK_TEMPLATES = (IB_TEMPLATE, RDMA_TEMPLATE, GPU_NIC_TEMPLATE)


def cel_string(value: str) -> str:
    """A CEL string literal; JSON's escapes are a subset of CEL's."""
    return json.dumps(value)


def product_selector(products: Sequence[str]) -> str:
    """Selects GPUs whose `productName` (the name `nvidia-smi` prints, e.g. "NVIDIA H200") is listed."""
    listed = ", ".join(cel_string(product) for product in products)
    return f'device.attributes["{GPU_DRIVER}"].productName in [{listed}]'


def exact_request(
    name: str,
    device_class: str,
    count: Optional[int] = 1,
    allocation_mode: str = EXACT_COUNT,
    selectors: Iterable[str] = (),
) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": device_class}
    if allocation_mode == EXACT_COUNT:
        exactly["count"] = count if count is not None else 1
    else:
        exactly["allocationMode"] = allocation_mode
    cel = [{"cel": {"expression": expression}} for expression in selectors]
    if cel:
        exactly["selectors"] = cel
    return {"name": name, "exactly": exactly}


def match_attribute(attribute: str, requests: Sequence[str] = ()) -> dict[str, Any]:
    """A constraint that the devices of `requests` (all of the claim's when empty) share `attribute`."""
    constraint: dict[str, Any] = {"matchAttribute": attribute}
    if requests:
        constraint["requests"] = list(requests)
    return constraint


def opaque_config(driver: str, parameters: Mapping[str, Any], requests: Sequence[str] = ()) -> dict[str, Any]:
    config: dict[str, Any] = {"opaque": {"driver": driver, "parameters": dict(parameters)}}
    if requests:
        config["requests"] = list(requests)
    return config


def claim_template_spec(
    requests: Sequence[Mapping[str, Any]],
    constraints: Sequence[Mapping[str, Any]] = (),
    config: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The `spec` of a ResourceClaimTemplate: the ResourceClaim every pod using it gets."""
    devices: dict[str, Any] = {"requests": [dict(request) for request in requests]}
    if constraints:
        devices["constraints"] = [dict(constraint) for constraint in constraints]
    if config:
        devices["config"] = [dict(entry) for entry in config]
    return {"spec": {"devices": devices}}


def builtin_template_specs(
    enabled: Iterable[str], infiniband: bool, multi_gpu_count: int, gpu_products: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """The enabled built-in templates that can be satisfied on this stack.

    Network templates need DRANet's NICs, which exist only on InfiniBand GPU groups; the
    multi-GPU template needs nodes with at least two GPUs.
    """
    candidates = {
        GPU_TEMPLATE: lambda: claim_template_spec([exact_request("gpu", GPU_CLASS)]),
        MULTI_GPU_TEMPLATE: lambda: claim_template_spec([exact_request("gpus", GPU_CLASS, count=multi_gpu_count)]),
        GPU_BY_PRODUCT_TEMPLATE: lambda: claim_template_spec(
            [exact_request("gpu", GPU_CLASS, selectors=[product_selector(gpu_products)])]
        ),
        IB_TEMPLATE: lambda: claim_template_spec([exact_request("ib", IB_CLASS)]),
        RDMA_TEMPLATE: lambda: claim_template_spec([exact_request("rdma", RDMA_CLASS)]),
        GPU_NIC_TEMPLATE: lambda: claim_template_spec(
            [exact_request("gpu", GPU_CLASS), exact_request("nic", IB_CLASS)],
            constraints=[match_attribute(PCIE_ROOT_ATTRIBUTE, ["gpu", "nic"])],
        ),
    }
    chosen = set(enabled)
    if not infiniband:
        chosen -= set(NETWORK_TEMPLATES)
    if multi_gpu_count < 2:
        chosen.discard(MULTI_GPU_TEMPLATE)
    return {name: build() for name, build in candidates.items() if name in chosen}


def user_template_spec(template: UserClaimTemplate) -> dict[str, Any]:
    return claim_template_spec(
        [
            exact_request(request.name, request.device_class, request.count, request.allocation_mode, request.selectors)
            for request in template.requests
        ],
        constraints=[match_attribute(c.match_attribute, c.requests) for c in template.constraints],
        config=[opaque_config(c.driver, c.parameters, c.requests) for c in template.config],
    )


def claim_template_specs(claims: ClaimsConfig) -> dict[str, dict[str, Any]]:
    """Every ResourceClaimTemplate the stack creates, built-in first, by name."""
    specs = claims.builtin_specs
    specs.update((template.name, user_template_spec(template)) for template in claims.user_templates)
    return specs
