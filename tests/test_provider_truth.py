"""Every input the program sends to Nebius, checked against what the installed pulumi-nebius SDK documents.

The SDK (a bridge of Nebius's Terraform provider) documents each enumerated field in the
docstring of its input property ("#### Supported values / Possible values: - `NO_SCHEDULE`
..."). This module reads those lists from the installed package, walks every input of every
`nebius:` resource the real program registers (engine camelCase names mapped back to the
SDK's `*Args` classes and their Python names), and fails on a value the API does not take,
on a field the SDK does not know, or on a required field left out. No field is named in the
walk: a field the program starts sending tomorrow is checked the same way.

What the docstrings do not state as a list (etcd sizes, name lengths, node counts, a
taint's value, version formats) is in `LIMITS`, one entry per field with its source; every
registered input is checked against it too. The config layer refuses bad values with a
message first; this is the safety net at the resource level.
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import pulumi
import pulumi_nebius
import pytest
import yaml
from pulumi import _types as pulumi_types

from components.config.stack_file import load_stack_config
from components.dra_constants import OPERANDS_OFF_LABEL, OPERATOR_DRIVER_ROOT, TAINT_EFFECTS
from tests.helpers import STACKS
from tools.plan.mock_engine import ProgramRun, run_program

PACKAGE = "nebius:"
CLUSTER = "nebius:index/mk8sV1Cluster:Mk8sV1Cluster"
NODE_GROUP = "nebius:index/mk8sV1NodeGroup:Mk8sV1NodeGroup"
GPU_CLUSTER = "nebius:index/computeV1GpuCluster:ComputeV1GpuCluster"
PRICING_POLICY = "nebius:index/billingV1PricingPolicy:BillingV1PricingPolicy"

# ---------------------------------------------------------------------------------------------
# What the installed SDK documents: resource types, their input classes, field names and enums.
# ---------------------------------------------------------------------------------------------

_SPAN = re.compile(r"<span[^>]*>(.*?)</span>", re.S)
_BULLET = re.compile(r"^\s*-\s+`([^`]+)`")
_QUOTED = re.compile(r"`([^`]+)`")
POSSIBLE_VALUES = "Possible values:"


def documented_values(doc: str | None) -> frozenset[str] | None:
    """The values a docstring lists after "Possible values:" (bullets, or inline on that line); None if none.

    The generator writes each value as a bullet "- `NO_SCHEDULE`" (sometimes followed by a
    description, which may continue on indented lines), or inline inside per-language
    `<span>` markup ("Possible values: <span ...>`16`</span>").
    """
    if not doc or POSSIBLE_VALUES not in doc:
        return None
    values: set[str] = set()
    for section in _SPAN.sub(r"\1", doc).split(POSSIBLE_VALUES)[1:]:
        first_line, _, rest = section.partition("\n")
        values.update(_QUOTED.findall(first_line))
        for line in rest.splitlines():
            if line.strip().startswith("####"):
                break
            bullet = _BULLET.match(line)
            if bullet:
                values.add(bullet.group(1))
    return frozenset(values)


def accepted_values(documented: frozenset[str]) -> frozenset[str]:
    """The documented values a request may carry: `*_UNSPECIFIED` is the protobuf zero value, meaning "not set"."""
    return frozenset(value for value in documented if not value.endswith("_UNSPECIFIED"))


@cache
def resource_arg_classes() -> dict[str, type]:
    """Resource type token -> the SDK's `*Args` input class, from the module table the package registers."""
    source = inspect.getsource(pulumi_nebius)
    match = re.search(r'resource_modules="""(.*?)"""', source, re.S)
    assert match, "pulumi_nebius/__init__.py no longer registers its resource modules the way this test reads them"
    classes: dict[str, type] = {}
    for module in json.loads(match.group(1)):
        for token, class_name in module["classes"].items():
            classes[token] = getattr(pulumi_nebius, f"{class_name}Args")
    return classes


def _is_input_wrapper(member: Any) -> bool:
    """The parts of `pulumi.Input[T]` and `Optional[T]` that are not T: None, Awaitable[T], Output[T]."""
    origin = typing.get_origin(member) or member
    return (
        member is type(None) or origin is Awaitable or (inspect.isclass(origin) and issubclass(origin, pulumi.Output))
    )


def _strip(annotation: Any) -> Any:
    """The payload of an input annotation, with Optional and Input (Awaitable, Output) unions removed."""
    if typing.get_origin(annotation) is typing.Union:
        members = [member for member in typing.get_args(annotation) if not _is_input_wrapper(member)]
        if len(members) == 1:
            return _strip(members[0])
    return annotation


@dataclass(frozen=True)
class Field:
    owner: type
    python_name: str
    engine_name: str
    annotation: Any

    @property
    def doc(self) -> str | None:
        prop = inspect.getattr_static(self.owner, self.python_name, None)
        return prop.fget.__doc__ if isinstance(prop, property) and prop.fget else None

    @property
    def documented(self) -> frozenset[str] | None:
        return documented_values(self.doc)

    @property
    def where(self) -> str:
        return f"{self.owner.__name__}.{self.python_name}"


