"""prod's burn-in Job on a real Kubernetes 1.34 control plane: accepted, placed one pod per node, claims allocated.

The objects are built by the verifier's own code (tools/verify/burnin.py, burnin_job.py) for the
deployed prod stand-in stack, as `python -m tools.verify --burn-in` builds them, and sent to the
real API server. This control plane runs no Job controller (e2e/kube/control_plane.py runs it only
with workload_controllers), so the Job's pods are created the way kube-controller-manager v1.34.12
creates an Indexed Job's pods (pkg/controller/job/job_controller.go and indexed_job_utils.go: the
stored Job's pod template with the completion-index annotation and label, the JOB_COMPLETION_INDEX
env var read from that label, hostname `<job>-<index>`, generateName `<job>-<index>-` and the Job
as controller owner). The real resourceclaim controller makes their claims from the stack's
templates and the real scheduler allocates them and binds the pods. There is no kubelet: the pods
are bound, not run; the verdict on all_reduce_perf's output is tested in tests/tools/verify/test_verify_burnin.py
with the captured output.

Run from the repository root: venv/bin/python -m pytest -q e2e/dra/test_dra_prod_burnin.py
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any

import pytest
from dra_kube import RESOURCE_API, claim_names, wait_for
from kubernetes.dynamic.exceptions import NotFoundError

from components.dra_constants import IB_TEMPLATE, MULTI_GPU_TEMPLATE, PCIE_ROOT_ATTRIBUTE
from policies.dra_guardrails.rdma_pod_rules import rdma_pod_problems
from tools.verify.allocation import requested_count
from tools.verify.burnin import BurnInRun, BurnInSettings, group_nodes
from tools.verify.burnin_job import RUN_LABEL, BurnInPlan, headless_service, job, new_ssh_keys, owned_by, ssh_secret
from tools.verify.expectations import expectations_for

pytestmark = pytest.mark.scenarios("prod")
INDEX = "batch.kubernetes.io/job-completion-index"  # k8s.io/api batch/v1 JobCompletionIndexAnnotation


def indexed_pod(stored_job: dict[str, Any], index: int) -> dict[str, Any]:
    """The pod kube-controller-manager's Job controller (v1.34.12) creates for one completion index."""
    template = copy.deepcopy(stored_job["spec"]["template"])
    metadata = template.setdefault("metadata", {})
    metadata.setdefault("annotations", {})[INDEX] = str(index)
    metadata.setdefault("labels", {})[INDEX] = str(index)  # PodIndexLabel, GA since 1.32
    for container in template["spec"].get("initContainers", []) + template["spec"]["containers"]:
        env = container.setdefault("env", [])
        env.append(
            {"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {"fieldPath": f"metadata.labels['{INDEX}']"}}}
        )
    template["spec"]["hostname"] = f"{stored_job['metadata']['name']}-{index}"
    owner = {**owned_by(stored_job)[0], "controller": True, "blockOwnerDeletion": True}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            **metadata,
            "generateName": f"{stored_job['metadata']['name']}-{index}-",
            "namespace": stored_job["metadata"]["namespace"],
            "ownerReferences": [owner],
        },
        "spec": template["spec"],
    }


class Placed:
    def __init__(
        self, plan: BurnInPlan, stored: dict[str, Any], pods: list[dict[str, Any]], owned: list[tuple[str, str]]
    ):
        self.plan = plan
        self.job = stored
        self.pods = pods
        self.owned = owned


def place(kube, deployed, group: str) -> Placed:
    expect = expectations_for(deployed.config, deployed.scenario.name)
    nodes = kube.list("v1", "Node")
    template = kube.get(RESOURCE_API, "ResourceClaimTemplate", MULTI_GPU_TEMPLATE, deployed.claim_namespace)
    gpus = requested_count(template)
    settings = BurnInSettings(requested=True, name_suffix=lambda: "e2e00")
    run = BurnInRun(None, expect, settings, nodes, lambda _: None)  # only its plan(): no cluster is asked
    plan = run.plan(expect.group(group), len(group_nodes(nodes, group)), gpus)
    manifest = job(plan)
    assert rdma_pod_problems(manifest["spec"]["template"]["spec"], {IB_TEMPLATE}) == []
    stored = kube.create(manifest)
    owned = []
    if plan.across_nodes:
        for made in (ssh_secret(plan, new_ssh_keys(), owned_by(stored)), headless_service(plan, owned_by(stored))):
            kube.create(made)
            owned.append((made["kind"], made["metadata"]["name"]))
    created = [kube.create(indexed_pod(stored, index)) for index in range(plan.nodes)]
    names = [pod["metadata"]["name"] for pod in created]

    def all_bound_and_allocated():
        pods = [kube.pod(plan.namespace, name) or {} for name in names]
        if not all(pod.get("spec", {}).get("nodeName") for pod in pods):
            return None
        claims = [claim_names(pod) for pod in pods]
        if any(len(c) != 1 + plan.nics for c in claims):
            return None
        for by_pod in claims:
            for claim in by_pod.values():
                if not (kube.claim(plan.namespace, claim) or {}).get("status", {}).get("allocation"):
                    return None
        return pods

    def story():
        return "\n".join(kube.pod_story(plan.namespace, name) for name in names)

    pods = wait_for(
        f"the burn-in pods of {group} to be bound with every claim allocated", all_bound_and_allocated, explain=story
    )
    return Placed(plan, stored, pods, owned)


