"""Each team's GPU quota in the cost section: its share of a group's GPUs and what its part of the nodes costs.

Reads the `teams` entries of the registered estimate (components/values/queue_cost.py); a stack
without queues has none, and then nothing is printed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from components.config.errors import shown_name
from components.config.reading import markdown_text, printable

TEAM_HEADER = ("team", "namespace", "group", "GPUs", "share of group", "cohort", "per hour", "per 30 days")


Money = Callable[[float], str]


def _priced(value: Any, money: Money) -> str:
    return money(float(value)) if isinstance(value, (int, float)) else "unpriced"


def team_rows(document: Mapping[str, Any], money: Money) -> list[tuple[str, ...]]:
    teams = document.get("teams") if isinstance(document, Mapping) else None
    rows: list[tuple[str, ...]] = []
    for entry in teams if isinstance(teams, Sequence) else []:
        borrowing = entry.get("borrowingLimit")
        cohort = entry.get("cohort") or "-"
        if entry.get("cohort"):
            cohort += (
                f" (borrows up to {borrowing:g})" if isinstance(borrowing, (int, float)) else " (borrows any unused)"
            )
        rows.append(
            (
                # Names from the stack, shown as every label shows one (`shown_name`): a plain name as it is, one that
                # may hold a credential by its shape.
                shown_name(entry["team"]),
                shown_name(entry["namespace"]),
                shown_name(entry["group"]),
                f"{entry['gpus']:g}",
                f"{entry['gpus']:g} of {entry['groupGpus']:g} ({float(entry['share']) * 100:.0f}%)",
                cohort,
                _priced(entry.get("usdPerHour"), money),
                _priced(entry.get("usdPer30Days"), money),
            )
        )
    return rows


def oversubscribed_notes(document: Mapping[str, Any]) -> list[str]:
    """A group whose quotas add up past its GPUs: how its teams are priced, so no one reads the column as a bill per
    team for the whole node (components/values/queue_cost.py)."""
    teams = document.get("teams") if isinstance(document, Mapping) else None
    promised: dict[str, tuple[Any, Any]] = {}
    for entry in teams if isinstance(teams, Sequence) else []:
        quotas, capacity = entry.get("groupQuotaGpus"), entry.get("groupGpus")
        if isinstance(quotas, (int, float)) and isinstance(capacity, (int, float)) and quotas > capacity:
            promised[str(entry["group"])] = (quotas, capacity)
    return [
        f"quotas on {group} add up to {quotas:g} GPUs, past its {capacity:g}: each team is priced at its quota's "
        "share of them, so the teams' costs add up to the group's nodes, not past them"
        for group, (quotas, capacity) in promised.items()
    ]


def render_teams_text(document: Mapping[str, Any], money: Money) -> list[str]:
    rows = team_rows(document, money)
    if not rows:
        return []
    widths = [max(len(row[i]) for row in [TEAM_HEADER, *rows]) for i in range(len(TEAM_HEADER))]
    table = [TEAM_HEADER, tuple("-" * width for width in widths), *rows]
    lines = ["  GPU quotas per team (Kueue; the share of the nodes above each quota stands for):"]
    lines += [
        "    " + "  ".join(printable(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in table
    ]
    return lines + [f"    note: {note}" for note in oversubscribed_notes(document)]


def render_teams_markdown(document: Mapping[str, Any], money: Money) -> list[str]:
    rows = team_rows(document, money)
    if not rows:
        return []

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(markdown_text(cell).replace("|", "\\|") for cell in cells) + " |"

    return [
        "",
        "GPU quotas per team (Kueue):",
        "",
        line(TEAM_HEADER),
        line(["---"] * len(TEAM_HEADER)),
        *map(line, rows),
    ] + [text for note in oversubscribed_notes(document) for text in ("", f"- {markdown_text(note)}")]
