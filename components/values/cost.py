"""What the stack's nodes cost per hour and per 30 days, from the stack's `PriceTable`.

Included: every GPU node group and the system (CPU) node group, at a fixed group's node count or
an autoscaled group's min and max. Not included: boot disks, the control plane, the InfiniBand
GPU cluster, network, egress and storage. A group whose platform or preset the table does not
price is reported as unpriced with the reason, and left out of the total, which then says so.

GPU presets are `<G>gpu-<C>vcpu-<M>gb`: a node costs G x the unified per-GPU price, which since
October 2025 covers the preset's vCPUs and RAM (docs.nebius.com/signup-billing/billing-changes-oct-2025,
whose example prices 1gpu-16vcpu-200gb at one GPU's $3.50 per hour). CPU presets are
`<C>vcpu-<M>gb`: C x the vCPU price + M x the GiB price ("gb" in preset names is GiB, as the same
example counts "200 (GiB RAM)").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from components.config.errors import config_key
from components.config.prices import OVERRIDES_KEY
from components.model import GpuNodeGroupConfig, PriceSource, PriceTable, StackConfig, gpus_in_preset

HOURS_PER_30_DAYS = 24 * 30
CURRENCY = "USD"
SYSTEM_GROUP = "system"
CPU_PRESET = re.compile(r"^([0-9]+)vcpu-([0-9]+)gb\Z")
SPOT_NOTE = (
    "spot (preemptible) prices follow demand (Nebius, since 2026-10): the table's spot price is a reference "
    "point, not what a node will cost"
)
NOT_INCLUDED = "boot disks, the control plane, the InfiniBand GPU cluster, network, egress and storage"
OVERRIDES = config_key(OVERRIDES_KEY)
# A price read longer ago than this is shown with a caveat: Nebius changed GPU prices twice in 2025-2026
# (prices/nebius.yaml notes), so a year-old figure may no longer hold.
PRICE_FRESH_DAYS = 365


@dataclass(frozen=True)
class NodePrice:
    usd_per_node_hour: Decimal
    basis: str
    source: PriceSource


@dataclass(frozen=True)
class GroupCost:
    """One node group: `price` per node-hour, or `unpriced` saying why there is none."""

    name: str
    node_group: str
    kind: str
    platform: str
    preset: str
    spot: bool
    min_nodes: int
    max_nodes: int
    price: NodePrice | None
    unpriced: str | None = None
    # What a reader of the price must know: a spot ceiling below the table's price, a doubtful or stale figure.
    caveats: tuple[str, ...] = ()
    # The table's spot price per GPU-hour where the group's ceiling is below it: no node may then be placed.
    spot_above_ceiling: Decimal | None = None

    @property
    def capacity(self) -> str:
        return "spot" if self.spot else "on-demand"

    def hourly(self, nodes: int) -> Decimal | None:
        return None if self.price is None else self.price.usd_per_node_hour * nodes


@dataclass(frozen=True)
class StackCost:
    groups: tuple[GroupCost, ...]

    @property
    def priced(self) -> tuple[GroupCost, ...]:
        return tuple(group for group in self.groups if group.price is not None)

    @property
    def unpriced(self) -> tuple[GroupCost, ...]:
        return tuple(group for group in self.groups if group.price is None)

    @property
    def hourly_min(self) -> Decimal:
        return sum(
            (group.price.usd_per_node_hour * group.min_nodes for group in self.priced if group.price), Decimal(0)
        )

    @property
    def hourly_max(self) -> Decimal:
        return sum(
            (group.price.usd_per_node_hour * group.max_nodes for group in self.priced if group.price), Decimal(0)
        )

    def as_document(self) -> dict[str, Any]:
        """Plain data (engine-style camelCase), as the program registers it and the plan and the policy read it."""
        return {
            "currency": CURRENCY,
            "hoursPer30Days": HOURS_PER_30_DAYS,
            "notIncluded": NOT_INCLUDED,
            "priceBasis": price_basis((group.name, group.price.source.origin) for group in self.priced if group.price),
            "groups": [_group_document(group) for group in self.groups],
            "total": {
                "hourlyUsd": _range(self.hourly_min, self.hourly_max),
                "usdPer30Days": _range(self.hourly_min * HOURS_PER_30_DAYS, self.hourly_max * HOURS_PER_30_DAYS),
                "complete": not self.unpriced,
                "unpriced": [group.name for group in self.unpriced],
                "doubtedPrices": doubted_groups(self.groups),
            },
        }


def price_basis(rates: Iterable[tuple[str, str]]) -> str:
    """What the estimate's rates are, from each priced group's (name, origin): list prices, and which groups' rates
    the stack's priceOverrides gave, so that no reader takes an override for Nebius's list price."""
    priced = list(rates)
    overridden = [name for name, origin in priced if origin == OVERRIDES]
    if not overridden:
        return "list prices"
    named = ", ".join(overridden)
    if len(overridden) == len(priced):
        return f"rates from {OVERRIDES} (all {len(priced)}: {named}), no list price"
    return f"list prices, but {len(overridden)} of {len(priced)} rates from {OVERRIDES} ({named})"


def usd(amount: Decimal, places: int = 4) -> float:
    """An amount as a JSON number, rounded half up to `places` decimals (cents and below)."""
    return float(amount.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))


def _range(low: Decimal, high: Decimal) -> dict[str, float]:
    return {"min": usd(low), "max": usd(high)}


def _group_document(group: GroupCost) -> dict[str, Any]:
    document: dict[str, Any] = {
        "name": group.name,
        "nodeGroup": group.node_group,
        "kind": group.kind,
        "platform": group.platform,
        "preset": group.preset,
        "capacity": group.capacity,
        "minNodes": group.min_nodes,
        "maxNodes": group.max_nodes,
    }
    if group.price is None:
        return {**document, "usdPerNodeHour": None, "unpriced": group.unpriced}
    source = group.price.source
    low, high = group.hourly(group.min_nodes), group.hourly(group.max_nodes)
    assert low is not None and high is not None
    return {
        **document,
        "usdPerNodeHour": usd(group.price.usd_per_node_hour),
        "basis": group.price.basis,
        "hourlyUsd": _range(low, high),
        "usdPer30Days": _range(low * HOURS_PER_30_DAYS, high * HOURS_PER_30_DAYS),
        "priceSource": source.source,
        "priceDate": source.date,
        "priceFrom": source.origin,
        **({"note": SPOT_NOTE} if group.spot else {}),
        **({"caveats": list(group.caveats)} if group.caveats else {}),
        **({"spotAboveCeiling": usd(group.spot_above_ceiling)} if group.spot_above_ceiling is not None else {}),
    }


def _amount(value: Decimal) -> str:
    return f"${value.normalize():f}" if value < 1 else f"${value:.2f}"


def node_price(prices: PriceTable, platform: str, preset: str, spot: bool) -> NodePrice | str:
    """The price of one node per hour, or why there is none. `spot` prices at the table's spot price."""
    capacity = "spot" if spot else "on-demand"
    gpus = gpus_in_preset(preset)
    if gpus is not None:
        price = prices.gpu_price(platform, preset)
        if price is None:
            known = prices.gpu_presets(platform)
            if known:
                return f"{platform} is priced for presets {', '.join(known)} only, not {preset}"
            return f"no price for GPU platform {platform}"
        gpu_rate = price.spot if spot else price.on_demand
        if gpu_rate is None:
            return f"no {capacity} price for {platform} {preset}"
        return NodePrice(
            gpu_rate.usd_per_gpu_hour * gpus,
            f"{gpus} GPU{'s' if gpus != 1 else ''} x {_amount(gpu_rate.usd_per_gpu_hour)} per GPU-hour",
            gpu_rate.source,
        )
    cpu_preset = CPU_PRESET.match(preset)
    if cpu_preset is None:
        return f"preset {preset} is neither <G>gpu-<C>vcpu-<M>gb nor <C>vcpu-<M>gb"
    vcpus, gib = int(cpu_preset.group(1)), int(cpu_preset.group(2))
    cpu_price = prices.cpu_price(platform)
    if cpu_price is None:
        return f"no price for CPU platform {platform}"
    cpu_rate = cpu_price.spot if spot else cpu_price.on_demand
    if cpu_rate is None:
        return f"no {capacity} price for {platform}"
    return NodePrice(
        cpu_rate.usd_per_vcpu_hour * vcpus + cpu_rate.usd_per_gib_hour * gib,
        f"{vcpus} vCPU x {_amount(cpu_rate.usd_per_vcpu_hour)} + {gib} GiB x {_amount(cpu_rate.usd_per_gib_hour)} per hour",
        cpu_rate.source,
    )


