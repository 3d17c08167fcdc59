"""The verifier's read-only checks against API objects shaped as the API server returns them.

Every failure the issue lists has a case here: no slices, slices on 3 of 4 nodes, a wrong
device count, a crash-looping kubelet plugin, a missing DeviceClass, dranet not ready and a
legacy device plugin; the healthy clusters of both stacks pass every check.
"""

from __future__ import annotations

import dataclasses
import json

import kubernetes_validate
import pytest

from tests.verify_fixtures import (
    DATA,
    PROD_GROUPS,
    copied,
    dev_expectations,
    healthy_dev_state,
    healthy_prod_state,
    load,
    node_names,
    on_node,
    plugin_pod,
    prod_expectations,
    replace_node,
)
from tools.verify.checks import (
    CLUSTER_CHECKS,
    ClusterState,
    Outcome,
    api_failure,
    check_dranet,
    check_dranet_slices,
    check_driver_pods,
    check_gpu_device_class,
    check_gpu_nodes,
    check_gpu_slices,
    check_gpu_taints,
    check_legacy_device_plugin,
    check_network_device_classes,
    check_node_health,
    maintenance_deadline,
)
from tools.verify.cluster import ClusterUnreachableError, CredentialCommandError, CredentialRefusedError
from tools.verify.objects import attribute, devices_on_node, pod_state

TRAIN_NODES = [name for name, group in node_names(PROD_GROUPS).items() if group == "h200-train"]


@pytest.fixture(scope="module")
def prod():
    return prod_expectations()


@pytest.fixture
def state() -> ClusterState:
    return copied(healthy_prod_state())


def single_finding(outcome: Outcome):
    assert not outcome.passed
    assert len(outcome.findings) == 1, outcome.findings
    return outcome.findings[0]


@pytest.mark.parametrize("fixture", sorted(path.name for path in DATA.glob("*.yaml")))
def test_fixtures_validate_against_the_kubernetes_1_34_schema(fixture):
    document = load(fixture)
    for obj in document["items"] if document["kind"] == "List" else [document]:
        kubernetes_validate.validate(obj, "1.34", strict=True)


def test_the_healthy_prod_cluster_passes_every_check(state, prod):
    for check in CLUSTER_CHECKS:
        outcome = check.judge(state, prod)
        assert outcome.passed, (check.name, outcome.findings)
    assert check_gpu_slices(state, prod).summary == "5 GPU node(s) publish 40 GPU(s), as their presets imply"
    health = check_node_health(state, prod)
    assert health.warnings == () and health.summary == "5 GPU node(s): no GPU or boot-disk error reported by Nebius"


def test_the_healthy_dev_cluster_passes_with_one_gpu_per_node_from_its_preset():
    dev = dev_expectations()
    state = healthy_dev_state()
    for check in CLUSTER_CHECKS:
        if not check.infiniband_only:
            assert check.judge(state, dev).passed, check.name
    assert check_gpu_slices(state, dev).summary == "1 GPU node(s) publish 1 GPU(s), as their presets imply"
    dev_node = state.nodes[1]["metadata"]["name"]
    eight_gpus = ClusterState(state.nodes, [], [], [on_node(load("resourceslice-gpu.yaml"), dev_node)])
    assert single_finding(check_gpu_slices(eight_gpus, dev)).expected.startswith("1 GPU device(s)")


def test_no_slices_fails_every_gpu_node_and_points_at_the_kubelet_plugin(state, prod):
    state.resource_slices.clear()
    outcome = check_gpu_slices(state, prod)
    assert len(outcome.findings) == 5
    for finding in outcome.findings:
        assert finding.found == "no gpu.nvidia.com ResourceSlice for the node"
        assert finding.expected.startswith("8 GPU device(s)")
        assert "kubelet plugin is not scheduled there" in finding.likely_cause
        assert "check the node labels and taints" in finding.likely_cause
        assert "nvidia.com/gpu=true:NoSchedule" in finding.likely_cause


