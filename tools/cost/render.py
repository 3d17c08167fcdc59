"""A cost estimate, and the difference between two, as text and Markdown.

Both read the plain document `components/values/cost.py` builds (`StackCost.as_document()`),
which is also what the program registers as `nebius-dra:cost:CostEstimate`: the plan prints the
registered one, `python -m tools.cost` the one it computes for a branch. Numbers may arrive as
floats (the mock engine returns every number as one), so counts are shown with `:g`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from components.config.reading import markdown_text, printable
from components.values.cost import price_basis
from policies.dra_guardrails.consequences import consequence_of_setting
from tools.cost.teams import render_teams_markdown, render_teams_text

Document = Mapping[str, Any]
NONE = "-"


def money(amount: float, signed: bool = False) -> str:
    """`$1,234.56`; below a dollar up to four decimals (`$0.528`); `signed` adds + to a rise."""
    sign = "-" if amount < 0 else ("+" if signed and amount > 0 else "")
    value = abs(amount)
    text = f"{value:,.2f}" if value >= 1 or round(value, 4) == 0 else f"{value:.4f}".rstrip("0")
    if value < 1 and len(text.split(".")[1]) < 2:
        text = f"{value:.2f}"
    return f"{sign}${text}"


def span(low: float, high: float, signed: bool = False) -> str:
    return money(low, signed) if round(low, 4) == round(high, 4) else f"{money(low, signed)}..{money(high, signed)}"


def _range(document: Any, key: str, signed: bool = False) -> str:
    bounds = document.get(key) if isinstance(document, Mapping) else None
    if not isinstance(bounds, Mapping):
        return NONE
    return span(float(bounds.get("min", 0)), float(bounds.get("max", 0)), signed)


def nodes(group: Mapping[str, Any]) -> str:
    low, high = group.get("minNodes", 0), group.get("maxNodes", 0)
    return f"{low:g}" if low == high else f"{low:g}..{high:g}"


def _groups(document: Document) -> list[Mapping[str, Any]]:
    groups = document.get("groups")
    return [group for group in groups if isinstance(group, Mapping)] if isinstance(groups, Sequence) else []


def _row(group: Mapping[str, Any]) -> tuple[str, ...]:
    where = f"{group.get('platform')} {group.get('preset')}"
    if group.get("usdPerNodeHour") is None:
        return (
            str(group.get("name")),
            where,
            str(group.get("capacity")),
            nodes(group),
            "unpriced",
            NONE,
            NONE,
            NONE,
        )
    return (
        str(group.get("name")),
        where,
        str(group.get("capacity")),
        nodes(group),
        money(float(group["usdPerNodeHour"])),
        _range(group, "hourlyUsd"),
        _range(group, "usdPer30Days"),
        str(group.get("priceDate")) + (" (see notes)" if group.get("caveats") else ""),
    )


HEADER = ("group", "platform / preset", "capacity", "nodes", "per node-hour", "per hour", "per 30 days", "price of")


def _total_row(document: Document) -> tuple[str, ...]:
    total = document.get("total") or {}
    unpriced = total.get("unpriced") or []
    label = f"total of priced groups ({len(unpriced)} unpriced)" if unpriced else "total"
    return (label, "", "", "", "", _range(total, "hourlyUsd"), _range(total, "usdPer30Days"), doubted_total(total))


def doubted_total(total: Mapping[str, Any]) -> str:
    """What a total says when it rests on a price the table doubts or that is stale (the notes say why)."""
    doubted = [str(name) for name in total.get("doubtedPrices") or []]
    return f"rests on doubtful or stale prices of {', '.join(doubted)} (see notes)" if doubted else ""


def _sources(document: Document) -> list[tuple[str, str, str]]:
    """(date, source, file or key it came from) of every price the estimate used, oldest first."""
    seen: dict[tuple[str, str, str], None] = {}
    for group in _groups(document):
        if group.get("usdPerNodeHour") is not None:
            seen[(str(group.get("priceDate")), str(group.get("priceSource")), str(group.get("priceFrom")))] = None
    return sorted(seen)


def _notes(document: Document) -> list[str]:
    notes = []
    groups = _groups(document)
    unpriced = [group for group in groups if group.get("usdPerNodeHour") is None]
    notes += [f"{group.get('name')} is unpriced: {group.get('unpriced')}" for group in unpriced]
    if unpriced:
        notes.append(
            f"{len(unpriced)} group(s) unpriced and left out of the total: add their prices to prices/nebius.yaml, or "
            "to nebius-dra:priceOverrides for this stack. A missing price is never guessed."
        )
    notes += [
        f"{group.get('name')}: {caveat}"
        for group in groups
        for caveat in (group.get("caveats") or [])
        if isinstance(caveat, str)
    ]
    spot = [group for group in groups if group.get("note")]
    if spot:
        notes.append(f"{', '.join(str(g.get('name')) for g in spot)}: {spot[0].get('note')}")
    return notes


def _price_basis(document: Document) -> str:
    """The document's `priceBasis`; for one written before it had one (a base's), the same read from its groups."""
    basis = document.get("priceBasis")
    if isinstance(basis, str):
        return basis
    return price_basis(
        (str(group.get("name")), str(group.get("priceFrom")))
        for group in _groups(document)
        if group.get("usdPerNodeHour") is not None
    )


def scope(document: Document) -> str:
    return (
        f"{document.get('currency', 'USD')}, GPU and CPU nodes at {printable(_price_basis(document))}; not included: "
        f"{document.get('notIncluded', 'disks, network, egress, storage')}"
    )


def _table(rows: Sequence[tuple[str, ...]], header: tuple[str, ...]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in [header, *rows]]


def render_cost_text(document: Document) -> list[str]:
    rows = [*map(_row, _groups(document)), _total_row(document)]
    lines = [f"Cost ({scope(document)})"]
    lines += ["  " + line for line in _table(rows, HEADER)]
    lines += [f"  note: {printable(note)}" for note in _notes(document)]
    lines += [
        "  prices:",
        *(
            f"    {printable(date)}  {printable(source)}  (from {printable(origin)})"
            for date, source, origin in _sources(document)
        ),
    ]
    return lines + render_teams_text(document, money)


def markdown_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def render_cost_markdown(document: Document) -> list[str]:
    lines = [f"_{scope(document)}._", "", markdown_row(HEADER), markdown_row(["---"] * len(HEADER))]
    lines += [markdown_row(row) for row in map(_row, _groups(document))]
    total = _total_row(document)
    lines.append(markdown_row([f"**{total[0]}**", *total[1:5], f"**{total[5]}**", f"**{total[6]}**", total[7]]))
    # A price table's source, note and origin are outside text: escaped, so a link, an image or HTML in them
    # shows as the characters it is made of in the PR summary.
    lines += [""] + [f"- {markdown_text(note)}" for note in _notes(document)]
    lines += [
        f"- prices of {markdown_text(date)}: {markdown_text(source)} (from {markdown_text(origin)})"
        for date, source, origin in _sources(document)
    ]
    return lines + render_teams_markdown(document, money)


def _bounds(document: Any, key: str) -> tuple[float, float] | None:
    bounds = document.get(key) if isinstance(document, Mapping) else None
    if not isinstance(bounds, Mapping):
        return None
    return float(bounds.get("min", 0)), float(bounds.get("max", 0))


def _change(base: tuple[float, float] | None, head: tuple[float, float] | None) -> tuple[float, float]:
    low_base, high_base = base or (0.0, 0.0)
    low_head, high_head = head or (0.0, 0.0)
    return low_head - low_base, high_head - high_base


def _describe(group: Mapping[str, Any] | None) -> str:
    if group is None:
        return NONE
    if group.get("usdPerNodeHour") is None:
        return f"{nodes(group)} x {group.get('preset')}: unpriced"
    caveat = " (price with caveats)" if group.get("caveats") else ""
    return f"{nodes(group)} x {group.get('preset')}: {_range(group, 'hourlyUsd')}{caveat}"


DIFF_HEADER = ("group", "base", "this change", "change per hour", "change per 30 days")


def diff_rows(base: Document | None, head: Document) -> list[tuple[str, ...]]:
    """Per group (matched by name) and in total: base, head, and head minus base at min and max node counts."""
    base_groups = {str(g.get("name")): g for g in _groups(base or {})}
    head_groups = {str(g.get("name")): g for g in _groups(head)}
    names = [*head_groups, *(name for name in base_groups if name not in head_groups)]
    rows: list[tuple[str, ...]] = []
    for name in names:
        old, new = base_groups.get(name), head_groups.get(name)
        hourly = _change(_bounds(old, "hourlyUsd"), _bounds(new, "hourlyUsd"))
        unpriced = any(g is not None and g.get("usdPerNodeHour") is None for g in (old, new))
        change = "unknown (unpriced)" if unpriced else span(*hourly, signed=True)
        monthly = (
            "unknown (unpriced)"
            if unpriced
            else span(*_change(_bounds(old, "usdPer30Days"), _bounds(new, "usdPer30Days")), signed=True)
        )
        rows.append((name, _describe(old), _describe(new), change, monthly))
    base_total = (base or {}).get("total")
    head_total = head.get("total")
    rows.append(
        (
            "total",
            _range(base_total, "hourlyUsd") if base is not None else NONE,
            _range(head_total, "hourlyUsd"),
            span(*_change(_bounds(base_total, "hourlyUsd"), _bounds(head_total, "hourlyUsd")), signed=True),
            span(*_change(_bounds(base_total, "usdPer30Days"), _bounds(head_total, "usdPer30Days")), signed=True)
            + (
                f" ({doubted_total(head_total)})"
                if isinstance(head_total, Mapping) and doubted_total(head_total)
                else ""
            ),
        )
    )
    return rows


# The cost document's fields of a group, as the stack settings they come from (GPU group, system group).
_SETTINGS = {
    "platform": ("gpuNodeGroups[].platform", "systemNodePlatform"),
    "preset": ("gpuNodeGroups[].preset", "systemNodePreset"),
    "capacity": ("gpuNodeGroups[].capacity", None),
    "nodes": ("gpuNodeGroups[].fixedNodeCount", "systemNodeCount"),
}


def setting_move(setting: str, before: Any, after: Any) -> str:
    """A stack setting's change as the user wrote the setting (`capacity on-demand -> spot`): `make cost` and the
    plan's What changed say it in these words, beside the provider fields it moves."""
    return f"{setting} {printable(str(before))} -> {printable(str(after))}"


