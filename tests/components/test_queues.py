"""GPU quotas per team (`nebius-dra:queues`): the config's refusals, the Kueue objects, the pack and the plan.

The stack is prod with two teams on its two groups (the done-when of issue 28); the real Kueue
controller runs the same objects in e2e/kueue.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import kubernetes_validate
import pytest

from components.config import parse_stack_config
from components.config.errors import ConfigError
from components.config.queues import builtin_requests, uncountable_reason
from components.dra_constants import BUILTIN_TEMPLATES, GPU_CLASS
from components.labels import system_node_labels
from components.queue_model import DRA_GATE, GPU_QUOTA_RESOURCE, QUEUE_NAME_LABEL
from components.values.claim_templates import builtin_template_specs
from components.values.kueue import kueue_values, queue_objects, queued_job
from policies.dra_guardrails import PlannedResource, check_resources
from tests.kubernetes_manifests import kubernetes_objects, manifest
from tests.queue_configs import TEAMS, prod_with
from tools.cost.render import money
from tools.cost.teams import oversubscribed_notes, team_rows
from tools.plan.mock_engine import run_program
from tools.plan.model import build_plan
from tools.plan.report import render_text
from tools.verify.queues import check_queues


def parsed(config: dict[str, str]):
    return parse_stack_config({key.split(":", 1)[1]: value for key, value in config.items()}, "prod")


def problems(queues: dict[str, Any], **overrides: str) -> str:
    with pytest.raises(ConfigError) as refused:
        parsed(prod_with(queues, **overrides))
    return str(refused.value)


@pytest.fixture(scope="module")
def queued_prod():
    run = run_program("prod", prod_with({"teams": TEAMS}, samplePods="true"))
    assert run.error is None, run.error
    return run


def planned(run) -> list[PlannedResource]:
    return [PlannedResource(r.urn, r.type, r.name, copy.deepcopy(r.inputs)) for r in run.resources]


# ------------------------------------------------------------------------------------------ config
def test_two_teams_on_prods_groups_parse_into_their_queues():
    queues = parsed(prod_with({"teams": TEAMS})).queues
    assert [(team.name, team.namespace, team.local_queue, team.cohort) for team in queues.teams] == [
        ("research", "research", "research", "h200"),
        ("inference", "inference", "inference", "h200"),
    ]
    assert queues.device_classes == (GPU_CLASS,)
    # prod's one user template takes All devices with a CEL selector: Kueue cannot count it, so only the
    # countable built-ins reach the teams' namespaces.
    assert queues.claim_templates == ("gpu", "multi-gpu")
    assert queues.dra_gate


def test_no_team_means_no_queues_and_nothing_of_kueue(prod_run):
    assert not any("kueue" in r.type for r in prod_run.resources)


def test_a_quota_over_what_the_group_can_hold_is_refused_naming_the_group_and_its_gpus():
    message = problems({"teams": [{"name": "a", "quotas": [{"group": "h200-train", "gpus": 33}]}]})
    assert (
        "nebius-dra:queues team a: quotas[0].gpus got 33, more than group h200-train can hold (32: 4 nodes of 8 GPUs)"
        in message
    )


def test_a_flavor_for_a_group_that_does_not_exist_is_refused_with_the_groups_allowed():
    message = problems({"teams": [{"name": "a", "quotas": [{"group": "h200-trian", "gpus": 1}]}]})
    assert 'quotas[0].group got "h200-trian", which is no GPU node group of this stack' in message
    assert "did you mean h200-train?" in message and "allowed: h200-train, h200-burst" in message


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("h200-full-node", "request gpus has CEL selectors"),
        ("gpu-by-product", "request gpu has CEL selectors"),
    ],
)
def test_a_claim_template_kueue_cannot_count_is_refused_saying_why(template, why):
    message = problems(
        {"teams": TEAMS, "claimTemplates": [template]},
        builtinClaimTemplates=json.dumps(["gpu", "gpu-by-product"]),
    )
    assert (
        f"nebius-dra:queues: claimTemplates[0]: template {template} cannot be counted against a quota by Kueue"
        in message
    )
    assert why in message


@pytest.mark.parametrize(
    ("request_", "constraints", "config", "why"),
    [
        (
            {"name": "g", "exactly": {"deviceClassName": GPU_CLASS, "allocationMode": "All"}},
            [],
            [],
            "allocationMode All",
        ),
        ({"name": "g", "firstAvailable": [{"name": "a", "deviceClassName": GPU_CLASS}]}, [], [], "firstAvailable"),
        ({"name": "g", "exactly": {"deviceClassName": "ib.networking.nebius.ai"}}, [], [], "the queues do not count"),
        (
            {"name": "g", "exactly": {"deviceClassName": GPU_CLASS, "count": 2}},
            [{"matchAttribute": "gpu.nvidia.com/productName"}],
            [],
            "constraints",
        ),
    ],
)
def test_each_of_kueues_counting_rules_refuses_a_user_template(request_, constraints, config, why):
    template = {"name": "mine", "requests": [request_], "constraints": constraints, "config": config}
    message = problems({"teams": TEAMS, "claimTemplates": ["mine"]}, userClaimTemplates=json.dumps([template]))
    assert "template mine cannot be counted" in message and why in message


def test_borrowing_without_a_cohort_repeated_groups_and_shared_namespaces_are_refused():
    message = problems(
        {
            "teams": [
                {"name": "a", "quotas": [{"group": "h200-train", "gpus": 1, "borrowingLimit": 1}, {"group": "h200-train", "gpus": 1}]},
                {"name": "b", "namespace": "a", "quotas": [{"group": "h200-burst", "gpus": 1}]},
                {"name": "c", "namespace": "dra-samples", "quotas": [{"group": "h200-burst", "gpus": 1}]},
            ]
        }
    )  # fmt: skip
    assert "quotas[0].borrowingLimit is set but the team has no cohort" in message
    assert "quotas[1] repeats group h200-train" in message
    assert 'team b namespace: got "a", the namespace of team a; the stack creates each team\'s namespace' in message
    assert (
        'team c namespace: got "dra-samples", the namespace of the claim templates (nebius-dra:claimNamespace)'
        in message
    )


def test_unknown_fields_gates_and_classes_are_refused_with_what_is_allowed():
    message = problems({"teams": TEAMS, "featureGates": {"DynamicResourceAlocation": True}, "cohorts": []})
    assert 'has unknown field(s) "cohorts"' in message
    message = problems({"teams": TEAMS, "featureGates": {"DynamicResourceAlocation": True}})
    assert "no feature gate of Kueue v0.17.0; did you mean DynamicResourceAllocation?" in message
    message = problems({"teams": TEAMS, "deviceClasses": ["mig.nvidia.com"]})
    assert 'got "mig.nvidia.com"' in message and "allowed: gpu.nvidia.com, vfio.gpu.nvidia.com" in message


def test_a_refused_queues_config_stops_the_program_before_any_resource():
    run = run_program("prod", prod_with({"teams": [{"name": "a", "quotas": [{"group": "nope", "gpus": 1}]}]}))
    assert isinstance(run.error, ConfigError) and run.resources == []


def test_the_config_reads_the_built_in_templates_as_the_stack_builds_them():
    """builtin_requests (config layer) against builtin_template_specs (values): class, count, selectors, constraints."""
    claims = parsed(prod_with({"teams": TEAMS}, builtinClaimTemplates=json.dumps(list(BUILTIN_TEMPLATES)))).claims
    specs = builtin_template_specs(claims)
    for name, spec in specs.items():
        requests, constraints = builtin_requests(name, claims)
        devices = spec["spec"]["devices"]
        assert constraints == bool(devices.get("constraints")), name
        built = [(r["name"], r["exactly"]["deviceClassName"], r["exactly"].get("count"), bool(r["exactly"].get("selectors"))) for r in devices["requests"]]  # fmt: skip
        read = [(n, s.device_class, s.count, bool(s.selectors)) for n, s in requests if s is not None]
        assert built == read, name


def test_the_counting_rule_accepts_exact_counts_of_counted_classes():
    assert builtin_requests("multi-gpu", parsed(prod_with({"teams": TEAMS})).claims)[0][0][1].count == 8
    assert (
        uncountable_reason(*builtin_requests("gpu", parsed(prod_with({"teams": TEAMS})).claims), False, [GPU_CLASS])
        is None
    )


# ------------------------------------------------------------------------------------------ values
def test_the_release_sets_the_dra_gate_the_mapping_and_the_released_image():
    queues = parsed(prod_with({"teams": TEAMS})).queues
    values = kueue_values(queues, system_node_labels())
    assert {"name": DRA_GATE, "enabled": True} in values["controllerManager"]["featureGates"]
    assert values["controllerManager"]["manager"]["image"] == {
        "repository": "registry.k8s.io/kueue/kueue",
        "tag": "v0.17.0",
        "pullPolicy": "IfNotPresent",
    }
    configuration = json.loads(values["managerConfig"]["controllerManagerConfigYaml"])
    assert configuration["resources"]["deviceClassMappings"] == [
        {"name": GPU_QUOTA_RESOURCE, "deviceClassNames": [GPU_CLASS]}
    ]


def test_flavors_tolerate_the_groups_taints_and_queues_quota_only_their_groups():
    config = parsed(prod_with({"teams": TEAMS}))
    objects = {(o["kind"], o["metadata"]["name"]): o for o in queue_objects(config.queues, config.gpu_node_groups)}
    flavor = objects[("ResourceFlavor", "h200-train")]["spec"]
    assert flavor["nodeLabels"] == {"nebius-dra/node-group": "h200-train"}
    assert flavor["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ]
    queue = objects[("ClusterQueue", "inference")]["spec"]
    assert queue["cohortName"] == "h200"
    burst = next(f for f in queue["resourceGroups"][0]["flavors"] if f["name"] == "h200-burst")
    assert {"name": GPU_QUOTA_RESOURCE, "nominalQuota": 32, "borrowingLimit": 16} in burst["resources"]
    assert objects[("LocalQueue", "inference")]["spec"] == {"clusterQueue": "inference"}


def test_the_sample_job_is_queued_with_a_counted_template():
    config = parsed(prod_with({"teams": TEAMS}, samplePods="true"))
    job = queued_job(config.queues, config.claims)
    assert job is not None
    assert job["metadata"]["labels"] == {QUEUE_NAME_LABEL: "research"}
    assert job["spec"]["template"]["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] == "gpu"


# ------------------------------------------------------------------------------------------ program, pack, plan
def test_two_teams_on_prods_groups_pass_the_pack(queued_prod):
    findings = check_resources(planned(queued_prod))
    assert not [f for f in findings if f.mandatory], findings
    assert {f.policy for f in findings} <= {"gpu-drivers-preset-known", "workload-namespace-queued"}


def test_the_program_creates_the_teams_namespaces_templates_queues_and_a_queued_job(queued_prod):
    names = {(r.type.rsplit(":", 1)[-1], r.name) for r in queued_prod.resources}
    for expected in [
        ("Namespace", "dra-prod-queues-namespace-research"),
        ("ResourceClaimTemplate", "dra-prod-queues-template-inference-gpu"),
        ("ResourceFlavor", "dra-prod-queues-resourceflavor-h200-burst"),
        ("ClusterQueue", "dra-prod-queues-clusterqueue-research"),
        ("LocalQueue", "dra-prod-queues-localqueue-inference-inference"),
        ("Job", "dra-prod-queues-sample-job"),
        ("Release", "dra-prod-queues-release"),
    ]:
        assert expected in names
    release = next(r for r in queued_prod.resources if r.name == "dra-prod-queues-release")
    assert (
        release.inputs["chart"] == "oci://registry.k8s.io/kueue/charts/kueue" and release.inputs["version"] == "0.17.0"
    )


def test_the_dra_gate_off_while_quotas_count_dra_devices_fails_the_pack():
    run = run_program("prod", prod_with({"teams": TEAMS, "featureGates": {DRA_GATE: False}}))
    findings = [f for f in check_resources(planned(run)) if f.policy == "kueue-dra-gate"]
    assert len(findings) == 1 and findings[0].mandatory
    assert "DynamicResourceAllocation feature gate is off" in findings[0].message


def test_quotas_past_a_groups_gpus_without_a_cohort_and_unqueued_workloads_are_advised(queued_prod):
    teams = [{**team, "cohort": None} for team in TEAMS]
    teams = [{key: value for key, value in team.items() if value is not None} for team in teams]
    teams[1]["quotas"] = [{"group": "h200-train", "gpus": 30}]
    run = run_program("prod", prod_with({"teams": teams}, samplePods="true"))
    findings = {f.policy: f for f in check_resources(planned(run)) if not f.mandatory}
    assert (
        "quota 54 GPUs on flavor h200-train (research 24, inference 30), but GPU group h200-train holds at most 32"
        in (findings["queue-quotas-within-capacity"].message)
    )
    assert (
        "runs in namespace dra-samples, which has no Kueue LocalQueue" in findings["workload-namespace-queued"].message
    )
    # In one cohort the same quotas are shares of a pool the teams lend and borrow: no advice.
    assert "queue-quotas-within-capacity" not in {f.policy for f in check_resources(planned(queued_prod))}


def test_quotas_past_a_groups_gpus_inside_one_cohort_are_advised():
    """A nominal quota is what Kueue guarantees a queue, in a cohort too: 24 + 16 GPUs on the 32 of h200-train cannot
    all be guaranteed, though the teams share a cohort (newcomer's walk F4.2)."""
    teams = copy.deepcopy(TEAMS)
    teams[1]["quotas"][0]["gpus"] = 16
    run = run_program("prod", prod_with({"teams": teams}))
    (finding,) = [f for f in check_resources(planned(run)) if f.policy == "queue-quotas-within-capacity"]
    assert (
        "ClusterQueues of cohort h200 quota 40 GPUs on flavor h200-train (research 24, inference 16), but GPU group "
        "h200-train holds at most 32: a nominal quota is what Kueue guarantees a queue "
        "(kueue.sigs.k8s.io/docs/concepts/cluster_queue/)"
    ) in finding.message
    assert not finding.mandatory and "share no cohort" not in finding.message


def test_kueues_chart_from_upstream_beside_mirrored_charts_is_advised(queued_prod):
    """The DRA driver from a mirror says the cluster pulls through one; Kueue from registry.k8s.io would then fail at
    `pulumi up` (newcomer's walk F4.4). With Kueue's repository on the mirror too, or nothing mirrored, no advice."""
    mirror = "oci://harbor.example.com/nvidia"
    run = run_program("prod", prod_with({"teams": TEAMS}, draDriverRepository=mirror))
    (finding,) = [
        f for f in check_resources(planned(run)) if f.policy == "charts-mirrored" and "(chart kueue)" in f.message
    ]
    assert not finding.mandatory
    assert (
        "pulls its chart from registry.k8s.io, its upstream, while the stack's other charts come from a mirror "
        "(nvidia-dra-driver-gpu from harbor.example.com)"
    ) in finding.message
    assert (
        "Set nebius-dra:queues repository to the mirror's copy of oci://registry.k8s.io/kueue/charts" in finding.message
    )
    both = run_program("prod", prod_with({"teams": TEAMS, "repository": mirror}, draDriverRepository=mirror))
    for quiet in (both, queued_prod):
        assert not [
            f for f in check_resources(planned(quiet)) if f.policy == "charts-mirrored" and "(chart kueue)" in f.message
        ]


def test_the_cost_section_prices_each_teams_quota(queued_prod):
    estimate = next(r for r in queued_prod.resources if r.type == "nebius-dra:cost:CostEstimate")
    rows = team_rows(estimate.inputs, money)
    assert (
        "research",
        "research",
        "h200-train",
        "24",
        "24 of 32 (75%)",
        "h200 (borrows any unused)",
        "$84.00",
        "$60,480.00",
    ) in rows
    assert (
        "inference",
        "inference",
        "h200-burst",
        "32",
        "32 of 64 (50%)",
        "h200 (borrows up to 16)",
        "$112.00",
        "$80,640.00",
    ) in rows


def test_teams_of_a_group_whose_quotas_pass_its_gpus_share_its_nodes_cost():
    """24 + 16 GPUs promised on h200-train's 32 (4 nodes at $28/h, $112/h): priced by each quota's share of the 40,
    the two costs add up to the nodes', not to $140/h (newcomer's walk F4.3)."""
    teams = copy.deepcopy(TEAMS)
    teams[1]["quotas"][0]["gpus"] = 16
    run = run_program("prod", prod_with({"teams": teams}))
    estimate = next(r for r in run.resources if r.type == "nebius-dra:cost:CostEstimate")
    train = {entry["team"]: entry["usdPerHour"] for entry in estimate.inputs["teams"] if entry["group"] == "h200-train"}
    assert train == {"research": 67.2, "inference": 44.8}
    assert [note for note in oversubscribed_notes(estimate.inputs)] == [
        "quotas on h200-train add up to 40 GPUs, past its 32: each team is priced at its quota's share of them, so the "
        "teams' costs add up to the group's nodes, not past them"
    ]


# ------------------------------------------------------------------------------------------ verify
class QueueCluster:
    """Kueue's objects as the API server lists them, by plural and namespace."""

    def __init__(self, objects: dict[tuple[str, str | None], list[dict[str, Any]]]) -> None:
        self.objects = objects

    def list_custom_objects(self, group, version, kind, plural, namespace=None):
        assert (group, version) == ("kueue.x-k8s.io", "v1beta2")
        assert kind == {"clusterqueues": "ClusterQueue", "localqueues": "LocalQueue", "workloads": "Workload"}[plural]
        return self.objects.get((plural, namespace), [])


def _queue(name: str, active: str, namespace: str | None = None) -> dict[str, Any]:
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {
        "metadata": metadata,
        "status": {"conditions": [{"type": "Active", "status": active, "reason": "R", "message": "m"}]},
    }


def _workload(*conditions: str) -> dict[str, Any]:
    return {"metadata": {"name": "w"}, "status": {"conditions": [{"type": c, "status": "True"} for c in conditions]}}


def test_verify_counts_admitted_and_pending_workloads_and_names_an_inactive_queue():
    queues = parsed(prod_with({"teams": TEAMS})).queues
    objects = {
        ("clusterqueues", None): [_queue("research", "True"), _queue("inference", "False")],
        ("localqueues", "research"): [_queue("research", "True", "research")],
        ("localqueues", "inference"): [_queue("inference", "True", "inference")],
        # A finished Workload keeps Admitted=True (seen on the real Kueue v0.17.0 in e2e/kueue).
        ("workloads", "research"): [
            _workload("Admitted"),
            _workload("Admitted", "Finished"),
            _workload("QuotaReserved"),
        ],
    }
    outcome = check_queues(QueueCluster(objects), queues)  # type: ignore[arg-type]
    assert "research (24 GPUs on h200-train, 32 GPUs on h200-burst): 1 admitted, 1 pending" in outcome.summary
    [finding] = outcome.findings
    assert finding.subject == "ClusterQueue inference" and finding.found == "Active=False (R: m)"


def test_the_queued_stacks_builtin_objects_validate_against_the_134_schema(queued_prod):
    """Namespaces, templates and the Job against Kubernetes 1.34's strict schema; Kueue's own kinds are checked by
    the real API server with Kueue's CRDs in e2e/kueue (kubernetes-validate has no CRD schemas)."""
    checked = []
    for resource in kubernetes_objects(queued_prod):
        if "kueue.x-k8s.io" in resource.type:
            continue
        kubernetes_validate.validate(manifest(resource), "1.34.0", strict=True)
        checked.append(resource.type.rsplit(":", 1)[-1])
    assert {"Namespace", "ResourceClaimTemplate", "Job"} <= set(checked)


def test_the_offline_plan_of_two_teams_on_prod_passes_and_shows_each_teams_share():
    plan = build_plan("prod", prod_with({"teams": TEAMS}), out=None)
    assert not plan.blocked, plan.findings
    text = render_text(plan)
    assert "GPU quotas per team (Kueue" in text
    assert "inference  inference  h200-train  8     8 of 32 (25%)" in text
