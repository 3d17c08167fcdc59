"""A plan written out three ways: text for a terminal or a PR comment, Markdown, JSON.

The text and Markdown forms put the verdict first (can this be applied?), then what would be
created, then how long it would take, so a reviewer can stop reading as soon as they know
enough.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tools.cost.render import render_cost_markdown, render_cost_text
from tools.plan.driver_line import DriverLineChange
from tools.plan.graph import DURATION_ESTIMATES, minutes, render_mermaid
from tools.plan.model import Plan
from tools.plan.tree import render_tree

POLICY_SOURCE = "policies/dra_rules.py"


def _stack_title(plan: Plan) -> str:
    parent = plan.roots[0].resource.parent if plan.roots else ""
    return f"{parent.rsplit('::', 1)[-1] or plan.stack} (stack)"


def _summary(plan: Plan) -> str:
    nodes = plan.nodes()
    custom = sum(1 for node in nodes if node.resource.custom)
    mandatory = sum(1 for finding in plan.findings if finding.mandatory)
    advisory = len(plan.findings) - mandatory
    verdict = f"BLOCKED by {mandatory} mandatory policy violation(s)" if mandatory else "policies pass"
    advice = f", {advisory} advisory finding(s)" if advisory else ""
    recreated = f"; recreates the nodes of {len(plan.recreations)} node group(s)" if plan.recreations else ""
    change = plan.driver_change
    moved = (
        f"; BLOCKED: the DRA driver moves back from {change.before} to {change.after}"
        if change and change.refused
        else (f"; the DRA driver moves from {change.before} to {change.after} (one way)" if change else "")
    )
    return (
        f"{len(nodes)} resources ({custom} created by providers, {len(nodes) - custom} components); "
        f"{verdict}{advice}{recreated}{moved}"
    )


def _driver_change_lines(change: DriverLineChange) -> list[str]:
    """The steps the chart's upgrade guide requires, or why the move back is refused."""
    title = "REFUSED" if change.refused else "PLANNED CHART UPGRADE"
    return [
        f"{title}: DRA driver {change.before} -> {change.after}",
        *(f"  {n}. {step}" for n, step in enumerate(change.steps, 1)),
    ]


def _resource_of(plan: Plan, urn: str | None) -> str:
    if urn is None:
        return "(stack)"
    return urn.rsplit("::", 1)[-1]


def _path_rows(plan: Plan) -> list[tuple[str, str, str, str]]:
    return [
        (
            f"{step.resource.type.rsplit(':', 1)[-1]} {step.resource.name}",
            step.kind,
            minutes(step.seconds),
            minutes(step.finishes_at),
        )
        for step in plan.path
    ]


def _file_counts(plan: Plan) -> str:
    files = plan.files
    if files is None:
        return "not written (--out none)"
    total = len(files.written) + len(files.unchanged)
    return f"{total} file(s) in {files.directory}: {len(files.written)} written, {len(files.unchanged)} unchanged, {len(files.removed)} stale removed"


def _table(rows: Sequence[tuple[str, ...]], header: tuple[str, ...]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in [header, *rows]]


ROLLOUT_TITLE = "Node roll-outs: a template change replaces a group's nodes under its strategy"
# Nebius applies node-group label and taint edits to new nodes only (pulumi-nebius 0.6.73, template.metadata.labels
# and template.taints): existing nodes keep the old ones until they are replaced, and no roll-out is started.
LABELS_NOTE = (
    "Labels and taints: an edit reaches only nodes created after it; existing nodes keep the old ones until "
    "they are replaced (Nebius starts no roll-out for it). Set the mixed-mode opt-out label "
    "nvidia.com/gpu.deploy.operands when a group is created."
)


def _recreation_lines(plan: Plan) -> list[str]:
    """The groups a change recreates (with a baseline), each changed field indented under it."""
    if plan.no_baseline is not None:
        return [f"Nodes recreated: not known, no baseline ({plan.no_baseline})"]
    if plan.recreations is None:
        return []
    if not plan.recreations:
        return ["No node group's template changes against the baseline: no node is recreated"]
    lines = [f"RECREATES NODES of {len(plan.recreations)} node group(s) (template changes against the baseline)"]
    for recreation in plan.recreations:
        lines.append(f"  {recreation.name}: {recreation.rollout.describe() if recreation.rollout else ''}".rstrip())
        lines += [f"    {change}" for change in recreation.changes]
    return lines


def _rollout_rows(plan: Plan) -> list[tuple[str, str]]:
    return [(rollout.name, rollout.describe()) for rollout in plan.rollouts]


def render_error(plan: Plan) -> str:
    return f"Plan of stack {plan.stack} failed before any resource could be planned:\n{plan.error}\n"


