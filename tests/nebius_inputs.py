"""The check of every input the program sends to Nebius against what the installed pulumi-nebius SDK documents.

The SDK (a bridge of Nebius's Terraform provider) documents each enumerated field in the
docstring of its input property ("#### Supported values / Possible values: - `NO_SCHEDULE`
..."). This module reads those lists from the installed package and walks every input of a
`nebius:` resource (engine camelCase names mapped back to the SDK's `*Args` classes and their
Python names): a value the API does not take, a field the SDK does not know and a required
field left out are problems. No field is named in the walk: a field the program starts sending
tomorrow is checked the same way.

What the docstrings do not state as a list (etcd sizes, name lengths, node counts, a
taint's value, version formats) is in `LIMITS`, one entry per field with its source.
tests/components/test_provider_truth.py runs the check over the stacks' programs;
tests/tools/ci_identity/test_ci_identity.py over the CI-identity project's.
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
from pulumi import _types as pulumi_types

from tools.plan.mock_engine import ProgramRun

PACKAGE = "nebius:"
CLUSTER = "nebius:index/mk8sV1Cluster:Mk8sV1Cluster"
NODE_GROUP = "nebius:index/mk8sV1NodeGroup:Mk8sV1NodeGroup"
GPU_CLUSTER = "nebius:index/computeV1GpuCluster:ComputeV1GpuCluster"
PRICING_POLICY = "nebius:index/billingV1PricingPolicy:BillingV1PricingPolicy"

# ---------------------------------------------------------------------------------------------
# What the installed SDK documents: resource types, their input classes, field names and enums.
# ---------------------------------------------------------------------------------------------

SPAN = re.compile(r"<span[^>]*>(.*?)</span>", re.S)
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
    for section in SPAN.sub(r"\1", doc).split(POSSIBLE_VALUES)[1:]:
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
    match = _ALONGSIDE.search(" ".join(SPAN.sub(r"\1", doc or "").split()))
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
