"""dev on Kubernetes 1.36 with a claim template that tolerates a device taint, on a real 1.36 control plane.

The done-when's 1.36 stack: device-taint tolerations, the chart's extended-resource DeviceClass and the
kubernetes-sigs driver line. `exactly.tolerations` (DRADeviceTaints) is refused by the stack below 1.36
and on by default in 1.36 (policies/dra_minors.json, checked against v1.36.3's pkg/features/kube_features.go).
Here the real 1.36 API server must store the template with its tolerations and a device taint in a
ResourceSlice as sent, the real 1.36 scheduler must keep the plain `gpu` claim off the tainted GPU while it
allocates `gpu-tolerating` on it, tools.verify must report the tainted GPU, and a plain pod asking
`nvidia.com/gpu: 1` must get a GPU through the scheduler's own claim (DRAExtendedResource, test_dra_dev.py).

Run from the repository root: venv/bin/python -m pytest -q e2e/dra
"""

from __future__ import annotations

import pytest
from dra_checks import (
    check_objects_accepted,
    check_plugin_pods,
    check_sample_pods,
    check_template_details,
    check_templates,
    failed_steps,
    run_verify,
    verify_stack,
)
from dra_fakes import resource_slice
from dra_kube import RESOURCE_API
from dra_scenarios import GPU_TOLERATING, UNMONITORED_TAINT
from dra_stack import probe, unschedulable
from test_dra_dev import (
    test_a_plain_nvidia_gpu_pod_is_served_by_dra_only_where_the_minor_has_extended_resources,
    test_stand_in_nodes_report_the_kubelet_version_of_the_control_plane,
)

from components.dra_constants import GPU_DRIVER

SCENARIO = "dev-taints"


def test_api_server_accepts_every_object_of_the_plan(deployed):
    check_objects_accepted(deployed)


def test_tolerations_are_stored_as_the_stack_writes_them(kube, deployed):
    stored = kube.get(RESOURCE_API, "ResourceClaimTemplate", GPU_TOLERATING["name"], deployed.claim_namespace)
    [request] = stored["spec"]["spec"]["devices"]["requests"]
    assert request["exactly"]["tolerations"] == GPU_TOLERATING["requests"][0]["exactly"]["tolerations"], request


def test_kubelet_plugin_lands_on_every_gpu_node(kube, deployed):
    check_plugin_pods(kube, deployed)


def test_sample_pod_runs_where_the_stack_means_it(deployed, samples):
    check_sample_pods(deployed, samples)


def test_every_claim_template_is_allocated_on_a_group_that_serves_it(deployed, probes):
    check_templates(deployed, probes)
    check_template_details(deployed, probes)


@pytest.fixture
def tainted_gpu(kube, deployed, probes):
    """The GPU node's slice republished with its every GPU tainted unmonitored, as the driver would; restored after."""
    node = deployed.gpu_nodes()[0]
    name = f"{node}-{GPU_DRIVER}"
    devices = kube.get(RESOURCE_API, "ResourceSlice", name)["spec"]["devices"]
    tainted = [{**device, "taints": [UNMONITORED_TAINT]} for device in devices]
    kube.delete(RESOURCE_API, "ResourceSlice", name)
    kube.wait_gone(RESOURCE_API, "ResourceSlice", [name])
    stored = kube.create(resource_slice(node, GPU_DRIVER, tainted))
    try:
        yield stored
    finally:
        kube.delete(RESOURCE_API, "ResourceSlice", name)
        kube.wait_gone(RESOURCE_API, "ResourceSlice", [name])
        kube.create(resource_slice(node, GPU_DRIVER, devices))


def test_device_taint_is_stored_as_published(tainted_gpu):
    for device in tainted_gpu["spec"]["devices"]:
        assert [{k: t[k] for k in UNMONITORED_TAINT} for t in device.get("taints", [])] == [UNMONITORED_TAINT], device


def test_a_tainted_gpu_is_allocated_only_to_the_claim_that_tolerates_it(kube, deployed, tainted_gpu, report):
    refusal = unschedulable(kube, deployed, "gpu", deployed.claim_namespace)
    assert "cannot allocate all claims" in refusal.message, refusal.story
    report.scenario(SCENARIO)["never allocated: gpu on a tainted GPU"] = refusal.message
    report.claim(SCENARIO, "gpu", False, "h200 (GPU tainted unmonitored)")
    result = probe(kube, deployed, GPU_TOLERATING["name"], label="-tainted")
    assert result.problem is None, result.problem
    report.claim(SCENARIO, GPU_TOLERATING["name"], True, f"{result.group} (GPU tainted unmonitored)", result)
    assert result.group == "h200", result


def test_the_verifier_fails_on_the_tainted_gpu_naming_node_device_and_taint(cp, deployed, tainted_gpu, tmp_path):
    status, result, output = run_verify(verify_stack(deployed), cp.kubeconfig, tmp_path / "verify-tainted.json")
    failed = failed_steps(result)
    assert status == 1 and set(failed) == {"gpu-taints"}, f"tools.verify exited {status}:\n{output}"
    node = tainted_gpu["spec"]["nodeName"]
    subjects = {f["subject"]: f["found"] for f in failed["gpu-taints"]["findings"]}
    assert subjects.keys() == {f"node {node} (group h200) device {d['name']}" for d in tainted_gpu["spec"]["devices"]}
    for found in subjects.values():
        # timeAdded is the API server's: the slice was published without one.
        assert found.startswith(f"taint {UNMONITORED_TAINT['key']}:{UNMONITORED_TAINT['effect']}, added "), found