def _group_cost(
    name: str,
    node_group: str,
    kind: str,
    platform: str,
    preset: str,
    nodes: tuple[int, int],
    prices: PriceTable,
    spot: bool,
    today: date,
) -> GroupCost:
    price = node_price(prices, platform, preset, spot)
    return GroupCost(
        name=name,
        node_group=node_group,
        kind=kind,
        platform=platform,
        preset=preset,
        spot=spot,
        min_nodes=nodes[0],
        max_nodes=nodes[1],
        price=price if isinstance(price, NodePrice) else None,
        unpriced=price if isinstance(price, str) else None,
        caveats=price_caveats(price.source, today) if isinstance(price, NodePrice) else (),
    )


def _at_ceiling(cost: GroupCost, ceiling: Decimal) -> GroupCost:
    """A spot group with a maximum price costs at most its ceiling: priced there, the table's spot price beside it.

    Nebius places a spot VM only while the spot price is at or below the pricing policy's maximum
    (pulumi-nebius 0.6.73 BillingV1PricingPolicyPricingMaxPriceV1Args.max_price), so a ceiling below the
    table's reference means no node may be placed at all.
    """
    gpus = gpus_in_preset(cost.preset) or 0
    reference = cost.price
    beside = f"reference spot {_amount(reference.usd_per_node_hour / gpus)}" if reference and gpus else "no reference"
    source = reference.source if reference else PriceSource("nebius-dra:gpuNodeGroups capacity", "", "the stack")
    price = NodePrice(
        ceiling * gpus,
        f"{gpus} GPU{'s' if gpus != 1 else ''} x {_amount(ceiling)} per GPU-hour at most (maxPricePerGpuHour; {beside})",
        source,
    )
    caveats = (*cost.caveats, f"priced at its ceiling: {price.basis}")
    above = None
    if reference is not None and gpus and ceiling * gpus < reference.usd_per_node_hour:
        above = reference.usd_per_node_hour / gpus
        caveats += (
            f"advisory: {cost.name}'s ceiling {_amount(ceiling)} per GPU-hour is below the table's spot price "
            f"{_amount(reference.usd_per_node_hour / gpus)}: while the spot price stays above it, no node may be placed",
        )
    return replace(cost, price=price, unpriced=None, caveats=caveats, spot_above_ceiling=above)