def test_slices_on_three_of_four_nodes_names_the_fourth(state, prod):
    missing = TRAIN_NODES[2]
    state.resource_slices[:] = [
        s
        for s in state.resource_slices
        if not (s["spec"]["driver"] == "gpu.nvidia.com" and s["spec"]["nodeName"] == missing)
    ]
    finding = single_finding(check_gpu_slices(state, prod))
    assert finding.subject == f"node {missing}"
    assert "group h200-train" in finding.expected


def test_no_slices_on_a_node_without_the_plugin_label_blames_the_label(state, prod):
    node = next(n for n in state.nodes if n["metadata"]["name"] == TRAIN_NODES[0])
    del node["metadata"]["labels"]["nvidia.com/dra-kubelet-plugin"]
    state.resource_slices[:] = [s for s in state.resource_slices if s["spec"]["nodeName"] != TRAIN_NODES[0]]
    finding = single_finding(check_gpu_slices(state, prod))
    assert "lacks the label nvidia.com/dra-kubelet-plugin=true" in finding.likely_cause
    assert "nvidia.com/dra-kubelet-plugin=<unset>" in single_finding(check_gpu_nodes(state, prod)).found


@pytest.mark.parametrize("published, cause", [(4, "fewer GPUs than the preset"), (9, "differs from the stack config")])
def test_a_wrong_device_count_says_expected_and_found(state, prod, published, cause):
    gpu_slice = next(
        s
        for s in state.resource_slices
        if s["spec"]["driver"] == "gpu.nvidia.com" and s["spec"]["nodeName"] == TRAIN_NODES[1]
    )
    devices = gpu_slice["spec"]["devices"]
    gpu_slice["spec"]["devices"] = ([*devices, dict(devices[0], name="gpu-8")])[:published]
    finding = single_finding(check_gpu_slices(state, prod))
    assert (
        finding.expected == "8 GPU device(s) in gpu.nvidia.com slices (preset 8gpu-128vcpu-1600gb of group h200-train)"
    )
    assert finding.found.startswith(f"{published} device(s): gpu-0, gpu-1")
    assert cause in finding.likely_cause


def test_only_the_newest_generation_of_a_pool_counts(state, prod):
    stale = copied(healthy_prod_state()).resource_slices[0]
    stale["metadata"]["name"] += "-old"
    for item in state.resource_slices:
        if item["metadata"]["name"] == stale["metadata"]["name"][:-4]:
            item["spec"]["pool"]["generation"] = 2
    state.resource_slices.append(stale)
    assert check_gpu_slices(state, prod).passed


def test_a_crash_looping_kubelet_plugin_fails_its_node(state, prod):
    node = TRAIN_NODES[3]
    state.driver_pods[:] = [p for p in state.driver_pods if p["spec"]["nodeName"] != node] + [
        plugin_pod(node, "pod-kubelet-plugin-crashloop.yaml")
    ]
    finding = single_finding(check_driver_pods(state, prod))
    assert finding.subject == f"node {node}"
    assert finding.expected == "a kubelet plugin pod Running and Ready"
    assert "Running, 1/2 containers ready (gpus: CrashLoopBackOff, 9 restarts)" in finding.found
    assert "--previous" in finding.likely_cause and "nvidiaDriverRoot" in finding.likely_cause


def test_a_terminating_ready_plugin_does_not_hide_its_crash_looping_replacement(state, prod):
    node = TRAIN_NODES[3]
    old = next(p for p in state.driver_pods if p["spec"]["nodeName"] == node)
    old["metadata"]["deletionTimestamp"] = "2026-11-27T09:41:00Z"
    state.driver_pods.append(plugin_pod(node, "pod-kubelet-plugin-crashloop.yaml"))
    finding = single_finding(check_driver_pods(state, prod))
    assert "CrashLoopBackOff" in finding.found
    state.driver_pods[:] = [p for p in state.driver_pods if "CrashLoopBackOff" not in pod_state(p)]
    assert single_finding(check_driver_pods(state, prod)).found.endswith("(terminating)")


