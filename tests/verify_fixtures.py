"""API-shaped objects for the verifier's tests, built from the captured fixtures in tests/data/verify.

Each fixture describes one node's worth of objects; `healthy_prod_state` copies them onto as
many nodes as the prod stack expects, renaming the node the way a real cluster would differ.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import yaml

from tools.verify.checks import ClusterState
from tools.verify.expectations import Expectations, load_expectations

DATA = Path(__file__).parent / "data" / "verify"
FIXTURE_NODE = "computeinstance-e00h7qk2rm8v1t9b4x"
SYSTEM_NODE = "computeinstance-e00s9ys7m4c2kq1w8d"
PROD_GROUPS = {"h200-train": 4, "h200-burst": 1}


@functools.cache
def _parsed(name: str) -> dict[str, Any]:
    return yaml.safe_load((DATA / name).read_text())


def load(name: str) -> dict[str, Any]:
    """A fresh copy each call, so a test may change what it loads."""
    return copy.deepcopy(_parsed(name))


def items(name: str) -> list[dict[str, Any]]:
    return load(name)["items"]


def text(name: str) -> str:
    return (DATA / name).read_text()


def on_node(obj: dict[str, Any], node: str) -> dict[str, Any]:
    """The same object as it would read on another node: every mention of the node renamed."""
    return json.loads(json.dumps(obj).replace(FIXTURE_NODE, node))


def gpu_node(node: str, group: str, fixture: str = "node-gpu.yaml") -> dict[str, Any]:
    result = on_node(load(fixture), node)
    result["metadata"]["labels"]["nebius-dra/node-group"] = group
    return result


def replace_node(state: ClusterState, node: str, fixture: str) -> None:
    """The GPU node `node` of `state` as another fixture records it (same name and group)."""
    index, current = next((i, n) for i, n in enumerate(state.nodes) if n["metadata"]["name"] == node)
    state.nodes[index] = gpu_node(node, current["metadata"]["labels"]["nebius-dra/node-group"], fixture)


def plugin_pod(node: str, fixture: str = "pod-kubelet-plugin.yaml") -> dict[str, Any]:
    pod = on_node(load(fixture), node)
    pod["metadata"]["name"] = f"nvidia-dra-driver-gpu-kubelet-plugin-{node[-5:]}"
    return pod


def node_names(groups: dict[str, int]) -> dict[str, str]:
    """Node name -> group, with names shaped like Nebius compute instance IDs."""
    return {
        f"computeinstance-e00{group.split('-')[-1]}{index:05d}": group
        for group, count in groups.items()
        for index in range(count)
    }


def healthy_state(groups: dict[str, int], infiniband: bool = True) -> ClusterState:
    nodes = node_names(groups)
    dranet = load("daemonset-dranet.yaml")
    for key in (
        "currentNumberScheduled",
        "desiredNumberScheduled",
        "numberAvailable",
        "numberReady",
        "updatedNumberScheduled",
    ):
        dranet["status"][key] = len(nodes)
    slices = [on_node(load("resourceslice-gpu.yaml"), node) for node in nodes]
    if infiniband:
        slices += [on_node(load("resourceslice-dranet.yaml"), node) for node in nodes]
    return ClusterState(
        nodes=[load("node-system.yaml")] + [gpu_node(node, group) for node, group in nodes.items()],
        driver_pods=[plugin_pod(node) for node in nodes],
        device_classes=items("deviceclasses.yaml"),
        resource_slices=slices,
        dranet=dranet if infiniband else None,
    )


def healthy_prod_state() -> ClusterState:
    return healthy_state(PROD_GROUPS)


def healthy_dev_state() -> ClusterState:
    """The dev stack: one single-GPU node, no InfiniBand, no network DeviceClasses."""
    state = healthy_state({"h200": 1}, infiniband=False)
    for item in state.resource_slices:
        item["spec"]["devices"] = item["spec"]["devices"][:1]
    for node in state.nodes:
        node["metadata"]["labels"].pop("nebius.com/dranet-rdma-capable", None)
        node.get("spec", {}).pop("taints", None)
    return ClusterState(
        nodes=state.nodes,
        driver_pods=state.driver_pods,
        device_classes=[c for c in state.device_classes if "networking" not in c["metadata"]["name"]],
        resource_slices=state.resource_slices,
    )


def prod_expectations() -> Expectations:
    return load_expectations("prod")


def dev_expectations() -> Expectations:
    return load_expectations("dev")


def copied(state: ClusterState) -> ClusterState:
    return copy.deepcopy(state)


class FakeClock:
    """A monotonic clock the verifier's waits advance through `sleep`, so a time limit is reached without waiting."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
