"""What a change does against a baseline plan: every changed field, with what the table of consequences says of it.

The JSON plan records what a later plan compares (`snapshot`): the cluster's version, each node
group's registered inputs (template with labels and taints, version, size, strategy), the Helm
releases (chart, version, values, namespace, repository), the claim templates' specs, the DRA driver's root and
the other Kubernetes objects' places. Against
such a baseline (`--baseline`, `--base`) each differing field is looked up in
`policies/dra_guardrails/consequences.py`, the one table that says what a change does on Nebius
and in the cluster; a field the table has no row for is listed as such, never called harmless.

A baseline written before `planFormat` 2 recorded only the rolled-out template fields of each node
group: it is still read, and the plan says which changes it cannot know.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi.runtime import rpc

from components.config.errors import shown_name
from components.config.reading import printable
from components.dra_constants import BUILTIN_TEMPLATES, NODE_GROUP_LABEL
from components.dra_workloads import DRA_WORKLOADS_TYPE
from components.input.fields import valid_username
from components.kueue import TEAM_QUEUES_TYPE
from components.redaction import REDACTED, holds_a_token, names_a_credential
from components.shown import quotable, shown
from components.values.kueue import NAMESPACE_NAME_LABEL
from components.values.release import OCI_SCHEME, chart_source
from policies.dra_guardrails import PlannedResource
from policies.dra_guardrails.consequences import (
    CLAIM_TEMPLATE_TYPE,
    CLUSTER_QUEUE_TYPE,
    HELM_RELEASE_TYPE,
    KUEUE_TYPE_PREFIX,
    NAMESPACE_TYPE,
    Consequence,
    Effect,
    consequences_of,
)
from policies.dra_guardrails.planned import (
    CLUSTER_TYPE,
    NODE_GROUP_TYPE,
    field_at,
    is_dra_driver_release,
    planned_node_range,
)
from tools.plan.baseline import LOGIN_NONE, LOGIN_SET, PLAN_FORMAT, Baseline
from tools.plan.mock_engine import RegisteredResource
from tools.plan.rollout import Rollout
from tools.plan.settings import capacity_type

KUBERNETES_PREFIX = "kubernetes:"
# What a node group's snapshot records besides its URN and Nebius name (the registered inputs' keys).
GROUP_FIELDS = ("template", "version", "fixedNodeCount", "autoscaling", "strategy", "autoRepair")
# What the cluster's snapshot records (its registered inputs' keys); before issue 39, its name and version only.
CLUSTER_FIELDS = ("name", "parentId", "controlPlane")
# Before planFormat 2 a snapshot's template left out the fields Nebius does not roll out.
LEGACY_TEMPLATE_EXCLUDED = ("metadata", "taints")
LEGACY_UNKNOWN = (
    "node group versions, labels, taints, sizes and strategies, the cluster's Kubernetes version, the Helm "
    "releases' versions and values, the DRA driver's root and the claim templates"
)


# The TLS files of Helm's options, recorded by path (a path names a file; it is no credential, credentials_in).
TLS_FIELDS = ("caFile", "certFile", "keyFile")


def repository_record(options: Any) -> dict[str, Any]:
    """What the JSON plan records of a release's repository options (registered as a Pulumi secret once they hold a
    password, so read here unwrapped): the classic repository's URL, the TLS files' paths and whether a login is set.

    The login itself is never recorded, not even as a digest. The password is a secret the offline plan cannot
    decrypt (it sees only its placeholder), so nothing of it could be compared; and a digest of a username, which is
    short, is undone by trying names, while a username may even hold a password after its `:` (credentials_in). A
    username never comes without a password (repository_access refuses one alone), so `login: set` says both are
    there. A login added or removed is then seen; a login changed while set stays unknowable, and the plan says so
    instead of "no change" (what_changed's login line). `login` is always written, so that a baseline without it is
    known to predate it."""
    opts = rpc.unwrap_rpc_secret(options) if rpc.is_rpc_secret(options) else options
    opts = opts if isinstance(opts, Mapping) else {}
    login = LOGIN_SET if opts.get("username") or opts.get("password") else LOGIN_NONE
    record: dict[str, Any] = {"repo": opts["repo"]} if isinstance(opts.get("repo"), str) else {}
    record.update({key: opts[key] for key in TLS_FIELDS if isinstance(opts.get(key), str)})
    return {**record, "login": login}


def _release_snapshot(resource: RegisteredResource, inputs: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "urn": resource.urn,
        "name": resource.name,
        "chart": inputs.get("chart"),
        "version": inputs.get("version"),
        "values": inputs.get("values") or {},
        # Since attack2: where it is installed (a move uninstalls it and installs it anew).
        "namespace": inputs.get("namespace"),
        # Where Helm fetches a classic repository's chart (an OCI chart's is in its reference, chart_source), and
        # whether it logs in: the options' credentials never reach the JSON plan.
        "repositoryOpts": repository_record(resource.inputs.get("repositoryOpts")),
    }


def _before_login_records(record: Mapping[str, Any]) -> dict[str, Any]:
    """A current release as a baseline written before `repository_record` recorded it: the URL alone, and nothing
    when a password made the options a secret (that code read none of it)."""
    opts = record.get("repositoryOpts") or {}
    repo = opts.get("repo")
    hidden = opts.get("login") == LOGIN_SET or not isinstance(repo, str)
    return {**record, "repositoryOpts": None if hidden else {"repo": repo}}


def _release_compared(record: Mapping[str, Any]) -> dict[str, Any]:
    """A release record with its chart as Helm names it, the chart's name apart from where it is fetched: the same
    chart from a mirror is a change of `repositoryOpts.repo` (the table's chart-source row), not of `chart`."""
    chart = record.get("chart")
    if not isinstance(chart, str):
        return dict(record)
    opts = record.get("repositoryOpts")
    repository = opts.get("repo") if isinstance(opts, Mapping) else None
    name, source = chart_source(chart, repository if isinstance(repository, str) else None)
    compared = {**record, "chart": name}
    if source is not None:
        compared["repositoryOpts"] = {**(opts if isinstance(opts, Mapping) else {}), "repo": source}
    return compared


def driver_root(resources: Iterable[PlannedResource]) -> str | None:
    """The root the DRA driver's kubelet plugin reads the GPU driver from (the chart's `nvidiaDriverRoot`)."""
    roots = [(r.props.get("values") or {}).get("nvidiaDriverRoot") for r in resources if is_dra_driver_release(r)]
    return roots[0] if len(roots) == 1 and isinstance(roots[0], str) else None


def snapshot(
    resources: list[RegisteredResource], inputs: Mapping[str, Mapping[str, Any]], planned: list[PlannedResource]
) -> dict[str, Any]:
    """What the JSON plan records so that a later plan can tell what its change does (`--baseline`)."""
    ordered = sorted(resources, key=lambda r: r.urn)
    clusters = [r for r in ordered if r.type == CLUSTER_TYPE]
    return {
        "planFormat": PLAN_FORMAT,
        "cluster": {
            "urn": clusters[0].urn,
            **{key: inputs[clusters[0].urn].get(key) for key in CLUSTER_FIELDS},
        }
        if len(clusters) == 1
        else None,
        "nodeGroups": [
            {
                "urn": r.urn,
                "name": inputs[r.urn].get("name"),
                # Pulumi refuses to delete a protected resource: a group removed from the stack then stays.
                "protect": r.protect,
                **{key: inputs[r.urn][key] for key in GROUP_FIELDS if key in inputs[r.urn]},
            }
            for r in ordered
            if r.type == NODE_GROUP_TYPE
        ],
        "releases": [_release_snapshot(r, inputs[r.urn]) for r in ordered if r.type == HELM_RELEASE_TYPE],
        "claimTemplates": [
            {
                "urn": r.urn,
                "name": (inputs[r.urn].get("metadata") or {}).get("name", r.name),
                "namespace": (inputs[r.urn].get("metadata") or {}).get("namespace"),
                "spec": inputs[r.urn].get("spec"),
            }
            for r in ordered
            if r.type == CLAIM_TEMPLATE_TYPE
        ],
        "driverRoot": driver_root(planned),
        # Since attack2: the other Kubernetes objects (namespaces, Pods, queues), so that a deleted one is named; a
        # Kueue object's spec too (a quota or cohort changes in place), so that a change of it is named.
        "objects": [
            {
                "urn": r.urn,
                "type": r.type,
                **_object_place(inputs[r.urn]),
                **({"spec": inputs[r.urn].get("spec")} if r.type.startswith(KUEUE_TYPE_PREFIX) else {}),
            }
            for r in ordered
            if r.type.startswith(KUBERNETES_PREFIX) and r.type not in (HELM_RELEASE_TYPE, CLAIM_TEMPLATE_TYPE)
        ],
    }


def _object_place(inputs: Mapping[str, Any]) -> dict[str, Any]:
    metadata = inputs.get("metadata") or {}
    return {"name": metadata.get("name"), "namespace": metadata.get("namespace")}


@dataclass(frozen=True)
class KubeObject:
    """A recorded Kubernetes object by kind and place; its name and namespace are what identify it in the cluster."""

    resource_type: str
    namespace: str | None
    name: str
    # The one namespace a team's ClusterQueue admits from (its namespaceSelector), else None; not part of what
    # identifies the object, so a move is still a change of name or namespace only.
    admits_from: str | None = field(default=None, compare=False)

    @property
    def kind(self) -> str:
        return self.resource_type.rsplit(":", 1)[-1]

    @property
    def place(self) -> str:
        """`namespace/name`, each as `shown_name` shows a name: a baseline's are outside text."""
        return f"{shown_name(self.namespace) + '/' if self.namespace else ''}{shown_name(self.name)}"

    def text(self) -> str:
        return f"{shown_name(self.kind)} {self.place}"


def kube_object(record: Mapping[str, Any]) -> KubeObject:
    namespace = record.get("namespace")
    spec = record.get("spec")
    selector = spec.get("namespaceSelector") if isinstance(spec, Mapping) else None
    labels = selector.get("matchLabels") if isinstance(selector, Mapping) and len(selector) == 1 else None
    admits_from = labels.get(NAMESPACE_NAME_LABEL) if isinstance(labels, Mapping) and len(labels) == 1 else None
    return KubeObject(
        str(record.get("type")),
        namespace if isinstance(namespace, str) else None,
        str(record.get("name")),
        admits_from if isinstance(admits_from, str) and record.get("type") == CLUSTER_QUEUE_TYPE else None,
    )


def goes_with(item: KubeObject, namespaces: Iterable[str]) -> bool:
    """Whether deleting `namespaces` takes `item` along: it lives in one, or it is a team's ClusterQueue that admits
    from one only (its workloads live there, and Kueue's finalizer lets it go once they are gone)."""
    taken = set(namespaces)
    return item.namespace in taken or item.admits_from in taken


_ABSENT = object()


def as_json(value: Any) -> str:
    """A recorded value for the plan's text; a baseline's value is outside input, so no control character of
    it reaches a terminal or a PR summary (a newline could forge a line, an escape rewrite the screen), and a word
    with a credential's shape (`u:PW@host`, `a=b`: `components.shown`) is shown by its shape, as a refusal shows it.
    Text with a blank in it (a CEL expression, a script) is shown, redacted as the whole plan is: its `==` or `@`
    is no credential's, and its words are what a reviewer reads; but a token's form among them (`ghp_...`, which the
    redactor does not know in prose) has no other reading, so such a text is shown by its shape too."""
    one_word = isinstance(value, str) and value and not any(c.isspace() for c in value)
    if isinstance(value, str) and (one_word or holds_a_token(value)) and quotable(value) != value:
        return shown(value)
    if value is _ABSENT:
        return "(unset)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"  # JSON's word for what the baseline holds (Python's `None` is no word of the file)
    if isinstance(value, str) and (not value or value != value.strip()):
        # Quoted, so that a blank at either end is seen: `"1gpu-16vcpu-200gb "` and `1gpu-16vcpu-200gb` differ.
        return printable(json.dumps(value))
    return "{}" if value == {} else printable(str(value))


def _hidden(value: Any) -> str:
    return as_json(value) if value is _ABSENT else REDACTED


# A field a user name is written under (`username`, `user`, `db-user`, `user_name`).
_USERNAME_FIELD = re.compile(r"(?i)user(?:[-_.]?name)?\Z")


def _user_shown(name: str, value: Any) -> str:
    """A value as shown, but a string under a username field that no user name is (a `:` or a blank in it: RFC 7617
    section 2, the user-id and the password joined) is hidden whole, as credentials_in hides a refused username."""
    if isinstance(value, str) and _USERNAME_FIELD.search(name) and not valid_username(value):
        return REDACTED
    return as_json(value)


def _names(items: list[Any]) -> list[str] | None:
    """The names of a list's items when each is a map with a `name` of its own (a Kueue flavor, a quota's resource),
    else None."""
    names = [item.get("name") if isinstance(item, Mapping) else None for item in items]
    named = [name for name in names if isinstance(name, str) and name]
    return named if len(named) == len(items) == len(set(named)) else None


def leaves(value: Any, prefix: str) -> dict[str, Any]:
    """Leaves by dotted path, list items by index (`taints[0].key`), or by name where each item has its own
    (`flavors[h200-train].resources[nvidia.com/gpu].nominalQuota`: a position says neither which flavor nor which
    resource), the list's names in order then a leaf at the list's path (Kueue tries flavors in order); an empty map
    or list is a leaf (`preemptible: {}` switches spot on)."""
    return {path: leaf for path, (_, leaf) in shown_leaves(value, prefix, prefix).items()}


def shown_leaves(value: Any, prefix: str, shown_prefix: str) -> dict[str, tuple[str, Any]]:
    """`leaves`, each with its path as the plan prints it: every key and item name as `shown_name` shows a name, so
    a baseline's label key `u:PW@host` is told by its shape (the path itself stays the key, for the comparison and
    the table's rows: two keys of one shape are still two fields)."""
    flat: dict[str, tuple[str, Any]] = {}
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            shown_path = f"{shown_prefix}.{shown_name(key)}" if prefix else shown_name(key)
            flat.update(shown_leaves(item, path, shown_path))
        return flat
    if isinstance(value, list) and value:
        names = _names(value)
        if names is not None:
            flat[prefix] = (shown_prefix, names)
        for index, item in enumerate(value):
            name = index if names is None else names[index]
            flat.update(shown_leaves(item, f"{prefix}[{name}]", f"{shown_prefix}[{shown_name(name)}]"))
        return flat
    return {prefix: (shown_prefix, value)}


@dataclass(frozen=True)
class FieldChange:
    """One registered field that differs, and the table's rows for it (none: the table does not know it)."""

    path: str
    before: Any
    after: Any
    rows: tuple[Consequence, ...]
    # The path as printed (`shown_leaves`); the path itself when empty.
    shown_path: str = ""

    @property
    def effects(self) -> frozenset[Effect]:
        return frozenset(row.effect for row in self.rows)

    def text(self) -> str:
        """`path: before -> after`; both values hidden alike when the field's name is a credential's (a label key
        `password`): the redactor would hide only the value right after the name and show the other. A username that
        is no user name (`bob:PW`, a password pasted after its `:`) is hidden as credentials_in hides it."""
        name = re.split(r"[.\[]", self.path)[-1]
        path = self.shown_path or printable(self.path)
        if names_a_credential(name):
            return f"{path}: {_hidden(self.before)} -> {_hidden(self.after)}"
        return f"{path}: {_user_shown(name, self.before)} -> {_user_shown(name, self.after)}"


@dataclass(frozen=True)
class ResourceChange:
    """A resource present in both plans whose recorded fields differ."""

    urn: str
    name: str
    resource_type: str
    changes: tuple[FieldChange, ...]
    rollout: Rollout | None = None
    # A node group's (fewest, most) nodes in the baseline: the nodes it has before the change.
    nodes_before: tuple[int, int] | None = None
    # A node group's capacity (`capacity.type` of the stack file) before and after, when the change moves it: the
    # provider fields alone (`template.preemptible: (unset) -> {}`) do not say "on-demand -> spot".
    capacity: tuple[str, str] | None = None

    @property
    def fewest_before(self) -> int | None:
        """A node group's fewest nodes in the baseline (a roll-out may start there)."""
        return None if self.nodes_before is None else self.nodes_before[0]

    def of(self, *effects: Effect) -> tuple[FieldChange, ...]:
        return tuple(change for change in self.changes if change.effects & set(effects))

    @property
    def unknown(self) -> tuple[FieldChange, ...]:
        return tuple(change for change in self.changes if not change.rows)

    def as_dict(self) -> dict[str, Any]:
        return {
            "urn": self.urn,
            "name": self.name,
            "changes": [
                {"change": change.text(), "effects": sorted(effect.value for effect in change.effects)}
                for change in self.changes
            ],
        }


def _diff(
    resource_type: str, before: Mapping[str, Any], after: Mapping[str, Any], skip: tuple[str, ...] = ()
) -> tuple[FieldChange, ...]:
    # A cluster's and a node group's `name` is their Nebius name (clusterName renames them in place) and a group's
    # `protect` Pulumi's option (lifted, a later removal deletes it): both have rows. A release's or claim template's
    # name is its Pulumi name, the same for the same URN.
    named = resource_type in (CLUSTER_TYPE, NODE_GROUP_TYPE)
    kept = ("urn", *(() if named else ("name", "protect")), *skip)
    walked = {**shown_leaves(dict(before), "", ""), **shown_leaves(dict(after), "", "")}
    old = {p: v for p, v in leaves(dict(before), "").items() if p.split(".", 1)[0] not in kept}
    new = {p: v for p, v in leaves(dict(after), "").items() if p.split(".", 1)[0] not in kept}
    return tuple(
        FieldChange(
            path,
            old.get(path, _ABSENT),
            new.get(path, _ABSENT),
            consequences_of(resource_type, path),
            walked[path][0],
        )
        for path in sorted(set(old) | set(new))
        if old.get(path, _ABSENT) != new.get(path, _ABSENT)
    )


def _legacy_group(group: Mapping[str, Any]) -> dict[str, Any]:
    """A current group as a planFormat-1 baseline recorded it: the rolled-out template fields only."""
    template = group.get("template") or {}
    return {"template": {k: v for k, v in template.items() if k not in LEGACY_TEMPLATE_EXCLUDED}}


@dataclass
class Changes:
    """Everything that differs from the baseline, by resource kind, in the order Nebius applies it."""

    legacy: bool
    cluster: ResourceChange | None = None
    groups: list[ResourceChange] = field(default_factory=list)
    removed_groups: list[str] = field(default_factory=list)
    # Removed groups the baseline deployed with Pulumi's protect option: `pulumi up` refuses to delete them.
    protected_removals: list[str] = field(default_factory=list)
    # Removed groups of GPU nodes (a GPU platform in the baseline): the sample Pods may run there.
    gpu_removals: list[str] = field(default_factory=list)
    added_groups: list[str] = field(default_factory=list)
    releases: list[ResourceChange] = field(default_factory=list)
    # Helm releases installed or uninstalled by the change, as "<release> (<chart> <version>)".
    added_releases: list[str] = field(default_factory=list)
    removed_releases: list[str] = field(default_factory=list)
    claim_templates: list[ResourceChange] = field(default_factory=list)
    # Claim templates the change creates or deletes.
    added_claim_templates: list[ClaimTemplate] = field(default_factory=list)
    removed_claim_templates: list[ClaimTemplate] = field(default_factory=list)
    driver_root: tuple[str | None, str | None] | None = None
    # Other Kubernetes objects created, deleted, or moved (a new name or namespace: deleted and created); None when
    # the baseline did not record them.
    added_objects: list[KubeObject] | None = None
    removed_objects: list[KubeObject] | None = None
    moved_objects: list[tuple[KubeObject, KubeObject]] | None = None
    # Kubernetes objects whose recorded spec differs (the Kueue queues and flavors), and whether the baseline did not
    # record a spec this plan does (so its changes are not known).
    objects: list[ResourceChange] = field(default_factory=list)
    unrecorded_specs: bool = False
    # Releases that log in to their repository in both plans: a changed login is not recorded, so not known here.
    login_unknown: list[str] = field(default_factory=list)
    # Optional fields the baseline did not record (a cluster's parentId, a release's namespace): not compared.
    not_known: list[NotKnown] = field(default_factory=list)

    @property
    def deleted_namespaces(self) -> list[str]:
        """The namespaces the change deletes (gone, or the old place of a moved one): each takes all in it along."""
        gone = [*(self.removed_objects or []), *(old for old, _ in self.moved_objects or [])]
        return [item.name for item in gone if item.resource_type == NAMESPACE_TYPE]

    @property
    def recreated(self) -> list[ResourceChange]:
        """Groups whose nodes are replaced, by a template roll-out or a version change."""
        return [g for g in self.groups if g.of(Effect.ROLLING_REPLACE, Effect.MINOR_UPGRADE, Effect.DELETE_CREATE)]

    def as_dict(self) -> dict[str, Any]:
        return {
            "baselineFormat": 1 if self.legacy else PLAN_FORMAT,
            "notKnown": LEGACY_UNKNOWN if self.legacy else None,
            "cluster": None if self.cluster is None else self.cluster.as_dict(),
            "nodeGroups": [g.as_dict() for g in self.groups],
            "removedNodeGroups": self.removed_groups,
            "protectedRemovals": self.protected_removals,
            "addedNodeGroups": self.added_groups,
            "releases": [r.as_dict() for r in self.releases],
            "addedReleases": self.added_releases,
            "removedReleases": self.removed_releases,
            "claimTemplates": [c.as_dict() for c in self.claim_templates],
            "addedClaimTemplates": [t.text() for t in self.added_claim_templates],
            "removedClaimTemplates": [t.text() for t in self.removed_claim_templates],
            # As the text shows them (`as_json`): the baseline's is outside text; null where a plan has none.
            "driverRoot": None
            if self.driver_root is None
            else [None if root is None else as_json(root) for root in self.driver_root],
            "addedObjects": None if self.added_objects is None else [o.text() for o in self.added_objects],
            "removedObjects": None if self.removed_objects is None else [o.text() for o in self.removed_objects],
            "movedObjects": None
            if self.moved_objects is None
            else [f"{old.text()} -> {new.text()}" for old, new in self.moved_objects],
            "objects": [o.as_dict() for o in self.objects],
            "loginNotKnown": self.login_unknown,
            "fieldsNotKnown": [{"path": n.path, "of": list(n.names)} for n in self.not_known],
        }


def _capacity_move(
    resource_type: str, old: Mapping[str, Any], new: Mapping[str, Any], changes: tuple[FieldChange, ...]
) -> tuple[str, str] | None:
    """A node group's capacity before and after, when a field that decides it is among the recorded changes."""
    if resource_type != NODE_GROUP_TYPE or not any(c.path.startswith(CAPACITY_FIELDS) for c in changes):
        return None
    moved = (capacity_type(old.get("template")), capacity_type(new.get("template")))
    return moved if moved[0] != moved[1] else None


# The template fields whose presence is the group's capacity (tools/plan/settings.py, capacity_type).
CAPACITY_FIELDS = ("template.preemptible", "template.reservationPolicy")


def _paired(
    resource_type: str,
    before: Mapping[str, Mapping[str, Any]],
    current: Iterable[Mapping[str, Any]],
    rollouts: Mapping[str, Rollout] | None = None,
    legacy: bool = False,
) -> list[ResourceChange]:
    found = []
    for record in current:
        old = before.get(record["urn"])
        if old is None:
            continue
        unrecorded = (*unrecorded_fields(resource_type, old), *(("name",) if legacy else ()))
        if resource_type == HELM_RELEASE_TYPE:
            if not records_login(old):
                record = _before_login_records(record)
            old, record = _release_compared(old), _release_compared(record)
        changes = _diff(resource_type, old, record, unrecorded)
        if changes:
            rollout = (rollouts or {}).get(record["urn"])
            counted = (
                planned_node_range(PlannedResource(record["urn"], resource_type, str(record.get("name")), old))
                if resource_type == NODE_GROUP_TYPE
                else None
            )
            nodes = (int(counted[0]), int(counted[1])) if counted is not None else None
            capacity = _capacity_move(resource_type, old, record, changes)
            found.append(
                ResourceChange(record["urn"], str(record.get("name")), resource_type, changes, rollout, nodes, capacity)
            )
    return found


def unrecorded_fields(resource_type: str, old: Mapping[str, Any]) -> tuple[str, ...]:
    """The optional fields a baseline's record lacks, which are not compared (and the plan says so, `NotKnown`): a
    claim template's namespace (recorded since issue 39), a release's namespace (since attack2) and repositoryOpts
    (since mirrors were told from upgrades; an OCI chart's reference still names its repository)."""
    if resource_type == CLAIM_TEMPLATE_TYPE:
        return () if "namespace" in old else ("namespace",)
    if resource_type != HELM_RELEASE_TYPE:
        return ()
    unrecorded = () if "repositoryOpts" in old or str(old.get("chart")).startswith(OCI_SCHEME) else ("repositoryOpts",)
    return (*unrecorded, *(() if "namespace" in old else ("namespace",)))


@dataclass(frozen=True)
class NotKnown:
    """A field the baseline did not record for these resources (of `resource_type`, by name): a change of it cannot be
    seen, so the plan says what it would do instead of staying silent."""

    resource_type: str
    path: str
    names: tuple[str, ...]


def _not_known(
    resource_type: str, before: Mapping[str, Mapping[str, Any]], current: Iterable[Mapping[str, Any]]
) -> list[NotKnown]:
    names: dict[str, list[str]] = {}
    for record in current:
        old = before.get(record["urn"])
        for path in unrecorded_fields(resource_type, old) if old is not None else ():
            names.setdefault(path, []).append(str(record.get("name")))
    return [NotKnown(resource_type, path, tuple(found)) for path, found in names.items()]


_RELEASE_VERSION = re.compile(r"v?([0-9]+(?:\.[0-9]+)*)(?:[-+].*)?")


def _version_key(value: Any) -> tuple[int, ...] | None:
    matched = _RELEASE_VERSION.fullmatch(value) if isinstance(value, str) else None
    return tuple(int(part) for part in matched[1].split(".")) if matched else None


def release_downgrade(release: ResourceChange) -> FieldChange | None:
    """The release's `version` change when it goes back (0.4.2 -> 0.4.1, by number; a pre-release suffix is not
    compared), else None: Helm allows it, and it is no upgrade."""
    for change in release.changes:
        if change.path == "version":
            before, after = _version_key(change.before), _version_key(change.after)
            if before is not None and after is not None and after < before:
                return change
    return None


def records_login(release: Mapping[str, Any]) -> bool:
    """Whether a recorded release says if it logs in (`repository_record`; a baseline made before it does not)."""
    opts = release.get("repositoryOpts")
    return isinstance(opts, Mapping) and "login" in opts


def _login_unknown(before: Mapping[str, Mapping[str, Any]], current: Iterable[Mapping[str, Any]]) -> list[str]:
    """Releases that log in now whose login may have changed unseen: set in the baseline too (only its presence is
    recorded), or the baseline did not record it."""
    return [
        str(record.get("name"))
        for record in current
        if record["urn"] in before
        and (record.get("repositoryOpts") or {}).get("login") == LOGIN_SET
        and (not records_login(before[record["urn"]]) or before[record["urn"]]["repositoryOpts"]["login"] == LOGIN_SET)
    ]


def _object_changes(
    before: Mapping[str, Mapping[str, Any]], current: Mapping[str, Mapping[str, Any]]
) -> tuple[list[ResourceChange], bool]:
    """The recorded Kubernetes objects whose spec differs (the Kueue objects record one), each by its kind and
    place, and whether some spec could not be compared because the baseline did not record it."""
    found: list[ResourceChange] = []
    unrecorded = False
    for urn, record in current.items():
        old = before.get(urn)
        if old is None or "spec" not in record:
            continue
        if "spec" not in old:
            unrecorded = True
            continue
        changes = _diff(str(record["type"]), {"spec": old.get("spec")}, {"spec": record.get("spec")})
        if changes:
            found.append(ResourceChange(urn, kube_object(record).text(), str(record["type"]), changes))
    return found, unrecorded


def _release_text(release: Mapping[str, Any]) -> str:
    """`<release> (<chart> <version>)`, each as `shown_name` shows a name: a baseline's are outside text."""
    return (
        f"{shown_name(release.get('name'))} ({shown_name(release.get('chart'))} {shown_name(release.get('version'))})"
    )


@dataclass(frozen=True)
class ClaimTemplate:
    """A recorded claim template, by what made it: a built-in one, one of userClaimTemplates, or a team's (queues)."""

    namespace: str | None
    name: str
    origin: str

    @property
    def builtin(self) -> bool:
        return self.origin == BUILTIN_ORIGIN

    def text(self) -> str:
        """`namespace/name (origin)`, each name as `shown_name` shows it: a baseline's are outside text."""
        return f"{shown_name(self.namespace) + '/' if self.namespace else ''}{shown_name(self.name)} ({self.origin})"


BUILTIN_ORIGIN = "built-in, builtinClaimTemplates"


def claim_template(record: Mapping[str, Any]) -> ClaimTemplate:
    """The template a record names; the component that registered it is in its URN's chain of parent types."""
    urn = str(record["urn"])
    chain = urn.split("::")[2].split("$") if urn.count("::") >= 3 else []
    name = str(record.get("name"))
    if TEAM_QUEUES_TYPE in chain:
        origin = "a team's template, queues"
    elif DRA_WORKLOADS_TYPE in chain and name in BUILTIN_TEMPLATES:
        origin = BUILTIN_ORIGIN
    else:
        origin = "userClaimTemplates"
    namespace = record.get("namespace")
    return ClaimTemplate(namespace if isinstance(namespace, str) else None, name, origin)


def written_name(group: Mapping[str, Any], taken: Iterable[str] = ()) -> str:
    """The stack file's name of a recorded group, as its nodes' label carries it; else, or when that name is one a
    group of the other plan has (`taken`: a hand-edited baseline's group with h200's labels), its Nebius name, so
    that a line never names a group that stays."""
    labels = ((group.get("template") or {}).get("metadata") or {}).get("labels") or {}
    label = labels.get(NODE_GROUP_LABEL)
    return str(label if label and label not in set(taken) else group.get("name"))


def compare(baseline: Baseline, current: Mapping[str, Any], rollouts: Mapping[str, Rollout]) -> Changes:
    """What differs between the baseline and this plan's snapshot, each field with its row of the table."""
    groups = current["nodeGroups"]
    changes = Changes(legacy=baseline.legacy)
    if baseline.legacy:
        # Its template's rolled-out fields only (names and protection unrecorded, LEGACY_UNKNOWN says so).
        before = {urn: _legacy_group(g) | {"urn": urn} for urn, g in baseline.groups.items()}
        compared = [_legacy_group(g) | {"urn": g["urn"], "name": g["name"]} for g in groups]
        changes.groups = _paired(NODE_GROUP_TYPE, before, compared, rollouts, legacy=True)
    else:
        changes.groups = _paired(NODE_GROUP_TYPE, baseline.groups, groups, rollouts)
    present = {g["urn"] for g in groups}
    staying = [written_name(g) for g in groups]
    # A baseline's group names are outside text: each as `shown_name` shows a name, wherever a line names it.
    changes.removed_groups = [
        shown_name(written_name(g, staying)) for urn, g in baseline.groups.items() if urn not in present
    ]
    changes.protected_removals = [
        shown_name(written_name(g, staying))
        for urn, g in baseline.groups.items()
        if urn not in present and g.get("protect") is True
    ]
    changes.gpu_removals = [
        shown_name(written_name(g, staying))
        for urn, g in baseline.groups.items()
        if urn not in present and str(field_at(g, "template", "resources", "platform") or "").startswith("gpu-")
    ]
    changes.added_groups = [shown_name(written_name(g)) for g in groups if g["urn"] not in baseline.groups]
    if baseline.legacy:
        return changes
    cluster = current.get("cluster")
    if baseline.cluster is not None and cluster is not None:
        if "parentId" not in baseline.cluster:
            # Recorded before issue 39 (the name and the version only) or trimmed: compared like for like, the fields
            # the baseline lacks not known.
            recorded = baseline.cluster.get("controlPlane") or {}
            plane = cluster.get("controlPlane") or {}
            unrecorded = ["parentId", *(f"controlPlane.{key}" for key in plane if key not in recorded)]
            changes.not_known += [NotKnown(CLUSTER_TYPE, path, (str(cluster.get("name")),)) for path in unrecorded]
            compared_plane = {key: value for key, value in plane.items() if key in recorded}
            cluster = {"urn": cluster["urn"], "name": cluster.get("name"), "controlPlane": compared_plane}
        paired = _paired(CLUSTER_TYPE, {baseline.cluster["urn"]: baseline.cluster}, [cluster])
        changes.cluster = paired[0] if paired else None
    changes.releases = _paired(HELM_RELEASE_TYPE, baseline.releases, current["releases"])
    now = {r["urn"]: r for r in current["releases"]}
    changes.added_releases = [_release_text(r) for urn, r in now.items() if urn not in baseline.releases]
    changes.removed_releases = [_release_text(r) for urn, r in baseline.releases.items() if urn not in now]
    changes.login_unknown = _login_unknown(baseline.releases, current["releases"])
    changes.claim_templates = _paired(CLAIM_TEMPLATE_TYPE, baseline.claim_templates, current["claimTemplates"])
    changes.not_known += _not_known(HELM_RELEASE_TYPE, baseline.releases, current["releases"])
    changes.not_known += _not_known(CLAIM_TEMPLATE_TYPE, baseline.claim_templates, current["claimTemplates"])
    templates = {t["urn"]: t for t in current["claimTemplates"]}
    changes.added_claim_templates = [
        claim_template(t) for urn, t in templates.items() if urn not in baseline.claim_templates
    ]
    changes.removed_claim_templates = [
        claim_template(t) for urn, t in baseline.claim_templates.items() if urn not in templates
    ]
    if baseline.objects is not None:
        objects = {o["urn"]: o for o in current["objects"]}
        changes.added_objects = [kube_object(o) for urn, o in objects.items() if urn not in baseline.objects]
        changes.removed_objects = [kube_object(o) for urn, o in baseline.objects.items() if urn not in objects]
        moves = [
            (kube_object(baseline.objects[urn]), kube_object(o))
            for urn, o in objects.items()
            if urn in baseline.objects
        ]
        # pulumi-kubernetes replaces an object whose .metadata.name or .metadata.namespace changes.
        changes.moved_objects = [(old, new) for old, new in moves if old != new]
        changes.objects, changes.unrecorded_specs = _object_changes(baseline.objects, objects)
    if baseline.driver_root != current.get("driverRoot"):
        changes.driver_root = (baseline.driver_root, current.get("driverRoot"))
    return changes
