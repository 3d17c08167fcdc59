"""dev on a real Kubernetes 1.34 control plane: one 1-GPU H200 node, one system node, the sample pod, the verifier.

The tests name their scenario through `deployed`, not this module's SCENARIO, so test_dra_dev_upgraded.py,
test_dra_dev_135.py and test_dra_dev_taints.py run them again on other control planes.

Run from the repository root: venv/bin/python -m pytest -q e2e/dra
"""

from __future__ import annotations

from dra_checks import (
    check_extended_resource,
    check_kubelet_versions,
    check_objects_accepted,
    check_plugin_pods,
    check_sample_pods,
    check_template_details,
    check_templates,
    check_unfit_request,
    failed_steps,
    run_verify,
    verify_stack,
)
from dra_fakes import resource_slice
from dra_kube import JSON_PATCH, RESOURCE_API

from components.dra_constants import GPU_DRIVER, KUBELET_PLUGIN_LABEL

SCENARIO = "dev"


def test_api_server_accepts_every_object_of_the_plan(deployed):
    check_objects_accepted(deployed)


def test_kubelet_plugin_lands_on_every_gpu_node(kube, deployed):
    check_plugin_pods(kube, deployed)


def test_sample_pod_runs_where_the_stack_means_it(deployed, samples):
    check_sample_pods(deployed, samples)


def test_every_claim_template_is_allocated_on_a_group_that_serves_it(deployed, probes):
    check_templates(deployed, probes)
    check_template_details(deployed, probes)


def test_stand_in_nodes_report_the_kubelet_version_of_the_control_plane(kube, cp, deployed):
    check_kubelet_versions(kube, deployed, cp.kube_version)


def test_a_plain_nvidia_gpu_pod_is_served_by_dra_only_where_the_minor_has_extended_resources(
    kube, cluster, deployed, probes, report
):
    gpu_class = cluster.classes["gpu.nvidia.com"][1]
    result = check_extended_resource(kube, deployed, cluster.minor, gpu_class)
    outcome = (
        f"{result.node}: claim {result.claim['metadata']['name']} by the scheduler"
        if result.claim
        else f"Pending: {result.message}"
    )
    report.scenario(deployed.scenario.name)["plain pod nvidia.com/gpu: 1"] = outcome
    report.claim(deployed.scenario.name, "plain pod nvidia.com/gpu: 1", result.claim is not None, result.node or "-")


def test_more_gpus_than_any_node_has_stays_unschedulable(kube, deployed, probes, report):
    refusal = check_unfit_request(kube, deployed)
    report.scenario(deployed.scenario.name)["unschedulable"] = {
        "message": refusal.message,
        "seconds_to_verdict": refusal.seconds,
    }


def _verify(cp, deployed, tmp_path, name):
    return run_verify(verify_stack(deployed), cp.kubeconfig, tmp_path / f"verify-{name}.json")


def test_verifier_passes(cp, deployed, probes, tmp_path, report):
    status, result, output = _verify(cp, deployed, tmp_path, "healthy")
    assert status == 0 and result.get("passed") is True, f"tools.verify exited {status}:\n{output}"
    ran = {c["name"]: c["status"] for c in result["checks"]}
    for step in ("gpu-nodes", "driver-pods", "gpu-deviceclass", "gpu-slices", "gpu-taints", "legacy-device-plugin"):
        assert ran.get(step) == "pass", f"{step}: {ran.get(step)}\n{output}"
    report.scenario(deployed.scenario.name)["verify"] = ran


def _expect_failure(cp, deployed, tmp_path, name, step, found_text):
    status, result, output = _verify(cp, deployed, tmp_path, name)
    failed = failed_steps(result)
    assert status == 1, f"tools.verify exited {status} on the broken cluster ({name}), expected 1:\n{output}"
    assert set(failed) == {step}, f"expected only {step} to fail ({name}), failed: {sorted(failed)}\n{output}"
    found = [f["found"] for f in failed[step]["findings"]]
    assert any(found_text in text for text in found), f"{step} findings {found} do not mention {found_text!r}"
    return failed[step]


def test_verifier_fails_on_a_gpu_node_without_slices(kube, cp, deployed, probes, tmp_path):
    node = deployed.gpu_nodes()[0]
    name = f"{node}-{GPU_DRIVER}"
    saved = kube.get(RESOURCE_API, "ResourceSlice", name)
    kube.delete(RESOURCE_API, "ResourceSlice", name)
    kube.wait_gone(RESOURCE_API, "ResourceSlice", [name])
    try:
        _expect_failure(
            cp, deployed, tmp_path, "no-slices", "gpu-slices", f"no {GPU_DRIVER} ResourceSlice for the node"
        )
    finally:
        kube.create(resource_slice(node, GPU_DRIVER, saved["spec"]["devices"]))


def test_verifier_fails_on_a_node_advertising_the_legacy_gpu_resource(kube, cp, deployed, probes, tmp_path):
    node = deployed.gpu_nodes()[0]
    legacy = {"status": {"capacity": {"nvidia.com/gpu": "1"}, "allocatable": {"nvidia.com/gpu": "1"}}}
    kube.patch("v1", "Node", node, legacy, status=True)
    try:
        _expect_failure(cp, deployed, tmp_path, "legacy-plugin", "legacy-device-plugin", "allocatable nvidia.com/gpu=1")
    finally:
        cleared = {"status": {"capacity": {"nvidia.com/gpu": None}, "allocatable": {"nvidia.com/gpu": None}}}
        kube.patch("v1", "Node", node, cleared, status=True)


def test_verifier_fails_on_a_gpu_node_without_the_kubelet_plugin_label(kube, cp, deployed, probes, tmp_path):
    node = deployed.gpu_nodes()[0]
    pointer = "/metadata/labels/" + KUBELET_PLUGIN_LABEL.replace("~", "~0").replace("/", "~1")
    kube.patch("v1", "Node", node, [{"op": "remove", "path": pointer}], content_type=JSON_PATCH)
    try:
        _expect_failure(cp, deployed, tmp_path, "no-plugin-label", "gpu-nodes", f"{KUBELET_PLUGIN_LABEL}=<unset>")
    finally:
        kube.patch("v1", "Node", node, [{"op": "add", "path": pointer, "value": "true"}], content_type=JSON_PATCH)
