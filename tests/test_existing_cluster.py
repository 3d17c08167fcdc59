"""Existing-cluster mode: the Kubernetes layer onto a cluster the stack does not create, from a secret kubeconfig."""

from __future__ import annotations

import json

import pytest
import yaml
from pulumi.runtime import rpc

from components.config import ConfigError
from components.config.stack_file import load_stack_config
from policies.dra_guardrails import PlannedResource, check_resources
from policies.dra_guardrails.planned import EXISTING_GPU_GROUP_TYPE
from tests.helpers import without_cluster_keys
from tools.plan.mock_engine import run_program

KEY = "nebius-dra:existingClusterKubeconfig"
KUBECONFIG = yaml.safe_dump(
    {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "c", "cluster": {"server": "https://10.0.0.1:6443", "certificate-authority-data": "Q0E="}}
        ],
        "users": [{"name": "u", "user": {"token": "t0ken-that-must-never-show"}}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
)


def existing(stack: str, kubeconfig: str = KUBECONFIG, secret: bool = True, **changes: str):
    """`stack` onto an existing cluster, the keys of the cluster it would create at their defaults."""
    config = {
        **without_cluster_keys(load_stack_config(stack)),
        KEY: kubeconfig,
        "nebius-dra:parentId": "",
        "nebius-dra:subnetId": "",
        **changes,
    }
    return run_program(stack, config=config, secret_keys=[KEY] if secret else [])


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_no_nebius_resource_is_registered_and_the_kubernetes_layer_is(stack):
    run = existing(stack)
    assert run.error is None, run.error
    types = {r.type for r in run.resources}
    assert not any(t.startswith("nebius:") for t in types), types
    assert "kubernetes:helm.sh/v3:Release" in types
    assert "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate" in types
    described = run.of_type(EXISTING_GPU_GROUP_TYPE)
    groups = json.loads(load_stack_config(stack)["nebius-dra:gpuNodeGroups"])
    assert sorted(r.inputs["name"] for r in described) == sorted(group["name"] for group in groups)
    assert all(r.inputs["labels"]["nvidia.com/dra-kubelet-plugin"] == "true" for r in described)


def test_the_kubeconfig_stays_secret_in_the_provider_and_the_outputs():
    run = existing("dev")
    [provider] = run.of_type("pulumi:providers:kubernetes")
    assert rpc.is_rpc_secret(provider.inputs["kubeconfig"])
    assert provider.inputs["clusterIdentifier"] == "existing:dra-dev"
    assert "kubeconfig" in run.secret_outputs
    assert "clusterId" not in run.outputs
    assert "t0ken-that-must-never-show" not in json.dumps(
        [r.inputs for r in run.resources if r.type != "pulumi:providers:kubernetes"], default=str
    )


def test_releases_wait_for_nothing_the_stack_does_not_create():
    run = existing("prod")
    urns = {r.urn for r in run.resources}
    for release in run.of_type("kubernetes:helm.sh/v3:Release"):
        assert all(dependency in urns for dependency in release.dependencies)
        assert not any("mk8sV1NodeGroup" in dependency for dependency in release.dependencies)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_policy_pack_passes_an_existing_cluster_stack(stack):
    run = existing(stack)
    resources = [PlannedResource(r.urn, r.type, r.name, r.inputs) for r in run.resources]
    assert check_resources(resources) == []


def test_a_kubeconfig_in_plain_text_is_refused_without_quoting_it():
    run = existing("dev", secret=False)
    assert isinstance(run.error, ConfigError)
    assert f"{KEY}: is set in plain text, but it holds the credentials of a cluster" in str(run.error)
    assert "t0ken" not in str(run.error)
    assert run.resources == []


def test_a_malformed_kubeconfig_is_refused_without_quoting_it():
    run = existing("dev", kubeconfig="clusters: t0ken-that-must-never-show\n")
    assert isinstance(run.error, ConfigError)
    assert f"{KEY}: is not a kubeconfig" in str(run.error)
    assert "t0ken" not in str(run.error)


def test_secret_values_are_never_quoted_in_any_problem():
    secret_values = json.dumps({"nvidiaDriverRoot": "/s3cr3t-path"})
    config = {**load_stack_config("dev"), "nebius-dra:draDriverValues": secret_values}
    run = run_program("dev", config=config, secret_keys=["nebius-dra:draDriverValues"])
    assert isinstance(run.error, ConfigError)
    assert "nvidiaDriverRoot" in str(run.error)
    assert "s3cr3t" not in str(run.error)


def test_creating_a_cluster_still_needs_the_project_and_subnet():
    config = {**load_stack_config("dev"), "nebius-dra:parentId": ""}
    run = run_program("dev", config=config)
    assert isinstance(run.error, ConfigError)
    assert "nebius-dra:parentId: is required to create the cluster" in str(run.error)


@pytest.mark.parametrize(
    ("key", "value"),
    [("protect", "true"), ("etcdClusterSize", "3"), ("nebiusProfile", "ci"), ("systemNodeCount", "3")],
)
def test_a_key_of_the_cluster_it_would_create_is_refused_in_existing_cluster_mode(key, value):
    # Accepted and dropped before (attack 37, F8): that mode creates no cluster for it to configure.
    run = existing("dev", **{f"nebius-dra:{key}": value})
    assert isinstance(run.error, ConfigError)
    assert f"nebius-dra:{key}: got " in str(run.error)
    assert "nebius-dra:existingClusterKubeconfig is set, so the stack creates no cluster" in str(run.error)
    assert "t0ken" not in str(run.error)
