"""The real program for dev and prod, from their stack files: cluster, node groups, fabric, access."""

from __future__ import annotations

import base64

import pytest
import yaml

from components.config.stack_file import load_stack_config
from components.dra_constants import GPU_PRESENT_LABEL, KUBELET_PLUGIN_LABEL, TAINT_EFFECTS
from components.model import Taint
from components.values.kubeconfig import EXEC_API_VERSION, TOKEN_ARGS
from components.values.node_groups import nebius_taints
from tools.plan.mock_engine import MOCK_CA_PEM, ProgramRun, run_program

CLUSTER = "nebius:index/mk8sV1Cluster:Mk8sV1Cluster"
NODE_GROUP = "nebius:index/mk8sV1NodeGroup:Mk8sV1NodeGroup"
GPU_CLUSTER = "nebius:index/computeV1GpuCluster:ComputeV1GpuCluster"
K8S_PROVIDER = "pulumi:providers:kubernetes"


def gpu_groups(run: ProgramRun):
    return [r for r in run.of_type(NODE_GROUP) if r.inputs["template"]["resources"]["platform"].startswith("gpu-")]


def stack_groups(stack: str) -> dict[str, dict]:
    return {g["name"]: g for g in yaml.safe_load(load_stack_config(stack)["nebius-dra:gpuNodeGroups"])}


def test_cluster_and_every_node_group_run_the_configured_version(stack_runs):
    for stack, run in stack_runs.items():
        configured = load_stack_config(stack)["nebius-dra:kubernetesVersion"]
        (cluster,) = run.of_type(CLUSTER)
        assert cluster.inputs["controlPlane"]["version"] == configured == "1.34"
        groups = run.of_type(NODE_GROUP)
        assert groups and all(group.inputs["version"] == configured for group in groups)


def test_a_node_build_suffix_goes_to_the_node_groups_and_the_control_plane_takes_major_minor(stack_config):
    """Mk8sV1ClusterControlPlaneArgs.version takes <major>.<minor> only; node groups take -nebius-node.N too."""
    run = run_program("prod", config={**stack_config("prod"), "nebius-dra:kubernetesVersion": "1.34-nebius-node.3"})
    assert run.error is None, run.error
    (cluster,) = run.of_type(CLUSTER)
    assert cluster.inputs["controlPlane"]["version"] == "1.34"
    groups = run.of_type(NODE_GROUP)
    assert len(groups) == 3 and all(group.inputs["version"] == "1.34-nebius-node.3" for group in groups)
    assert all(cluster.urn in group.dependencies for group in groups)


def test_prod_has_three_etcd_members_and_dev_one(dev_run, prod_run):
    assert dev_run.of_type(CLUSTER)[0].inputs["controlPlane"]["etcdClusterSize"] == 1
    assert prod_run.of_type(CLUSTER)[0].inputs["controlPlane"]["etcdClusterSize"] == 3


def test_every_gpu_group_has_dra_and_preset_exactly_when_preinstalled(stack_runs):
    for stack, run in stack_runs.items():
        configured = stack_groups(stack)
        groups = gpu_groups(run)
        assert len(groups) == len(configured)
        for group in groups:
            short = group.inputs["name"].removeprefix(f"dra-{stack}-")
            settings = group.inputs["template"]["gpuSettings"]
            assert settings["dra"] is True
            assert settings.get("driversPreset") == configured[short].get("driversPreset")


def test_gpu_nodes_carry_the_kubelet_plugin_labels(stack_runs):
    for run in stack_runs.values():
        for group in gpu_groups(run):
            labels = group.inputs["template"]["metadata"]["labels"]
            assert labels[GPU_PRESENT_LABEL] == "true"
            assert labels[KUBELET_PLUGIN_LABEL] == "true"


def test_system_group_is_cpu_without_gpu_settings(stack_runs):
    for run in stack_runs.values():
        (system,) = [r for r in run.of_type(NODE_GROUP) if r not in gpu_groups(run)]
        assert system.inputs["template"]["resources"]["platform"].startswith("cpu-")
        assert "gpuSettings" not in system.inputs["template"]


