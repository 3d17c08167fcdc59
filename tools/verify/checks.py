"""The read-only checks: pure functions from API objects and the stack's expectations to findings.

Each check mirrors one of the DRA guide's manual steps (`kubectl get pods`, `kubectl get
deviceclass`, the `jq` over ResourceSlices, the `dranet` DaemonSet) and says, for every
problem, what it expected, what it found and the most likely cause, so the engineer reading
the output knows where to look next without re-running the commands by hand.
"""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.dra_constants import (
    BOOT_DISK_ERROR_CONDITION,
    GPU_CLASS,
    GPU_DRIVER,
    GPU_ERROR_CONDITION,
    KUBELET_PLUGIN_LABEL,
    MAINTENANCE_CONDITION,
    NETWORK_CLASSES,
    NODE_GROUP_LABEL,
)
from tools.verify.cluster import (
    ClusterUnreachableError,
    CredentialCommandError,
    CredentialRefusedError,
    UnusableAnswerError,
)
from tools.verify.expectations import Expectations, GroupExpectation
from tools.verify.objects import (
    attribute,
    condition,
    condition_text,
    condition_true,
    devices_on_node,
    labels_of,
    name_of,
    node_taints,
    pod_ready,
    pod_state,
    waiting_reasons,
)

NETWORK_DRIVER = "dra.net"
DRANET_NAMESPACE = "kube-system"
DRANET_DAEMONSET = "dranet"
DRANET_NODE_LABEL = "nebius.com/dranet-rdma-capable"
LEGACY_GPU_RESOURCE = "nvidia.com/gpu"


@dataclass(frozen=True)
class Discrepancy:
    """Where the cluster differs from what the stack promises: on what, what was expected, what was found, and why."""

    subject: str
    expected: str
    found: str
    likely_cause: str


@dataclass(frozen=True)
class Outcome:
    """What one check concluded: passed when it has no findings; `unreachable` when the cluster could not be asked
    (the later steps are skipped), `unusable` when its answers could not be judged (the run goes on); both exit 2.

    `warnings` are findings that do not fail the check (a maintenance scheduled on a node): the step
    then ends as WARN, which the exit status counts as a pass.
    """

    summary: str
    findings: tuple[Discrepancy, ...] = ()
    unreachable: bool = False
    unusable: bool = False
    warnings: tuple[Discrepancy, ...] = ()

    @property
    def passed(self) -> bool:
        return not self.findings


def outcome(findings: Sequence[Discrepancy], summary_when_passed: str, summary_when_failed: str) -> Outcome:
    return Outcome(summary_when_failed if findings else summary_when_passed, tuple(findings))


# The errors after which the cluster cannot be asked at all (the later steps are skipped, exit 2), the first that the
# error is an instance of: (summary, what was expected, the likely cause).
_UNREACHABLE: tuple[tuple[type[Exception], tuple[str, str, str]], ...] = (
    (
        CredentialRefusedError,
        (
            "the API server refused the kubeconfig's credential",
            "the API server accepting the kubeconfig's credential",
            "nothing could be asked with this credential: fix what the message names, then run the verification again",
        ),
    ),
    (
        CredentialCommandError,
        (
            "the kubeconfig's credential command failed",
            "a credential from the kubeconfig's exec command within --exec-plugin-timeout",
            "no request was sent, so nothing is known about the cluster: run the command by hand (a login it waits "
            "for, a profile it lacks), then run the verification again",
        ),
    ),
    (
        ClusterUnreachableError,
        (
            "the cluster could not be reached",
            "an answer within the time limit",
            "the cluster was not asked, so nothing is known about it: fix what the message names, then run the "
            "verification again",
        ),
    ),
)


def api_failure(error: Exception) -> Outcome:
    """A step the Kubernetes API cut short: the error already names the call and the likely fix."""
    if isinstance(error, UnusableAnswerError):
        return _unusable(str(error))
    for kind, (summary, expected, likely_cause) in _UNREACHABLE:
        if isinstance(error, kind):
            subject = "Kubernetes API"
            return Outcome(summary, (Discrepancy(subject, expected, str(error), likely_cause),), unreachable=True)
    return Outcome(
        "the Kubernetes API call failed",
        (
            Discrepancy(
                subject="Kubernetes API",
                expected="an answer",
                found=str(error),
                likely_cause="see the message; `kubectl get nodes` with the same kubeconfig shows whether access works at all",
            ),
        ),
    )


