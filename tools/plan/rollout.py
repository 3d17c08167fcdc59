"""What replacing a node group's nodes costs: the roll-out under its strategy.

Which changes replace nodes is the table of consequences' business
(policies/dra_guardrails/consequences.py: a template field, the group's version); this module
says, for each node group, how such a roll-out goes: how many nodes at a time, how many extra
nodes (and GPUs of quota) a surge needs, and an upper estimate of its duration.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from components.model import NodeAmount, RolloutStrategy, StackConfig, duration_seconds, gpus_in_preset
from components.values.cost import SYSTEM_GROUP
from policies.dra_guardrails.planned import NODE_GROUP_TYPE, PlannedResource, field_at, planned_node_range
from tools.cost.render import money
from tools.plan.graph import DURATION_ESTIMATES
from tools.plan.mock_engine import RegisteredResource


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


def duration_text(seconds: float) -> str:
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
            drain = f"drain up to {duration_text(self.drain_seconds)} per batch"
        duration = f"about {duration_text(self.seconds)} at most" if self.seconds is not None else "no upper bound"
        quota = (
            f"needs {self.surge} extra node(s)" + (f" ({self.extra_gpus} GPUs of quota)" if self.extra_gpus else "")
            if self.surge
            else "no extra node"
        )
        if self.batches is None:
            batches = "no batch"
        else:
            most = min(self.batch, self.nodes)
            batches = (
                f"in {'' if self.smallest == self.nodes else 'up to '}{self.batches} batch(es) of at most {most} "
                f"node(s){'' if self.smallest == self.nodes else f' (at {self.nodes} nodes)'}"
            )
        return f"{size}, {pace}, {drain}: {batches}, {duration}; {quota}"

    def surge_cost(self, usd_per_node_hour: float | None) -> str:
        """What the surge nodes of a roll-out of this group cost: maxSurge x the price per node-hour x the roll-out's
        upper duration (`seconds`); `make cost BASE=...` prints it for a change that replaces the group's nodes."""
        if self.surge is None:
            return "not known (strategy left to Nebius)"
        if not self.surge:
            return "no surge node (maxSurge 0): nothing billed beyond the group, which runs on fewer nodes meanwhile"
        if usd_per_node_hour is None:
            return f"{self.surge} surge node(s), unpriced"
        rate = f"{self.surge} surge node(s) x {money(usd_per_node_hour)} per node-hour"
        if self.seconds is None:
            return f"{rate} for as long as the roll-out runs, which has no upper bound"
        total = self.surge * usd_per_node_hour * self.seconds / 3600
        return (
            f"{rate} for about {duration_text(self.seconds)} (the roll-out's upper estimate) = {money(total)} at most"
        )

    def capacity(self, fewest: int | None = None) -> str:
        """What the group can run while it rolls out: each batch drains old nodes (maxUnavailable of them are down
        at once, maxSurge new ones are added beside them), so work that spans every node is evicted each batch.
        `fewest` is the fewest nodes it may have meanwhile (a baseline's smaller size; default its smallest size):
        with no surge node and maxUnavailable at least that many, the group has no node while a batch is replaced."""
        if self.surge is None or self.unavailable is None or not self.batch:
            return "capacity during the roll-out not known"
        how_long = f"about {duration_text(self.seconds)}" if self.seconds is not None else "an unbounded time"
        up = max(self.nodes - self.unavailable, 0)
        runs = f"runs on {up} of {self.nodes} nodes for {how_long}"
        extra = f", with {self.surge} surge node(s) added beside them and billed for that time" if self.surge else ""
        evicted = "; a job spanning every node is evicted once per batch" if self.nodes > 0 else ""
        low = self.smallest if fewest is None else min(fewest, self.smallest)
        none_left = ""
        if not self.surge and 0 < low <= self.unavailable:
            none_left = (
                f"; while it has {low} node(s), with maxSurge 0 and maxUnavailable {self.unavailable}, it has no "
                f"{'GPU ' if self.gpu else ''}node during a batch: nothing runs on the group until a new node is up"
            )
        return runs + extra + evicted + none_left

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


def rollout_of(resource: RegisteredResource, inputs: Mapping[str, Any]) -> Rollout | None:
    """The roll-out of a node group (None for other resources), from its presentable inputs."""
    if resource.type != NODE_GROUP_TYPE:
        return None
    platform = str(field_at(inputs, "template", "resources", "platform") or "")
    gpus = gpus_in_preset(str(field_at(inputs, "template", "resources", "preset") or ""))
    smallest, nodes = (
        int(count)
        for count in planned_node_range(PlannedResource(resource.urn, resource.type, resource.name, inputs)) or (0, 0)
    )
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
        node_seconds=_group_seconds(gpu),
    )


def _group_seconds(gpu: bool) -> int:
    return DURATION_ESTIMATES["GPU node group" if gpu else "CPU node group"].seconds


def rollouts_of_config(config: StackConfig) -> dict[str, Rollout]:
    """Each node group's roll-out by its stack-file name (`system` for the system group), from the parsed config:
    what `make cost` reads where the plan reads the registered inputs (`rollout_of`)."""

    def of(name: str, gpu: bool, gpus: int, smallest: int, nodes: int, strategy: RolloutStrategy) -> Rollout:
        return Rollout(
            urn=name,
            name=name,
            gpu=gpu,
            nodes=nodes,
            gpus_per_node=gpus,
            smallest=smallest,
            surge=strategy.surge_nodes(nodes),
            unavailable=strategy.unavailable_nodes(nodes),
            drain_seconds=strategy.drain_seconds,
            node_seconds=_group_seconds(gpu),
        )

    found = {}
    for group in config.gpu_node_groups:
        low, high = group.node_range
        found[group.name] = of(group.name, True, group.gpus_per_node, low, high, group.strategy)
    system = config.system_nodes
    found[SYSTEM_GROUP] = of(SYSTEM_GROUP, False, 0, system.node_count, system.node_count, system.strategy)
    return found
