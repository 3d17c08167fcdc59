"""What each team's GPU quota costs: its part of its group's nodes, at the nodes' price.

A quota is a promise of GPUs, not a bill: the nodes cost the same whoever runs on them. This
prices each team's part of the nodes the stack pays for, so a platform team can say what a
team's quota stands for (the cost section of the plan lists it beside the node groups).

The part is the quota's share of the group's GPUs while the group's quotas fit in them (the GPUs no
quota holds stay unassigned), and the quota's share of all the group's quotas where they add up past
its GPUs (a cohort's teams may be promised more than the nodes hold, since they borrow each other's
unused GPUs): two teams with 1 GPU each on one 1-GPU node at $3.50/h are $1.75/h each, not $3.50/h
each. So the teams' costs on a group never add up past what its nodes cost, and summing the column
counts no node twice. "What the quota would cost alone" would read as a bill for GPUs the team may
never hold, and overstate the stack's cost by the oversubscription.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal
from typing import Any

from components.config.queues import group_gpus
from components.model import StackConfig
from components.values.cost import HOURS_PER_30_DAYS, NodePrice, node_price, usd


def team_quota_costs(config: StackConfig) -> list[dict[str, Any]]:
    """One entry per team and group: GPUs, share of the group's GPUs at its largest, price per hour and 30 days."""
    groups = {group.name: group for group in config.gpu_node_groups}
    promised: Counter[str] = Counter()
    for team in config.queues.teams:
        for quota in team.quotas:
            promised[quota.group] += quota.gpus
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
                "groupQuotaGpus": promised[group.name],
            }
            price = node_price(config.prices, group.platform, group.preset, group.spot)
            if isinstance(price, NodePrice) and group.gpus_per_node:
                nodes = price.usd_per_node_hour * capacity / group.gpus_per_node
                hourly = nodes * quota.gpus / max(promised[group.name], capacity)
                entry.update(usdPerHour=usd(hourly), usdPer30Days=usd(hourly * HOURS_PER_30_DAYS))
            else:
                entry.update(
                    usdPerHour=None, usdPer30Days=None, unpriced=price if isinstance(price, str) else "no GPUs"
                )
            entries.append(entry)
    return entries
