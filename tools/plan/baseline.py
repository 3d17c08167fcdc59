"""The reader of a baseline (`--baseline FILE`, `--base REV`): the JSON plan of the same stack, as a typed model.

A baseline decides what the plan calls unchanged, so a field read loosely is a change hidden: a group record without
`protect` read as unprotected plans a deletion Pulumi refuses, a `"cluster": null` skips the cluster's comparison, a
version `"1.x"` has no minor to compare. So every record the comparison reads is a model here, each field of it
typed and required as `tools.plan` writes it (`tools/plan/changes.py`, `snapshot`), and a document that is not one
is refused naming the JSON path, what was given and what is allowed (BaselineError; the CLI adds the file, exit 2).

A node group's strategy, auto-repair and template (boot disk, resources, labels, taints, GPU settings, capacity), the
cluster's control plane (subnet, etcd size, endpoints) and a claim template's devices are read with the bounds of the
stack's own settings (components/input/: Duration, RepairTimeout, BootDiskGib, LabelKey, the claim models;
`as_the_stack_bounds` takes a setting's type from its model, so no number is copied), a boolean only where the
program writes one (a `dra` of 1e308 was compared as a change that recreates nodes), and a field tools.plan does not
write, at the top level (READER_FIELDS and the records) or in a record, is refused: ignored, a misspelt key compares
against nothing. A release's values and a Kueue object's spec are the chart's and Kueue's: compared leaf by leaf.

Fields added to planFormat 2 later stay optional, each with what its absence means: `objects` (the other
Kubernetes objects, before attack2), a cluster's `parentId` (before issue 39), a release's `namespace` and
`repositoryOpts`, a claim template's `namespace`. A plan written before planFormat 2 (no `planFormat` key) recorded
the rolled-out template fields of each node group only: `LegacyDocument`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from components.config.errors import allowed_rule, described_at, path_text
from components.dra_constants import PROJECT
from components.dra_minors import SUPPORTED_MINORS
from components.input.claim_templates import ClaimConfigInput, ConstraintInput, DeviceRequestInput
from components.input.fields import (
    CONDITION_TYPE_PATTERN,
    CPU_PRESET_PATTERN,
    GPU_PRESET_PATTERN,
    MAX_AUTO_REPAIR_CONDITIONS,
    MAX_CONFIGS,
    MAX_CONSTRAINTS,
    MAX_NODES,
    MAX_REQUESTS,
    BootDiskGib,
    LabelKey,
    LabelValue,
    url_problem,
)
from components.input.node_groups import (
    DURATION_RULE,
    CapacityInput,
    Duration,
    GpuNodeGroupInput,
    RepairTimeout,
    TaintInput,
)
from components.input.stack import StackInput
from components.redaction import names_a_credential
from components.shown import shape, shown
from components.values.node_groups import BOOT_DISK_TYPE, NEBIUS_CONDITION_STATUSES, NEBIUS_TAINT_EFFECTS
from policies.dra_guardrails.planned import chart_name

PLAN_FORMAT = 2
WRITE_AGAIN = "write the baseline again with `python -m tools.plan --format json`"
NOT_A_PLAN = (
    "the baseline is not the JSON of an offline plan made with this version of tools.plan "
    "(no nodeGroups list of {urn, name, template}); write one with `python -m tools.plan --format json`"
)


class BaselineError(ValueError):
    """A `--baseline` document that is not the JSON of an offline plan; the message says what is wrong."""


# Where a Nebius version is MAJOR.MINOR (the control plane) or MAJOR.MINOR[-nebius-node.N] (a node group), as the
# program registers it (components/values/node_groups.py).
# No leading zero: "1.034" is no version the program writes, and read as a number it would equal 1.34. At most
# VERSION_DIGITS digits a number, as the stack's kubernetesVersion takes them (components/config/stack.py,
# VERSION_PATTERN): a longer one is no version the stack could have set, and Python refuses to read a number of over
# 4300 digits (a traceback where the baseline is bad input).
VERSION_DIGITS = 6
_NUMBER = rf"(0|[1-9][0-9]{{0,{VERSION_DIGITS - 1}}})"
CONTROL_PLANE_VERSION = rf"^{_NUMBER}\.{_NUMBER}$"
NODE_GROUP_VERSION = rf"^{_NUMBER}\.{_NUMBER}(-nebius-node\.{_NUMBER})?$"
_LONG_NUMBER = re.compile(rf"[0-9]{{{VERSION_DIGITS + 1},}}")
# A chart version as the DRA driver's charts are published (25.12.0, 0.4.1; SemVer 2.0.0, an optional pre-release).
CHART_VERSION = rf"^{_NUMBER}\.{_NUMBER}\.{_NUMBER}(-[0-9A-Za-z.-]+)?$"


def as_the_stack_bounds(model: type[BaseModel], name: str) -> Any:
    """The type of the stack's own setting `name` of `model` (components/input/), with its bounds and description but
    not its default: a baseline holds what that setting registered, so it is read with the setting's one definition,
    never a copy of its numbers (a baseline's etcdClusterSize 1e308 is no size the stack could have set)."""
    info = model.model_fields[name]
    return Annotated[(info.annotation, *info.metadata, Field(description=info.description), _NOT_A_BOOLEAN)]


def _not_a_boolean(value: Any) -> Any:
    """pydantic takes `true` for the literal 1 even in strict mode (True == 1): the stack's own reader refuses a
    boolean where a number goes before its model runs (components/config/), so the baseline's reader does here."""
    if isinstance(value, bool):
        raise PydanticCustomError("boolean", "a boolean where no boolean goes")
    return value


_NOT_A_BOOLEAN = BeforeValidator(_not_a_boolean)


Text = Annotated[str, Field(strict=True, description="a string")]
Count = Annotated[int, Field(strict=True, ge=0, le=MAX_NODES, description=f"a whole number from 0 to {MAX_NODES}")]
Inputs = Annotated[dict[str, Any], Field(strict=True, description="an object (the registered inputs)")]


class _Record(BaseModel):
    """A resource's record: one of the stack's resources, by URN; no field tools.plan does not write."""

    model_config = ConfigDict(strict=True, extra="forbid")

    urn: Annotated[str, Field(description=f"a URN of this stack (urn:pulumi:<stack>::{PROJECT}::...)")]

    @field_validator("urn")
    @classmethod
    def _of_the_stack(cls, urn: str, info: ValidationInfo) -> str:
        # A URN is urn:pulumi:<stack>::<project>::<type>::<name> (Pulumi's docs, "Resource URNs"): a record of
        # another project's stack of the same name is another stack's.
        prefix = f"urn:pulumi:{(info.context or {})['stack']}::{PROJECT}::"
        if not urn.startswith(prefix):
            raise ValueError(f"is {shown(urn)}, not a URN of this stack ({prefix}...): compare plans of the same stack")
        return urn


class Autoscaling(BaseModel):
    # As `scaling` registers it (components/values/node_groups.py): the two counts only.
    model_config = ConfigDict(strict=True, extra="forbid")

    minNodeCount: Count | None = None
    maxNodeCount: Count | None = None


# A strategy's and a repair condition's durations, read with the stack's own bounds (components/input/node_groups.py):
# a baseline's drainTimeout `99999999999h` is no duration the stack could have set, so no plan wrote it.
DrainTimeout = Annotated[Duration, Field(description=DURATION_RULE.removeprefix("expected "))]
ConditionTimeout = Annotated[RepairTimeout, Field(description=DURATION_RULE.removeprefix("expected "))]
Percent = Annotated[int, Field(strict=True, ge=0, le=100, description="a whole percentage from 0 to 100")]


class Amount(BaseModel):
    """A strategy's maxSurge or maxUnavailable as the program registers it (components/values/node_groups.py,
    `_amount_args`): a node count or a percentage, never both."""

    model_config = ConfigDict(strict=True, extra="forbid")

    count: Count | None = None
    percent: Percent | None = None

    @model_validator(mode="after")
    def _one(self) -> Amount:
        if (self.count is None) == (self.percent is None):
            raise ValueError(
                "holds count and percent, or neither; tools.plan writes one of them ({count} or {percent})"
            )
        return self


class StrategyRecord(BaseModel):
    """A node group's strategy as `strategy_args` registers it: every field set."""

    model_config = ConfigDict(strict=True, extra="forbid")

    maxSurge: Amount
    maxUnavailable: Amount
    drainTimeout: DrainTimeout


class RepairCondition(BaseModel):
    """One auto-repair condition as `auto_repair_args` registers it (a disabled one has no timeout)."""

    model_config = ConfigDict(strict=True, extra="forbid")

    type: Annotated[str, Field(pattern=CONDITION_TYPE_PATTERN, max_length=63, description="a node condition type")]
    status: Annotated[
        Literal[tuple(NEBIUS_CONDITION_STATUSES.values())],  # type: ignore[valid-type]
        Field(description="{}, {} or {}".format(*NEBIUS_CONDITION_STATUSES.values())),
    ]
    timeout: ConditionTimeout | None = None
    disabled: Annotated[bool, Field(description="true or false")] | None = None


class AutoRepairRecord(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")

    conditions: Annotated[list[RepairCondition], Field(max_length=MAX_AUTO_REPAIR_CONDITIONS)]


class _Strict(BaseModel):
    """A part of a record as the program registers it: every field typed, none it does not write, no NaN or infinity."""

    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False, regex_engine="rust-regex")


class Empty(_Strict):
    """A field that is set by being there (`preemptible: {}`, `publicEndpoint: {}`): it holds nothing."""


class BootDiskRecord(_Strict):
    # components/values/node_groups.py, node_template: the one disk type, the group's size in GiB.
    type: Literal[BOOT_DISK_TYPE]  # type: ignore[valid-type]
    sizeGibibytes: BootDiskGib


class ResourcesRecord(_Strict):
    # A GPU group's platform and preset (gpuNodeGroups) or the system group's (systemNodePlatform/Preset): both take
    # PLATFORM_PATTERN; a preset is either's.
    platform: as_the_stack_bounds(StackInput, "systemNodePlatform")  # type: ignore[valid-type]
    preset: Annotated[
        str,
        Field(
            pattern=f"{CPU_PRESET_PATTERN}|{GPU_PRESET_PATTERN}",
            max_length=63,
            description="a preset <C>vcpu-<M>gb or <G>gpu-<C>vcpu-<M>gb",
        ),
    ]


class MetadataRecord(_Strict):
    labels: dict[LabelKey, LabelValue]


class GpuSettingsRecord(_Strict):
    # `gpu_settings`: dra, a JSON boolean (a 1e308 there was compared as a change that recreates the nodes), and the
    # group's driversPreset when it has one.
    dra: Annotated[bool, Field(description="true or false")]
    driversPreset: as_the_stack_bounds(GpuNodeGroupInput, "driversPreset") = None  # type: ignore[valid-type]


class TaintRecord(_Strict):
    key: LabelKey
    value: as_the_stack_bounds(TaintInput, "value")  # type: ignore[valid-type]
    effect: Annotated[
        Literal[tuple(NEBIUS_TAINT_EFFECTS.values())],  # type: ignore[valid-type]
        Field(description=", ".join(NEBIUS_TAINT_EFFECTS.values())),
    ]


class IdRecord(_Strict):
    # A GPU cluster or pricing policy the stack creates: its ID, or the reference to it a plan records.
    id: Text


class ReservationPolicyRecord(_Strict):
    policy: as_the_stack_bounds(CapacityInput, "reservationPolicy")  # type: ignore[valid-type]
    reservationIds: as_the_stack_bounds(CapacityInput, "capacityBlockGroupIds") = None  # type: ignore[valid-type]


class TemplateRecord(_Strict):
    """A node group's template as `node_template` and `gpu_node_template` register it (components/values/
    node_groups.py): every field typed and bounded as the stack's own settings are."""

    bootDisk: BootDiskRecord
    resources: ResourcesRecord
    metadata: MetadataRecord | None = None
    serviceAccountId: as_the_stack_bounds(StackInput, "nodeServiceAccountId") = None  # type: ignore[valid-type]
    gpuSettings: GpuSettingsRecord | None = None
    gpuCluster: IdRecord | None = None
    taints: list[TaintRecord] | None = None
    preemptible: Empty | None = None
    followsSpotPrice: Empty | None = None
    spotPricingPolicy: IdRecord | None = None
    reservationPolicy: ReservationPolicyRecord | None = None


class LegacyTemplateRecord(TemplateRecord):
    """A template as a plan before planFormat 2 recorded it: its rolled-out fields only (LEGACY_TEMPLATE_EXCLUDED)."""

    metadata: None = None
    taints: None = None


_KNOWN_MINORS = ", ".join(SUPPORTED_MINORS)
_VERSION_DIGITS_RULE = f"each number of at most {VERSION_DIGITS} digits"


def _known_minor(version: str) -> str:
    """A version of a minor the stack knows (SUPPORTED_MINORS, the rows of policies/dra_minors.json): the only minors
    its kubernetesVersion takes, so the only ones a plan writes; another (0.34, 1.0, 1.99) would be compared as if the
    cluster ran it, its upgrade path or downgrade advice nonsense."""
    minor = ".".join(version.split("-", 1)[0].split(".")[:2])
    if minor not in SUPPORTED_MINORS:
        raise ValueError(
            f"is {shown(version)}, of minor {shown(minor)}, which is not one tools.plan writes: the stack's "
            f"kubernetesVersion takes the minors {_KNOWN_MINORS} only"
        )
    return version


class NodeGroupRecord(_Record):
    name: Text
    # Pulumi refuses to delete a protected resource: a group left out of the stack then stays.
    protect: Annotated[bool, Field(description="true or false")]
    template: TemplateRecord
    version: Annotated[
        str,
        Field(
            pattern=NODE_GROUP_VERSION,
            description=f"a version MAJOR.MINOR or MAJOR.MINOR-nebius-node.N, {_VERSION_DIGITS_RULE}, of a minor "
            f"{_KNOWN_MINORS}",
        ),
    ]
    fixedNodeCount: Count | None = None
    autoscaling: Autoscaling | None = None
    strategy: StrategyRecord | None = None
    autoRepair: AutoRepairRecord | None = None

    _version = field_validator("version")(_known_minor)


class EndpointsRecord(_Strict):
    # components/cluster.py: a public endpoint when publicEndpoint is true, else none.
    publicEndpoint: Empty | None = None


class ControlPlane(_Strict):
    """The control plane's registered inputs (components/cluster.py), each as the stack's setting bounds it."""

    # Recorded since issue 39, with the cluster's parentId: absent, not known.
    subnetId: as_the_stack_bounds(StackInput, "subnetId") = None  # type: ignore[valid-type]
    etcdClusterSize: as_the_stack_bounds(StackInput, "etcdClusterSize") = None  # type: ignore[valid-type]
    endpoints: EndpointsRecord | None = None

    version: Annotated[
        str,
        Field(
            pattern=CONTROL_PLANE_VERSION,
            description=f"a version MAJOR.MINOR, {_VERSION_DIGITS_RULE}, of a minor {_KNOWN_MINORS}",
        ),
    ]

    _version = field_validator("version")(_known_minor)


class ClusterRecord(_Record):
    name: Text
    controlPlane: ControlPlane
    # Recorded since issue 39: without it, nothing of the cluster but its name and version is known.
    parentId: Text | None = None


# What a release's repository options record of its login: whether one is set, never it (changes.repository_record).
LOGIN_SET = "set"
LOGIN_NONE = "none"
Login = Literal["set", "none"]


class RepositoryOpts(BaseModel):
    """A release's repository options as tools/plan/changes.py's repository_record writes them: never the login, only
    whether one is set (`login`, recorded since the login rows; absent before), and the TLS files' paths."""

    model_config = ConfigDict(strict=True, extra="forbid")

    repo: Text | None = None
    caFile: Text | None = None
    certFile: Text | None = None
    keyFile: Text | None = None
    login: Login | None = None

    @field_validator("repo")
    @classmethod
    def _as_the_stack_takes_it(cls, repo: str) -> str:
        # The stack refuses a chart repository with a login, a query or a token-shaped path segment in its URL (the
        # login goes in chartRepositoryUsername/Password), so no plan records one: a baseline's is a hand edit,
        # maybe a credential, described by its shape only.
        problem = url_problem(repo)
        if problem:
            raise ValueError(
                f"is {json.dumps(shape(repo))}: a repository URL the stack refuses ({problem}), which tools.plan "
                "never writes (a login is recorded only as login: set or none)"
            )
        return repo


class ReleaseRecord(_Record):
    name: Text
    chart: Text
    version: Text
    values: Inputs
    # Both recorded since attack2 and the mirrors: a baseline without them says nothing of either.
    namespace: Text | None = None
    repositoryOpts: RepositoryOpts | None = None

    @field_validator("version")
    @classmethod
    def _bounded(cls, version: str) -> str:
        # Compared number by number for a chart downgrade (changes.release_downgrade): bounded as the stack's chart
        # versions are (components/input/fields.py, CHART_VERSION_PATTERN).
        if _LONG_NUMBER.search(version):
            raise ValueError(
                f"is {shown(version)}, which is not one tools.plan writes: a chart version's numbers have at most "
                f"{VERSION_DIGITS} digits"
            )
        return version


class ClaimDevicesRecord(_Strict):
    """A claim's devices as `claim_template_spec` registers them (components/values/claim_templates.py): the
    requests, constraints and config of the v1 shape, read with the models of the stack's own templates (a count of
    10**30 is no count the stack takes)."""

    requests: Annotated[list[DeviceRequestInput], Field(min_length=1, max_length=MAX_REQUESTS)]
    constraints: Annotated[list[ConstraintInput], Field(max_length=MAX_CONSTRAINTS)] | None = None
    config: Annotated[list[ClaimConfigInput], Field(max_length=MAX_CONFIGS)] | None = None


class ClaimSpecRecord(_Strict):
    devices: ClaimDevicesRecord


class ClaimTemplateSpecRecord(_Strict):
    spec: ClaimSpecRecord


class ClaimTemplateRecord(_Record):
    name: Text
    spec: ClaimTemplateSpecRecord
    namespace: Text | None = None


class ObjectRecord(_Record):
    type: Text
    name: Text | None
    namespace: Text | None
    # Recorded for Kueue's objects since their rows (a quota or cohort changes in place); absent: not known.
    spec: Inputs | None = None


class DraDriverRecord(BaseModel):
    """The DRA driver release as tools/plan/driver_line.py records it: one of the two chart lines, at a version."""

    model_config = ConfigDict(strict=True, extra="forbid")

    chart: Literal["nvidia-dra-driver-gpu", "dra-driver-nvidia-gpu"]
    version: Annotated[str, Field(pattern=CHART_VERSION, description="a chart version MAJOR.MINOR.PATCH")]


def _once(records: Sequence[_Record], key: str) -> None:
    seen: set[str] = set()
    for index, record in enumerate(records):
        if record.urn in seen:
            raise ValueError(f"{key}[{index}].urn {shown(record.urn)} is listed twice; tools.plan lists each once")
        seen.add(record.urn)


# The JSON plan's other keys (tools/plan/report.py, plan_document): for its readers, not for a later comparison, so
# not read. Any key but these and the records is none tools.plan writes: a misspelt `nodeGroup` or `draDrivers`,
# ignored, would compare against nothing.
READER_FIELDS = (
    "ok",
    "reason",
    "tree",
    "edges",
    "findings",
    "passes",
    "disabled",
    "demoted",
    "criticalPath",
    "estimates",
    "cost",
    "rollouts",
    "recreations",
    "changes",
    "minorUpgrade",
    "groupDowngrades",
    "baselineFrom",
    "noBaseline",
    "driverChange",
    "files",
)
_Readers: type[BaseModel] = create_model(  # type: ignore[call-overload]
    "_Readers",
    __config__=ConfigDict(strict=True, extra="forbid"),
    **{name: (Any, Field(default=None, description="(for readers, not compared)")) for name in READER_FIELDS},
)


class _Document(_Readers):  # type: ignore[misc,valid-type]
    stack: Text
    # A failed plan's message (refused apart: its empty lists would read as "nothing changes"), else null.
    error: Annotated[str, Field(min_length=1)] | None = Field(
        default=None, description="null, or the message of a plan that failed"
    )


class LegacyGroupRecord(_Record):
    """A node group as a plan before planFormat 2 recorded it: its rolled-out template fields."""

    model_config = ConfigDict(strict=True, extra="allow")

    name: Text | None = None
    template: LegacyTemplateRecord


class LegacyDocument(_Document):
    nodeGroups: list[LegacyGroupRecord]
    # Records of planFormat 2 that a plan before it did not write: not read (a hand-trimmed baseline may keep them).
    cluster: Any = None
    releases: Any = None
    claimTemplates: Any = None
    driverRoot: Any = None
    objects: Any = None
    draDriver: Any = None

    @model_validator(mode="after")
    def _once(self) -> LegacyDocument:
        _once(self.nodeGroups, "nodeGroups")
        return self


class Format2Document(_Document):
    planFormat: int
    # null only for a stack on an existing cluster (existingClusterKubeconfig), which creates no Nebius node group.
    cluster: ClusterRecord | None = Field(
        description="the cluster's record, or null for a stack on an existing cluster"
    )
    nodeGroups: list[NodeGroupRecord] = Field(description="a list of the node groups' records")
    releases: list[ReleaseRecord] = Field(description="a list of the Helm releases' records")
    claimTemplates: list[ClaimTemplateRecord] = Field(description="a list of the claim templates' records")
    driverRoot: Annotated[str, Field(pattern=r"^/", description="the DRA driver's root, an absolute path")]
    # Recorded since attack2: without them, the deletion of a namespace or a Pod is not known.
    objects: list[ObjectRecord] | None = None
    # Recorded since issue 26: without it, the DRA driver's chart line is not compared.
    draDriver: DraDriverRecord | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Format2Document:
        if self.cluster is None and self.nodeGroups:
            raise ValueError(
                f"cluster is null (a stack on an existing cluster) but nodeGroups lists {len(self.nodeGroups)} Nebius "
                "node group(s), which only a stack that creates its cluster has; tools.plan writes the cluster's record"
            )
        for key in ("nodeGroups", "releases", "claimTemplates", "objects"):
            _once(getattr(self, key) or [], key)
        return self


@dataclass(frozen=True)
class Baseline:
    """The baseline's records by URN; `legacy` when it was written before planFormat 2 (what it lacks is unknown)."""

    legacy: bool
    cluster: Mapping[str, Any] | None
    groups: Mapping[str, Mapping[str, Any]]
    releases: Mapping[str, Mapping[str, Any]]
    claim_templates: Mapping[str, Mapping[str, Any]]
    driver_root: str | None
    # None when the baseline did not record them (before attack2): their deletions are not known.
    objects: Mapping[str, Mapping[str, Any]] | None = None
    # The DRA driver release's {chart, version}; None when that plan recorded none (made before issue 26).
    dra_driver: Mapping[str, str] | None = None


def _by_urn(records: Any) -> dict[str, Mapping[str, Any]]:
    return {record["urn"]: record for record in records or []}


def _record_name(document: Any, location: tuple[Any, ...]) -> str:
    """`nodeGroups[2]` and what names that record in the file (its Nebius name or URN), for a field it lacks."""
    record: Any = document
    for part in location:
        try:
            record = record[part]
        except (KeyError, IndexError, TypeError):
            return path_text(location)
    named = record.get("name") or record.get("urn") if isinstance(record, Mapping) else None
    return f"{path_text(location)} ({shown(named)})" if isinstance(named, str) else path_text(location)


def _problem(error: Mapping[str, Any], document: Any, model: type[BaseModel]) -> str:
    """One pydantic error in the project's words: the JSON path, what was given and what tools.plan writes there."""
    location = tuple(error["loc"])
    kind = error["type"]
    if kind == "value_error":
        message = str((error.get("ctx") or {}).get("error", error["msg"]))
        return f"{path_text(location)} {message}" if location else message
    # The stack's own types say what a key takes ("expected ...", "allowed: ..."); here it is what tools.plan writes.
    rule = allowed_rule(kind, error.get("ctx") or {}, described_at(model, list(location)))
    rule = rule.removeprefix("expected ").removeprefix("allowed: ")
    if kind == "missing":
        record = _record_name(document, location[:-1]) if len(location) > 1 else "the baseline"
        return f"{record} has no {location[-1]}; tools.plan writes {rule} there, so the comparison cannot do without it"
    if kind == "extra_forbidden":
        written = described_at(model, list(location)).parent_fields
        where = f"; it writes {', '.join(sorted(written))}" if written else ""
        return f"{path_text(location)} is a field tools.plan does not write there{where}"
    field = location[-1] if location else None
    if isinstance(field, str) and (field == "login" or names_a_credential(field)):
        # A login field records only whether a login is set: whatever else a hand-edited baseline holds there may be
        # the login itself, so it is described, never quoted.
        return f"{path_text(location)} is a value it may not hold (not shown: it may be a credential); {rule}"
    return f"{path_text(location)} is {shown(error.get('input'))}; tools.plan writes {rule} there"


def _validated(model: type[_Document], document: Any, stack: str) -> _Document:
    try:
        return model.model_validate(document, context={"stack": stack})
    except ValidationError as invalid:
        problems = [_problem(error, document, model) for error in invalid.errors(include_url=False)]
        shown_problems = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        raise BaselineError(
            f"the baseline is not the JSON of an offline plan as tools.plan writes it: {shown_problems}; {WRITE_AGAIN}"
        ) from None


def _driver_agrees(document: Mapping[str, Any]) -> None:
    """The `draDriver` record is the DRA driver release's chart and version (driver_line.driver_snapshot): one that
    no release of the baseline has would plan a driver move that its releases do not show (99.0.0 -> 25.12.0)."""
    driver = document.get("draDriver")
    if driver is None:
        return
    versions = [release["version"] for release in document["releases"] if chart_name(release) == driver["chart"]]
    if driver["version"] not in versions:
        raise BaselineError(
            f"the baseline's draDriver is {shown(driver['chart'])} {shown(driver['version'])}, but its releases have "
            f"{'that chart at ' + ', '.join(shown(v) for v in versions) if versions else 'no release of that chart'}: "
            f"tools.plan writes the DRA driver release's own chart and version there; {WRITE_AGAIN}"
        )


def read_baseline(document: Any, stack: str) -> Baseline:
    """The JSON plan of `stack` as a Baseline; BaselineError when it is none."""
    if not isinstance(document, Mapping):
        raise BaselineError(NOT_A_PLAN)
    named = document.get("stack")
    if not isinstance(named, str):
        raise BaselineError(
            f'the baseline has no "stack" name, so it cannot be known to be a plan of {stack}; '
            f"write one with `python -m tools.plan --stack {stack} --format json`"
        )
    if named != stack:
        raise BaselineError(
            f"the baseline is a plan of stack {shown(named)}, not of {stack}: compare plans of the same stack"
        )
    failed = document.get("error")
    if isinstance(failed, str) and failed:
        raise BaselineError(
            f"the baseline is a plan of {stack} that failed ({shown(failed)}), so it lists "
            "no node group: compare with a plan that ran"
        )
    if not isinstance(document.get("nodeGroups"), list):
        raise BaselineError(NOT_A_PLAN)
    # A plan written before planFormat 2 has no planFormat at all (42f12c6 added it as 2); any other value is a format
    # this version cannot read, whose fields it would misread as changes.
    legacy = "planFormat" not in document
    plan_format = document.get("planFormat")
    if not legacy and not (type(plan_format) is int and plan_format == PLAN_FORMAT):
        raise BaselineError(
            f"the baseline's planFormat is {shown(plan_format)}; this tools.plan reads planFormat "
            f"{PLAN_FORMAT} (the integer), or a plan written before planFormat existed (no planFormat key): "
            f"{WRITE_AGAIN}"
        )
    if legacy:
        _validated(LegacyDocument, document, stack)
        return Baseline(True, None, _by_urn(document["nodeGroups"]), {}, {}, None)
    _validated(Format2Document, document, stack)
    _driver_agrees(document)
    return Baseline(
        legacy=False,
        cluster=document["cluster"],
        groups=_by_urn(document["nodeGroups"]),
        releases=_by_urn(document["releases"]),
        claim_templates=_by_urn(document["claimTemplates"]),
        driver_root=document["driverRoot"],
        objects=None if document.get("objects") is None else _by_urn(document["objects"]),
        dra_driver=document.get("draDriver"),
    )