# The caveats that put a price itself in doubt (price_caveats): every place that shows a total says so.
DOUBTFUL_PRICE = "doubtful price"
STALE_PRICE = "stale price"


def doubted_groups(groups: Sequence[GroupCost]) -> list[str]:
    """Groups whose price the table marks as doubtful or that is older than the freshness limit."""
    return [g.name for g in groups if any(c.startswith((DOUBTFUL_PRICE, STALE_PRICE)) for c in g.caveats)]


def price_caveats(source: PriceSource, today: date) -> tuple[str, ...]:
    """What the table says against a price (`doubtful`), and whether it is older than PRICE_FRESH_DAYS."""
    caveats: tuple[str, ...] = (f"{DOUBTFUL_PRICE} ({source.origin}): {source.doubtful}",) if source.doubtful else ()
    try:
        age = (today - date.fromisoformat(source.date)).days
    except ValueError:
        return caveats
    if age > PRICE_FRESH_DAYS:
        caveats += (
            f"{STALE_PRICE}: {source.date} is {age} days old, more than the {PRICE_FRESH_DAYS}-day freshness limit; "
            f"re-read {source.source}",
        )
    return caveats


def gpu_group_cost(
    cluster_name: str, group: GpuNodeGroupConfig, prices: PriceTable, spot: bool, today: date
) -> GroupCost:
    """One GPU group at its fixed count, or its autoscaling min and max; `spot` picks the table's spot price,
    a spot group with a ceiling is priced at it."""
    cost = _group_cost(
        group.name,
        f"{cluster_name}-{group.name}",
        "gpu",
        group.platform,
        group.preset,
        group.node_range,
        prices,
        spot,
        today,
    )
    ceiling = group.capacity.max_price_per_gpu_hour if spot else None
    return cost if ceiling is None else _at_ceiling(cost, Decimal(ceiling))


def stack_cost(config: StackConfig, today: date | None = None) -> StackCost:
    """Every GPU group, then the system group, priced from `config.prices`; prices older than PRICE_FRESH_DAYS
    before `today` (the day the plan runs) carry a caveat."""
    cluster = config.cluster.name
    day = today or date.today()
    groups = [gpu_group_cost(cluster, group, config.prices, group.spot, day) for group in config.gpu_node_groups]
    system = config.system_nodes
    groups.append(
        _group_cost(
            SYSTEM_GROUP,
            f"{cluster}-{SYSTEM_GROUP}",
            "cpu",
            system.platform,
            system.preset,
            (system.node_count, system.node_count),
            config.prices,
            spot=False,
            today=day,
        )
    )
    return StackCost(tuple(groups))