def test_a_pool_split_across_several_slices_counts_every_slice(state, prod):
    def gpu_slice_of(slices):
        return next(
            s for s in slices if s["spec"]["driver"] == "gpu.nvidia.com" and s["spec"]["nodeName"] == TRAIN_NODES[0]
        )

    whole, second = gpu_slice_of(state.resource_slices), gpu_slice_of(copied(healthy_prod_state()).resource_slices)
    second["metadata"]["name"] += "-2"
    whole["spec"]["devices"], second["spec"]["devices"] = whole["spec"]["devices"][:5], whole["spec"]["devices"][5:]
    for item in (whole, second):
        item["spec"]["pool"]["resourceSliceCount"] = 2
    state.resource_slices.append(second)
    assert check_gpu_slices(state, prod).passed
    state.resource_slices.remove(second)
    assert single_finding(check_gpu_slices(state, prod)).found.startswith("5 device(s)")


def test_a_node_without_a_plugin_pod_is_named_with_its_taints(state, prod):
    state.driver_pods.pop(0)
    finding = single_finding(check_driver_pods(state, prod))
    assert finding.found == "no kubelet plugin pod on the node (namespace nvidia-dra-driver-gpu)"
    assert "kubeletPlugin.tolerations" in finding.likely_cause


def test_no_driver_pods_at_all_blames_the_release(state, prod):
    state.driver_pods.clear()
    finding = single_finding(check_driver_pods(state, prod))
    assert "helm list -n nvidia-dra-driver-gpu" in finding.likely_cause


def test_the_controller_is_required_only_with_compute_domains(state, prod):
    with_domains = dataclasses.replace(prod, compute_domains=True)
    assert check_driver_pods(state, prod).passed
    finding = single_finding(check_driver_pods(state, with_domains))
    assert finding.found == "no controller pod" and "control-plane" in finding.likely_cause
    state.driver_pods.append(load("pod-controller.yaml"))
    assert check_driver_pods(state, with_domains).passed


def test_a_missing_gpu_device_class_fails(state, prod):
    state.device_classes[:] = [c for c in state.device_classes if c["metadata"]["name"] != "gpu.nvidia.com"]
    finding = single_finding(check_gpu_device_class(state, prod))
    assert finding.subject == "DeviceClass gpu.nvidia.com"
    assert finding.found.startswith("absent; present: ib.networking.nebius.ai, mig.nvidia.com")
    assert "resources.gpus.enabled" in finding.likely_cause


def test_a_missing_network_device_class_fails(state, prod):
    state.device_classes[:] = [c for c in state.device_classes if c["metadata"]["name"] != "ib.networking.nebius.ai"]
    finding = single_finding(check_network_device_classes(state, prod))
    assert finding.subject == "DeviceClass ib.networking.nebius.ai"
    assert "GPU cluster" in finding.likely_cause


def test_dranet_not_ready_reports_the_counts(state, prod):
    state.dranet["status"].update(numberReady=3, numberAvailable=3)
    finding = single_finding(check_dranet(state, prod))
    assert (
        finding.expected == "desired = ready = available = 5 (the nodes labelled nebius.com/dranet-rdma-capable=true)"
    )
    assert finding.found == "desired 5, ready 3, available 3"
    assert "dranet pods are not ready" in finding.likely_cause


def test_dranet_missing_or_skipping_a_labelled_node_fails(state, prod):
    state.dranet["status"]["desiredNumberScheduled"] = 4
    assert "does not cover every labelled node" in single_finding(check_dranet(state, prod)).likely_cause
    absent = dataclasses.replace(state, dranet=None)
    assert single_finding(check_dranet(absent, prod)).found == "absent"


def test_an_infiniband_node_without_the_dranet_label_fails(state, prod):
    node = next(n for n in state.nodes if n["metadata"]["name"] == TRAIN_NODES[0])
    del node["metadata"]["labels"]["nebius.com/dranet-rdma-capable"]
    state.dranet["status"].update(desiredNumberScheduled=4, currentNumberScheduled=4, numberReady=4, numberAvailable=4)
    finding = single_finding(check_dranet(state, prod))
    assert finding.subject == f"node {TRAIN_NODES[0]}"


def test_dranet_slices_without_rdma_devices_fail(state, prod):
    for item in state.resource_slices:
        if item["spec"]["driver"] == "dra.net" and item["spec"]["nodeName"] == TRAIN_NODES[0]:
            for device in item["spec"]["devices"]:
                device["attributes"]["dra.net/rdma"] = {"bool": False}
    finding = single_finding(check_dranet_slices(state, prod))
    assert finding.found == "9 dra.net device(s), none RDMA-capable"


