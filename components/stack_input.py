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
from dataclasses import dataclass
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
from components.shown import shown

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
CPU_PRESET_PATTERN = r"^[0-9]{1,4}vcpu-[0-9]{1,5}gb$"
PLATFORM_PATTERN = r"^[a-z][a-z0-9]*(-[a-z0-9]+){1,6}$"
# A GPU preset names its shape: GPUs, vCPUs and GiB of memory per node (`8gpu-128vcpu-1600gb`).
# The stack-file schema validates presets with this pattern too, so it must mean the same in Go RE2,
# ECMA-262 and Python (tests/test_regex_engines.py); Python matches it with `\Z`, as `$` would allow a newline.
GPU_PRESET_PATTERN = r"^([0-9]{1,2})gpu-([0-9]{1,4})vcpu-([0-9]{1,5})gb$"
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


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


@dataclass(frozen=True)
class Setting:
    """A stack key as `Pulumi.yaml` declares it and the README lists it (`python -m tools.config_docs`).

    `meaning` is Markdown, written once: the README's column, and `Pulumi.yaml`'s description with
    the Markdown taken out. `default` is what the CLI merges in when a stack leaves the key out
    (REQUIRED: none). `shown_default` and `shown_type` are the README's words where the value
    itself would not say it (`dra-<stack>` for an empty name).
    """

    section: str
    meaning: str
    default: Any = REQUIRED
    shown_default: str | None = None
    shown_type: str | None = None


def stack_settings() -> dict[str, Setting]:
    """Every key's Setting, in the order StackInput declares them; every key must have one."""
    settings = {}
    for name, info in StackInput.model_fields.items():
        (setting,) = [item for item in info.metadata if isinstance(item, Setting)]
        settings[name] = setting
    return settings


@dataclass(frozen=True)
class Doc:
    """What a setting means, in Markdown, where the README's tables read it (`python -m tools.config_docs`).

    `required` is the README's word for when a field must be given; without it, "yes" for a field
    with no default and "no" otherwise.
    """

    meaning: str
    required: str | None = None


