"""The planned resources as the parent/child tree `pulumi preview` would show.

The mock engine records registrations in whatever order the program's outputs resolve,
which changes from run to run; siblings are therefore sorted by name and type so the same
program always prints the same tree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tools.plan.mock_engine import RegisteredResource
from tools.plan.settings import Settings

BRANCH, LAST, PIPE, SPACE = "├─ ", "└─ ", "│  ", "   "
SETTINGS_WIDTH = 90


def kind_of(type_token: str) -> str:
    """The short name a reader knows a type by: `Mk8sV1NodeGroup`, `Release`, `provider:kubernetes`."""
    if type_token.startswith("pulumi:providers:"):
        return f"provider:{type_token.rsplit(':', 1)[1]}"
    return type_token.rsplit(":", 1)[-1]


def sort_key(resource: RegisteredResource) -> tuple[str, str]:
    return (resource.name, resource.type)


@dataclass
class PlanNode:
    resource: RegisteredResource
    settings: Settings
    children: list[PlanNode] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return kind_of(self.resource.type)

    def walk(self) -> Iterable[PlanNode]:
        yield self
        for child in self.children:
            yield from child.walk()

    def as_dict(self) -> dict[str, Any]:
        return {
            "urn": self.resource.urn,
            "type": self.resource.type,
            "name": self.resource.name,
            "kind": self.kind,
            "custom": self.resource.custom,
            "protect": self.resource.protect,
            "settings": self.settings,
            "children": [child.as_dict() for child in self.children],
        }


def build_tree(resources: Iterable[RegisteredResource], settings: Mapping[str, Settings]) -> list[PlanNode]:
    """Roots are the resources whose parent is the stack (or anything the program did not register)."""
    ordered = sorted(resources, key=sort_key)
    nodes = {resource.urn: PlanNode(resource, settings.get(resource.urn, {})) for resource in ordered}
    roots: list[PlanNode] = []
    for resource in ordered:
        parent = nodes.get(resource.parent)
        (parent.children if parent else roots).append(nodes[resource.urn])
    return roots


def _headline(node: PlanNode, names: Mapping[str, str]) -> str:
    protected = "  [protected]" if node.resource.protect else ""
    return f"{node.kind} {names.get(node.resource.urn, node.resource.name)}{protected}"


def _settings_lines(settings: Settings) -> list[str]:
    """`key=value` pairs, wrapped so a PR comment does not scroll sideways."""
    lines: list[str] = []
    for pair in (f"{key}={value}" for key, value in settings.items()):
        if lines and len(lines[-1]) + 2 + len(pair) <= SETTINGS_WIDTH:
            lines[-1] += "  " + pair
        else:
            lines.append(pair)
    return lines


def render_tree(title: str, roots: list[PlanNode], names: Mapping[str, str] | None = None) -> list[str]:
    """Box-drawn tree; each resource's key settings on the line below its name.

    `names` gives a resource a reader's name instead of its Pulumi one (a node group's name in the stack file).
    """
    names = names or {}
    lines = [title]

    def visit(node: PlanNode, prefix: str, last: bool) -> None:
        lines.append(f"{prefix}{LAST if last else BRANCH}{_headline(node, names)}")
        inner = prefix + (SPACE if last else PIPE)
        for settings_line in _settings_lines(node.settings):
            lines.append(f"{inner}{PIPE if node.children else SPACE}  {settings_line}")
        for index, child in enumerate(node.children):
            visit(child, inner, index == len(node.children) - 1)

    for index, root in enumerate(roots):
        visit(root, "", index == len(roots) - 1)
    return lines
