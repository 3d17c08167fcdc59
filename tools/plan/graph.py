"""The dependency graph `pulumi up` walks, as Mermaid, and its critical path.

Edges come only from what the program registered: explicit `depends_on`, property
dependencies (an input that is another resource's output) and the provider a resource is
created through. The engine starts a resource once everything it depends on exists, so
the longest chain of creation times bounds how long a first `pulumi up` takes.

The durations below are estimates, not measurements: nobody can time a cloud from this
machine. Each says where it comes from; adjust them when real runs disagree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from policies.dra_guardrails.planned import CLUSTER_TYPE, NODE_GROUP_TYPE, POD_TYPE, field_at
from tools.plan.mock_engine import RegisteredResource
from tools.plan.settings import HELM_RELEASE, NEBIUS_GPU_CLUSTER
from tools.plan.tree import PlanNode, kind_of, sort_key

PROVIDER_LABEL = "provider"
DEPENDS_ON_LABEL = "dependsOn"


@dataclass(frozen=True)
class Estimate:
    seconds: int
    basis: str


DURATION_ESTIMATES: dict[str, Estimate] = {
    "mk8s cluster": Estimate(600, "typical observed creation of a managed control plane (Nebius publishes no figure)"),
    "GPU node group": Estimate(900, "typical observed: GPU VMs boot from a driver image and join the cluster"),
    "CPU node group": Estimate(300, "typical observed: CPU VMs boot and join the cluster"),
    "GPU cluster": Estimate(60, "typical observed: an InfiniBand fabric reservation, no VMs"),
    "Helm release": Estimate(
        180, "chart install plus readiness wait; Pulumi's helm.v3.Release timeout (300 s default) is the upper bound"
    ),
    "Pod": Estimate(
        120, "image pull plus DRA allocation; the Kubernetes provider waits for Ready (10 min default timeout)"
    ),
    "provider": Estimate(0, "configured in-process, no API call"),
    "Kubernetes object": Estimate(5, "one API call; the Kubernetes provider has no readiness wait for these kinds"),
    "component": Estimate(0, "a grouping, nothing is created"),
    "other": Estimate(60, "unknown kind: a flat guess"),
}


def estimate_kind(resource: RegisteredResource) -> str:
    """Which row of DURATION_ESTIMATES a resource takes."""
    if not resource.custom:
        return "component"
    if resource.type == CLUSTER_TYPE:
        return "mk8s cluster"
    if resource.type == NODE_GROUP_TYPE:
        platform = str(field_at(resource.inputs, "template", "resources", "platform") or "")
        return "GPU node group" if platform.startswith("gpu-") else "CPU node group"
    if resource.type == NEBIUS_GPU_CLUSTER:
        return "GPU cluster"
    if resource.type.startswith("pulumi:providers:"):
        return "provider"
    if resource.type == HELM_RELEASE:
        return "Helm release"
    if resource.type == POD_TYPE:
        return "Pod"
    if resource.type.startswith("kubernetes:"):
        return "Kubernetes object"
    return "other"


@dataclass(frozen=True)
class Edge:
    """`source` must exist before `target` is created; labels say why (property names, dependsOn, provider)."""

    source: str
    target: str
    labels: tuple[str, ...]


def provider_urn(reference: str) -> str | None:
    """A provider reference is `<urn>::<id>`; the URN part names the provider resource."""
    return reference.rsplit("::", 1)[0] if reference else None


def dependency_edges(resources: Iterable[RegisteredResource]) -> list[Edge]:
    edges: list[Edge] = []
    for resource in resources:
        reasons: dict[str, set[str]] = {urn: set() for urn in resource.dependencies}
        for prop, urns in resource.property_dependencies.items():
            for urn in urns:
                reasons.setdefault(urn, set()).add(prop)
        provider = provider_urn(resource.provider)
        if provider:
            reasons.setdefault(provider, set()).add(PROVIDER_LABEL)
        for urn, props in reasons.items():
            edges.append(Edge(urn, resource.urn, tuple(sorted(props)) or (DEPENDS_ON_LABEL,)))
    return sorted(edges, key=lambda edge: (edge.source, edge.target))


def _urn_name(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


def _urn_type(urn: str) -> str:
    return urn.rsplit("::", 2)[-2].rsplit("$", 1)[-1] if urn.count("::") >= 2 else "unknown"


def mermaid_ids(urns: Iterable[str], by_urn: Mapping[str, RegisteredResource]) -> dict[str, str]:
    """Ids made from names, not positions, so adding one resource does not renumber the whole graph."""
    ids: dict[str, str] = {}
    taken: set[str] = set()
    for urn in sorted(urns):
        resource = by_urn.get(urn)
        prefix = "c" if resource is not None and not resource.custom else "r"
        base = f"{prefix}_{re.sub(r'[^A-Za-z0-9]', '_', _urn_name(urn))}"
        candidate, suffix = base, 2
        while candidate in taken:
            candidate, suffix = f"{base}_{suffix}", suffix + 1
        taken.add(candidate)
        ids[urn] = candidate
    return ids


# Mermaid reads `#name;` as an entity and, with HTML labels, `<...>` as a tag: `#` goes first so
# the entities added after it stay entities.
_MERMAID_ESCAPES = (("#", "#35;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;"))


def _label(text: str) -> str:
    for character, entity in _MERMAID_ESCAPES:
        text = text.replace(character, entity)
    return text


def _node_label(kind: str, name: str) -> str:
    return f"{_label(kind)}<br/>{_label(name)}"


def render_mermaid(roots: list[PlanNode], edges: list[Edge], names: Mapping[str, str] | None = None) -> list[str]:
    """Components are subgraphs holding their children; arrows point from what is created first.

    `names` labels a resource with a reader's name (a node group's name in the stack file); ids stay Pulumi's.
    """
    names = names or {}
    by_urn = {node.resource.urn: node.resource for root in roots for node in root.walk()}
    ids = mermaid_ids(set(by_urn) | {edge.source for edge in edges} | {edge.target for edge in edges}, by_urn)
    lines = ["flowchart TD"]

    def visit(node: PlanNode, depth: int) -> None:
        indent = "  " * depth
        resource = node.resource
        label = _node_label(node.kind, names.get(resource.urn, resource.name))
        if not resource.custom and node.children:
            lines.append(f'{indent}subgraph {ids[resource.urn]}["{label}"]')
            for child in node.children:
                visit(child, depth + 1)
            lines.append(f"{indent}end")
            return
        lines.append(f'{indent}{ids[resource.urn]}["{label}"]')
        for child in node.children:
            visit(child, depth)

    for root in roots:
        visit(root, 1)
    for urn in sorted(set(ids) - set(by_urn)):
        lines.append(f'  {ids[urn]}["{_node_label(kind_of(_urn_type(urn)), _urn_name(urn))}"]')
    for edge in edges:
        arrow = "-.->" if edge.labels == (PROVIDER_LABEL,) else "-->"
        lines.append(f'  {ids[edge.source]} {arrow}|"{_label(", ".join(edge.labels))}"| {ids[edge.target]}')
    return lines


@dataclass(frozen=True)
class PathStep:
    resource: RegisteredResource
    kind: str
    seconds: int
    finishes_at: int


def critical_path(resources: Iterable[RegisteredResource], edges: list[Edge]) -> list[PathStep]:
    """The chain of dependencies with the latest estimated finish; ties go to the first URN."""
    by_urn = {resource.urn: resource for resource in sorted(resources, key=sort_key)}
    waits_for: dict[str, list[str]] = {urn: [] for urn in by_urn}
    for edge in edges:
        if edge.source in by_urn and edge.target in by_urn:
            waits_for[edge.target].append(edge.source)
    finish: dict[str, int] = {}
    before: dict[str, str | None] = {}

    def finish_of(urn: str) -> int:
        if urn not in finish:
            own = DURATION_ESTIMATES[estimate_kind(by_urn[urn])].seconds
            latest = max(sorted(waits_for[urn]), key=finish_of, default=None)
            before[urn] = latest
            finish[urn] = own + (finish_of(latest) if latest else 0)
        return finish[urn]

    if not by_urn:
        return []
    end: str | None = max(sorted(by_urn), key=finish_of)
    steps: list[PathStep] = []
    while end is not None:
        kind = estimate_kind(by_urn[end])
        steps.append(PathStep(by_urn[end], kind, DURATION_ESTIMATES[kind].seconds, finish[end]))
        end = before[end]
    return list(reversed(steps))


def minutes(seconds: int) -> str:
    whole, rest = divmod(seconds, 60)
    return f"{whole}m{rest:02d}s" if whole else f"{rest}s"
