"""`queues`: the shape of GPU quotas per team, which Kueue enforces (the rules across it: components/config/queues.py).

A field of StackInput, validated with the rest of the stack file, so the published schema checks it too.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictInt, StrictStr

from components.dra_constants import GPU_CLASS, VFIO_CLASS
from components.input.fields import GROUP_NAME_PATTERN, ChartRepository, DnsLabel, DnsSubdomain, Namespace, Shape

DEFAULT_KUEUE_NAMESPACE = "kueue-system"
# Whole GPUs only: a team's quota is a number of GPUs of its groups, and a MIG slice is no GPU.
COUNTABLE_CLASSES = (GPU_CLASS, VFIO_CLASS)
DEFAULT_COUNTED: tuple[Literal["gpu.nvidia.com", "vfio.gpu.nvidia.com"], ...] = ("gpu.nvidia.com",)
MAX_TEAMS = 64
# A ClusterQueue's resource group holds at most 64 flavors (kueue v0.17.0 apis/kueue/v1beta2 clusterqueue_types.go).
MAX_FLAVORS = 64
FEATURE_GATE_PATTERN = r"^[A-Z][A-Za-z0-9]{0,63}$"
MAX_GPUS = 100 * 32  # Nebius: at most 100 nodes a group, and a claim holds at most 32 devices.
CountableClass = Annotated[
    Literal["gpu.nvidia.com", "vfio.gpu.nvidia.com"],
    Field(description=f"allowed: {', '.join(COUNTABLE_CLASSES)} (whole GPUs)"),
]
GpuCount = Annotated[
    StrictInt, Field(ge=0, le=MAX_GPUS, description=f"expected a whole number of GPUs from 0 to {MAX_GPUS}")
]


class TeamQuotaInput(Shape):
    group: Annotated[
        StrictStr,
        Field(pattern=GROUP_NAME_PATTERN, max_length=32, description="expected the name of a GPU node group"),
    ]
    gpus: GpuCount
    borrowingLimit: GpuCount | None = None


class TeamInput(Shape):
    name: DnsLabel
    namespace: Namespace | None = None
    localQueue: DnsLabel | None = None
    cohort: DnsLabel | None = None
    quotas: list[TeamQuotaInput] = Field(
        min_length=1, max_length=MAX_FLAVORS, description="expected a list of {group, gpus, borrowingLimit?}"
    )


class QueuesInput(Shape):
    teams: list[TeamInput] = Field(
        default_factory=list,
        max_length=MAX_TEAMS,
        description="expected a list of {name, namespace?, localQueue?, cohort?, quotas: [{group, gpus, borrowingLimit?}]}",
    )
    deviceClasses: list[CountableClass] = Field(default_factory=lambda: list(DEFAULT_COUNTED), min_length=1)
    claimTemplates: list[DnsSubdomain] | None = None
    namespace: Namespace = DEFAULT_KUEUE_NAMESPACE
    repository: ChartRepository = ""
    featureGates: dict[
        Annotated[StrictStr, Field(pattern=FEATURE_GATE_PATTERN, description="expected a Kueue feature gate")],
        StrictBool,
    ] = Field(default_factory=dict)
