"""Smoke workloads: a pod claims a device through the stack's claim template and proves it got it.

The pod is created under a name chosen before the request is sent, so whatever happens next
(a failed check, an API error, Ctrl-C, a CI job cancelled with SIGTERM) the `finally` block
knows what to delete, and Ctrl-C cannot interrupt that deletion. The pod also carries an
`activeDeadlineSeconds`, so even a verifier killed with SIGKILL leaves nothing running for long.
"""

from __future__ import annotations

import secrets
import string
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from components.dra_constants import GPU_TEMPLATE, IB_TEMPLATE
from tools.verify.allocation import (
    allocation_findings,
    claim_name_for,
    diagnose_not_running,
    judge_gpu_workload,
    judge_network_workload,
    pending_reason,
)
from tools.verify.checks import GPU_DRIVER, NETWORK_DRIVER, Discrepancy, Outcome, api_failure
from tools.verify.cluster import Cluster, ClusterError
from tools.verify.expectations import Expectations
from tools.verify.signals import signals_deferred

CONTAINER = "smoke"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "nebius-dra-verify"
LIFETIME_MARGIN_S = 600
# A pod in one of these phases got past scheduling and image pulls: what it did is known.
STARTED_PHASES = ("Running", "Succeeded", "Failed")


def random_suffix() -> str:
    """Five random lowercase letters and digits, so two runs of the verifier seldom pick the same object names."""
    return "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(5))


@dataclass(frozen=True)
class SmokeCommand:
    argv: tuple[str, ...]
    failure_cause: str


@dataclass(frozen=True)
class SmokeWorkload:
    """One of the guide's sample workloads: the template it claims from and what it runs to prove the device is there."""

    template: str
    pod_claim: str
    driver: str
    commands: tuple[SmokeCommand, ...]
    judge: Callable[[Mapping[str, Any], Sequence[Mapping[str, Any]], Sequence[str]], Outcome]


GPU_WORKLOAD = SmokeWorkload(
    template=GPU_TEMPLATE,
    pod_claim="gpu",
    driver=GPU_DRIVER,
    commands=(
        SmokeCommand(
            ("nvidia-smi", "-L"),
            (
                "nvidia-smi did not run in the container: the image lacks it and the driver's CDI spec did not inject it "
                "(pass --image with a CUDA image), or the GPU was not prepared (kubelet plugin logs)"
            ),
        ),
    ),
    judge=judge_gpu_workload,
)
NETWORK_WORKLOAD = SmokeWorkload(
    template=IB_TEMPLATE,
    pod_claim="network",
    driver=NETWORK_DRIVER,
    commands=(
        SmokeCommand(
            ("ls", "/sys/class/net"),
            "the container has no /sys/class/net: the image is unusual; pass --image with a standard Linux image",
        ),
        SmokeCommand(
            ("ls", "/sys/class/infiniband"),
            (
                "no /sys/class/infiniband in the container: DRANet passed no RDMA device; read the dranet pod's logs on the node"
            ),
        ),
    ),
    judge=judge_network_workload,
)


@dataclass
class SmokeSettings:
    timeout_s: float
    poll_interval_s: float = 2.0
    # How long the GPU smoke pod's metrics may take to name it: the exporter maps pods to GPUs when it collects.
    metrics_timeout_s: float = 90.0
    metrics_poll_interval_s: float = 5.0
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    name_suffix: Callable[[], str] = random_suffix


def smoke_pod(
    name: str, namespace: str, workload: SmokeWorkload, image: str, tolerations: list[dict[str, str]], lifetime_s: int
) -> dict[str, Any]:
    """The guide's sample pod, made safe to leak: it sleeps a bounded time and the kubelet kills it after that."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {MANAGED_BY_LABEL: MANAGED_BY, "app.kubernetes.io/component": f"smoke-{workload.template}"},
        },
        "spec": {
            "restartPolicy": "Never",
            "activeDeadlineSeconds": lifetime_s,
            "terminationGracePeriodSeconds": 0,
            "tolerations": tolerations,
            "resourceClaims": [{"name": workload.pod_claim, "resourceClaimTemplateName": workload.template}],
            "containers": [
                {
                    "name": CONTAINER,
                    "image": image,
                    "command": ["sleep", str(lifetime_s)],
                    "resources": {"claims": [{"name": workload.pod_claim}]},
                }
            ],
        },
    }


class SmokeInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM during a smoke workload, raised after its cleanup; `leftovers` is what could not be deleted."""

    def __init__(self, leftovers: Sequence[Discrepancy]) -> None:
        super().__init__()
        self.leftovers = tuple(leftovers)


@dataclass
class CreatedObjects:
    """What this run put in the cluster, known before each create request is sent."""

    namespace: str
    pod: str
    claim: str | None = None


def clean_up(cluster: Cluster, created: CreatedObjects) -> list[Discrepancy]:
    """Deletes the pod and its generated claim; anything that stays is reported with the command to remove it."""
    leftovers = []
    for kind, name, delete in (
        ("pod", created.pod, cluster.delete_pod),
        ("resourceclaim", created.claim, cluster.delete_claim),
    ):
        if name is None:
            continue
        try:
            delete(created.namespace, name)
        except ClusterError as error:
            leftovers.append(
                Discrepancy(
                    subject=f"{kind} {created.namespace}/{name}",
                    expected="deleted after the smoke test",
                    found=str(error),
                    likely_cause=f"delete it by hand: `kubectl -n {created.namespace} delete {kind} {name}`",
                )
            )
    return leftovers


