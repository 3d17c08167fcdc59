"""`make bench-e2e`: how fast the real Kubernetes scheduler allocates each built-in claim template.

    venv/bin/python e2e/dra/bench_allocation.py [--pods 200] [--nodes 100] [--kube-minor 1.34 ...]
                                                [--controller-manager-qps 5000] [--scheduler-qps 5000]
                                                [--template NAME ...] [--no-anchor] [--anchor-workload NAME]

A benchmark, not a test. Per Kubernetes minor (by default the oldest and the newest the e2e builds),
one throw-away control plane (`e2e/kube/control_plane.py`), NODES
stand-in 8-GPU H200 nodes (`dra_fakes.py`: the NVIDIA driver's slices on all, DRANet's
InfiniBand slices on the first half, which are prod's `h200-train` group, the rest
`h200-burst`), then, per template, PODS pods that each claim one device set from it, created
from eight threads at once. For every template it reports pods allocated and bound per second
(pods / first creation to last binding) and the p50 and p99 of each pod's time from its
creation request to the scheduler's binding, as a watch on the pods sees it, and the rate of
each stage before it (claims created by the claim controller, allocated by the scheduler). The reference is a
template with no selector and no constraint (one `gpu.nvidia.com` device); every built-in
template is held to at least 0.8x its rate. A template asks for no more pods than the nodes
can hold (multi-gpu, 8 GPUs, one pod a node). Between templates every pod is deleted and its
claims are gone, so each starts on free devices.

kube-controller-manager and kube-scheduler run with their client limits (--kube-api-qps, --kube-api-burst)
at 5000, as scheduler_perf runs its one client: at their own defaults the claim controller (20 QPS, two
writes a pod) holds every template to 10 pods a second and the scheduler (50 QPS) to 20, so no template's
cost could show; `--controller-manager-qps 0 --scheduler-qps 0` measures a cluster with the defaults.

The anchor (`scheduler_perf.py`, on by default): upstream's scheduler benchmark, scheduler_perf's
SchedulingWithResourceClaimTemplate, built from the same k8s.io/kubernetes release and run after the
control plane is gone; the no-selector rate is held to at least 0.8x its SchedulingThroughput.
Prints a table, PASS or FAIL per template and for the anchor, writes build/e2e/allocation-<minor>.json
(and the anchor's data items, build/e2e/scheduler_perf-<minor>.json), and exits 0.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent.parent
for path in (str(PROJECT), str(HERE)):
    if path not in sys.path:
        sys.path.insert(0, path)

import scheduler_perf  # noqa: E402
from dra_engines import control_plane_mod  # noqa: E402
from dra_fakes import create_node, device_classes, gpu_devices, nic_devices, node_name, resource_slice  # noqa: E402
from dra_kube import RESOURCE_API, Kube, wait_for  # noqa: E402
from dra_scenarios import BURST, SCENARIOS, TRAIN  # noqa: E402
from kubernetes import client, watch  # noqa: E402
from urllib3.exceptions import ProtocolError  # noqa: E402

from components.config import parse_stack_config  # noqa: E402
from components.config.stack_file import program_config  # noqa: E402
from components.dra_constants import GPU_CLASS, GPU_DRIVER, NETWORK_DRIVER  # noqa: E402
from components.labels import gpu_node_labels, tolerations_for  # noqa: E402
from components.model import GpuNodeGroupConfig, StackConfig  # noqa: E402
from components.values.claim_templates import claim_template_specs  # noqa: E402
from tools.bench.arguments import at_least, positive  # noqa: E402
from tools.bench.interrupts import run_interruptible  # noqa: E402

REPORT_DIR = PROJECT / "build" / "e2e"
USER_TEMPLATES_KEY = "nebius-dra:userClaimTemplates"
NAMESPACE = "alloc-bench"
STACK = "bench"
REFERENCE = "no-selector"
REFERENCE_SPEC = {
    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}
}
TARGET = 0.8
CREATORS = 8
# kube-controller-manager's and kube-scheduler's client QPS and burst, as scheduler_perf (the anchor) sets its
# one client (test/integration/scheduler_perf/util.go, mustSetupCluster, 1.34.12): at their own defaults the
# claim controller's, 20 (pkg/controller/apis/config/v1alpha1/defaults.go), holds every template to 10 pods a
# second, and the scheduler's, 50 (pkg/scheduler/apis/config/v1/defaults.go), to 20: no selector's cost shows.
CLIENT_QPS = 5000
# No binding for this long, with pods still waiting: the rest are taken as unschedulable. Above the
# scheduler's longest pod backoff (podMaxBackoffSeconds, 10 s by default), so a backed-off pod is retried.
STALL_SECONDS = 60.0
# Pods of the reference template run, untimed, before the first timed template: the first pods of a
# fresh control plane wait on caches and informers that every later template finds warm.
WARM_UP_PODS = 20
# What one pod of each built-in template takes from a node (prod's specs): (GPUs, InfiniBand NICs,
# GPU/NIC pairs on one PCIe root); an 8-GPU InfiniBand node has 8 NICs, 4 of them paired (dra_fakes.IB_NICS).
TAKES = {
    REFERENCE: (1, 0, 0),
    "gpu": (1, 0, 0),
    "gpu-by-product": (1, 0, 0),
    "multi-gpu": (8, 0, 0),
    "ib-network": (0, 1, 0),
    "rdma-network": (0, 1, 0),
    "gpu-nic-aligned": (0, 0, 1),
    "gpu-by-memory": (1, 0, 0),
    "gpu-first-available": (1, 0, 0),
}
# One user template of each selector kind the built-ins lack (the product's is gpu-by-product, the PCIe
# alignment's gpu-nic-aligned), as a stack file writes them; the program's own parser and spec builder make them.
SELECTOR_TEMPLATES = [
    {
        "name": "gpu-by-memory",
        "requests": [
            {
                "name": "gpu",
                "exactly": {
                    "deviceClassName": GPU_CLASS,
                    "selectors": [
                        {
                            "cel": {
                                "expression": f'device.capacity["{GPU_DRIVER}"].memory.compareTo(quantity("100Gi")) >= 0'
                            }
                        }
                    ],
                },
            }
        ],
    },
    {
        "name": "gpu-first-available",
        "requests": [
            {
                "name": "gpu",
                "firstAvailable": [
                    # More GPUs than a node has: tried on every node, never fits (a product no node has, as
                    # the first try was, is now refused by the stack's own validation).
                    {"name": "sixteen", "deviceClassName": GPU_CLASS, "count": 16},
                    {"name": "any", "deviceClassName": GPU_CLASS},
                ],
            }
        ],
    },
]


@dataclass
class TemplateRun:
    template: str
    pods: int
    bound: int
    pods_per_second: float
    p50_seconds: float
    p99_seconds: float
    creation_seconds: float
    # Per stage, pods over first creation to the stage's last: claims created (the claim controller),
    # claims allocated (the scheduler), pods bound (the scheduler); the slowest sets pods_per_second.
    claims_per_second: float = float("nan")
    allocations_per_second: float = float("nan")
    watch_restarts: int = 0
    watch_ended_by: str = ""  # what last ended a watch early, when one was opened again
    unbound_why: str = ""  # for pods never bound: the scheduler's reasons, or that the watch ended early


def capacity(template: str, gpu_nodes: int, ib_nodes: int) -> int:
    """How many of `template`'s pods the stand-in nodes can hold at once."""
    gpus, nics, pairs = TAKES[template]
    limits = [gpu_nodes * (8 // gpus)] if gpus else []
    limits += [ib_nodes * (8 // nics)] if nics else []
    limits += [ib_nodes * 4 // pairs] if pairs else []
    return min(limits)


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile: the smallest value at or above `fraction` of the sorted values."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, int(fraction * len(ordered) + 0.999999) - 1))]


def create_nodes(kube: Kube, groups: Mapping[str, GpuNodeGroupConfig], count: int, chart: str) -> int:
    """`count` 8-GPU nodes, the first half in the InfiniBand group with DRANet's slices too; the InfiniBand node count."""
    ib_nodes = count // 2
    for index in range(count):
        group = groups[TRAIN] if index < ib_nodes else groups[BURST]
        name = node_name(STACK, group.name, index)
        labels = gpu_node_labels(group.name, group.preinstalled_driver, group.labels)
        taints = [{"key": t.key, "value": t.value, "effect": t.effect} for t in group.taints]
        create_node(kube, name, labels, taints, group.preset)
        kube.create(resource_slice(name, GPU_DRIVER, gpu_devices(name, group, chart)))
        if group.infiniband:
            kube.create(resource_slice(name, NETWORK_DRIVER, nic_devices()))
    return ib_nodes


def pod_manifest(template: str, index: int, tolerations: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{template}-{index:04d}", "namespace": NAMESPACE, "labels": {"bench": template}},
        "spec": {
            "tolerations": tolerations,
            "resourceClaims": [{"name": "devices", "resourceClaimTemplateName": template}],
            "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"claims": [{"name": "devices"}]}}
            ],
        },
    }


class BindingWatch:
    """When each stage of a template's pods is first seen, from watches on its pods and on the claims.

    `claimed`: the claim controller (kube-controller-manager) created the pod's ResourceClaim from the
    template; `allocated`: the scheduler wrote the claim's allocation; `bound`: the scheduler bound the
    pod (spec.nodeName set). Claims are matched to pods by their owner reference.
    """

    def __init__(self, kube: Kube, template: str) -> None:
        self.claimed: dict[str, float] = {}
        self.allocated: dict[str, float] = {}
        self.bound: dict[str, float] = {}
        self.ended_by = ""  # what last ended a watch before `stop`, if anything did
        self.restarts = 0  # watches that ended before `stop` and were opened again
        self._stopped = threading.Event()
        self._watches = [watch.Watch(), watch.Watch()]
        self._core = client.CoreV1Api(kube.api_client)
        self._resource = client.CustomObjectsApi(kube.api_client)
        self._template = template
        for target in (self._pods, self._claims):
            threading.Thread(target=target, daemon=True).start()

    def _follow(self, index: int, open_stream: Callable[[watch.Watch], Any], seen: Callable[[Any], None]) -> None:
        """Every event of the stream `open_stream` opens, opened again (listing anew) if it ends before `stop`.

        A watch that ended early left pods bound that it never saw, and the run stalled (2026-12-02: 112 of
        200, and 56 and 74 with the claim controller's limit raised); what the new list shows is recorded
        when it is seen, later than it happened, so a restart can only make a rate look slower.
        """
        while not self._stopped.is_set():
            watcher = self._watches[index] = watch.Watch()
            try:
                with contextlib.suppress(ProtocolError):  # what `stop` closing the stream raises
                    for event in open_stream(watcher):
                        seen(event["object"])
                self.ended_by = "the server ended it" if not self._stopped.is_set() else self.ended_by
            except Exception as error:  # say why, and open it again
                self.ended_by = f"{type(error).__name__}: {str(error)[:200]}"
            if not self._stopped.is_set():
                self.restarts += 1
                time.sleep(0.2)

    def _pods(self) -> None:
        def seen(pod: Mapping[str, Any]) -> None:
            name = pod["metadata"]["name"]
            if (pod.get("spec") or {}).get("nodeName") and name not in self.bound:
                self.bound[name] = time.monotonic()

        def open_stream(watcher: watch.Watch) -> Any:
            # Plain JSON, not V1Pod objects: building those took so long a pod event at 100 pods a second that
            # the API server closed the watch as too slow (its watch cache ends a watcher whose buffer stays
            # full: "Forcing watcher close due to unresponsiveness", k8s.io/apiserver storage/cacher), and a
            # stage seen after the restart's list is seen late.
            return watcher.stream(
                self._core.list_namespaced_pod,
                NAMESPACE,
                label_selector=f"bench={self._template}",
                timeout_seconds=600,
                deserialize=False,
            )

        self._follow(0, open_stream, seen)

    def _claims(self) -> None:
        def seen(claim: Mapping[str, Any]) -> None:
            owners = claim["metadata"].get("ownerReferences") or [{}]
            pod = owners[0].get("name", "")
            if not pod.startswith(f"{self._template}-"):
                return
            now = time.monotonic()
            self.claimed.setdefault(pod, now)
            if (claim.get("status") or {}).get("allocation"):
                self.allocated.setdefault(pod, now)

        group, version = RESOURCE_API.split("/")

        def open_stream(watcher: watch.Watch) -> Any:
            return watcher.stream(
                self._resource.list_namespaced_custom_object,
                group,
                version,
                NAMESPACE,
                "resourceclaims",
                timeout_seconds=600,
            )

        self._follow(1, open_stream, seen)

    def stop(self) -> None:
        self._stopped.set()
        for each in self._watches:
            each.stop()


@dataclass
class Seen:
    """What a BindingWatch saw, as its process hands it back: per stage, pod name -> time.monotonic()."""

    claimed: dict[str, float]
    allocated: dict[str, float]
    bound: dict[str, float]
    ended_by: str
    restarts: int


def _watch_in_child(kubeconfig: str, template: str, bound: Any, ready: Any, stop: Any, sender: Any) -> None:
    """The body of a WatchProcess: a BindingWatch, its count of bound pods published as it grows."""
    kube = Kube(kubeconfig)
    bindings = BindingWatch(kube, template)
    time.sleep(1.0)  # the watches are open before the first pod exists
    ready.set()
    while not stop.wait(0.05):
        bound.value = len(bindings.bound)
    bindings.stop()
    sender.send(
        asdict(
            Seen(
                dict(bindings.claimed),
                dict(bindings.allocated),
                dict(bindings.bound),
                bindings.ended_by,
                bindings.restarts,
            )
        )
    )


class WatchProcess:
    """A BindingWatch in a process of its own, so the creators' threads never hold its interpreter lock.

    In the creators' process, at 60-100 pods a second, the watches ended before the run did, "the server ended
    it", up to four times a template (2026-12-02): a watcher that does not read its events fast enough is
    closed by the API server's watch cache (k8s.io/apiserver pkg/storage/cacher/cache_watcher.go, "Forcing
    watcher close due to unresponsiveness"), and what the list that opens it again shows is seen late, so the
    template's rate read slow. time.monotonic is the system's CLOCK_MONOTONIC, one clock for both processes.
    """

    def __init__(self, kubeconfig: str, template: str) -> None:
        context = multiprocessing.get_context("spawn")  # no fork of a process with threads running
        self._bound = context.Value("i", 0)
        self._ready, self._stop = context.Event(), context.Event()
        self._receiver, sender = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_watch_in_child,
            args=(kubeconfig, template, self._bound, self._ready, self._stop, sender),
            daemon=True,
        )
        self._process.start()
        sender.close()
        if not self._ready.wait(120.0):
            self._process.kill()
            raise RuntimeError(f"the watch process of {template} did not start within 120 s")

    @property
    def bound_count(self) -> int:
        return self._bound.value

    def stop(self) -> Seen:
        self._stop.set()
        seen = Seen(**self._receiver.recv())
        self._process.join(30.0)
        return seen


def run_template(
    kube: Kube, kubeconfig: str, template: str, spec: Mapping[str, Any], pods: int, tolerations: list
) -> TemplateRun:
    kube.create(
        {
            "apiVersion": RESOURCE_API,
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": template, "namespace": NAMESPACE},
            "spec": spec["spec"],
        }
    )
    watcher = WatchProcess(kubeconfig, template)
    created: dict[str, float] = {}

    def create(index: int) -> None:
        manifest = pod_manifest(template, index, tolerations)
        created[manifest["metadata"]["name"]] = time.monotonic()
        kube.create(manifest)

    started = time.monotonic()
    with ThreadPoolExecutor(CREATORS) as creators:
        list(creators.map(create, range(pods)))
    creation_seconds = time.monotonic() - started
    last_progress, seen = time.monotonic(), 0
    while watcher.bound_count < pods and time.monotonic() - last_progress < STALL_SECONDS:
        time.sleep(0.2)
        if watcher.bound_count > seen:
            last_progress, seen = time.monotonic(), watcher.bound_count
    bindings = watcher.stop()
    bound = bindings.bound
    unbound_why = why_unbound(kube, template, bound, bindings.ended_by) if len(bound) < pods else ""
    latencies = [bound[name] - created[name] for name in bound]
    first = min(created.values())

    def rate(stage: Mapping[str, float]) -> float:
        return len(stage) / (max(stage.values()) - first) if stage else 0.0

    elapsed = (max(bound.values()) - first) if bound else float("inf")
    release_template(kube, template)
    return TemplateRun(
        template=template,
        pods=pods,
        bound=len(bound),
        pods_per_second=len(bound) / elapsed,
        p50_seconds=percentile(latencies, 0.50) if latencies else float("nan"),
        p99_seconds=percentile(latencies, 0.99) if latencies else float("nan"),
        creation_seconds=creation_seconds,
        claims_per_second=rate(bindings.claimed),
        allocations_per_second=rate(bindings.allocated),
        watch_restarts=bindings.restarts,
        watch_ended_by=bindings.ended_by,
        unbound_why=unbound_why,
    )


def why_unbound(kube: Kube, template: str, bound: Mapping[str, float], watch_ended_by: str) -> str:
    """Why pods were never seen bound: the watch missed their binding, or the scheduler's reasons, counted."""
    reasons: Counter[str] = Counter()
    for pod in kube.list("v1", "Pod", NAMESPACE, label_selector=f"bench={template}"):
        if pod["metadata"]["name"] in bound:
            continue
        if (pod.get("spec") or {}).get("nodeName"):
            reasons[
                "bound, but the watch did not see it" + (f" (it ended: {watch_ended_by})" if watch_ended_by else "")
            ] += 1
            continue
        scheduled = next(
            (c for c in (pod.get("status") or {}).get("conditions") or [] if c.get("type") == "PodScheduled"), {}
        )
        reasons[scheduled.get("message") or "not yet tried by the scheduler"] += 1
    return "; ".join(f"{count} pods: {reason}" for reason, count in reasons.most_common(3))


def release_template(kube: Kube, template: str) -> None:
    """Deletes the template's pods at once and waits until their claims are gone, so the next template starts free."""
    kube.resource("v1", "Pod").delete(namespace=NAMESPACE, label_selector=f"bench={template}", grace_period_seconds=0)
    wait_for(
        f"the pods and claims of {template} to be gone",
        lambda: not kube.list("v1", "Pod", NAMESPACE) and not kube.list(RESOURCE_API, "ResourceClaim", NAMESPACE),
        timeout=180.0,
    )
    kube.delete(RESOURCE_API, "ResourceClaimTemplate", template, NAMESPACE)


def report(runs: list[TemplateRun], nodes: int, ib_nodes: int, minor: str) -> list[str]:
    reference = next(run for run in runs if run.template == REFERENCE)
    header = (
        "template",
        "pods",
        "bound",
        "pods/s",
        "x no-selector",
        "p50 s",
        "p99 s",
        "created in s",
        "claims/s",
        "allocated/s",
    )
    rows = [
        (
            run.template,
            str(run.pods),
            str(run.bound),
            f"{run.pods_per_second:.1f}",
            f"{run.pods_per_second / reference.pods_per_second:.2f}x",
            f"{run.p50_seconds:.2f}",
            f"{run.p99_seconds:.2f}",
            f"{run.creation_seconds:.1f}",
            f"{run.claims_per_second:.1f}",
            f"{run.allocations_per_second:.1f}",
        )
        for run in runs
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [f"{nodes} stand-in 8-GPU nodes, {ib_nodes} with InfiniBand; Kubernetes {minor} scheduler", ""]
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in [header, *rows]]
    lines.append("")
    if reference.bound < reference.pods:
        lines.append(
            f"FAIL  {REFERENCE}: {reference.pods - reference.bound} pods never bound ({reference.unbound_why}); "
            "the ratios mean nothing"
        )
    for run in runs:
        if run.template == REFERENCE:
            continue
        ratio = run.pods_per_second / reference.pods_per_second
        outcome = "PASS" if ratio >= TARGET and run.bound == run.pods else "FAIL"
        unbound = "" if run.bound == run.pods else f"; {run.pods - run.bound} pods never bound ({run.unbound_why})"
        lines.append(f"{outcome}  {run.template}: {ratio:.2f}x the no-selector rate (target >= {TARGET}x){unbound}")
    return lines


UNRESPONSIVE = re.compile(r'Forcing (\S+) watcher close due to unresponsiveness: key: "([^"]*)", labels: "([^"]*)"')


def unresponsive_watches(apiserver_log: str) -> Counter[str]:
    """Watches the API server's watch cache closed because their client did not read fast enough, counted by
    resource, key and label selector (k8s.io/apiserver v0.34.12 pkg/storage/cacher/cache_watcher.go logs it at
    V(1), the control plane runs at 2; cacher.go names a watcher `key: %q, labels: %q, fields: %q`): the
    bench's own watches select `bench=<template>`, the components' informers watch a whole resource."""
    closed: Counter[str] = Counter()
    for line in apiserver_log.splitlines():
        if "watcher close due to unresponsiveness" in line:
            found = UNRESPONSIVE.search(line)
            closed[f"{found[1]} {found[2]}" + (f" {found[3]}" if found[3] else "") if found else line[-160:]] += 1
    return closed


def client_flags(qps: int) -> tuple[str, ...]:
    """A component's --kube-api-qps and --kube-api-burst, both `qps` as scheduler_perf sets its one client; none
    for 0 (the component's own defaults)."""
    return (f"--kube-api-qps={qps}", f"--kube-api-burst={qps}") if qps else ()


def main(argv: Sequence[str] | None = None) -> int:
    minors = control_plane_mod._build.kube_minors()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--pods", type=positive, default=200, help="pods per template, fewer where the nodes hold fewer"
    )
    parser.add_argument(
        "--nodes",
        type=at_least(2, "the node count"),
        default=100,
        help="stand-in 8-GPU nodes, half with InfiniBand (2 or more)",
    )
    parser.add_argument(
        "--kube-minor",
        action="append",
        choices=minors,
        help=f"a Kubernetes minor to measure on (repeatable; default: {minors[0]} and {minors[-1]})",
    )
    parser.add_argument(
        "--controller-manager-qps",
        type=at_least(0, "a QPS"),
        default=CLIENT_QPS,
        help=f"kube-controller-manager's --kube-api-qps and --kube-api-burst (default {CLIENT_QPS}, scheduler_perf's; "
        "0: its own, 20 and 30, which its claim controller's two writes a pod hold to 10 pods a second)",
    )
    parser.add_argument(
        "--scheduler-qps",
        type=at_least(0, "a QPS"),
        default=CLIENT_QPS,
        help=f"kube-scheduler's --kube-api-qps and --kube-api-burst (default {CLIENT_QPS}, scheduler_perf's; "
        "0: its own, 50 and 100, which its two to three writes a pod hold to about 20 pods a second)",
    )
    parser.add_argument("--template", action="append", help="measure only this built-in template (repeatable)")
    parser.add_argument(
        "--no-anchor",
        dest="anchor",
        action="store_false",
        help=f"skip the anchor (upstream's scheduler_perf {scheduler_perf.TEST_CASE}, built from the same release)",
    )
    parser.add_argument(
        "--anchor-workload",
        type=_workload_name,
        default=None,
        help=f"the anchor's workload of {scheduler_perf.TEST_CASE} (default {scheduler_perf.DEFAULT_WORKLOAD})",
    )
    args = parser.parse_args(argv)
    # The reference is always measured; naming it alone measures nothing else.
    measurable = [REFERENCE, *sorted(claim_template_specs(bench_stack().claims))]
    for name in args.template or ():
        if name not in measurable:
            # Unchecked, a misspelt name measured the reference alone and reported every target met.
            parser.error(f"--template {name!r} is not a built-in template; one of: {', '.join(measurable)}")
    if args.anchor_workload is not None and not args.anchor:
        # Unchecked, the workload was dropped without a word: no anchor ran.
        parser.error(f"--anchor-workload {args.anchor_workload!r} names the anchor's workload; --no-anchor skips it")
    workload = args.anchor_workload or scheduler_perf.DEFAULT_WORKLOAD
    chosen = args.kube_minor or sorted({minors[0], minors[-1]})
    if len(set(chosen)) < len(chosen):
        # Unchecked, a minor named twice was measured twice, its report file written over.
        parser.error(f"--kube-minor: {', '.join(chosen)} names a minor twice")
    if args.anchor:
        for minor in chosen:
            # Checked here, not after the control plane's minutes: a name scheduler_perf lacks matched nothing.
            known = scheduler_perf.workloads(minor)
            if known is not None and workload not in known:
                parser.error(
                    f"--anchor-workload {workload!r}: Kubernetes {minor}'s {scheduler_perf.TEST_CASE} has no such "
                    f"workload; one of: {', '.join(known)}"
                )

    def measure() -> int:
        for minor in chosen:
            measure_on(
                minor,
                args.pods,
                args.nodes,
                controller_manager_qps=args.controller_manager_qps,
                scheduler_qps=args.scheduler_qps,
                only=args.template,
                anchor_workload=workload if args.anchor else None,
            )
        return 0

    return run_interruptible("e2e/dra/bench_allocation.py", measure)


def _workload_name(text: str) -> str:
    """An argparse `type`: a scheduler_perf workload name (letters, digits, `_`, `-`). It goes into the test
    binary's `-test.bench` pattern, where `.*` or `a|b` would run other workloads than the one measured."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", text):
        raise argparse.ArgumentTypeError(f"{text!r}: a workload name is ASCII letters, digits, '_' and '-'")
    return text


def bench_stack() -> StackConfig:
    """prod with the one template of each selector kind: the templates every run measures come from it."""
    raw = {**SCENARIOS["prod"].raw_config(), USER_TEMPLATES_KEY: json.dumps(SELECTOR_TEMPLATES)}
    return parse_stack_config(program_config(raw), "prod")


def measure_on(
    minor: str,
    pods_per_template: int,
    nodes: int,
    *,
    controller_manager_qps: int = CLIENT_QPS,
    scheduler_qps: int = CLIENT_QPS,
    only: Sequence[str] | None = None,
    anchor_workload: str | None = scheduler_perf.DEFAULT_WORKLOAD,
) -> None:
    config = bench_stack()
    groups = {group.name: group for group in config.gpu_node_groups}
    tolerations = tolerations_for(t for group in groups.values() for t in group.taints)
    builtins = claim_template_specs(config.claims)
    templates = {
        REFERENCE: REFERENCE_SPEC,
        **{name: spec for name, spec in builtins.items() if name in (only or builtins)},
    }
    with control_plane_mod.ControlPlane(
        quiet=True,
        kube_minor=minor,
        controller_manager_flags=client_flags(controller_manager_qps),
        scheduler_flags=client_flags(scheduler_qps),
    ) as plane:
        kube = Kube(str(plane.kubeconfig))
        for device_class in device_classes():
            kube.create(device_class)
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        wait_for("the default service account", lambda: kube.get("v1", "ServiceAccount", "default", NAMESPACE))
        ib_nodes = create_nodes(kube, groups, nodes, config.driver.chart)
        kubeconfig = str(plane.kubeconfig)
        run_template(kube, kubeconfig, "warm-up", REFERENCE_SPEC, WARM_UP_PODS, tolerations)
        runs = []
        for template, spec in templates.items():
            pods = min(pods_per_template, capacity(template, nodes, ib_nodes))
            runs.append(run_template(kube, kubeconfig, template, spec, pods, tolerations))
            print(
                f"{minor} {template}: {runs[-1].bound}/{pods} bound, {runs[-1].pods_per_second:.1f} pods/s, "
                f"watches opened again {runs[-1].watch_restarts} times"
                + (f" (last: {runs[-1].watch_ended_by})" if runs[-1].watch_restarts else ""),
                flush=True,
            )
        kube.close()
        closed = unresponsive_watches(Path(plane.logs["kube-apiserver"]).read_text(errors="replace"))
        print(
            f"{minor}: the API server closed {closed.total()} watches as too slow to read"
            + "".join(f"; {count}x {watcher}" for watcher, count in closed.most_common(5)),
            flush=True,
        )
    # After the control plane is gone, so that the two never share the machine's cores.
    anchor: scheduler_perf.Throughput | str | None = None
    if anchor_workload:
        try:
            anchor, seconds = scheduler_perf.run_anchor(
                minor, anchor_workload, keep=REPORT_DIR / f"scheduler_perf-{minor}.json"
            )
            print(f"{minor} anchor {anchor.name}: {anchor.average:.1f} pods/s ({seconds:.0f} s)", flush=True)
        except scheduler_perf.AnchorError as error:
            anchor = str(error)
    print(f"kube-controller-manager --kube-api-qps/--kube-api-burst {controller_manager_qps or 'its defaults (20/30)'}")
    print(f"kube-scheduler --kube-api-qps/--kube-api-burst {scheduler_qps or 'its defaults (50/100)'}")
    print("\n".join(report(runs, nodes, ib_nodes, minor)))
    reference = next(run for run in runs if run.template == REFERENCE)
    if anchor is not None:
        print(scheduler_perf.verdict(reference.pods_per_second, anchor, TARGET))
    REPORT_DIR.mkdir(parents=True, exist_ok=True)
    report_data = {
        "kube_minor": minor,
        "nodes": nodes,
        "ib_nodes": ib_nodes,
        "controller_manager_qps": controller_manager_qps,
        "scheduler_qps": scheduler_qps,
        "runs": [asdict(r) for r in runs],
        "anchor": asdict(anchor) if isinstance(anchor, scheduler_perf.Throughput) else anchor,
    }
    (REPORT_DIR / f"allocation-{minor}.json").write_text(json.dumps(report_data))


if __name__ == "__main__":
    sys.exit(main())
