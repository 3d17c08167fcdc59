"""The pack over what the real program registers: dev and prod pass, and each rule catches its own breakage.

A mutation changes one thing the way a pull request could. Where the program itself refuses
the bad input (DRA off, autoscaling from zero, an old Kubernetes version), the planned
properties are edited instead: the pack is the second line of defence for exactly those
edits, made in code rather than in stack config.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from components.config.stack_file import load_stack_config
from policies.dra_guardrails import RULES, PlannedResource, check_resources
from policies.dra_guardrails.framework import ResourceRule, StackRule
from policies.dra_guardrails.identity_rules import (
    ACCESS_PERMIT_TYPE,
    ENVIRONMENT_LABEL,
    FEDERATED_CREDENTIALS_TYPE,
    GITHUB_ISSUER,
    IDENTITY_LABEL,
)
from policies.dra_guardrails.planned import DRA_DRIVER_COMPONENT_TYPE, PLUGIN_OUTAGE_ACCEPTED, written_group_name
from tests.helpers import STACKS, beyond_the_unlisted_minor, shows_the_hourly_cost
from tests.kubernetes_manifests import HELM_RELEASE
from tests.queue_configs import TEAMS, prod_with
from tools.plan.mock_engine import ProgramRun, run_program

CLUSTER = "nebius:index/mk8sV1Cluster:Mk8sV1Cluster"
NODE_GROUP = "nebius:index/mk8sV1NodeGroup:Mk8sV1NodeGroup"
GPU_CLUSTER = "nebius:index/computeV1GpuCluster:ComputeV1GpuCluster"
TEMPLATE = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"
POD = "kubernetes:core/v1:Pod"
COST_ESTIMATE = "nebius-dra:cost:CostEstimate"
Resources = list[PlannedResource]


def planned(run: ProgramRun) -> Resources:
    return [PlannedResource(r.urn, r.type, r.name, copy.deepcopy(r.inputs)) for r in run.resources]


def the_one(resources: Resources, predicate: Callable[[PlannedResource], bool]) -> PlannedResource:
    [match] = [r for r in resources if predicate(r)]
    return match


def driver_release(r: PlannedResource) -> bool:
    return r.type == HELM_RELEASE and r.props["chart"].endswith(("nvidia-dra-driver-gpu", "dra-driver-nvidia-gpu"))


def autoscaled_gpu_group(r: PlannedResource) -> bool:
    return r.type == NODE_GROUP and "autoscaling" in r.props and "gpuSettings" in r.props["template"]


def exporter_release(r: PlannedResource) -> bool:
    return r.type == HELM_RELEASE and r.props["chart"] == "dcgm-exporter"


def template_named(name: str) -> Callable[[PlannedResource], bool]:
    return lambda r: r.type == TEMPLATE and r.props["metadata"]["name"] == name


@pytest.fixture(scope="module")
def operator_mode_run() -> ProgramRun:
    """dev with the driver left to the GPU Operator: the program adds the Operator's release."""
    config = dict(load_stack_config("dev"))
    groups = json.loads(config["nebius-dra:gpuNodeGroups"])
    for group in groups:
        group.pop("driversPreset", None)
    config["nebius-dra:gpuNodeGroups"] = json.dumps(groups)
    run = run_program("dev", config=config)
    assert run.error is None, run.error
    return run


@pytest.fixture
def stacks(stack_runs, operator_mode_run, queued_prod_run) -> dict[str, Resources]:
    """Fresh copies per test: mutations never leak into the session's runs."""
    return {
        **{stack: planned(run) for stack, run in stack_runs.items()},
        "dev-operator": planned(operator_mode_run),
        "prod-queues": planned(queued_prod_run),
    }


@pytest.fixture(scope="module")
def queued_prod_run() -> ProgramRun:
    """prod with two teams' GPU quotas on its two groups (tests/components/test_queues.py TEAMS)."""
    run = run_program("prod", config=prod_with({"teams": TEAMS}))
    assert run.error is None, run.error
    return run


