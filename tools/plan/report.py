"""A plan written out three ways: text for a terminal or a PR comment, Markdown, JSON.

The text and Markdown forms start with what a reviewer decides on: what the change does to
running nodes, the verdicts, the cost and the roll-outs; then how long a first `pulumi up`
takes and every resource, and the dependency graph only on request (text) or folded
(Markdown), so a pull request's plan reads in one screen. A node group is called by the name
the stack file gives it in every section.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from components.config.errors import shown_name
from components.config.reading import markdown_code_block, markdown_text, printable
from components.redaction import redacted_leaves
from policies.dra_guardrails import RULES
from policies.dra_guardrails.consequences import DELETE_BEFORE_REPLACE, NAMESPACE_TYPE, Effect, consequences_of
from policies.dra_guardrails.planned import NODE_GROUP_TYPE
from tools.cost.render import render_cost_markdown, render_cost_text
from tools.plan.changes import Changes, as_json, release_downgrade
from tools.plan.graph import DURATION_ESTIMATES, minutes, render_mermaid
from tools.plan.model import Plan
from tools.plan.tree import render_tree
from tools.plan.what_changed import builtins_left_out, changed_lines, recreated_count

POLICY_SOURCE = "policies/dra_guardrails"
REPLACING = frozenset((Effect.ROLLING_REPLACE, Effect.MINOR_UPGRADE, Effect.DELETE_CREATE))
# The components that wrap one node group each (components/gpu_node_group.py, existing_gpu_node_group.py,
# system_node_group.py): their children are that group's resources.
GROUP_COMPONENTS = (
    "nebius-dra:nodes:GpuNodeGroup",
    "nebius-dra:nodes:ExistingGpuNodeGroup",
    "nebius-dra:nodes:SystemNodeGroup",
)


def _stack_title(plan: Plan) -> str:
    parent = plan.roots[0].resource.parent if plan.roots else ""
    return f"{parent.rsplit('::', 1)[-1] or plan.stack} (stack)"


def group_names(plan: Plan) -> dict[str, str]:
    """URN -> the node group's name in the stack file (`h200`), for the node group, its component and their children.

    A group is otherwise known by its Nebius name (`dra-dev-h200`), its component (`dra-dev-gpu-h200`) and its
    resource (`dra-dev-gpu-h200-nodes`); the plan's sections use the one name the user wrote. The cost estimate
    pairs the two: each of its groups carries the stack file's name and the Nebius one.
    """
    written = {
        group.get("nodeGroup"): group.get("name")
        for group in (plan.cost or {}).get("groups") or []
        if isinstance(group, dict) and isinstance(group.get("name"), str)
    }
    resources = plan.run.by_urn()
    names: dict[str, str] = {}
    for resource in plan.run.of_type(NODE_GROUP_TYPE):
        name = written.get(resource.inputs.get("name")) or str(resource.inputs.get("name") or resource.name)
        names[resource.urn] = name
        component = resources.get(resource.parent)
        if component is not None and component.type in GROUP_COMPONENTS:
            names[component.urn] = name
            names.update((r.urn, name) for r in plan.run.resources if r.parent == component.urn)
    return names


def _left_out_line(plan: Plan) -> list[str]:
    left_out = [f"{name}: {reason}" for name, reason in builtins_left_out(plan).items()]
    return (
        [f"Built-in claim templates not created (no node could serve them): {'; '.join(left_out)}"] if left_out else []
    )


def _disabled_count(plan: Plan) -> str:
    """How many rules --policy-config turns off and by which entries, and how many ran: a plan whose rules were all
    disabled must not read as one whose rules all passed."""
    by = sorted({disabled.by for disabled in plan.disabled})
    ran = len(RULES) - len(plan.disabled)
    return f"policies: {len(plan.disabled)} disabled by --policy-config ({', '.join(by)}), {ran} run"


def _demoted_count(plan: Plan) -> str:
    """How many mandatory rules --policy-config sets to advisory and by which entries: they ran, but a finding of
    theirs blocks nothing, which a plain "policies pass" would hide."""
    by = sorted({demoted.by for demoted in plan.demoted})
    return f"policies: {len(plan.demoted)} MANDATORY rule(s) demoted to advisory by --policy-config ({', '.join(by)})"


def _no_findings(plan: Plan) -> str:
    """The verdicts' line when no rule found anything: a plan whose rules were all disabled ran none."""
    if plan.no_policy_ran:
        return "no rule ran (every one disabled by --policy-config): nothing was checked"
    if plan.ungated:
        return "no rule that ran found anything, but none of them gates (--policy-config left no rule mandatory)"
    return "every rule that ran passes" if plan.disabled else "every rule passes"


