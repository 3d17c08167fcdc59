"""What a node group's template change does: the roll-out it starts, and which planned changes start one.

Nebius replaces every node of a group when a field of its template changes, except the fields
whose docstring says otherwise (pulumi-nebius 0.6.73, Mk8sV1NodeGroupArgs.template: "If not
written opposite a NodeTemplate field update will cause NodeGroup roll-out according
NodeGroupDeploymentStrategy"; `metadata.labels` and `taints`: "Field change will NOT trigger
NodeGroup roll out"). So turning DRA on or off, a new preset, drivers preset, boot disk, GPU
cluster or capacity (spot, reservation) recreates the group's nodes, one batch at a time under
its `strategy`.

For each node group the plan shows what such a roll-out costs: how many nodes at a time, how
many extra nodes (and GPUs of quota) a surge needs, and an upper estimate of its duration. Given
the JSON plan of a baseline (`--baseline`, for example the main branch's), it names the groups
whose template changes, with each changed field, so a change that recreates GPU nodes is called
out before `pulumi up`, where `pulumi preview` only shows an update.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from components.config.reading import printable
from components.model import NodeAmount, duration_seconds, gpus_in_preset
from policies.dra_guardrails.planned import NODE_GROUP_TYPE, field_at
from tools.plan.graph import DURATION_ESTIMATES
from tools.plan.mock_engine import RegisteredResource

# Template fields whose change Nebius does not roll out (see above): `metadata` holds only the labels.
NOT_ROLLED_OUT = ("metadata", "taints")


class BaselineError(ValueError):
    """A `--baseline` document that is not the JSON of an offline plan; the message says what is wrong."""


def _seconds(duration: Any) -> float | None:
    """Seconds of a Nebius duration; None when it is missing or not a duration."""
    try:
        return duration_seconds(duration) if isinstance(duration, str) else None
    except ValueError:
        return None


def _nodes(amount: Any, group_size: int, round_up: bool) -> int | None:
    """A strategy amount in nodes: a count, or a percentage rounded as Nebius rounds it; None when not set."""
    if not isinstance(amount, Mapping):
        return None
    if isinstance(amount.get("count"), (int, float)):
        return NodeAmount(count=int(amount["count"])).nodes(group_size, round_up)
    if isinstance(amount.get("percent"), (int, float)):
        return NodeAmount(percent=amount["percent"]).nodes(group_size, round_up)
    return None


def _text(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{minutes // 60}h{minutes % 60:02d}m" if minutes >= 60 else f"{minutes}m"


@dataclass(frozen=True)
class Rollout:
    """A roll-out of one node group at its largest size, under its strategy."""

    urn: str
    name: str
    gpu: bool
    nodes: int
    gpus_per_node: int
    smallest: int
    surge: int | None
    unavailable: int | None
    drain_seconds: float | None
    node_seconds: int

    @property
    def batch(self) -> int:
        return (self.surge or 0) + (self.unavailable or 0)

    @property
    def batches(self) -> int | None:
        return math.ceil(self.nodes / self.batch) if self.batch else None

    @property
    def seconds(self) -> float | None:
        """Upper estimate: each batch drains for up to the drain timeout, then boots new nodes. None when unbounded."""
        if self.batches is None or not self.drain_seconds:
            return None
        return self.batches * (self.drain_seconds + self.node_seconds)

    @property
    def extra_gpus(self) -> int:
        return (self.surge or 0) * self.gpus_per_node

    def describe(self) -> str:
        size = f"{self.nodes} node(s)" if self.smallest == self.nodes else f"{self.smallest}..{self.nodes} nodes"
        if self.surge is None or self.unavailable is None:
            return f"{size}; strategy left to Nebius's defaults, which change in Q3 2026"
        pace = (
            f"{self.batch} at a time (maxSurge {self.surge}, maxUnavailable {self.unavailable})"
            if self.batch
            else "never (maxSurge and maxUnavailable are both 0)"
        )
        if self.drain_seconds is None:
            drain = "drain timeout left to Nebius"
        elif self.drain_seconds == 0:
            drain = "no drain timeout: a PodDisruptionBudget can hold it for ever"
        else:
            drain = f"drain up to {_text(self.drain_seconds)} per batch"
        duration = f"about {_text(self.seconds)} at most" if self.seconds is not None else "no upper bound"
        quota = (
            f"needs {self.surge} extra node(s)" + (f" ({self.extra_gpus} GPUs of quota)" if self.extra_gpus else "")
            if self.surge
            else "no extra node"
        )
        return f"{size}, {pace}, {drain}: {self.batches or '-'} batch(es) at {self.nodes}, {duration}; {quota}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "urn": self.urn,
            "name": self.name,
            "gpu": self.gpu,
            "nodes": self.nodes,
            "smallest": self.smallest,
            "surge": self.surge,
            "unavailable": self.unavailable,
            "drainSeconds": self.drain_seconds,
            "batches": self.batches,
            "seconds": self.seconds,
            "extraGpus": self.extra_gpus,
        }


def _sizes(inputs: Mapping[str, Any]) -> tuple[int, int]:
    """(smallest, largest) number of nodes: the autoscaling range, or the fixed count twice."""
    low, high = field_at(inputs, "autoscaling", "minNodeCount"), field_at(inputs, "autoscaling", "maxNodeCount")
    if isinstance(low, (int, float)) and isinstance(high, (int, float)):
        return int(low), int(high)
    fixed = int(inputs.get("fixedNodeCount") or 0)
    return fixed, fixed


def rollout_of(resource: RegisteredResource, inputs: Mapping[str, Any]) -> Rollout | None:
    """The roll-out of a node group (None for other resources), from its presentable inputs."""
    if resource.type != NODE_GROUP_TYPE:
        return None
    platform = str(field_at(inputs, "template", "resources", "platform") or "")
    gpus = gpus_in_preset(str(field_at(inputs, "template", "resources", "preset") or ""))
    smallest, nodes = _sizes(inputs)
    strategy = inputs.get("strategy")
    gpu = platform.startswith("gpu-")
    return Rollout(
        urn=resource.urn,
        name=str(inputs.get("name") or resource.name),
        gpu=gpu,
        nodes=nodes,
        gpus_per_node=gpus or 0,
        smallest=smallest,
        surge=_nodes(field_at(strategy, "maxSurge"), nodes, round_up=True),
        unavailable=_nodes(field_at(strategy, "maxUnavailable"), nodes, round_up=False),
        drain_seconds=_seconds(field_at(strategy, "drainTimeout")),
        node_seconds=DURATION_ESTIMATES["GPU node group" if gpu else "CPU node group"].seconds,
    )


def rolled_out_fields(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """The template fields whose change makes Nebius recreate the group's nodes."""
    template = inputs.get("template") or {}
    return {key: value for key, value in template.items() if key not in NOT_ROLLED_OUT}