def test_the_legacy_device_plugin_on_a_dra_node_fails(state, prod):
    node = next(n for n in state.nodes if n["metadata"]["name"] == TRAIN_NODES[0])
    node["status"]["capacity"]["nvidia.com/gpu"] = "8"
    node["status"]["allocatable"]["nvidia.com/gpu"] = "8"
    finding = single_finding(check_legacy_device_plugin(state, prod))
    assert finding.found == "capacity nvidia.com/gpu=8, allocatable nvidia.com/gpu=8"
    assert "devicePlugin.enabled=false" in finding.likely_cause


def test_a_group_short_of_nodes_or_a_node_not_ready_fails(state, prod):
    state.nodes[:] = [n for n in state.nodes if n["metadata"]["name"] != TRAIN_NODES[3]]
    finding = single_finding(check_gpu_nodes(state, prod))
    assert finding.expected == "4 node(s) labelled nebius-dra/node-group=h200-train"
    assert finding.found.startswith("3 node(s): ")
    ready = next(c for c in state.nodes[1]["status"]["conditions"] if c["type"] == "Ready")
    ready.update(status="False", reason="KubeletNotReady", message="container runtime network not ready")
    not_ready = [f for f in check_gpu_nodes(state, prod).findings if f.expected == "condition Ready=True"]
    assert [f.found for f in not_ready] == ["Ready=False (KubeletNotReady: container runtime network not ready)"]


def test_every_failure_message_has_expected_found_and_cause(state, prod):
    broken = copied(state)
    broken.resource_slices.clear()
    broken.driver_pods.clear()
    broken.device_classes.clear()
    broken.nodes[1]["status"]["capacity"]["nvidia.com/gpu"] = "8"
    findings = [
        f for check in CLUSTER_CHECKS for f in check.judge(dataclasses.replace(broken, dranet=None), prod).findings
    ]
    assert len(findings) >= 8
    for finding in findings:
        assert finding.subject and finding.expected and finding.found and finding.likely_cause


def test_attribute_reads_qualified_and_unqualified_keys():
    gpu_slice, nic_slice = load("resourceslice-gpu.yaml"), load("resourceslice-dranet.yaml")
    node = gpu_slice["spec"]["nodeName"]
    gpu = devices_on_node([gpu_slice], "gpu.nvidia.com", node)[0]
    assert attribute(gpu, "gpu.nvidia.com", "productName") == "NVIDIA H200"
    assert attribute(gpu, "gpu.nvidia.com", "cudaComputeCapability") == "9.0.0"
    nics = devices_on_node([nic_slice], "dra.net", node)
    assert [attribute(n, "dra.net", "rdma") for n in nics].count(True) == 8
    assert attribute({"attributes": {"rdma": {"bool": True}}}, "dra.net", "rdma") is True
    assert attribute({"attributes": {"rdma": True}}, "dra.net", "rdma") is None
    assert pod_state(load("pod-kubelet-plugin.yaml")) == "Running, 2/2 containers ready"


# node-health: Nebius's health conditions, on node objects shaped as the fixtures record them


def test_a_gpu_error_fails_its_node_and_says_nebius_repairs_it(state, prod):
    replace_node(state, TRAIN_NODES[2], "node-gpu-gpu-error.yaml")
    outcome = check_node_health(state, prod)
    finding = single_finding(outcome)
    assert finding.subject == f"node {TRAIN_NODES[2]} (group h200-train)"
    assert finding.expected == "NebiusGPUError=False (Nebius's GPU health checks pass)"
    assert finding.found == "NebiusGPUError=True"
    assert "auto-repair is on" in finding.likely_cause and "recreated under a new name" in finding.likely_cause
    assert outcome.summary == "1 health problem(s) on 5 GPU node(s)"