def render_text(plan: Plan) -> str:
    lines = [f"Offline plan of stack {plan.stack}: {_summary(plan)}", ""]
    lines += [f"Policy verdicts ({POLICY_SOURCE})"]
    if not plan.findings:
        lines.append("  every rule passes")
    for finding in plan.findings:
        lines.append(
            f"  {'MANDATORY' if finding.mandatory else 'advisory'}  {finding.policy}  on {_resource_of(plan, finding.urn)}"
        )
        lines.append(f"    {finding.message}")
    lines += ["", *(render_cost_text(plan.cost) if plan.cost else ["Cost: the program registered no estimate"])]
    if plan.recreations is not None or plan.no_baseline is not None:
        lines += ["", *_recreation_lines(plan)]
    if plan.driver_change is not None:
        lines += ["", *_driver_change_lines(plan.driver_change)]
    lines += ["", ROLLOUT_TITLE, *(f"  {name}: {text}" for name, text in _rollout_rows(plan)), f"  {LABELS_NOTE}"]
    lines += ["", "Resources", *render_tree(_stack_title(plan), plan.roots), ""]
    lines += ["Critical path of a first `pulumi up` (estimates per kind; see README, Offline plan and benchmark)"]
    lines += ["  " + row for row in _table(_path_rows(plan), ("resource", "kind", "estimate", "done at"))]
    lines += [f"  about {minutes(plan.path[-1].finishes_at) if plan.path else '0s'} in total", ""]
    lines += [f"Kubernetes objects and Helm values: {_file_counts(plan)}", ""]
    lines += [
        "Dependency graph (Mermaid; --format markdown renders it on GitHub)",
        *render_mermaid(plan.roots, plan.edges),
    ]
    return "\n".join(lines) + "\n"


def _markdown_row(cells: tuple[str, ...]) -> str:
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def render_markdown(plan: Plan) -> str:
    lines = [f"## Offline plan: `{plan.stack}`", "", _summary(plan), "", f"### Policy verdicts (`{POLICY_SOURCE}`)", ""]
    if plan.findings:
        lines += ["| level | policy | resource | message |", "| --- | --- | --- | --- |"]
        lines += [
            _markdown_row(
                ("**mandatory**" if f.mandatory else "advisory", f"`{f.policy}`", _resource_of(plan, f.urn), f.message)
            )
            for f in plan.findings
        ]
    else:
        lines.append("Every rule passes.")
    lines += [
        "",
        "### Cost",
        "",
        *(render_cost_markdown(plan.cost) if plan.cost else ["The program registered no estimate."]),
    ]
    if plan.recreations is not None or plan.no_baseline is not None:
        lines += ["", "### Nodes recreated", "", "```text", *_recreation_lines(plan), "```"]
    if plan.driver_change is not None:
        lines += ["", "### DRA driver chart line", "", "```text", *_driver_change_lines(plan.driver_change), "```"]
    lines += ["", f"### {ROLLOUT_TITLE}", "", "| node group | roll-out |", "| --- | --- |"]
    lines += [_markdown_row(row) for row in _rollout_rows(plan)]
    lines += ["", LABELS_NOTE]
    lines += ["", "### Resources", "", "```text", *render_tree(_stack_title(plan), plan.roots), "```", ""]
    lines += ["### Critical path of a first `pulumi up` (estimates)", ""]
    lines += [
        "| resource | kind | estimate | done at |",
        "| --- | --- | --- | --- |",
        *map(_markdown_row, _path_rows(plan)),
    ]
    lines += ["", "### Dependency graph", "", "<details><summary>Mermaid</summary>", "", "```mermaid"]
    lines += [*render_mermaid(plan.roots, plan.edges), "```", "", "</details>", ""]
    lines += [f"Kubernetes objects and Helm values: {_file_counts(plan)}"]
    return "\n".join(lines) + "\n"


def plan_document(plan: Plan) -> dict[str, Any]:
    return {
        "stack": plan.stack,
        "ok": not plan.blocked,
        "error": None if plan.error is None else str(plan.error),
        "tree": [root.as_dict() for root in plan.roots],
        "edges": [{"from": edge.source, "to": edge.target, "because": list(edge.labels)} for edge in plan.edges],
        "findings": [
            {"policy": f.policy, "mandatory": f.mandatory, "urn": f.urn, "message": f.message} for f in plan.findings
        ],
        "criticalPath": {
            "totalSeconds": plan.path[-1].finishes_at if plan.path else 0,
            "steps": [
                {"urn": step.resource.urn, "kind": step.kind, "seconds": step.seconds, "finishesAt": step.finishes_at}
                for step in plan.path
            ],
        },
        "estimates": {kind: {"seconds": e.seconds, "basis": e.basis} for kind, e in DURATION_ESTIMATES.items()},
        "cost": plan.cost,
        "nodeGroups": plan.node_groups,
        "rollouts": [rollout.as_dict() for rollout in plan.rollouts],
        "recreations": None if plan.recreations is None else [r.as_dict() for r in plan.recreations],
        "draDriver": plan.dra_driver,
        "driverChange": None if plan.driver_change is None else plan.driver_change.as_dict(),
        "files": None
        if plan.files is None
        else {
            "directory": str(plan.files.directory),
            "written": plan.files.written,
            "unchanged": plan.files.unchanged,
            "removed": plan.files.removed,
        },
    }


def render_json(plan: Plan) -> str:
    return json.dumps(plan_document(plan), indent=2, sort_keys=True) + "\n"


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
