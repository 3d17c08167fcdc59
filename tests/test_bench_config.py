"""The benchmark's generated fleets are stacks the program accepts, so `make bench` measures real plans."""

from __future__ import annotations

from tools.bench.fleets import generated_config
from tools.plan.mock_engine import run_program


def test_generated_fleet_is_planned_with_every_group_and_template():
    run = run_program("dev", config=generated_config(3, 4))
    assert run.error is None
    node_groups = run.of_type("nebius:index/mk8sV1NodeGroup:Mk8sV1NodeGroup")
    templates = [
        r.inputs["metadata"]["name"] for r in run.of_type("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")
    ]
    assert len(node_groups) == 3 + 1
    assert {f"user-{index:03d}" for index in range(4)} <= set(templates)
