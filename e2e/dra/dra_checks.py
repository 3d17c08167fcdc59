"""The assertions every stack's module makes, and the verifier run as a subprocess.

Each failure message carries what the API server, the scheduler or the resourceclaim controller
said (their messages, the pod's PodScheduled condition, events, the claim's status).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from dra_fakes import GPU_EXTENDED_RESOURCE, PAIRED_ROOTS
from dra_kube import RESOURCE_API, Kube
from dra_stack import Deployed, ExtendedResourcePod, Probe, Refusal, extended_resource_pod, unschedulable

from components.dra_constants import (
    GPU_BY_PRODUCT_TEMPLATE,
    GPU_CLASS,
    GPU_DRIVER,
    GPU_NIC_TEMPLATE,
    IB_TEMPLATE,
    MULTI_GPU_TEMPLATE,
    NETWORK_DRIVER,
    PCIE_ROOT_ATTRIBUTE,
    RDMA_TEMPLATE,
)
from components.dra_minors import gate_on
from tools.verify.expectations import expectations_for, load_expectations

PROJECT = Path(__file__).resolve().parent.parent.parent
VERIFY_TIMEOUT = 180


def check_objects_accepted(deployed: Deployed) -> None:
    """Every object of the plan applied server-side (strict field validation, CEL compiled) and stored as sent."""
    assert deployed.applied, f"the plan in {deployed.plan_dir} wrote no Kubernetes objects"
    refused = [f"{a.path}: {a.error}" for a in deployed.applied if a.error]
    altered = [f"{a.path}: {d}" for a in deployed.applied for d in a.differences]
    assert not refused, "the API server refused objects of the plan:\n" + "\n".join(refused)
    assert not altered, "the API server did not store objects as the plan wrote them:\n" + "\n".join(altered)


def check_plugin_pods(kube: Kube, deployed: Deployed) -> None:
    """The scheduler put a kubelet plugin pod on every GPU node with the plan's nodeSelector and tolerations."""
    namespace = deployed.config.driver.namespace
    assert set(deployed.plugin_pods) == set(deployed.gpu_nodes()), (deployed.plugin_pods, deployed.gpu_nodes())
    for node, name in deployed.plugin_pods.items():
        pod = kube.pod(namespace, name) or {}
        assert pod.get("spec", {}).get("nodeName") == node, kube.pod_story(namespace, name)
        assert pod.get("status", {}).get("phase") == "Running", kube.pod_story(namespace, name)


def _problems(probes: dict[str, Probe]) -> list[str]:
    return [p.problem for p in probes.values() if p.problem]


def check_sample_pods(deployed: Deployed, samples: dict[str, Probe]) -> None:
    """The stack's sample pods are allocated and bound on the groups the stack means them for."""
    expected = deployed.scenario.sample_pods
    assert set(samples) == set(expected), f"sample pods planned {sorted(samples)}, expected {sorted(expected)}"
    problems = _problems(samples)
    assert not problems, "sample pods were not placed:\n" + "\n\n".join(problems)
    for name, result in samples.items():
        assert result.group in expected[name], (
            f"sample pod {name} ran on {result.node} of group {result.group}; it belongs on {sorted(expected[name])}"
        )
    if "rdma-workload" in samples:
        result = samples["rdma-workload"]
        assert [r["driver"] for r in result.results] == [NETWORK_DRIVER], result.results
        assert result.attribute("ib", "dra.net/encapsulation") == ["infiniband"], result.devices
    if "gpu-workload" in samples:
        assert [r["driver"] for r in samples["gpu-workload"].results] == [GPU_DRIVER], samples["gpu-workload"].results


