"""`make verify` on a stack with queues: Kueue's queues are active, and what each has admitted and holds back.

Reads the ClusterQueues and LocalQueues (kueue.x-k8s.io/v1beta2, as sigs.k8s.io/kueue v0.17.0
serves them) and the teams' Workloads. A queue Kueue does not mark Active admits nothing: its
condition's reason and message say why (a missing flavor, a missing DeviceClass mapping).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from components.queue_model import QueuesConfig, TeamQueue
from tools.verify.checks import Discrepancy, Outcome
from tools.verify.cluster import Cluster
from tools.verify.objects import condition_text, condition_true

KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_VERSION = "v1beta2"
QUEUES_TITLE = "Kueue queues active; admitted and pending workloads"


def _active(queue: Mapping[str, Any] | None, kind: str, name: str) -> Discrepancy | None:
    if queue is None:
        return Discrepancy(
            subject=f"{kind} {name}",
            expected="to exist",
            found="none",
            likely_cause="the stack was not applied (pulumi up), or Kueue's CRDs are missing (its release failed)",
        )
    if condition_true(queue, "Active"):
        return None
    return Discrepancy(
        subject=f"{kind} {name}",
        expected="condition Active=True",
        found=condition_text(queue, "Active"),
        likely_cause="Kueue is not running, or the queue names a flavor or ClusterQueue that does not exist",
    )


def _workload_counts(workloads: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """(admitted, pending), finished Workloads left out: a finished one keeps its Admitted condition True."""
    running = [w for w in workloads if not condition_true(w, "Finished")]
    admitted = sum(1 for w in running if condition_true(w, "Admitted"))
    return admitted, len(running) - admitted


def _team_line(team: TeamQueue, workloads: Sequence[Mapping[str, Any]]) -> str:
    admitted, pending = _workload_counts(workloads)
    quotas = ", ".join(f"{quota.gpus} GPUs on {quota.group}" for quota in team.quotas)
    return f"{team.name} ({quotas}): {admitted} admitted, {pending} pending"


def check_queues(cluster: Cluster, queues: QueuesConfig) -> Outcome:
    """Every team's ClusterQueue and LocalQueue is Active; the summary counts admitted and pending Workloads."""
    cluster_queues = {
        q["metadata"]["name"]: q
        for q in cluster.list_custom_objects(KUEUE_GROUP, KUEUE_VERSION, "ClusterQueue", "clusterqueues")
    }
    findings: list[Discrepancy] = []
    lines: list[str] = []
    for team in queues.teams:
        local = {
            q["metadata"]["name"]: q
            for q in cluster.list_custom_objects(
                KUEUE_GROUP, KUEUE_VERSION, "LocalQueue", "localqueues", team.namespace
            )
        }
        for found in (
            _active(cluster_queues.get(team.name), "ClusterQueue", team.name),
            _active(local.get(team.local_queue), "LocalQueue", f"{team.namespace}/{team.local_queue}"),
        ):
            if found is not None:
                findings.append(found)
        workloads = cluster.list_custom_objects(KUEUE_GROUP, KUEUE_VERSION, "Workload", "workloads", team.namespace)
        lines.append(_team_line(team, workloads))
    summary = "; ".join(lines)
    if findings:
        return Outcome(f"{len(findings)} queue(s) not active; {summary}", tuple(findings))
    return Outcome(f"{len(queues.teams)} team queue(s) active; {summary}")