def _disabled_lines(plan: Plan) -> list[str]:
    """One line per disabled rule, a mandatory one marked: it would have blocked `pulumi up` had it fired; and one
    per demoted mandatory rule, whose findings no longer block."""
    return [
        *(
            f"disabled  {d.policy}{' (MANDATORY)' if d.mandatory else ''}: by --policy-config {d.by}"
            for d in plan.disabled
        ),
        *(f"demoted  {d.policy} (MANDATORY -> advisory): by --policy-config {d.by}" for d in plan.demoted),
    ]


def _protected_cost_notes(plan: Plan) -> list[str]:
    """A protected group left out of the stack is not deleted, so leaving it out saves nothing yet."""
    removed = plan.changes.protected_removals if plan.changes is not None else []
    return [
        f"{name} is left out of this estimate, but it is protected: `pulumi up` cannot delete it, so it keeps "
        "running at its baseline cost (no saving) until the protection is lifted (docs/operating.md#tearing-down)"
        for name in removed
    ]


def _deleted_summary(changes: Changes) -> str:
    """What the change deletes, for the summary line: releases a namespace move reinstalls, namespaces with all in
    them, then every other Kubernetes object by kind (sample Pods, claim templates, queues, a Job), those of a
    new name or namespace included (deleted and created); an object in a deleted namespace goes with it, unnamed.
    A spec change that deletes and creates a claim template is a deletion too (delete_before_replace)."""
    moved = [r.name for r in changes.releases if r.of(Effect.DELETE_CREATE)]
    gone = [*(changes.removed_objects or []), *(old for old, _ in changes.moved_objects or [])]
    taken = set(changes.deleted_namespaces)
    others: dict[str, list[str]] = {}
    for item in gone:
        if item.resource_type != NAMESPACE_TYPE and item.namespace not in taken:
            others.setdefault(f"{shown_name(item.kind)}(s)", []).append(item.place)
    templates = [t for t in changes.removed_claim_templates if t.namespace not in taken]
    replaced = [c.name for c in changes.claim_templates]
    # The program sets deleteBeforeReplace on every release (components/release.py): the old one goes first.
    text = (
        f"; uninstalls Helm release(s) {', '.join(moved)}, then installs them in their new namespace "
        f"(deleteBeforeReplace: {DELETE_BEFORE_REPLACE})"
        if moved
        else ""
    )
    text += (
        f"; deletes namespace(s) {', '.join(map(shown_name, changes.deleted_namespaces))} with all in them"
        if taken
        else ""
    )
    text += "".join(f"; deletes {kind} {', '.join(names)}" for kind, names in others.items())
    if templates:
        text += f"; deletes claim template(s) {', '.join(t.text() for t in templates)}"
    if replaced:
        text += f"; deletes and creates claim template(s) {', '.join(printable(name) for name in replaced)}"
    return text


def _refused_summary(changes: Changes) -> str:
    """Updates the API server refuses (a LocalQueue's ClusterQueue): `pulumi up` fails there."""
    refused = [c.name for c in changes.objects if c.of(Effect.UPDATE_REFUSED)]
    return f"; `pulumi up` FAILS updating {', '.join(refused)} (an immutable field)" if refused else ""


def _downgrade_summary(changes: Changes) -> str:
    """Helm releases whose chart version goes back: Helm allows it, but it is no upgrade."""
    found = [(r.name, release_downgrade(r)) for r in changes.releases]
    named = [f"{printable(name)} ({as_json(c.before)} -> {as_json(c.after)})" for name, c in found if c is not None]
    return f"; DOWNGRADES Helm release(s) {', '.join(named)}" if named else ""


