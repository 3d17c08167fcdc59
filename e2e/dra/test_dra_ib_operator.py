"""prod in GPU Operator mode on a real Kubernetes 1.34 control plane: no driversPreset, draDriverRoot set, sample pods on.

The stack file has no such stack, so the config is prod's with those edits (dra_scenarios.ib_operator),
planned by the same program in a subprocess. `tools.verify` reads a stack file, so it is not run here
(it runs for dev and prod).

Run from the repository root: venv/bin/python -m pytest -q e2e/dra
"""

from __future__ import annotations

import pytest
from dra_checks import (
    check_objects_accepted,
    check_plugin_pods,
    check_sample_pods,
    check_template_details,
    check_templates,
)

from components.dra_constants import DRIVER_MODE_LABEL, OPERATOR_DRIVER_ROOT

pytestmark = pytest.mark.scenarios("ib-operator")


def test_api_server_accepts_every_object_of_the_plan(deployed):
    check_objects_accepted(deployed)


def test_operator_mode_nodes_and_driver_root(kube, deployed):
    for node in deployed.gpu_nodes():
        labels = kube.get("v1", "Node", node)["metadata"]["labels"]
        assert labels[DRIVER_MODE_LABEL] == "operator", labels
    driver = next(r for r in deployed.helm if r.namespace == deployed.config.driver.namespace)
    assert driver.values["nvidiaDriverRoot"] == OPERATOR_DRIVER_ROOT, driver.values
    charts = {r.chart for r in deployed.helm}
    assert {"gpu-operator", "network-operator"} <= charts, f"releases planned: {sorted(charts)}"


def test_kubelet_plugin_lands_on_every_gpu_node(kube, deployed):
    check_plugin_pods(kube, deployed)


def test_sample_pods_run_where_the_stack_means_them(deployed, samples):
    check_sample_pods(deployed, samples)


def test_every_claim_template_is_allocated_on_a_group_that_serves_it(deployed, probes):
    check_templates(deployed, probes)
    check_template_details(deployed, probes)