def check_templates(deployed: Deployed, probes: dict[str, Probe]) -> None:
    """Each template the stack ships gets a claim generated and allocated, on a node of a group that can serve it."""
    serves = deployed.scenario.serves
    assert set(probes) == set(serves), (
        f"templates the plan ships: {sorted(probes)}; the scenario has expectations for: {sorted(serves)}"
    )
    problems = _problems(probes)
    assert not problems, "claims from these templates were not allocated:\n" + "\n\n".join(problems)
    for template, result in probes.items():
        # Generated for the pod by the resourceclaim controller, and reserved for it by the scheduler.
        assert result.owners == [f"Pod/{result.pod}"], f"{template}: claim {result.claim} owned by {result.owners}"
        assert result.reserved_for == [f"pods/{result.pod}"], f"{template}: claim reserved for {result.reserved_for}"
    wrong = [
        f"{t}: allocated on {p.node} (group {p.group}); groups that can serve it: {sorted(serves[t])}"
        for t, p in probes.items()
        if p.group not in serves[t]
    ]
    assert not wrong, "\n".join(wrong)


def check_template_details(deployed: Deployed, probes: dict[str, Probe]) -> None:
    """What each built-in template was given: the right driver, product, count, NIC kind and PCIe root."""
    claims = deployed.config.claims
    if GPU_BY_PRODUCT_TEMPLATE in probes:
        products = probes[GPU_BY_PRODUCT_TEMPLATE].attribute("gpu", "productName")
        assert products and set(products) <= set(claims.gpu_products), (products, claims.gpu_products)
    if MULTI_GPU_TEMPLATE in probes:
        result = probes[MULTI_GPU_TEMPLATE]
        assert len(result.results) == claims.multi_gpu_count, (claims.multi_gpu_count, result.results)
        assert {r["pool"] for r in result.results} == {result.node}
    for template in (IB_TEMPLATE, RDMA_TEMPLATE):
        if template in probes:
            result = probes[template]
            assert [r["driver"] for r in result.results] == [NETWORK_DRIVER], result.results
            assert result.devices[0]["attributes"]["dra.net/rdma"] == {"bool": True}, result.devices
    if IB_TEMPLATE in probes:
        assert probes[IB_TEMPLATE].attribute("ib", "dra.net/encapsulation") == ["infiniband"]
    if GPU_NIC_TEMPLATE in probes:
        result = probes[GPU_NIC_TEMPLATE]
        gpu_roots = result.attribute("gpu", PCIE_ROOT_ATTRIBUTE)
        nic_roots = result.attribute("nic", PCIE_ROOT_ATTRIBUTE)
        assert len(gpu_roots) == len(nic_roots) == 1, result.results
        assert gpu_roots == nic_roots, f"GPU on {gpu_roots}, NIC on {nic_roots}: {result.results}"
        # Only four of the node's eight GPUs share a root with a NIC, and the NICs listed first do not.
        assert gpu_roots[0] in PAIRED_ROOTS, (gpu_roots, sorted(PAIRED_ROOTS))


def too_many_gpus_template(namespace: str, count: int) -> dict:
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "too-many-gpus", "namespace": namespace},
        "spec": {
            "spec": {
                "devices": {"requests": [{"name": "gpus", "exactly": {"deviceClassName": GPU_CLASS, "count": count}}]}
            }
        },
    }


def check_unfit_request(kube: Kube, deployed: Deployed) -> Refusal:
    """More GPUs than any node has: the pod stays Pending and the scheduler says why."""
    most = max(g.gpus_per_node for g in deployed.config.gpu_node_groups)
    kube.apply(too_many_gpus_template(deployed.claim_namespace, most + 1))
    refusal = unschedulable(kube, deployed, "too-many-gpus", deployed.claim_namespace)
    assert "cannot allocate all claims" in refusal.message, refusal.story
    assert any("cannot allocate all claims" in e for e in refusal.events), refusal.story
    return refusal


def check_kubelet_versions(kube: Kube, deployed: Deployed, control_plane_version: str) -> None:
    """Every stand-in node reports the kubelet of the control plane's release, as a node group on that cluster does."""
    reported = {n["metadata"]["name"]: n["status"]["nodeInfo"]["kubeletVersion"] for n in kube.list("v1", "Node")}
    assert set(reported) == set(deployed.nodes), (sorted(reported), sorted(deployed.nodes))
    assert set(reported.values()) == {control_plane_version}, reported