def test_dev_is_one_node_one_group_without_infiniband(dev_run):
    (group,) = gpu_groups(dev_run)
    assert group.inputs["fixedNodeCount"] == 1
    assert "gpuCluster" not in group.inputs["template"]
    assert dev_run.of_type(GPU_CLUSTER) == []


def test_prod_infiniband_groups_join_the_one_gpu_cluster_and_the_burst_group_stays_off_it(prod_run):
    (fabric,) = prod_run.of_type(GPU_CLUSTER)
    assert fabric.inputs["infinibandFabric"] == "fabric-3"
    groups = {group.inputs["name"].rsplit("-", 1)[-1]: group for group in gpu_groups(prod_run)}
    assert groups["train"].inputs["template"]["gpuCluster"]["id"] == f"{fabric.name}-id"
    assert fabric.urn in groups["train"].dependencies
    assert "gpuCluster" not in groups["burst"].inputs["template"]


def test_prod_has_an_autoscaled_group_that_never_scales_to_zero(prod_run):
    autoscaled = [g for g in gpu_groups(prod_run) if "autoscaling" in g.inputs]
    assert autoscaled
    for group in autoscaled:
        assert group.inputs["autoscaling"]["minNodeCount"] >= 1
        assert "fixedNodeCount" not in group.inputs


def test_prod_protects_cluster_fabric_and_gpu_groups(prod_run, dev_run):
    protected = [*prod_run.of_type(CLUSTER), *prod_run.of_type(GPU_CLUSTER), *gpu_groups(prod_run)]
    assert protected and all(r.protect for r in protected)
    assert not any(r.protect for r in dev_run.resources)


def test_taints_reach_the_node_template_with_the_nebius_effect_enum(prod_run):
    """Nebius takes NO_SCHEDULE (Mk8sV1NodeGroupTemplateTaintArgs.effect); tolerations keep Kubernetes' NoSchedule."""
    for group in gpu_groups(prod_run):
        assert group.inputs["template"]["taints"] == [
            {"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}
        ]


@pytest.mark.parametrize("effect", TAINT_EFFECTS)
def test_every_kubernetes_effect_maps_to_the_nebius_enum(effect):
    (taint,) = nebius_taints([Taint("k", "v", effect)]) or []
    assert (
        taint.effect
        == {"NoSchedule": "NO_SCHEDULE", "PreferNoSchedule": "PREFER_NO_SCHEDULE", "NoExecute": "NO_EXECUTE"}[effect]
    )


def test_an_unknown_effect_is_refused_with_its_name():
    with pytest.raises(ValueError, match="'Sometimes'"):
        nebius_taints([Taint("k", "v", "Sometimes")])
    assert nebius_taints([]) is None


def test_kubeconfig_is_a_secret_output_with_exec_plugin_and_ca(stack_runs):
    for _stack, run in stack_runs.items():
        assert "kubeconfig" in run.secret_outputs
        config = yaml.safe_load(run.outputs["kubeconfig"])
        (cluster,) = config["clusters"]
        assert cluster["cluster"]["server"].startswith("https://")
        assert base64.b64decode(cluster["cluster"]["certificate-authority-data"]).decode() == MOCK_CA_PEM
        (user,) = config["users"]
        exec_plugin = user["user"]["exec"]
        assert exec_plugin["command"] == "nebius"
        assert exec_plugin["apiVersion"] == EXEC_API_VERSION
        assert exec_plugin["args"][: len(TOKEN_ARGS)] == list(TOKEN_ARGS)
        assert exec_plugin["interactiveMode"] == "Never"
        assert config["current-context"] == config["contexts"][0]["name"]


def test_kubernetes_provider_is_keyed_by_cluster_id_and_gets_a_secret_kubeconfig(stack_runs):
    for run in stack_runs.values():
        (provider,) = run.of_type(K8S_PROVIDER)
        (cluster,) = run.of_type(CLUSTER)
        assert provider.inputs["clusterIdentifier"] == f"{cluster.name}-id"
        assert "kubeconfig" in provider.property_dependencies
