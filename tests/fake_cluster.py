"""A cluster that answers the verifier like the API server, from the captured objects of tests/data/verify.

It records every pod and claim it is asked to create or delete, and scripts what each read of the smoke
pods returns, so the smoke and metrics tests can show what the verifier did to the cluster.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Sequence
from typing import Any

from tests.verify_fixtures import FakeClock, load, text
from tools.verify.checks import ClusterState
from tools.verify.cluster import ClusterError, ExecResult
from tools.verify.smoke import SmokeSettings

GPU_POD = "verify-gpu-k3x9q"
IB_POD = "verify-ib-network-k3x9q"
GPU_CLAIM = "verify-gpu-k3x9q-gpu-7tq2n"
IB_CLAIM = "verify-ib-network-k3x9q-network-b5c8d"
NVIDIA_SMI = ("nvidia-smi", "-L")
LS_NET = ("ls", "/sys/class/net")
LS_IB = ("ls", "/sys/class/infiniband")


def running_ib_pod() -> dict[str, Any]:
    pod = json.loads(json.dumps(load("pod-smoke-gpu-running.yaml")).replace(GPU_POD, IB_POD))
    pod["status"]["resourceClaimStatuses"] = [{"name": "network", "resourceClaimName": IB_CLAIM}]
    return pod


def slice_node_state(state: ClusterState) -> ClusterState:
    """Puts the captured slices (whose devices the captured claims name) on the fixture node."""
    state.resource_slices.extend([load("resourceslice-gpu.yaml"), load("resourceslice-dranet.yaml")])
    return state


class FakeCluster:
    """Answers like the API server from fixtures; `pods` scripts what each read of a pod returns."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.templates = {
            "gpu": load("resourceclaimtemplate-gpu.yaml"),
            "ib-network": load("resourceclaimtemplate-ib-network.yaml"),
        }
        self.claims = {GPU_CLAIM: load("resourceclaim-gpu.yaml"), IB_CLAIM: load("resourceclaim-ib-network.yaml")}
        self.pods: dict[str, list[dict[str, Any]]] = {
            GPU_POD: [load("pod-smoke-pending.yaml"), load("pod-smoke-gpu-running.yaml")],
            IB_POD: [running_ib_pod()],
        }
        self.events: list[dict[str, Any]] = []
        self.exporter_pods = [load("pod-dcgm-exporter.yaml")]
        self.metrics_pages: list[str] = [text("dcgm-metrics-dra.txt")]
        self.proxied: list[tuple[str, str, int, str]] = []
        self.outputs: dict[tuple[str, ...], Any] = {
            NVIDIA_SMI: ExecResult(text("nvidia-smi-L-claimed.txt"), "", 0),
            LS_NET: ExecResult(text("ls-sys-class-net.txt"), "", 0),
            LS_IB: ExecResult(text("ls-sys-class-infiniband.txt"), "", 0),
        }
        self.created: list[dict[str, Any]] = []
        self.deleted: list[str] = []
        self.reads: dict[str, int] = {}
        self.fail_deletes = False
        self.interrupt_on_delete = False

    def list_nodes(self):
        return self.state.nodes

    def list_pods(self, namespace):
        return self.exporter_pods if namespace == "gpu-metrics" else self.state.driver_pods

    def proxy_pod(self, namespace: str, name: str, port: int, path: str) -> str:
        """Each read of the exporter returns the next scripted page, then the last one again."""
        self.proxied.append((namespace, name, port, path))
        return self.metrics_pages[min(len(self.proxied), len(self.metrics_pages)) - 1]

    def list_device_classes(self):
        return self.state.device_classes

    def list_resource_slices(self):
        return self.state.resource_slices

    def read_daemonset(self, namespace, name):
        return self.state.dranet

    def read_claim_template(self, namespace, name):
        return self.templates.get(name)

    def read_claim(self, namespace, name):
        return self.claims.get(name)

    def pod_events(self, namespace, name):
        return self.events

    def create_pod(self, namespace: str, manifest: dict[str, Any]) -> dict[str, Any]:
        self.created.append(manifest)
        return manifest

    def read_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        script = self.pods[name]
        count = self.reads[name] = self.reads.get(name, -1) + 1
        return script[min(count, len(script) - 1)]

    def exec_in_pod(self, namespace: str, name: str, container: str, command: Sequence[str]) -> ExecResult:
        answer = self.outputs[tuple(command)]
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def _delete(self, kind: str, name: str) -> None:
        if self.interrupt_on_delete:
            os.kill(os.getpid(), signal.SIGINT)
        if self.fail_deletes:
            raise ClusterError(f"delete {kind} dra-samples/{name}: HTTP 500 Internal Server Error")
        self.deleted.append(f"{kind}/{name}")

    def delete_pod(self, namespace, name):
        self._delete("pod", name)

    def delete_claim(self, namespace, name):
        self._delete("resourceclaim", name)


def settings(timeout_s: float = 10.0) -> SmokeSettings:
    clock = FakeClock()
    return SmokeSettings(
        timeout_s=timeout_s, poll_interval_s=2.0, clock=clock, sleep=clock.sleep, name_suffix=lambda: "k3x9q"
    )