@cache
def fields_of(args_class: type) -> dict[str, Field]:
    """Engine (camelCase) name -> field, for one SDK input class."""
    to_engine = pulumi_types.input_type_py_to_pulumi_names(args_class)
    annotations = pulumi_types.input_type_types(args_class)
    return {
        engine: Field(args_class, python, engine, _strip(annotations[engine])) for python, engine in to_engine.items()
    }


@cache
def required_of(args_class: type) -> frozenset[str]:
    """Engine names of the fields the input class's constructor requires (no default)."""
    to_engine = pulumi_types.input_type_py_to_pulumi_names(args_class)
    parameters = inspect.signature(args_class.__init__).parameters.values()
    return frozenset(
        to_engine[p.name] for p in parameters if p.default is inspect.Parameter.empty and p.name in to_engine
    )


def _container(annotation: Any) -> tuple[str, Any]:
    """("object", class) for an input class, ("list", item) / ("map", value) for collections, ("scalar", type)."""
    if inspect.isclass(annotation) and pulumi_types.is_input_type(annotation):
        return "object", annotation
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (Sequence, list, typing.Sequence) and args:
        return "list", _strip(args[0])
    if origin in (Mapping, dict, typing.Mapping) and len(args) == 2:
        return "map", _strip(args[1])
    return "scalar", annotation


@dataclass(frozen=True)
class Leaf:
    """One value the program sends: its engine path (`template.taints[].effect`) and the SDK field it fills."""

    path: str
    field: Field
    value: Any


def walk(inputs: Mapping[str, Any], args_class: type, prefix: str = "") -> Iterator[Leaf | str]:
    """Every field set in `inputs` as a Leaf (maps are leaves), and a problem string for anything the SDK lacks."""
    known = fields_of(args_class)
    for missing in sorted(required_of(args_class) - set(inputs)):
        yield f"{prefix}{missing} is required by {args_class.__name__} but not sent"
    for engine_name, value in inputs.items():
        path = f"{prefix}{engine_name}"
        field = known.get(engine_name)
        if field is None:
            yield f"{path} is not a field of {args_class.__name__} (the SDK knows {', '.join(sorted(known))})"
            continue
        kind, inner = _container(field.annotation)
        if kind == "object" and isinstance(value, Mapping):
            yield Leaf(path, field, value)
            yield from walk(value, inner, f"{path}.")
        elif kind == "list" and isinstance(value, list):
            item_kind, item_class = _container(inner)
            for item in value:
                if item_kind == "object" and isinstance(item, Mapping):
                    yield from walk(item, item_class, f"{path}[].")
                else:
                    yield Leaf(f"{path}[]", field, item)
        else:
            yield Leaf(path, field, value)


# ---------------------------------------------------------------------------------------------
# Limits the docstrings state in prose, or that Nebius documents elsewhere: one table.
# ---------------------------------------------------------------------------------------------

FACTS = "Nebius API rules (shared/reference/facts.md, from docs.nebius.com and nebius/terraform-provider-nebius docs)"
SDK = "pulumi-nebius 0.6.73 docstring of "
SOLUTIONS = (
    "nebius/nebius-solutions-library soperator/modules/k8s/k8s_ng_workers_v2.tf sends a node group "
    'version = "${var.k8s_version}-nebius-node.${var.node_group_version}"'
)
MAJOR_MINOR = re.compile(r"^\d+\.\d+$")
NODE_VERSION = re.compile(r"^\d+\.\d+(-nebius-node\.\d+)?$")


@dataclass(frozen=True)
class Limit:
    rule: str
    holds: Callable[[Any], bool]
    source: str
    # For limits an SDK docstring states: words that docstring must still contain.
    quote: str | None = None


def _length(low: int, high: int) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, str) and low <= len(value) <= high


def _whole_in(low: int, high: int) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, (int, float)) and int(value) == value and low <= value <= high


def _matches(pattern: re.Pattern[str]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, str) and bool(pattern.match(value))


def _labels_kept(value: Any) -> bool:
    return isinstance(value, Mapping) and not any("kubernetes.io" in key or "k8s.io" in key for key in value)


NAME = Limit("1-63 characters", _length(1, 63), FACTS)
NODE_COUNT = Limit("a whole number 0-100", _whole_in(0, 100), FACTS)
# "Duration as a string: possibly signed sequence of decimal numbers, each with optional fraction and a unit
# suffix ... Valid time units are ns, us (or µs), ms, s, m, h, d." A negative drain or repair time means nothing.
DURATION = re.compile(r"^(0|([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h|d))+)$")
DURATION_LIMIT = "a duration such as 30m, never negative"
PERCENT = Limit(
    "a whole percentage 0-100",
    _whole_in(0, 100),
    f"{SDK}Mk8sV1NodeGroupStrategyArgs (a percentage of the desired number of nodes)",
)