class SmokeRun:
    """Runs one smoke workload end to end and always cleans up after it."""

    def __init__(
        self,
        cluster: Cluster,
        expect: Expectations,
        settings: SmokeSettings,
        on_progress: Callable[[str], None],
        while_held: Callable[[Mapping[str, Any], Mapping[str, Any]], None] | None = None,
    ) -> None:
        """`while_held(pod, claim)` runs after the pod proved it holds its devices, before the pod is deleted."""
        self.cluster = cluster
        self.expect = expect
        self.settings = settings
        self.on_progress = on_progress
        self.while_held = while_held

    def run(self, workload: SmokeWorkload) -> Outcome:
        namespace = self.expect.claims_namespace
        template = self.cluster.read_claim_template(namespace, workload.template)
        if template is None:
            return Outcome(
                "claim template missing",
                (
                    Discrepancy(
                        subject=f"ResourceClaimTemplate {namespace}/{workload.template}",
                        expected="exists (the stack's sample claim templates)",
                        found="absent",
                        likely_cause="the stack's sample claim templates are turned off or were not deployed: `pulumi up` the stack with them on",
                    ),
                ),
            )
        created = CreatedObjects(namespace, f"verify-{workload.template}-{self.settings.name_suffix()}")
        result: Outcome | None = None
        try:
            result = self._exercise(workload, template, created)
        except ClusterError as error:
            result = api_failure(error)
        except KeyboardInterrupt:
            pass
        finally:
            leftovers, interrupted = self._clean_up(created)
        if result is None or interrupted:
            raise SmokeInterrupted(leftovers)
        return replace(result, findings=result.findings + tuple(leftovers))

    def _clean_up(self, created: CreatedObjects) -> tuple[list[Discrepancy], bool]:
        """What could not be deleted, and whether Ctrl-C or SIGTERM arrived meanwhile."""
        self.on_progress(f"deleting pod {created.pod}")
        with signals_deferred() as received:
            leftovers = clean_up(self.cluster, created)
        for leftover in leftovers:
            self.on_progress(f"could not delete {leftover.subject}: {leftover.likely_cause}")
        return leftovers, bool(received)

    def _exercise(self, workload: SmokeWorkload, template: Mapping[str, Any], created: CreatedObjects) -> Outcome:
        lifetime = int(self.settings.timeout_s) + LIFETIME_MARGIN_S
        manifest = smoke_pod(
            created.pod, created.namespace, workload, self.expect.smoke_image, self.expect.smoke_tolerations(), lifetime
        )
        self.on_progress(f"creating pod {created.pod}")
        self.cluster.create_pod(created.namespace, manifest)
        pod = self._wait_until_running(created, workload)
        if pod is None:
            return Outcome(
                "the smoke pod disappeared",
                (
                    Discrepancy(
                        subject=f"pod {created.pod}",
                        expected=f"Running within {self.settings.timeout_s:.0f}s",
                        found="the pod no longer exists",
                        likely_cause=(
                            f"something else deleted it (a namespace cleanup, an eviction, a person): "
                            f"`kubectl -n {created.namespace} get events --field-selector involvedObject.name={created.pod}`"
                        ),
                    ),
                ),
            )
        if pod.get("status", {}).get("phase") != "Running":
            events = self.cluster.pod_events(created.namespace, created.pod)
            return Outcome(
                "the smoke pod never ran",
                (diagnose_not_running(pod, events, self.settings.timeout_s, created.namespace),),
            )
        claim = self.cluster.read_claim(created.namespace, created.claim) if created.claim else None
        misallocated = allocation_findings(template, claim, workload.driver)
        if misallocated or claim is None:
            return Outcome("the claim is not allocated as requested", tuple(misallocated))
        outputs = []
        for command in workload.commands:
            self.on_progress(f"running {' '.join(command.argv)}")
            executed = self.cluster.exec_in_pod(created.namespace, created.pod, CONTAINER, command.argv)
            if executed.exit_code != 0:
                return Outcome(
                    f"{command.argv[0]} failed",
                    (
                        Discrepancy(
                            subject=f"`{' '.join(command.argv)}` in pod {created.pod}",
                            expected="exit code 0",
                            found=f"exit code {executed.exit_code}: {(executed.stderr or executed.stdout).strip()[:300]}",
                            likely_cause=command.failure_cause,
                        ),
                    ),
                )
            outputs.append(executed.stdout)
        verdict = workload.judge(claim, self.cluster.list_resource_slices(), outputs)
        if verdict.passed and self.while_held is not None:
            self.while_held(pod, claim)
        node = pod.get("spec", {}).get("nodeName", "?")
        return Outcome(f"pod on {node}: {verdict.summary}" if verdict.passed else verdict.summary, verdict.findings)

    def _wait_until_running(self, created: CreatedObjects, workload: SmokeWorkload) -> Mapping[str, Any] | None:
        """The pod once it runs, ends or the timeout passes; None when it is gone."""
        deadline = self.settings.clock() + self.settings.timeout_s
        while True:
            pod = self.cluster.read_pod(created.namespace, created.pod)
            if pod is None:
                return None
            created.claim = claim_name_for(pod, workload.pod_claim) or created.claim
            phase = pod.get("status", {}).get("phase", "Unknown")
            remaining = deadline - self.settings.clock()
            if phase in STARTED_PHASES or remaining <= 0:
                return pod
            self.on_progress(f"{phase}: {pending_reason(pod)}")
            self.settings.sleep(min(self.settings.poll_interval_s, remaining))
