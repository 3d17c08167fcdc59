"""The budget rule: the largest hourly cost of the node groups under the `maxHourlyUsd` setting, from the program's cost estimate."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .framework import PolicyConfigError
from .planned import (
    COST_ESTIMATE_TYPE,
    NODE_GROUP_TYPE,
    PRICE_OVERRIDES_ORIGIN,
    PlannedResource,
    as_json,
    as_list,
    field_at,
    has_key,
    is_finite_number,
    named,
    planned_node_range,
    written_group_name,
)
from .quoting import shown

HOURS_PER_30_DAYS = 24 * 30
# A budget below a cent per hour is a typo; JSON Schema's `minimum` means the same in every draft the CLI may use.
MIN_HOURLY_USD = 0.01
# Above it a budget gates nothing any stack could cost, so it is a typo (an extra zero or three, `1e308`): 1,000 GPU
# groups (ten times the fleet `make bench` plans) of 100 nodes (Nebius's most a group) of 8 GPUs at $12.50 a
# GPU-hour, over three times the dearest published Nebius GPU price (prices/nebius.yaml).
MAX_HOURLY_USD = 10_000_000


# A budget is compared to the cent and beyond, but no price of the table has more than six decimals.
MAX_DIGITS = 6


def _usd(amount: float, digits: int = 2) -> str:
    return f"${amount:,.{digits}f}" if amount >= 1 else f"${amount:.{max(digits, 4)}f}".rstrip("0").rstrip(".")


def _usd_against(total: float, limit: float) -> tuple[str, str]:
    """The cost and the budget with as many digits as it takes to show both as they are (six at most), so that the
    verdict reads right: at cents, $3.632 over a budget of $3.63 would read "$3.63 over $3.63", and $3.63 within
    $3.632 "within $3.63"."""
    digits = 2
    while digits < MAX_DIGITS and any(abs(round(amount, digits) - amount) > 1e-9 for amount in (total, limit)):
        digits += 1
    return _usd(total, digits), _usd(limit, digits)


def _max_hourly_usd(config: Mapping[str, Any]) -> float | None:
    if "maxHourlyUsd" not in config:
        return None
    # Present is used: null is refused like any other non-amount, never read as "no budget".
    limit = config["maxHourlyUsd"]
    amount = isinstance(limit, (int, float)) and not isinstance(limit, bool) and math.isfinite(limit)
    if not amount or not MIN_HOURLY_USD <= limit <= MAX_HOURLY_USD:
        raise PolicyConfigError(
            f"max-hourly-cost: maxHourlyUsd must be a number of US dollars per hour, at least {MIN_HOURLY_USD} and "
            f"at most {MAX_HOURLY_USD:,} (above it, no stack's cost could reach it), got {shown(as_json(limit))}"
        )
    return float(limit)


def _largest_node_count(group: PlannedResource) -> float:
    nodes = planned_node_range(group)
    return nodes[1] if nodes is not None else 0.0


def _estimated_groups(resources: Sequence[PlannedResource]) -> dict[str, Mapping[str, Any]]:
    """The program's estimate per Nebius node group name."""
    found: dict[str, Mapping[str, Any]] = {}
    for estimate in (r for r in resources if r.type == COST_ESTIMATE_TYPE):
        for entry in as_list(field_at(estimate.props, "groups")):
            name = field_at(entry, "nodeGroup")
            if isinstance(name, str):
                found.setdefault(name, entry)
    return found


