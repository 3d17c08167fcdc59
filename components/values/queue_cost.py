"""What each team's GPU quota costs: its GPUs at the per-GPU share of its group's node price.

A quota is a promise of GPUs, not a bill: the nodes cost the same whoever runs on them. This
prices each team's share of the nodes the stack pays for, so a platform team can say what a
team's quota stands for (the cost section of the plan lists it beside the node groups).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from components.config.queues import group_gpus
from components.model import StackConfig
from components.values.cost import HOURS_PER_30_DAYS, NodePrice, node_price, usd


def team_quota_costs(config: StackConfig) -> list[dict[str, Any]]:
    """One entry per team and group: GPUs, share of the group's GPUs at its largest, price per hour and 30 days."""
    groups = {group.name: group for group in config.gpu_node_groups}
    entries = []
    for team in config.queues.teams:
        for quota in team.quotas:
            group = groups[quota.group]
            capacity = group_gpus(group)
            entry: dict[str, Any] = {
                "team": team.name,
                "namespace": team.namespace,
                "cohort": team.cohort,
                "group": group.name,
                "gpus": quota.gpus,
                "groupGpus": capacity,
                "share": usd(Decimal(quota.gpus) / Decimal(capacity), 4) if capacity else 0.0,
                "borrowingLimit": quota.borrowing_limit,
            }
            price = node_price(config.prices, group.platform, group.preset, group.spot)
            if isinstance(price, NodePrice) and group.gpus_per_node:
                hourly = price.usd_per_node_hour / group.gpus_per_node * quota.gpus
                entry.update(usdPerHour=usd(hourly), usdPer30Days=usd(hourly * HOURS_PER_30_DAYS))
            else:
                entry.update(
                    usdPerHour=None, usdPer30Days=None, unpriced=price if isinstance(price, str) else "no GPUs"
                )
            entries.append(entry)
    return entries