def _unprotected_summary(changes: Changes) -> str:
    """Groups whose deletion protection is lifted: nothing deployed changes, but a later removal deletes them."""
    lifted = [
        printable(g.name) for g in changes.groups for c in g.changes if c.path == "protect" and c.after is not True
    ]
    return f"; LIFTS the deletion protection of node group(s) {', '.join(lifted)}" if lifted else ""


def _summary(plan: Plan) -> str:
    nodes = plan.nodes()
    custom = sum(1 for node in nodes if node.resource.custom)
    mandatory = sum(1 for finding in plan.findings if finding.mandatory)
    advisory = len(plan.findings) - mandatory
    demoted = {d.policy for d in plan.demoted}
    firing = len({finding.policy for finding in plan.findings if finding.policy in demoted})
    verdict = f"BLOCKED by {mandatory} mandatory policy violation(s)" if mandatory else "policies pass"
    if not mandatory and firing:  # a demoted rule's finding is a mandatory violation let through, no pass
        verdict = f"no violation blocks, but {firing} demoted MANDATORY rule(s) fire"
    if plan.no_policy_ran:
        verdict = f"NOT GATED: {plan.no_policy_text()} (each listed under the policy verdicts)"
    elif plan.ungated:
        verdict = f"NOT GATED: {plan.no_rule_gates_text()}"
    if plan.disabled and not plan.no_policy_ran:
        skipped = [d.policy for d in plan.disabled if d.mandatory]
        verdict = (f"{verdict}; " if mandatory or plan.ungated or firing else "") + _disabled_count(plan)
        verdict += f", {len(skipped)} of them MANDATORY (listed under the policy verdicts)" if skipped else ""
    if plan.demoted:
        verdict += f"; {_demoted_count(plan)} (listed under the policy verdicts)"
    advice = f", {advisory} advisory finding(s)" if advisory else ""
    count = recreated_count(plan)
    recreated = f"; recreates the nodes of {count} node group(s)" if count else ""
    changes = plan.changes
    deleted = [] if changes is None else [g for g in changes.removed_groups if g not in changes.protected_removals]
    recreated += f"; deletes {len(deleted)} node group(s)" if deleted else ""
    if changes is not None and changes.protected_removals:
        recreated += (
            f"; `pulumi up` FAILS: it cannot delete the protected node group(s) {', '.join(changes.protected_removals)}"
        )
    if changes is not None:
        recreated += _deleted_summary(changes) + _refused_summary(changes) + _unprotected_summary(changes)
        recreated += _downgrade_summary(changes)
    if changes is not None and changes.cluster is not None and changes.cluster.of(Effect.DELETE_CREATE):
        recreated += "; REPLACES THE CLUSTER, and every node group with it"
    minor = plan.minor
    if minor is not None and minor.refused is not None:
        recreated += f"; BLOCKED: kubernetesVersion {minor.before} -> {minor.after} is refused"
    recreated += "".join(
        f"; BLOCKED: node group {d.group} version {d.before} -> {d.after} is refused" for d in plan.downgrades
    )
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


def _resource_of(plan: Plan, urn: str | None, names: dict[str, str]) -> str:
    if urn is None:
        return "(stack)"
    return names.get(urn) or urn.rsplit("::", 1)[-1]


@dataclass(frozen=True)
class VerdictRow:
    """One rule's findings: the resources it hit, and its message once when it says the same of each."""

    mandatory: bool
    policy: str
    resources: tuple[str, ...]
    messages: tuple[str, ...]


def _called(message: str, resource_name: str, called: str) -> str:
    """The message with `Kind "name"` of its own resource read as `called`."""
    return re.sub(rf'\b\w+ "{re.escape(resource_name)}"', lambda _: called, message)