def _unpriced_reason(group: PlannedResource, entry: Mapping[str, Any] | None) -> str | None:
    """Why the estimate's price does not fit the node group as planned, or None when it does."""
    if entry is None:
        return f"the stack's cost estimate ({COST_ESTIMATE_TYPE}) has no price for it"
    planned = (
        field_at(group.props, "template", "resources", "platform"),
        field_at(group.props, "template", "resources", "preset"),
    )
    estimated = (field_at(entry, "platform"), field_at(entry, "preset"))
    if planned != estimated:
        return (
            f"the cost estimate prices {' '.join(map(shown, estimated))}, but the node group runs "
            f"{' '.join(map(shown, planned))}"
        )
    preemptible = has_key(field_at(group.props, "template"), "preemptible")
    capacity = field_at(entry, "capacity")
    if preemptible != (capacity == "spot"):
        planned_capacity = "preemptible (template.preemptible)" if preemptible else "on-demand"
        return f"the cost estimate prices it {shown(capacity)}, but the node group is {planned_capacity}"
    if not is_finite_number(field_at(entry, "usdPerNodeHour")):
        return shown(field_at(entry, "unpriced") or "the estimate gives no price per node-hour", 400)
    return None


def _stack_file_name(group: PlannedResource, entry: Mapping[str, Any] | None) -> str:
    """The group as the user wrote it (`h200`, not its Nebius name `dra-dev-h200`), as the plan's other sections and
    the cost table name it: the estimate pairs the two names (its `name` beside `nodeGroup`); a group it does not
    price is named by its nodes' label (`written_group_name`)."""
    name = field_at(entry, "name")
    return name if isinstance(name, str) and name else written_group_name(group)


@dataclass
class Budget:
    """The node groups priced at their largest size: the total, its parts, the prices' dates and caveats, and a
    violation for each group that cannot be priced."""

    limit: float
    total: float = 0.0
    parts: list[str] = field(default_factory=list)
    dates: set[str] = field(default_factory=set)
    caveats: list[str] = field(default_factory=list)
    unpriced: list[tuple[str | None, str]] = field(default_factory=list)
    # The groups whose rate came from nebius-dra:priceOverrides (the estimate's `priceFrom`), and those rates' dates.
    overridden: list[str] = field(default_factory=list)
    override_dates: set[str] = field(default_factory=set)

    @property
    def over(self) -> bool:
        return round(self.total, 4) > self.limit

    def basis_text(self) -> str:
        """What the rates are, so that no reader takes an override for Nebius's list price: list prices of their
        dates, and which groups' rates came from the stack's overrides, of theirs."""
        listed = _dated(self.dates)
        if not self.overridden:
            return f"list prices of {listed}"
        from_overrides = f"rates from {PRICE_OVERRIDES_ORIGIN} of {_dated(self.override_dates)}"
        if len(self.overridden) == len(self.parts):
            return f"{from_overrides} for every group, no list price"
        return f"list prices of {listed}, but {from_overrides} for {', '.join(self.overridden)}"

    def caveat_text(self) -> str:
        return f" Caveats on these prices: {'; '.join(self.caveats)}." if self.caveats else ""


def _dated(dates: set[str]) -> str:
    return f"{min(dates)}..{max(dates)}" if len(dates) > 1 else next(iter(dates), "?")


def _budget(resources: Sequence[PlannedResource], limit: float) -> Budget:
    estimated = _estimated_groups(resources)
    budget = Budget(limit)
    groups = sorted((r for r in resources if r.type == NODE_GROUP_TYPE), key=lambda r: str(field_at(r.props, "name")))
    for group in groups:
        entry = estimated.get(str(field_at(group.props, "name") or group.name))
        name = shown(_stack_file_name(group, entry))
        reason = _unpriced_reason(group, entry)
        if reason is not None or entry is None:
            budget.unpriced.append(
                (
                    group.urn,
                    f"{named(group)} (node group {name}) cannot be priced: {reason}. So the stack's cost cannot be "
                    f"checked against max-hourly-cost.maxHourlyUsd ({_usd(limit)} per hour). Add the platform and "
                    "preset to the price table (in this project: prices/nebius.yaml, or nebius-dra:priceOverrides "
                    "for one stack), with the price's source and date.",
                )
            )
            continue
        price, nodes = float(field_at(entry, "usdPerNodeHour")), _largest_node_count(group)
        budget.total += price * nodes
        budget.parts.append(f"{name} {nodes:g} x {_usd(price)}")
        if field_at(entry, "priceFrom") == PRICE_OVERRIDES_ORIGIN:
            budget.overridden.append(name)
            budget.override_dates.add(shown(field_at(entry, "priceDate")))
        else:
            budget.dates.add(shown(field_at(entry, "priceDate")))
        budget.caveats += [
            f"{name}: {shown(c, 400)}" for c in as_list(field_at(entry, "caveats")) if isinstance(c, str)
        ]
    return budget


