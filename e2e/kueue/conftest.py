"""Fixtures of the Kueue e2e: a real control plane, the stack's queues on it, the real Kueue controller.

The stack is dev with one GPU group of two 2-GPU stand-in nodes (slices from the captured H200) and
three teams: `solo` (1 GPU, no cohort), `lender` and `borrower` (1 GPU each, cohort `shared`). The
objects are the stack's own (components/values/kueue.py and claims.py), applied with server-side apply.
Pod status is written by the test, as a kubelet would, so it decides when a Job's pod runs and finishes.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]
for path in (str(PROJECT), str(PROJECT / "e2e" / "dra"), str(PROJECT / "e2e" / "cli"), str(HERE)):
    if path not in sys.path:
        sys.path.insert(0, path)

from dra_engines import control_plane_mod  # noqa: E402
from dra_fakes import create_stack_nodes, device_classes  # noqa: E402
from dra_kube import Kube  # noqa: E402
from kueue_build import ensure_kueue  # noqa: E402
from kueue_controller import KueueController  # noqa: E402

from components.config import parse_stack_config  # noqa: E402
from components.config.stack_file import load_stack_config  # noqa: E402
from components.labels import system_node_labels  # noqa: E402
from components.model import StackConfig  # noqa: E402
from components.values.kueue import kueue_values, queue_objects, team_claim_templates  # noqa: E402

STACK = "kueue"
GROUP = "h200"
STAND_IN_PRESET = "2gpu-32vcpu-400gb"
TEAMS = [
    {"name": "solo", "quotas": [{"group": GROUP, "gpus": 1}]},
    {"name": "lender", "cohort": "shared", "quotas": [{"group": GROUP, "gpus": 1}]},
    {"name": "borrower", "cohort": "shared", "quotas": [{"group": GROUP, "gpus": 1}]},
]


def queued_stack() -> StackConfig:
    raw = {key.split(":", 1)[1]: value for key, value in load_stack_config("dev").items()}
    groups = json.loads(raw["gpuNodeGroups"])
    groups[0].update(name=GROUP, preset="8gpu-128vcpu-1600gb", fixedNodeCount=2)
    raw["gpuNodeGroups"] = json.dumps(groups)
    raw["multiGpuCount"] = "2"
    raw["queues"] = json.dumps({"teams": TEAMS})
    stack = parse_stack_config(raw, STACK)
    # Nebius offers H200 nodes of 1 or 8 GPUs only (components/resource_presets.json), so the config check refuses a
    # 2-GPU preset; the stand-in nodes are 2-GPU slices, to keep the quotas small, and take their preset after it.
    (group,) = stack.gpu_node_groups
    two_gpus = replace(group, settings=group.settings.model_copy(update={"preset": STAND_IN_PRESET}))
    return replace(stack, gpu_node_groups=(two_gpus,))


@pytest.fixture(scope="module")
def stack() -> StackConfig:
    return queued_stack()


@pytest.fixture(scope="module")
def kube(stack):
    binary, module = ensure_kueue()
    with control_plane_mod.ControlPlane(workload_controllers=True, quiet=True) as plane:
        kube = Kube(str(plane.kubeconfig))
        for device_class in device_classes():
            kube.apply(device_class)
        create_stack_nodes(kube, STACK, stack, {})
        values = kueue_values(stack.queues, system_node_labels())
        with KueueController(binary, module, plane.kubeconfig, values, kube) as kueue:
            kube.kueue = kueue  # type: ignore[attr-defined]
            kube.kubeconfig_path = plane.kubeconfig  # type: ignore[attr-defined]
            for team in stack.queues.teams:
                kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": team.namespace}})
                for name, spec in team_claim_templates(stack.queues, stack.claims).items():
                    kube.apply(
                        {
                            "apiVersion": "resource.k8s.io/v1",
                            "kind": "ResourceClaimTemplate",
                            "metadata": {"name": name, "namespace": team.namespace},
                            "spec": spec,
                        }
                    )
            for manifest in queue_objects(stack.queues, stack.gpu_node_groups):
                kube.apply(manifest)
            yield kube
        kube.close()
