"""The plan's first section, "What changed": every difference from the baseline, as the table of consequences reads it.

In the order a change is applied: a refusal first (nothing below happens), the cluster's minor
upgrade (control plane, then every node group with its batches and duration), the steps of a
driver mode change (a relabel comes before `pulumi up`), the groups whose nodes are replaced, what reaches only new nodes, what changes in place, the Helm
releases moved to another namespace (uninstalled and installed), the Helm upgrades (pods restarted, CRDs Helm will
not update, another repository), the claim templates replaced, created and deleted, and
any field the table has no row for. Text and Markdown print the same lines.
"""

from __future__ import annotations

from components.config.reading import printable
from components.dra_workloads import BUILTINS_LEFT_OUT, DRA_WORKLOADS_TYPE
from policies.dra_guardrails.consequences import (
    CLAIM_TEMPLATE_PRESENCE,
    CLAIM_TEMPLATE_TYPE,
    GROUP,
    HELM_RELEASE_TYPE,
    NAMESPACE_TYPE,
    SAMPLE_POD_EVICTION,
    Effect,
    consequence_of_setting,
    consequences_of,
    presence_of,
)
from policies.dra_guardrails.planned import CLUSTER_TYPE, NODE_GROUP_TYPE, POD_TYPE
from tools.cost.render import setting_move
from tools.plan.changes import (
    LEGACY_UNKNOWN,
    Changes,
    FieldChange,
    KubeObject,
    ResourceChange,
    as_json,
    goes_with,
    release_downgrade,
)
from tools.plan.driver_line import DriverLineChange
from tools.plan.graph import DURATION_ESTIMATES
from tools.plan.model import Plan
from tools.plan.rollout import duration_text

# Pulumi's protect option: "Pulumi will fail to delete a protected resource" until it is unprotected.
PROTECT_SOURCE = "https://www.pulumi.com/docs/iac/concepts/options/protect/"
NO_BASELINE = (
    "Nodes recreated: not known without a baseline (in a git checkout the plan compares with the last commit; "
    "--base REF, or --baseline with an earlier JSON plan, names another)"
)
# The stack setting the recorded driverRoot carries (components/config/driver.py sets nvidiaDriverRoot from it).
DRIVER_ROOT_SETTING = "draDriverRoot"
# What another login to the chart repository does (the credential settings' row).
LOGIN_ROW = consequences_of(HELM_RELEASE_TYPE, "repositoryOpts.login")[0]
# What a group gone from the stack (or renamed: another URN) does: the group name's row.
GROUP_DELETED = consequences_of(NODE_GROUP_TYPE, "urn")[0]
# The stack setting a group's capacity comes from, as the table of consequences names it.
CAPACITY_SETTING = f"nebius-dra:{GROUP}.capacity.type"
NOTHING = "Nothing recorded differs from the baseline: no node is recreated, no release upgraded"


def _driver_change_lines(change: DriverLineChange) -> list[str]:
    """The steps the chart's upgrade guide requires, or why the move back is refused."""
    title = "REFUSED" if change.refused else "PLANNED CHART UPGRADE"
    return [
        f"{title}: DRA driver {change.before} -> {change.after}",
        *(f"  {n}. {step}" for n, step in enumerate(change.steps, 1)),
    ]


def _group(change: ResourceChange, names: dict[str, str]) -> str:
    return names.get(change.urn, change.name)


def _minor_lines(plan: Plan, names: dict[str, str]) -> list[str]:
    minor = plan.minor
    if minor is None:
        return []
    if minor.refused is not None:
        return [f"REFUSED: kubernetesVersion {minor.before} -> {minor.after}", f"  {minor.refused}"]
    cluster = plan.changes.cluster if plan.changes else None
    row = next((c.rows[0] for c in cluster.changes if c.rows), None) if cluster else None
    control_plane = DURATION_ESTIMATES["mk8s cluster"].seconds
    bounded = [g.rollout.seconds for g in minor.groups if g.rollout is not None]
    longest = max((s for s in bounded if s is not None), default=0.0)
    unbounded = any(g.rollout is None or g.rollout.seconds is None for g in minor.groups)
    total = "no upper bound" if unbounded else f"about {duration_text(control_plane + longest)} at most"
    lines = [
        f"CLUSTER MINOR UPGRADE {minor.before} -> {minor.after} (kubernetesVersion): control plane first, then every "
        f"node group, each node replaced; {total}",
        f"  1. control plane {cluster.name if cluster else ''}: {minor.before} -> {minor.after}, about "
        f"{duration_text(control_plane)} (estimate; Nebius publishes none)",
        f"  2. then the {len(minor.groups)} node group(s), side by side (each depends only on the cluster):",
    ]
    lines += [
        f"     {_group(g, names)}: "
        + (f"{g.rollout.describe()}; {g.rollout.capacity()}" if g.rollout else "roll-out not known")
        for g in minor.groups
    ]
    samples = sample_pods(plan)
    if samples and any(g.rollout is not None and g.rollout.gpu for g in minor.groups):
        lines.append(f"  sample Pod(s) {', '.join(samples)} (samplePods): {SAMPLE_POD_EVICTION.does}")
        lines.append(f"    source: {SAMPLE_POD_EVICTION.source}")
    if row is not None:
        lines.append(f"  source: {row.source}")
    return lines