# (resource type, engine path) -> limit. The paths are the walk's: `[]` marks list items.
LIMITS: Mapping[tuple[str, str], Limit] = {
    (CLUSTER, "name"): NAME,
    (NODE_GROUP, "name"): NAME,
    (CLUSTER, "controlPlane.etcdClusterSize"): Limit(
        "0, 1 or 3", lambda value: value in (0, 1, 3), f"{FACTS}; {SDK}Mk8sV1ClusterControlPlaneArgs.etcd_cluster_size"
    ),
    (CLUSTER, "controlPlane.version"): Limit(
        "MAJOR.MINOR, such as 1.34",
        _matches(MAJOR_MINOR),
        f"{SDK}Mk8sV1ClusterControlPlaneArgs.version",
        quote="only acceptable format is `<major>.<minor>`",
    ),
    (NODE_GROUP, "version"): Limit(
        "MAJOR.MINOR or MAJOR.MINOR-nebius-node.N",
        _matches(NODE_VERSION),
        f"{SDK}Mk8sV1NodeGroupArgs.version (MAJOR.MINOR); {SOLUTIONS}",
        quote="`<major>.<minor>`",
    ),
    (NODE_GROUP, "fixedNodeCount"): NODE_COUNT,
    (NODE_GROUP, "autoscaling.minNodeCount"): NODE_COUNT,
    (NODE_GROUP, "autoscaling.maxNodeCount"): NODE_COUNT,
    (NODE_GROUP, "template.taints[].value"): Limit(
        "a non-empty value", lambda value: isinstance(value, str) and value != "", FACTS
    ),
    (NODE_GROUP, "template.metadata.labels"): Limit(
        "no key containing kubernetes.io or k8s.io (Nebius ignores those labels)", _labels_kept, FACTS
    ),
    (NODE_GROUP, "strategy.drainTimeout"): Limit(
        DURATION_LIMIT,
        _matches(DURATION),
        f"{SDK}Mk8sV1NodeGroupStrategyArgs.drain_timeout",
        quote="Duration as a string: possibly signed sequence of decimal numbers",
    ),
    (NODE_GROUP, "autoRepair.conditions[].timeout"): Limit(
        DURATION_LIMIT,
        _matches(DURATION),
        f"{SDK}Mk8sV1NodeGroupAutoRepairConditionArgs.timeout",
        quote="Duration as a string: possibly signed sequence of decimal numbers",
    ),
    (NODE_GROUP, "strategy.maxSurge.count"): NODE_COUNT,
    (NODE_GROUP, "strategy.maxUnavailable.count"): NODE_COUNT,
    (NODE_GROUP, "strategy.maxSurge.percent"): PERCENT,
    (NODE_GROUP, "strategy.maxUnavailable.percent"): PERCENT,
    (NODE_GROUP, "template.reservationPolicy.reservationIds[]"): Limit(
        "a capacity block group ID", _matches(re.compile(r"^[a-z][a-z0-9]*-[a-z0-9]+$")), FACTS
    ),
    (PRICING_POLICY, "pricing.maxPriceV1.maxPrice"): Limit(
        "a decimal string with at most 3 decimals",
        _matches(re.compile(r"^[0-9]+(\.[0-9]{1,3})?$")),
        f"{SDK}BillingV1PricingPolicyPricingMaxPriceV1Args.max_price",
        quote="Per-GPU hourly limit in USD, decimal string 3 digits precision",
    ),
}


# ---------------------------------------------------------------------------------------------
# Rules across fields: "Cannot be set alongside" (read from every docstring), and the few others.
# ---------------------------------------------------------------------------------------------

_ALONGSIDE = re.compile(r"Cannot be set alongside(.*?)\.\*")


def _normalized(name: str) -> str:
    return name.replace("_", "").lower()


def alongside_names(doc: str | None) -> list[str]:
    """The field names after "Cannot be set alongside", in whichever language's spelling the generator chose."""
    match = _ALONGSIDE.search(" ".join(_SPAN.sub(r"\1", doc or "").split()))
    return [part.strip() for part in re.split(r",| or ", match.group(1)) if part.strip()] if match else []


@cache
def exclusive_fields(args_class: type) -> dict[str, frozenset[str]]:
    """Engine name -> the engine names its docstring says it "cannot be set alongside".

    A name the class lacks is skipped: the SDK's `...Sensitive...` classes share docstrings with
    their plain twins, which have a field more.
    """
    fields = fields_of(args_class)
    by_normal = {_normalized(field.python_name): engine for engine, field in fields.items()}
    exclusive: dict[str, frozenset[str]] = {}
    for engine, field in fields.items():
        names = alongside_names(field.doc)
        if names:
            exclusive[engine] = frozenset(by_normal[n] for n in map(_normalized, names) if n in by_normal)
    return exclusive


