"""GPU metrics attributed to the pod and claim that hold the GPU: read while the GPU smoke pod runs.

The stack runs NVIDIA's DCGM exporter in DRA mode on every GPU node. While the smoke pod holds
its GPU, the verifier reads the exporter on that pod's node through the API server's proxy
(`pods/proxy`, port 9400, `/metrics`: a Service proxy would pick any node's exporter, and the
GPU is on one node) and looks for a GPU series that names the pod, its namespace and its
ResourceClaim and the device the claim was allocated. The exporter maps pods to GPUs when it
collects, so the read is repeated until that series appears or the time is up.

Parsing and judging are pure functions, tested against exporter output in tests/data/verify.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from components.dra_constants import (
    DCGM_CLAIM_LABEL,
    DCGM_CLAIM_NAMESPACE_LABEL,
    DCGM_DEVICE_LABEL,
    DCGM_EXPORTER_CHART,
    DCGM_NAMESPACE_LABEL,
    DCGM_POD_LABEL,
    DCGM_POOL_LABEL,
    GPU_DRIVER,
)
from tools.verify.allocation import allocation_results
from tools.verify.checks import Discrepancy, Outcome
from tools.verify.cluster import Cluster
from tools.verify.objects import labels_of, name_of, pod_ready, pod_state

EXPORTER_PORT = 9400
EXPORTER_NAME_LABEL = "app.kubernetes.io/name"
UUID_LABELS = ("UUID", "uuid")

_SAMPLE = re.compile(r"^(?P<name>[A-Za-z_:][A-Za-z0-9_:]*)(?:\{(?P<labels>.*)\})?\s+(?P<value>\S+)(?:\s+\S+)?$")
_LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)')
_UNESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


@dataclass(frozen=True)
class Sample:
    name: str
    labels: Mapping[str, str]
    value: str

    @property
    def uuid(self) -> str | None:
        return next((self.labels[key] for key in UUID_LABELS if key in self.labels), None)


class ExpositionError(ValueError):
    """The exporter's answer is not the Prometheus text format."""


def _labels(text: str, line: str) -> dict[str, str]:
    labels: dict[str, str] = {}
    position = 0
    while position < len(text):
        match = _LABEL.match(text, position)
        if match is None:
            raise ExpositionError(f"unreadable labels in line {line[:200]!r}")
        labels[match.group(1)] = re.sub(r"\\[\\\"n]", lambda m: _UNESCAPE[m.group(0)], match.group(2))
        position = match.end()
    return labels


def parse_exposition(text: str) -> list[Sample]:
    """Every sample of a Prometheus text-format page; comments (# HELP, # TYPE, others) and blank lines skipped."""
    samples = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        if match is None:
            raise ExpositionError(f"unreadable line {line[:200]!r}")
        samples.append(Sample(match.group("name"), _labels(match.group("labels") or "", line), match.group("value")))
    return samples


@dataclass(frozen=True)
class HeldGpu:
    """What the smoke pod holds: its name and namespace, its generated claim and the devices allocated to it."""

    pod: str
    namespace: str
    node: str
    claim: str
    devices: frozenset[tuple[str, str]]

    @classmethod
    def from_objects(cls, pod: Mapping[str, Any], claim: Mapping[str, Any]) -> HeldGpu:
        metadata = pod.get("metadata", {})
        return cls(
            pod=str(metadata.get("name", "")),
            namespace=str(metadata.get("namespace", "")),
            node=str(pod.get("spec", {}).get("nodeName", "")),
            claim=name_of(claim),
            devices=frozenset(
                (str(result.get("pool")), str(result.get("device")))
                for result in allocation_results(claim)
                if result.get("driver") == GPU_DRIVER
            ),
        )


def _gpu_samples(samples: Sequence[Sample]) -> list[Sample]:
    return [sample for sample in samples if sample.name.startswith("DCGM_FI_") and sample.uuid]


def _describe(sample: Sample) -> str:
    shown = ", ".join(
        f"{key}={sample.labels[key]}"
        for key in (DCGM_POD_LABEL, DCGM_CLAIM_LABEL, DCGM_POOL_LABEL, DCGM_DEVICE_LABEL)
        if key in sample.labels
    )
    return f"{sample.name} on {sample.uuid} ({shown or 'no pod or claim labels'})"