def _setting_value(group: Mapping[str, Any], field: str) -> Any:
    """A group's value of `field` as the stack file sets it: the node count as `fixedNodeCount` (one number) or
    `autoscaling` (min..max), never the document's maxNodes."""
    if field != "nodes":
        return group.get(field)
    low, high = group.get("minNodes"), group.get("maxNodes")
    return high if low == high else f"{low}..{high}"


def _setting_name(group: Mapping[str, Any], old: Mapping[str, Any], field: str, setting: str) -> str:
    """The stack key a changed field comes from: `fixedNodeCount`, `autoscaling` (either side autoscaled) or the
    system group's `systemNodeCount`; other fields by their own name."""
    if field != "nodes":
        return field
    autoscaled = any(g.get("minNodes") != g.get("maxNodes") for g in (group, old))
    return "autoscaling" if autoscaled and group.get("kind") == "gpu" else setting.rsplit(".", 1)[-1]


def change_notes(
    base: Document | None,
    head: Document,
    surge_costs: Mapping[str, str] | None = None,
    replaced_by: str | None = None,
) -> list[str]:
    """What each changed field of a group does to its nodes, as the table of consequences says
    (policies/dra_guardrails/consequences.py), with the surge nodes' cost of a change that replaces them
    (`surge_costs`: by group name, what a roll-out's surge costs at this change); `replaced_by` names a change that
    replaces every group's nodes (a kubernetesVersion minor)."""
    base_groups = {str(g.get("name")): g for g in _groups(base or {})}
    notes = []
    for group in _groups(head):
        old = base_groups.get(str(group.get("name")))
        if old is None:
            continue
        name = str(group.get("name"))
        replaces = False
        for field, (gpu_setting, system_setting) in _SETTINGS.items():
            setting = gpu_setting if group.get("kind") == "gpu" else system_setting
            row = consequence_of_setting(setting) if setting else None
            before, after = _setting_value(old, field), _setting_value(group, field)
            if row is None or setting is None or before == after:
                continue
            replaces = replaces or row.effect.replaces_nodes
            notes.append(
                f"{name}: {setting_move(_setting_name(group, old, field, setting), before, after)}: "
                f"{row.effect.value}: {row.does}"
            )
        if replaced_by is not None and not replaces:
            notes.append(f"{name}: {replaced_by}: every node replaced")
        if (replaces or replaced_by is not None) and surge_costs is not None:
            notes.append(f"{name}: roll-out surge: {surge_costs.get(name, 'not known')}")
    return notes


