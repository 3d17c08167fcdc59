"""Queue guardrails: Kueue's GPU quotas and what they leave uncounted, as rules over planned resources.

Pure functions over the planned resources (anything with urn, type, name and camelCase props), read
with the package's own helpers (`planned`); `registry` registers them (QUEUE_CHECKS). Kueue's names are those of sigs.k8s.io/kueue v0.17.0: the chart's `controllerManager.featureGates`
and `managerConfig.controllerManagerConfigYaml`, the Configuration's `resources.deviceClassMappings`,
the ClusterQueue's `resourceGroups[].flavors[].resources[].nominalQuota` and `cohortName`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .planned import (
    GROUP_LABEL,
    HELM_RELEASE_TYPES,
    KUEUE_CHART,
    NODE_GROUP_TYPE,
    as_list,
    chart_name,
    field_at,
    has_key,
    planned_node_range,
    planned_number,
)
from .quoting import listed, shown

DRA_GATE = "DynamicResourceAllocation"
CLUSTER_QUEUE_TYPE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
LOCAL_QUEUE_TYPE = "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"
FLAVOR_TYPE = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
# Kinds whose pods take GPUs and that Kueue can queue; their namespace should have a LocalQueue.
WORKLOAD_TYPES = (
    "kubernetes:core/v1:Pod",
    "kubernetes:batch/v1:Job",
    "kubernetes:batch/v1:CronJob",
    "kubernetes:apps/v1:Deployment",
    "kubernetes:apps/v1:StatefulSet",
    "kubernetes:jobset.x-k8s.io/v1alpha2:JobSet",
)
_GPU_PRESET = re.compile(r"^(\d+)gpu-")

Violation = tuple[str | None, str]


def kueue_releases(resources: Sequence[Any]) -> list[Any]:
    return [r for r in resources if r.type in HELM_RELEASE_TYPES and chart_name(r.props) == KUEUE_CHART]


def _gates(release: Any) -> dict[str, bool]:
    return {
        str(gate.get("name")): gate.get("enabled") is True
        for gate in as_list(field_at(release.props, "values", "controllerManager", "featureGates"))
        if isinstance(gate, Mapping)
    }


def _mapped_resources(release: Any) -> set[str]:
    """The logical resources the release's Configuration maps DeviceClasses to (resources.deviceClassMappings)."""
    text = field_at(release.props, "values", "managerConfig", "controllerManagerConfigYaml")
    try:
        config = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return set()
    return {
        str(mapping.get("name"))
        for mapping in as_list(field_at(config, "resources", "deviceClassMappings"))
        if isinstance(mapping, Mapping)
    }


def _quotas(queue: Any) -> list[tuple[str, str, Any]]:
    """(flavor, resource name, the resource's entry) of each quota of a ClusterQueue; a quota is a quantity, a string
    ("6400Gi") as much as a number, so only a rule that adds it up reads it as a number (planned_number)."""
    found = []
    for group in as_list(field_at(queue.props, "spec", "resourceGroups")):
        for flavor in as_list(field_at(group, "flavors")):
            for resource in as_list(field_at(flavor, "resources")):
                if has_key(resource, "nominalQuota"):
                    found.append((str(field_at(flavor, "name")), str(field_at(resource, "name")), resource))
    return found


def _name(resource: Any) -> str:
    return field_at(resource.props, "metadata", "name") or resource.name


def check_kueue_dra_gate(resources: Sequence[Any], config: Mapping[str, Any]) -> list[Violation]:
    """Kueue counts a claim's devices only with its DynamicResourceAllocation gate on (alpha, off by default in
    v0.17.0); without it a quota on a DRA-mapped resource never sees the GPUs pods take, and holds nothing back."""
    queues = [r for r in resources if r.type == CLUSTER_QUEUE_TYPE]
    violations: list[Violation] = []
    for release in kueue_releases(resources):
        mapped = _mapped_resources(release)
        if _gates(release).get(DRA_GATE) or not mapped:
            continue
        counted = sorted({_name(q) for q in queues for _, resource, _ in _quotas(q) if resource in mapped})
        if counted:
            violations.append(
                (
                    release.urn,
                    f'Kueue release "{shown(release.name)}" maps DeviceClasses to {listed(sorted(mapped))} and ClusterQueues '
                    f"({listed(counted)}) set quotas on it, but its {DRA_GATE} feature gate is off: Kueue then counts "
                    "no device a claim takes, so every team can take every GPU. Enable the gate "
                    f"(values.controllerManager.featureGates: [{{name: {DRA_GATE}, enabled: true}}]; in this project "
                    f"remove {DRA_GATE}: false from nebius-dra:queues featureGates).",
                )
            )
    return violations


def check_workload_namespaces_queued(resources: Sequence[Any], config: Mapping[str, Any]) -> list[Violation]:
    """With queues on, a workload in a namespace without a LocalQueue bypasses every team's quota."""
    if not any(r.type == CLUSTER_QUEUE_TYPE for r in resources):
        return []
    queued = {field_at(r.props, "metadata", "namespace") for r in resources if r.type == LOCAL_QUEUE_TYPE}
    violations: list[Violation] = []
    for workload in (r for r in resources if r.type in WORKLOAD_TYPES):
        namespace = field_at(workload.props, "metadata", "namespace")
        if isinstance(namespace, str) and namespace not in queued:
            violations.append(
                (
                    workload.urn,
                    f'{shown(workload.type.rsplit(":", 1)[-1])} "{shown(workload.name)}" runs in namespace {shown(namespace)}, which has no '
                    "Kueue LocalQueue: its GPUs count against no team's quota, and the first pod still wins. Run it in "
                    "a team's namespace with the label kueue.x-k8s.io/queue-name (in this project: a team of "
                    "nebius-dra:queues).",
                )
            )
    return violations