def judge_attribution(text: str, held: HeldGpu, source: str, waited_s: float) -> Outcome:
    """A GPU series names the smoke pod, its namespace, its claim and an allocated device; else why not."""
    subject = f"GPU metrics of pod {held.namespace}/{held.pod} (claim {held.claim})"
    expected = (
        f"a DCGM series with {DCGM_POD_LABEL}={held.pod}, {DCGM_NAMESPACE_LABEL}={held.namespace}, "
        f"{DCGM_CLAIM_LABEL}={held.claim} and the allocated device "
        f"{', '.join(f'{pool}/{device}' for pool, device in sorted(held.devices)) or '(none)'}"
    )

    def failed(found: str, cause: str) -> Outcome:
        return Outcome(
            "no GPU series is attributed to the smoke pod's claim", (Discrepancy(subject, expected, found, cause),)
        )

    try:
        samples = _gpu_samples(parse_exposition(text))
    except ExpositionError as error:
        return failed(
            f"{source} answered with something that is not Prometheus text: {error}",
            "another service answers on the exporter's port, or a proxy rewrote the answer; read the exporter's log",
        )
    if not samples:
        return failed(
            f"{source} serves no DCGM GPU series",
            "DCGM could not read the node's GPUs: read the exporter's log. A DCGM module that fails to load "
            "(the profiling module on L40S) stops every field: set nebius-dra:gpuMetricsProfile to basic for such nodes",
        )
    ours = [
        s
        for s in samples
        if s.labels.get(DCGM_POD_LABEL) == held.pod and s.labels.get(DCGM_NAMESPACE_LABEL) == held.namespace
    ]
    attributed = [
        s
        for s in ours
        if s.labels.get(DCGM_CLAIM_LABEL) == held.claim
        and s.labels.get(DCGM_CLAIM_NAMESPACE_LABEL) == held.namespace
        and (s.labels.get(DCGM_POOL_LABEL), s.labels.get(DCGM_DEVICE_LABEL)) in held.devices
    ]
    if attributed:
        gpus = sorted({s.uuid or "" for s in attributed})
        return Outcome(
            f"{len(attributed)} series on {', '.join(gpus)} name pod {held.pod} and claim {held.claim} ({source})"
        )
    if ours:
        without_claim = [s for s in ours if DCGM_CLAIM_LABEL not in s.labels]
        if without_claim:
            return failed(
                f"{len(ours)} series name the pod but no claim, for example {_describe(without_claim[0])}",
                "the exporter attributed the GPU through the device plugin's pod resources, not DRA: the legacy device "
                "plugin runs beside the DRA driver (check nebius-dra:gpuNodeGroups DRA mode and the GPU Operator's "
                "devicePlugin.enabled=false)",
            )
        return failed(
            f"the pod's series name another claim or device: {_describe(ours[0])}",
            "the exporter maps the claim to a different GPU than the scheduler allocated: its ResourceSlice cache is "
            "stale (the kubelet plugin republished its slices); run the verification again, then read the exporter's log",
        )
    if any(DCGM_CLAIM_LABEL in s.labels for s in samples):
        return failed(
            f"{len(samples)} GPU series, some attributed to other claims, none to this pod after {waited_s:.0f}s",
            "the exporter has not yet collected since the pod started, or its pod-resources read misses the pod: "
            "rerun with a longer --metrics-timeout, then read the exporter's log",
        )
    return failed(
        f"{len(samples)} GPU series and none names a pod or claim (after {waited_s:.0f}s), for example "
        f"{_describe(samples[0])}",
        "the exporter runs without DRA attribution: kubernetesDRA.enabled is off (KUBERNETES_ENABLE_DRA), it cannot "
        "list resource.k8s.io/v1 ResourceSlices (chart older than 4.8.3, or its ClusterRole is missing), or the "
        "kubelet's pod-resources socket (/var/lib/kubelet/pod-resources) is not mounted",
    )


def exporter_pod(pods: Sequence[Mapping[str, Any]], node: str) -> Mapping[str, Any] | None:
    """The exporter's pod on `node`, by the chart's `app.kubernetes.io/name` label."""
    return next(
        (
            pod
            for pod in pods
            if labels_of(pod).get(EXPORTER_NAME_LABEL) == DCGM_EXPORTER_CHART
            and pod.get("spec", {}).get("nodeName") == node
        ),
        None,
    )


@dataclass
class MetricsSettings:
    timeout_s: float
    poll_interval_s: float
    clock: Callable[[], float]
    sleep: Callable[[float], None]


def read_attribution(
    cluster: Cluster,
    namespace: str,
    held: HeldGpu,
    settings: MetricsSettings,
    on_progress: Callable[[str], None],
) -> Outcome:
    """Reads the exporter on the pod's node until the claim's GPU series appears or `settings.timeout_s` passes."""
    pod = exporter_pod(cluster.list_pods(namespace), held.node)
    if pod is None:
        return Outcome(
            "no exporter on the smoke pod's node",
            (
                Discrepancy(
                    subject=f"dcgm-exporter pod on node {held.node}",
                    expected=f"a pod labelled {EXPORTER_NAME_LABEL}={DCGM_EXPORTER_CHART} in {namespace}",
                    found="none",
                    likely_cause="the exporter's DaemonSet does not reach the node: check that the node carries "
                    "nvidia.com/dra-kubelet-plugin=true and that every GPU group's taint is in nebius-dra:gpuNodeGroups",
                ),
            ),
        )
    name = name_of(pod)
    if not pod_ready(pod):
        return Outcome(
            "the exporter on the smoke pod's node is not ready",
            (
                Discrepancy(
                    subject=f"pod {namespace}/{name}",
                    expected="Running and Ready",
                    found=pod_state(pod),
                    likely_cause=f"read its log: `kubectl -n {namespace} logs {name}`; NVML or DCGM failing to start "
                    "means the container does not see the driver (runtimeClassName)",
                ),
            ),
        )
    source = f"exporter {namespace}/{name}"
    started = settings.clock()
    while True:
        on_progress(f"reading {source} /metrics")
        text = cluster.proxy_pod(namespace, name, EXPORTER_PORT, "metrics")
        waited = settings.clock() - started
        verdict = judge_attribution(text, held, source, waited)
        remaining = settings.timeout_s - waited
        if verdict.passed or remaining <= 0:
            return verdict
        settings.sleep(min(settings.poll_interval_s, remaining))