def check_extended_resource(kube: Kube, deployed: Deployed, minor: str, gpu_class: dict) -> ExtendedResourcePod:
    """A pod asking `nvidia.com/gpu: 1` and no claim: served by DRA where the minor has DRAExtendedResource on.

    There the API server keeps the chart's `extendedResourceName` on gpu.nvidia.com and the scheduler creates
    a ResourceClaim for the pod and allocates it a GPU of the node's slice; elsewhere the field is dropped and
    the pod stays Pending, since no DRA node advertises the resource (policies/dra_minors.json says which).
    """
    served = gate_on("DRAExtendedResource", minor)
    kept = gpu_class.get("spec", {}).get("extendedResourceName")
    assert kept == (GPU_EXTENDED_RESOURCE if served else None), (
        f"Kubernetes {minor} stored gpu.nvidia.com as {gpu_class}"
    )
    result = extended_resource_pod(kube, deployed, GPU_EXTENDED_RESOURCE, expect_bound=served)
    if not served:
        assert f"Insufficient {GPU_EXTENDED_RESOURCE}" in (result.message or ""), result.story
        assert result.node is None and result.claim is None and result.status is None, result.story
        return result
    assert result.node in deployed.gpu_nodes(), result.story
    claim = result.claim or {}
    [mapping] = (result.status or {}).get("requestMappings") or [{}]
    assert (result.status or {}).get("resourceClaimName") == claim["metadata"]["name"], result.story
    assert mapping.get("containerName") == "cuda" and mapping.get("resourceName") == GPU_EXTENDED_RESOURCE, (
        result.status
    )
    [request] = claim["spec"]["devices"]["requests"]
    assert request["name"] == mapping["requestName"], (request, mapping)
    assert request["exactly"]["deviceClassName"] == GPU_CLASS and request["exactly"]["count"] == 1, request
    [allocated] = claim["status"]["allocation"]["devices"]["results"]
    assert (allocated["driver"], allocated["pool"]) == (GPU_DRIVER, result.node), allocated
    published = {d["name"] for s in kube.slices() if s["spec"]["nodeName"] == result.node for d in s["spec"]["devices"]}
    assert allocated["device"] in published, (allocated, sorted(published))
    reserved = [(r.get("resource"), r.get("name")) for r in claim["status"].get("reservedFor") or []]
    assert reserved == [("pods", result.pod)], claim["status"]
    return result


# -------------------------------------------------------------------------------------- verifier
def verify_stack(deployed: Deployed) -> str:
    """The stack file `tools.verify --stack` reads for the scenario: its base's, once the expectations the verifier
    derives from that file are seen to be the scenario's own (a variant's kubernetesVersion, driver chart line and
    user templates are not among what the verifier reads)."""
    stack = deployed.scenario.base
    from_file = replace(load_expectations(stack), stack=deployed.scenario.name)
    assert from_file == expectations_for(deployed.config, deployed.scenario.name), (
        f"tools.verify --stack {stack} would expect another cluster than scenario {deployed.scenario.name} builds"
    )
    return stack


def run_verify(stack: str, kubeconfig: Path, json_path: Path) -> tuple[int, dict, str]:
    """`python -m tools.verify --skip-smoke` against the control plane; exit status, JSON report, output."""
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "tools.verify",
            "--stack",
            stack,
            "--kubeconfig",
            str(kubeconfig),
            "--skip-smoke",
            "--json",
            str(json_path),
        ],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=VERIFY_TIMEOUT,
    )
    output = run.stdout + run.stderr
    report = json.loads(json_path.read_text()) if json_path.exists() else {}
    return run.returncode, report, output


def failed_steps(report: dict) -> dict[str, dict]:
    return {c["name"]: c for c in report.get("checks", []) if c["status"] == "fail"}