def verdict_rows(plan: Plan, names: dict[str, str]) -> list[VerdictRow]:
    """One row per rule (and level), in the findings' order; its message once when it reads the same on each hit.

    A node group's resource is called by the group's name in the message too, and "each" in a message shared by
    several groups.
    """
    hits: dict[tuple[bool, str], list[tuple[str, str, str]]] = {}
    for finding in plan.findings:
        shown = _resource_of(plan, finding.urn, names)
        message = finding.message
        shared = message
        if finding.urn in names:
            own_name = finding.urn.rsplit("::", 1)[-1]
            message = _called(finding.message, own_name, f'node group "{shown}"')
            shared = _called(finding.message, own_name, "each")
        hits.setdefault((finding.mandatory, finding.policy), []).append((shown, message, shared))
    rows = []
    for (mandatory, policy), found in hits.items():
        resources = tuple(dict.fromkeys(shown for shown, _, _ in found))
        shared_messages = {shared for _, _, shared in found}
        messages: tuple[str, ...]
        if len(found) == 1:
            messages = (found[0][1],)
        elif len(shared_messages) == 1:
            messages = (shared_messages.pop(),)
        else:
            messages = tuple(f"{shown}: {message}" for shown, message, _ in found)
        rows.append(VerdictRow(mandatory, policy, resources, messages))
    return rows


def _path_rows(plan: Plan, names: dict[str, str]) -> list[tuple[str, str, str, str]]:
    return [
        (
            f"{step.resource.type.rsplit(':', 1)[-1]} {names.get(step.resource.urn, step.resource.name)}",
            step.kind,
            minutes(step.seconds),
            minutes(step.finishes_at),
        )
        for step in plan.path
    ]


def _path_total(plan: Plan) -> str:
    return f"about {minutes(plan.path[-1].finishes_at) if plan.path else '0s'} in total"


def _file_counts(plan: Plan) -> str:
    files = plan.files
    if files is None:
        return "not written (--out none)"
    total = len(files.written) + len(files.unchanged)
    counts = f"{total} file(s) in {files.directory}: {len(files.written)} written, {len(files.unchanged)} unchanged, {len(files.removed)} stale removed"
    if files.kept:  # not deleted: each changed since the plan wrote it (`write_plan_files`)
        counts += f", {len(files.kept)} stale kept, changed since the plan wrote them (delete by hand): {', '.join(files.kept)}"
    return counts


def _table(rows: Sequence[tuple[str, ...]], header: tuple[str, ...]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in [header, *rows]]


ROLLOUT_TITLE = "Node roll-outs: a template change replaces a group's nodes under its strategy"
# What the table of consequences says of a label or taint edit (its template.metadata and template.taints rows).
_LABELS = consequences_of(NODE_GROUP_TYPE, "template.metadata.labels")[0]
LABELS_NOTE = (
    f"Labels and taints: {_LABELS.effect.value}: {_LABELS.does}. Set the mixed-mode opt-out label "
    "nvidia.com/gpu.deploy.operands when a group is created."
)
# Markdown tables longer than this fold, so a PR's plan keeps its verdicts and cost on one screen.
FOLD_ROWS = 8


def _rollout_rows(plan: Plan, names: dict[str, str]) -> list[tuple[str, str]]:
    return [(names.get(rollout.urn, rollout.name), rollout.describe()) for rollout in plan.rollouts]


def render_error(plan: Plan) -> str:
    return f"Plan of stack {plan.stack} failed before any resource could be planned:\n{plan.error}\n"


def render_error_markdown(plan: Plan) -> str:
    """The refusal as Markdown, for a PR comment made of `--format markdown`: the program's message, which quotes
    what the user wrote, is a fenced block, so no HTML, link or image in a value renders."""
    title = f"## Offline plan: `{plan.stack}` failed before any resource could be planned"
    return "\n".join([title, "", *markdown_code_block(str(plan.error).splitlines(), "text"), ""])


