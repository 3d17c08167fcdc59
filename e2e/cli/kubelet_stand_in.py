"""What a kubelet would write, for pods that the real scheduler placed on the e2e's stand-in nodes.

No kubelet or container runtime runs in the e2e, yet `pulumi up` of Helm releases waits until their
Deployments and DaemonSets are ready (Helm's wait), and `pulumi destroy` until their pods are gone.
The stand-in does only what a kubelet does through the API server, and nothing a chart or a
controller does:
- a pod bound to a node gets the status of running, ready containers (a Job's pod: Succeeded);
- a bound pod being deleted (a deletionTimestamp) first gets a terminal phase, its containers stopped
  by SIGTERM, then is removed with a zero grace period, as a kubelet does: its status manager removes a
  pod only once its phase is terminal (`canBeDeleted`, pkg/kubelet/status/status_manager.go, k8s.io/kubernetes
  v1.34.12), and the claim controller frees a scheduled pod's ResourceClaims only then (`isPodDone`,
  pkg/controller/resourceclaim/controller.go). Removed while Running, a pod that `pulumi destroy` deletes in
  the foreground waits on its generated claim, which waits on the pod: neither ever goes.
Every pod it touched is recorded, so the test can say which objects were not the real components'.
The ReplicaSets, DaemonSets and Jobs that own the pods are the real controllers' (kube-controller-manager).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping
from typing import Any

from dra_fakes import running_status
from dra_kube import Kube
from kubernetes.dynamic.exceptions import NotFoundError

POLL_S = 0.5


def terminated_status(pod: Mapping[str, Any], exit_code: int) -> dict[str, Any]:
    """The pod as a kubelet reports it once every container exited with `exit_code`: Succeeded for 0, else
    Failed (`getPhase` of a terminal pod, pkg/kubelet/kubelet_pods.go, k8s.io/kubernetes v1.34.12)."""
    status = running_status(pod)["status"]
    status["phase"] = "Succeeded" if exit_code == 0 else "Failed"
    state = {"terminated": {"exitCode": exit_code, "reason": "Completed" if exit_code == 0 else "Error"}}
    for container in status["containerStatuses"]:
        container.update(ready=False, started=False, state=state)
    status["conditions"] = [c for c in status["conditions"] if c["type"] in ("Initialized", "PodScheduled")]
    return {"status": status}


def succeeded_status(pod: Mapping[str, Any]) -> dict[str, Any]:
    """A Job's pod after every container exited 0."""
    return terminated_status(pod, 0)


# A deleted pod's containers stopped by SIGTERM: 128 + 15.
SIGTERM_EXIT = 143
TERMINAL = frozenset({"Succeeded", "Failed"})


def owned_by_job(pod: Mapping[str, Any]) -> bool:
    return any(ref.get("kind") == "Job" for ref in pod["metadata"].get("ownerReferences") or [])


class KubeletStandIn:
    """`with KubeletStandIn(kubeconfig) as kubelet:` writes pod status until the block ends."""

    def __init__(self, kubeconfig: str) -> None:
        self.kube = Kube(kubeconfig)
        self.started: set[str] = set()  # namespace/name of pods it marked running (or succeeded)
        self.removed: set[str] = set()  # namespace/name of pods it removed after their deletion
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="kubelet-stand-in", daemon=True)

    def __enter__(self) -> KubeletStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.kube.close()

    def _loop(self) -> None:
        while not self._stop.wait(POLL_S):
            try:
                self.sync()
            except Exception as error:  # a transient API error: keep going, and keep it for the report
                self.errors.append(str(error)[:300])

    def sync(self) -> None:
        for pod in self.kube.list("v1", "Pod"):
            metadata, spec = pod["metadata"], pod.get("spec") or {}
            key = f"{metadata['namespace']}/{metadata['name']}"
            if not spec.get("nodeName"):
                continue
            if metadata.get("deletionTimestamp"):
                if (pod.get("status") or {}).get("phase") not in TERMINAL:
                    with contextlib.suppress(NotFoundError):
                        status = terminated_status(pod, SIGTERM_EXIT)
                        self.kube.patch(
                            "v1", "Pod", metadata["name"], status, namespace=metadata["namespace"], status=True
                        )
                self.kube.delete("v1", "Pod", metadata["name"], metadata["namespace"], force=True)
                self.removed.add(key)
            elif (pod.get("status") or {}).get("phase", "Pending") == "Pending":
                status = succeeded_status(pod) if owned_by_job(pod) else running_status(pod)
                # Deleted between the list and the patch (a test, Helm or a controller removed it): nothing to start.
                with contextlib.suppress(NotFoundError):
                    self.kube.patch("v1", "Pod", metadata["name"], status, namespace=metadata["namespace"], status=True)
                    self.started.add(key)