@pytest.fixture(scope="module")
def fabric(kube, deployed):
    placed = place(kube, deployed, "h200-train")
    yield placed
    delete_run(kube, placed)


def delete_run(kube, placed: Placed) -> None:
    """As the verifier does: delete the Job, in the background; what it owns goes with it."""
    with contextlib.suppress(NotFoundError):
        kube.resource("batch/v1", "Job").delete(
            name=placed.plan.name, namespace=placed.plan.namespace, propagation_policy="Background"
        )


def devices_of(kube, namespace: str, claim: str) -> list[dict[str, Any]]:
    allocation = kube.claim(namespace, claim)["status"]["allocation"]
    slices = kube.slices()
    found = []
    for result in allocation["devices"]["results"]:
        device = next(
            d
            for s in slices
            if s["spec"]["driver"] == result["driver"] and s["spec"]["pool"]["name"] == result["pool"]
            for d in s["spec"].get("devices") or []
            if d["name"] == result["device"]
        )
        found.append(
            {
                **result,
                "node": next(s["spec"].get("nodeName") for s in slices if s["spec"]["pool"]["name"] == result["pool"]),
                "attributes": device.get("attributes") or {},
            }
        )
    return found


def test_the_api_server_accepts_the_job_as_verify_builds_it(scenario_name, fabric, report):
    spec = fabric.job["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 4, 4)
    assert spec["successPolicy"] == {"rules": [{"succeededIndexes": "0"}]}
    assert fabric.owned == [("Secret", fabric.plan.name), ("Service", fabric.plan.name)]
    report.scenario(scenario_name)["burn-in"] = {"job": fabric.plan.name, "pods": len(fabric.pods)}


def test_one_pod_per_node_of_the_fabric_group(fabric, deployed):
    nodes = [pod["spec"]["nodeName"] for pod in fabric.pods]
    assert sorted(nodes) == sorted(deployed.gpu_nodes("h200-train")), nodes
    assert [pod["spec"]["hostname"] for pod in fabric.pods] == [fabric.plan.pod_hostname(i) for i in range(4)]
    assert all(pod["spec"]["subdomain"] == fabric.plan.name for pod in fabric.pods)


def test_each_pod_holds_every_gpu_and_every_infiniband_nic_of_its_own_node(scenario_name, kube, fabric, report):
    """ib-network asks for no PCIe-root alignment, so the pod gets its node's IB NICs wherever they sit; the stand-in
    node has NICs on the roots of GPUs 4-7 only (e2e/dra/dra_fakes.py IB_NICS), and the report says how many pair."""
    placed = {}
    for pod in fabric.pods:
        node = pod["spec"]["nodeName"]
        claims = claim_names(pod)
        gpus = devices_of(kube, fabric.plan.namespace, claims["gpus"])
        nics = [d for name in fabric.plan.nic_claims() for d in devices_of(kube, fabric.plan.namespace, claims[name])]
        assert len(gpus) == 8 and {d["driver"] for d in gpus} == {"gpu.nvidia.com"}, gpus
        assert len(nics) == 8 and {d["driver"] for d in nics} == {"dra.net"}, nics
        assert len({d["device"] for d in nics}) == 8, "a NIC was handed out twice"
        assert {d["node"] for d in gpus + nics} == {node}
        published = {
            d["name"]
            for s in kube.slices()
            if s["spec"].get("nodeName") == node and s["spec"]["driver"] == "dra.net"
            for d in s["spec"].get("devices") or []
            if (d.get("attributes") or {}).get("dra.net/rdma", {}).get("bool")
        }
        assert {d["device"] for d in nics} == published, "the pod does not hold every RDMA NIC of its node"
        roots = lambda devices: {next(iter(d["attributes"][PCIE_ROOT_ATTRIBUTE].values())) for d in devices}  # noqa: E731
        placed[node] = {"gpus with a NIC on their root": len(roots(gpus) & roots(nics)), "nics": sorted(published)}
    report.scenario(scenario_name)["burn-in-devices"] = placed


def test_the_burst_group_runs_alone_on_its_node_with_its_gpus_only(kube, deployed):
    placed = place(kube, deployed, "h200-burst")
    try:
        assert not placed.plan.across_nodes and placed.owned == []
        [pod] = placed.pods
        assert pod["spec"]["nodeName"] in deployed.gpu_nodes("h200-burst")
        assert list(claim_names(pod)) == ["gpus"]
    finally:
        delete_run(kube, placed)


def test_deleting_the_job_deletes_everything_the_run_made(kube, fabric):
    delete_run(kube, fabric)
    namespace = fabric.plan.namespace
    selector = f"{RUN_LABEL}={fabric.plan.name}"
    wait_for(
        "the garbage collector to delete the burn-in's pods, Secret and Service with its Job",
        lambda: (
            not kube.list("v1", "Pod", namespace, label_selector=selector)
            and kube.get("v1", "Secret", fabric.plan.name, namespace) is None
            and kube.get("v1", "Service", fabric.plan.name, namespace) is None
        ),
        explain=lambda: str(
            [p["metadata"]["name"] for p in kube.list("v1", "Pod", namespace, label_selector=selector)]
        ),
    )

    def claims_left() -> list[str]:
        return [
            c["metadata"]["name"]
            for c in kube.list(RESOURCE_API, "ResourceClaim", namespace)
            if c["metadata"]["name"].startswith(fabric.plan.name)
        ]

    wait_for("the burn-in pods' claims to go with them", lambda: not claims_left(), explain=lambda: str(claims_left()))
