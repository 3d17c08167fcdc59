"""How node groups are rolled out and repaired: strategy and auto-repair, the rules beyond each field's shape.

The schema has checked each field's type, pattern and bound. Here are the rules the Nebius API
states across fields (pulumi-nebius 0.6.73 docstrings and docs.nebius.com), which the API would
otherwise refuse in the middle of `pulumi up`, and the one the stack adds for reserved capacity:

- `strategy`: max surge and max unavailable may not both be 0 ("This value cannot be 0 if
  maxUnavailable is also set to 0"); the stack also refuses a percentage that rounds both to 0
  nodes at the group's smallest size, where no roll-out could ever replace a node.
- `autoRepair`: a condition takes a timeout or `disabled: true` ("Cannot be set alongside");
  a condition type and status appear once; a timeout lasts at least `MIN_REPAIR_TIMEOUT_S` (the
  stack's bound: the API states none, and a shorter one recreates nodes on blips they recover from).
- a reserved `STRICT` group may not surge, since a surge node needs a free block of the reservation
  and otherwise stalls the roll-out (capacity itself is read in config/capacity.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from components.config.errors import ConfigProblems
from components.input.node_groups import MIN_REPAIR_TIMEOUT_S, AutoRepairConditionInput, StrategyInput
from components.model import AutoRepairCondition, Capacity, NodeAmount, RolloutStrategy, duration_seconds


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
    size_from: str,
    where: str,
    problems: ConfigProblems,
    field: str = "strategy",
) -> RolloutStrategy:
    """The strategy with the group's defaults filled in; refused when no roll-out could ever replace a node.

    `size_from` names the setting the smallest size was read from: the problem names it, so that it is held
    back while that setting is refused and a default stands in for it (`MeaningProblems`). `field` names
    the strategy inside `where` (empty when `where` is the strategy's own key).
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
            f"and no unavailable node at {size} node(s) ({size_from}), so a roll-out could never replace a node (Nebius refuses "
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
        elif entry.timeout is not None and duration_seconds(entry.timeout) < MIN_REPAIR_TIMEOUT_S:
            problems.add(
                where,
                f"{place} got timeout {entry.timeout}; expected at least {MIN_REPAIR_TIMEOUT_S}s: Nebius's shortest own "
                f"rule waits {MIN_REPAIR_TIMEOUT_S} seconds (boot-disk I/O errors, docs.nebius.com/kubernetes/"
                "maintenance/health-checks), and a shorter timeout deletes and recreates the node, with its pods, on "
                "a blip it recovers from (a kubelet restart); use disabled: true to never repair on this condition",
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


def check_reserved_surge(
    capacity: Capacity,
    strategy: RolloutStrategy,
    smallest_size: int,
    size_from: str,
    where: str,
    problems: ConfigProblems,
) -> None:
    """A reserved STRICT group may not surge: the extra node needs a free block, and without one the roll-out stalls."""
    if capacity.reserved and capacity.reservation_policy == "STRICT" and strategy.surge_nodes(max(smallest_size, 1)):
        problems.add(
            where,
            f"capacity is reserved STRICT but strategy.maxSurge is {strategy.max_surge} at {max(smallest_size, 1)} "
            f"node(s) ({size_from}): a surge node must come from a "
            "free block of the reservation, and without one the roll-out stalls (Nebius solutions-library PR #1091); "
            "set strategy.maxSurge to 0 and maxUnavailable to 1 or more",
        )
