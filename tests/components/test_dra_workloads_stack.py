"""The claim templates and sample Pods as the real dev and prod programs register them."""

from __future__ import annotations

import json

import pytest
import yaml

from components.config.claim_templates import IMAGE_DIGEST
from components.config.stack_file import load_stack_config
from components.dra_constants import BUILTIN_TEMPLATES
from tests.kubernetes_manifests import HELM_RELEASE
from tools.plan.mock_engine import ProgramRun, run_program

NAMESPACE = "kubernetes:core/v1:Namespace"
TEMPLATE = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"
POD = "kubernetes:core/v1:Pod"
WORKLOADS = "nebius-dra:workloads:DraWorkloads"
K8S_PROVIDER = "pulumi:providers:kubernetes"
NODE_GROUP = "nebius:index/mk8sV1NodeGroup:Mk8sV1NodeGroup"
DRA_DRIVER = "nebius-dra:driver:DraDriver"


def by_name(run: ProgramRun, type_token: str) -> dict:
    return {r.inputs["metadata"]["name"]: r for r in run.of_type(type_token)}


@pytest.fixture(scope="module")
def prod_with_samples() -> ProgramRun:
    run = run_program("prod", config={**load_stack_config("prod"), "nebius-dra:samplePods": "true"})
    assert run.error is None, run.error
    return run


def test_dev_has_the_single_gpu_templates_and_the_gpu_sample(dev_run):
    assert set(by_name(dev_run, TEMPLATE)) == {"gpu", "gpu-by-product"}
    assert set(by_name(dev_run, POD)) == {"gpu-workload"}


def test_prod_has_every_builtin_its_user_template_and_no_samples(prod_run):
    user = [t["name"] for t in yaml.safe_load(load_stack_config("prod")["nebius-dra:userClaimTemplates"])]
    assert set(by_name(prod_run, TEMPLATE)) == {*BUILTIN_TEMPLATES, *user}
    assert by_name(prod_run, POD) == {}


def test_multi_gpu_asks_for_every_gpu_of_an_eight_gpu_node(prod_run):
    request = by_name(prod_run, TEMPLATE)["multi-gpu"].inputs["spec"]["spec"]["devices"]["requests"][0]
    assert request["exactly"] == {"deviceClassName": "gpu.nvidia.com", "count": 8}


def test_every_claim_is_wired_from_container_to_pod_to_template(dev_run, prod_with_samples):
    for run in (dev_run, prod_with_samples):
        templates = by_name(run, TEMPLATE)
        pods = by_name(run, POD)
        assert pods
        for pod_name, pod in pods.items():
            pod_claims = {
                claim["name"]: claim["resourceClaimTemplateName"] for claim in pod.inputs["spec"]["resourceClaims"]
            }
            for container in pod.inputs["spec"]["containers"]:
                used = [claim["name"] for claim in container["resources"]["claims"]]
                assert used and set(used) <= set(pod_claims), f"{pod_name}/{container['name']}: {used} vs {pod_claims}"
            for template_name in pod_claims.values():
                assert template_name in templates, f"{pod_name} names {template_name}, which the stack does not create"
                assert templates[template_name].inputs["metadata"]["namespace"] == pod.inputs["metadata"]["namespace"]


def test_rdma_sample_claims_an_infiniband_nic_and_tolerates_the_gpu_taint(prod_with_samples):
    pods = by_name(prod_with_samples, POD)
    assert set(pods) == {"gpu-workload", "rdma-workload"}
    assert pods["rdma-workload"].inputs["spec"]["resourceClaims"] == [
        {"name": "network", "resourceClaimTemplateName": "ib-network"}
    ]
    assert pods["gpu-workload"].inputs["spec"]["containers"][0]["command"] == [
        "sh",
        "-c",
        "nvidia-smi && sleep infinity",
    ]
    for pod in pods.values():
        assert pod.inputs["spec"]["tolerations"] == [
            {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
        ]
        assert pod.inputs["spec"]["restartPolicy"] == "Never"


def test_untainted_dev_pods_carry_no_tolerations(dev_run):
    assert "tolerations" not in by_name(dev_run, POD)["gpu-workload"].inputs["spec"]


def test_sample_images_are_pinned(dev_run, prod_with_samples):
    for run in (dev_run, prod_with_samples):
        for pod in run.of_type(POD):
            for container in pod.inputs["spec"]["containers"]:
                image = container["image"]
                tag = image.rsplit("/", 1)[-1].partition(":")[2]
                assert IMAGE_DIGEST.search(image) or (tag and tag != "latest"), image


def test_pods_wait_for_their_template_the_gpu_nodes_and_the_driver(prod_with_samples):
    templates = by_name(prod_with_samples, TEMPLATE)
    for pod in prod_with_samples.of_type(POD):
        (claim,) = pod.inputs["spec"]["resourceClaims"]
        assert templates[claim["resourceClaimTemplateName"]].urn in pod.dependencies
        gpu_groups = {
            r.urn
            for r in prod_with_samples.of_type(NODE_GROUP)
            if r.inputs["template"]["resources"]["platform"].startswith("gpu-")
        }
        assert len(gpu_groups) == 2 and gpu_groups <= set(pod.dependencies)
        (driver_component,) = prod_with_samples.of_type(DRA_DRIVER)
        (driver,) = [r for r in prod_with_samples.of_type(HELM_RELEASE) if r.parent == driver_component.urn]
        assert driver.urn in pod.dependencies


def test_everything_lives_in_the_claim_namespace_under_the_cluster_provider(stack_runs):
    for run in stack_runs.values():
        (workloads,) = run.of_type(WORKLOADS)
        (namespace,) = [r for r in run.of_type(NAMESPACE) if r.parent == workloads.urn]
        (provider,) = run.of_type(K8S_PROVIDER)
        name = namespace.inputs["metadata"]["name"]
        assert name == load_stack_config(run.stack)["nebius-dra:claimNamespace"] == "dra-samples"
        for resource in [*run.of_type(TEMPLATE), *run.of_type(POD), namespace]:
            assert resource.provider.startswith(f"{provider.urn}::"), resource.provider
            if resource is not namespace:
                assert resource.inputs["metadata"]["namespace"] == name
                assert namespace.urn in resource.dependencies


def test_namespace_is_configurable(stack_config):
    run = run_program("dev", config={**stack_config("dev"), "nebius-dra:claimNamespace": "team-a"})
    assert run.error is None
    assert {r.inputs["metadata"]["namespace"] for r in [*run.of_type(TEMPLATE), *run.of_type(POD)]} == {"team-a"}


def test_nothing_is_created_when_everything_is_off(stack_config):
    config = {
        **stack_config("dev"),
        "nebius-dra:builtinClaimTemplates": json.dumps([]),
        "nebius-dra:samplePods": "false",
    }
    run = run_program("dev", config=config)
    assert run.error is None
    (workloads,) = run.of_type(WORKLOADS)
    assert not [r for r in run.resources if r.parent == workloads.urn]