def exclusion_problems(inputs: Mapping[str, Any], args_class: type, prefix: str = "") -> Iterator[str]:
    """Every pair of fields set together that a docstring says cannot be, at any depth."""
    for engine, others in exclusive_fields(args_class).items():
        for other in sorted(others & set(inputs)):
            if engine in inputs and engine < other:
                yield f"{prefix}{engine} and {prefix}{other} are both set, but {args_class.__name__} takes only one"
    for engine, value in inputs.items():
        field = fields_of(args_class).get(engine)
        if field is None:
            continue
        kind, inner = _container(field.annotation)
        if kind == "object" and isinstance(value, Mapping):
            yield from exclusion_problems(value, inner, f"{prefix}{engine}.")
        elif kind == "list" and isinstance(value, list):
            item_kind, item_class = _container(inner)
            for item in value:
                if item_kind == "object" and isinstance(item, Mapping):
                    yield from exclusion_problems(item, item_class, f"{prefix}{engine}[].")


def _amount(inputs: Mapping[str, Any], key: str) -> float | None:
    amount = field_at(inputs, "strategy", key)
    if not isinstance(amount, Mapping):
        return None
    return amount.get("count", amount.get("percent"))


def field_at(value: Any, *path: str) -> Any:
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


@dataclass(frozen=True)
class Rule:
    """A rule across fields: `holds(inputs)` for one resource's inputs, with its source and a quote to keep true."""

    rule: str
    holds: Callable[[Mapping[str, Any]], bool]
    source: str
    quote: tuple[type, str, str] | None = None  # (SDK class, python field, words its docstring must still contain)


RULES: Mapping[str, tuple[Rule, ...]] = {
    NODE_GROUP: (
        Rule(
            "strategy.maxSurge and strategy.maxUnavailable are not both 0",
            lambda inputs: not (_amount(inputs, "maxSurge") == 0 and _amount(inputs, "maxUnavailable") == 0),
            f"{SDK}Mk8sV1NodeGroupStrategyArgs.max_surge",
            (pulumi_nebius.Mk8sV1NodeGroupStrategyArgs, "max_surge", "This value cannot be 0 if"),
        ),
        Rule(
            "template.reservationPolicy FORBID takes no reservationIds",
            lambda inputs: (
                not (
                    field_at(inputs, "template", "reservationPolicy", "policy") == "FORBID"
                    and field_at(inputs, "template", "reservationPolicy", "reservationIds")
                )
            ),
            f"{SDK}Mk8sV1NodeGroupTemplateReservationPolicyArgs.policy",
            (pulumi_nebius.Mk8sV1NodeGroupTemplateReservationPolicyArgs, "policy", "It's an error to provide"),
        ),
        Rule(
            "a preemptible template takes no reservationPolicy",
            lambda inputs: (
                not (
                    "preemptible" in (inputs.get("template") or {})
                    and "reservationPolicy" in (inputs.get("template") or {})
                )
            ),
            "docs.nebius.com/kubernetes/node-groups/reservations: preemptible node groups do not support reservations",
        ),
        Rule(
            "followsSpotPrice and spotPricingPolicy only on a preemptible template",
            lambda inputs: (
                "preemptible" in (inputs.get("template") or {})
                or not {"followsSpotPrice", "spotPricingPolicy"} & set(inputs.get("template") or {})
            ),
            f"{SDK}Mk8sV1NodeGroupTemplateArgs.follows_spot_price ('The preemptible VM accepts the current spot price')",
            (pulumi_nebius.Mk8sV1NodeGroupTemplateArgs, "follows_spot_price", "The preemptible VM accepts"),
        ),
    ),
}


def resolve(token: str, path: str) -> Field:
    """The SDK field an engine path names, so a table entry cannot point at a field the SDK lacks."""
    args_class = resource_arg_classes()[token]
    parts = path.replace("[]", "").split(".")
    field = None
    for index, part in enumerate(parts):
        field = fields_of(args_class)[part]
        if index < len(parts) - 1:
            kind, inner = _container(field.annotation)
            if kind == "list":
                kind, inner = _container(inner)
            assert kind == "object", f"{path}: {part} is not an object"
            args_class = inner
    assert field is not None
    return field


# ---------------------------------------------------------------------------------------------
# The check itself.
# ---------------------------------------------------------------------------------------------


