"""The stack's cost estimate, registered as data so that the plan and the policy pack read the same figures.

A component with no children and no cloud resource: its inputs are the estimate of
`components/values/cost.py` (per group: platform, preset, node counts, price per node-hour with
its source and date, or why it is unpriced). `pulumi preview --policy-pack` hands those inputs to
the policy `max-hourly-cost`, which multiplies each price by the node counts of the real
`Mk8sV1NodeGroup` resources; the offline plan prints them. Nothing here is sent to Nebius.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi

from components.values.cost import StackCost

COST_ESTIMATE_TYPE = "nebius-dra:cost:CostEstimate"


@dataclass
class CostEstimateArgs:
    estimate: StackCost
    # What each team's GPU quota costs (components/values/queue_cost.py); empty without queues.
    teams: list[dict[str, Any]] = field(default_factory=list)


class CostEstimate(pulumi.ComponentResource):
    estimate: StackCost

    def __init__(self, name: str, args: CostEstimateArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(
            COST_ESTIMATE_TYPE,
            name,
            {**args.estimate.as_document(), **({"teams": args.teams} if args.teams else {})},
            opts,
        )
        self.estimate = args.estimate
        self.register_outputs({})
