"""How node groups are run: roll-out strategy, auto-repair and capacity, the rules beyond each field's shape.

The schema has checked each field's type, pattern and bound. Here are the rules the Nebius API
states across fields (pulumi-nebius 0.6.73 docstrings and docs.nebius.com), which the API would
otherwise refuse in the middle of `pulumi up`, and the one the stack adds for reserved capacity:

- `strategy`: max surge and max unavailable may not both be 0 ("This value cannot be 0 if
  maxUnavailable is also set to 0"); the stack also refuses a percentage that rounds both to 0
  nodes at the group's smallest size, where no roll-out could ever replace a node.
- `autoRepair`: a condition takes a timeout or `disabled: true` ("Cannot be set alongside");
  a condition type and status appear once.
- `capacity`: `FORBID` takes no capacity block group ("It's an error to provide reservation_ids
  with policy = FORBID"); preemptible node groups take no reservation at all
  (docs.nebius.com/kubernetes/node-groups/reservations: "Preemptible node groups and node groups
  without GPUs do not support reservations"); a reserved `STRICT` group may not surge, since a surge
  node needs a free block of the reservation and otherwise stalls the roll-out.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from components.config.errors import ConfigProblems, shown
from components.config.schema import AutoRepairConditionInput, CapacityInput, StrategyInput
from components.dra_constants import ON_DEMAND_CAPACITY, RESERVED_CAPACITY, SPOT_CAPACITY
from components.model import AutoRepairCondition, Capacity, NodeAmount, RolloutStrategy

DEFAULT_RESERVATION_POLICY = "STRICT"
# Nebius IDs start with their resource kind (`computeinstance-e00...`, `mk8scluster-e00...`), a capacity block
# group's with `capacityblockgroup-` (the form the schema's field description gives); NEBIUS_ID_PATTERN takes an
# ID of any kind, so one of another kind is refused here rather than by Nebius at `pulumi up`.
CAPACITY_BLOCK_GROUP_PREFIX = "capacityblockgroup-"


def _amount(value: int | str | None, default: NodeAmount) -> NodeAmount:
    if value is None:
        return default
    if isinstance(value, str):
        return NodeAmount(percent=int(value.removesuffix("%")))
    return NodeAmount(count=value)


def parse_strategy(
    given: StrategyInput,
    defaults: RolloutStrategy,
    smallest_size: int,
    where: str,
    problems: ConfigProblems,
    field: str = "strategy",
) -> RolloutStrategy:
    """The strategy with the group's defaults filled in; refused when no roll-out could ever replace a node.

    `field` names the strategy inside `where` (empty when `where` is the strategy's own key).
    """
    strategy = RolloutStrategy(
        max_surge=_amount(given.maxSurge, defaults.max_surge),
        max_unavailable=_amount(given.maxUnavailable, defaults.max_unavailable),
        drain_timeout=given.drainTimeout if given.drainTimeout is not None else defaults.drain_timeout,
    )
    size = max(smallest_size, 1)
    if strategy.surge_nodes(size) == 0 and strategy.unavailable_nodes(size) == 0:
        problems.add(
            where,
            f"{field + ': ' if field else ''}maxSurge {strategy.max_surge} and maxUnavailable {strategy.max_unavailable} allow no extra "
            f"and no unavailable node at {size} node(s), so a roll-out could never replace a node (Nebius refuses "
            "both at 0: pulumi-nebius 0.6.73 strategy.max_surge); set maxUnavailable to 1 or maxSurge to 1",
        )
    return strategy


def parse_auto_repair(
    entries: Sequence[AutoRepairConditionInput], where: str, problems: ConfigProblems, field: str = "autoRepair"
) -> tuple[AutoRepairCondition, ...]:
    """`field` names the list inside `where` (empty when `where` is the list's own key)."""
    conditions: list[AutoRepairCondition] = []
    seen: set[tuple[str, str]] = set()
    for index, entry in enumerate(entries):
        place = f"{field}[{index}] ({entry.type}={entry.status})"
        if entry.disabled and entry.timeout is not None:
            problems.add(
                where,
                f"{place} sets both timeout and disabled; Nebius takes one (pulumi-nebius 0.6.73 auto_repair.conditions: "
                'timeout "Cannot be set alongside disabled"): a timeout to tune the repair, or disabled: true to turn '
                "the default rule off",
            )
        elif not entry.disabled and entry.timeout is None:
            problems.add(
                where,
                f"{place} sets neither timeout nor disabled: true; give the time the condition must last before "
                "Nebius repairs the node (for example timeout: 10m), or disabled: true to turn the default rule off",
            )
        if (entry.type, entry.status) in seen:
            problems.add(where, f"{place} repeats condition {entry.type}={entry.status}; give each condition once")
        seen.add((entry.type, entry.status))
        conditions.append(
            AutoRepairCondition(
                type=entry.type,
                status=entry.status,
                timeout=None if entry.disabled else entry.timeout,
                disabled=entry.disabled,
            )
        )
    return tuple(conditions)


def parse_capacity(given: CapacityInput | None, where: str, problems: ConfigProblems) -> Capacity:
    if given is None:
        return Capacity()
    policy: str | None = given.reservationPolicy
    blocks, price = tuple(given.capacityBlockGroupIds), given.maxPricePerGpuHour
    if price is not None and given.type != SPOT_CAPACITY:
        problems.add(
            where,
            f"capacity.maxPricePerGpuHour is set on {given.type} capacity; a maximum price applies to spot capacity only "
            "(type: spot)",
        )
    if given.type == SPOT_CAPACITY and (policy is not None or blocks):
        problems.add(
            where,
            "capacity is spot, but sets reservationPolicy or capacityBlockGroupIds: Nebius preemptible node groups "
            "take no reservation (docs.nebius.com/kubernetes/node-groups/reservations); remove them, or use type: reserved",
        )
        policy, blocks = None, ()
    if given.type == ON_DEMAND_CAPACITY and (policy not in (None, "FORBID") or blocks):
        got = [f"reservationPolicy {shown(policy)}"] if policy not in (None, "FORBID") else []
        got += [f"{len(blocks)} capacity block group(s)"] if blocks else []
        problems.add(
            where,
            "capacity is on-demand, which takes only reservationPolicy FORBID (to keep the group off your capacity "
            f"blocks) and no capacityBlockGroupIds; got {' and '.join(got)}: use type: reserved for reserved capacity",
        )
        policy, blocks = None, ()
    if given.type == RESERVED_CAPACITY:
        if policy == "FORBID":
            problems.add(
                where,
                "capacity is reserved with reservationPolicy FORBID, which never uses a capacity block; use AUTO "
                "(reserved first, then pay-as-you-go) or STRICT (reserved only), or type: on-demand with FORBID",
            )
        policy = policy or DEFAULT_RESERVATION_POLICY
    foreign = [block for block in blocks if not block.startswith(CAPACITY_BLOCK_GROUP_PREFIX)]
    if foreign:
        problems.add(
            where,
            f"capacity.capacityBlockGroupIds has {shown(foreign)}, which is not the ID of a capacity block group "
            f"(those start with {CAPACITY_BLOCK_GROUP_PREFIX})",
        )
    if price is not None and Decimal(price) == 0:
        problems.add(
            where,
            f"capacity.maxPricePerGpuHour got {shown(price)}: a spot VM is never offered at no price, so no node "
            'would ever start; give the most you will pay per GPU-hour, such as "3.515", or leave it out',
        )
    if len(set(blocks)) != len(blocks):
        repeated = sorted({block for block in blocks if blocks.count(block) > 1})
        problems.add(where, f"capacity.capacityBlockGroupIds repeats {', '.join(repeated)}; list each group once")
    return Capacity(
        type=given.type,
        reservation_policy=policy,
        capacity_block_group_ids=blocks,
        max_price_per_gpu_hour=price if given.type == SPOT_CAPACITY else None,
    )


def check_reserved_surge(
    capacity: Capacity, strategy: RolloutStrategy, smallest_size: int, where: str, problems: ConfigProblems
) -> None:
    """A reserved STRICT group may not surge: the extra node needs a free block, and without one the roll-out stalls."""
    if capacity.reserved and capacity.reservation_policy == "STRICT" and strategy.surge_nodes(max(smallest_size, 1)):
        problems.add(
            where,
            f"capacity is reserved STRICT but strategy.maxSurge is {strategy.max_surge}: a surge node must come from a "
            "free block of the reservation, and without one the roll-out stalls (Nebius solutions-library PR #1091); "
            "set strategy.maxSurge to 0 and maxUnavailable to 1 or more",
        )