def problems_of(resource_type: str, name: str, inputs: Mapping[str, Any]) -> list[str]:
    """Everything in one resource's inputs that the SDK's enums or the LIMITS table refuse."""
    args_class = resource_arg_classes().get(resource_type)
    if args_class is None:
        return [f"{name}: {resource_type} is not a resource of the installed pulumi-nebius"]
    problems = []
    for leaf in walk(inputs, args_class):
        if isinstance(leaf, str):
            problems.append(f"{name} ({resource_type}): {leaf}")
            continue
        documented = leaf.field.documented
        if documented is not None and isinstance(leaf.value, str) and leaf.value not in accepted_values(documented):
            problems.append(
                f"{name}: {leaf.path} = {leaf.value!r}, but {leaf.field.where} takes "
                f"{', '.join(sorted(accepted_values(documented)))} (the SDK's documented values)"
            )
        limit = LIMITS.get((resource_type, leaf.path))
        if limit is not None and not limit.holds(leaf.value):
            problems.append(f"{name}: {leaf.path} = {leaf.value!r}, but it must be {limit.rule} ({limit.source})")
    problems += [f"{name}: {problem} (the SDK's docstring)" for problem in exclusion_problems(inputs, args_class)]
    problems += [
        f"{name}: {rule.rule} does not hold ({rule.source})"
        for rule in RULES.get(resource_type, ())
        if not rule.holds(inputs)
    ]
    return problems


def run_problems(run: ProgramRun) -> list[str]:
    return [
        problem
        for resource in run.resources
        if resource.type.startswith(PACKAGE)
        for problem in problems_of(resource.type, resource.name, resource.inputs)
    ]


def enum_leaves(run: ProgramRun) -> set[str]:
    """The paths the walk checked against a documented enum: proof it reached them."""
    return {
        f"{resource.type.rsplit(':', 1)[-1]}.{leaf.path}"
        for resource in run.resources
        if resource.type.startswith(PACKAGE)
        for leaf in walk(resource.inputs, resource_arg_classes()[resource.type])
        if isinstance(leaf, Leaf) and leaf.field.documented
    }


# ---------------------------------------------------------------------------------------------
# Configs beyond the stack files: every mode the program can put on a Nebius resource.
# ---------------------------------------------------------------------------------------------


def _groups(stack: str) -> list[dict[str, Any]]:
    return yaml.safe_load(load_stack_config(stack)["nebius-dra:gpuNodeGroups"])


def _driverless(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{key: value for key, value in group.items() if key != "driversPreset"} for group in groups]


def _tainted(groups: list[dict[str, Any]], effect: str) -> list[dict[str, Any]]:
    taint = {"key": "example.com/dedicated", "value": "gpu", "effect": effect}
    return [{**group, "taints": [*group.get("taints", []), taint]} for group in groups]


