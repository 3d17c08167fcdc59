"""dev and its variants on real control planes: one 1-GPU H200 node, one system node, the sample pod, the verifier.

Each test runs once per scenario (dra_scenarios.py) its `scenarios` marker names:

- `dev`: dev's own stack (kubernetesVersion 1.34) on Kubernetes 1.34.
- `dev-135`: dev with kubernetesVersion "1.35" (the minor new stacks default to) on 1.35: the plan is validated
  against 1.35's strict schema and rows of policies/dra_minors.json, and a plain `nvidia.com/gpu: 1` pod stays
  Pending (DRAExtendedResource is off in 1.35).
- `dev-upgraded`: dev's own stack on 1.36, as after a cluster upgrade: the plain pod gets a GPU through the
  chart's extended-resource DeviceClass.
- `dev-taints`: the done-when's 1.36 stack: device-taint tolerations, the chart's extended-resource DeviceClass
  and the kubernetes-sigs driver line. `exactly.tolerations` (DRADeviceTaints) is refused by the stack below 1.36
  and on by default in 1.36 (policies/dra_minors.json, checked against v1.36.3's pkg/features/kube_features.go).
  The real 1.36 API server must store the template with its tolerations and a device taint in a ResourceSlice as
  sent, the real 1.36 scheduler must keep the plain `gpu` claim off the tainted GPU while it allocates
  `gpu-tolerating` on it, and tools.verify must report the tainted GPU.

On each, the API server must store every object of the plan as sent and the scheduler allocate every claim
template and the sample pod on the H200 node; tools.verify (reading dev's stack file, whose expectations are
each scenario's own) must pass and fail as on 1.34, and on dev-taints fail on the tainted GPU.

Run from the repository root: venv/bin/python -m pytest -q e2e/dra
"""

from __future__ import annotations

import pytest
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
from dra_scenarios import GPU_TOLERATING, UNMONITORED_TAINT
from dra_stack import probe, unschedulable

from components.dra_constants import GPU_DRIVER, KUBELET_PLUGIN_LABEL

pytestmark = pytest.mark.scenarios("dev", "dev-135", "dev-upgraded", "dev-taints")
# The scenarios that run the unfit request and tools.verify's pass and fail cases; dev-taints runs its own verifier
# case, on its tainted GPU.
VERIFIED = pytest.mark.scenarios("dev", "dev-135", "dev-upgraded")
# The one with a tainted GPU and a claim template that tolerates it.
TAINTS = pytest.mark.scenarios("dev-taints")


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


@VERIFIED
def test_more_gpus_than_any_node_has_stays_unschedulable(kube, deployed, probes, report):
    refusal = check_unfit_request(kube, deployed)
    report.scenario(deployed.scenario.name)["unschedulable"] = {
        "message": refusal.message,
        "seconds_to_verdict": refusal.seconds,
    }


def _verify(cp, deployed, tmp_path, name):
    return run_verify(verify_stack(deployed), cp.kubeconfig, tmp_path / f"verify-{name}.json")


@VERIFIED
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


@VERIFIED
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


@VERIFIED
def test_verifier_fails_on_a_node_advertising_the_legacy_gpu_resource(kube, cp, deployed, probes, tmp_path):
    node = deployed.gpu_nodes()[0]
    legacy = {"status": {"capacity": {"nvidia.com/gpu": "1"}, "allocatable": {"nvidia.com/gpu": "1"}}}
    kube.patch("v1", "Node", node, legacy, status=True)
    try:
        _expect_failure(cp, deployed, tmp_path, "legacy-plugin", "legacy-device-plugin", "allocatable nvidia.com/gpu=1")
    finally:
        cleared = {"status": {"capacity": {"nvidia.com/gpu": None}, "allocatable": {"nvidia.com/gpu": None}}}
        kube.patch("v1", "Node", node, cleared, status=True)


@VERIFIED
def test_verifier_fails_on_a_gpu_node_without_the_kubelet_plugin_label(kube, cp, deployed, probes, tmp_path):
    node = deployed.gpu_nodes()[0]
    pointer = "/metadata/labels/" + KUBELET_PLUGIN_LABEL.replace("~", "~0").replace("/", "~1")
    kube.patch("v1", "Node", node, [{"op": "remove", "path": pointer}], content_type=JSON_PATCH)
    try:
        _expect_failure(cp, deployed, tmp_path, "no-plugin-label", "gpu-nodes", f"{KUBELET_PLUGIN_LABEL}=<unset>")
    finally:
        kube.patch("v1", "Node", node, [{"op": "add", "path": pointer, "value": "true"}], content_type=JSON_PATCH)


# ------------------------------------------------------------------------------ a tainted GPU (1.36)
@TAINTS
def test_tolerations_are_stored_as_the_stack_writes_them(kube, deployed):
    stored = kube.get(RESOURCE_API, "ResourceClaimTemplate", GPU_TOLERATING["name"], deployed.claim_namespace)
    [request] = stored["spec"]["spec"]["devices"]["requests"]
    assert request["exactly"]["tolerations"] == GPU_TOLERATING["requests"][0]["exactly"]["tolerations"], request


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


@TAINTS
def test_device_taint_is_stored_as_published(tainted_gpu):
    for device in tainted_gpu["spec"]["devices"]:
        assert [{k: t[k] for k in UNMONITORED_TAINT} for t in device.get("taints", [])] == [UNMONITORED_TAINT], device


@TAINTS
def test_a_tainted_gpu_is_allocated_only_to_the_claim_that_tolerates_it(kube, deployed, tainted_gpu, report):
    refusal = unschedulable(kube, deployed, "gpu", deployed.claim_namespace)
    assert "cannot allocate all claims" in refusal.message, refusal.story
    report.scenario(deployed.scenario.name)["never allocated: gpu on a tainted GPU"] = refusal.message
    report.claim(deployed.scenario.name, "gpu", False, "h200 (GPU tainted unmonitored)")
    result = probe(kube, deployed, GPU_TOLERATING["name"], label="-tainted")
    assert result.problem is None, result.problem
    report.claim(
        deployed.scenario.name, GPU_TOLERATING["name"], True, f"{result.group} (GPU tainted unmonitored)", result
    )
    assert result.group == "h200", result


@TAINTS
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
