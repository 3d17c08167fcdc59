"""Kueue: its Helm release values and the queue objects (flavors, ClusterQueues, LocalQueues), as plain data.

Field names and rules are those of the served module sigs.k8s.io/kueue v0.17.0: the chart
(charts/kueue/values.yaml: `controllerManager.featureGates`, `managerConfig.controllerManagerConfigYaml`,
`controllerManager.manager.image`), the Configuration (apis/config/v1beta2: `resources.deviceClassMappings`)
and the queue APIs (apis/kueue/v1beta2). e2e/kueue runs the real controller on these objects.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from components.dra_constants import GPU_TEMPLATE, NODE_GROUP_LABEL
from components.labels import tolerations_for
from components.model import ClaimsConfig, GpuNodeGroupConfig
from components.queue_model import (
    GPU_QUOTA_RESOURCE,
    KUEUE_CHART,
    KUEUE_IMAGE,
    KUEUE_VERSION,
    QUEUE_NAME_LABEL,
    QueuesConfig,
    TeamQueue,
)
from components.values.claim_templates import claim_template_specs
from components.values.release import ReleaseSpec, chart_location
from components.values.sample_pods import sample_pod_spec

KUEUE_API_VERSION = "kueue.x-k8s.io/v1beta2"
CONFIG_API_VERSION = "config.kueue.x-k8s.io/v1beta2"
RELEASE_NAME = "kueue"
# The workload kinds Kueue queues here: batch Jobs and JobSets (their pods carry the claim templates).
FRAMEWORKS = ("batch/job", "jobset.x-k8s.io/jobset")
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
PRESET_SIZES = re.compile(r"(\d+)vcpu-(\d+)gb$")


def manager_configuration(queues: QueuesConfig) -> dict[str, Any]:
    """Kueue's Configuration: the chart's defaults that matter, with the counted DeviceClasses mapped to GPUs.

    The chart takes it as one YAML text, so it is whole here: every field not written takes Kueue's default
    (apis/config/v1beta2/defaults.go), not the chart's example.
    """
    return {
        "apiVersion": CONFIG_API_VERSION,
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "integrations": {"frameworks": list(FRAMEWORKS)},
        "resources": {
            "deviceClassMappings": [{"name": GPU_QUOTA_RESOURCE, "deviceClassNames": list(queues.device_classes)}]
        },
    }


def kueue_values(queues: QueuesConfig, system_node_selector: Mapping[str, str]) -> dict[str, Any]:
    """The chart's values: the released image of the pinned tag (the module's chart names a staging image, which
    the release script rewrites; hack/helm-chart-package.sh), the feature gates, the Configuration, system nodes.

    The Configuration is written as JSON, which is YAML too: Kueue reads it as YAML, and the policy pack, which
    has no YAML parser, reads its deviceClassMappings."""
    return {
        "controllerManager": {
            "featureGates": [{"name": name, "enabled": enabled} for name, enabled in queues.feature_gates],
            "manager": {"image": {"repository": KUEUE_IMAGE, "tag": f"v{KUEUE_VERSION}", "pullPolicy": "IfNotPresent"}},
            "nodeSelector": dict(system_node_selector),
        },
        "managerConfig": {"controllerManagerConfigYaml": json.dumps(manager_configuration(queues), indent=2)},
    }


def kueue_release(queues: QueuesConfig, system_node_selector: Mapping[str, str]) -> ReleaseSpec:
    return ReleaseSpec(
        release_name=RELEASE_NAME,
        **chart_location(KUEUE_CHART, queues.repository),
        version=KUEUE_VERSION,
        namespace=queues.namespace,
        values=kueue_values(queues, system_node_selector),
    )


def resource_flavor(group: GpuNodeGroupConfig) -> dict[str, Any]:
    """One flavor per GPU group: Kueue adds its node labels and tolerations to the pods it admits on it."""
    spec: dict[str, Any] = {"nodeLabels": {NODE_GROUP_LABEL: group.name}}
    if group.taints:
        spec["tolerations"] = tolerations_for(group.taints)
    return {"apiVersion": KUEUE_API_VERSION, "kind": "ResourceFlavor", "metadata": {"name": group.name}, "spec": spec}


def group_cpu_memory(group: GpuNodeGroupConfig) -> tuple[int, int]:
    """vCPUs and GiB of the group at its largest: a GPU job's pods request CPU and memory too, and Kueue admits
    no workload requesting a resource its ClusterQueue does not cover, so the GPU flavors cover them at full size."""
    match = PRESET_SIZES.search(group.preset)
    vcpus, gib = (int(match.group(1)), int(match.group(2))) if match else (0, 0)
    nodes = group.node_range.largest
    return vcpus * nodes, gib * nodes


def cluster_queue(team: TeamQueue, groups: Sequence[GpuNodeGroupConfig]) -> dict[str, Any]:
    """The team's ClusterQueue: its namespace only, one flavor per group it has GPUs on, GPUs quota'd."""
    by_name = {group.name: group for group in groups}
    flavors = []
    for quota in team.quotas:
        vcpus, gib = group_cpu_memory(by_name[quota.group])
        gpu: dict[str, Any] = {"name": GPU_QUOTA_RESOURCE, "nominalQuota": quota.gpus}
        if quota.borrowing_limit is not None:
            gpu["borrowingLimit"] = quota.borrowing_limit
        flavors.append(
            {
                "name": quota.group,
                "resources": [
                    {"name": "cpu", "nominalQuota": vcpus},
                    {"name": "memory", "nominalQuota": f"{gib}Gi"},
                    gpu,
                ],
            }
        )
    spec: dict[str, Any] = {
        "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: team.namespace}},
        "queueingStrategy": "BestEffortFIFO",
        "resourceGroups": [{"coveredResources": ["cpu", "memory", GPU_QUOTA_RESOURCE], "flavors": flavors}],
    }
    if team.cohort:
        spec["cohortName"] = team.cohort
    return {"apiVersion": KUEUE_API_VERSION, "kind": "ClusterQueue", "metadata": {"name": team.name}, "spec": spec}


def local_queue(team: TeamQueue) -> dict[str, Any]:
    """What a team's jobs name in their `kueue.x-k8s.io/queue-name` label."""
    return {
        "apiVersion": KUEUE_API_VERSION,
        "kind": "LocalQueue",
        "metadata": {"name": team.local_queue, "namespace": team.namespace},
        "spec": {"clusterQueue": team.name},
    }


