"""The real Kueue v0.17.0 admits the stack's teams' Jobs within their GPU quotas; the real scheduler allocates them.

Each test names the order it relies on: the solo team's first Job holds its only GPU until the
second test lets it finish.
"""

from __future__ import annotations

import time
from typing import Any

from dra_fakes import running_status
from dra_kube import Kube, wait_for
from kubelet_stand_in import succeeded_status

from components.config.queues import uncountable_reason
from components.dra_constants import GPU_CLASS, NODE_GROUP_LABEL
from components.model import DeviceSelection
from components.queue_model import GPU_QUOTA_RESOURCE, QUEUE_NAME_LABEL
from components.values.claim_templates import claim_template_spec, exact_request, product_selector
from components.values.kueue import queued_job
from tools.verify.cluster import KubeCluster
from tools.verify.queues import check_queues

KUEUE = "kueue.x-k8s.io/v1beta2"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"
# How long a Job past its quota is watched to stay suspended (Kueue's scheduler cycles in well under a second).
HELD_SECONDS = 8.0


def job(namespace: str, name: str, template: str) -> dict[str, Any]:
    """A team's Job as the README tells teams to write it: the LocalQueue's label and one claim template."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": {QUEUE_NAME_LABEL: namespace}},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}],
                    "containers": [
                        {
                            "name": "train",
                            "image": "nvidia/cuda:13.1.1-runtime-ubuntu24.04",
                            "command": ["nvidia-smi"],
                            "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "claims": [{"name": "gpu"}]},
                        }
                    ],
                }
            },
        },
    }


def workload(kube: Kube, namespace: str, job_name: str) -> dict[str, Any] | None:
    for item in kube.list(KUEUE, "Workload", namespace):
        if any(ref.get("name") == job_name for ref in item["metadata"].get("ownerReferences") or []):
            return item
    return None


def condition(obj: dict[str, Any] | None, kind: str) -> dict[str, Any]:
    for entry in ((obj or {}).get("status") or {}).get("conditions") or []:
        if entry["type"] == kind:
            return entry
    return {}


def admitted(kube: Kube, namespace: str, job_name: str) -> dict[str, Any] | None:
    found = workload(kube, namespace, job_name)
    return found if condition(found, "Admitted").get("status") == "True" else None


def refused(kube: Kube, namespace: str, job_name: str) -> dict[str, Any] | None:
    """Kueue's verdict on a Workload it could not fit: its QuotaReserved condition, False with the reason."""
    found = condition(workload(kube, namespace, job_name), "QuotaReserved")
    return found if found.get("status") == "False" and found.get("message") else None


def suspended(kube: Kube, namespace: str, name: str) -> bool:
    found = kube.get("batch/v1", "Job", name, namespace)
    return bool(found and found["spec"].get("suspend"))


def job_pod(kube: Kube, namespace: str, name: str) -> dict[str, Any] | None:
    pods = kube.list("v1", "Pod", namespace, label_selector=f"{JOB_NAME_LABEL}={name}")
    return pods[0] if pods else None


def allocated_devices(kube: Kube, namespace: str, job_name: str) -> list[str]:
    """The devices the real scheduler allocated to the claim of the Job's pod, as pool/device."""
    pod = job_pod(kube, namespace, job_name)
    if not pod or not (pod.get("spec") or {}).get("nodeName"):
        return []
    for status in (pod.get("status") or {}).get("resourceClaimStatuses") or []:
        claim = kube.claim(namespace, status.get("resourceClaimName") or "")
        allocation = ((claim or {}).get("status") or {}).get("allocation") or {}
        results = (allocation.get("devices") or {}).get("results") or []
        return [f"{result['pool']}/{result['device']}" for result in results]
    return []


