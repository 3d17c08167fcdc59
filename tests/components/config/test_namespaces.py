"""No namespace the stack creates takes one the cluster owns or reserves (kube-), or one of the stack's releases (components/config/namespaces.py)."""

from __future__ import annotations

import json

import pytest

from components.config import parse_stack_config
from components.config.namespaces import KUBERNETES_NAMESPACES
from components.config.stack_file import load_stack_config, program_config
from tests.queue_configs import TEAMS
from tests.stack_configs import refusal

# The namespace settings of prod, each with how a value is set.
SETTINGS = {
    "claimNamespace": lambda namespace: {"claimNamespace": namespace},
    "draDriverNamespace": lambda namespace: {"draDriverNamespace": namespace},
    "gpuMetricsNamespace": lambda namespace: {"gpuMetricsNamespace": namespace},
    "queues: namespace": lambda namespace: {"queues": json.dumps({"namespace": namespace, "teams": TEAMS})},
    "queues team research namespace": lambda namespace: {
        "queues": json.dumps({"teams": [{**TEAMS[0], "namespace": namespace}, TEAMS[1]]})
    },
}


# prod with the driver left to the GPU Operator, and so the Network Operator for its InfiniBand group.
DRIVERLESS = json.dumps(
    [
        {k: v for k, v in g.items() if k != "driversPreset"}
        for g in json.loads(load_stack_config("prod")["nebius-dra:gpuNodeGroups"])
    ]
)


@pytest.mark.parametrize("namespace", KUBERNETES_NAMESPACES)
@pytest.mark.parametrize("setting", SETTINGS)
def test_no_namespace_setting_takes_one_the_cluster_owns(setting, namespace):
    message = refusal(**SETTINGS[setting](namespace))
    assert f'nebius-dra:{setting}: got "{namespace}", a namespace Kubernetes creates and owns' in message


@pytest.mark.parametrize(
    ("setting", "namespace", "owner"),
    [
        ("queues team research namespace", "nvidia-dra-driver-gpu", "the DRA driver's release (nebius-dra:draDriverNamespace)"),
        ("queues team research namespace", "gpu-operator", "the GPU Operator's release"),
        ("queues team research namespace", "nvidia-network-operator", "the Network Operator's release"),
        ("queues team research namespace", "gpu-metrics", "the GPU metrics exporter's release"),
        ("queues team research namespace", "kueue-system", "Kueue's release (nebius-dra:queues namespace)"),
        ("queues: namespace", "gpu-operator", "the GPU Operator's release"),
        ("queues: namespace", "dra-samples", "the claim templates (nebius-dra:claimNamespace)"),
        ("claimNamespace", "gpu-operator", "the GPU Operator's release"),
    ],
)  # fmt: skip
def test_a_namespace_the_stack_creates_is_not_one_of_its_releases(setting, namespace, owner):
    operators = {"gpuNodeGroups": DRIVERLESS} if "Operator" in owner else {}
    message = refusal(**SETTINGS[setting](namespace), **operators)
    assert f'nebius-dra:{setting}: got "{namespace}", the namespace of {owner}' in message


def test_a_team_named_like_a_release_namespace_is_refused_though_it_sets_no_namespace():
    message = refusal(queues=json.dumps({"teams": [{**TEAMS[0], "name": "default"}]}))
    assert 'nebius-dra:queues team default namespace: got "default", a namespace Kubernetes creates' in message
    assert "(the team's name unless namespace is set)" in message


def test_the_driver_follows_its_namespace_setting_and_frees_the_default_one():
    moved = {**program_config(load_stack_config("prod")), "draDriverNamespace": "dra-driver"}
    team = {**TEAMS[0], "namespace": "nvidia-dra-driver-gpu"}
    assert parse_stack_config({**moved, "queues": json.dumps({"teams": [team, TEAMS[1]]})}, "prod").queues.teams
    message = refusal(
        draDriverNamespace="dra-driver", queues=json.dumps({"teams": [{**team, "namespace": "dra-driver"}]})
    )
    assert 'got "dra-driver", the namespace of the DRA driver\'s release' in message


