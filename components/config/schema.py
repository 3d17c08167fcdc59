"""The stack file's shape: every key and every structured field, as strict pydantic models.

pydantic checks types, whole-string ASCII patterns, bounds and unknown fields; the parsers
beside this module then check what needs more than one field (modes, collisions, CEL) and
build the frozen models. Each field's `description` is the "allowed" half of its error
message and the text editors show from the published JSON Schema (`stack-file.schema.json`).

Limits name their source: the Nebius API rules are those the installed `pulumi-nebius`
0.6.73 documents (also in nebius/terraform-provider-nebius docs); the DRA limits are the
constants of k8s.io/api v0.34 `resource/v1/types.go` (DeviceRequestsMaxSize = 32,
FirstAvailableDeviceRequestMaxSize = 8, DeviceSelectorsMaxSize = 32,
CELSelectorExpressionMaxLength = 10 * 1024, AllocationResultsMaxSize = 32).
"""

from __future__ import annotations

import datetime
import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from components.config.errors import shown
from components.dra_constants import (
    ALL_DEVICES,
    AUTO_REPAIR_CONDITIONS,
    BUILTIN_TEMPLATES,
    CAPACITY_TYPES,
    EXACT_COUNT,
    LEGACY_CHART,
    RENAMED_CHART,
    RESERVATION_POLICIES,
    TAINT_EFFECTS,
)

# Whole-string patterns over ASCII only, in the syntax RE2 (Go) and ECMA-262 share, because editors
# and validators run them from the published JSON Schema (stack-file.schema.json). pydantic runs
# them with its rust-regex engine (the `regex` crate: RE2's syntax, and `$` ends the text unless
# multi-line mode is on, as in RE2 and ECMA-262), so a trailing newline or a non-ASCII digit never
# passes for a name, version or preset. None of these engines but ECMA-262 has lookaround, so a
# length bound is a `max_length` or a second pattern.
DNS_LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
# Its bound of 253 characters is the `max_length` of `DnsSubdomain`.
DNS_SUBDOMAIN_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
RESOURCE_NAME_PATTERN = r"^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$"
NEBIUS_ID_PATTERN = r"^[a-z][a-z0-9]*-[a-z0-9]{1,56}$"
GROUP_NAME_PATTERN = r"^[a-z]([a-z0-9-]{0,30}[a-z0-9])?$"
GPU_PRESET_PATTERN = r"^[0-9]{1,2}gpu-[0-9]{1,4}vcpu-[0-9]{1,5}gb$"
CPU_PRESET_PATTERN = r"^[0-9]{1,4}vcpu-[0-9]{1,5}gb$"
PLATFORM_PATTERN = r"^[a-z][a-z0-9]*(-[a-z0-9]+){1,6}$"
DRIVERS_PRESET_PATTERN = r"^cuda[0-9]{1,3}(\.[0-9]{1,3})?$"
CHART_VERSION_PATTERN = r"^v?[0-9]{1,6}\.[0-9]{1,6}\.[0-9]{1,6}$"
IMAGE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}$"
ABSOLUTE_PATH_PATTERN = r"^/[A-Za-z0-9._/-]{0,254}$"
PROFILE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$"
FABRIC_PATTERN = r"^[a-z][a-z0-9]*(-[a-z0-9]+){0,4}$"
QUALIFIED_ATTRIBUTE_PATTERN = (
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[A-Za-z_][A-Za-z0-9_]{0,31}$"
)
REQUEST_REFERENCE_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(/[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)?$"
PRODUCT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9 ._()/+-]{0,127}$"
LABEL_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
LABEL_PREFIX = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
LABEL_KEY_PATTERN = rf"^({LABEL_PREFIX}/)?{LABEL_NAME}$"
# The prefix's bound of 253 characters (k8s.io/apimachinery IsQualifiedName), which no pattern of the shared
# syntax can state beside the prefix's shape: a second pattern every label key must also match.
LABEL_PREFIX_BOUND_PATTERN = r"^([^/]{0,253}/)?[^/]*$"
LABEL_VALUE_PATTERN = rf"^({LABEL_NAME})?$"
# A Nebius duration (pulumi-nebius 0.6.73: decimal numbers, each with an optional fraction and a unit
# among ns, us, ms, s, m, h, d), never negative; `0` alone is allowed.
DURATION_PATTERN = r"^(0|([0-9]{1,6}(\.[0-9]{1,9})?(ns|us|ms|s|m|h|d)){1,6})$"
PERCENT_PATTERN = r"^(100|[1-9]?[0-9])%$"
CONDITION_TYPE_PATTERN = r"^[A-Z][A-Za-z0-9]{0,62}$"
# A chart repository or mirror: classic (https://, or http:// inside a private network) or OCI. No user or
# password part: a credential in the URL would reach the release's inputs, the state and the plan in clear.
CHART_REPOSITORY_PATTERN = (
    r"^(https?|oci)://[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(:[0-9]{1,5})?(/[A-Za-z0-9._~%+-]+)*/?$"
)
# A resource.Quantity (k8s.io/apimachinery pkg/api/resource quantity.go: sign, digits with an optional fraction,
# and a binary suffix, a decimal suffix or an exponent), for a capacity request such as "40Gi".
QUANTITY_PATTERN = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$"
# A device capacity's QualifiedName (k8s.io/api resource/v1): an optional DNS-subdomain domain, then a C identifier.
CAPACITY_NAME_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z_][A-Za-z0-9_]{0,31}$"
)
# BillingV1PricingPolicyPricingMaxPriceV1Args.max_price: "Per-GPU hourly limit in USD, decimal string 3 digits precision".
PRICE_PATTERN = r"^(0|[1-9][0-9]{0,3})(\.[0-9]{1,3})?$"


