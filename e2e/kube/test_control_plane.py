"""A real Kubernetes 1.34 control plane allocates an NVIDIA-shaped DRA device.

Run from the repository root:
    venv/bin/python -m pytest e2e/kube -q
Builds the binaries on first use (see build.py; that takes many minutes cold).
"""

from __future__ import annotations

import signal
import time
import uuid

import pytest
from control_plane import ControlPlane, ensure_binaries
from kubernetes import client, config

DRIVER = "gpu.nvidia.com"
NODE = "e2e-gpu-node-0"
NAMESPACE = "dra-e2e"
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
NODE_LABEL = ("nvidia.com/gpu.present", "true")
WAIT = 90.0


@pytest.fixture(scope="module")
def cp():
    ensure_binaries()  # builds if missing (never skipped)
    with ControlPlane() as plane:
        print(f"control plane start: {plane.startup_seconds:.1f}s {plane.timings}")
        yield plane


@pytest.fixture(scope="module")
def api(cp):
    api_client = config.new_client_from_config(config_file=str(cp.kubeconfig))
    yield api_client
    api_client.close()


def as_dict(api_client, obj) -> dict:
    return api_client.sanitize_for_serialization(obj)


def wait_for(what: str, probe, timeout: float = WAIT, interval: float = 0.5):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def gpu_device(index: int) -> dict:
    """One device as the NVIDIA DRA driver (gpu-kubelet-plugin) publishes an H200."""
    return {
        "name": f"gpu-{index}",
        "attributes": {
            "type": {"string": "gpu"},
            "uuid": {"string": f"GPU-{uuid.UUID(int=0xE2E0 + index)}"},
            "productName": {"string": "NVIDIA H200"},
            "architecture": {"string": "Hopper"},
            "brand": {"string": "Nvidia"},
            "cudaComputeCapability": {"version": "9.0.0"},
            "driverVersion": {"version": "580.159.4"},
            # Distinct PCI slot per device: 0000:00:06.0, 0000:00:07.0
            "resource.kubernetes.io/pciBusID": {"string": f"0000:00:{6 + index:02x}.0"},
            "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"},
        },
        "capacity": {"memory": {"value": "143771Mi"}},
    }


def claim_template(name: str, count: int) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpu",
                            "exactly": {"deviceClassName": DRIVER, "allocationMode": "ExactCount", "count": count},
                        }
                    ]
                }
            }
        },
    }


def gpu_pod(name: str, template: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "nodeSelector": {NODE_LABEL[0]: NODE_LABEL[1]},
            "tolerations": [GPU_TOLERATION],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}],
            "containers": [
                {
                    "name": "cuda",
                    "image": "registry.k8s.io/pause:3.10",  # never pulled: there is no kubelet
                    "resources": {"claims": [{"name": "gpu"}]},
                }
            ],
        },
    }


@pytest.fixture(scope="module")
def gpu_cluster(cp, api):
    """Node + DeviceClass + ResourceSlice (2 GPUs) + namespace, as a GPU node with the NVIDIA driver would have."""
    core = client.CoreV1Api(api)
    resource = client.ResourceV1Api(api)

    core.create_node(
        client.V1Node.from_dict(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": NODE, "labels": {NODE_LABEL[0]: NODE_LABEL[1], "kubernetes.io/hostname": NODE}},
                "spec": {"taints": [GPU_TAINT]},
            }
        )
    )
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    core.patch_node_status(
        NODE,
        {
            "status": {
                "capacity": {"cpu": "16", "memory": "200Gi", "pods": "110"},
                "allocatable": {"cpu": "15", "memory": "190Gi", "pods": "110"},
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "reason": "KubeletReady",
                        "message": "fake node for e2e (no kubelet)",
                        "lastHeartbeatTime": now,
                        "lastTransitionTime": now,
                    }
                ],
            }
        },
    )
    # The TaintNodesByCondition admission plugin adds node.kubernetes.io/not-ready:NoSchedule
    # on create; node-lifecycle-controller (deliberately not running) would remove it once the
    # node reports Ready. Do its job: keep only our own taint.
    node = as_dict(api, core.read_node(NODE))
    if node["spec"].get("taints") != [GPU_TAINT]:
        print(f"node taints after create: {node['spec'].get('taints')}; setting them to [{GPU_TAINT}]")
        core.patch_node(
            NODE,
            [{"op": "replace", "path": "/spec/taints", "value": [GPU_TAINT]}],
            _content_type="application/json-patch+json",
        )
    node = as_dict(api, core.read_node(NODE))
    assert node["spec"]["taints"] == [GPU_TAINT]
    assert node["status"]["allocatable"] == {"cpu": "15", "memory": "190Gi", "pods": "110"}

    resource.create_device_class(
        client.V1DeviceClass.from_dict(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "DeviceClass",
                "metadata": {"name": DRIVER},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
            }
        )
    )
    resource.create_resource_slice(
        client.V1ResourceSlice.from_dict(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{NODE}-{DRIVER}"},
                "spec": {
                    "driver": DRIVER,
                    "nodeName": NODE,
                    "pool": {"name": NODE, "generation": 1, "resourceSliceCount": 1},
                    "devices": [gpu_device(0), gpu_device(1)],
                },
            }
        )
    )

    core.create_namespace(client.V1Namespace.from_dict({"metadata": {"name": NAMESPACE}}))
    # ServiceAccount admission rejects pods until serviceaccount-controller made "default".
    wait_for(
        f"ServiceAccount {NAMESPACE}/default",
        lambda: any(sa.metadata.name == "default" for sa in core.list_namespaced_service_account(NAMESPACE).items),
    )
    return {"core": core, "resource": resource}


