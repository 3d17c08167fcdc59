"""A move of `kubernetesVersion` against the baseline: the upgrade in Nebius's order, or its refusal.

Nebius upgrades the control plane (`Mk8sV1Cluster.control_plane.version`) and then each node
group (`Mk8sV1NodeGroup.version`, which defaults to the control plane's minor; pulumi-nebius
0.6.73 docstrings); a group's new version replaces its nodes a batch at a time under its
strategy (the table's `version` row). Pulumi updates the cluster first because every node
group depends on it. The Kubernetes version skew policy
(https://kubernetes.io/releases/version-skew-policy/, "Supported component upgrade order")
describes an upgrade from 1.n to 1.(n+1) only, with every kube-apiserver at 1.n first, and a
kubelet may never be newer than the API server: so a skip of a minor (1.34 -> 1.36) and a move
down are refused, with the path that is allowed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from policies.dra_guardrails.consequences import SKEW_POLICY
from tools.plan.changes import Changes, ResourceChange

_MINOR = re.compile(r"^([0-9]+)\.([0-9]+)")


def minor_of(version: object) -> tuple[int, int] | None:
    found = _MINOR.match(version) if isinstance(version, str) else None
    return (int(found.group(1)), int(found.group(2))) if found else None


def _text(minor: tuple[int, int]) -> str:
    return f"{minor[0]}.{minor[1]}"


@dataclass(frozen=True)
class MinorUpgrade:
    """The cluster's minor moving from `before` to `after`; `refused` says why it may not, with the allowed path."""

    before: str
    after: str
    refused: str | None
    # The node groups whose version changes; all of them start after the control plane (each depends on the
    # cluster), side by side, since Pulumi updates resources that do not depend on each other in parallel.
    groups: tuple[ResourceChange, ...]

    def as_dict(self) -> dict[str, object]:
        return {
            "before": self.before,
            "after": self.after,
            "refused": self.refused,
            "nodeGroups": [group.urn for group in self.groups],
        }


def refusal(before: tuple[int, int], after: tuple[int, int]) -> str | None:
    """Why the skew policy forbids going from `before` to `after` in one `pulumi up`, or None when it allows it."""
    if after < before:
        return (
            f"Kubernetes has no downgrade from {_text(before)} to {_text(after)}: the skew policy ({SKEW_POLICY}) "
            "describes upgrades only, and a kubelet may not be newer than the API server; keep "
            f'nebius-dra:kubernetesVersion "{_text(before)}" (a lower minor needs a new cluster)'
        )
    if after[0] != before[0] or after[1] > before[1] + 1:
        path = " -> ".join(_text((before[0], minor)) for minor in range(before[1], after[1] + 1))
        return (
            f"{_text(before)} -> {_text(after)} skips a minor: the control plane upgrades one minor at a time "
            f"(version skew policy, {SKEW_POLICY}: from 1.n to 1.(n+1), every kube-apiserver at 1.n first). "
            f"Allowed path: {path}, one `pulumi up` per step, each replacing every node group's nodes; set "
            f'nebius-dra:kubernetesVersion "{_text((before[0], before[1] + 1))}" first'
        )
    return None


@dataclass(frozen=True)
class GroupDowngrade:
    """A node group whose minor goes down against the baseline, with the control plane's minor staying or rising:
    Nebius (and Kubernetes) upgrade a group's nodes, never downgrade them."""

    urn: str
    group: str
    before: str
    after: str

    @property
    def refused(self) -> str:
        return (
            f"node group {self.group}: version {self.before} -> {self.after} lowers its minor: Kubernetes has no "
            f"downgrade (the skew policy, {SKEW_POLICY}, describes upgrades only) and Nebius does not move a node "
            f"group's nodes to a lower minor; allowed: {self.before} or a later minor, one at a time "
            f'(nebius-dra:kubernetesVersion "{self.before}"), or a group under a new name (created at the new version, '
            "the old one deleted with its nodes)"
        )

    def as_dict(self) -> dict[str, object]:
        return {"urn": self.urn, "nodeGroup": self.group, "before": self.before, "after": self.after}


def group_downgrades(
    changes: Changes, minor: MinorUpgrade | None, names: Mapping[str, str]
) -> tuple[GroupDowngrade, ...]:
    """The node groups whose version moves to a lower minor, by their stack file names (`names`, by URN); a move the
    cluster makes too is the cluster's (its refusal names kubernetesVersion once)."""
    found = []
    for group in changes.groups:
        moved = [c for c in group.changes if c.path == "version"]
        before, after = (minor_of(moved[0].before), minor_of(moved[0].after)) if moved else (None, None)
        if before is None or after is None or not after < before:
            continue
        if minor is not None and (minor.before, minor.after) == (_text(before), _text(after)):
            continue
        found.append(GroupDowngrade(group.urn, names.get(group.urn, group.name), _text(before), _text(after)))
    return tuple(found)


def minor_upgrade(changes: Changes) -> MinorUpgrade | None:
    """The cluster's version change against the baseline, or None when its minor stays."""
    if changes.cluster is None:
        return None
    moved = [c for c in changes.cluster.changes if c.path == "controlPlane.version"]
    if not moved:
        return None
    before, after = minor_of(moved[0].before), minor_of(moved[0].after)
    if before is None or after is None or before == after:
        return None
    groups = tuple(sorted((g for g in changes.groups if any(c.path == "version" for c in g.changes)), key=_order))
    return MinorUpgrade(_text(before), _text(after), refusal(before, after), groups)


def _order(group: ResourceChange) -> tuple[bool, str]:
    """How the plan lists them: the system group (the controllers) first, then the GPU groups by name."""
    return (group.rollout is None or group.rollout.gpu, group.name)