def optional(pattern: str) -> str:
    """`pattern` (anchored with ^ and $) or the empty string, still anchored at both ends."""
    return rf"^(?:{pattern[1:-1]})?$"


MAX_NODES = 100  # Nebius: node counts 0-100 (fixed, autoscaling max, system count).
MAX_BOOT_DISK_GIB = 65536
MAX_DEVICES_PER_CLAIM = 32  # k8s.io/api resource/v1 AllocationResultsMaxSize.
MAX_REQUESTS = 32  # DeviceRequestsMaxSize (= AllocationResultsMaxSize).
MAX_SUBREQUESTS = 8  # FirstAvailableDeviceRequestMaxSize.
MAX_SELECTORS = 32  # DeviceSelectorsMaxSize.
MAX_CONSTRAINTS = 32  # DeviceConstraintsMaxSize.
MAX_CONFIGS = 32  # DeviceConfigMaxSize.
MAX_CAPACITY_BLOCK_GROUPS = 16
MAX_AUTO_REPAIR_CONDITIONS = 16

LABEL_KEY_RULE = (
    "expected [prefix/]name: an optional DNS-subdomain prefix (at most 253 characters) and a name of at most "
    "63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
)
LABEL_VALUE_RULE = (
    "expected at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit (or empty)"
)


def _label_prefix_bounded(key: str) -> str:
    """A label key's second pattern, refused with the error of its first, so the user reads the same message."""
    if re.fullmatch(LABEL_PREFIX_BOUND_PATTERN, key) is None:
        raise PydanticCustomError(
            "string_pattern_mismatch",
            "String should match pattern '{pattern}'",
            {"pattern": LABEL_PREFIX_BOUND_PATTERN},
        )
    return key