def queue_objects(queues: QueuesConfig, groups: Sequence[GpuNodeGroupConfig]) -> list[dict[str, Any]]:
    """Every Kueue object of the stack, flavors first: only the groups some team has a quota on get one."""
    used = {quota.group for team in queues.teams for quota in team.quotas}
    return [
        *(resource_flavor(group) for group in groups if group.name in used),
        *(cluster_queue(team, groups) for team in queues.teams),
        *(local_queue(team) for team in queues.teams),
    ]


QUEUED_JOB = "queued-gpu-job"


def queued_job(queues: QueuesConfig, claims: ClaimsConfig) -> dict[str, Any] | None:
    """The sample of how a team submits work: a Job labelled with its LocalQueue, one claim from a counted
    template. Kueue's webhook creates it suspended; Kueue lets it start once the team's quota holds its GPUs,
    and adds the flavor's node labels and tolerations to its pods. None where there is nothing to show."""
    if not claims.sample_pods or not queues.teams or not queues.claim_templates:
        return None
    team = queues.teams[0]
    template = GPU_TEMPLATE if GPU_TEMPLATE in queues.claim_templates else queues.claim_templates[0]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": QUEUED_JOB, "namespace": team.namespace, "labels": {QUEUE_NAME_LABEL: team.local_queue}},
        "spec": {
            "backoffLimit": 0,
            "template": {"spec": sample_pod_spec("gpu", template, claims.sample_gpu_image, ["nvidia-smi"])},
        },
    }


def team_claim_templates(queues: QueuesConfig, claims: ClaimsConfig) -> dict[str, dict[str, Any]]:
    """The claim templates each team namespace gets (a pod names a template of its own namespace)."""
    specs = claim_template_specs(claims)
    return {name: specs[name] for name in queues.claim_templates}