def _field_lines(changes: tuple[FieldChange, ...], indent: str = "    ") -> list[str]:
    return [f"{indent}{change.text()}" for change in changes]


def _source_lines(changes: tuple[FieldChange, ...], indent: str = "    ") -> list[str]:
    """The sources of the table's rows that say what `changes` do, each once: every consequence shown names one."""
    return [f"{indent}source: {source}" for source in dict.fromkeys(row.source for c in changes for row in c.rows)]


def _cluster_lines(changes: Changes) -> list[str]:
    """A cluster field Nebius cannot change in place (parentId, subnetId): the cluster and everything on it go."""
    replaced = changes.cluster.of(Effect.DELETE_CREATE) if changes.cluster else ()
    if not replaced:
        return []
    lines = [f"REPLACES THE CLUSTER {printable(changes.cluster.name if changes.cluster else '')}"]
    for change in replaced:
        lines.append(f"  {change.text()}: {change.rows[0].does}")
        lines.append(f"    source: {change.rows[0].source}")
    return lines


def _replacing(version_apart: bool) -> tuple[Effect, ...]:
    """What replaces a group's nodes here; its version change is told apart (`version_apart`) by the minor upgrade's
    lines or by its refusal."""
    return (Effect.ROLLING_REPLACE,) if version_apart else (Effect.ROLLING_REPLACE, Effect.MINOR_UPGRADE)


def _versions_apart(plan: Plan, changes: Changes) -> set[str]:
    """The groups whose version change the minor upgrade (every group) or a downgrade's refusal tells."""
    if plan.minor is not None:
        return {group.urn for group in changes.groups}
    return {downgrade.urn for downgrade in plan.downgrades}


def _downgrade_lines(plan: Plan) -> list[str]:
    return [
        line
        for downgrade in plan.downgrades
        for line in (
            f"REFUSED: node group {downgrade.group} version {downgrade.before} -> {downgrade.after}",
            f"  {downgrade.refused}",
        )
    ]


def sample_pods(plan: Plan) -> list[str]:
    """The sample Pods the stack runs (samplePods): the Pods DraWorkloads registers, by their Kubernetes name."""
    return [
        str((r.inputs.get("metadata") or {}).get("name", r.name))
        for r in plan.run.of_type(POD_TYPE)
        if f"{DRA_WORKLOADS_TYPE}$" in r.urn
    ]


