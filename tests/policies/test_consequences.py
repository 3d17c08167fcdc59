"""The table of consequences against its sources: the installed pulumi-nebius SDK, the vendored charts, the program.

Each row names a source; where something installed here can show the statement, it is read here:
the SDK's docstrings for which node group fields roll out and which do not, every registered field
of dev's and prod's node groups and cluster for a row that covers it, the program's own
replace_on_changes for the claim templates' spec, and the charts' crds/ folders that Helm installs
once and never upgrades.
"""

from __future__ import annotations

import tarfile
from importlib.metadata import version

import pulumi_kubernetes
import pulumi_nebius
import pytest

from components.dra_workloads import IMMUTABLE_SPEC
from components.input.node_groups import GpuNodeGroupInput
from components.input.stack import stack_settings
from components.values.kueue import KUEUE_API_VERSION
from policies.dra_guardrails.consequences import (
    CLAIM_TEMPLATE_PRESENCE,
    CLAIM_TEMPLATE_TYPE,
    CLUSTER_QUEUE_TYPE,
    CONSEQUENCES,
    HELM_RELEASE_TYPE,
    LOCAL_QUEUE_TYPE,
    PRESENCES,
    RESOURCE_FLAVOR_TYPE,
    Consequence,
    Effect,
    Presence,
    consequences_of,
    presence_of,
)
from policies.dra_guardrails.planned import CLUSTER_TYPE, NODE_GROUP_TYPE
from tests.helpers import VENDORED_CHARTS
from tests.queue_configs import TEAMS, prod_with
from tools.plan.changes import leaves, repository_record
from tools.plan.mock_engine import run_program


def _doc(cls: type, prop: str) -> str:
    return getattr(cls, prop).__doc__ or ""


def test_every_row_names_a_source_and_a_field():
    for row in CONSEQUENCES:
        assert row.source and row.fields and row.settings and row.does, row


def test_template_fields_roll_out_as_the_sdk_says():
    """`template`'s docstring: a template field update rolls the group out unless its own docstring says NOT."""
    assert "update will cause NodeGroup roll-out" in _doc(pulumi_nebius.Mk8sV1NodeGroupArgs, "template")
    labels = _doc(pulumi_nebius.Mk8sV1NodeGroupTemplateMetadataArgs, "labels")
    taints = _doc(pulumi_nebius.Mk8sV1NodeGroupTemplateArgs, "taints")
    assert "Field change will NOT trigger NodeGroup roll out" in labels
    assert "Field change will NOT trigger NodeGroup roll out" in taints
    template = pulumi_nebius.Mk8sV1NodeGroupTemplateArgs
    for name in ("resources", "boot_disk", "gpu_settings", "gpu_cluster", "preemptible", "reservation_policy"):
        says_not = "NOT trigger" in _doc(template, name)
        camel = "".join(part.capitalize() if i else part for i, part in enumerate(name.split("_")))
        [row] = consequences_of(NODE_GROUP_TYPE, f"template.{camel}.x")
        assert (row.effect is Effect.ROLLING_REPLACE) is not says_not, name
    for path in ("template.metadata.labels.a", "template.taints"):
        assert {row.effect for row in consequences_of(NODE_GROUP_TYPE, path)} == {Effect.NEW_NODES_ONLY}


def test_a_node_count_changes_in_place_as_the_sdk_says():
    assert "Can be changed manually at any time" in _doc(pulumi_nebius.Mk8sV1NodeGroupArgs, "fixed_node_count")
    assert {row.effect for row in consequences_of(NODE_GROUP_TYPE, "fixedNodeCount")} == {Effect.IN_PLACE}


def test_the_node_group_version_follows_the_control_plane_as_the_sdk_says():
    version = _doc(pulumi_nebius.Mk8sV1NodeGroupArgs, "version")
    assert "By default the cluster control plane `<major>.<minor>` version will be used" in version
    assert {row.effect for row in consequences_of(NODE_GROUP_TYPE, "version")} == {Effect.MINOR_UPGRADE}
    assert {row.effect for row in consequences_of(CLUSTER_TYPE, "controlPlane.version")} == {Effect.MINOR_UPGRADE}


def test_every_stack_setting_has_a_row():
    """Every key a stack file can set (StackInput, and each field of a GPU group) is named by a row of the table, so
    a change to it is never left unexplained; a new setting fails here until it has one."""
    rows: tuple[Consequence | Presence, ...] = (*CONSEQUENCES, *PRESENCES)
    named = {setting for row in rows for setting in row.settings}
    group_fields = {f"gpuNodeGroups[].{field}" for field in GpuNodeGroupInput.model_fields}
    assert set(stack_settings()) - {"gpuNodeGroups"} - named == set()
    assert group_fields - named == set()
    assert {name.split("[]", 1)[0] for name in named} <= set(stack_settings()), "a row names no setting"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_registered_node_group_and_cluster_field_has_a_row(stack):
    """A field the program sends that no row covers would be shown as "not in the table": none may be."""
    run = run_program(stack)
    uncovered = {
        (resource.type, path)
        for resource in run.resources
        if resource.type in (NODE_GROUP_TYPE, CLUSTER_TYPE)
        for path in leaves(dict(resource.inputs), "")
        if (resource.type, path.split(".", 1)[0]) != (NODE_GROUP_TYPE, "parentId")
        and not consequences_of(resource.type, path)
    }
    assert uncovered == set()


