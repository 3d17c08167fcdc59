"""GPU quotas per team: the frozen model of `queues`, which Kueue enforces.

Kept beside `components/model.py` (one concept per file); `StackConfig.queues` holds one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from components.input.queues import DEFAULT_KUEUE_NAMESPACE
from components.repository_model import ChartRepositoryConfig

# The pinned Kueue release: the chart from registry.k8s.io/kueue/charts (the OCI chart of the same tag as the
# served Go module sigs.k8s.io/kueue v0.17.0, charts/kueue) and the controller image of that tag.
KUEUE_VERSION = "0.17.0"
KUEUE_CHART = "kueue"
KUEUE_REPOSITORY = "oci://registry.k8s.io/kueue/charts"
KUEUE_IMAGE = "registry.k8s.io/kueue/kueue"
# sigs.k8s.io/kueue v0.17.0 pkg/features/kube_features.go: quota accounting of DRA devices, alpha, off by default.
DRA_GATE = "DynamicResourceAllocation"
# The label a Job carries to be queued (sigs.k8s.io/kueue v0.17.0 pkg/controller/constants QueueLabel).
QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
# The logical resource the counted DeviceClasses map to (the Configuration's resources.deviceClassMappings[].name),
# and the name a ClusterQueue's GPU quota has. Kueue's docs quota GPUs under this name.
GPU_QUOTA_RESOURCE = "nvidia.com/gpu"


@dataclass(frozen=True)
class TeamQuota:
    """A team's GPUs on one GPU group (one ResourceFlavor); borrowing only inside the team's cohort."""

    group: str
    gpus: int
    borrowing_limit: int | None = None


@dataclass(frozen=True)
class TeamQueue:
    """One team: its namespace, its ClusterQueue (named after the team) and the LocalQueue jobs name."""

    name: str
    namespace: str
    local_queue: str
    quotas: tuple[TeamQuota, ...]
    cohort: str | None = None


@dataclass(frozen=True)
class QueuesConfig:
    """Off when no team is declared: then nothing of Kueue is installed."""

    teams: tuple[TeamQueue, ...] = ()
    device_classes: tuple[str, ...] = ()
    claim_templates: tuple[str, ...] = ()
    namespace: str = DEFAULT_KUEUE_NAMESPACE
    repository: ChartRepositoryConfig = field(default=ChartRepositoryConfig(KUEUE_REPOSITORY))
    feature_gates: tuple[tuple[str, bool], ...] = ((DRA_GATE, True),)

    @property
    def enabled(self) -> bool:
        return bool(self.teams)

    @property
    def dra_gate(self) -> bool:
        return dict(self.feature_gates).get(DRA_GATE, False)


NO_QUEUES = QueuesConfig()