def check_max_hourly_cost(
    resources: Sequence[PlannedResource], config: Mapping[str, Any]
) -> list[tuple[str | None, str]]:
    """The stack's nodes at their largest size (fixed counts, autoscaling maxima) against maxHourlyUsd.

    Node counts, platforms and presets come from the node groups as planned; each node's price comes from the
    program's estimate, which carries the price table and the stack's overrides with every price's source
    and date. A node group that cannot be priced is a violation too: a budget gate must not pass what it
    cannot see.
    """
    limit = _max_hourly_usd(config)
    if limit is None:
        return []
    budget = _budget(resources, limit)
    violations = list(budget.unpriced)
    if budget.over:
        total, budgeted = _usd_against(budget.total, limit)
        violations.append(
            (
                None,
                f"The stack's nodes cost up to {total} per hour ({_usd(budget.total * HOURS_PER_30_DAYS)} "
                f"per 30 days) at their largest size, over max-hourly-cost.maxHourlyUsd {budgeted}: "
                f"{', '.join(budget.parts)} ({budget.basis_text()}; boot disks, network, egress and storage not "
                "included). Lower fixedNodeCount or autoscaling max, choose smaller presets, or raise maxHourlyUsd in "
                "the policy config." + budget.caveat_text(),
            )
        )
    return violations


def max_hourly_cost_pass(resources: Sequence[PlannedResource], config: Mapping[str, Any]) -> str | None:
    """What a pass of max-hourly-cost rests on, or None when it does not pass (or checks nothing): a policy that
    passes reports nothing through the pack, so the offline plan prints this beside the verdicts, and a pass on a
    price the table doubts or that is stale says so."""
    limit = _max_hourly_usd(config)
    if limit is None:
        return None
    budget = _budget(resources, limit)
    if budget.unpriced or budget.over:
        return None
    total, budgeted = _usd_against(budget.total, limit)
    return (
        f"the stack's nodes cost up to {total} per hour at their largest size, within "
        f"maxHourlyUsd {budgeted}: {', '.join(budget.parts)}"
        + (f" ({budget.basis_text()})." if budget.overridden else ".")
        + (f" The pass rests on doubtful or stale prices: {'; '.join(budget.caveats)}." if budget.caveats else "")
    )


def check_spot_ceiling_below_spot_price(
    resources: Sequence[PlannedResource], config: Mapping[str, Any]
) -> list[tuple[str | None, str]]:
    """Nebius places a spot VM only while the spot price is at or below the pricing policy's maximum (pulumi-nebius
    0.6.73 BillingV1PricingPolicyPricingMaxPriceV1Args.max_price): a ceiling below the table's spot price may place
    no node at all."""
    estimated = _estimated_groups(resources)
    found: list[tuple[str | None, str]] = []
    for group in (r for r in resources if r.type == NODE_GROUP_TYPE):
        entry = estimated.get(str(field_at(group.props, "name") or group.name))
        spot = field_at(entry, "spotAboveCeiling")
        if not isinstance(spot, (int, float)):
            continue
        found.append(
            (
                group.urn,
                f"{named(group)} is a spot group whose maxPricePerGpuHour ceiling ({shown(field_at(entry, 'basis'))}) is "
                f"below the price table's spot price {_usd(float(spot))} per GPU-hour: while the spot price stays "
                "above the ceiling Nebius places no node of it. Raise the ceiling, or confirm the current spot price.",
            )
        )
    return found
