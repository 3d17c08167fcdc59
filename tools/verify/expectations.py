"""What a healthy cluster looks like for one stack, derived from the stack's own config.

The verifier never hard-codes node counts or GPU counts: a group's preset says how many GPUs
each node publishes, its scaling says how many nodes to expect, its taints say what the
smoke pods must tolerate, and the driver and claims settings say where to look.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from components.config.raw import stack_file_raw_config
from components.config.stack import parse_stack_config
from components.config.stack_file import read_stack_file
from components.labels import tolerations_for
from components.model import GpuNodeGroupConfig, StackConfig, Taint
from components.queue_model import NO_QUEUES, QueuesConfig
from components.values.cost import DOUBTFUL_PRICE, STALE_PRICE, NodePrice, gpu_group_cost


@dataclass(frozen=True)
class GroupExpectation:
    name: str
    preset: str
    gpus_per_node: int
    infiniband: bool
    min_nodes: int
    max_nodes: int
    taints: tuple[Taint, ...]
    auto_repair_off: tuple[str, ...] = ()
    platform: str = ""
    # What a node of the group costs per hour as the stack prices it (priceOverrides, spot or its ceiling), with the
    # price's caveats; None when the table has no price for it.
    price: NodePrice | None = None
    price_caveats: tuple[str, ...] = ()

    @property
    def node_count_text(self) -> str:
        if self.min_nodes == self.max_nodes:
            return f"{self.min_nodes} node(s)"
        return f"{self.min_nodes} to {self.max_nodes} nodes (autoscaled)"


@dataclass(frozen=True)
class Expectations:
    stack: str
    groups: tuple[GroupExpectation, ...]
    driver_namespace: str
    compute_domains: bool
    claims_namespace: str
    claim_templates: tuple[str, ...]
    smoke_image: str
    # The GPU metrics exporter's namespace, or None when the stack installs no exporter (gpuMetrics: false).
    metrics_namespace: str | None = None
    queues: QueuesConfig = NO_QUEUES

    @property
    def infiniband(self) -> bool:
        return any(group.infiniband for group in self.groups)

    def group(self, name: str) -> GroupExpectation | None:
        return next((group for group in self.groups if group.name == name), None)

    def smoke_tolerations(self) -> list[dict[str, str]]:
        return tolerations_for(taint for group in self.groups for taint in group.taints)


def _group_expectation(group: GpuNodeGroupConfig, config: StackConfig) -> GroupExpectation:
    low, high = group.node_range
    cost = gpu_group_cost(config.cluster.name, group, config.prices, group.spot, datetime.date.today())
    return GroupExpectation(
        name=group.name,
        preset=group.preset,
        gpus_per_node=group.gpus_per_node,
        infiniband=group.infiniband,
        min_nodes=low,
        max_nodes=high,
        taints=tuple(group.taints),
        auto_repair_off=tuple(condition.type for condition in group.auto_repair if condition.disabled),
        platform=group.platform,
        price=cost.price,
        price_caveats=tuple(c for c in cost.caveats if c.startswith((DOUBTFUL_PRICE, STALE_PRICE))),
    )


def expectations_for(config: StackConfig, stack: str, smoke_image: str | None = None) -> Expectations:
    """`smoke_image` overrides the stack's sample GPU image, which both smoke pods use (it has nvidia-smi and ls)."""
    return Expectations(
        stack=stack,
        groups=tuple(_group_expectation(group, config) for group in config.gpu_node_groups),
        driver_namespace=config.driver.namespace,
        compute_domains=config.driver.compute_domains,
        claims_namespace=config.claims.namespace,
        # The templates the stack creates: a built-in no node can serve (multi-gpu below two GPUs a node) is not.
        claim_templates=config.claims.active_builtin_templates,
        smoke_image=smoke_image or config.claims.sample_gpu_image,
        metrics_namespace=config.observability.namespace if config.observability.enabled else None,
        queues=config.queues,
    )


def load_expectations(stack: str, smoke_image: str | None = None) -> Expectations:
    """Raises `FileNotFoundError` for an unknown stack and `ConfigError` for a config the program would refuse."""
    return expectations_for(
        parse_stack_config(stack_file_raw_config(read_stack_file(stack)), stack), stack, smoke_image
    )