def test_serves_v1_34_and_resource_v1(cp, api):
    from control_plane import _build

    version = client.VersionApi(api).get_code()
    assert version.git_version == _build.kube_version(), version
    assert (version.major, version.minor) == ("1", "34")
    groups = {g.name: [v.version for v in g.versions] for g in client.ApisApi(api).get_api_versions().groups}
    assert "v1" in groups["resource.k8s.io"], groups["resource.k8s.io"]


def test_claim_from_template_is_allocated_and_pod_bound(cp, api, gpu_cluster):
    core, resource = gpu_cluster["core"], gpu_cluster["resource"]
    resource.create_namespaced_resource_claim_template(
        NAMESPACE, client.V1ResourceClaimTemplate.from_dict(claim_template("one-gpu", 1))
    )
    core.create_namespaced_pod(NAMESPACE, client.V1Pod.from_dict(gpu_pod("cuda-1gpu", "one-gpu")))

    def claim_name():
        pod = as_dict(api, core.read_namespaced_pod("cuda-1gpu", NAMESPACE))
        statuses = pod.get("status", {}).get("resourceClaimStatuses") or []
        return statuses[0].get("resourceClaimName") if statuses else None

    name = wait_for("resourceclaim-controller to create the claim from the template", claim_name)
    claim = as_dict(api, resource.read_namespaced_resource_claim(name, NAMESPACE))
    assert claim["metadata"]["annotations"]["resource.kubernetes.io/pod-claim-name"] == "gpu"
    assert claim["metadata"]["ownerReferences"][0]["name"] == "cuda-1gpu"

    def allocation():
        c = as_dict(api, resource.read_namespaced_resource_claim(name, NAMESPACE))
        return c.get("status", {}).get("allocation") and c

    claim = wait_for(f"claim {name} to be allocated", allocation)
    print(f"allocation of {name}: {claim['status']['allocation']}")
    results = claim["status"]["allocation"]["devices"]["results"]
    assert len(results) == 1
    assert results[0]["driver"] == DRIVER
    assert results[0]["pool"] == NODE
    assert results[0]["device"] in {"gpu-0", "gpu-1"}
    assert results[0]["request"] == "gpu"
    node_terms = claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"]
    assert node_terms[0]["matchFields"][0]["values"] == [NODE]
    assert claim["status"]["reservedFor"][0]["name"] == "cuda-1gpu"

    pod = wait_for(
        "pod cuda-1gpu to be bound",
        lambda: (p := as_dict(api, core.read_namespaced_pod("cuda-1gpu", NAMESPACE)))["spec"].get("nodeName") and p,
    )
    assert pod["spec"]["nodeName"] == NODE


def test_three_gpus_stay_unschedulable(cp, api, gpu_cluster):
    core, resource = gpu_cluster["core"], gpu_cluster["resource"]
    resource.create_namespaced_resource_claim_template(
        NAMESPACE, client.V1ResourceClaimTemplate.from_dict(claim_template("three-gpus", 3))
    )
    core.create_namespaced_pod(NAMESPACE, client.V1Pod.from_dict(gpu_pod("cuda-3gpu", "three-gpus")))

    def unschedulable_about_claims():
        pod = as_dict(api, core.read_namespaced_pod("cuda-3gpu", NAMESPACE))
        for cond in pod.get("status", {}).get("conditions") or []:
            if (
                cond["type"] == "PodScheduled"
                and cond["status"] == "False"
                and cond.get("reason") == "Unschedulable"
                and "claim" in (cond.get("message") or "").lower()
                and "not created yet" not in cond["message"]
            ):
                return pod, cond
        return None

    pod, cond = wait_for("pod cuda-3gpu to be reported unschedulable because of its claim", unschedulable_about_claims)
    events = [
        e
        for e in core.list_namespaced_event(
            NAMESPACE, field_selector="involvedObject.kind=Pod,involvedObject.name=cuda-3gpu"
        ).items
        if e.reason == "FailedScheduling"
    ]
    print(f"PodScheduled condition: {cond['reason']}: {cond['message']}")
    for e in events:
        print(f"event {e.reason} from {e.reporting_component or e.source.component}: {e.message}")
    assert events, "scheduler recorded no FailedScheduling event"
    assert "cannot allocate all claims" in cond["message"], cond["message"]

    # Stays unschedulable: not bound a while later, claim never allocated.
    time.sleep(5)
    pod = as_dict(api, core.read_namespaced_pod("cuda-3gpu", NAMESPACE))
    assert not pod["spec"].get("nodeName")
    claim_name = pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"]
    claim = as_dict(api, resource.read_namespaced_resource_claim(claim_name, NAMESPACE))
    assert not claim.get("status", {}).get("allocation"), claim.get("status")


def test_a_sigterm_handler_in_place_is_kept():
    """Hostile review: the control plane's own SIGTERM handler replaced bench-cli's, which ended with 143 and no word."""

    def callers_handler(signum, frame):
        raise AssertionError("not called here")

    previous = signal.signal(signal.SIGTERM, callers_handler)
    try:
        plane = ControlPlane.__new__(ControlPlane)
        plane._old_sigterm = None
        plane._install_sigterm_handler()
        assert signal.getsignal(signal.SIGTERM) is callers_handler
        assert plane._old_sigterm is None  # nothing to restore when it stops
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        plane._install_sigterm_handler()
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL  # its own, when there is none
    finally:
        signal.signal(signal.SIGTERM, previous)