def on_unlisted_minor_with_preset(r: PlannedResource) -> bool:
    return (
        r.type == NODE_GROUP
        and "driversPreset" in r.props["template"].get("gpuSettings", {})
        and r.props["version"].split("-")[0] == "1.34"
    )


@pytest.mark.parametrize("stack", [*STACKS, "dev-operator", "prod-queues"])
def test_real_stacks_pass_every_rule_with_one_advisory_per_preset_group_on_1_34(stacks, stack):
    findings = check_resources(stacks[stack])
    assert beyond_the_unlisted_minor(findings) == []
    assert sorted(f.urn for f in findings) == sorted(r.urn for r in stacks[stack] if on_unlisted_minor_with_preset(r))


def set_field(resource: PlannedResource, path: str, value) -> PlannedResource:
    *parents, leaf = path.split(".")
    target = resource.props
    for key in parents:
        target = target[key]
    target[leaf] = value
    return resource


def old_cluster(resources: Resources) -> PlannedResource:
    return set_field(the_one(resources, lambda r: r.type == CLUSTER), "controlPlane.version", "1.33")


def dra_off_on_one_group(resources: Resources) -> PlannedResource:
    return set_field(the_one(resources, autoscaled_gpu_group), "template.gpuSettings.dra", False)


def override_false(resources: Resources) -> PlannedResource:
    return set_field(the_one(resources, driver_release), "values.gpuResourcesEnabledOverride", False)


def unpinned_driver(resources: Resources) -> PlannedResource:
    release = the_one(resources, driver_release)
    del release.props["version"]
    return release


def driver_in_default_namespace(resources: Resources) -> PlannedResource:
    return set_field(the_one(resources, driver_release), "namespace", "default")


def device_plugin_on(resources: Resources) -> PlannedResource:
    operator = the_one(resources, lambda r: r.type == HELM_RELEASE and r.props["chart"].endswith("gpu-operator"))
    return set_field(operator, "values.devicePlugin.enabled", True)


def beta_claim_template(resources: Resources) -> PlannedResource:
    index = resources.index(the_one(resources, template_named("gpu")))
    old = resources[index]
    beta_type = old.type.replace("/v1:", "/v1beta1:")
    resources[index] = dataclasses.replace(
        old, type=beta_type, props={**old.props, "apiVersion": "resource.k8s.io/v1beta1"}
    )
    return resources[index]


def rdma_and_ib_together(resources: Resources) -> PlannedResource:
    template = the_one(resources, template_named("ib-network"))
    requests = template.props["spec"]["spec"]["devices"]["requests"]
    requests.append({"name": "rdma", "exactly": {"deviceClassName": "rdma.networking.nebius.ai", "count": 1}})
    return template