def _infiniband(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """GPU clusters take 8-GPU presets only."""
    return [{**group, "infiniband": True, "preset": "8gpu-128vcpu-1600gb"} for group in groups]


def _autoscaled(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    scaled = [{key: value for key, value in group.items() if key != "fixedNodeCount"} for group in groups]
    return [{**group, "autoscaling": {"min": 1, "max": 100}} for group in scaled]


def _mixed(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first group left to the GPU Operator, the others on a preset with the Operator's operands off."""
    first, *rest = groups
    kept = [{**group, "labels": {**group.get("labels", {}), OPERANDS_OFF_LABEL: "false"}} for group in rest]
    return [*_driverless([first]), *kept]


def _with(groups: list[dict[str, Any]], **fields: Any) -> list[dict[str, Any]]:
    return [{**group, **fields} for group in groups]


RESERVED = {"type": "reserved", "capacityBlockGroupIds": ["capacityblockgroup-e00aaaa", "capacityblockgroup-e00bbbb"]}
ROLLOUT = {"maxSurge": "25%", "maxUnavailable": "50%", "drainTimeout": "1h30m"}
REPAIR = [
    {"type": "NebiusGPUError", "status": "True", "timeout": "10m"},
    {"type": "Ready", "status": "Unknown", "disabled": True},
    {"type": "NebiusBootDiskIOError", "status": "True", "timeout": "30s"},
]


def generated_configs(stack: str) -> dict[str, dict[str, Any]]:
    """Named changes to a stack: structured values as Python data, scalars as strings."""
    groups = _groups(stack)
    fabric = {"infinibandFabric": "fabric-3"}
    configs: dict[str, dict[str, Any]] = {
        "operator": {"gpuNodeGroups": _driverless(groups)},
        "infiniband": {"gpuNodeGroups": _infiniband(groups), **fabric},
        "autoscaling": {"gpuNodeGroups": _autoscaled(groups)},
        "node-version": {"kubernetesVersion": "1.34-nebius-node.2"},
        "everything": {
            "gpuNodeGroups": _autoscaled(_infiniband(_driverless(_tainted(groups, "NoExecute")))),
            "kubernetesVersion": "1.35-nebius-node.7",
            "etcdClusterSize": "3",
            **fabric,
        },
    }
    configs |= {
        "reserved-strict": {"gpuNodeGroups": _with(groups, capacity=RESERVED)},
        "reserved-auto": {"gpuNodeGroups": _with(groups, capacity={"type": "reserved", "reservationPolicy": "AUTO"})},
        "on-demand-forbid": {
            "gpuNodeGroups": _with(groups, capacity={"type": "on-demand", "reservationPolicy": "FORBID"})
        },
        "spot": {"gpuNodeGroups": _with(groups, capacity={"type": "spot"})},
        "spot-max-price": {"gpuNodeGroups": _with(groups, capacity={"type": "spot", "maxPricePerGpuHour": "3.515"})},
        "rollout-and-repair": {
            "gpuNodeGroups": _with(groups, strategy=ROLLOUT, autoRepair=REPAIR),
            "systemNodeStrategy": {"maxSurge": "50%", "maxUnavailable": 1, "drainTimeout": "0"},
            "systemNodeAutoRepair": REPAIR[1:2],
        },
    }
    for effect in TAINT_EFFECTS:
        configs[f"taint-{effect}"] = {"gpuNodeGroups": _tainted(groups, effect)}
        configs[f"operator-taint-{effect}"] = {"gpuNodeGroups": _driverless(_tainted(groups, effect))}
    if len(groups) > 1:
        configs["mixed"] = {
            "gpuNodeGroups": _tainted(_mixed(groups), "NoSchedule"),
            "draDriverRoot": OPERATOR_DRIVER_ROOT,
        }
    return configs


def run_with(stack: str, changes: Mapping[str, Any]) -> ProgramRun:
    config = dict(load_stack_config(stack))
    for key, value in changes.items():
        config[f"nebius-dra:{key}"] = value if isinstance(value, str) else json.dumps(value)
    return run_program(stack, config=config)


GENERATED = [(stack, name) for stack in STACKS for name in generated_configs(stack)]


@pytest.fixture(scope="module")
def generated_runs() -> dict[tuple[str, str], ProgramRun]:
    runs = {}
    for stack, name in GENERATED:
        run = run_with(stack, generated_configs(stack)[name])
        assert run.error is None, f"{stack}/{name}: {run.error}"
        runs[(stack, name)] = run
    return runs


# ---------------------------------------------------------------------------------------------
# Tests.
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", STACKS)
def test_every_nebius_input_of_the_stack_is_what_the_sdk_documents(stack_runs, stack):
    assert run_problems(stack_runs[stack]) == []


@pytest.mark.parametrize(("stack", "name"), GENERATED, ids=[f"{stack}-{name}" for stack, name in GENERATED])
def test_every_nebius_input_of_a_generated_config_is_what_the_sdk_documents(generated_runs, stack, name):
    run = generated_runs[(stack, name)]
    assert any(r.type.startswith(PACKAGE) for r in run.resources)
    assert run_problems(run) == []


def test_the_walk_reaches_the_enumerated_fields_the_program_sets(generated_runs):
    reached = set().union(*(enum_leaves(run) for run in generated_runs.values()))
    assert {
        "Mk8sV1NodeGroup.template.taints[].effect",
        "Mk8sV1NodeGroup.template.bootDisk.type",
        "Mk8sV1NodeGroup.template.reservationPolicy.policy",
        "Mk8sV1NodeGroup.autoRepair.conditions[].status",
    } <= reached


def test_the_generated_configs_reach_every_capacity_and_rollout_field(generated_runs):
    """Proof the walk saw spot, reserved, repair and percentages, not only the on-demand defaults."""
    paths = {
        f"{resource.type.rsplit(':', 1)[-1]}.{leaf.path}"
        for run in generated_runs.values()
        for resource in run.resources
        if resource.type.startswith(PACKAGE)
        for leaf in walk(resource.inputs, resource_arg_classes()[resource.type])
        if isinstance(leaf, Leaf)
    }
    assert {
        "Mk8sV1NodeGroup.template.preemptible",
        "Mk8sV1NodeGroup.template.followsSpotPrice",
        "Mk8sV1NodeGroup.template.spotPricingPolicy.id",
        "Mk8sV1NodeGroup.template.reservationPolicy.reservationIds[]",
        "Mk8sV1NodeGroup.strategy.maxSurge.percent",
        "Mk8sV1NodeGroup.strategy.maxUnavailable.count",
        "Mk8sV1NodeGroup.strategy.drainTimeout",
        "Mk8sV1NodeGroup.autoRepair.conditions[].timeout",
        "Mk8sV1NodeGroup.autoRepair.conditions[].disabled",
        "BillingV1PricingPolicy.pricing.maxPriceV1.maxPrice",
    } <= paths


# Every input (Args) class the installed pulumi-nebius defines: what its generator's docstrings are read from.
SDK_INPUT_CLASSES = frozenset(
    cls
    for _, cls in inspect.getmembers(pulumi_nebius, inspect.isclass)
    if pulumi_types.is_input_type(cls) and cls.__name__.endswith("Args")
)


def test_every_cannot_be_set_alongside_docstring_in_the_sdk_names_fields_of_its_class():
    """A change in how the generator words exclusive fields must fail here, not silently allow both."""
    pairs = 0
    for cls in SDK_INPUT_CLASSES:
        mentioned = [field for field in fields_of(cls).values() if "Cannot be set alongside" in (field.doc or "")]
        assert all(alongside_names(field.doc) for field in mentioned), cls.__name__
        exclusive = exclusive_fields(cls)
        pairs += sum(len(others) for others in exclusive.values())
        if cls.__name__.startswith(("Mk8sV1", "BillingV1")):
            assert all(len(exclusive[f.engine_name]) == len(alongside_names(f.doc)) for f in mentioned), cls.__name__
    assert pairs >= 100
    assert exclusive_fields(pulumi_nebius.Mk8sV1NodeGroupTemplateArgs)["followsSpotPrice"] == {
        "onDemand",
        "spotPricingPolicy",
    }
    assert exclusive_fields(pulumi_nebius.Mk8sV1NodeGroupAutoRepairConditionArgs)["timeout"] == {"disabled"}


def test_every_rule_still_says_what_it_quotes():
    for rules in RULES.values():
        for rule in rules:
            assert rule.source
            if rule.quote:
                cls, python_name, words = rule.quote
                doc = next(f.doc for f in fields_of(cls).values() if f.python_name == python_name)
                assert words in " ".join(_SPAN.sub(r"\1", doc or "").split()), (cls.__name__, python_name)


def test_the_parser_reads_the_taint_effects_the_sdk_documents():
    effect = fields_of(pulumi_nebius.Mk8sV1NodeGroupTemplateTaintArgs)["effect"]
    assert effect.documented == {"EFFECT_UNSPECIFIED", "NO_EXECUTE", "NO_SCHEDULE", "PREFER_NO_SCHEDULE"}
    assert accepted_values(effect.documented) == {"NO_EXECUTE", "NO_SCHEDULE", "PREFER_NO_SCHEDULE"}
    boot_disk = fields_of(pulumi_nebius.Mk8sV1NodeGroupTemplateBootDiskArgs)["type"]
    assert boot_disk.documented is not None and "NETWORK_SSD" in boot_disk.documented


def test_every_possible_values_docstring_in_the_sdk_yields_values():
    """A change in how the generator writes enum lists must fail here, not silently empty every enum."""
    with_enums = 0
    for cls in SDK_INPUT_CLASSES:
        for field in fields_of(cls).values():
            if field.doc and POSSIBLE_VALUES in field.doc:
                assert field.documented, f"{field.where}: 'Possible values' listed nothing the parser reads"
                with_enums += 1
    assert with_enums >= 50


def test_the_parser_reads_inline_and_bulleted_lists():
    inline = 'Possible values: <span pulumi-lang-python="`16`" pulumi-lang-go="`16`">`16`</span>'
    assert documented_values(inline) == {"16"}
    bulleted = ":\n\n#### Supported values\n\n   Possible values:\n\n   - `A` - first,\n     continued.\n   - `B`:\n"
    assert documented_values(bulleted) == {"A", "B"}
    assert documented_values("no list here") is None


def test_every_limit_names_a_field_the_sdk_has_and_still_says_what_it_quotes():
    for (token, path), limit in LIMITS.items():
        field = resolve(token, path)
        assert limit.source
        if limit.quote:
            assert " ".join(limit.quote.split()) in " ".join((field.doc or "").split()), (token, path)


def _node_group_inputs(**changes: Any) -> dict[str, Any]:
    """A node group's inputs as the engine records them (camelCase, numbers as floats), with `changes` applied."""
    template = {
        "resources": {"platform": "gpu-h200-sxm", "preset": "8gpu-128vcpu-1600gb"},
        "bootDisk": {"sizeGibibytes": 200.0, "type": "NETWORK_SSD"},
        "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
        "metadata": {"labels": {"nvidia.com/gpu.present": "true"}},
    }
    template.update(changes.pop("template", {}))
    return {
        "name": "dra-prod-h200",
        "parentId": "mk8scluster-1",
        "version": "1.34",
        "fixedNodeCount": 2.0,
        "template": template,
        **changes,
    }


def _cluster_inputs(**control_plane: Any) -> dict[str, Any]:
    base = {"subnetId": "vpcsubnet-1", "version": "1.34", "etcdClusterSize": 3.0}
    merged = {key: value for key, value in {**base, **control_plane}.items() if value is not None}
    return {"name": "dra-prod", "parentId": "project-1", "controlPlane": merged}


def test_clean_inputs_pass_the_check():
    assert problems_of(NODE_GROUP, "ng", _node_group_inputs()) == []
    assert problems_of(CLUSTER, "cluster", _cluster_inputs()) == []


def _taint(**fields: str) -> dict[str, Any]:
    return {"template": {"taints": [fields]}}


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            _taint(key="k", value="v", effect="NoSchedule"),
            "template.taints[].effect = 'NoSchedule', but Mk8sV1NodeGroupTemplateTaintArgs.effect takes "
            "NO_EXECUTE, NO_SCHEDULE, PREFER_NO_SCHEDULE",
        ),
        (_taint(key="k", value="v", effect="EFFECT_UNSPECIFIED"), "template.taints[].effect = 'EFFECT_UNSPECIFIED'"),
        (
            _taint(key="k", value="", effect="NO_SCHEDULE"),
            "template.taints[].value = '', but it must be a non-empty value",
        ),
        (
            _taint(key="k", effect="NO_SCHEDULE"),
            "template.taints[].value is required by Mk8sV1NodeGroupTemplateTaintArgs",
        ),
        ({"template": {"bootDisk": {"sizeGibibytes": 64.0, "type": "ssd"}}}, "template.bootDisk.type = 'ssd'"),
        ({"template": {"metadata": {"labels": {"node.kubernetes.io/x": "y"}}}}, "template.metadata.labels = "),
        ({"name": "n" * 64}, f"name = '{'n' * 64}', but it must be 1-63 characters"),
        ({"name": ""}, "name = '', but it must be 1-63 characters"),
        ({"fixedNodeCount": 101.0}, "fixedNodeCount = 101.0, but it must be a whole number 0-100"),
        ({"autoscaling": {"minNodeCount": 1.0, "maxNodeCount": 200.0}}, "autoscaling.maxNodeCount = 200.0"),
        ({"version": "1.34.2"}, "version = '1.34.2', but it must be MAJOR.MINOR or MAJOR.MINOR-nebius-node.N"),
        ({"fixedNodeCountt": 1.0}, "fixedNodeCountt is not a field of Mk8sV1NodeGroupArgs"),
        (
            {"strategy": {"maxSurge": {"count": 0.0}, "maxUnavailable": {"percent": 0.0}, "drainTimeout": "10m"}},
            "strategy.maxSurge and strategy.maxUnavailable are not both 0 does not hold",
        ),
        ({"strategy": {"maxSurge": {"count": 1.0, "percent": 5.0}}}, "strategy.maxSurge.count and"),
        ({"strategy": {"drainTimeout": "-10m"}}, "strategy.drainTimeout = '-10m', but it must be a duration"),
        ({"strategy": {"maxSurge": {"percent": 150.0}}}, "strategy.maxSurge.percent = 150.0"),
        (
            {"autoRepair": {"conditions": [{"type": "Ready", "status": "TRUE", "timeout": "5m", "disabled": True}]}},
            "autoRepair.conditions[].disabled and autoRepair.conditions[].timeout are both set",
        ),
        ({"autoRepair": {"conditions": [{"type": "Ready", "status": "True"}]}}, "status = 'True'"),
        (
            {"template": {"reservationPolicy": {"policy": "FORBID", "reservationIds": ["capacityblockgroup-e00a"]}}},
            "FORBID takes no reservationIds does not hold",
        ),
        ({"template": {"reservationPolicy": {"policy": "NEVER"}}}, "template.reservationPolicy.policy = 'NEVER'"),
        (
            {"template": {"preemptible": {}, "reservationPolicy": {"policy": "STRICT"}}},
            "a preemptible template takes no reservationPolicy",
        ),
        ({"template": {"followsSpotPrice": {}}}, "followsSpotPrice and spotPricingPolicy only on a preemptible"),
        (
            {"template": {"preemptible": {}, "followsSpotPrice": {}, "spotPricingPolicy": {"id": "p"}}},
            "template.followsSpotPrice and template.spotPricingPolicy are both set",
        ),
    ],
)
def test_the_check_refuses_a_node_group_nebius_refuses(changes, expected):
    problems = problems_of(NODE_GROUP, "ng", _node_group_inputs(**changes))
    assert any(expected in problem for problem in problems), problems


@pytest.mark.parametrize(
    ("control_plane", "expected"),
    [
        ({"etcdClusterSize": 5.0}, "controlPlane.etcdClusterSize = 5.0, but it must be 0, 1 or 3"),
        ({"version": "1.34-nebius-node.2"}, "controlPlane.version = '1.34-nebius-node.2', but it must be MAJOR.MINOR"),
        ({"subnetId": None}, "controlPlane.subnetId is required by Mk8sV1ClusterControlPlaneArgs but not sent"),
    ],
)
def test_the_check_refuses_a_cluster_nebius_refuses(control_plane, expected):
    problems = problems_of(CLUSTER, "cluster", _cluster_inputs(**control_plane))
    assert any(expected in problem for problem in problems), problems


def test_a_nebius_type_the_installed_sdk_lacks_is_refused():
    (problem,) = problems_of("nebius:index/mk8sV9Cluster:Mk8sV9Cluster", "x", {})
    assert "not a resource of the installed pulumi-nebius" in problem