def field_docs(model: type[BaseModel]) -> list[tuple[str, str, str]]:
    """(name, required, meaning) of every field of `model`, in declaration order; every field must have a Doc."""
    docs = []
    for name, info in model.model_fields.items():
        (doc,) = [item for item in info.metadata if isinstance(item, Doc)]
        docs.append((name, doc.required or ("yes" if info.is_required() else "no"), doc.meaning))
    return docs


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
            description="expected a GPU platform such as gpu-h100-sxm, gpu-h200-sxm, gpu-b200-sxm-a or gpu-b300-sxm",
        ),
        Doc("a GPU platform: `gpu-h100-sxm`, `gpu-h200-sxm`, `gpu-b200-sxm-a`, `gpu-b300-sxm`, ..."),
    ]
    preset: Annotated[
        StrictStr,
        Field(
            pattern=GPU_PRESET_PATTERN,
            max_length=63,
            description="expected a GPU preset such as 8gpu-128vcpu-1600gb or 1gpu-16vcpu-200gb",
        ),
        Doc(
            "a GPU preset `<G>gpu-<C>vcpu-<M>gb` such as `8gpu-128vcpu-1600gb` or `1gpu-16vcpu-200gb`; `<G>` is the GPUs per node"
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
            "extra node labels: keys `[prefix/]name`, values at most 63 characters. The DRA labels above are set by the stack and cannot be changed (it also sets `nebius-dra/node-group` and `nebius-dra/driver-mode`); a key containing `kubernetes.io` or `k8s.io` is refused, since Nebius ignores such node labels. After a change, only nodes created afterwards get the new labels ([why](#what-nebius-checks-that-the-plan-cannot))"
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


def calendar_day(value: str) -> str:
    """`value` when it is a day of the calendar (the pattern admits 2026-13-45); the reason otherwise."""
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        raise ValueError(f'date "{value}" is not a day of the calendar; write "YYYY-MM-DD"') from None
    return value


PriceNote = Annotated[StrictStr, Field(max_length=1000, description="expected a note of at most 1000 characters")]


class _DatedPrice(Shape):
    source: PriceSource
    date: PriceDate

    @field_validator("date")
    @classmethod
    def _real_day(cls, value: str) -> str:
        return calendar_day(value)


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
    doubtful: PriceNote | None = None


class CpuPriceInput(Shape):
    platform: Annotated[
        StrictStr,
        Field(pattern=PLATFORM_PATTERN, max_length=63, description="expected a CPU platform such as cpu-d3"),
    ]
    onDemand: CpuRateInput
    spot: CpuRateInput | None = None
    note: PriceNote | None = None
    doubtful: PriceNote | None = None


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


# An enum (not a pattern), so a misspelt name gets its "did you mean" and editors offer the names.
BuiltinTemplateName = Annotated[
    Literal[BUILTIN_TEMPLATES],  # type: ignore[valid-type]
    Field(description=f"allowed: {', '.join(BUILTIN_TEMPLATES)}"),
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

    Each key's default, README section and meaning are its `Setting`; `python -m tools.config_docs`
    writes them into `Pulumi.yaml` (whose defaults the CLI, or the offline plan, merges in, so a
    key is missing only when it has no default) and into the README's tables. The fields carry no
    pydantic default: the program always receives every key that has one.
    """

    parentId: Annotated[
        StrictStr,
        Field(
            pattern=optional(NEBIUS_ID_PATTERN),
            max_length=63,
            description="expected the ID of a Nebius project, such as project-e00... (empty only with existingClusterKubeconfig)",
        ),
        Setting(
            "Cluster and node keys",
            "Nebius project ID (`project-...`) that owns the cluster and the GPU cluster",
            default="",
            shown_default="(required to create a cluster)",
        ),
    ]
    subnetId: Annotated[
        StrictStr,
        Field(
            pattern=optional(NEBIUS_ID_PATTERN),
            max_length=63,
            description="expected the ID of a VPC subnet, such as vpcsubnet-e00... (empty only with existingClusterKubeconfig)",
        ),
        Setting(
            "Cluster and node keys",
            "VPC subnet (`vpcsubnet-...`) for the control plane and the nodes",
            default="",
            shown_default="(required to create a cluster)",
        ),
    ]
    clusterName: Annotated[
        StrictStr,
        Field(
            pattern=optional(RESOURCE_NAME_PATTERN),
            max_length=63,
            description="expected a Nebius name: at most 63 lowercase letters, digits and '-', starting with a letter and not ending with '-' (no '.'), or empty for dra-<stack>",
        ),
        Setting(
            "Cluster and node keys",
            "name of the mk8s cluster: at most 63 lowercase letters, digits and `-`, starting with a letter, no `.`. Node groups are named `<clusterName>-<group>` (the system group `<clusterName>-system`) and the GPU cluster `<clusterName>-<fabric>`; each of those must fit in 63 characters too",
            default="",
            shown_default="`dra-<stack>`",
        ),
    ]
    kubernetesVersion: Annotated[
        StrictStr,
        Field(
            max_length=32,
            description='allowed: MAJOR.MINOR (for example "1.34") or MAJOR.MINOR-nebius-node.N, at least 1.34',
        ),
        Setting(
            "Cluster and node keys",
            "`MAJOR.MINOR` or `MAJOR.MINOR-nebius-node.N`, at least 1.34 (the floor: `resource.k8s.io/v1` is GA there), quoted. New stacks default to 1.35, the minor Nebius's solutions library moved to (its driver-preset table, `policies/dra_guardrails/driver_presets.json`, has rows for 1.35 and 1.36 and none for 1.34); 1.36 turns on the DRA features of [the table by minor](#your-own-templates). dev and prod stay on 1.34, set in their stack files: moving a live stack's minor upgrades the control plane, then every node group, and Nebius replaces each group's nodes by its roll-out strategy (one 8-GPU node at a time in prod), so plan it (`make plan STACK=prod` compares with the last commit and lists every group replaced, with batches and duration; a skipped minor such as 1.34 to 1.36 is refused) and do it on dev first; a patch version (`1.34.1`) is refused. The control plane gets `MAJOR.MINOR`; every node group (system and GPU) gets the whole value, `-nebius-node.N` included, so changing it upgrades the node groups too, after the cluster (`components/values/node_groups.py`)",
            default="1.35",
            shown_default="`1.35`",
        ),
    ]
    etcdClusterSize: Annotated[
        Literal[1, 3],
        Field(description="allowed: 1 or 3 (3 for production); the Nebius API takes no other size"),
        Setting(
            "Cluster and node keys", "1 or 3 etcd members (3 in prod); the Nebius API takes no other size", default=1
        ),
    ]
    publicEndpoint: Annotated[
        BOOL,
        Setting(
            "Cluster and node keys", "public control plane endpoint; the kubeconfig uses it when present", default=True
        ),
    ]
    nebiusProfile: Annotated[
        StrictStr,
        Field(
            pattern=optional(PROFILE_PATTERN),
            max_length=63,
            description="expected a nebius CLI profile name (letters, digits, '.', '_', '-'), or empty",
        ),
        Setting(
            "Cluster and node keys",
            "`nebius` CLI profile for the kubeconfig's exec plugin (`--profile`)",
            default="",
            shown_default="(CLI default)",
        ),
    ]
    protect: Annotated[
        BOOL,
        Setting(
            "Cluster and node keys",
            "deletion protection for the cluster, GPU cluster and GPU node groups",
            default=False,
        ),
    ]
    nodeServiceAccountId: Annotated[
        OPTIONAL_ID,
        Setting(
            "Cluster and node keys",
            "service account (`serviceaccount-...`) attached to every node",
            default="",
            shown_default="(none)",
        ),
    ]
    systemNodePlatform: Annotated[
        StrictStr,
        Field(pattern=PLATFORM_PATTERN, max_length=63, description="expected a CPU platform such as cpu-d3"),
        Setting(
            "Cluster and node keys",
            "CPU platform of the system node group (a `gpu-*` platform is refused)",
            default="cpu-d3",
        ),
    ]
    systemNodePreset: Annotated[
        StrictStr,
        Field(pattern=CPU_PRESET_PATTERN, max_length=63, description="expected a CPU preset such as 4vcpu-16gb"),
        Setting("Cluster and node keys", "CPU preset of the system nodes (`<N>vcpu-<M>gb`)", default="4vcpu-16gb"),
    ]
    systemNodeCount: Annotated[
        NodeCount, Setting("Cluster and node keys", "number of system nodes, 1 to 100", default=2)
    ]
    systemNodeBootDiskGib: Annotated[
        BootDiskGib, Setting("Cluster and node keys", "boot disk of each system node, GiB, 64 to 65536", default=64)
    ]
    systemNodeStrategy: Annotated[
        StrategyInput,
        Field(description="expected a map {maxSurge, maxUnavailable, drainTimeout}"),
        Setting(
            "Cluster and node keys",
            "roll-out strategy of the system group, always sent to Nebius; fields as in a GPU group's `strategy` ([Running GPU node groups](#running-gpu-node-groups-roll-outs-repair-reservations-spot)). A field left out keeps its default here",
            default={"maxSurge": 1, "maxUnavailable": 0, "drainTimeout": "10m"},
            shown_default="`{maxSurge: 1, maxUnavailable: 0, drainTimeout: 10m}`",
        ),
    ]
    systemNodeAutoRepair: Annotated[
        list[AutoRepairConditionInput],
        Field(
            max_length=MAX_AUTO_REPAIR_CONDITIONS,
            description="expected a list of {type, status, timeout} or {type, status, disabled: true}",
        ),
        Setting(
            "Cluster and node keys",
            "auto-repair rules of the system group on top of Nebius's defaults, as in a GPU group's `autoRepair`",
            default=[],
        ),
    ]
    gpuNodeGroups: Annotated[
        list[GpuNodeGroupInput],
        Field(min_length=1, description="expected a non-empty list of GPU node groups in the stack file"),
        Setting(
            "Cluster and node keys",
            "the GPU node groups, all DRA-enabled; at least one; fields below",
            shown_default="(required)",
        ),
    ]
    infinibandFabric: Annotated[
        StrictStr,
        Field(
            pattern=optional(FABRIC_PATTERN),
            max_length=63,
            description="expected an InfiniBand fabric such as fabric-3, or empty",
        ),
        Setting(
            "Cluster and node keys",
            "InfiniBand fabric of the GPU cluster (for example `fabric-3`); required when a group sets `infiniband: true`",
            default="",
            shown_default="(none)",
        ),
    ]
    draDriverChart: Annotated[
        Literal["nvidia-dra-driver-gpu", "dra-driver-nvidia-gpu"],
        Field(description=f"allowed: {RENAMED_CHART} (default) or {LEGACY_CHART}"),
        Setting(
            "DRA driver keys",
            "chart line: `dra-driver-nvidia-gpu` (the default for a stack file that does not set it) or `nvidia-dra-driver-gpu` (dev and prod set it: they run 25.12.0)",
            default="dra-driver-nvidia-gpu",
        ),
    ]
    draDriverVersion: Annotated[
        StrictStr,
        Field(
            pattern=optional(CHART_VERSION_PATTERN),
            max_length=32,
            description="expected an exact chart version, or empty for the chart line's default",
        ),
        Setting(
            "DRA driver keys",
            "exact version: `25.12.0` for the first line; `0.4.x` from `0.4.1` (the default) for the second. `0.4.0` is refused: with `nameOverride` it renders duplicate label keys ([kubernetes-sigs/dra-driver-nvidia-gpu#1184](https://github.com/kubernetes-sigs/dra-driver-nvidia-gpu/issues/1184), fixed in 0.4.1)",
            default="",
            shown_default="per chart line",
        ),
    ]
    draDriverRepository: Annotated[
        ChartRepository,
        Setting(
            "DRA driver keys",
            "`oci://registry.k8s.io/dra-driver-nvidia/charts` (the default for `dra-driver-nvidia-gpu`) or `https://helm.ngc.nvidia.com/nvidia` (the default and only upstream for `nvidia-dra-driver-gpu`); or any mirror (`https://`, `http://` or `oci://`, no user or password in the URL: it would be stored in clear)",
            default="",
            shown_default="per chart line",
        ),
    ]
    draDriverNamespace: Annotated[
        DnsLabel,
        Setting(
            "DRA driver keys",
            "namespace of the release (a DNS label), created if missing; a namespace Kubernetes owns (`default`, `kube-system`, `kube-public`, `kube-node-lease`) is refused",
            default="nvidia-dra-driver-gpu",
        ),
    ]
    draDriverRoot: Annotated[
        StrictStr,
        Field(
            pattern=optional(ABSOLUTE_PATH_PATTERN),
            max_length=255,
            description="expected an absolute path on the node, such as / or /run/nvidia/driver, or empty",
        ),
        Setting(
            "DRA driver keys",
            "`nvidiaDriverRoot`, an absolute path: `/` with presets, `/run/nvidia/driver` with the GPU Operator; required when modes are mixed",
            default="",
            shown_default="by driver mode",
        ),
    ]
    draPluginOutageAccepted: Annotated[
        list[
            Annotated[
                StrictStr,
                Field(
                    pattern=GROUP_NAME_PATTERN,
                    max_length=32,
                    description="expected the name of a GPU group of gpuNodeGroups",
                ),
            ]
        ],
        Setting(
            "DRA driver keys",
            "GPU groups whose DRA kubelet plugin you accept to lose when `draDriverRoot` moves away from where their driver lives (a change between driver modes, [offline plan](docs/offline-plan.md#driver-mode-changes)); without it the plan's mandatory finding `driver-mode-transition` blocks such a change. Remove it once those groups are recreated",
            default=[],
        ),
    ]
    draComputeDomains: Annotated[
        BOOL,
        Setting(
            "DRA driver keys",
            "ComputeDomains for GB200/GB300-class systems; the controller then runs on the system nodes",
            default=False,
        ),
    ]
    draDriverValues: Annotated[
        dict[StrictStr, Any],
        Field(description="expected a map of chart values"),
        Setting(
            "DRA driver keys",
            "extra chart values, deep-merged last; guarded values and keys the chart does not read are refused. It may be a secret (as `existingClusterKubeconfig` must be); the release's Helm values are then a secret as a whole",
            default={},
        ),
    ]
    gpuOperatorVersion: Annotated[
        ChartVersion,
        Setting(
            "DRA driver keys",
            "exact GPU Operator chart version, installed only when a group has no `driversPreset`. Until issue 26 the default was `v25.10.1`: a stack in GPU Operator mode that relied on it upgrades the Operator on its next `pulumi up`; set `v25.10.1` to keep it",
            default="v26.7.0",
        ),
    ]
    gpuOperatorRepository: Annotated[
        ChartRepository,
        Setting(
            "DRA driver keys",
            "repository or mirror of the GPU Operator chart, as for `draDriverRepository`",
            default="",
            shown_default="NGC",
        ),
    ]
    networkOperatorVersion: Annotated[
        ChartVersion,
        Setting(
            "DRA driver keys",
            "exact Network Operator chart version, installed only when such a group uses InfiniBand",
            default="25.7.0",
        ),
    ]
    networkOperatorRepository: Annotated[
        ChartRepository,
        Setting(
            "DRA driver keys",
            "repository or mirror of the Network Operator chart, as for `draDriverRepository`",
            default="",
            shown_default="NGC",
        ),
    ]
    claimNamespace: Annotated[
        DnsLabel,
        Setting(
            "Claim and sample keys",
            'namespace of the templates and sample pods (a DNS label). The stack creates it and deletes it with the stack, so a namespace Kubernetes owns (`default`, `kube-system`, `kube-public`, `kube-node-lease`) or a release of the stack uses (`draDriverNamespace`, `gpu-operator` and `nvidia-network-operator` where it installs them, `monitoring` with `kubePrometheusStack`, the `queues` namespace of Kueue) is refused. Labelled `resource.kubernetes.io/admin-access: "true"` when a user template uses `adminAccess`',
            default="dra-samples",
        ),
    ]
    builtinClaimTemplates: Annotated[
        list[BuiltinTemplateName],
        Setting(
            "Claim and sample keys",
            "built-in templates to create: `gpu`, `multi-gpu`, `gpu-by-product`, `ib-network`, `rdma-network`, `gpu-nic-aligned`",
            default=["gpu", "multi-gpu", "gpu-by-product", "ib-network", "rdma-network", "gpu-nic-aligned"],
            shown_default="all six",
        ),
    ]
    multiGpuCount: Annotated[
        StrictInt,
        Field(
            ge=0,
            le=MAX_DEVICES_PER_CLAIM,
            description=f"expected 0 (every GPU of the largest node) or a whole number from 2 to {MAX_DEVICES_PER_CLAIM}",
        ),
        Setting(
            "Claim and sample keys",
            "GPUs in `multi-gpu`, 2 up to the largest node's (at most 32); `0` means every GPU of the largest node",
            default=0,
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
        Field(description="expected a list of GPU product names"),
        Setting(
            "Claim and sample keys",
            "product names `gpu-by-product` accepts, as `nvidia-smi` prints them; empty (the default): the products of the stack's own GPU platforms (`NVIDIA H200` for `gpu-h200-sxm`, `NVIDIA H100 80GB HBM3` for `gpu-h100-sxm`; `GPU_PRODUCTS` in `components/dra_constants.py`), and without a known one the template is not created. A list that no platform of the stack serves is refused",
            default=[],
            shown_default="the stack's products",
        ),
    ]
    samplePods: Annotated[
        BOOL,
        Setting(
            "Claim and sample keys",
            "create `gpu-workload` and, with InfiniBand, `rdma-workload`",
            default=False,
            shown_default="`false` (dev: `true`)",
        ),
    ]
    sampleGpuImage: Annotated[
        Image,
        Setting(
            "Claim and sample keys",
            "image of `gpu-workload`: has `nvidia-smi`, pinned tag or digest",
            default="nvidia/cuda:13.1.1-runtime-ubuntu24.04",
        ),
    ]
    sampleRdmaImage: Annotated[
        Image,
        Setting(
            "Claim and sample keys",
            "image of `rdma-workload`: has your RDMA tools, pinned tag or digest. Needs `samplePods` and a GPU group with `infiniband: true`",
            default="nvcr.io/nvidia/pytorch:25.01-py3",
        ),
    ]
    userClaimTemplates: Annotated[
        list[UserClaimTemplateInput],
        Setting(
            "Claim and sample keys",
            "your templates, in the v1 shape of [Your own templates](#your-own-templates)",
            default=[],
        ),
    ]
    allowedDeviceClasses: Annotated[
        list[DnsSubdomain],
        Setting(
            "Claim and sample keys",
            "extra DeviceClasses (installed by other drivers) user templates may request, besides the [five the stack knows](#deviceclasses). Needs `userClaimTemplates`",
            default=[],
        ),
    ]
    existingClusterKubeconfig: Annotated[
        StrictStr,
        Field(
            max_length=1 << 20,
            description="expected the kubeconfig (YAML text) of a cluster that already exists, set as a secret, or empty",
        ),
        Setting(
            "Cluster and node keys",
            "[existing-cluster mode](#existing-cluster-mode): the kubeconfig of a cluster the stack does not create, set with `pulumi config set --secret`; a plain value is refused, and its text is never quoted in a message",
            default="",
            shown_type="string, secret",
        ),
    ]
    gpuMetrics: Annotated[
        BOOL,
        Setting(
            "GPU metrics keys",
            "install the DCGM exporter (chart `dcgm-exporter`) in DRA mode on every GPU node, and the dashboard ConfigMap",
            default=True,
        ),
    ]
    dcgmExporterVersion: Annotated[
        ChartVersion,
        Setting(
            "GPU metrics keys",
            "exact chart version, `4.8.x` from `4.8.3`: older charts' DRA mode watches only `resource.k8s.io/v1beta1` ResourceSlices ([NVIDIA/dcgm-exporter#590](https://github.com/NVIDIA/dcgm-exporter/issues/590))",
            default="4.8.3",
        ),
    ]
    dcgmExporterRepository: Annotated[
        ChartRepository,
        Setting(
            "GPU metrics keys",
            "repository or mirror of the dcgm-exporter chart (default `https://nvidia.github.io/dcgm-exporter/helm-charts`), as for `draDriverRepository`",
            default="",
            shown_default="NVIDIA's",
        ),
    ]
    gpuMetricsNamespace: Annotated[
        DnsLabel,
        Setting(
            "GPU metrics keys",
            "namespace of the exporter and the dashboard (a DNS label), created if missing; a namespace Kubernetes owns or another release of the stack (or `claimNamespace`) uses is refused, because the chart names its ConfigMap and Role without the release name",
            default="gpu-metrics",
        ),
    ]
    gpuMetricsProfile: Annotated[
        Literal["", "full", "basic"],
        Field(
            description="allowed: full (DCGM profiling fields on), basic (no DCGM_FI_PROF_* fields), or empty to choose by the GPU groups' platforms"
        ),
        Setting(
            "GPU metrics keys",
            "`full` (DCGM profiling fields `DCGM_FI_PROF_*` on) or `basic` (off); empty picks `basic` when any GPU group is an L40S platform (`gpu-l40s-*`), `full` otherwise",
            default="",
            shown_default="by platform",
        ),
    ]
    gpuMetricsValues: Annotated[
        dict[StrictStr, Any],
        Field(description="expected a map of chart values"),
        Setting(
            "GPU metrics keys",
            "extra chart values, deep-merged last (for example `resources`, `runtimeClassName`); the guarded values and the [refusals below](#gpu-metrics) (keys the chart does not read among them) are refused. Never a secret",
            default={},
        ),
    ]
    prometheusServiceMonitor: Annotated[
        BOOL,
        Setting(
            "GPU metrics keys",
            "your cluster has the Prometheus Operator's CRDs: the exporter release renders a `monitoring.coreos.com/v1` ServiceMonitor. Needs `gpuMetrics`",
            default=False,
        ),
    ]
    kubePrometheusStack: Annotated[
        BOOL,
        Setting(
            "GPU metrics keys",
            "also install kube-prometheus-stack in `monitoring`, its controllers on the system nodes; the exporter's ServiceMonitor is then on. Needs `gpuMetrics`",
            default=False,
        ),
    ]
    kubePrometheusStackVersion: Annotated[
        ChartVersion,
        Setting(
            "GPU metrics keys",
            "exact chart version, `88.5.x` from `88.5.3` (the release whose values the stack's keys were checked against)",
            default="88.5.3",
        ),
    ]
    kubePrometheusStackRepository: Annotated[
        ChartRepository,
        Setting(
            "GPU metrics keys",
            "repository or mirror of the kube-prometheus-stack chart (default `https://prometheus-community.github.io/helm-charts`), as for `draDriverRepository`",
            default="",
            shown_default="prometheus-community's",
        ),
    ]
    queues: Annotated[
        dict[StrictStr, Any],
        Field(description="expected a map (its fields: components/config/queues.py)"),
        Setting(
            "Queue keys",
            "GPU quotas per team, enforced by Kueue v0.17.0, installed only when `teams` is not empty: `teams: [{name, namespace?, localQueue?, cohort?, quotas: [{group, gpus, borrowingLimit?}]}]`, `deviceClasses?` (counted as GPUs: `gpu.nvidia.com`, the default, and `vfio.gpu.nvidia.com`), `claimTemplates?` (the templates each team namespace gets; default every one Kueue can count), `namespace?` (`kueue-system`), `repository?` (a mirror of `oci://registry.k8s.io/kueue/charts`), `featureGates?` (Kueue gate: true or false). Refused: a quota over what its group holds, a group that does not exist, borrowing without a cohort, two teams in one namespace, a team's or Kueue's namespace that Kubernetes owns or another release of the stack or `claimNamespace` uses, settings without teams, a template Kueue cannot count (the reason is named)",
            default={},
        ),
    ]
    priceOverrides: Annotated[
        PriceTableInput,
        Field(
            description="expected a map {gpu?: [{platform, presets, onDemand: {usdPerGpuHour, source, date}, spot?, "
            "note?}], cpu?: [{platform, onDemand: {usdPerVcpuHour, usdPerGibHour, source, date}, spot?, note?}]}"
        ),
        Setting(
            "Cost keys",
            'prices for this stack\'s estimate that replace or add to [`prices/nebius.yaml`](prices/nebius.yaml), in the same shape (`gpu:` and `cpu:` lists). A GPU entry wins for its platform and listed presets, a CPU entry for its platform. Every price needs a `source` (a URL, or a reference such as a contract number) and a quoted `date` (`"YYYY-MM-DD"`). Nothing here reaches Nebius',
            default={},
        ),
    ]


# Keys whose values may be set as secrets (`pulumi config set --secret`, or `secure:` in the stack
# file): their values reach only Helm values, which the stack then marks secret as a whole.
SECRET_CAPABLE_KEYS = ("draDriverValues", "existingClusterKubeconfig")
# Keys whose values are credentials whatever form they are given in: no message quotes any leaf of them.
SECRET_ONLY_KEYS = ("existingClusterKubeconfig",)
