"""Existing-cluster mode: the Kubernetes layer onto a cluster the stack does not create, from a secret kubeconfig."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from pulumi.runtime import rpc

from components.config import ConfigError
from components.config.dependent import CLUSTER_ONLY_KEYS
from components.config.stack_file import load_stack_config
from policies.dra_guardrails import PlannedResource, check_resources
from policies.dra_guardrails.planned import EXISTING_GPU_GROUP_TYPE
from tests.existing_clusters import KEY, existing
from tools.cost import __main__ as cost_cli
from tools.plan.mock_engine import run_program
from tools.plan.stack_source import read_stack_source
from tools.verify import expectations


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


def secret_kubeconfig_stack_file(tmp_path: Path) -> Path:
    """dev in existing-cluster mode as `pulumi config set --secret` writes it: the kubeconfig as a `secure:` value."""
    document = yaml.safe_load(Path("Pulumi.dev.yaml").read_text())
    # Existing-cluster mode refuses the keys of a cluster it creates none of: left out, at their defaults.
    document["config"] = {k: v for k, v in document["config"].items() if k.partition(":")[2] not in CLUSTER_ONLY_KEYS}
    document["config"].update(
        {KEY: {"secure": "v1:AAAAbbbbccccdddd"}, "nebius-dra:parentId": "", "nebius-dra:subnetId": ""}
    )
    path = tmp_path / "Pulumi.existing.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def test_the_cost_and_the_verifier_read_a_stack_files_secret_as_a_secret(tmp_path, monkeypatch, capsys):
    """The stack file reader cannot decrypt a `secure:` value, but it is a secret: the tools that parse a stack
    file (`make cost`, `make verify`'s expectations) never refuse it as "set in plain text"."""
    stack_file = secret_kubeconfig_stack_file(tmp_path)
    assert cost_cli.main(["--stack-file", str(stack_file), "--format", "json"]) == 0, capsys.readouterr().err
    read = read_stack_source("existing", stack_file)
    monkeypatch.setattr(expectations, "read_stack_file", lambda stack: read)
    assert expectations.load_expectations("existing").stack == "existing"
