"""The burn-in step: NCCL all_reduce_perf over each GPU group, through the stack's own claim templates.

When it runs. `--burn-in` always, `--no-burn-in` never, and by default whenever the GPU groups
changed since the last burn-in that passed on this cluster: the stack's groups (name, platform,
preset, InfiniBand) and the names of the nodes now in them, hashed, are kept per stack and API
server in a state file (`--burn-in-state`, default ~/.cache/nebius-dra/burn-in.json). A new
cluster, a group added, resized or moved to another preset, and a node replaced by auto-repair
all change it. A failed or interrupted burn-in records nothing, so the next run tries again.
`--skip-smoke` (read-only) never creates it.

What it does per group, one group after another: builds the indexed Job (tools/verify/burnin_job.py),
checks its pod spec with the policy pack's rule (policies/dra_guardrails/rdma_pod_rules.py) before sending it,
creates it (then the Secret and headless Service it owns), waits for every pod to start
(--timeout) and the Job to end (--burn-in-timeout), reads the outputs, judges them against the
floors (tools/verify/burnin_verdict.py) and deletes everything it created, also on a failure, a
timeout, Ctrl-C or SIGTERM (Ctrl-C cannot cut the deletion short).
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from components.config.reading import InputError, load_json
from components.dra_constants import IB_TEMPLATE, MULTI_GPU_TEMPLATE, NODE_GROUP_LABEL
from components.labels import tolerations_for
from policies.dra_guardrails.rdma_pod_rules import rdma_pod_problems
from tools.verify.allocation import diagnose_not_running, requested_count
from tools.verify.burnin_job import (
    CONTAINER,
    DEFAULT_BINARY,
    DEFAULT_IMAGE,
    RUN_LABEL,
    BurnInPlan,
    headless_service,
    job,
    new_ssh_keys,
    owned_by,
    pod_spec,
    ssh_secret,
)
from tools.verify.burnin_verdict import PodOutput, floor_for, judge_output
from tools.verify.checks import Discrepancy, Outcome, api_failure
from tools.verify.cluster import ClusterError, Obj
from tools.verify.expectations import Expectations, GroupExpectation
from tools.verify.floors import Floor, floors_for_run
from tools.verify.objects import condition_true, labels_of, name_of
from tools.verify.signals import signals_deferred
from tools.verify.smoke import STARTED_PHASES, SmokeInterrupted, random_suffix

DEFAULT_STATE_FILE = Path.home() / ".cache" / "nebius-dra" / "burn-in.json"
DEFAULT_BURN_IN_TIMEOUT_S = 1200.0
INDEX_LABEL = "batch.kubernetes.io/job-completion-index"


class BurnInCluster(Protocol):
    """What the burn-in asks of the cluster (tools/verify/cluster.py KubeCluster)."""

    def read_claim_template(self, namespace: str, name: str) -> Obj | None: ...
    def create_object(self, namespace: str, manifest: Obj) -> Obj: ...
    def delete_object(self, kind: str, namespace: str, name: str) -> None: ...
    def read_job(self, namespace: str, name: str) -> Obj | None: ...
    def list_pods_labelled(self, namespace: str, selector: str) -> list[Obj]: ...
    def pod_events(self, namespace: str, name: str) -> list[Obj]: ...
    def pod_log(self, namespace: str, name: str, container: str) -> str: ...


@dataclass
class BurnInSettings:
    # True: --burn-in; False: --no-burn-in; None: when the GPU groups changed since the last pass.
    requested: bool | None = None
    timeout_s: float = DEFAULT_BURN_IN_TIMEOUT_S
    start_timeout_s: float = 300.0
    image: str = DEFAULT_IMAGE
    binary: str = DEFAULT_BINARY
    floors: tuple[Floor, ...] = field(default_factory=lambda: floors_for_run(None))
    state_file: Path = DEFAULT_STATE_FILE
    poll_interval_s: float = 5.0
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    today: Callable[[], str] = lambda: datetime.date.today().isoformat()
    name_suffix: Callable[[], str] = random_suffix


def group_nodes(nodes: Sequence[Mapping[str, Any]], group: str) -> list[str]:
    """Names of the Ready, schedulable nodes of one group, sorted."""
    return sorted(
        name_of(node)
        for node in nodes
        if labels_of(node).get(NODE_GROUP_LABEL) == group
        and condition_true(node, "Ready")
        and not node.get("spec", {}).get("unschedulable")
    )


def fingerprint(expect: Expectations, nodes: Sequence[Mapping[str, Any]]) -> str:
    """What the burn-in proved: the GPU groups as configured and the nodes they have now."""
    groups = [
        [g.name, g.platform, g.preset, g.infiniband, group_nodes(nodes, g.name)]
        for g in sorted(expect.groups, key=lambda g: g.name)
    ]
    return hashlib.sha256(json.dumps(groups, sort_keys=True).encode()).hexdigest()


class BurnInState:
    """The last passing burn-in per stack and API server: `{key: {"fingerprint": ..., "passedOn": ...}}`."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _read(self) -> dict[str, Any]:
        if not self.path.exists():
            return {}
        try:
            document = load_json(self.path, f"the burn-in state {self.path}")
        except InputError:
            return {}  # an unreadable state only means the burn-in runs again
        return document if isinstance(document, dict) else {}

    def last_pass(self, key: str, current: str) -> str | None:
        """The day of the last pass with this fingerprint, or None."""
        entry = self._read().get(key)
        if isinstance(entry, dict) and entry.get("fingerprint") == current:
            return str(entry.get("passedOn", "an earlier run"))
        return None

    def record(self, key: str, current: str, day: str) -> None:
        document = self._read()
        document[key] = {"fingerprint": current, "passedOn": day}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _started(pod: Mapping[str, Any]) -> bool:
    return pod.get("status", {}).get("phase") in STARTED_PHASES