LabelKey = Annotated[
    StrictStr,
    Field(
        pattern=LABEL_KEY_PATTERN,
        max_length=317,
        description=LABEL_KEY_RULE,
        json_schema_extra={"allOf": [{"pattern": LABEL_PREFIX_BOUND_PATTERN}]},
    ),
    AfterValidator(_label_prefix_bounded),
]
LabelValue = Annotated[StrictStr, Field(pattern=LABEL_VALUE_PATTERN, max_length=63, description=LABEL_VALUE_RULE)]
DnsLabel = Annotated[
    StrictStr,
    Field(
        pattern=DNS_LABEL_PATTERN,
        max_length=63,
        description="expected a DNS label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit",
    ),
]
DnsSubdomain = Annotated[
    StrictStr,
    Field(
        pattern=DNS_SUBDOMAIN_PATTERN,
        max_length=253,
        description="expected lowercase letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters",
    ),
]
Image = Annotated[
    StrictStr,
    Field(
        pattern=IMAGE_PATTERN,
        max_length=255,
        description="expected an image reference such as nvidia/cuda:13.1.1-runtime-ubuntu24.04 (ASCII, no spaces)",
    ),
]
ChartVersion = Annotated[
    StrictStr,
    Field(
        pattern=CHART_VERSION_PATTERN,
        max_length=32,
        description="expected an exact chart version such as 25.7.0 or v25.10.1 (ranges are not pinned)",
    ),
]
ChartRepository = Annotated[
    StrictStr,
    Field(
        pattern=optional(CHART_REPOSITORY_PATTERN),
        max_length=255,
        description="expected a chart repository or mirror URL (https://, http:// or oci://, without user or "
        "password), or empty for the chart's upstream repository",
    ),
]


NodeCount = Annotated[
    StrictInt,
    Field(
        ge=1,
        le=MAX_NODES,
        description=f"expected a whole number from 1 to {MAX_NODES} (Nebius allows at most {MAX_NODES} nodes)",
    ),
]
BootDiskGib = Annotated[
    StrictInt,
    Field(ge=64, le=MAX_BOOT_DISK_GIB, description=f"expected a whole number from {64} to {MAX_BOOT_DISK_GIB}"),
]
RequestReference = Annotated[
    StrictStr,
    Field(
        pattern=REQUEST_REFERENCE_PATTERN, max_length=255, description="expected a request name, or request/subrequest"
    ),
]


class Shape(BaseModel):
    """Strict: no coercion (a string is never a number), no unknown field, no NaN or infinity."""

    model_config = ConfigDict(
        strict=True, extra="forbid", frozen=True, allow_inf_nan=False, regex_engine="rust-regex", populate_by_name=False
    )


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
    timeout: Duration | None = None
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
    name: Annotated[
        StrictStr,
        Field(
            pattern=GROUP_NAME_PATTERN,
            max_length=32,
            description="expected lowercase letters, digits and '-', starting with a letter, at most 32 characters",
        ),
    ]
    platform: Annotated[
        StrictStr,
        Field(
            pattern=PLATFORM_PATTERN,
            max_length=63,
            description="expected a GPU platform such as gpu-h100-sxm, gpu-h200-sxm, gpu-b200-sxm-a or gpu-b300-sxm",
        ),
    ]
    preset: Annotated[
        StrictStr,
        Field(
            pattern=GPU_PRESET_PATTERN,
            max_length=63,
            description="expected a GPU preset such as 8gpu-128vcpu-1600gb or 1gpu-16vcpu-200gb",
        ),
    ]
    fixedNodeCount: NodeCount | None = None
    autoscaling: AutoscalingInput | None = None
    driversPreset: (
        Annotated[
            StrictStr,
            Field(
                pattern=DRIVERS_PRESET_PATTERN,
                max_length=16,
                description="expected a Nebius driver preset such as cuda13.0, or leave it out to have the GPU Operator install the driver",
            ),
        ]
        | None
    ) = None
    infiniband: Annotated[StrictBool, Field(description="expected true or false")] = False
    bootDiskSizeGib: BootDiskGib = 200
    labels: dict[LabelKey, LabelValue] = Field(
        default_factory=dict, description="expected a map of label key to string value"
    )
    taints: list[TaintInput] = Field(default_factory=list, description="expected a list of {key, value, effect}")
    strategy: StrategyInput = Field(
        default_factory=StrategyInput, description="expected {maxSurge, maxUnavailable, drainTimeout}"
    )
    autoRepair: list[AutoRepairConditionInput] = Field(
        default_factory=list,
        max_length=MAX_AUTO_REPAIR_CONDITIONS,
        description="expected a list of {type, status, timeout} or {type, status, disabled: true}",
    )
    capacity: CapacityInput | None = None


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