def render_text(plan: Plan, graph: bool = False) -> str:
    """What changed, the verdicts, the cost and the roll-outs first; then the path, the tree, the graph on request."""
    names = group_names(plan)
    lines = [f"Offline plan of stack {plan.stack}: {_summary(plan)}", ""]
    lines += ["What changed", *("  " + line for line in changed_lines(plan, names)), ""]
    lines += [f"Policy verdicts ({POLICY_SOURCE})"]
    if not plan.findings:
        lines.append(f"  {_no_findings(plan)}")
    lines += ["  " + line for line in _disabled_lines(plan)]
    for row in verdict_rows(plan, names):
        lines.append(f"  {'MANDATORY' if row.mandatory else 'advisory'}  {row.policy}  on {', '.join(row.resources)}")
        lines += [f"    {message}" for message in row.messages]
    lines += [f"  passes  {policy}: {note}" for policy, note in plan.passes]
    lines += ["  " + line for line in _left_out_line(plan)]
    lines += ["", *(render_cost_text(plan.cost) if plan.cost else ["Cost: the program registered no estimate"])]
    lines += [f"  note: {note}" for note in _protected_cost_notes(plan)]
    lines += ["", ROLLOUT_TITLE, *(f"  {name}: {text}" for name, text in _rollout_rows(plan, names))]
    lines += [f"  {LABELS_NOTE}", ""]
    lines += [f"Critical path of a first `pulumi up`: {_path_total(plan)} (estimates per kind; docs/offline-plan.md)"]
    lines += ["  " + row for row in _table(_path_rows(plan, names), ("resource", "kind", "estimate", "done at"))]
    lines += ["", "Resources", *render_tree(_stack_title(plan), plan.roots, names), ""]
    lines += [f"Kubernetes objects and Helm values: {_file_counts(plan)}"]
    if graph:
        lines += ["", "Dependency graph (Mermaid; --format markdown renders it on GitHub)"]
        lines += render_mermaid(plan.roots, plan.edges, names)
    else:
        lines += ["Dependency graph: --graph prints it (Mermaid); --format markdown folds it in"]
    return "\n".join(lines) + "\n"


def _markdown_row(cells: tuple[str, ...]) -> str:
    """A table row of cells already Markdown (outside text through markdown_text, which escapes `|` too)."""
    return "| " + " | ".join(cells) + " |"


def _text_row(cells: tuple[str, ...]) -> tuple[str, ...]:
    """Cells of outside text (resource names, a baseline's names, policy messages) as literal Markdown."""
    return tuple(markdown_text(cell) for cell in cells)


def _fold(summary: str, body: list[str]) -> list[str]:
    return [f"<details><summary>{summary}</summary>", "", *body, "", "</details>"]


def _markdown_table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]], what: str) -> list[str]:
    """A table, folded under "`len(rows)` `what`" when it is longer than FOLD_ROWS."""
    table = [_markdown_row(_text_row(header)), _markdown_row(tuple("---" for _ in header)), *map(_markdown_row, rows)]
    return table if len(rows) <= FOLD_ROWS else _fold(f"{len(rows)} {what}", table)


def render_markdown(plan: Plan, graph: bool = True) -> str:
    """One screen above the folds: what changed, verdicts, cost, roll-outs; path, tree and graph folded."""
    del graph  # the graph is always there, folded
    names = group_names(plan)
    # Every text outside a code block is escaped: a baseline's names reach the summary (a39 F15).
    lines = [f"## Offline plan: `{plan.stack}`", "", markdown_text(_summary(plan)), "", "### What changed", ""]
    lines += [
        *markdown_code_block(changed_lines(plan, names), "text"),
        "",
        f"### Policy verdicts (`{POLICY_SOURCE}`)",
        "",
    ]
    if plan.findings:
        rows = [
            (
                "**mandatory**" if row.mandatory else "advisory",
                f"`{markdown_text(row.policy)}`",
                markdown_text(", ".join(row.resources)),
                "<br>".join(markdown_text(message) for message in row.messages),
            )
            for row in verdict_rows(plan, names)
        ]
        lines += _markdown_table(("level", "policy", "resources", "message"), rows, "rules with findings")
    else:
        lines.append(f"{_no_findings(plan)[0].upper()}{_no_findings(plan)[1:]}.")
    lines += ["", *(f"- {markdown_text(line)}" for line in _disabled_lines(plan))] if _disabled_lines(plan) else []
    lines += (
        ["", *(f"- passes `{policy}`: {markdown_text(note)}" for policy, note in plan.passes)] if plan.passes else []
    )
    lines += ["", *map(markdown_text, _left_out_line(plan))] if _left_out_line(plan) else []
    lines += [
        "",
        "### Cost",
        "",
        *(render_cost_markdown(plan.cost) if plan.cost else ["The program registered no estimate."]),
    ]
    notes = _protected_cost_notes(plan)
    lines += ["", *(f"- {markdown_text(note)}" for note in notes)] if notes else []
    lines += ["", f"### {ROLLOUT_TITLE}", ""]
    lines += _markdown_table(
        ("node group", "roll-out"), [_text_row(row) for row in _rollout_rows(plan, names)], "node groups"
    )
    lines += ["", markdown_text(LABELS_NOTE), ""]
    path = [
        "| resource | kind | estimate | done at |",
        "| --- | --- | --- | --- |",
        *(_markdown_row(_text_row(row)) for row in _path_rows(plan, names)),
    ]
    lines += _fold(f"Critical path of a first <code>pulumi up</code>: {_path_total(plan)} (estimates)", path)
    tree = markdown_code_block(render_tree(_stack_title(plan), plan.roots, names), "text")
    lines += _fold(f"Resources: {len(plan.nodes())}, with their key settings", tree)
    lines += _fold(
        "Dependency graph (Mermaid)", markdown_code_block(render_mermaid(plan.roots, plan.edges, names), "mermaid")
    )
    lines += ["", f"Kubernetes objects and Helm values: {_file_counts(plan)}"]
    return "\n".join(lines) + "\n"