def test_an_operators_namespace_is_free_where_the_stack_installs_no_operator():
    """prod's groups have driver presets: no GPU or Network Operator runs, so their namespaces are not taken."""
    config = program_config(load_stack_config("prod"))
    team = {**TEAMS[0], "namespace": "gpu-operator"}
    queues = json.dumps({"teams": [team, TEAMS[1]], "namespace": "nvidia-network-operator"})
    assert parse_stack_config({**config, "queues": queues}, "prod").queues.namespace == "nvidia-network-operator"


@pytest.mark.parametrize(
    ("namespace", "changes", "owner"),
    [
        ("monitoring", {"kubePrometheusStack": "true"}, "the kube-prometheus-stack release (nebius-dra:kubePrometheusStack)"),
        ("gpu-operator", {"gpuNodeGroups": DRIVERLESS}, "the GPU Operator's release (for the gpuNodeGroups without driversPreset)"),
        ("nvidia-network-operator", {"gpuNodeGroups": DRIVERLESS}, "the Network Operator's release"),
    ],
)  # fmt: skip
def test_the_driver_namespace_is_not_another_releases_either(namespace, changes, owner):
    """The reverse (claimNamespace, a team, Kueue taking the driver's) was refused; the driver taking theirs was not."""
    message = refusal(draDriverNamespace=namespace, **changes)
    assert f'nebius-dra:draDriverNamespace: got "{namespace}", the namespace of {owner}' in message


def test_the_driver_may_use_monitoring_or_an_operators_name_when_that_release_is_not_installed():
    config = program_config(load_stack_config("prod"))
    for namespace in ("monitoring", "gpu-operator", "nvidia-network-operator"):
        assert parse_stack_config({**config, "draDriverNamespace": namespace}, "prod").driver.namespace == namespace


@pytest.mark.parametrize("setting", SETTINGS)
def test_no_namespace_setting_takes_the_prefix_kubernetes_reserves(setting):
    """kube-flannel is no namespace a cluster is created with, but its prefix is Kubernetes' own (hostile review 9)."""
    message = refusal(**SETTINGS[setting]("kube-flannel"))
    assert (
        f'nebius-dra:{setting}: got "kube-flannel", which starts with kube-, the prefix Kubernetes reserves for its '
        'system namespaces (kubernetes.io/docs/concepts/overview/working-with-objects/namespaces: "Avoid creating '
        'namespaces with the prefix kube-")'
    ) in message


def test_a_team_named_with_the_reserved_prefix_is_refused():
    message = refusal(queues=json.dumps({"teams": [{**TEAMS[0], "name": "kube-foo"}]}))
    assert 'nebius-dra:queues team kube-foo namespace: got "kube-foo", which starts with kube-' in message


@pytest.mark.parametrize("setting", ["claimNamespace", "gpuMetricsNamespace", "draDriverNamespace"])
def test_a_setting_that_takes_kueues_default_namespace_is_the_one_refused(setting):
    """The user set `setting`, not `queues namespace`: the message names the key to change, and never suggests
    kueue-system, the value it refuses (hostile review 14)."""
    message = refusal(**SETTINGS[setting]("kueue-system"), queues=json.dumps({"teams": TEAMS}))
    assert (
        f'nebius-dra:{setting}: got "kueue-system", the namespace of Kueue\'s release (nebius-dra:queues namespace, '
        "left at its default)"
    ) in message
    assert "nebius-dra:queues: namespace" not in message and "for example kueue-system" not in message


def test_kueues_namespace_set_to_the_claim_namespace_is_refused_on_queues_without_suggesting_it():
    message = refusal(claimNamespace="kueue-system", queues=json.dumps({"teams": TEAMS, "namespace": "kueue-system"}))
    assert 'nebius-dra:queues: namespace: got "kueue-system", the namespace of the claim templates' in message
    assert "for example kueue-system" not in message and "nebius-dra:claimNamespace:" not in message