def test_a_gpu_error_on_a_group_without_its_auto_repair_says_nothing_replaces_the_node(state, prod):
    replace_node(state, TRAIN_NODES[0], "node-gpu-gpu-error.yaml")
    groups = tuple(
        dataclasses.replace(group, auto_repair_off=("NebiusGPUError",)) if group.name == "h200-train" else group
        for group in prod.groups
    )
    finding = single_finding(check_node_health(state, dataclasses.replace(prod, groups=groups)))
    assert "auto-repair of NebiusGPUError is off for group h200-train (autoRepair)" in finding.likely_cause
    assert f"kubectl drain {TRAIN_NODES[0]}" in finding.likely_cause


def test_a_boot_disk_error_fails_its_node(state, prod):
    replace_node(state, TRAIN_NODES[1], "node-gpu-boot-disk-error.yaml")
    finding = single_finding(check_node_health(state, prod))
    assert finding.found == "NebiusBootDiskIOError=True"
    assert "boot disk has reported I/O errors" in finding.likely_cause


def test_a_scheduled_maintenance_warns_with_its_deadline_and_passes(state, prod):
    replace_node(state, TRAIN_NODES[3], "node-gpu-maintenance.yaml")
    outcome = check_node_health(state, prod)
    assert outcome.passed and outcome.findings == ()
    [warning] = outcome.warnings
    assert warning.subject == f"node {TRAIN_NODES[3]} (group h200-train)"
    assert warning.found.endswith("; deadline 2026-11-30T12:26:00Z")
    assert (
        "NebiusMaintenanceScheduled=True (MaintenanceScheduled: Node scheduled for urgent maintenance" in warning.found
    )
    assert "restart the VM before 2026-11-30T12:26:00Z" in warning.likely_cause
    assert outcome.summary.endswith("; maintenance scheduled on 1")


def test_unknown_gpu_health_warns(state, prod):
    node = state.nodes[1]
    next(c for c in node["status"]["conditions"] if c["type"] == "NebiusGPUError")["status"] = "Unknown"
    outcome = check_node_health(state, prod)
    assert outcome.passed and len(outcome.warnings) == 1
    assert outcome.summary.endswith("; GPU health unknown on 1")


def test_health_conditions_of_nodes_outside_the_gpu_groups_are_not_judged(state, prod):
    state.nodes[0]["status"]["conditions"].append({"type": "NebiusGPUError", "status": "True"})
    assert check_node_health(state, prod).passed


@pytest.mark.parametrize(
    ("message", "deadline"),
    [
        ("Node scheduled for urgent maintenance, SLA deadline is 2025-08-13T12:26:00Z", "2025-08-13T12:26:00Z"),
        ("SLA deadline is 2026-01-02T03:04:05Z.", "2026-01-02T03:04:05Z"),
        ("maintenance soon", None),
    ],
)
def test_the_maintenance_deadline_is_read_from_the_message(message, deadline):
    node = {"status": {"conditions": [{"type": "NebiusMaintenanceScheduled", "status": "True", "message": message}]}}
    assert maintenance_deadline(node) == deadline


# ------------------------------------------------------------------------------------------ device taints
# A real slice as the kubernetes-sigs driver v0.4.1 published it for a real H200 (tests/data/captured), on the dev
# node, with the taints its NVMLDeviceHealthCheck gate publishes: k8s.io/api resource/v1 DeviceTaint (v0.36.3
# types.go: key, value, effect None | NoSchedule | NoExecute, timeAdded set by the API server), the keys and
# effects of the driver's "GPU health checking" guide (fatal XID 79 NoSchedule, unmonitored None).
CAPTURED = DATA.parent / "captured"
FATAL_XID = {"key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoSchedule", "timeAdded": "2026-12-01T09:14:02Z"}
UNMONITORED = {"key": "gpu.nvidia.com/unmonitored", "effect": "None", "timeAdded": "2026-12-01T09:14:02Z"}


def tainted_dev_state(*taints: dict) -> tuple[ClusterState, str]:
    state = healthy_dev_state()
    node = next(n["metadata"]["name"] for n in state.nodes if "nebius-dra/node-group" in n["metadata"]["labels"])
    [captured] = json.loads((CAPTURED / "resourceslices-h200-dra-driver-nvidia-gpu-0.4.1.json").read_text())["items"]
    published = json.loads(json.dumps(captured).replace("gpu-node-0", node))
    if taints:
        published["spec"]["devices"][0]["taints"] = list(taints)
    # List items carry no kind: the object as a GET of the one slice returns it, in 1.36's strict schema.
    kubernetes_validate.validate(
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", **published}, "1.36", strict=True
    )
    return dataclasses.replace(state, resource_slices=[published]), node


