"""rdma-pod-memlock: a container handed an InfiniBand/RDMA NIC must be able to pin RDMA buffers (IPC_LOCK)."""

from __future__ import annotations

import copy

import pytest

from components.config.stack_file import load_stack_config
from policies.dra_guardrails import PlannedResource, check_resources
from policies.dra_guardrails.rdma_pod_rules import POD_SPEC_PATHS, rdma_pod_problems, rdma_workload_violations
from tools.plan.mock_engine import run_program

IB_TEMPLATE = (
    "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate",
    {
        "metadata": {"name": "ib-network"},
        "spec": {
            "spec": {
                "devices": {"requests": [{"name": "ib", "exactly": {"deviceClassName": "ib.networking.nebius.ai"}}]}
            }
        },
    },
)
RDMA_CLAIM = (
    "kubernetes:resource.k8s.io/v1:ResourceClaim",
    {
        "metadata": {"name": "shared-nic"},
        "spec": {
            "devices": {
                "requests": [
                    {"name": "nic", "firstAvailable": [{"name": "a", "deviceClassName": "rdma.networking.nebius.ai"}]}
                ]
            }
        },
    },
)
GPU_TEMPLATE = (
    "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate",
    {
        "metadata": {"name": "gpu"},
        "spec": {
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}
        },
    },
)


def pod_spec(security_context: dict | None = None, claim: dict | None = None, consumed: bool = True) -> dict:
    container: dict = {
        "name": "train",
        "image": "img:1",
        "resources": {"claims": [{"name": "nic"}] if consumed else []},
    }
    if security_context is not None:
        container["securityContext"] = security_context
    return {
        "resourceClaims": [claim or {"name": "nic", "resourceClaimTemplateName": "ib-network"}],
        "containers": [{"name": "sidecar", "image": "img:1"}, container],
    }


def nest(resource_type: str, spec: dict) -> dict:
    props: dict = {"metadata": {"name": "w"}}
    *parents, last = POD_SPEC_PATHS[resource_type]
    level = props
    for key in parents:
        level = level.setdefault(key, {})
    level[last] = spec
    return props


@pytest.mark.parametrize(
    "context",
    [
        {"capabilities": {"add": ["IPC_LOCK"]}},
        {"capabilities": {"add": ["NET_RAW", "CAP_IPC_LOCK"]}},
        {"privileged": True},
    ],
)
def test_a_container_that_can_lock_memory_passes(context: dict) -> None:
    assert rdma_pod_problems(pod_spec(context), {"ib-network"}) == []


@pytest.mark.parametrize("context", [None, {}, {"capabilities": {"add": ["NET_ADMIN"]}}, {"privileged": False}])
def test_a_container_without_ipc_lock_is_named(context: dict | None) -> None:
    [problem] = rdma_pod_problems(pod_spec(context), {"ib-network"})
    assert problem.startswith(
        "container 'train' uses the network claim(s) nic without securityContext.capabilities.add [IPC_LOCK]"
    )
    assert "8 MiB memlock" in problem


def test_only_containers_handed_a_network_claim_are_judged() -> None:
    assert rdma_pod_problems(pod_spec(consumed=False), {"ib-network"}) == []
    assert rdma_pod_problems(pod_spec(), {"some-other-template"}) == []
    assert rdma_pod_problems(pod_spec(claim={"name": "nic", "resourceClaimName": "shared-nic"}), {"shared-nic"})
    assert rdma_pod_problems("not a spec", {"ib-network"}) == []


@pytest.mark.parametrize("resource_type", sorted(POD_SPEC_PATHS))
def test_every_workload_kind_is_read_where_it_keeps_its_pod_spec(resource_type: str) -> None:
    workload = ("urn:w", resource_type, "w", nest(resource_type, pod_spec()))
    stack = [
        ("urn:t", *IB_TEMPLATE[:1], "ib", IB_TEMPLATE[1]),
        ("urn:g", *GPU_TEMPLATE[:1], "g", GPU_TEMPLATE[1]),
        workload,
    ]
    [(urn, message)] = rdma_workload_violations(stack)
    assert urn == "urn:w" and message.startswith(f"{resource_type.rsplit(':', 1)[-1]} \"w\": container 'train'")


def test_claims_and_first_available_requests_count_as_network_sources() -> None:
    workload = (
        "urn:w",
        "kubernetes:core/v1:Pod",
        "w",
        {"spec": pod_spec(claim={"name": "nic", "resourceClaimName": "shared-nic"})},
    )
    assert len(rdma_workload_violations([("urn:c", RDMA_CLAIM[0], "c", RDMA_CLAIM[1]), workload])) == 1
    gpu_only = (
        "urn:w",
        "kubernetes:core/v1:Pod",
        "w",
        {"spec": pod_spec(claim={"name": "nic", "resourceClaimTemplateName": "gpu"})},
    )
    assert rdma_workload_violations([("urn:g", GPU_TEMPLATE[0], "g", GPU_TEMPLATE[1]), gpu_only]) == []


@pytest.fixture(scope="module")
def prod_with_samples() -> list[PlannedResource]:
    run = run_program("prod", config={**load_stack_config("prod"), "nebius-dra:samplePods": "true"})
    assert run.error is None, run.error
    return [PlannedResource(r.urn, r.type, r.name, copy.deepcopy(r.inputs)) for r in run.resources]


def test_the_stacks_rdma_sample_pod_passes_through_the_pack(prod_with_samples: list[PlannedResource]) -> None:
    [sample] = [r for r in prod_with_samples if r.name.endswith("rdma-workload")]
    assert sample.props["spec"]["containers"][0]["securityContext"] == {"capabilities": {"add": ["IPC_LOCK"]}}
    assert [f for f in check_resources(prod_with_samples) if f.policy == "rdma-pod-memlock"] == []
    del sample.props["spec"]["containers"][0]["securityContext"]
    [finding] = [f for f in check_resources(prod_with_samples) if f.policy == "rdma-pod-memlock"]
    assert finding.mandatory and finding.urn == sample.urn and "container 'workload'" in finding.message
