"""prod on real control planes: four InfiniBand H200 nodes, one burst node, three system nodes.

Each test runs once per scenario (dra_scenarios.py) the `scenarios` marker names: `prod` (its own stack,
kubernetesVersion 1.34) on Kubernetes 1.34, `prod-135` and `prod-136` (prod with kubernetesVersion "1.35" and
"1.36", nothing else changed) on 1.35 and 1.36. On each, every object of the plan must be stored as sent,
every claim template allocated on a group that serves it (gpu-nic-aligned on one PCIe root), and
tools.verify must pass (reading prod's stack file, whose expectations are each scenario's own).

Also the deliberately broken templates, applied directly (bypassing the stack's own config checks):
a DeviceClass name that does not exist, a CEL type error, and constraints no device pair can meet.

Run from the repository root: venv/bin/python -m pytest -q e2e/dra
"""

from __future__ import annotations

import json

import pytest
from dra_checks import (
    check_kubelet_versions,
    check_objects_accepted,
    check_plugin_pods,
    check_template_details,
    check_templates,
    check_unfit_request,
    run_verify,
    verify_stack,
)
from dra_kube import RESOURCE_API, api_message
from dra_scenarios import SCENARIOS
from dra_stack import ensure_namespace, unschedulable

from components.config import ConfigError, parse_stack_config
from components.config.stack_file import program_config

pytestmark = pytest.mark.scenarios("prod", "prod-135", "prod-136")
BROKEN_NAMESPACE = "dra-e2e-broken"
CEL_TYPE_ERROR = 'device.driver + 1 == "gpu.nvidia.com"'  # string + int


def test_api_server_accepts_every_object_of_the_plan(deployed):
    check_objects_accepted(deployed)


def test_kubelet_plugin_lands_on_every_gpu_node(kube, deployed):
    check_plugin_pods(kube, deployed)


def test_stand_in_nodes_report_the_kubelet_version_of_the_control_plane(kube, cp, deployed):
    check_kubelet_versions(kube, deployed, cp.kube_version)


def test_no_sample_pods(deployed, samples):
    assert samples == {}, "prod sets samplePods: false, yet the plan has sample pods"


def test_every_claim_template_is_allocated_on_a_group_that_serves_it(deployed, probes):
    check_templates(deployed, probes)
    check_template_details(deployed, probes)


def test_gpu_nic_aligned_pairs_a_gpu_and_a_nic_on_one_pcie_root(deployed, probes, report):
    result = probes["gpu-nic-aligned"]
    assert result.problem is None, result.problem
    pair = {
        r["request"]: f"{r['device']} on {d['attributes']['resource.kubernetes.io/pcieRoot']['string']}"
        for r, d in zip(result.results, result.devices, strict=True)
    }
    report.scenario(deployed.scenario.name)["gpu-nic-aligned"] = pair


def test_whole_node_template_takes_every_gpu_and_infiniband_nic(probes):
    result = probes["h200-full-node"]
    assert result.problem is None, result.problem
    by_request: dict[str, list[str]] = {}
    for r in result.results:
        by_request.setdefault(r["request"], []).append(r["device"])
    assert len(by_request["gpus"]) == 8, by_request
    assert len(by_request["nics"]) == 8 and "pci-0000-00-05-0" not in by_request["nics"], by_request


def test_more_gpus_than_any_node_has_stays_unschedulable(kube, deployed, probes, report):
    refusal = check_unfit_request(kube, deployed)
    entry = report.scenario(deployed.scenario.name)
    entry["unschedulable"] = {"message": refusal.message, "seconds_to_verdict": refusal.seconds}


def test_verifier_passes(cp, deployed, probes, tmp_path, report):
    status, result, output = run_verify(verify_stack(deployed), cp.kubeconfig, tmp_path / "verify.json")
    assert status == 0 and result.get("passed") is True, f"tools.verify exited {status}:\n{output}"
    ran = {c["name"]: c["status"] for c in result["checks"]}
    for step in (
        "gpu-nodes",
        "driver-pods",
        "gpu-slices",
        "gpu-taints",
        "legacy-device-plugin",
        "dranet",
        "network-deviceclasses",
        "dranet-slices",
    ):
        assert ran.get(step) == "pass", f"{step}: {ran.get(step)}\n{output}"
    report.scenario(deployed.scenario.name)["verify"] = ran