def story(kube: Kube, namespace: str, name: str):
    """What a failed wait shows: the Workload's conditions, the Job's suspension, Kueue's log."""

    def explain() -> str:
        found = workload(kube, namespace, name)
        conditions = [
            (c["type"], c["status"], c.get("message", ""))
            for c in ((found or {}).get("status") or {}).get("conditions") or []
        ]
        return f"workload conditions: {conditions}\njob suspended: {suspended(kube, namespace, name)}\n{kube.kueue.log_tail(15)}"

    return explain


def test_kueue_runs_with_the_stacks_dra_gate_and_mapping_and_every_queue_is_active(kube, stack):
    # cmd/kueue/main.go logs this only with the DynamicResourceAllocation gate on and deviceClassMappings set.
    assert "DRA mapper initialized from configuration" in kube.kueue.log.read_text(), kube.kueue.log_tail()
    for team in stack.queues.teams:
        for kind, name, namespace in (
            ("ClusterQueue", team.name, None),
            ("LocalQueue", team.local_queue, team.namespace),
        ):
            wait_for(
                f"{kind} {name} active",
                lambda kind=kind, name=name, namespace=namespace: (
                    condition(kube.get(KUEUE, kind, name, namespace), "Active").get("status") == "True"
                ),
                explain=lambda kind=kind, name=name, namespace=namespace: str(kube.get(KUEUE, kind, name, namespace)),
            )


def test_a_job_within_quota_is_admitted_and_the_scheduler_allocates_its_claim(kube):
    created = kube.create(job("solo", "first", "gpu"))
    # Kueue's webhook created it suspended: nothing runs before admission.
    assert created["spec"]["suspend"] is True
    found = wait_for(
        "the first Job admitted", lambda: admitted(kube, "solo", "first"), explain=story(kube, "solo", "first")
    )
    assignment = found["status"]["admission"]["podSetAssignments"][0]
    assert assignment["flavors"][GPU_QUOTA_RESOURCE] == "h200"
    assert str(assignment["resourceUsage"][GPU_QUOTA_RESOURCE]) == "1"
    wait_for("the first Job resumed", lambda: not suspended(kube, "solo", "first"))
    devices = wait_for("the first Job's claim allocated", lambda: allocated_devices(kube, "solo", "first"))
    assert len(devices) == 1
    pod = job_pod(kube, "solo", "first")
    assert pod is not None
    # The flavor's node labels reached the pod: it runs on the group the quota is for.
    assert pod["spec"]["nodeSelector"][NODE_GROUP_LABEL] == "h200"
    kube.patch("v1", "Pod", pod["metadata"]["name"], running_status(pod), "solo", status=True)


def test_a_job_past_quota_stays_suspended_until_the_first_finishes(kube):
    kube.create(job("solo", "second", "gpu"))
    # Kueue's own verdict first (a loaded machine may take longer than any hold to reach it), then the hold.
    pending = wait_for("Kueue to refuse the second Job's Workload a quota", lambda: refused(kube, "solo", "second"),
                       explain=story(kube, "solo", "second"))  # fmt: skip
    assert "insufficient" in pending["message"].lower(), pending
    deadline = time.monotonic() + HELD_SECONDS
    while time.monotonic() < deadline:
        assert admitted(kube, "solo", "second") is None, "admitted past the team's quota"
        assert suspended(kube, "solo", "second")
        assert job_pod(kube, "solo", "second") is None
        time.sleep(0.5)
    first = job_pod(kube, "solo", "first")
    assert first is not None
    kube.patch("v1", "Pod", first["metadata"]["name"], succeeded_status(first), "solo", status=True)
    wait_for("the second Job admitted once the first finished", lambda: admitted(kube, "solo", "second"),
             timeout=90, explain=story(kube, "solo", "second"))  # fmt: skip
    devices = wait_for("the second Job's claim allocated", lambda: allocated_devices(kube, "solo", "second"))
    assert len(devices) == 1