def _recreation_lines(changes: Changes, names: dict[str, str], apart: set[str], samples: list[str]) -> list[str]:
    """Groups whose nodes a template (or, without a minor move, a version) change replaces, each with its other
    changes (they land with the roll-out), what it can run meanwhile and the sample Pods it evicts; groups deleted."""
    rolled = [(g, g.of(*_replacing(g.urn in apart))) for g in changes.groups]
    rolled = [(g, fields) for g, fields in rolled if fields]
    lines: list[str] = []
    if rolled:
        lines.append(f"RECREATES NODES of {len(rolled)} node group(s) (template changes against the baseline)")
        for group, fields in rolled:
            lines.append(f"  {_group(group, names)}: {group.rollout.describe() if group.rollout else ''}".rstrip())
            others = tuple(change for change in group.changes if change not in fields and change.rows)
            if group.capacity is not None:
                # The stack file's words first, as `make cost` says it; the provider fields it moves below.
                lines.append(
                    f"    {setting_move('capacity', *group.capacity)} ({CAPACITY_SETTING}), sent as these template fields:"
                )
            lines += _field_lines(fields)
            lines += [
                f"    {change.text()} ({', '.join(sorted(effect.value for effect in change.effects))})"
                for change in others
            ]
            lines += _source_lines(fields + others)
            if group.rollout is not None:
                lines.append(f"    meanwhile it {group.rollout.capacity(group.fewest_before)}")
            if group.rollout is not None and group.rollout.gpu and samples:
                lines.append(
                    f"    sample Pod(s) {', '.join(samples)} (samplePods), when on its nodes: {SAMPLE_POD_EVICTION.does}"
                )
                lines.append(f"      source: {SAMPLE_POD_EVICTION.source}")
    for name in changes.removed_groups:
        if name in changes.protected_removals:
            lines.append(
                f"`pulumi up` FAILS deleting node group {name}: it is protected (nebius-dra:protect), and Pulumi refuses "
                f"to delete a protected resource ({PROTECT_SOURCE}); the run fails after "
                f"creating what it adds (new groups included), so {name} keeps running and billing beside them. Lift the protection first (docs/operating.md#tearing-down: "
                f"`pulumi state unprotect <urn of {name}>`, or nebius-dra:protect false and `make up`); then Nebius "
                "deletes it with all its nodes, their boot disks and running pods"
            )
            continue
        lines.append(
            f"DELETES node group {name}: it is not in this plan (renamed, give it its old name back to keep it): "
            f"{GROUP_DELETED.does}"
        )
        if name in changes.gpu_removals and samples:
            lines.append(
                f"  sample Pod(s) {', '.join(samples)} (samplePods), when on its nodes: {SAMPLE_POD_EVICTION.does}"
            )
            lines.append(f"    source: {SAMPLE_POD_EVICTION.source}")
        lines.append(f"  source: {GROUP_DELETED.source}")
    return lines


def _section(title: str, groups: list[tuple[str, tuple[FieldChange, ...]]]) -> list[str]:
    """A title, each resource with its changed fields, then the sources of the rows that say what they do."""
    if not groups:
        return []
    lines = [title]
    for head, fields in groups:
        lines.append(f"  {head}")
        lines += _field_lines(fields)
    return lines + _source_lines(tuple(field for _, fields in groups for field in fields), "  ")


def _new_nodes_only(
    changes: Changes, names: dict[str, str], apart: set[str]
) -> list[tuple[str, tuple[FieldChange, ...]]]:
    found = []
    for group in changes.groups:
        fields = group.of(Effect.NEW_NODES_ONLY)
        if fields and not group.of(*_replacing(group.urn in apart)):
            # The nodes it has now are the baseline's: a count raised in the same change adds nodes with the new values.
            before = group.nodes_before
            nodes = "" if before is None else f"{before[0]}" if before[0] == before[1] else f"{before[0]}..{before[1]}"
            found.append(
                (
                    f"{_group(group, names)}: its existing {nodes + ' ' if nodes else ''}node(s) keep the old values until replaced",
                    fields,
                )
            )
    return found


def _moved_release_lines(changes: Changes) -> list[str]:
    """A release whose namespace changes is uninstalled there and installed anew: its pods stop in between."""
    lines = []
    for release in changes.releases:
        moved = release.of(Effect.DELETE_CREATE)
        if moved:
            lines.append(f"  {release.name}: {moved[0].rows[0].does}")
            lines += _field_lines(moved)
            lines.append(f"    source: {moved[0].rows[0].source}")
    return ["HELM RELEASES DELETED AND CREATED", *lines] if lines else []


# What `helm upgrade` to an older chart version does (Helm has no separate downgrade): the release's objects are
# rendered from the older chart, and its crds/ folder is not applied on an upgrade, so the newer CRDs stay.
DOWNGRADE = (
    "a DOWNGRADE, which Helm allows: `helm upgrade` to the older chart rolls the release's objects back to what that "
    "version renders (its pods restart; for the DRA driver the kubelet plugin on every GPU node at once); the CRDs "
    "are not touched, so the newer ones (applied by hand for the upgrade) stay"
)
DOWNGRADE_SOURCE = (
    "https://helm.sh/docs/helm/helm_upgrade/; https://helm.sh/docs/chart_best_practices/custom_resource_definitions/"
)