def _finished(job_obj: Mapping[str, Any]) -> bool:
    return any(condition_true(job_obj, kind) for kind in ("Complete", "Failed", "SuccessCriteriaMet", "FailureTarget"))


def _index(pod: Mapping[str, Any]) -> int:
    text = labels_of(pod).get(INDEX_LABEL) or pod.get("metadata", {}).get("annotations", {}).get(INDEX_LABEL, "")
    return int(text) if str(text).isdigit() else 1 << 30


def _hostname(pod: Mapping[str, Any]) -> str:
    """The pod's hostname: an indexed Job's `<job>-<index>`, else the pod's name (as Kubernetes sets it)."""
    return str(pod.get("spec", {}).get("hostname") or name_of(pod))


class BurnInGate:
    """Whether the burn-in runs this time, and the record of a pass."""

    def __init__(self, settings: BurnInSettings | None, expect: Expectations, server: str, read_only: bool) -> None:
        """`settings` None: no burn-in this run; `read_only`: --skip-smoke."""
        self.settings = None if read_only else settings
        self.read_only = read_only
        self.expect = expect
        self.key = f"{expect.stack} {server}"
        self.current: str | None = None

    def skip_reason(self, nodes: Sequence[Mapping[str, Any]]) -> str | None:
        if self.read_only:
            return "skipped (--skip-smoke): the burn-in creates pods"
        if self.settings is None:
            return "skipped: no burn-in settings were given"
        if self.settings.requested is False:
            return "skipped (--no-burn-in)"
        if MULTI_GPU_TEMPLATE not in self.expect.claim_templates:
            return f"the stack does not create the {MULTI_GPU_TEMPLATE} claim template (builtinClaimTemplates, multiGpuCount)"
        if not any(group_nodes(nodes, group.name) for group in self.expect.groups):
            return "no GPU group has a Ready node to burn in"
        self.current = fingerprint(self.expect, nodes)
        if self.settings.requested is None:
            passed_on = BurnInState(self.settings.state_file).last_pass(self.key, self.current)
            if passed_on is not None:
                return (
                    f"the GPU groups and their nodes are as at the last passing burn-in ({passed_on}); "
                    "--burn-in runs it again"
                )
        return None

    def record(self, outcome: Outcome) -> None:
        """A pass with nothing unreachable or unusable is kept; anything else runs again next time."""
        if self.settings is None or self.current is None or not outcome.passed or outcome.unusable:
            return
        with contextlib.suppress(OSError):  # an unwritable state file only means the next run burns in again
            BurnInState(self.settings.state_file).record(self.key, self.current, self.settings.today())