def test_untainted_captured_gpus_pass_the_taint_check():
    state, _ = tainted_dev_state()
    outcome = check_gpu_taints(state, dev_expectations())
    assert outcome.passed and outcome.warnings == (), outcome
    assert outcome.summary == "no device taints on the 1 gpu.nvidia.com device(s) of 1 GPU node(s)"


def test_a_fatal_xid_taint_fails_naming_node_device_and_taint():
    state, node = tainted_dev_state(FATAL_XID)
    outcome = check_gpu_taints(state, dev_expectations())
    finding = single_finding(outcome)
    assert finding.subject == f"node {node} (group h200) device gpu-0"
    assert finding.found == "taint gpu.nvidia.com/xid=79:NoSchedule, added 2026-12-01T09:14:02Z"
    assert "XID 79" in finding.likely_cause and "new claims that do not tolerate the taint" in finding.likely_cause
    assert "rollout restart" in finding.likely_cause and "drain and replace the node" in finding.likely_cause
    assert outcome.summary == "1 GPU device(s) tainted against new claims"


def test_a_no_execute_taint_of_another_component_fails_and_says_it_evicts():
    admin = {"key": "example.com/retired", "value": "true", "effect": "NoExecute", "timeAdded": "2026-12-01T09:20:00Z"}
    state, _ = tainted_dev_state(admin)
    finding = single_finding(check_gpu_taints(state, dev_expectations()))
    assert "other than the NVIDIA driver's health check" in finding.likely_cause
    assert "evicts the pods using the device" in finding.likely_cause and "rollout restart" not in finding.likely_cause


def test_a_taint_without_effect_on_scheduling_warns_and_passes():
    state, node = tainted_dev_state(UNMONITORED)
    outcome = check_gpu_taints(state, dev_expectations())
    assert outcome.passed
    [warning] = outcome.warnings
    assert warning.subject == f"node {node} (group h200) device gpu-0"
    assert warning.found == "taint gpu.nvidia.com/unmonitored:None, added 2026-12-01T09:14:02Z"
    assert "health is unknown" in warning.likely_cause and "drain" not in warning.likely_cause
    assert outcome.summary == "1 taint(s) that do not affect scheduling on 1 device(s)"


def test_a_blocking_taint_fails_even_beside_a_harmless_one():
    state, _ = tainted_dev_state(UNMONITORED, FATAL_XID)
    outcome = check_gpu_taints(state, dev_expectations())
    assert single_finding(outcome).found.startswith("taint gpu.nvidia.com/xid=79:NoSchedule")
    assert [w.found.split(",")[0] for w in outcome.warnings] == ["taint gpu.nvidia.com/unmonitored:None"]


def test_taints_on_nodes_outside_the_stacks_gpu_groups_are_not_judged():
    state, _ = tainted_dev_state(FATAL_XID)
    for item in state.nodes:
        item["metadata"]["labels"].pop("nebius-dra/node-group", None)
    outcome = check_gpu_taints(state, dev_expectations())
    assert outcome.passed and outcome.warnings == ()


@pytest.mark.parametrize(
    ("error", "summary"),
    [
        (
            CredentialRefusedError("list nodes: unauthorized (401)"),
            "the API server refused the kubeconfig's credential",
        ),
        (CredentialCommandError("exec get-token failed"), "the kubeconfig's credential command failed"),
        (ClusterUnreachableError("list nodes: timed out"), "the cluster could not be reached"),
    ],
    ids=["refused", "command", "unreachable"],
)
def test_an_error_before_any_answer_is_one_unreachable_finding_quoting_the_error(error, summary):
    """Each kind of error that leaves the cluster unasked has its own heading and advice, in one table."""
    failed = api_failure(error)
    assert failed.summary == summary and failed.unreachable and not failed.unusable
    (finding,) = failed.findings
    assert finding.subject == "Kubernetes API" and finding.found == str(error)
    assert "run the verification again" in finding.likely_cause
