"""A user claim template as the stack file gives it: the resource.k8s.io/v1 shape, bounded as k8s.io/api bounds it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    model_validator,
)

from components.dra_constants import (
    ALL_DEVICES,
    EXACT_COUNT,
)
from components.input.fields import (
    CAPACITY_NAME_PATTERN,
    MAX_CONFIGS,
    MAX_CONSTRAINTS,
    MAX_DEVICES_PER_CLAIM,
    MAX_REQUESTS,
    MAX_SELECTORS,
    MAX_SUBREQUESTS,
    QUALIFIED_ATTRIBUTE_PATTERN,
    QUANTITY_PATTERN,
    DnsLabel,
    DnsSubdomain,
    LabelKey,
    LabelValue,
    RequestReference,
    Shape,
)
from components.shown import shown


class CelSelectorInput(Shape):
    expression: Annotated[
        StrictStr,
        Field(
            min_length=1,
            max_length=10 * 1024,
            description="expected a CEL expression of at most 10 KiB (CELSelectorExpressionMaxLength)",
        ),
    ]


class SelectorInput(Shape):
    cel: CelSelectorInput


MAX_TOLERATIONS = 16  # k8s.io/api resource/v1 DeviceTolerationsMaxLength.


class DeviceTolerationInput(Shape):
    """A device toleration (k8s.io/api resource/v1 DeviceToleration), usable where DRADeviceTaints is on."""

    key: LabelKey | None = None
    operator: Annotated[Literal["Exists", "Equal"], Field(description="allowed: Exists or Equal")] = "Equal"
    value: LabelValue | None = None
    effect: (
        Annotated[Literal["NoSchedule", "NoExecute"], Field(description="allowed: NoSchedule or NoExecute")] | None
    ) = None
    tolerationSeconds: StrictInt | None = None


class CapacityRequirementsInput(Shape):
    """How much of each device capacity a request consumes (DRAConsumableCapacity)."""

    requests: dict[
        Annotated[
            StrictStr,
            Field(
                pattern=CAPACITY_NAME_PATTERN,
                max_length=318,
                description="expected a capacity name such as memory or gpu.nvidia.com/memory",
            ),
        ],
        Annotated[
            StrictStr,
            Field(pattern=QUANTITY_PATTERN, max_length=64, description='expected a quantity such as "40Gi", quoted'),
        ],
    ] = Field(min_length=1)


class SelectionInput(Shape):
    """Which devices and how many: what `exactly` and each `firstAvailable` entry have in common."""

    deviceClassName: DnsSubdomain
    selectors: list[SelectorInput] = Field(default_factory=list, max_length=MAX_SELECTORS)
    allocationMode: Annotated[
        Literal["ExactCount", "All"], Field(description=f"allowed: {EXACT_COUNT} (with count) or {ALL_DEVICES}")
    ] = "ExactCount"
    count: (
        Annotated[
            StrictInt,
            Field(
                ge=1,
                le=MAX_DEVICES_PER_CLAIM,
                description=f"expected a whole number from {1} to {MAX_DEVICES_PER_CLAIM}",
            ),
        ]
        | None
    ) = None
    # Behind feature gates (DRADeviceTaints, DRAConsumableCapacity): the config reader refuses them where the stack's
    # Kubernetes minor leaves the gate off (components/dra_minors.py).
    tolerations: list[DeviceTolerationInput] | None = Field(default=None, max_length=MAX_TOLERATIONS)
    capacity: CapacityRequirementsInput | None = None


class SubRequestInput(SelectionInput):
    name: DnsLabel


class ExactRequestInput(SelectionInput):
    adminAccess: StrictBool | None = None


# resource.k8s.io/v1beta1 had these on the request itself; v1 moved them under `exactly`.
V1BETA1_REQUEST_FIELDS = ("deviceClassName", "count", "allocationMode", "selectors", "adminAccess")


def v1_request(data: dict[str, Any]) -> str:
    """The v1 form of a v1beta1 request, with the values the user wrote: the fix never changes one."""
    moved = [f"{key}: {shown(data[key])}" for key in data if key in V1BETA1_REQUEST_FIELDS]
    if "deviceClassName" not in data:
        moved.insert(0, "deviceClassName: ...")
    kept = [f"{key}: {shown(value)}" for key, value in data.items() if key not in V1BETA1_REQUEST_FIELDS]
    return "{" + ", ".join([*kept, f"exactly: {{{', '.join(moved)}}}"]) + "}"


class DeviceRequestInput(Shape):
    @model_validator(mode="before")
    @classmethod
    def _refuse_v1beta1_shape(cls, data: Any) -> Any:
        flat = sorted(set(data) & set(V1BETA1_REQUEST_FIELDS)) if isinstance(data, dict) else []
        if flat:
            raise ValueError(
                f"has {', '.join(flat)} directly on the request: that is the v1beta1 shape. resource.k8s.io/v1 puts "
                f"them under exactly: write {v1_request(data)}"
            )
        return data

    name: DnsLabel
    exactly: ExactRequestInput | None = None
    firstAvailable: list[SubRequestInput] | None = Field(default=None, min_length=1, max_length=MAX_SUBREQUESTS)


class ConstraintInput(Shape):
    requests: list[RequestReference] = Field(default_factory=list)
    matchAttribute: (
        Annotated[
            StrictStr,
            Field(
                pattern=QUALIFIED_ATTRIBUTE_PATTERN,
                max_length=255,
                description="expected a qualified attribute such as resource.kubernetes.io/pcieRoot",
            ),
        ]
        | None
    ) = None
    # DRAConsumableCapacity: refused where the stack's minor leaves it off, like the request fields above.
    distinctAttribute: (
        Annotated[
            StrictStr,
            Field(
                pattern=QUALIFIED_ATTRIBUTE_PATTERN,
                max_length=255,
                description="expected a qualified attribute such as gpu.nvidia.com/uuid",
            ),
        ]
        | None
    ) = None


class OpaqueInput(Shape):
    driver: DnsSubdomain
    parameters: dict[StrictStr, Any]


class ClaimConfigInput(Shape):
    requests: list[RequestReference] = Field(default_factory=list)
    opaque: OpaqueInput


class UserClaimTemplateInput(Shape):
    name: DnsSubdomain
    requests: list[DeviceRequestInput] = Field(min_length=1, max_length=MAX_REQUESTS)
    constraints: list[ConstraintInput] = Field(default_factory=list, max_length=MAX_CONSTRAINTS)
    config: list[ClaimConfigInput] = Field(default_factory=list, max_length=MAX_CONFIGS)
    separateNetworkDevices: StrictBool = False