class BurnInRun:
    """Runs the burn-in over every GPU group with nodes, and always deletes what it created."""

    def __init__(
        self,
        cluster: BurnInCluster,
        expect: Expectations,
        settings: BurnInSettings,
        nodes: Sequence[Mapping[str, Any]],
        on_progress: Callable[[str], None],
    ) -> None:
        self.cluster = cluster
        self.expect = expect
        self.settings = settings
        self.nodes = nodes
        self.on_progress = on_progress

    def plan(self, group: GroupExpectation, nodes: int, gpus: int) -> BurnInPlan:
        name = f"verify-burnin-{group.name}-{self.settings.name_suffix()}"
        return BurnInPlan(
            name=name,
            namespace=self.expect.claims_namespace,
            group=group.name,
            nodes=nodes,
            gpus=gpus,
            nics=gpus if group.infiniband and IB_TEMPLATE in self.expect.claim_templates else 0,
            tolerations=tuple(tolerations_for(group.taints)),
            image=self.settings.image,
            binary=self.settings.binary,
            deadline_s=int(self.settings.timeout_s),
        )

    def run(self) -> Outcome:
        namespace = self.expect.claims_namespace
        template = self.cluster.read_claim_template(namespace, MULTI_GPU_TEMPLATE)
        gpus = requested_count(template) if template is not None else None
        if template is None or not gpus:
            return Outcome(
                "no whole-node claim template",
                (
                    Discrepancy(
                        subject=f"ResourceClaimTemplate {namespace}/{MULTI_GPU_TEMPLATE}",
                        expected="exists with an exact GPU count (the stack's whole-node template)",
                        found="absent" if template is None else "no exact count",
                        likely_cause="list multi-gpu in builtinClaimTemplates and `pulumi up` the stack",
                    ),
                ),
            )
        outcomes = []
        for group in self.expect.groups:
            nodes = group_nodes(self.nodes, group.name)
            if nodes:
                outcomes.append(self._run_group(self.plan(group, len(nodes), gpus), group))
        findings = tuple(f for outcome in outcomes for f in outcome.findings)
        warnings = tuple(w for outcome in outcomes for w in outcome.warnings)
        return Outcome(
            "; ".join(outcome.summary for outcome in outcomes),
            findings,
            unreachable=any(o.unreachable for o in outcomes),
            unusable=any(o.unusable for o in outcomes),
            warnings=warnings,
        )

    def _run_group(self, plan: BurnInPlan, group: GroupExpectation) -> Outcome:
        manifest = job(plan)
        refused = rdma_pod_problems(pod_spec(plan), {IB_TEMPLATE})
        if refused:
            return Outcome(
                f"{group.name}: the burn-in Job was not sent",
                tuple(
                    Discrepancy(
                        f"Job {plan.namespace}/{plan.name}",
                        "passes policy rdma-pod-memlock",
                        problem,
                        "a bug in tools/verify/burnin_job.py",
                    )
                    for problem in refused
                ),
            )
        created: list[tuple[str, str]] = []
        started = self.settings.clock()
        result: Outcome | None = None
        try:
            result = self._exercise(plan, group, manifest, created)
        except ClusterError as error:
            result = api_failure(error)
        except KeyboardInterrupt:
            pass
        finally:
            leftovers, interrupted = self._clean_up(plan, created)
        if result is None or interrupted:
            raise SmokeInterrupted(leftovers)
        held_s = self.settings.clock() - started
        price = group.price
        caveats = "".join(f" ({caveat})" for caveat in group.price_caveats)
        cost = (
            f", {plan.nodes} node(s) held {held_s:.0f}s: ${float(price.usd_per_node_hour) * plan.nodes * held_s / 3600:.2f}"
            f" at {price.basis} per node{caveats}"
            if price is not None
            else ""
        )
        return replace(
            result, summary=f"{group.name}: {result.summary}{cost}", findings=result.findings + tuple(leftovers)
        )

    def _exercise(
        self, plan: BurnInPlan, group: GroupExpectation, manifest: Obj, created: list[tuple[str, str]]
    ) -> Outcome:
        self.on_progress(f"{group.name}: creating Job {plan.name} ({plan.nodes} pod(s), {plan.gpus} GPU(s) each)")
        created.append(("Job", plan.name))
        made = self.cluster.create_object(plan.namespace, manifest)
        if plan.across_nodes:
            owners = owned_by(made)
            created.append(("Secret", plan.name))
            self.cluster.create_object(plan.namespace, ssh_secret(plan, new_ssh_keys(), owners))
            created.append(("Service", plan.name))
            self.cluster.create_object(plan.namespace, headless_service(plan, owners))
        pods, stopped = self._wait(plan)
        pods = sorted(pods, key=_index)
        if stopped is not None and (len(pods) < plan.nodes or not all(_started(pod) for pod in pods)):
            return self._not_started(plan, pods)
        outputs = [
            PodOutput(
                name_of(pod),
                _hostname(pod),
                pod.get("spec", {}).get("nodeName", "?"),
                self.cluster.pod_log(plan.namespace, name_of(pod), CONTAINER),
            )
            for pod in (pods[:1] if plan.across_nodes else pods)
        ]
        nodes = [pod.get("spec", {}).get("nodeName", "?") for pod in pods]
        if plan.across_nodes:
            floor = floor_for(self.settings.floors, group.platform, plan.nodes)
            judged = [
                judge_output(
                    outputs[0], nodes, [_hostname(pod) for pod in pods], plan.gpus, floor, group.name, plan.sweep
                )[0]
            ]
        else:
            floor = floor_for(self.settings.floors, group.platform, 1)
            judged = [
                judge_output(output, [output.node], [output.hostname], plan.gpus, floor, group.name, plan.sweep)[0]
                for output in outputs
            ]
        findings = tuple(f for outcome in judged for f in outcome.findings)
        if stopped is not None and not findings:
            findings = (
                Discrepancy(
                    f"Job {plan.namespace}/{plan.name}",
                    f"ends within {self.settings.timeout_s:.0f}s (--burn-in-timeout)",
                    stopped,
                    "all_reduce_perf hung (a peer that never answers over the fabric) or the run needs more time",
                ),
            )
        return Outcome(
            "; ".join(outcome.summary for outcome in judged),
            findings,
            warnings=tuple(w for outcome in judged for w in outcome.warnings),
        )

    def _wait(self, plan: BurnInPlan) -> tuple[list[Obj], str | None]:
        """Every pod of the Job once it ended; with why it stopped waiting before that otherwise."""
        now = self.settings.clock()
        deadline, start_deadline = now + self.settings.timeout_s, now + self.settings.start_timeout_s
        # Every pod seen, as last seen: the Job controller deletes the workers once pod 0 succeeded.
        seen: dict[str, Obj] = {}
        while True:
            job_obj = self.cluster.read_job(plan.namespace, plan.name)
            seen.update(
                (name_of(pod), pod)
                for pod in self.cluster.list_pods_labelled(plan.namespace, f"{RUN_LABEL}={plan.name}")
            )
            pods = list(seen.values())
            if job_obj is None:
                return pods, "the Job no longer exists (something else deleted it)"
            if _finished(job_obj):
                return pods, None
            now = self.settings.clock()
            if now >= deadline:
                return pods, f"still running after {self.settings.timeout_s:.0f}s"
            running = sum(1 for pod in pods if _started(pod))
            if now >= start_deadline and (running < plan.nodes):
                return (
                    pods,
                    f"{running} of {plan.nodes} pod(s) started within {self.settings.start_timeout_s:.0f}s",
                )
            self.on_progress(f"{plan.group}: {running}/{plan.nodes} pod(s) started")
            self.settings.sleep(min(self.settings.poll_interval_s, max(deadline - now, 0.0)))

    def _not_started(self, plan: BurnInPlan, pods: Sequence[Obj]) -> Outcome:
        findings = [
            diagnose_not_running(
                pod,
                self.cluster.pod_events(plan.namespace, name_of(pod)),
                self.settings.start_timeout_s,
                plan.namespace,
            )
            for pod in pods
            if not _started(pod)
        ]
        if len(pods) < plan.nodes:
            findings.append(
                Discrepancy(
                    f"Job {plan.namespace}/{plan.name}",
                    f"{plan.nodes} pods, one per node of group {plan.group}",
                    f"{len(pods)} pod(s) created",
                    f"the Job controller could not create them (a quota, a LimitRange): `kubectl -n {plan.namespace} describe job {plan.name}`",
                )
            )
        return Outcome(f"{len(findings)} pod(s) of {plan.nodes} could not start", tuple(findings))

    def _clean_up(self, plan: BurnInPlan, created: Sequence[tuple[str, str]]) -> tuple[list[Discrepancy], bool]:
        """Deletes the Job (its pods and their claims go with it), the Secret and the Service."""
        leftovers = []
        self.on_progress(f"{plan.group}: deleting Job {plan.name}")
        with signals_deferred() as received:
            for kind, name in created:
                try:
                    self.cluster.delete_object(kind, plan.namespace, name)
                except ClusterError as error:
                    leftovers.append(
                        Discrepancy(
                            f"{kind} {plan.namespace}/{name}",
                            "deleted after the burn-in",
                            str(error),
                            f"delete it by hand: `kubectl -n {plan.namespace} delete {kind.lower()} {name}`",
                        )
                    )
        return leftovers, bool(received)