# ------------------------------------------------------------------------------ broken templates
def template(name: str, requests: list[dict], constraints: list[dict] | None = None) -> dict:
    devices: dict = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return {
        "apiVersion": RESOURCE_API,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": BROKEN_NAMESPACE},
        "spec": {"spec": {"devices": devices}},
    }


def exactly(name: str, device_class: str, *selectors: str) -> dict:
    body: dict = {"deviceClassName": device_class, "count": 1}
    if selectors:
        body["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    return {"name": name, "exactly": body}


@pytest.fixture(scope="module")
def broken_namespace(kube, deployed, probes):
    ensure_namespace(kube, BROKEN_NAMESPACE)
    return BROKEN_NAMESPACE


def test_cel_type_error_is_refused_by_the_api_server(kube, deployed, broken_namespace, report):
    bad = template("cel-type-error", [exactly("gpu", "gpu.nvidia.com", CEL_TYPE_ERROR)])
    with pytest.raises(Exception) as refused:
        kube.apply(bad)
    message = api_message(refused.value)
    assert "422" in message and "cel.expression" in message, message
    assert "no matching overload" in message, message
    report.scenario(deployed.scenario.name)["refused: CEL type error"] = message


def test_cel_type_error_is_refused_by_the_stack_config_too(scenario_name):
    """The stack's own checker (cel-expr-python) refuses what the API server refuses, before anything is created."""
    scenario = SCENARIOS[scenario_name]
    raw = program_config(scenario.raw_config())
    raw["userClaimTemplates"] = json.dumps(
        [{"name": "cel-type-error", "requests": [exactly("gpu", "gpu.nvidia.com", CEL_TYPE_ERROR)]}]
    )
    with pytest.raises(ConfigError) as refused:
        parse_stack_config(raw, scenario.name)
    assert "no matching overload" in str(refused.value), str(refused.value)


def never_allocated(kube, deployed, namespace, report, claim_template: dict, reason: str, outcome: str) -> None:
    """Applies `claim_template`, sees a pod that claims it stay unplaced for `reason`, and reports it as `outcome`."""
    kube.apply(claim_template)
    refusal = unschedulable(kube, deployed, claim_template["metadata"]["name"], namespace)
    assert reason in refusal.message, refusal.story
    report.scenario(deployed.scenario.name)[f"never allocated: {outcome}"] = refusal.message


def test_unknown_device_class_is_never_allocated(kube, deployed, broken_namespace, report):
    wrong_class = template("wrong-class", [exactly("gpu", "gpu.nvidia.co")])
    never_allocated(kube, deployed, broken_namespace, report, wrong_class, "gpu.nvidia.co", "unknown DeviceClass")


def test_impossible_match_attribute_is_never_allocated(kube, deployed, broken_namespace, report):
    # Two GPUs of one node that share a UUID: no two GPUs do.
    same_uuid = template(
        "same-uuid",
        [exactly("a", "gpu.nvidia.com"), exactly("b", "gpu.nvidia.com")],
        [{"requests": ["a", "b"], "matchAttribute": "gpu.nvidia.com/uuid"}],
    )
    outcome = "matchAttribute gpu.nvidia.com/uuid"
    never_allocated(kube, deployed, broken_namespace, report, same_uuid, "cannot allocate all claims", outcome)


def test_match_attribute_of_one_driver_over_another_drivers_device_is_never_allocated(
    kube, deployed, broken_namespace, report
):
    # A NIC has no gpu.nvidia.com/productName, so no GPU/NIC pair can match on it.
    cross_driver = template(
        "cross-driver",
        [exactly("gpu", "gpu.nvidia.com"), exactly("nic", "ib.networking.nebius.ai")],
        [{"requests": ["gpu", "nic"], "matchAttribute": "gpu.nvidia.com/productName"}],
    )
    outcome = "matchAttribute across drivers"
    never_allocated(kube, deployed, broken_namespace, report, cross_driver, "cannot allocate all claims", outcome)