def _helm_lines(changes: Changes) -> list[str]:
    lines = []
    downgrades: list[str] = []
    sources: list[str] = []
    logins: list[str] = []
    for release in changes.releases:
        restart = release.of(Effect.HELM_RESTART)
        crds = release.of(Effect.CRDS_NOT_UPDATED)
        in_place = tuple(change for change in release.of(Effect.IN_PLACE) if change not in restart)
        if not restart:
            # The same chart and version from another repository, or another login to it: each row says what it is.
            for row in dict.fromkeys(change.rows[0] for change in in_place):
                shown = tuple(change for change in in_place if change.rows[0] == row)
                found = logins if row == LOGIN_ROW else sources
                found.append(f"  {release.name}: {row.does}")
                found += _field_lines(shown)
                found += [] if row == LOGIN_ROW else [f"    source: {row.source}"]
            continue
        row = next(row for row in restart[0].rows if row.effect is Effect.HELM_RESTART)
        if release_downgrade(release) is not None:
            downgrades += [f"  {release.name}: {DOWNGRADE}", *_field_lines(restart + in_place)]
            continue
        lines.append(f"  {release.name}: {row.does}")
        lines += _field_lines(restart + in_place)
        lines += [
            f"    source: {source}" for source in dict.fromkeys([row.source, *(c.rows[0].source for c in in_place)])
        ]
        if crds:
            lines.append(
                f"    CRDs: Helm applies the chart's crds/ folder on a fresh install only; apply the new CRDs by hand "
                f"before `pulumi up` ({crds[0].rows[-1].source})"
            )
    logins += [f"  source: {LOGIN_ROW.source}"] if logins else []
    downgrades += [f"  source: {DOWNGRADE_SOURCE}"] if downgrades else []
    return (
        (["HELM DOWNGRADES", *downgrades] if downgrades else [])
        + (["HELM UPGRADES", *lines] if lines else [])
        + (["HELM CHART SOURCE CHANGED", *sources] if sources else [])
        + (
            ["HELM RELEASES UPDATED: chart repository login or TLS files (values never shown)", *logins]
            if logins
            else []
        )
    )


def _protection_lines(changes: Changes, names: dict[str, str]) -> list[str]:
    """A group's deletion protection lifted or set (nebius-dra:protect): nothing deployed changes, but lifted, the
    next change that leaves the group out deletes it, so a PR that only lifts it is no no-op."""
    lines = []
    for group in changes.groups:
        for change in group.changes:
            if change.path == "protect" and change.rows:
                title = "DELETION PROTECTION LIFTED" if change.after is not True else "DELETION PROTECTION SET"
                lines += [
                    f"{title} (nebius-dra:protect) on node group {_group(group, names)}: {change.text()}: "
                    f"{change.rows[0].does}",
                    f"  source: {change.rows[0].source}",
                ]
    return lines


# What each kind of record is called in a "Not known" line.
RECORD_KINDS = {
    CLUSTER_TYPE: "the cluster",
    HELM_RELEASE_TYPE: "Helm release(s)",
    CLAIM_TEMPLATE_TYPE: "claim template(s)",
}


def _not_known_lines(changes: Changes) -> list[str]:
    """An optional field the baseline did not record (a cluster's parentId, a release's namespace): neither a change
    nor silence, but what a change of it would do, from its row."""
    lines = []
    for unknown in changes.not_known:
        rows = consequences_of(unknown.resource_type, unknown.path)
        would = f": a change of it would be {rows[0].effect.value} ({rows[0].does})" if rows else ""
        lines.append(
            f"Not known: the baseline does not record {unknown.path} of {RECORD_KINDS[unknown.resource_type]} "
            f"{printable(', '.join(unknown.names))}, so a change of it cannot be seen{would}"
        )
    return lines


def _login_unknown_lines(changes: Changes) -> list[str]:
    """A login set in both plans may have changed: only its presence is recorded (tools/plan/changes.py
    repository_record), so the plan says what a change would do instead of calling it no change."""
    if not changes.login_unknown:
        return []
    return [
        f"Not known: whether the chart repository login of {', '.join(changes.login_unknown)} changed (a plan records "
        "only that a login is set, never the username or the password, which it cannot decrypt); if "
        f"chartRepositoryUsername or chartRepositoryPassword changed, `pulumi up` updates these release(s): {LOGIN_ROW.does}"
    ]


def _object_change_lines(changes: Changes) -> list[str]:
    """Kubernetes objects whose spec changes (the Kueue queues and flavors), each field with its row's words."""
    lines: list[str] = []
    for change in changes.objects:
        for row in dict.fromkeys(row for field in change.changes for row in field.rows):
            lines.append(f"  {change.name}: {row.effect.value}: {row.does}")
            lines += _field_lines(tuple(field for field in change.changes if row in field.rows))
            lines.append(f"    source: {row.source}")
    unknown = (
        [
            "Not known: the baseline does not record the Kueue queues' and flavors' specs, so their changes cannot be seen"
        ]
        if changes.unrecorded_specs
        else []
    )
    return (["KUBERNETES OBJECTS UPDATED", *lines] if lines else []) + unknown