def _unusable(found: str) -> Outcome:
    """Answers no check can judge: nothing is known about the cluster, so the run exits 2, not 1 (a check failed)."""
    return Outcome(
        "the cluster's answers could not be used",
        (
            Discrepancy(
                subject="Kubernetes API",
                expected="objects shaped as the Kubernetes 1.34 API and the pinned charts return them",
                found=found,
                likely_cause="a proxy in the way, a server that is not a Kubernetes API server, or an object shape "
                "the verifier does not know (another chart or API version); report it with the --json report",
            ),
        ),
        unusable=True,
    )


def unexpected_failure(error: Exception) -> Outcome:
    """A step that broke on an answer it could not read: one FAIL line and exit 2, not a traceback that ends the run.

    Only the exception's type and where it was raised are shown: its text may quote whatever the answer held,
    a credential included.
    """
    frames = traceback.extract_tb(error.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    return _unusable(f"{type(error).__name__}{where} (its message is not shown: it may quote what the answer held)")


@dataclass(frozen=True)
class ClusterState:
    """One read of everything the read-only checks look at, so they all judge the same moment."""

    nodes: list[dict[str, Any]]
    driver_pods: list[dict[str, Any]]
    device_classes: list[dict[str, Any]]
    resource_slices: list[dict[str, Any]]
    dranet: dict[str, Any] | None = None


def gpu_nodes(state: ClusterState, expect: Expectations) -> list[tuple[Mapping[str, Any], GroupExpectation]]:
    """Nodes of the stack's GPU groups, found by the group label the stack puts on every GPU node."""
    found: list[tuple[Mapping[str, Any], GroupExpectation]] = []
    for node in state.nodes:
        group = expect.group(labels_of(node).get(NODE_GROUP_LABEL, ""))
        if group is not None:
            found.append((node, group))
    return found


def plugin_absence_cause(node: Mapping[str, Any], namespace: str) -> str:
    """Why a GPU node has no kubelet plugin (and so no slices): its labels, then its taints."""
    if labels_of(node).get(KUBELET_PLUGIN_LABEL) != "true":
        return (
            f"the kubelet plugin is not scheduled there: the node lacks the label {KUBELET_PLUGIN_LABEL}=true "
            "that the plugin's nodeSelector requires (the stack sets it in the node group template; check the node labels)"
        )
    taints = node_taints(node)
    if taints:
        return (
            f"the kubelet plugin is not scheduled there: check the node labels and taints; the node is tainted "
            f"{', '.join(taints)} and the driver's kubeletPlugin.tolerations must tolerate every one "
            f"(`kubectl -n {namespace} describe daemonset` shows why it skips the node)"
        )
    return (
        "the kubelet plugin is not scheduled there: check the node labels and taints (`kubectl describe node`) "
        f"and the plugin DaemonSet's events (`kubectl -n {namespace} describe daemonset`)"
    )


def check_gpu_nodes(state: ClusterState, expect: Expectations) -> Outcome:
    findings = []
    members = gpu_nodes(state, expect)
    for group in expect.groups:
        nodes = [node for node, owner in members if owner is group]
        if not group.min_nodes <= len(nodes) <= group.max_nodes:
            findings.append(
                Discrepancy(
                    subject=f"GPU node group {group.name}",
                    expected=f"{group.node_count_text} labelled {NODE_GROUP_LABEL}={group.name}",
                    found=f"{len(nodes)} node(s)" + (f": {', '.join(name_of(n) for n in nodes)}" if nodes else ""),
                    likely_cause=(
                        "the node group is still provisioning or its nodes failed to join: check the group's status "
                        "(`nebius mk8s node-group get-by-name`) and `kubectl get nodes`"
                        if len(nodes) < group.min_nodes
                        else f"more nodes carry {NODE_GROUP_LABEL}={group.name} than the group may have: another node group uses the same label value"
                    ),
                )
            )
    for node, group in members:
        if not condition_true(node, "Ready"):
            findings.append(
                Discrepancy(
                    subject=f"node {name_of(node)} (group {group.name})",
                    expected="condition Ready=True",
                    found=condition_text(node, "Ready"),
                    likely_cause="the kubelet is not ready: `kubectl describe node` shows why; a GPU node that just joined needs a few minutes",
                )
            )
        if labels_of(node).get(KUBELET_PLUGIN_LABEL) != "true":
            findings.append(
                Discrepancy(
                    subject=f"node {name_of(node)} (group {group.name})",
                    expected=f"label {KUBELET_PLUGIN_LABEL}=true",
                    found=f"{KUBELET_PLUGIN_LABEL}={labels_of(node).get(KUBELET_PLUGIN_LABEL, '<unset>')}",
                    likely_cause="the stack sets this label in the node group template: it was changed by hand, or the group was created outside the stack; without it the DRA kubelet plugin skips the node",
                )
            )
    return outcome(
        findings,
        f"{len(members)} node(s) in {len(expect.groups)} group(s), all Ready and labelled for the kubelet plugin",
        f"{len(members)} GPU node(s) found",
    )


# docs.nebius.com/kubernetes/maintenance/manage: the condition's message reads
# "Node scheduled for urgent maintenance, SLA deadline is 2025-08-13T12:26:00Z".
SLA_DEADLINE = re.compile(r"SLA deadline is (\S+?)\.?$")
HEALTH_CHECKS_DOC = "docs.nebius.com/kubernetes/maintenance/health-checks"
MAINTENANCE_DOC = "docs.nebius.com/kubernetes/maintenance/manage"


def maintenance_deadline(node: Mapping[str, Any]) -> str | None:
    """The SLA deadline Nebius wrote into the node's NebiusMaintenanceScheduled message, if any."""
    match = SLA_DEADLINE.search(str(condition(node, MAINTENANCE_CONDITION).get("message") or "").strip())
    return match.group(1) if match else None


def _repair_cause(node: Mapping[str, Any], group: GroupExpectation, kind: str, fault: str) -> str:
    if kind in group.auto_repair_off:
        return (
            f"{fault}; auto-repair of {kind} is off for group {group.name} (autoRepair), so nothing replaces the node: "
            f"drain it (`kubectl drain {name_of(node)} --ignore-daemonsets`) and replace it, or turn the rule back on"
        )
    return (
        f"{fault}; Nebius auto-repair is on for it: the node is cordoned, GPU workloads are waited for, then it is "
        f"drained (up to 1 h) and recreated under a new name ({HEALTH_CHECKS_DOC}); `kubectl describe node "
        f"{name_of(node)}` shows the condition's message. Run the verification again once the new node has joined"
    )


def check_node_health(state: ClusterState, expect: Expectations) -> Outcome:
    """Nebius's health conditions on every GPU node: a GPU or boot-disk error fails, a scheduled maintenance warns."""
    findings: list[Discrepancy] = []
    warnings: list[Discrepancy] = []
    members = gpu_nodes(state, expect)
    for node, group in members:
        subject = f"node {name_of(node)} (group {group.name})"
        gpu_status = condition(node, GPU_ERROR_CONDITION).get("status")
        if gpu_status == "True":
            findings.append(
                Discrepancy(
                    subject=subject,
                    expected=f"{GPU_ERROR_CONDITION}=False (Nebius's GPU health checks pass)",
                    found=condition_text(node, GPU_ERROR_CONDITION),
                    likely_cause=_repair_cause(
                        node,
                        group,
                        GPU_ERROR_CONDITION,
                        "a GPU health check failed (nvidia-smi, dcgmi or dmesg: an Xid or ECC error, an InfiniBand "
                        "or NVLink fault)",
                    ),
                )
            )
        elif gpu_status == "Unknown":
            warnings.append(
                Discrepancy(
                    subject=subject,
                    expected=f"{GPU_ERROR_CONDITION}=False (Nebius's GPU health checks pass)",
                    found=condition_text(node, GPU_ERROR_CONDITION),
                    likely_cause="Nebius could not run its GPU health checks on the node (they run every five minutes): "
                    "look again in a few minutes; if it stays Unknown, `kubectl describe node` shows the node problem detector's state",
                )
            )
        if condition(node, BOOT_DISK_ERROR_CONDITION).get("status") == "True":
            findings.append(
                Discrepancy(
                    subject=subject,
                    expected=f"{BOOT_DISK_ERROR_CONDITION} absent or False",
                    found=condition_text(node, BOOT_DISK_ERROR_CONDITION),
                    likely_cause=_repair_cause(
                        node,
                        group,
                        BOOT_DISK_ERROR_CONDITION,
                        "the node's boot disk has reported I/O errors for 30 seconds or more",
                    ),
                )
            )
        if condition(node, MAINTENANCE_CONDITION).get("status") == "True":
            deadline = maintenance_deadline(node)
            by = f"before {deadline}" if deadline else "before the SLA deadline in the condition's message"
            warnings.append(
                Discrepancy(
                    subject=subject,
                    expected="no maintenance scheduled",
                    found=condition_text(node, MAINTENANCE_CONDITION) + (f"; deadline {deadline}" if deadline else ""),
                    likely_cause=(
                        f"Nebius will cordon the node, wait for its workloads, drain it (up to 1 h) and restart the VM {by}; "
                        "workloads should finish at least one hour before the deadline. Checkpoint or move long jobs, or start "
                        f"the maintenance earlier yourself ({MAINTENANCE_DOC})"
                    ),
                )
            )
    scheduled = sum(1 for warning in warnings if warning.expected == "no maintenance scheduled")
    summary = f"{len(members)} GPU node(s): no GPU or boot-disk error reported by Nebius"
    if scheduled:
        summary += f"; maintenance scheduled on {scheduled}"
    if len(warnings) > scheduled:
        summary += f"; GPU health unknown on {len(warnings) - scheduled}"
    return Outcome(
        f"{len(findings)} health problem(s) on {len(members)} GPU node(s)" if findings else summary,
        tuple(findings),
        warnings=tuple(warnings),
    )


def terminating(pod: Mapping[str, Any]) -> bool:
    """A pod being deleted still reads Ready until it stops: it must not vouch for its node."""
    return bool(pod.get("metadata", {}).get("deletionTimestamp"))


def plugin_pod_cause(pod: Mapping[str, Any], namespace: str) -> str:
    reasons = waiting_reasons(pod)
    pod_name = name_of(pod)
    if reasons & {"CrashLoopBackOff", "Error"}:
        return (
            f"the plugin keeps crashing: read `kubectl -n {namespace} logs {pod_name} --all-containers --previous`; usually the "
            "driver root does not match the node (nvidiaDriverRoot `/` with a Nebius driver preset, `/run/nvidia/driver` "
            "with the GPU Operator) or the NVIDIA driver is not installed on the node yet"
        )
    if reasons & {"ImagePullBackOff", "ErrImagePull"}:
        return "the node cannot pull the driver image: check the registry is reachable from the node (egress, NAT) and the image tag exists"
    if pod.get("status", {}).get("phase") == "Pending" and not reasons:
        return f"the pod waits to be scheduled: `kubectl -n {namespace} describe pod {pod_name}` shows the scheduler's reason"
    return f"the pod has not become ready: `kubectl -n {namespace} describe pod {pod_name}` and its logs show why"


def check_driver_pods(state: ClusterState, expect: Expectations) -> Outcome:
    namespace = expect.driver_namespace
    if not state.driver_pods:
        return Outcome(
            "no DRA driver pods",
            (
                Discrepancy(
                    subject=f"namespace {namespace}",
                    expected="the NVIDIA DRA driver's pods (one kubelet plugin per GPU node)",
                    found="no pods",
                    likely_cause=f"the NVIDIA DRA driver release is not installed in {namespace} or failed: `helm list -n {namespace}`",
                ),
            ),
        )
    plugins = [pod for pod in state.driver_pods if "kubelet-plugin" in name_of(pod)]
    findings = []
    nodes = gpu_nodes(state, expect)
    for node, _group in nodes:
        on_node = [pod for pod in plugins if pod.get("spec", {}).get("nodeName") == name_of(node)]
        if not on_node:
            findings.append(
                Discrepancy(
                    subject=f"node {name_of(node)}",
                    expected="a kubelet plugin pod Running and Ready",
                    found=f"no kubelet plugin pod on the node (namespace {namespace})",
                    likely_cause=plugin_absence_cause(node, namespace),
                )
            )
            continue
        staying = [pod for pod in on_node if not terminating(pod)]
        if not any(pod_ready(pod) for pod in staying):
            pod = staying[0] if staying else on_node[0]
            findings.append(
                Discrepancy(
                    subject=f"node {name_of(node)}",
                    expected="a kubelet plugin pod Running and Ready",
                    found=f"pod {name_of(pod)}: {pod_state(pod)}" + (" (terminating)" if terminating(pod) else ""),
                    likely_cause=plugin_pod_cause(pod, namespace)
                    if staying
                    else (
                        f"the plugin is being replaced (a driver upgrade or rollout): run the verification again once `kubectl -n {namespace} get pods` shows its successor"
                    ),
                )
            )
    controller_text = ""
    if expect.compute_domains:
        controllers = [pod for pod in state.driver_pods if "controller" in name_of(pod)]
        controller_text = " and the controller"
        if not any(pod_ready(pod) and not terminating(pod) for pod in controllers):
            findings.append(
                Discrepancy(
                    subject=f"controller in {namespace}",
                    expected="the controller pod Running and Ready (compute domains are on)",
                    found="; ".join(f"pod {name_of(p)}: {pod_state(p)}" for p in controllers) or "no controller pod",
                    likely_cause=(
                        "the 25.12.0 chart pins the controller to control-plane nodes, which managed clusters do not have: "
                        "its affinity must allow the system node group; otherwise see "
                        f"`kubectl -n {namespace} describe pod`"
                    ),
                )
            )
    return outcome(
        findings,
        f"kubelet plugin Running and Ready on all {len(nodes)} GPU node(s){controller_text}",
        f"{len(findings)} problem(s) with the driver pods",
    )


def _device_classes_check(state: ClusterState, wanted: Sequence[str], cause: str) -> Outcome:
    present = {name_of(item) for item in state.device_classes}
    findings = [
        Discrepancy(
            subject=f"DeviceClass {name}",
            expected="exists",
            found="absent; present: " + (", ".join(sorted(present)) or "none"),
            likely_cause=cause,
        )
        for name in wanted
        if name not in present
    ]
    return outcome(findings, f"{', '.join(wanted)} present", f"{len(findings)} DeviceClass(es) missing")


def check_gpu_device_class(state: ClusterState, expect: Expectations) -> Outcome:
    return _device_classes_check(
        state,
        (GPU_CLASS,),
        (
            f"the NVIDIA DRA driver chart creates it: its release is missing or failed (`helm list -n {expect.driver_namespace}`), "
            "or resources.gpus.enabled is off in its values"
        ),
    )


def check_network_device_classes(state: ClusterState, expect: Expectations) -> Outcome:
    return _device_classes_check(
        state,
        NETWORK_CLASSES,
        (
            "Nebius creates the network DeviceClasses once a DRA-enabled group joins a GPU cluster: check that the InfiniBand "
            "groups have gpu_settings.dra on and a gpu_cluster (infiniband: true with infinibandFabric)"
        ),
    )


def _gpu_devices(state: ClusterState, node: str) -> list[Mapping[str, Any]]:
    """Whole GPUs only: MIG partitions, when a node publishes them, are not what the preset counts."""
    return [
        d
        for d in devices_on_node(state.resource_slices, GPU_DRIVER, node)
        if attribute(d, GPU_DRIVER, "type") in (None, "gpu")
    ]


def check_gpu_slices(state: ClusterState, expect: Expectations) -> Outcome:
    findings = []
    nodes = gpu_nodes(state, expect)
    for node, group in nodes:
        node_name = name_of(node)
        devices = _gpu_devices(state, node_name)
        expected = (
            f"{group.gpus_per_node} GPU device(s) in {GPU_DRIVER} slices (preset {group.preset} of group {group.name})"
        )
        if not devices:
            findings.append(
                Discrepancy(
                    subject=f"node {node_name}",
                    expected=expected,
                    found=f"no {GPU_DRIVER} ResourceSlice for the node",
                    likely_cause=plugin_absence_cause(node, expect.driver_namespace),
                )
            )
        elif len(devices) != group.gpus_per_node:
            names = ", ".join(sorted(str(d.get("name")) for d in devices))
            findings.append(
                Discrepancy(
                    subject=f"node {node_name}",
                    expected=expected,
                    found=f"{len(devices)} device(s): {names}",
                    likely_cause=(
                        "the driver sees fewer GPUs than the preset has: a GPU is unhealthy or missing on the node; compare "
                        "`nvidia-smi -L` on the node with the kubelet plugin's logs"
                        if len(devices) < group.gpus_per_node
                        else "the node has more GPUs than its group's preset: the node group's preset in the cloud differs from the stack config"
                    ),
                )
            )
    total = sum(len(_gpu_devices(state, name_of(node))) for node, _ in nodes)
    return outcome(
        findings,
        f"{len(nodes)} GPU node(s) publish {total} GPU(s), as their presets imply",
        f"{len(findings)} of {len(nodes)} GPU node(s) publish the wrong GPUs",
    )


# k8s.io/api resource/v1 DeviceTaint (v0.36.3 types.go): effects None, NoSchedule and NoExecute, "consumers must treat
# unknown effects like None". The NVIDIA driver's NVMLDeviceHealthCheck gate publishes only None and NoSchedule
# (kubernetes-sigs/dra-driver-nvidia-gpu, docs "GPU health checking").
BLOCKING_TAINT_EFFECTS = ("NoSchedule", "NoExecute")
GPU_TAINT_CAUSES = {
    "gpu.nvidia.com/xid": (
        "the NVIDIA DRA driver saw XID {value} on the GPU (NVMLDeviceHealthCheck); with NoSchedule the driver counts it "
        "fatal, a hardware or firmware error, with None an application's error; `dmesg | grep -i xid` on the node and "
        "NVIDIA's XID catalogue say which"
    ),
    "gpu.nvidia.com/gpu-lost": "the GPU became inaccessible to the NVIDIA driver (fell off the bus or stopped answering NVML)",
    "gpu.nvidia.com/unmonitored": "NVML cannot monitor the device, so its health is unknown (scheduling is not affected)",
}


def _taint_text(taint: Mapping[str, Any]) -> str:
    value = taint.get("value")
    text = f"{taint.get('key')}{'=' + str(value) if value else ''}:{taint.get('effect') or '<no effect>'}"
    return text + (f", added {taint['timeAdded']}" if taint.get("timeAdded") else "")


def _taint_cause(taint: Mapping[str, Any], blocking: bool, namespace: str) -> str:
    key = str(taint.get("key"))
    known = GPU_TAINT_CAUSES.get(key)
    cause = (
        known.format(value=taint.get("value") or "?")
        if known
        else f"a component other than the NVIDIA driver's health check tainted the device ({key})"
    )
    if taint.get("effect") == "NoExecute":
        cause += "; NoExecute also evicts the pods using the device that do not tolerate the taint"
    elif blocking:
        cause += "; new claims that do not tolerate the taint get no allocation from this device"
    if known:
        cause += (
            f". The taint stays until the driver's kubelet plugin restarts (`kubectl -n {namespace} rollout restart "
            "daemonset` of its kubelet-plugin DaemonSet) once the fault is gone"
        )
        if blocking:
            cause += "; if it comes back, drain and replace the node"
    return cause


def check_gpu_taints(state: ClusterState, expect: Expectations) -> Outcome:
    """Device taints on the GPU nodes' gpu.nvidia.com devices (ResourceSlice `devices[].taints`).

    A NoSchedule or NoExecute taint fails: claims that do not tolerate it cannot get the device (NoExecute also
    evicts its pods), so the node serves fewer GPUs than its preset, and the NVIDIA driver sets NoSchedule only
    for a fatal XID or a lost GPU. A None taint (a non-fatal XID, an unmonitored GPU) or an effect this API does
    not define changes no scheduling: a warning, as unknown GPU health is in the node-health step.
    """
    findings: list[Discrepancy] = []
    warnings: list[Discrepancy] = []
    nodes = gpu_nodes(state, expect)
    devices = 0
    for node, group in nodes:
        for device in devices_on_node(state.resource_slices, GPU_DRIVER, name_of(node)):
            devices += 1
            for taint in device.get("taints") or []:
                blocking = taint.get("effect") in BLOCKING_TAINT_EFFECTS
                (findings if blocking else warnings).append(
                    Discrepancy(
                        subject=f"node {name_of(node)} (group {group.name}) device {device.get('name')}",
                        expected="no device taints on the node's GPUs",
                        found=f"taint {_taint_text(taint)}",
                        likely_cause=_taint_cause(taint, blocking, expect.driver_namespace),
                    )
                )
    tainted = len({f.subject for f in findings})
    summary = f"no device taints on the {devices} {GPU_DRIVER} device(s) of {len(nodes)} GPU node(s)"
    if warnings:
        summary = (
            f"{len(warnings)} taint(s) that do not affect scheduling on {len({w.subject for w in warnings})} device(s)"
        )
    return Outcome(
        f"{tainted} GPU device(s) tainted against new claims" if findings else summary,
        tuple(findings),
        warnings=tuple(warnings),
    )


def check_legacy_device_plugin(state: ClusterState, expect: Expectations) -> Outcome:
    findings = []
    nodes = gpu_nodes(state, expect)
    for node, group in nodes:
        status = node.get("status", {})
        advertised = {
            part: status.get(part, {}).get(LEGACY_GPU_RESOURCE)
            for part in ("capacity", "allocatable")
            if status.get(part, {}).get(LEGACY_GPU_RESOURCE) not in (None, "0")
        }
        if advertised:
            findings.append(
                Discrepancy(
                    subject=f"node {name_of(node)} (group {group.name})",
                    expected=f"no {LEGACY_GPU_RESOURCE} in the node's capacity or allocatable (DRA manages its GPUs)",
                    found=", ".join(f"{part} {LEGACY_GPU_RESOURCE}={value}" for part, value in advertised.items()),
                    likely_cause=(
                        "a legacy NVIDIA device plugin runs on this DRA node, so it and the DRA driver hand out the same GPUs: "
                        "install the GPU Operator with devicePlugin.enabled=false, remove any nvidia-device-plugin DaemonSet, and keep "
                        "gpu_settings.dra on for the group (it turns off Nebius's own plugin)"
                    ),
                )
            )
    return outcome(
        findings,
        f"none of the {len(nodes)} GPU node(s) advertises {LEGACY_GPU_RESOURCE}",
        f"{len(findings)} GPU node(s) advertise {LEGACY_GPU_RESOURCE}",
    )


def _infiniband_nodes(state: ClusterState, expect: Expectations) -> list[Mapping[str, Any]]:
    return [node for node, group in gpu_nodes(state, expect) if group.infiniband]


def check_dranet(state: ClusterState, expect: Expectations) -> Outcome:
    subject = f"DaemonSet {DRANET_NAMESPACE}/{DRANET_DAEMONSET}"
    labelled = [n for n in state.nodes if labels_of(n).get(DRANET_NODE_LABEL) == "true"]
    if state.dranet is None:
        return Outcome(
            "dranet missing",
            (
                Discrepancy(
                    subject=subject,
                    expected=f"present and ready on the {len(labelled)} node(s) labelled {DRANET_NODE_LABEL}=true",
                    found="absent",
                    likely_cause=(
                        "Nebius installs DRANet only for DRA-enabled groups in a GPU cluster: check gpu_settings.dra and that the "
                        "InfiniBand groups joined the GPU cluster (infiniband: true with infinibandFabric)"
                    ),
                ),
            ),
        )
    findings = []
    status = state.dranet.get("status", {})
    desired, ready, available = (
        int(status.get(key, 0)) for key in ("desiredNumberScheduled", "numberReady", "numberAvailable")
    )
    if desired == 0 or desired != len(labelled) or ready < desired or available < desired:
        findings.append(
            Discrepancy(
                subject=subject,
                expected=f"desired = ready = available = {len(labelled)} (the nodes labelled {DRANET_NODE_LABEL}=true)",
                found=f"desired {desired}, ready {ready}, available {available}",
                likely_cause=(
                    f"dranet pods are not ready: `kubectl -n {DRANET_NAMESPACE} get pods -o wide | grep dranet` and their logs"
                    if desired == len(labelled) and desired > 0
                    else f"the DaemonSet does not cover every labelled node: `kubectl -n {DRANET_NAMESPACE} describe daemonset {DRANET_DAEMONSET}`"
                ),
            )
        )
    for node in _infiniband_nodes(state, expect):
        if labels_of(node).get(DRANET_NODE_LABEL) != "true":
            findings.append(
                Discrepancy(
                    subject=f"node {name_of(node)}",
                    expected=f"label {DRANET_NODE_LABEL}=true (an InfiniBand GPU node)",
                    found="label absent, so dranet does not run there",
                    likely_cause="Nebius labels the nodes of DRA-enabled groups in a GPU cluster: this node's group is not in the GPU cluster or has DRA off",
                )
            )
    return outcome(findings, f"ready on all {desired} labelled node(s)", f"{len(findings)} problem(s) with dranet")


def check_dranet_slices(state: ClusterState, expect: Expectations) -> Outcome:
    findings = []
    nodes = _infiniband_nodes(state, expect)
    rdma_total = 0
    for node in nodes:
        devices = devices_on_node(state.resource_slices, NETWORK_DRIVER, name_of(node))
        rdma = [d for d in devices if attribute(d, NETWORK_DRIVER, "rdma") is True]
        rdma_total += len(rdma)
        if not rdma:
            findings.append(
                Discrepancy(
                    subject=f"node {name_of(node)}",
                    expected=f"{NETWORK_DRIVER} devices with {NETWORK_DRIVER}/rdma=true",
                    found=f"{len(devices)} {NETWORK_DRIVER} device(s), none RDMA-capable"
                    if devices
                    else f"no {NETWORK_DRIVER} ResourceSlice for the node",
                    likely_cause=(
                        "DRANet found no RDMA-capable NIC: the node has no InfiniBand NIC configured (is its group in the GPU cluster?) "
                        "or the NIC driver is not loaded; read the dranet pod's logs on the node"
                        if devices
                        else f"dranet is not running on the node: see the {DRANET_DAEMONSET} check and the node's {DRANET_NODE_LABEL} label"
                    ),
                )
            )
    return outcome(
        findings,
        f"{len(nodes)} InfiniBand node(s) publish {rdma_total} RDMA-capable NIC(s)",
        f"{len(findings)} InfiniBand node(s) publish no RDMA-capable NIC",
    )


@dataclass(frozen=True)
class ClusterCheck:
    name: str
    title: str
    judge: Callable[[ClusterState, Expectations], Outcome]
    infiniband_only: bool = False


CLUSTER_CHECKS = (
    ClusterCheck("gpu-nodes", "GPU nodes joined and labelled", check_gpu_nodes),
    ClusterCheck("node-health", "Nebius health conditions on GPU nodes", check_node_health),
    ClusterCheck("driver-pods", "DRA driver pods", check_driver_pods),
    ClusterCheck("gpu-deviceclass", f"DeviceClass {GPU_CLASS}", check_gpu_device_class),
    ClusterCheck("gpu-slices", f"{GPU_DRIVER} ResourceSlices", check_gpu_slices),
    ClusterCheck("gpu-taints", "No tainted GPUs", check_gpu_taints),
    ClusterCheck("legacy-device-plugin", "No legacy device plugin on DRA nodes", check_legacy_device_plugin),
    ClusterCheck("dranet", f"{DRANET_DAEMONSET} DaemonSet", check_dranet, infiniband_only=True),
    ClusterCheck("network-deviceclasses", "Network DeviceClasses", check_network_device_classes, infiniband_only=True),
    ClusterCheck("dranet-slices", f"{NETWORK_DRIVER} ResourceSlices", check_dranet_slices, infiniband_only=True),
)