def with_protected_kept(base: Document | None, head: Document, protected: bool) -> tuple[Document, list[str]]:
    """`head` as `pulumi up` leaves it: a GPU group the base deployed with Pulumi's protect option and this change
    leaves out is not deleted (Pulumi refuses to delete a protected resource,
    https://www.pulumi.com/docs/iac/concepts/options/protect/), so it keeps its cost; with the notes that say so."""
    names = {str(g.get("name")) for g in _groups(head)}
    kept = [g for g in _groups(base or {}) if protected and g.get("kind") == "gpu" and str(g.get("name")) not in names]
    if not kept:
        return head, []
    total = dict(head.get("total") or {})
    for key in ("hourlyUsd", "usdPer30Days"):
        low, high = _bounds(total, key) or (0.0, 0.0)
        for group in kept:
            extra_low, extra_high = _bounds(group, key) or (0.0, 0.0)
            low, high = low + extra_low, high + extra_high
        total[key] = {"min": round(low, 4), "max": round(high, 4)}
    doubted = [str(name) for name in ((base or {}).get("total") or {}).get("doubtedPrices") or []]
    kept_names = {str(g.get("name")) for g in kept}
    total["doubtedPrices"] = [*(total.get("doubtedPrices") or []), *(n for n in doubted if n in kept_names)]
    notes = [
        f"{group.get('name')}: left out of the stack but protected (nebius-dra:protect): `pulumi up` refuses to delete "
        "it and fails after creating the rest, so it keeps running and billing (no saving) until the protection is "
        "lifted (docs/operating.md#tearing-down)"
        for group in kept
    ]
    return {**head, "groups": [*_groups(head), *kept], "total": total}, notes