# Prices: the table in prices/nebius.yaml and a stack's nebius-dra:priceOverrides share one shape.
MAX_USD_PER_UNIT_HOUR = 1000  # Far above any published Nebius price per GPU, vCPU or GiB hour.
MAX_PRICE_ENTRIES = 200
DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
SOURCE_PATTERN = r"^[\x21-\x7e]([\x20-\x7e]{0,298}[\x21-\x7e])?$"


UsdPerGpuHour = Annotated[
    float,
    Field(
        gt=0,
        le=MAX_USD_PER_UNIT_HOUR,
        description=f"expected US dollars per GPU-hour, a number above 0 and at most {MAX_USD_PER_UNIT_HOUR}",
    ),
]
UsdPerVcpuHour = Annotated[
    float,
    Field(
        gt=0,
        le=MAX_USD_PER_UNIT_HOUR,
        description=f"expected US dollars per vCPU-hour, a number above 0 and at most {MAX_USD_PER_UNIT_HOUR}",
    ),
]
UsdPerGibHour = Annotated[
    float,
    Field(
        gt=0,
        le=MAX_USD_PER_UNIT_HOUR,
        description=f"expected US dollars per GiB-hour of RAM, a number above 0 and at most {MAX_USD_PER_UNIT_HOUR}",
    ),
]


PriceSource = Annotated[
    StrictStr,
    Field(
        pattern=SOURCE_PATTERN,
        max_length=300,
        description="expected where the price comes from: the URL of the Nebius page (or a reference such as a "
        "contract number), printable ASCII, at most 300 characters",
    ),
]
PriceDate = Annotated[
    StrictStr,
    Field(
        pattern=DATE_PATTERN,
        description='expected the day the price holds, as a quoted "YYYY-MM-DD"',
    ),
]
PriceNote = Annotated[StrictStr, Field(max_length=1000, description="expected a note of at most 1000 characters")]


class _DatedPrice(Shape):
    source: PriceSource
    date: PriceDate

    @field_validator("date")
    @classmethod
    def _real_day(cls, value: str) -> str:
        try:
            datetime.date.fromisoformat(value)
        except ValueError:
            raise ValueError(f'date "{value}" is not a day of the calendar; write "YYYY-MM-DD"') from None
        return value


class GpuRateInput(_DatedPrice):
    usdPerGpuHour: UsdPerGpuHour


class CpuRateInput(_DatedPrice):
    usdPerVcpuHour: UsdPerVcpuHour
    usdPerGibHour: UsdPerGibHour


class GpuPriceInput(Shape):
    platform: Annotated[
        StrictStr,
        Field(pattern=PLATFORM_PATTERN, max_length=63, description="expected a GPU platform such as gpu-h200-sxm"),
    ]
    presets: Annotated[
        list[
            Annotated[
                StrictStr,
                Field(
                    pattern=GPU_PRESET_PATTERN,
                    max_length=63,
                    description="expected a GPU preset such as 8gpu-128vcpu-1600gb",
                ),
            ]
        ],
        Field(min_length=1, max_length=64, description="expected 1 to 64 presets the price holds for"),
    ]
    onDemand: GpuRateInput
    spot: GpuRateInput | None = None
    note: PriceNote | None = None


class CpuPriceInput(Shape):
    platform: Annotated[
        StrictStr,
        Field(pattern=PLATFORM_PATTERN, max_length=63, description="expected a CPU platform such as cpu-d3"),
    ]
    onDemand: CpuRateInput
    spot: CpuRateInput | None = None
    note: PriceNote | None = None


class PriceTableInput(Shape):
    """prices/nebius.yaml, and the shape of nebius-dra:priceOverrides."""

    currency: Annotated[Literal["USD"], Field(description="allowed: USD")] = "USD"
    gpu: list[GpuPriceInput] = Field(
        default_factory=list,
        max_length=MAX_PRICE_ENTRIES,
        description=f"expected a list of at most {MAX_PRICE_ENTRIES} {{platform, presets, onDemand, spot?, note?}}",
    )
    cpu: list[CpuPriceInput] = Field(
        default_factory=list,
        max_length=MAX_PRICE_ENTRIES,
        description=f"expected a list of at most {MAX_PRICE_ENTRIES} {{platform, onDemand, spot?, note?}}",
    )


