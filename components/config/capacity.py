"""Where a node group's VMs come from: on-demand, reserved capacity blocks or spot, the rules beyond each field's shape.

The schema has checked each field's type, pattern and bound. Here are the rules the Nebius API
states across fields (pulumi-nebius 0.6.73 docstrings and docs.nebius.com), which the API would
otherwise refuse in the middle of `pulumi up`:

- `capacity`: `FORBID` takes no capacity block group ("It's an error to provide reservation_ids
  with policy = FORBID"); preemptible node groups take no reservation at all
  (docs.nebius.com/kubernetes/node-groups/reservations: "Preemptible node groups and node groups
  without GPUs do not support reservations").
"""

from __future__ import annotations

from decimal import Decimal

from components.config.errors import ConfigProblems, shown
from components.dra_constants import ON_DEMAND_CAPACITY, RESERVED_CAPACITY, SPOT_CAPACITY
from components.input.node_groups import CapacityInput
from components.model import Capacity

DEFAULT_RESERVATION_POLICY = "STRICT"
# Nebius IDs start with their resource kind (`computeinstance-e00...`, `mk8scluster-e00...`), a capacity block
# group's with `capacityblockgroup-` (the form the schema's field description gives); NEBIUS_ID_PATTERN takes an
# ID of any kind, so one of another kind is refused here rather than by Nebius at `pulumi up`.
CAPACITY_BLOCK_GROUP_PREFIX = "capacityblockgroup-"


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