def plan_document(plan: Plan) -> dict[str, Any]:
    return {
        "stack": plan.stack,
        "ok": not plan.blocked,
        # Why the gate does not pass (`ok` false), each reason in a few words; null when it passes.
        "reason": "; ".join(plan.gate_failures) or None,
        "error": None if plan.error is None else str(plan.error),
        "tree": [root.as_dict() for root in plan.roots],
        "edges": [{"from": edge.source, "to": edge.target, "because": list(edge.labels)} for edge in plan.edges],
        "findings": [
            {"policy": f.policy, "mandatory": f.mandatory, "urn": f.urn, "message": f.message} for f in plan.findings
        ],
        "passes": [{"policy": policy, "note": note} for policy, note in plan.passes],
        "disabled": [{"policy": d.policy, "mandatory": d.mandatory, "by": d.by} for d in plan.disabled],
        "demoted": [{"policy": d.policy, "by": d.by} for d in plan.demoted],
        "criticalPath": {
            "totalSeconds": plan.path[-1].finishes_at if plan.path else 0,
            "steps": [
                {"urn": step.resource.urn, "kind": step.kind, "seconds": step.seconds, "finishesAt": step.finishes_at}
                for step in plan.path
            ],
        },
        "estimates": {kind: {"seconds": e.seconds, "basis": e.basis} for kind, e in DURATION_ESTIMATES.items()},
        "cost": plan.cost,
        **plan.recorded,
        "rollouts": [rollout.as_dict() for rollout in plan.rollouts],
        "recreations": None
        if plan.changes is None
        else [
            {"urn": g.urn, "name": g.name, "changes": [c.text() for c in g.changes if c.effects & REPLACING]}
            for g in plan.changes.recreated
        ],
        "changes": None if plan.changes is None else plan.changes.as_dict(),
        "minorUpgrade": None if plan.minor is None else plan.minor.as_dict(),
        "groupDowngrades": [downgrade.as_dict() for downgrade in plan.downgrades],
        "baselineFrom": plan.baseline_from,
        "noBaseline": plan.no_baseline,
        "draDriver": plan.dra_driver,
        "driverChange": None if plan.driver_change is None else plan.driver_change.as_dict(),
        "files": None
        if plan.files is None
        else {
            "directory": str(plan.files.directory),
            "written": plan.files.written,
            "unchanged": plan.files.unchanged,
            "removed": plan.files.removed,
            "kept": plan.files.kept,
        },
    }


def render_json(plan: Plan, graph: bool = False) -> str:
    """Everything, graph included, every string redacted before it is encoded (a redaction of the encoded text
    could cut a JSON escape in two); `graph` is for the other renderers' signature."""
    del graph
    return json.dumps(redacted_leaves(plan_document(plan)), indent=2, sort_keys=True) + "\n"


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
