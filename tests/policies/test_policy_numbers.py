"""Issue 37, hostile input: a number a rule compares or adds up (a node count, a claim's device count, a quota, a price)
that is no finite number is the rule's violation, naming the resource and the field, never a traceback, and never
judged as the 0 or 1 it was read as before (planned.planned_number, framework.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from policies.dra_guardrails import PlannedResource, check_resources
from policies.dra_guardrails.consequences import CLAIM_TEMPLATE_TYPE, CLUSTER_QUEUE_TYPE
from policies.dra_guardrails.planned import COST_ESTIMATE_TYPE, NODE_GROUP_TYPE
from tests.queue_configs import TEAMS, prod_with
from tools.plan.mock_engine import run_program

# What a hand-edited or a hostile program's inputs may hold where the stack registers a whole number.
NOT_NUMBERS = ("3", None, True, float("inf"), float("nan"), [1], {"n": 1})
BUDGET = {"max-hourly-cost": {"maxHourlyUsd": 1000000}}


def _planned(run: Any) -> list[PlannedResource]:
    return [PlannedResource(r.urn, r.type, r.name, copy.deepcopy(r.inputs)) for r in run.resources]


def _set(
    resources: list[PlannedResource], type_token: str, path: tuple[Any, ...], value: Any, holding: str = ""
) -> PlannedResource:
    """The first resource of `type_token` holding `path` (and `holding` in its inputs' text), its value there replaced
    by `value`."""
    for resource in resources:
        if holding not in repr(resource.props):
            continue
        target: Any = resource.props
        try:
            for key in path[:-1]:
                target = target[key]
            target[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue
        if resource.type == type_token:
            target[path[-1]] = value
            return resource
    raise AssertionError(f"no {type_token} holds {path}")


@pytest.mark.parametrize("value", NOT_NUMBERS, ids=repr)
@pytest.mark.parametrize(
    ("path", "policy"),
    [
        (("fixedNodeCount",), "max-hourly-cost"),
        (("autoscaling", "minNodeCount"), "dra-autoscaling-min-nodes"),
        (("autoscaling", "maxNodeCount"), "max-hourly-cost"),
    ],
)
def test_a_node_count_that_is_no_number_is_a_violation_naming_it(prod_run, path, policy, value):
    resources = _planned(prod_run)
    group = _set(resources, NODE_GROUP_TYPE, path, value)
    findings = check_resources(resources, BUDGET)
    field = ".".join(path)
    named = [f for f in findings if f.urn == group.urn and f"has {field} " in f.message]
    assert policy in {f.policy for f in named if "which is no finite number" in f.message}, findings


@pytest.mark.parametrize("value", NOT_NUMBERS, ids=repr)
def test_a_claim_count_that_is_no_number_is_a_violation_naming_it(prod_run, value):
    resources = _planned(prod_run)
    # pcie-root-constraint-per-pair counts the devices of the requests a PCIe-root constraint covers.
    template = _set(
        resources,
        CLAIM_TEMPLATE_TYPE,
        ("spec", "spec", "devices", "requests", 0, "exactly", "count"),
        value,
        holding="pcieRoot",
    )
    findings = check_resources(resources)
    assert any(f.urn == template.urn and "has count " in f.message for f in findings), findings


def test_a_quota_that_is_no_number_is_a_violation_naming_it():
    resources = _planned(run_program("prod", config=prod_with({"teams": TEAMS})))
    # The GPU quota (the third resource); cpu's and memory's are not added up, and memory's is a string ("6400Gi").
    path = ("spec", "resourceGroups", 0, "flavors", 0, "resources", 2, "nominalQuota")
    queue = _set(resources, CLUSTER_QUEUE_TYPE, path, "8")
    assert queue.props["spec"]["resourceGroups"][0]["flavors"][0]["resources"][2]["name"] == "nvidia.com/gpu"
    findings = check_resources(resources)
    assert any(
        f.urn == queue.urn and f.policy == "queue-quotas-within-capacity" and "has nominalQuota " in f.message
        for f in findings
    ), findings


@pytest.mark.parametrize("price", [float("nan"), float("inf"), True], ids=repr)
def test_a_price_that_is_no_finite_number_leaves_its_group_unpriced(prod_run, price):
    """A NaN price made the total NaN, which every comparison with the budget calls within it."""
    resources = _planned(prod_run)
    _set(resources, COST_ESTIMATE_TYPE, ("groups", 0, "usdPerNodeHour"), price)
    findings = check_resources(resources, {"max-hourly-cost": {"maxHourlyUsd": 1}})
    assert any(f.policy == "max-hourly-cost" and "cannot be priced" in f.message for f in findings), findings
