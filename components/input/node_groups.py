"""A GPU node group as the stack file gives it, and the parts it shares with the system group."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
)

from components.dra_constants import (
    AUTO_REPAIR_CONDITIONS,
    CAPACITY_TYPES,
    RESERVATION_POLICIES,
    TAINT_EFFECTS,
)
from components.gpu_platforms import GPU_PLATFORMS
from components.gpu_platforms import TABLE_FILE as PLATFORMS_TABLE
from components.input.fields import (
    CONDITION_TYPE_PATTERN,
    DRIVERS_PRESET_PATTERN,
    DURATION_PATTERN,
    GPU_PRESET_PATTERN,
    GROUP_NAME_PATTERN,
    LABEL_VALUE_PATTERN,
    MAX_AUTO_REPAIR_CONDITIONS,
    MAX_CAPACITY_BLOCK_GROUPS,
    MAX_NODES,
    NEBIUS_ID_PATTERN,
    PERCENT_PATTERN,
    PLATFORM_PATTERN,
    PRICE_PATTERN,
    BootDiskGib,
    LabelKey,
    LabelValue,
    NodeCount,
    Shape,
)
from components.input.meaning import Doc
from components.resource_presets import TABLE_NAME as RESOURCE_PRESETS_TABLE
from components.shown import shown

GPU_PLATFORMS_TABLE = PLATFORMS_TABLE.relative_to(PLATFORMS_TABLE.parents[2]).as_posix()


class TaintInput(Shape):
    key: LabelKey
    value: Annotated[
        StrictStr,
        Field(
            pattern=LABEL_VALUE_PATTERN,
            min_length=1,
            max_length=63,
            description="expected a non-empty label value (Nebius requires a taint value): at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
        ),
    ]
    effect: Annotated[
        Literal["NoSchedule", "PreferNoSchedule", "NoExecute"],
        Field(description=f"allowed: {', '.join(TAINT_EFFECTS)}"),
    ]


class AutoscalingInput(Shape):
    min: Annotated[
        StrictInt,
        Field(
            ge=0,
            le=MAX_NODES,
            description=f"expected a whole number from 1 to {MAX_NODES} (Nebius allows at most {MAX_NODES} nodes)",
        ),
    ]
    max: NodeCount


NODE_AMOUNT_RULE = (
    f'expected a whole number of nodes from 0 to {MAX_NODES}, or a percentage of the group\'s nodes such as "25%"'
)
DURATION_RULE = "expected a duration such as 30m, 1h30m or 0 (units ns, us, ms, s, m, h, d; no sign)"
Duration = Annotated[StrictStr, Field(pattern=DURATION_PATTERN, max_length=64, description=DURATION_RULE)]
# The least time a condition must last before Nebius repairs the node: the shortest of Nebius's own rules, boot-disk
# I/O errors for 30 seconds (docs.nebius.com/kubernetes/maintenance/health-checks; pulumi-nebius 0.6.73 states no
# bound). A shorter one, `0s` above all, deletes and recreates the node, with its pods, on a blip such as a kubelet
# restart (Ready=False) that the node recovers from by itself.
MIN_REPAIR_TIMEOUT_S = 30
RepairTimeout = Annotated[
    StrictStr,
    Field(
        pattern=DURATION_PATTERN,
        max_length=64,
        description=f"expected a duration of at least {MIN_REPAIR_TIMEOUT_S}s such as 10m or 1h (units ns, us, ms, "
        f"s, m, h, d; no sign): Nebius's shortest own rule waits {MIN_REPAIR_TIMEOUT_S} seconds, and a shorter "
        "timeout recreates a node, with its pods, on a blip it recovers from",
    ),
]
NodeAmountValue = Annotated[
    Annotated[StrictInt, Field(ge=0, le=MAX_NODES)] | Annotated[StrictStr, Field(pattern=PERCENT_PATTERN)],
    Field(description=NODE_AMOUNT_RULE),
]


class StrategyInput(Shape):
    """Node-group `strategy`: every field left out takes the stack's default for the group (GPU or system)."""

    maxSurge: NodeAmountValue | None = None
    maxUnavailable: NodeAmountValue | None = None
    drainTimeout: Duration | None = None

    @field_validator("maxSurge", "maxUnavailable", mode="wrap")
    @classmethod
    def _count_or_percent(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """One message for a value that is neither a count nor a percentage, not one per member of the union."""
        try:
            return handler(value)
        except ValidationError:
            raise ValueError(f"got {shown(value)}; {NODE_AMOUNT_RULE}") from None


class AutoRepairConditionInput(Shape):
    type: Annotated[
        StrictStr,
        Field(
            pattern=CONDITION_TYPE_PATTERN,
            max_length=63,
            description=f"expected a node condition type such as {', '.join(AUTO_REPAIR_CONDITIONS)}",
        ),
    ]
    status: Annotated[
        Literal["True", "False", "Unknown"],
        Field(description='allowed: "True", "False" or "Unknown", quoted (unquoted, True and False are YAML booleans)'),
    ]
    timeout: RepairTimeout | None = None
    disabled: Annotated[StrictBool, Field(description="expected true or false")] = False


class CapacityInput(Shape):
    type: Annotated[
        Literal["on-demand", "reserved", "spot"], Field(description=f"allowed: {', '.join(CAPACITY_TYPES)}")
    ]
    reservationPolicy: (
        Annotated[Literal["AUTO", "FORBID", "STRICT"], Field(description=f"allowed: {', '.join(RESERVATION_POLICIES)}")]
        | None
    ) = None
    capacityBlockGroupIds: list[
        Annotated[
            StrictStr,
            Field(
                pattern=NEBIUS_ID_PATTERN,
                max_length=63,
                description="expected the ID of a capacity block group, such as capacityblockgroup-e00...",
            ),
        ]
    ] = Field(default_factory=list, max_length=MAX_CAPACITY_BLOCK_GROUPS)
    maxPricePerGpuHour: (
        Annotated[
            StrictStr,
            Field(
                pattern=PRICE_PATTERN,
                max_length=8,
                description='expected a price in USD per GPU-hour with at most 3 decimals, quoted, such as "3.515"',
            ),
        ]
        | None
    ) = None


class GpuNodeGroupInput(Shape):
    """One GPU node group of `gpuNodeGroups`, DRA-enabled; each field's meaning is written once, here (its Doc)."""

    name: Annotated[
        StrictStr,
        Field(
            pattern=GROUP_NAME_PATTERN,
            max_length=32,
            description="expected lowercase letters, digits and '-', starting with a letter, at most 32 characters",
        ),
        Doc(
            "lowercase letters, digits and `-`, starting with a letter and not ending with `-`, at most 32 characters, unique. `system` is refused (its node group name is the system group's), and `<clusterName>-<name>` must fit in 63 characters"
        ),
    ]
    platform: Annotated[
        StrictStr,
        Field(
            pattern=PLATFORM_PATTERN,
            max_length=63,
            description=f"expected a GPU platform Nebius lists: {', '.join(GPU_PLATFORMS)}",
            # Editors offer the names and flag another; the program refuses one with its closest name
            # (components/config/node_groups.py).
            json_schema_extra={"enum": list(GPU_PLATFORMS)},
        ),
        Doc(
            f"a GPU platform Nebius lists: {', '.join(f'`{name}`' for name in GPU_PLATFORMS)} (every platform of "
            f"[`{GPU_PLATFORMS_TABLE}`]({GPU_PLATFORMS_TABLE}), the driver-preset table; another is refused, "
            "with the closest name, until a row there adds it with its source)"
        ),
    ]
    preset: Annotated[
        StrictStr,
        Field(
            pattern=GPU_PRESET_PATTERN,
            max_length=63,
            description="expected a GPU preset <G>gpu-<C>vcpu-<M>gb, G from 1 to 8, C and M from 1, such as "
            "8gpu-128vcpu-1600gb or 1gpu-16vcpu-200gb",
        ),
        Doc(
            "a GPU preset `<G>gpu-<C>vcpu-<M>gb` such as `8gpu-128vcpu-1600gb` or `1gpu-16vcpu-200gb`; `<G>` is the GPUs per node, 1 to 8. "
            f"It must be one Nebius offers on the group's `platform`, as its row of [`{RESOURCE_PRESETS_TABLE}`]({RESOURCE_PRESETS_TABLE}) "
            "lists them (each row with its source and the day it was read); another, or any on a platform without a row, is "
            "refused with the presets offered, until the row adds it with its source"
        ),
    ]
    fixedNodeCount: Annotated[NodeCount | None, Doc("a fixed number of nodes, 1 to 100", required="one of the two")] = (
        None
    )
    autoscaling: Annotated[
        AutoscalingInput | None,
        Doc(
            "`{min, max}`, each at most 100; `min` at least 1 (DRA groups cannot scale up from zero) and not above `max`. See [the autoscaler and InfiniBand groups](#what-nebius-checks-that-the-plan-cannot)",
            required="one of the two",
        ),
    ] = None
    driversPreset: Annotated[
        Annotated[
            StrictStr,
            Field(
                pattern=DRIVERS_PRESET_PATTERN,
                max_length=16,
                description="expected a Nebius driver preset such as cuda13.0, or leave it out to have the GPU Operator install the driver",
            ),
        ]
        | None,
        Doc(
            "Nebius driver preset (`cudaX` or `cudaX.Y`, for example `cuda13.0`): the image ships the driver. Leave it out to have the GPU Operator install the driver"
        ),
    ] = None
    infiniband: Annotated[
        StrictBool,
        Field(description="expected true or false"),
        Doc(
            "`true` joins the group to the stack's GPU cluster on `infinibandFabric`; only 8-GPU presets, which is all Nebius GPU clusters take"
        ),
    ] = False
    bootDiskSizeGib: Annotated[BootDiskGib, Doc("boot disk per node, GiB (default 200; 64 to 65536)")] = 200
    labels: Annotated[
        dict[LabelKey, LabelValue],
        Doc(
            "extra node labels: keys `[prefix/]name`, values at most 63 characters. The DRA labels above are set by the stack and cannot be changed (as are `nebius-dra/node-group`, the group's name, and `nebius-dra/driver-mode`: a label under these keys with another value is refused); a key containing `kubernetes.io` or `k8s.io` is refused, since Nebius ignores such node labels. After a change, only nodes created afterwards get the new labels ([why](#what-nebius-checks-that-the-plan-cannot))"
        ),
    ] = Field(default_factory=dict, description="expected a map of label key to string value")
    taints: Annotated[
        list[TaintInput],
        Doc(
            "list of `{key, value, effect}`, written in Kubernetes spelling: effect `NoSchedule`, `PreferNoSchedule` or `NoExecute`. The stack sends them to Nebius as `NO_SCHEDULE`, `PREFER_NO_SCHEDULE` and `NO_EXECUTE`; the tolerations it gives the DRA driver, the GPU Operator and the sample pods keep the Kubernetes spelling. `value` is required (Nebius takes no taint without one); a key may appear once per effect"
        ),
    ] = Field(default_factory=list, description="expected a list of {key, value, effect}")
    strategy: Annotated[
        StrategyInput,
        Doc(
            'how Nebius replaces the group\'s nodes when its template changes: `{maxSurge, maxUnavailable, drainTimeout}`, default `{maxSurge: 0, maxUnavailable: 1, drainTimeout: 30m}`, always sent. `maxSurge` and `maxUnavailable` are a node count (0 to 100) or a quoted percentage (`"25%"`; surge rounds up, unavailable down) and may not both come to 0 nodes; `drainTimeout` is a duration (`30m`, `1h30m`; `0` waits for ever). A reserved `STRICT` group may not surge. See [Running GPU node groups](#running-gpu-node-groups-roll-outs-repair-reservations-spot)'
        ),
    ] = Field(default_factory=StrategyInput, description="expected {maxSurge, maxUnavailable, drainTimeout}")
    autoRepair: Annotated[
        list[AutoRepairConditionInput],
        Doc(
            'Nebius auto-repair rules to tune or switch off, on top of its defaults: a list of `{type, status, timeout}` (repair a node whose condition `type`, such as `NebiusGPUError`, stays `status` for `timeout`) or `{type, status, disabled: true}`. `status` is `"True"`, `"False"` or `"Unknown"`, quoted; each type and status once'
        ),
    ] = Field(
        default_factory=list,
        max_length=MAX_AUTO_REPAIR_CONDITIONS,
        description="expected a list of {type, status, timeout} or {type, status, disabled: true}",
    )
    capacity: Annotated[
        CapacityInput | None,
        Doc(
            'where the VMs come from: `{type: on-demand}` (the default; add `reservationPolicy: FORBID` to keep the group off your capacity blocks), `{type: reserved, reservationPolicy: STRICT or AUTO (default STRICT), capacityBlockGroupIds: [...]}` (capacity block groups, in order; none means any suitable one) or `{type: spot}` (preemptible VMs at the spot price; `maxPricePerGpuHour: "3.515"` caps it through a Nebius pricing policy the stack creates). Changing it recreates every node of the group'
        ),
    ] = None