def _ceiling_lines(plan: Plan, changes: Changes) -> list[str]:
    """A new or changed spot group whose ceiling is below the table's spot price may never get a node."""
    changed = {g.name for g in changes.groups}
    return [
        f"SPOT CEILING BELOW THE SPOT PRICE: {entry.get('name')}: {entry.get('basis')}, below the table's spot price "
        f"${entry['spotAboveCeiling']} per GPU-hour: while the spot price stays above it Nebius places no node "
        "(advisory spot-ceiling-below-spot-price)"
        for entry in ((plan.cost or {}).get("groups") or [])
        if entry.get("spotAboveCeiling") is not None
        and (entry.get("nodeGroup") in changed or entry.get("name") in changes.added_groups)
    ]


def builtins_left_out(plan: Plan) -> dict[str, str]:
    """The built-in claim templates the stack lists but does not create, each with why (DraWorkloads records it)."""
    return {
        name: reason
        for resource in plan.run.of_type(DRA_WORKLOADS_TYPE)
        for name, reason in (resource.inputs.get(BUILTINS_LEFT_OUT) or {}).items()
    }


def _template_lines(plan: Plan, changes: Changes) -> list[str]:
    """Claim templates whose spec (or namespace) changes, then those created and deleted, each with what the table
    says and its source; a built-in one the stack stops creating because no node could serve it says why."""
    presence = CLAIM_TEMPLATE_PRESENCE
    edited = _section(
        "CLAIM TEMPLATES DELETED AND CREATED (the spec is immutable; claims made from them keep the old spec)",
        [(c.name, c.changes) for c in changes.claim_templates],
    )
    lines = [f"CLAIM TEMPLATE {t.text()} {presence.created}" for t in changes.added_claim_templates]
    why = builtins_left_out(plan)
    # One in a deleted namespace goes with it: the namespace's line names it (`_object_lines`).
    taken = set(changes.deleted_namespaces)
    for template in (t for t in changes.removed_claim_templates if t.namespace not in taken):
        because = f" (not created now: {why[template.name]})" if template.builtin and template.name in why else ""
        lines.append(f"CLAIM TEMPLATE {template.text()}{because} {presence.deleted}")
    return edited + ([*lines, f"  source: {presence.source}"] if lines else [])


def _driver_root_lines(changes: Changes) -> list[str]:
    """The DRA driver's root (`nvidiaDriverRoot`, from draDriverRoot or the driver mode), with its row of the table:
    a recorded field of its own, so a move of it is shown even where no release value or driver mode step shows it."""
    if changes.driver_root is None:
        return []
    before, after = changes.driver_root
    row = consequence_of_setting(DRIVER_ROOT_SETTING, HELM_RELEASE_TYPE)
    line = f"DRA DRIVER ROOT {as_json(before)} -> {as_json(after)} ({DRIVER_ROOT_SETTING})"
    if row is None:
        return [f"{line}: {NOT_IN_TABLE}"]
    return [f"{line}: {row.does}", f"  source: {row.source}"]


# A new name or namespace replaces any Kubernetes object: the claim templates' namespace row says so, with its source.
REPLACED_OBJECT = consequences_of(CLAIM_TEMPLATE_TYPE, "namespace")[0].source
NOT_IN_TABLE = "not in the table of consequences: what it does is not known here"


def _taken_along(changes: Changes, item: KubeObject) -> str:
    """For a deleted namespace, the stack's objects that go with it, named on its line and on no line of their own:
    what they would do deleted alone (admitted workloads keep running) is not what happens with their namespace."""
    if item.resource_type != NAMESPACE_TYPE:
        return ""
    along = [
        *(
            o.text()
            for o in changes.removed_objects or []
            if o.resource_type != NAMESPACE_TYPE and goes_with(o, [item.name])
        ),
        *(f"claim template {t.text()}" for t in changes.removed_claim_templates if t.namespace == item.name),
    ]
    return f"; going with it: {', '.join(along)}" if along else ""