def test_a_team_borrows_unused_gpus_inside_its_cohort_and_not_outside_one(kube):
    kube.create(job("borrower", "two-gpus", "multi-gpu"))
    found = wait_for("the borrower's 2-GPU Job admitted", lambda: admitted(kube, "borrower", "two-gpus"),
                     explain=story(kube, "borrower", "two-gpus"))  # fmt: skip
    assert str(found["status"]["admission"]["podSetAssignments"][0]["resourceUsage"][GPU_QUOTA_RESOURCE]) == "2"
    devices = wait_for("the borrower's claim allocated", lambda: allocated_devices(kube, "borrower", "two-gpus"))
    assert len(devices) == 2 and len({device.split("/")[0] for device in devices}) == 1, devices

    def borrowed() -> str | None:
        usage = (kube.get(KUEUE, "ClusterQueue", "borrower") or {}).get("status", {}).get("flavorsUsage") or []
        for flavor in usage:
            for resource in flavor["resources"]:
                if resource["name"] == GPU_QUOTA_RESOURCE:
                    return str(resource.get("borrowed", "0"))
        return None

    assert wait_for("the borrower's ClusterQueue to show what it borrowed", lambda: borrowed() == "1")
    kube.create(job("solo", "two-gpus", "multi-gpu"))
    # Kueue's verdict, read from the Workload, rather than a pause that passes whether or not Kueue looked.
    wait_for("Kueue to refuse the solo team's 2-GPU Workload a quota", lambda: refused(kube, "solo", "two-gpus"),
             explain=story(kube, "solo", "two-gpus"))  # fmt: skip
    assert admitted(kube, "solo", "two-gpus") is None, "a team without a cohort borrowed"
    assert suspended(kube, "solo", "two-gpus")


def test_a_template_the_config_refuses_kueue_refuses_too(kube):
    """The config's rule (components/config/queues.py) and the real Kueue agree on a template with a CEL selector."""
    selector = product_selector(["NVIDIA H200"])
    rule = uncountable_reason(
        [("gpu", DeviceSelection(GPU_CLASS, 1, "ExactCount", (selector,)))], False, False, [GPU_CLASS]
    )
    assert rule is not None and "CEL selectors" in rule
    kube.apply(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "by-product", "namespace": "lender"},
            "spec": claim_template_spec([exact_request("gpu", GPU_CLASS, selectors=[selector])]),
        }
    )
    kube.create(job("lender", "by-product", "by-product"))

    def refused() -> str:
        message = condition(workload(kube, "lender", "by-product"), "QuotaReserved").get("message", "")
        return message if "not supported" in message else ""

    message = wait_for("Kueue to refuse the uncountable template", refused, explain=story(kube, "lender", "by-product"))
    assert "CEL selectors are not supported" in message
    assert admitted(kube, "lender", "by-product") is None


def test_verify_reports_the_queues_active_with_their_admitted_and_pending_workloads(kube, stack):
    """`make verify`'s queues step (tools/verify/queues.py) read against the real Kueue, after the tests above."""
    cluster = KubeCluster.from_kubeconfig(str(kube.kubeconfig_path))
    outcome = check_queues(cluster, stack.queues)
    assert outcome.passed, outcome.findings
    assert "solo (1 GPUs on h200): 1 admitted, 1 pending" in outcome.summary, outcome.summary
    assert "borrower (1 GPUs on h200): 1 admitted, 0 pending" in outcome.summary, outcome.summary
    assert "lender (1 GPUs on h200): 0 admitted, 1 pending" in outcome.summary, outcome.summary


def test_the_stacks_sample_job_is_accepted_and_queued(kube, stack):
    """The program's queued sample Job (components/values/kueue.py queued_job): the webhook suspends it, Kueue queues it."""
    sample = queued_job(stack.queues, stack.claims)
    assert sample is not None
    created = kube.create(sample)
    assert created["spec"]["suspend"] is True
    namespace, name = sample["metadata"]["namespace"], sample["metadata"]["name"]
    found = wait_for("the sample Job's Workload", lambda: workload(kube, namespace, name))
    assert found["spec"]["queueName"] == stack.queues.teams[0].local_queue