def aligned_pair_over_two_gpus(resources: Resources) -> PlannedResource:
    template = the_one(resources, template_named("gpu-nic-aligned"))
    gpu = template.props["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    assert gpu["deviceClassName"] == "gpu.nvidia.com"
    gpu["count"] = 2.0
    return template


def autoscaling_from_zero(resources: Resources) -> PlannedResource:
    return set_field(the_one(resources, autoscaled_gpu_group), "autoscaling.minNodeCount", 0.0)


def preset_not_listed_for_its_minor(resources: Resources) -> PlannedResource:
    group = the_one(resources, lambda r: r.type == NODE_GROUP and "gpuSettings" in r.props["template"])
    set_field(group, "version", "1.35")
    return set_field(group, "template.gpuSettings.driversPreset", "cuda12.8")


def device_tolerations_on_1_34(resources: Resources) -> PlannedResource:
    template = the_one(resources, template_named("gpu"))
    exactly = template.props["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    exactly["tolerations"] = [{"key": "gpu.nvidia.com/xid", "operator": "Exists"}]
    return template


def latest_sample_image(resources: Resources) -> PlannedResource:
    pod = the_one(resources, lambda r: r.type == POD and r.props["metadata"]["name"] == "gpu-workload")
    pod.props["spec"]["containers"][0]["image"] = "nvidia/cuda:latest"
    return pod


def no_driver_release(resources: Resources) -> None:
    resources.remove(the_one(resources, driver_release))


def second_driver_release(resources: Resources) -> PlannedResource:
    first = the_one(resources, driver_release)
    second = dataclasses.replace(
        first, urn=first.urn + "-second", name=first.name + "-second", props=copy.deepcopy(first.props)
    )
    resources.append(second)
    return second


def operator_group_at_the_preset_root(resources: Resources) -> PlannedResource:
    group = the_one(resources, train_group)
    group.props["template"]["gpuSettings"].pop("driversPreset")
    return group


def outage_accepted_for_a_served_group(resources: Resources) -> PlannedResource:
    group = the_one(resources, train_group)
    driver = the_one(resources, lambda r: r.type == DRA_DRIVER_COMPONENT_TYPE)
    driver.props[PLUGIN_OUTAGE_ACCEPTED] = [written_group_name(group)]
    return group


def infiniband_group_autoscaled(resources: Resources) -> PlannedResource:
    group = the_one(resources, lambda r: r.type == NODE_GROUP and "gpuCluster" in r.props["template"])
    group.props.pop("fixedNodeCount")
    group.props["autoscaling"] = {"minNodeCount": 4.0, "maxNodeCount": 8.0}
    return group


def no_infiniband_group(resources: Resources) -> PlannedResource:
    for group in resources:
        if group.type == NODE_GROUP:
            group.props["template"].pop("gpuCluster", None)
    resources.remove(the_one(resources, lambda r: r.type == GPU_CLUSTER))
    return the_one(resources, template_named("ib-network"))


def exporter_without_dra_mode(resources: Resources) -> PlannedResource:
    return set_field(the_one(resources, exporter_release), "values.kubernetesDRA.enabled", False)


def exporter_before_v1_support(resources: Resources) -> PlannedResource:
    return set_field(the_one(resources, exporter_release), "version", "4.8.2")


def operator_exporter_on(resources: Resources) -> PlannedResource:
    operator = the_one(resources, lambda r: r.type == HELM_RELEASE and r.props["chart"].endswith("gpu-operator"))
    return set_field(operator, "values.dcgmExporter.enabled", True)


def no_gpu_metrics(resources: Resources) -> None:
    resources.remove(the_one(resources, exporter_release))


def estimate_of(resources: Resources) -> PlannedResource:
    return the_one(resources, lambda r: r.type == COST_ESTIMATE)


def largest_hourly_cost(resources: Resources) -> float:
    """What the stack's nodes cost per hour at their largest size, from the registered estimate."""
    return float(estimate_of(resources).props["total"]["hourlyUsd"]["max"])


def fixed_gpu_group(r: PlannedResource) -> bool:
    return r.type == NODE_GROUP and "fixedNodeCount" in r.props and "gpuSettings" in r.props["template"]


def one_more_fabric_node(resources: Resources) -> None:
    """A PR that adds a node to prod's fixed InfiniBand group, against a budget of prod's cost today."""
    group = the_one(resources, fixed_gpu_group)
    group.props["fixedNodeCount"] += 1


def group_on_an_unpriced_platform(resources: Resources) -> PlannedResource:
    """The program priced the group it registered; the edited resource runs something the estimate did not price."""
    return set_field(the_one(resources, autoscaled_gpu_group), "template.resources.platform", "gpu-b300-sxm")


def spot_ceiling_below_the_spot_price(resources: Resources) -> PlannedResource:
    """The estimate of a spot group whose ceiling is below the table's spot price, as components/values/cost.py makes it."""
    group = the_one(resources, autoscaled_gpu_group)
    [entry] = [e for e in estimate_of(resources).props["groups"] if e["nodeGroup"] == group.props["name"]]
    entry |= {"capacity": "spot", "basis": "8 GPUs x $0.5 per GPU-hour at most", "spotAboveCeiling": 1.45}
    return group


def train_group(r: PlannedResource) -> bool:
    return r.type == NODE_GROUP and "gpuCluster" in r.props["template"]


def strategy_left_to_nebius(resources: Resources) -> PlannedResource:
    group = the_one(resources, autoscaled_gpu_group)
    del group.props["strategy"]
    return group


def reserved_strict_group_surges(resources: Resources) -> PlannedResource:
    group = the_one(resources, train_group)
    group.props["template"]["reservationPolicy"] = {"policy": "STRICT", "reservationIds": ["capacityblockgroup-e00x"]}
    group.props["strategy"]["maxSurge"] = {"count": 1.0}
    return group


def spot_group_on_the_fabric(resources: Resources) -> PlannedResource:
    group = the_one(resources, train_group)
    group.props["template"]["preemptible"] = {}
    group.props["template"]["followsSpotPrice"] = {}
    return group


def identity_resource(type_token: str, kind: str, **props: object) -> PlannedResource:
    labels = {IDENTITY_LABEL: kind, ENVIRONMENT_LABEL: "prod"}
    return PlannedResource(
        f"urn:pulumi:prod::nebius-dra::{type_token}::ci-{kind}", type_token, f"ci-{kind}", {"labels": labels, **props}
    )


def admin_deploy_identity(resources: Resources) -> PlannedResource:
    """An access permit added by hand: the deploy identity as admin of the project."""
    permit = identity_resource(ACCESS_PERMIT_TYPE, "deploy", role="admin", resourceId="project-e00prod000000000000")
    resources.append(permit)
    return permit


def deploy_identity_trusting_a_branch(resources: Resources) -> PlannedResource:
    """Federated credentials added by hand: every push to main may deploy, outside the environment's rules."""
    trust = identity_resource(
        FEDERATED_CREDENTIALS_TYPE,
        "deploy",
        federatedSubjectId="repo:example-org/nebius-dra:ref:refs/heads/main",
        oidcProvider={"issuerUrl": GITHUB_ISSUER},
        subjectId="serviceaccount-e00x",
    )
    resources.append(trust)
    return trust


def kueue_dra_gate_off(resources: Resources) -> PlannedResource:
    release = the_one(resources, lambda r: r.type == HELM_RELEASE and r.props["chart"].endswith("/kueue"))
    release.props["values"]["controllerManager"]["featureGates"] = [
        {"name": "DynamicResourceAllocation", "enabled": False}
    ]
    return release


def pod_outside_the_teams(resources: Resources) -> PlannedResource:
    pod = PlannedResource("urn:pulumi:prod::nebius-dra::kubernetes:core/v1:Pod::stray", POD, "stray",
                          {"metadata": {"name": "stray", "namespace": "default"}, "spec": {"containers": []}})  # fmt: skip
    resources.append(pod)
    return pod


def quotas_past_the_group_without_cohorts(resources: Resources) -> None:
    for queue in (r for r in resources if r.type.endswith(":ClusterQueue")):
        queue.props["spec"].pop("cohortName", None)
        for flavor in queue.props["spec"]["resourceGroups"][0]["flavors"]:
            for resource in flavor["resources"]:
                if resource["name"] == "nvidia.com/gpu" and flavor["name"] == "h200-train":
                    resource["nominalQuota"] += 1


def driver_chart_from_a_mirror(resources: Resources) -> None:
    """The DRA driver's chart from a mirror, the others (Kueue's, dcgm-exporter's) left at their upstreams."""
    (driver,) = [r for r in resources if r.type.endswith(":Release") and r.props["chart"] == "nvidia-dra-driver-gpu"]
    driver.props["repositoryOpts"] = {"repo": "https://charts.example.com/nvidia"}


def rdma_job_without_ipc_lock(resources: Resources) -> PlannedResource:
    """A user's training Job on prod's fabric: every GPU and NIC of a node, but no right to pin RDMA buffers."""
    pod_spec = {
        "resourceClaims": [{"name": "node", "resourceClaimTemplateName": "h200-full-node"}],
        "containers": [
            {"name": "train", "image": "nvcr.io/nvidia/pytorch:25.01-py3", "resources": {"claims": [{"name": "node"}]}}
        ],
    }
    job = PlannedResource(
        "urn:pulumi:prod::nebius-dra::kubernetes:batch/v1:Job::train",
        "kubernetes:batch/v1:Job",
        "train",
        {"metadata": {"name": "train", "namespace": "dra-samples"}, "spec": {"template": {"spec": pod_spec}}},
    )
    resources.append(job)
    return job


MUTATIONS = {
    "cluster below 1.34": ("prod", old_cluster, "mk8s-cluster-version", True),
    "DRA off on one GPU group": ("prod", dra_off_on_one_group, "gpu-node-group-dra-enabled", True),
    "gpuResourcesEnabledOverride false": ("dev", override_false, "dra-driver-release-settings", True),
    "driver chart version unpinned": ("prod", unpinned_driver, "dra-driver-release-settings", True),
    "driver in the default namespace": ("dev", driver_in_default_namespace, "dra-driver-release-settings", True),
    "GPU Operator device plugin on": ("dev-operator", device_plugin_on, "gpu-operator-device-plugin-disabled", True),
    "claim template on v1beta1": ("dev", beta_claim_template, "dra-api-version-v1", True),
    "rdma and ib for one NIC": ("prod", rdma_and_ib_together, "network-device-requested-once", False),
    "one PCIe root for two GPUs": ("prod", aligned_pair_over_two_gpus, "pcie-root-constraint-per-pair", False),
    "autoscaling from zero": ("prod", autoscaling_from_zero, "dra-autoscaling-min-nodes", True),
    "InfiniBand group autoscaled": ("prod", infiniband_group_autoscaled, "infiniband-autoscaling", False),
    "device tolerations on 1.34": ("dev", device_tolerations_on_1_34, "dra-features-on-cluster-minor", True),
    "sample image on latest": ("dev", latest_sample_image, "workload-images-pinned", False),
    "no DRA driver release": ("prod", no_driver_release, "single-dra-driver-release", True),
    "two DRA driver releases": ("dev", second_driver_release, "single-dra-driver-release", True),
    "spot ceiling below the spot price": (
        "prod",
        spot_ceiling_below_the_spot_price,
        "spot-ceiling-below-spot-price",
        False,
    ),
    "GPU Operator group at the preset root": (
        "prod",
        operator_group_at_the_preset_root,
        "dra-driver-root-serves-every-group",
        True,
    ),
    "outage accepted with no driver-mode change": (
        "prod",
        outage_accepted_for_a_served_group,
        "outage-accepted-only-where-stranded",
        False,
    ),
    "network claims without InfiniBand": ("prod", no_infiniband_group, "network-claims-need-infiniband", True),
    "GPU metrics exporter without DRA mode": ("prod", exporter_without_dra_mode, "gpu-metrics-dra-attribution", True),
    "GPU metrics exporter before 4.8.3": ("dev", exporter_before_v1_support, "gpu-metrics-dra-attribution", True),
    "GPU Operator's own exporter on": ("dev-operator", operator_exporter_on, "gpu-metrics-dra-attribution", True),
    "no GPU metrics": ("prod", no_gpu_metrics, "gpu-metrics-present", False),
    "prod over its budget": ("prod", one_more_fabric_node, "max-hourly-cost", False),
    "GPU group the estimate did not price": ("prod", group_on_an_unpriced_platform, "max-hourly-cost", False),
    "GPU group strategy left to Nebius": ("prod", strategy_left_to_nebius, "gpu-node-group-strategy", True),
    "reserved STRICT group surges": ("prod", reserved_strict_group_surges, "reserved-strict-no-surge", True),
    "spot group on the fabric": ("prod", spot_group_on_the_fabric, "spot-infiniband", False),
    "driver preset not listed": ("dev", preset_not_listed_for_its_minor, "gpu-drivers-preset-known", False),
    "deploy identity as admin": ("prod", admin_deploy_identity, "ci-identity-roles", True),
    "deploy identity trusting a branch": ("prod", deploy_identity_trusting_a_branch, "ci-identity-trust", True),
    "Kueue's DRA gate off": ("prod-queues", kueue_dra_gate_off, "kueue-dra-gate", True),
    "a pod outside the teams' namespaces": ("prod-queues", pod_outside_the_teams, "workload-namespace-queued", False),
    "quotas past a group without cohorts": (
        "prod-queues",
        quotas_past_the_group_without_cohorts,
        "queue-quotas-within-capacity",
        False,
    ),
    "a chart from upstream beside a mirror": (
        "prod-queues",
        driver_chart_from_a_mirror,
        "charts-mirrored",
        False,
    ),
    "RDMA Job without IPC_LOCK": ("prod", rdma_job_without_ipc_lock, "rdma-pod-memlock", True),
}
# Mutations of rules that check nothing until their policy config asks for it: the config, from the stack as planned.
MUTATION_CONFIGS: dict[str, Callable[[Resources], dict]] = {
    "prod over its budget": lambda resources: {"max-hourly-cost": {"maxHourlyUsd": largest_hourly_cost(resources)}},
    "GPU group the estimate did not price": lambda resources: {"max-hourly-cost": {"maxHourlyUsd": 1e6}},
}


def test_every_rule_has_a_mutation():
    assert {policy for _, _, policy, _ in MUTATIONS.values()} == {rule.name for rule in RULES}


@pytest.mark.parametrize("mutation", MUTATIONS, ids=list(MUTATIONS))
def test_mutation_is_caught_by_its_rule_only(stacks, mutation):
    stack, mutate, policy, mandatory = MUTATIONS[mutation]
    resources = stacks[stack]
    config = MUTATION_CONFIGS[mutation](resources) if mutation in MUTATION_CONFIGS else None
    before = check_resources(resources, config)
    assert beyond_the_unlisted_minor(before) == [], "the stack as planned must pass its own config"
    culprit = mutate(resources)
    findings = beyond_the_unlisted_minor([f for f in check_resources(resources, config) if f not in before])
    assert {(f.policy, f.mandatory) for f in findings} == {(policy, mandatory)}, findings
    if culprit is not None:
        on_culprit = [f for f in findings if f.urn == culprit.urn]
        assert on_culprit, f"no finding is attached to the changed resource: {findings}"
        assert all(f'"{culprit.name}"' in f.message for f in on_culprit)


@pytest.mark.parametrize("stack", STACKS)
def test_recording_each_groups_checked_preset_clears_the_advisory(stacks, stack):
    presets = {
        (
            r.props["version"].split("-")[0],
            r.props["template"]["resources"]["platform"],
            r.props["template"]["gpuSettings"]["driversPreset"],
        )
        for r in stacks[stack]
        if on_unlisted_minor_with_preset(r)
    }
    # Each preset once (prod's two groups share one): the rule refuses a preset recorded twice.
    checked = [
        {"kubernetesVersion": version, "platform": platform, "driversPreset": preset, "checkedOn": "2026-11-30"}
        for version, platform, preset in sorted(presets)
    ]
    assert check_resources(stacks[stack], {"gpu-drivers-preset-known": {"checkedPresets": checked}}) == []


def test_minimum_version_from_policy_config_fails_the_real_dev_stack(stacks):
    config = {"mk8s-cluster-version": {"minimumVersion": "1.35"}}
    [finding] = beyond_the_unlisted_minor(check_resources(stacks["dev"], config))
    assert finding.policy == "mk8s-cluster-version" and finding.mandatory
    assert "Kubernetes 1.34, below the required 1.35" in finding.message


def test_the_budget_message_names_the_rates_the_stack_overrides():
    config = dict(load_stack_config("prod"))
    rate = {"usdPerGpuHour": 2.0, "source": "contract NB-2026-17", "date": "2026-11-01"}
    config["nebius-dra:priceOverrides"] = json.dumps(
        {"gpu": [{"platform": "gpu-h200-sxm", "presets": ["8gpu-128vcpu-1600gb"], "onDemand": rate}]}
    )
    run = run_program("prod", config=config)
    assert run.error is None, run.error
    [finding] = beyond_the_unlisted_minor(check_resources(planned(run), {"max-hourly-cost": {"maxHourlyUsd": 1}}))
    assert "but rates from nebius-dra:priceOverrides of 2026-11-01 for " in finding.message
    assert "h200-train" in finding.message.split("but rates from")[1]
    # Newcomer 4: every group as the stack file names it (`h200-train`), never by its Nebius name (`dra-prod-...`).
    assert "dra-prod-" not in finding.message, finding.message
    assert "h200-train 4 x $16.00" in finding.message, finding.message


@pytest.mark.parametrize("stack", [*STACKS, "dev-operator"])
def test_real_stacks_pass_a_budget_of_their_own_cost_and_fail_one_a_cent_lower(stacks, stack):
    resources = stacks[stack]
    cost = largest_hourly_cost(resources)
    assert beyond_the_unlisted_minor(check_resources(resources, {"max-hourly-cost": {"maxHourlyUsd": cost}})) == []
    [finding] = beyond_the_unlisted_minor(
        check_resources(resources, {"max-hourly-cost": {"maxHourlyUsd": cost - 0.01}})
    )
    assert finding.policy == "max-hourly-cost" and finding.urn is None
    assert shows_the_hourly_cost(finding.message, cost)


# Hostile values: each rule's message, with every value it quotes from the stack made hostile, quotes none of it raw.
CANARY = "CANARY"
HOSTILE_SUFFIXES = {
    "terminal escape": "\x1b[31m",
    "userinfo": f"https://u:{CANARY}@h/x",
    "token parameter": f"?token={CANARY}",
    "bearer token": f" Bearer {CANARY}",
    "100 KiB": "x" * 102400,
}
MESSAGE_LIMIT = 4096
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{2,}")


def _with_replaced(value: Any, word: str, replacement: str) -> Any:
    if isinstance(value, str):
        return value.replace(word, replacement)
    if isinstance(value, dict):
        return {key: _with_replaced(item, word, replacement) for key, item in value.items()}
    if isinstance(value, list):
        return [_with_replaced(item, word, replacement) for item in value]
    return value


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _rule_messages(rule: ResourceRule | StackRule, resources: Resources, config: dict | None) -> list[str]:
    settings = rule._settings((config or {}).get(rule.name, {}))
    if isinstance(rule, StackRule):
        return [message for _, message in rule.check(resources, settings)]
    return [message for resource in resources for message in rule.check(resource, settings)]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=list(MUTATIONS))
def test_a_rules_message_quotes_no_hostile_value_raw(stacks, mutation):
    """Every word of the rule's message that the stack's values hold is made hostile in all of them at once (so that
    values that must match still match), the rule run again: no message holds ESC or the canary, each is bounded,
    and at least one shows a hostile value as it was quoted (escaped, hidden or cut)."""
    stack, mutate, policy, _ = MUTATIONS[mutation]
    resources = stacks[stack]
    config = MUTATION_CONFIGS[mutation](resources) if mutation in MUTATION_CONFIGS else None
    mutate(resources)
    (rule,) = [rule for rule in RULES if rule.name == policy]
    messages = _rule_messages(rule, resources, config)
    assert messages
    texts = {text for resource in resources for text in (resource.name, *_strings(resource.props))}
    words = sorted({word for message in messages for word in _WORD.findall(message) if any(word in t for t in texts)})
    quoted = False
    for word in words:
        for suffix in HOSTILE_SUFFIXES.values():
            hostile = [
                dataclasses.replace(
                    resource,
                    name=resource.name.replace(word, word + suffix),
                    props=_with_replaced(resource.props, word, word + suffix),
                )
                for resource in resources
            ]
            for message in _rule_messages(rule, hostile, config):
                assert "\x1b" not in message and CANARY not in message, (word, message[:400])
                assert len(message) <= MESSAGE_LIMIT, (word, len(message))
                quoted |= any(mark in message for mark in ("\\x1b", "[credentials]", "[redacted]", "characters)"))
    assert quoted, f"no hostile value reached a message of {policy} (words tried: {words})"
