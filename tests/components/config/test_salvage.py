"""The salvage (components/config/salvage.py) judges only what the user wrote, and shows every independent problem."""

from __future__ import annotations

import json

import pytest

from components.config.stack_file import load_stack_config
from tests.stack_configs import refusal

PROD_GROUPS = json.loads(load_stack_config("prod")["nebius-dra:gpuNodeGroups"])
FLOORING = {"maxSurge": "0%", "maxUnavailable": "20%"}  # no node at 1 or 2 nodes, one from 5
NEVER = "a roll-out could never replace a node"


def _groups(index: int, **fields) -> str:
    groups = json.loads(json.dumps(PROD_GROUPS))
    groups[index].update(fields)
    return json.dumps([{k: v for k, v in group.items() if v is not None} for group in groups])


@pytest.mark.parametrize(
    ("stack", "changes"),
    [
        ("dev", {"systemNodeCount": "ten", "systemNodeStrategy": json.dumps(FLOORING)}),
        ("dev", {"systemNodeCount": "500", "systemNodeStrategy": json.dumps(FLOORING)}),
        ("prod", {"gpuNodeGroups": _groups(0, fixedNodeCount=500, strategy=FLOORING)}),
        ("prod", {"gpuNodeGroups": _groups(1, autoscaling={"min": "one", "max": 8}, strategy=FLOORING)}),
    ],
    ids=["system-undecodable", "system-out-of-bounds", "fixed-count", "autoscaling-min"],
)
def test_a_strategy_is_not_judged_by_a_default_standing_in_for_a_refused_count(stack, changes):
    message = refusal(stack, **changes)
    assert "expected a whole number" in message
    assert NEVER not in message, message
    assert "checks that read a refused value run once it is fixed" in message


def test_a_strategy_is_judged_by_the_count_the_user_wrote():
    message = refusal("dev", systemNodeCount="2", systemNodeStrategy=json.dumps(FLOORING))
    assert f"at 2 node(s) (nebius-dra:systemNodeCount), so {NEVER}" in message
    message = refusal("prod", gpuNodeGroups=_groups(0, fixedNodeCount=1, strategy=FLOORING))
    assert f"at 1 node(s) (fixedNodeCount), so {NEVER}" in message


TOLERANT = [
    {
        "name": "tolerant",
        "requests": [
            {
                "name": "gpu",
                "exactly": {
                    "deviceClassName": "gpu.nvidia.com",
                    "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
                },
            }
        ],
    }
]


@pytest.mark.parametrize("version", ["v1.36", "1.36.1", "1.33"])
def test_templates_are_not_judged_by_a_refused_kubernetes_version(version):
    """`tolerations` needs 1.36's DRADeviceTaints; a refused version used to have it judged on 1.34's gates."""
    message = refusal("dev", kubernetesVersion=version, userClaimTemplates=json.dumps(TOLERANT))
    assert f'nebius-dra:kubernetesVersion: got "{version}"' in message
    assert "DRADeviceTaints" not in message, message
    assert "invalid stack configuration (1 problem; checks that read a refused value run once it is fixed)" in message


def test_templates_are_judged_by_the_version_the_user_wrote():
    assert "DRADeviceTaints, Alpha and off by default in 1.35" in refusal(
        "dev", kubernetesVersion="1.35", userClaimTemplates=json.dumps(TOLERANT)
    )


def test_a_refused_queue_team_does_not_hide_another_teams_own_problem():
    teams = [
        {"name": "a", "quotas": [{"group": "h200-train", "gpus": "many"}]},
        {"name": "b", "quotas": [{"group": "nosuch", "gpus": 1}]},
        {"name": "c", "namespace": "kube-system", "quotas": [{"group": "h200-burst", "gpus": 1}]},
    ]
    message = refusal("prod", queues=json.dumps({"teams": teams}))
    assert 'nebius-dra:queues: teams[0].quotas[0].gpus got "many"' in message
    assert 'nebius-dra:queues team b: quotas[0].group got "nosuch", which is no GPU node group' in message
    assert 'nebius-dra:queues team c namespace: got "kube-system"' in message


def test_a_queues_problem_outside_the_teams_still_stops_the_rest():
    teams = [{"name": "b", "quotas": [{"group": "nosuch", "gpus": 1}]}]
    message = refusal("prod", queues=json.dumps({"teams": teams, "namespace": "Not A Label"}))
    assert "nebius-dra:queues: namespace got" in message
    assert "nosuch" not in message


@pytest.mark.parametrize(
    ("stack", "changes", "bound"),
    [
        ("dev", {"systemNodeStrategy": json.dumps({"maxSurg": 500, "maxUnavailable": 0})},
         "nebius-dra:systemNodeStrategy: maxSurge got 500; expected a whole number of nodes from 0 to 100"),
        ("prod", {"gpuNodeGroups": _groups(0, fixedNodeCount=None, fixedNodeCont=500)},
         "nebius-dra:gpuNodeGroups entry h200-train: fixedNodeCount got 500; expected a whole number from 1 to 100"),
        ("prod", {"gpuNodeGroups": _groups(1, autoscaling={"min": 1, "mx": 0})},
         "nebius-dra:gpuNodeGroups entry h200-burst: autoscaling.max got 0; expected a whole number from 1 to 100"),
    ],
    ids=["system-strategy", "group-count", "nested"],
)  # fmt: skip
def test_a_value_read_under_a_misspelt_keys_close_name_gets_its_bound_checks_in_the_same_run(stack, changes, bound):
    message = refusal(stack, **changes)
    assert "did you mean" in message
    assert bound in message, message


@pytest.mark.parametrize(
    ("team", "refused"),
    [
        ({"name": "a", "quota": [{"group": "h200-burst", "gpus": 1}]}, 'teams[0] has unknown field(s) "quota"'),
        ({"name": "a", "quotas": [{"group": "h200-burst", "gpus": "one"}]}, 'teams[0].quotas[0].gpus got "one"'),
    ],
    ids=["misspelt-field", "mistyped-count"],
)
def test_kueues_own_namespace_is_judged_though_every_team_was_refused(team, refused):
    message = refusal("prod", queues=json.dumps({"teams": [team], "namespace": "kube-system"}))
    assert refused in message
    assert 'nebius-dra:queues: namespace: got "kube-system", a namespace Kubernetes creates' in message
    assert "but no team" not in message