def test_a_cluster_field_nebius_marks_immutable_replaces_the_cluster():
    """nebius/api marks ControlPlaneSpec.subnet_id IMMUTABLE and etcd_cluster_size not; the SDK's docstrings agree on
    what each is (the API's own annotation is not in the bridged SDK)."""
    assert "Also will be default NodeGroup subnet" in _doc(pulumi_nebius.Mk8sV1ClusterControlPlaneArgs, "subnet_id")
    assert "Highly Available" in _doc(pulumi_nebius.Mk8sV1ClusterControlPlaneArgs, "etcd_cluster_size")
    assert "Parent is a project, immutable" in _doc(pulumi_nebius.BillingV1PricingPolicyArgs, "metadata")
    effects = {
        path: {row.effect for row in consequences_of(CLUSTER_TYPE, path)}
        for path in ("parentId", "controlPlane.subnetId", "controlPlane.etcdClusterSize", "controlPlane.endpoints")
    }
    assert effects == {
        "parentId": {Effect.DELETE_CREATE},
        "controlPlane.subnetId": {Effect.DELETE_CREATE},
        "controlPlane.etcdClusterSize": {Effect.IN_PLACE},
        "controlPlane.endpoints": {Effect.IN_PLACE},
    }


def test_a_claim_template_spec_is_replaced_as_the_program_registers_it():
    """The options every claim template is registered with (components/dra_workloads.py, components/kueue.py)."""
    assert IMMUTABLE_SPEC.replace_on_changes == ["spec"] and IMMUTABLE_SPEC.delete_before_replace is True
    assert {row.effect for row in consequences_of(CLAIM_TEMPLATE_TYPE, "spec.spec.devices")} == {Effect.DELETE_CREATE}


def test_a_claim_template_row_quotes_what_the_installed_kubernetes_sdk_says():
    """The spec row and the created/deleted row quote the docstrings pulumi-kubernetes generates from k8s.io/api."""
    spec = " ".join(_doc(pulumi_kubernetes.resource.v1.ResourceClaimTemplate, "spec").split())
    bound = " ".join(_doc(pulumi_kubernetes.core.v1.PodResourceClaimArgs, "resource_claim_template_name").split())
    [row] = consequences_of(CLAIM_TEMPLATE_TYPE, "spec")
    quoted = "This field is immutable. A ResourceClaim will get created by the control plane for a Pod when needed"
    assert quoted in spec and quoted in row.source and quoted in CLAIM_TEMPLATE_PRESENCE.source
    claim = "will be bound to this pod. When this pod is deleted, the ResourceClaim will also be deleted."
    assert claim in bound and claim in CLAIM_TEMPLATE_PRESENCE.source
    assert f"pulumi-kubernetes {version('pulumi_kubernetes')}" in CLAIM_TEMPLATE_PRESENCE.source


@pytest.mark.skipif(not VENDORED_CHARTS.is_dir(), reason="the vendored charts are not on this machine")
@pytest.mark.parametrize(
    "chart", ["nvidia-dra-driver-gpu-25.12.0", "dra-driver-nvidia-gpu-0.4.1", "gpu-operator-v25.10.1"]
)
def test_the_charts_whose_version_the_stack_sets_have_crds_helm_will_not_update(chart):
    with tarfile.open(VENDORED_CHARTS / f"{chart}.tgz") as archive:
        crds = [name for name in archive.getnames() if "/crds/" in name and name.endswith((".yaml", ".yml"))]
    assert crds, f"{chart} has no crds/ folder"
    effects = {row.effect for row in consequences_of(HELM_RELEASE_TYPE, "version")}
    assert effects == {Effect.HELM_RESTART, Effect.CRDS_NOT_UPDATED}


def test_every_kueue_object_the_program_registers_has_rows_for_its_spec_and_its_deletion():
    """The queues' objects (components/kueue.py): each kind has a created/deleted row, and each field of its spec
    that the plan records and compares has a row, so a quota or cohort change is never "not in the table"."""
    run = run_program("prod", config=prod_with({"teams": TEAMS}))
    assert run.error is None, run.error
    kueue = [r for r in run.resources if r.type.startswith(f"kubernetes:{KUEUE_API_VERSION}:")]
    assert {r.type for r in kueue} == {CLUSTER_QUEUE_TYPE, LOCAL_QUEUE_TYPE, RESOURCE_FLAVOR_TYPE}
    assert all(presence_of(r.type) is not None for r in kueue)
    uncovered = {
        (r.type, path)
        for r in kueue
        for path in leaves({"spec": r.inputs["spec"]}, "")
        if not consequences_of(r.type, path)
    }
    assert uncovered == set()
    assert {row.effect for row in consequences_of(LOCAL_QUEUE_TYPE, "spec.clusterQueue")} == {Effect.UPDATE_REFUSED}


def test_the_login_rows_cover_what_the_plan_records_of_a_releases_repository_options():
    """tools/plan/changes.py repository_record: each field it writes has the repository row or the credential row."""
    recorded = repository_record({"repo": "https://m.example", "caFile": "a", "certFile": "b", "keyFile": "c"})
    rows = {path: consequences_of(HELM_RELEASE_TYPE, path) for path in leaves({"repositoryOpts": recorded}, "")}
    assert all(len(found) == 1 for found in rows.values()), rows
    assert {found[0].settings[0] for found in rows.values()} == {"draDriverRepository", "chartRepositoryUsername"}