def _object_lines(changes: Changes) -> list[str]:
    """Kubernetes objects deleted, moved (deleted and created) and created, each with its row's words and source."""
    if changes.removed_objects is None:
        return (
            []
            if changes.legacy
            else [
                "Not known: the baseline does not record the Kubernetes objects (namespaces, "
                "Pods, queues), so their deletions cannot be seen"
            ]
        )
    lines: list[str] = []
    sources: dict[str, None] = {}

    def said(item: KubeObject, deleted: bool) -> str:
        row = presence_of(item.resource_type)
        if row is None:
            return NOT_IN_TABLE
        sources[row.source] = None
        return row.deleted if deleted else row.created

    taken = changes.deleted_namespaces
    for item in changes.removed_objects:
        if item.resource_type != NAMESPACE_TYPE and goes_with(item, taken):
            continue
        lines.append(f"{item.text()} {said(item, True)}{_taken_along(changes, item)}")
    for old, new in changes.moved_objects or []:
        lines.append(
            f"{old.text()} -> {new.text()}: deleted and created ({REPLACED_OBJECT}); the old one {said(old, True)}"
            f"{_taken_along(changes, old)}"
        )
    for item in changes.added_objects or []:
        lines.append(f"{item.text()} {said(item, False)}")
    return [*lines, *(f"  source: {source}" for source in sources)]


def changed_lines(plan: Plan, names: dict[str, str]) -> list[str]:
    """The section's lines: the baseline's origin, then every difference in the order it is applied."""
    if plan.no_baseline is not None:
        return [f"Nodes recreated: not known, no baseline ({printable(plan.no_baseline)})"]
    changes = plan.changes
    if changes is None:
        return [NO_BASELINE]
    lines = [f"Compared with {printable(plan.baseline_from)}"] if plan.baseline_from else []
    if changes.legacy:
        lines.append(
            f"Not known: the baseline was written before planFormat 2 and does not record {LEGACY_UNKNOWN}; "
            "changes to them cannot be seen (make the baseline again with this tools.plan)"
        )
    body = _minor_lines(plan, names) + _downgrade_lines(plan)
    if plan.driver_steps:
        body += ["DRIVER MODE CHANGE: steps, in order", *(f"  {n}. {s}" for n, s in enumerate(plan.driver_steps, 1))]
    body += _cluster_lines(changes)
    apart = _versions_apart(plan, changes)
    body += _recreation_lines(changes, names, apart, sample_pods(plan))
    body += _section("REACHES ONLY NEW NODES (Nebius starts no roll-out)", _new_nodes_only(changes, names, apart))
    # A group whose nodes are replaced lists its other changes under RECREATES NODES, not here as well.
    kept = [g for g in changes.groups if not g.of(*_replacing(g.urn in apart))]
    in_place = [*([changes.cluster] if changes.cluster else []), *kept]
    body += _section(
        "IN PLACE (no node replaced)",
        [(_group(c, names), c.of(Effect.IN_PLACE)) for c in in_place if c.of(Effect.IN_PLACE)],
    )
    body += _ceiling_lines(plan, changes)
    body += _moved_release_lines(changes)
    body += _helm_lines(changes)
    body += _driver_root_lines(changes)
    body += _protection_lines(changes, names)
    body += _login_unknown_lines(changes)
    body += _not_known_lines(changes)
    body += _template_lines(plan, changes)
    body += _object_lines(changes)
    body += _object_change_lines(changes)
    every = [
        *changes.groups,
        *changes.releases,
        *changes.claim_templates,
        *changes.objects,
        *([changes.cluster] if changes.cluster else []),
    ]
    body += _section(
        "NOT IN THE TABLE of consequences (policies/dra_guardrails/consequences.py): what these do is not known here",
        [(c.name, c.unknown) for c in every if c.unknown],
    )
    if changes.added_releases:
        body.append(f"Helm release(s) installed: {', '.join(changes.added_releases)}")
    if changes.removed_releases:
        body.append(
            f"Helm release(s) uninstalled: {', '.join(changes.removed_releases)}: their pods stop; CRDs from a "
            "crds/ folder stay (Helm never deletes them)"
        )
    if changes.added_groups:
        body.append(
            f"New node group(s) {', '.join(changes.added_groups)}: created (Nebius touches no existing node for it)"
        )
    if plan.driver_change is not None:
        body += _driver_change_lines(plan.driver_change)
    return lines + (body or [NOTHING])


def recreated_count(plan: Plan) -> int:
    """Node groups whose nodes this change replaces (a deletion is counted apart)."""
    if plan.changes is None:
        return 0
    if (plan.minor is not None and plan.minor.refused is not None) or plan.downgrades:
        # A refused minor move (or a group's downgrade) replaces nothing: only the template changes would, once it is fixed.
        replacing = [g for g in plan.changes.groups if g.of(Effect.ROLLING_REPLACE)]
        return len(replacing)
    return len(plan.changes.recreated)