def _group_gpus(resources: Sequence[Any]) -> dict[str, float]:
    """The most GPUs each GPU group the stack creates can hold, by the group's node label."""
    found: dict[str, float] = {}
    for group in (r for r in resources if r.type == NODE_GROUP_TYPE):
        name = field_at(group.props, "template", "metadata", "labels", GROUP_LABEL)
        match = _GPU_PRESET.match(str(field_at(group.props, "template", "resources", "preset") or ""))
        nodes = planned_node_range(group)
        if isinstance(name, str) and match and nodes is not None:
            found[name] = nodes[1] * int(match.group(1))
    return found


def check_quotas_within_capacity(resources: Sequence[Any], config: Mapping[str, Any]) -> list[Violation]:
    """Nominal GPU quotas on one group that add up past its GPUs: among queues that share no cohort, each team is
    promised GPUs that are not there, and a Job Kueue admits then waits Pending for a node; inside one cohort, a
    ClusterQueue's nominal quota is what Kueue guarantees it, borrowing aside (kueue.sigs.k8s.io/docs/concepts/
    cluster_queue/, "nominalQuota"), and quotas above the group's GPUs cannot all be guaranteed at once."""
    flavors = {
        _name(f): field_at(f.props, "spec", "nodeLabels", GROUP_LABEL) for f in resources if f.type == FLAVOR_TYPE
    }
    capacity = _group_gpus(resources)
    mapped = (
        set().union(*(_mapped_resources(r) for r in kueue_releases(resources))) if kueue_releases(resources) else set()
    )
    sums: dict[str, list[tuple[str, float, Any]]] = {}
    for queue in (r for r in resources if r.type == CLUSTER_QUEUE_TYPE):
        for flavor, resource, entry in _quotas(queue):
            # A device quota the stack registers as a number; another kind cannot be added up, so it is a violation.
            quota = planned_number(queue, "nominalQuota", within=entry) if resource in mapped else None
            if quota is not None:
                sums.setdefault(flavor, []).append((_name(queue), quota, field_at(queue.props, "spec", "cohortName")))
    violations: list[Violation] = []
    for flavor, entries in sums.items():
        group = flavors.get(flavor)
        if group not in capacity:
            continue
        most = capacity[group]
        total = sum(quota for _, quota, _ in entries)
        cohorts = {cohort for _, _, cohort in entries}
        if total > most and (len(cohorts) > 1 or None in cohorts):
            violations.append(
                (
                    None,
                    f"ClusterQueues quota {total:g} GPUs on flavor {shown(flavor)} ({_listed(entries)}), but GPU group {shown(group)} "
                    f"holds at most {most:g} and the queues share no cohort: Kueue admits Jobs the nodes cannot run. "
                    "Lower the quotas to the group's GPUs, or put the teams in one cohort and give each its share "
                    "(nebius-dra:queues teams[].cohort).",
                )
            )
        for cohort in sorted(c for c in cohorts if c is not None):
            members = [entry for entry in entries if entry[2] == cohort]
            pooled = sum(quota for _, quota, _ in members)
            if pooled > most:
                violations.append(
                    (
                        None,
                        f"ClusterQueues of cohort {shown(cohort)} quota {pooled:g} GPUs on flavor {shown(flavor)} "
                        f"({_listed(members)}), but GPU group {shown(group)} holds at most {most:g}: a nominal quota is what "
                        "Kueue guarantees a queue (kueue.sigs.k8s.io/docs/concepts/cluster_queue/), and the cohort's "
                        "cannot all be guaranteed at once. Lower the quotas so the cohort's add up to at most the "
                        "group's GPUs; borrowing still lets a team take what the others leave unused "
                        "(nebius-dra:queues teams[].quotas).",
                    )
                )
    return violations


def _listed(entries: Sequence[tuple[str, float, Any]]) -> str:
    return ", ".join(f"{shown(name)} {quota:g}" for name, quota, _ in entries[:10]) + (
        f" and {len(entries) - 10} more" if len(entries) > 10 else ""
    )


# (name, description, level, check): registry.RULES registers each as a StackRule.
QUEUE_CHECKS = (
    (
        "kueue-dra-gate",
        f"Kueue's {DRA_GATE} gate is on wherever ClusterQueues quota DRA devices.",
        "mandatory",
        check_kueue_dra_gate,
    ),
    (
        "workload-namespace-queued",
        "With Kueue queues on, every workload runs in a namespace with a LocalQueue.",
        "advisory",
        check_workload_namespaces_queued,
    ),
    (
        "queue-quotas-within-capacity",
        "GPU quotas on a group add up to at most its GPUs, across the queues and inside each cohort.",
        "advisory",
        check_quotas_within_capacity,
    ),
)