def render_diff_text(
    base: Document | None,
    head: Document,
    base_label: str,
    surge_costs: Mapping[str, str] | None = None,
    replaced_by: str | None = None,
) -> list[str]:
    """The difference, and what the change does (change_notes: with `surge_costs`, what its surge nodes cost)."""
    lines = [f"Cost change against {base_label} (per hour at min..max nodes)"]
    lines += ["  " + line for line in _table(diff_rows(base, head), DIFF_HEADER)]
    return lines + [f"  what it does: {note}" for note in change_notes(base, head, surge_costs, replaced_by)]


def render_diff_markdown(
    base: Document | None,
    head: Document,
    base_label: str,
    surge_costs: Mapping[str, str] | None = None,
    replaced_by: str | None = None,
) -> list[str]:
    rows = diff_rows(base, head)
    lines = [f"Against {base_label}, per hour at min..max nodes:", ""]
    lines += [markdown_row(DIFF_HEADER), markdown_row(["---"] * len(DIFF_HEADER))]
    lines += [markdown_row(row) for row in rows[:-1]]
    lines.append(markdown_row([f"**{cell}**" if cell else cell for cell in rows[-1]]))
    notes = change_notes(base, head, surge_costs, replaced_by)
    return lines + ([""] + [f"- what it does: {markdown_text(note)}" for note in notes] if notes else [])