def node_group_snapshots(
    resources: Iterable[RegisteredResource], inputs: Mapping[str, Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """What the JSON plan records per node group, so a later plan can compare with it (`--baseline`)."""
    return [
        {
            "urn": resource.urn,
            "name": inputs[resource.urn].get("name"),
            "template": rolled_out_fields(inputs[resource.urn]),
        }
        for resource in sorted(resources, key=lambda r: r.urn)
        if resource.type == NODE_GROUP_TYPE
    ]


def _flat(value: Any, prefix: str) -> dict[str, Any]:
    """Leaves by dotted path; an empty map is a leaf (`preemptible: {}` switches spot on)."""
    if isinstance(value, Mapping) and value:
        flat: dict[str, Any] = {}
        for key, item in value.items():
            flat.update(_flat(item, f"{prefix}.{key}"))
        return flat
    return {prefix: value}


_ABSENT = object()


def as_json(value: Any) -> str:
    """A template value for the plan's text; a baseline's value is outside input, so no control character of
    it reaches a terminal or a PR summary (a newline could forge a line, an escape rewrite the screen)."""
    if value is _ABSENT:
        return "(unset)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return "{}" if value == {} else printable(str(value))


@dataclass(frozen=True)
class Recreation:
    """A node group whose template changes against the baseline: every node of it is replaced."""

    urn: str
    name: str
    changes: tuple[str, ...]
    rollout: Rollout | None

    def as_dict(self) -> dict[str, Any]:
        return {"urn": self.urn, "name": self.name, "changes": list(self.changes)}


def baseline_templates(document: Any, stack: str) -> dict[str, Mapping[str, Any]]:
    """URN -> rolled-out template fields, from the JSON plan of `stack`; BaselineError when it is none."""
    named = document.get("stack") if isinstance(document, Mapping) else None
    if isinstance(document, Mapping) and not isinstance(named, str):
        raise BaselineError(
            f'the baseline has no "stack" name, so it cannot be known to be a plan of {stack}; '
            f"write one with `python -m tools.plan --stack {stack} --format json`"
        )
    if isinstance(named, str) and named != stack:
        raise BaselineError(
            f"the baseline is a plan of stack {printable(named)}, not of {stack}: compare plans of the same stack"
        )
    if isinstance(document, Mapping) and document.get("error"):
        raise BaselineError(
            f"the baseline is a plan of {stack} that failed ({printable(str(document['error']))[:300]}), so it lists "
            "no node group: compare with a plan that ran"
        )
    groups = document.get("nodeGroups") if isinstance(document, Mapping) else None
    if not isinstance(groups, list) or not all(
        isinstance(g, Mapping) and isinstance(g.get("urn"), str) and isinstance(g.get("template"), Mapping)
        for g in groups
    ):
        raise BaselineError(
            "the baseline is not the JSON of an offline plan made with this version of tools.plan "
            "(no nodeGroups list of {urn, name, template}); write one with `python -m tools.plan --format json`"
        )
    return {group["urn"]: group["template"] for group in groups}


def recreations(
    baseline: Mapping[str, Mapping[str, Any]], current: list[dict[str, Any]], rollouts: Mapping[str, Rollout]
) -> list[Recreation]:
    """Node groups present in both plans whose rolled-out template fields differ, with each change."""
    found = []
    for group in current:
        before = baseline.get(group["urn"])
        if before is None:
            continue
        old, new = _flat(dict(before), "template"), _flat(group["template"], "template")
        changes = tuple(
            f"{printable(path)}: {as_json(old.get(path, _ABSENT))} -> {as_json(new.get(path, _ABSENT))}"
            for path in sorted(set(old) | set(new))
            if old.get(path, _ABSENT) != new.get(path, _ABSENT)
        )
        if changes:
            found.append(Recreation(group["urn"], str(group["name"]), changes, rollouts.get(group["urn"])))
    return found
