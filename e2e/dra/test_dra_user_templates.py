"""The operator-mode InfiniBand stack with an H100 group and user templates, on a real Kubernetes 1.34 control plane.

User templates: prod's h200-full-node, README's gpu-any (firstAvailable: an H200, else any GPU) and
gpu-monitor (adminAccess to every GPU of a node). The H100 node publishes "NVIDIA H100 80GB HBM3" GPUs,
so gpu-by-product (H200 only) must never be allocated there, and gpu-any falls back to its second
alternative there.

Run from the repository root: venv/bin/python -m pytest -q e2e/dra
"""

from __future__ import annotations

import copy

import pytest
from dra_checks import (
    check_objects_accepted,
    check_plugin_pods,
    check_sample_pods,
    check_template_details,
    check_templates,
)
from dra_kube import api_message
from dra_scenarios import H100, H200
from dra_stack import ensure_namespace, probe, release, unschedulable

from components.dra_constants import ADMIN_ACCESS_LABEL, NODE_GROUP_LABEL

pytestmark = pytest.mark.scenarios("ib-operator-templates")
UNLABELLED_NAMESPACE = "dra-e2e-no-admin"


def on_group(group: str) -> dict[str, str]:
    return {NODE_GROUP_LABEL: group}


def test_api_server_accepts_every_object_of_the_plan(deployed):
    check_objects_accepted(deployed)


def test_kubelet_plugin_lands_on_every_gpu_node(kube, deployed):
    check_plugin_pods(kube, deployed)


def test_sample_pods_run_where_the_stack_means_them(deployed, samples):
    check_sample_pods(deployed, samples)


def test_every_claim_template_is_allocated_on_a_group_that_serves_it(deployed, probes):
    check_templates(deployed, probes)
    check_template_details(deployed, probes)


def test_gpu_by_product_is_never_allocated_on_the_h100_node(scenario_name, kube, deployed, probes, report):
    assert probes["gpu-by-product"].attribute("gpu", "productName") == [H200]
    refusal = unschedulable(kube, deployed, "gpu-by-product", deployed.claim_namespace, node_selector=on_group("h100"))
    assert "cannot allocate all claims" in refusal.message, refusal.story
    report.scenario(scenario_name)["never allocated: gpu-by-product on the H100 node"] = refusal.message
    report.claim(scenario_name, "gpu-by-product", False, "h100 (pinned)")


@pytest.mark.parametrize(
    ("group", "alternative", "product"), [("h200-burst", "gpu/h200", H200), ("h100", "gpu/any", H100)]
)
def test_first_available_allocates_the_first_alternative_that_fits(
    scenario_name, kube, deployed, probes, report, group, alternative, product
):
    result = probe(kube, deployed, "gpu-any", node_selector=on_group(group), label=f"-{group}")
    assert result.problem is None, result.problem
    report.claim(scenario_name, "gpu-any", True, f"{group} (pinned) as {alternative}", result)
    assert [r["request"] for r in result.results] == [alternative], result.results
    assert result.attribute("gpu", "productName") == [product], result.devices


def test_first_available_unpinned_matches_the_node_it_got(probes):
    result = probes["gpu-any"]
    expected = "gpu/any" if result.group == "h100" else "gpu/h200"
    assert [r["request"] for r in result.results] == [expected], (result.group, result.results)


def test_admin_access_template_is_allocated_even_over_a_held_gpu(scenario_name, kube, deployed, probes, report):
    namespace = kube.get("v1", "Namespace", deployed.claim_namespace)
    assert namespace["metadata"]["labels"].get(ADMIN_ACCESS_LABEL) == "true", namespace["metadata"]["labels"]
    holder = probe(kube, deployed, "gpu", node_selector=on_group("h100"), label="-holder", keep=True)
    assert holder.problem is None, holder.problem
    try:
        monitor = probe(kube, deployed, "gpu-monitor", node_selector=on_group("h100"), label="-h100")
    finally:
        release(kube, holder.namespace, holder.pod)
    assert monitor.problem is None, monitor.problem
    report.claim(scenario_name, "gpu-monitor", True, "h100 (pinned, one GPU held by another claim)", monitor)
    devices = {r["device"] for r in monitor.results}
    assert len(devices) == 8 and holder.results[0]["device"] in devices, (holder.results, monitor.results)
    assert all(r.get("adminAccess") is True for r in monitor.results), monitor.results


def test_admin_access_template_is_refused_in_a_namespace_without_the_label(
    scenario_name, kube, deployed, probes, report
):
    ensure_namespace(kube, UNLABELLED_NAMESPACE)
    manifest = copy.deepcopy(
        next(
            m
            for m in deployed.manifests().values()
            if m["kind"] == "ResourceClaimTemplate" and m["metadata"]["name"] == "gpu-monitor"
        )
    )
    manifest["metadata"]["namespace"] = UNLABELLED_NAMESPACE
    with pytest.raises(Exception) as refused:
        kube.apply(manifest)
    message = api_message(refused.value)
    assert ADMIN_ACCESS_LABEL in message, message
    report.scenario(scenario_name)["refused: adminAccess without the namespace label"] = message