BUILTIN_TEMPLATE_PATTERN = rf"^({'|'.join(BUILTIN_TEMPLATES)})$"
BuiltinTemplateName = Annotated[
    StrictStr, Field(pattern=BUILTIN_TEMPLATE_PATTERN, description=f"allowed: {', '.join(BUILTIN_TEMPLATES)}")
]
BOOL = Annotated[StrictBool, Field(description="expected true or false")]
OPTIONAL_ID = Annotated[
    StrictStr,
    Field(
        pattern=optional(NEBIUS_ID_PATTERN),
        max_length=255,
        description="expected a Nebius ID such as serviceaccount-e00..., or empty",
    ),
]


class StackInput(Shape):
    """Every key of the stack, named as in `Pulumi.<stack>.yaml` without the `nebius-dra:` namespace.

    No defaults here: `Pulumi.yaml` declares them and the CLI (or the offline plan) merges them
    in, so a key is missing only when the project declares no default for it.
    """

    parentId: Annotated[
        StrictStr,
        Field(
            pattern=optional(NEBIUS_ID_PATTERN),
            max_length=63,
            description="expected the ID of a Nebius project, such as project-e00... (empty only with existingClusterKubeconfig)",
        ),
    ]
    subnetId: Annotated[
        StrictStr,
        Field(
            pattern=optional(NEBIUS_ID_PATTERN),
            max_length=63,
            description="expected the ID of a VPC subnet, such as vpcsubnet-e00... (empty only with existingClusterKubeconfig)",
        ),
    ]
    clusterName: Annotated[
        StrictStr,
        Field(
            pattern=optional(RESOURCE_NAME_PATTERN),
            max_length=63,
            description="expected a Nebius name: at most 63 lowercase letters, digits and '-', starting with a letter and not ending with '-' (no '.'), or empty for dra-<stack>",
        ),
    ]
    kubernetesVersion: Annotated[
        StrictStr,
        Field(
            max_length=32,
            description='allowed: MAJOR.MINOR (for example "1.34") or MAJOR.MINOR-nebius-node.N, at least 1.34',
        ),
    ]
    etcdClusterSize: Annotated[
        Literal[1, 3], Field(description="allowed: 1 or 3 (3 for production); the Nebius API takes no other size")
    ]
    publicEndpoint: BOOL
    nebiusProfile: Annotated[
        StrictStr,
        Field(
            pattern=optional(PROFILE_PATTERN),
            max_length=63,
            description="expected a nebius CLI profile name (letters, digits, '.', '_', '-'), or empty",
        ),
    ]
    protect: BOOL
    nodeServiceAccountId: OPTIONAL_ID
    systemNodePlatform: Annotated[
        StrictStr, Field(pattern=PLATFORM_PATTERN, max_length=63, description="expected a CPU platform such as cpu-d3")
    ]
    systemNodePreset: Annotated[
        StrictStr,
        Field(pattern=CPU_PRESET_PATTERN, max_length=63, description="expected a CPU preset such as 4vcpu-16gb"),
    ]
    systemNodeCount: NodeCount
    systemNodeBootDiskGib: BootDiskGib
    systemNodeStrategy: Annotated[
        StrategyInput, Field(description="expected a map {maxSurge, maxUnavailable, drainTimeout}")
    ]
    systemNodeAutoRepair: Annotated[
        list[AutoRepairConditionInput],
        Field(
            max_length=MAX_AUTO_REPAIR_CONDITIONS,
            description="expected a list of {type, status, timeout} or {type, status, disabled: true}",
        ),
    ]
    gpuNodeGroups: Annotated[
        list[GpuNodeGroupInput],
        Field(min_length=1, description="expected a non-empty list of GPU node groups in the stack file"),
    ]
    infinibandFabric: Annotated[
        StrictStr,
        Field(
            pattern=optional(FABRIC_PATTERN),
            max_length=63,
            description="expected an InfiniBand fabric such as fabric-3, or empty",
        ),
    ]
    draDriverChart: Annotated[
        Literal["nvidia-dra-driver-gpu", "dra-driver-nvidia-gpu"],
        Field(description=f"allowed: {RENAMED_CHART} (default) or {LEGACY_CHART}"),
    ]
    draDriverVersion: Annotated[
        StrictStr,
        Field(
            pattern=optional(CHART_VERSION_PATTERN),
            max_length=32,
            description="expected an exact chart version, or empty for the chart line's default",
        ),
    ]
    draDriverRepository: ChartRepository
    draDriverNamespace: DnsLabel
    draDriverRoot: Annotated[
        StrictStr,
        Field(
            pattern=optional(ABSOLUTE_PATH_PATTERN),
            max_length=255,
            description="expected an absolute path on the node, such as / or /run/nvidia/driver, or empty",
        ),
    ]
    draComputeDomains: BOOL
    draDriverValues: Annotated[dict[StrictStr, Any], Field(description="expected a map of chart values")]
    gpuOperatorVersion: ChartVersion
    gpuOperatorRepository: ChartRepository
    networkOperatorVersion: ChartVersion
    networkOperatorRepository: ChartRepository
    claimNamespace: DnsLabel
    builtinClaimTemplates: list[BuiltinTemplateName]
    multiGpuCount: Annotated[
        StrictInt,
        Field(
            ge=0,
            le=MAX_DEVICES_PER_CLAIM,
            description=f"expected 0 (every GPU of the largest node) or a whole number from 2 to {MAX_DEVICES_PER_CLAIM}",
        ),
    ]
    gpuProducts: Annotated[
        list[
            Annotated[
                StrictStr,
                Field(
                    pattern=PRODUCT_PATTERN,
                    max_length=128,
                    description='expected a GPU product name as nvidia-smi prints it, for example "NVIDIA H200"',
                ),
            ]
        ],
        Field(
            min_length=1, description="expected a non-empty list of GPU product names (an empty list selects no GPU)"
        ),
    ]
    samplePods: BOOL
    sampleGpuImage: Image
    sampleRdmaImage: Image
    userClaimTemplates: list[UserClaimTemplateInput]
    allowedDeviceClasses: list[DnsSubdomain]
    existingClusterKubeconfig: Annotated[
        StrictStr,
        Field(
            max_length=1 << 20,
            description="expected the kubeconfig (YAML text) of a cluster that already exists, set as a secret, or empty",
        ),
    ]
    gpuMetrics: BOOL
    dcgmExporterVersion: ChartVersion
    dcgmExporterRepository: ChartRepository
    gpuMetricsNamespace: DnsLabel
    gpuMetricsProfile: Annotated[
        Literal["", "full", "basic"],
        Field(
            description="allowed: full (DCGM profiling fields on), basic (no DCGM_FI_PROF_* fields), or empty to choose by the GPU groups' platforms"
        ),
    ]
    gpuMetricsValues: Annotated[dict[StrictStr, Any], Field(description="expected a map of chart values")]
    prometheusServiceMonitor: BOOL
    kubePrometheusStack: BOOL
    kubePrometheusStackVersion: ChartVersion
    kubePrometheusStackRepository: ChartRepository
    queues: Annotated[
        dict[StrictStr, Any], Field(description="expected a map (its fields: components/config/queues.py)")
    ]
    priceOverrides: Annotated[
        PriceTableInput,
        Field(
            description="expected a map {gpu?: [{platform, presets, onDemand: {usdPerGpuHour, source, date}, spot?, "
            "note?}], cpu?: [{platform, onDemand: {usdPerVcpuHour, usdPerGibHour, source, date}, spot?, note?}]}"
        ),
    ]


# Keys whose values may be set as secrets (`pulumi config set --secret`, or `secure:` in the stack
# file): their values reach only Helm values, which the stack then marks secret as a whole.
SECRET_CAPABLE_KEYS = ("draDriverValues", "existingClusterKubeconfig")
# Keys that hold credentials: set only as secrets.
SECRET_ONLY_KEYS = ("existingClusterKubeconfig",)
