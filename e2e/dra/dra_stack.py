"""One stack on the e2e control plane: its plan's objects applied, its nodes and devices standing in, probe pods.

`deploy` builds what `pulumi up` plus Nebius plus the NVIDIA chart would leave in a cluster, as far
as an API server can hold it; `teardown` empties the cluster again so the next stack starts from
nothing (the DeviceClasses, which every stack shares, stay). `probe` runs one pod that claims from one
template and reports where the scheduler put it and what it was given; `unschedulable` runs one
that must never be placed and reports why not, in the scheduler's words.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from dra_fakes import create_stack_nodes, dranet_daemonset, kubelet_plugin_pod, running_status
from dra_kube import RESOURCE_API, WAIT, Kube, Obj, api_message, claim_names, unschedulable_message, wait_for
from dra_scenarios import Scenario

from components.dra_constants import NODE_GROUP_LABEL
from components.labels import tolerations_for
from components.model import GpuNodeGroupConfig, StackConfig

PROBE_IMAGE = "registry.k8s.io/pause:3.10"  # never pulled: no kubelet runs it
PROBE_LABEL = ("app.kubernetes.io/part-of", "nebius-dra-e2e")
UNSCHEDULABLE_GRACE = 20.0  # an expected-to-fit probe that stays unschedulable this long is reported, not waited out
HOLD = 3.0  # how long an unschedulable pod is watched after the verdict, to show it stays unplaced


@dataclass
class Applied:
    path: str
    kind: str
    name: str
    namespace: str | None
    error: str | None = None  # the API server's message when it refused the object
    differences: list[str] = field(default_factory=list)  # applied fields the stored object does not hold as sent


@dataclass
class HelmRelease:
    path: str
    namespace: str
    release: str
    chart: str
    version: str
    values: dict[str, Any]


@dataclass
class Deployed:
    scenario: Scenario
    config: StackConfig
    plan_dir: Path
    nodes: dict[str, str | None] = field(default_factory=dict)  # node -> GPU group (None: a system node)
    applied: list[Applied] = field(default_factory=list)
    helm: list[HelmRelease] = field(default_factory=list)
    plugin_pods: dict[str, str] = field(default_factory=dict)  # GPU node -> kubelet plugin pod
    dranet: bool = False
    seconds: float = 0.0

    @property
    def claim_namespace(self) -> str:
        return self.config.claims.namespace

    def gpu_nodes(self, group: str | None = None) -> list[str]:
        return [n for n, g in self.nodes.items() if g is not None and (group is None or g == group)]

    def group(self, name: str) -> GpuNodeGroupConfig:
        return next(g for g in self.config.gpu_node_groups if g.name == name)

    def tolerations(self) -> list[dict[str, str]]:
        """What the stack's gpu-workload tolerates: every GPU group's taints."""
        return tolerations_for(t for g in self.config.gpu_node_groups for t in g.taints)

    def manifests(self) -> dict[str, Obj]:
        return {a.path: yaml.safe_load((self.plan_dir / a.path).read_text()) for a in self.applied}


def differences(sent: Any, stored: Any, path: str = "") -> list[str]:
    """Where the stored object does not hold what was applied: dropped fields, changed values, other list lengths."""
    if isinstance(sent, Mapping):
        if not isinstance(stored, Mapping):
            return [f"{path or '.'}: sent a map, stored {stored!r}"]
        found = []
        for key, value in sent.items():
            if key not in stored:
                found.append(f"{path}.{key}: dropped by the API server")
            else:
                found.extend(differences(value, stored[key], f"{path}.{key}"))
        return found
    if isinstance(sent, list):
        if not isinstance(stored, list):
            return [f"{path}: sent a list, stored {stored!r}"]
        if len(stored) == len(sent):
            return [
                d for i, (a, b) in enumerate(zip(sent, stored, strict=True)) for d in differences(a, b, f"{path}[{i}]")
            ]
        # Admission may append items (DefaultTolerationSeconds adds two tolerations to every pod): then
        # every sent item must still be there, as sent.
        return [
            f"{path}[{i}]: {item!r} is not among the stored items {stored!r}"
            for i, item in enumerate(sent)
            if not any(not differences(item, candidate) for candidate in stored)
        ]
    return [] if sent == stored else [f"{path}: sent {sent!r}, stored {stored!r}"]


def read_helm_values(plan_dir: Path) -> list[HelmRelease]:
    """`helm/<ns>/<release>.values.yaml`, headed `# Helm release ns/name: chart C, version V, from R`."""
    releases = []
    for path in sorted((plan_dir / "helm").glob("*/*.values.yaml")):
        text = path.read_text()
        header = text.splitlines()[0]
        where, _, origin = header.removeprefix("# Helm release ").partition(": ")
        namespace, _, release = where.partition("/")
        parts = dict(part.split(" ", 1) for part in origin.split(", ") if " " in part)
        releases.append(
            HelmRelease(
                str(path.relative_to(plan_dir)),
                namespace,
                release,
                parts.get("chart", "?"),
                parts.get("version", "?"),
                yaml.safe_load(text) or {},
            )
        )
    return releases


def _apply_order(path: Path, manifest: Mapping[str, Any]) -> tuple[int, str]:
    kind = manifest.get("kind")
    rank = 0 if kind == "Namespace" else 3 if kind == "Pod" else 1 if path.parent.name == "_cluster" else 2
    return rank, str(path)


def ensure_namespace(kube: Kube, name: str, labels: Mapping[str, str] | None = None) -> None:
    """A namespace as `helm install --create-namespace` (or a test) makes it, and its default ServiceAccount.

    Pods are refused until the serviceaccount controller has created `default` in the namespace.
    """
    if kube.get("v1", "Namespace", name) is None:
        kube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels or {})}})
    wait_default_service_account(kube, name)


def wait_default_service_account(kube: Kube, namespace: str) -> None:
    wait_for(
        f"ServiceAccount {namespace}/default (the serviceaccount controller makes it; pods are refused until then)",
        lambda: kube.get("v1", "ServiceAccount", "default", namespace) is not None,
    )


def apply_plan(kube: Kube, deployed: Deployed) -> None:
    """Server-side apply of every object the plan wrote, namespaces first and pods last (pods name templates)."""
    kube_dir = deployed.plan_dir / "kubernetes"
    files = [(p, yaml.safe_load(p.read_text())) for p in kube_dir.rglob("*.yaml")]
    for path, manifest in sorted(files, key=lambda item: _apply_order(*item)):
        metadata = manifest.get("metadata", {})
        entry = Applied(
            str(path.relative_to(deployed.plan_dir)), manifest["kind"], metadata.get("name"), metadata.get("namespace")
        )
        deployed.applied.append(entry)
        if entry.kind == "Pod":
            wait_default_service_account(kube, entry.namespace)
        try:
            stored = kube.apply(manifest)
        except Exception as error:  # the API server's refusal, kept for the acceptance test to report
            entry.error = api_message(error)
            continue
        entry.differences = differences(manifest, stored)


def start_driver_stand_ins(kube: Kube, deployed: Deployed) -> None:
    """The NVIDIA chart's kubelet plugin pods (placed by the scheduler, then Running) and Nebius's dranet."""
    driver = next((r for r in deployed.helm if r.namespace == deployed.config.driver.namespace), None)
    if driver is None:
        raise AssertionError(f"the plan has no Helm release in the driver namespace {deployed.config.driver.namespace}")
    for node in deployed.gpu_nodes():
        pod = kubelet_plugin_pod(node, driver.namespace, driver.release, driver.version, driver.values)
        kube.create(pod)
        deployed.plugin_pods[node] = pod["metadata"]["name"]
    for node, name in deployed.plugin_pods.items():
        wait_for(
            f"the scheduler to place kubelet plugin pod {name} on {node} (nodeSelector and tolerations from the plan's "
            f"values of release {driver.namespace}/{driver.release})",
            lambda name=name: (kube.pod(driver.namespace, name) or {}).get("spec", {}).get("nodeName"),
            explain=lambda name=name: kube.pod_story(driver.namespace, name),
        )
        pod = kube.pod(driver.namespace, name)
        assert pod["spec"]["nodeName"] == node, f"{name} landed on {pod['spec']['nodeName']}, not {node}"
        kube.patch("v1", "Pod", name, running_status(pod), namespace=driver.namespace, status=True)
    if deployed.config.infiniband_groups:
        labelled = sum(1 for n, g in deployed.nodes.items() if g and deployed.group(g).infiniband)
        manifest, status = dranet_daemonset(labelled)
        kube.create(manifest)
        kube.patch("apps/v1", "DaemonSet", "dranet", status, namespace="kube-system", status=True)
        deployed.dranet = True


def deploy(kube: Kube, deployed: Deployed) -> None:
    """Fills `deployed` as it goes, so a teardown after a failure still finds what was made."""
    started = time.monotonic()
    create_stack_nodes(kube, deployed.scenario.name, deployed.config, deployed.nodes)
    deployed.helm = read_helm_values(deployed.plan_dir)
    # Helm releases are not installed (no charts here). Their namespaces are made as the releases'
    # create_namespace would, so objects the stack puts in them can be applied.
    for release in deployed.helm:
        ensure_namespace(kube, release.namespace)
    apply_plan(kube, deployed)
    start_driver_stand_ins(kube, deployed)
    deployed.seconds = time.monotonic() - started


KUBERNETES_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def teardown(kube: Kube) -> None:
    """Back to an empty cluster, whatever a stack or a failed test left: every namespace but Kubernetes' own
    (pods first, with a zero grace period: no kubelet confirms their end), dranet, every slice, every node.
    DeviceClasses stay: every stack shares them."""
    namespaces = [
        ns["metadata"]["name"]
        for ns in kube.list("v1", "Namespace")
        if ns["metadata"]["name"] not in KUBERNETES_NAMESPACES
    ]
    for namespace in namespaces:
        for pod in kube.list("v1", "Pod", namespace):
            kube.delete("v1", "Pod", pod["metadata"]["name"], namespace, force=True)
        kube.delete("v1", "Namespace", namespace)
    kube.delete("apps/v1", "DaemonSet", "dranet", "kube-system")
    for item in kube.slices():
        kube.delete(RESOURCE_API, "ResourceSlice", item["metadata"]["name"])
    nodes = [node["metadata"]["name"] for node in kube.list("v1", "Node")]
    for node in nodes:
        kube.delete("v1", "Node", node)
    kube.wait_gone("v1", "Namespace", namespaces)
    kube.wait_gone("v1", "Node", nodes)


# ------------------------------------------------------------------------------------------ probes
@dataclass
class Probe:
    template: str
    namespace: str
    pod: str
    node: str | None = None
    group: str | None = None
    claim: str | None = None
    results: list[Obj] = field(default_factory=list)  # status.allocation.devices.results
    devices: list[Obj] = field(default_factory=list)  # the allocated devices as their slices publish them
    owners: list[str] = field(default_factory=list)  # the claim's ownerReferences, as Kind/name
    reserved_for: list[str] = field(default_factory=list)  # status.reservedFor, as Kind/name
    seconds: float = 0.0
    problem: str | None = None  # why it was not allocated, with the scheduler's words

    def attribute(self, request: str, key: str) -> list[Any]:
        """Values of `key` on the devices allocated for `request` (or `request/subrequest`)."""
        values = []
        for result, device in zip(self.results, self.devices, strict=True):
            if result["request"].split("/")[0] == request:
                value = (device.get("attributes") or {}).get(key) or {}
                values.append(next(iter(value.values()), None))
        return values


def probe_pod(
    name: str, namespace: str, template: str, tolerations: list[dict[str, str]], node_selector: Mapping[str, str] | None
) -> Obj:
    spec: Obj = {
        "restartPolicy": "Never",
        "tolerations": tolerations,
        "resourceClaims": [{"name": "devices", "resourceClaimTemplateName": template}],
        "containers": [{"name": "probe", "image": PROBE_IMAGE, "resources": {"claims": [{"name": "devices"}]}}],
    }
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {PROBE_LABEL[0]: PROBE_LABEL[1]}},
        "spec": spec,
    }


def allocated_devices(kube: Kube, results: list[Obj]) -> list[Obj]:
    slices = kube.slices()
    found = []
    for result in results:
        device = next(
            (
                d
                for s in slices
                if s["spec"]["driver"] == result["driver"] and s["spec"]["pool"]["name"] == result["pool"]
                for d in s["spec"].get("devices") or []
                if d["name"] == result["device"]
            ),
            {},
        )
        found.append(device)
    return found


def _pod_name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:5]}"[:63]


def watch_allocation(kube: Kube, namespace: str, pod_name: str, template: str, timeout: float = WAIT) -> Probe:
    """Waits for a pod's one claim to be generated and allocated and the pod bound; what happened, either way."""
    started = time.monotonic()
    result = Probe(template, namespace, pod_name)
    unschedulable_since: float | None = None
    deadline = started + timeout
    while True:
        pod = kube.pod(namespace, pod_name) or {}
        claims = claim_names(pod)
        claim = kube.claim(namespace, next(iter(claims.values()))) if claims else None
        allocation = (claim or {}).get("status", {}).get("allocation")
        node = pod.get("spec", {}).get("nodeName")
        if node and allocation:
            result.node = node
            result.group = ((kube.get("v1", "Node", node) or {}).get("metadata", {}).get("labels") or {}).get(
                NODE_GROUP_LABEL
            )
            result.claim = claim["metadata"]["name"]
            result.owners = [f"{o['kind']}/{o['name']}" for o in claim["metadata"].get("ownerReferences") or []]
            result.reserved_for = [f"{r['resource']}/{r['name']}" for r in claim["status"].get("reservedFor") or []]
            result.results = allocation["devices"]["results"]
            result.devices = allocated_devices(kube, result.results)
            result.seconds = time.monotonic() - started
            return result
        now = time.monotonic()
        unschedulable_since = unschedulable_since or now if unschedulable_message(pod) else None
        gave_up = unschedulable_since is not None and now - unschedulable_since > UNSCHEDULABLE_GRACE
        if now >= deadline or gave_up:
            result.seconds = now - started
            why = f"unschedulable for {now - unschedulable_since:.0f}s" if gave_up else f"not done after {timeout:.0f}s"
            result.problem = (
                f"pod {namespace}/{pod_name} (template {template}): {why}; "
                f"claim generated: {bool(claims)}, allocated: {bool(allocation)}, bound: {node or 'no'}\n"
                + kube.pod_story(namespace, pod_name)
            )
            return result
        time.sleep(0.2)


def release(kube: Kube, namespace: str, pod_name: str) -> None:
    """Deletes a pod at once and waits until its generated claims are gone, so their devices are free again."""
    pod = kube.pod(namespace, pod_name)
    kube.delete("v1", "Pod", pod_name, namespace, force=True)
    if pod:
        kube.wait_gone(RESOURCE_API, "ResourceClaim", claim_names(pod).values(), namespace)


def probe(
    kube: Kube,
    deployed: Deployed,
    template: str,
    *,
    namespace: str | None = None,
    node_selector: Mapping[str, str] | None = None,
    label: str = "",
    keep: bool = False,
) -> Probe:
    """A pod in the claim namespace that claims from `template` and tolerates the GPU groups' taints."""
    namespace = namespace or deployed.claim_namespace
    name = _pod_name(f"probe-{template}{label}")
    kube.create(probe_pod(name, namespace, template, deployed.tolerations(), node_selector))
    result = watch_allocation(kube, namespace, name, template)
    if not keep:
        release(kube, namespace, name)
    return result


# ------------------------------------------------------------------- extended resources (KEP-5004)
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"  # k8s.io/api resource/v1


@dataclass
class ExtendedResourcePod:
    """A pod that asks for an extended resource in its limits and names no claim: what the scheduler made of it."""

    pod: str
    namespace: str
    node: str | None = None
    claim: Obj | None = None  # the ResourceClaim the scheduler created for the pod, when it did
    status: Obj | None = None  # pod.status.extendedResourceClaimStatus
    message: str | None = None  # the scheduler's verdict when it judged the pod unschedulable
    story: str = ""


def extended_resource_claim(kube: Kube, namespace: str, pod: Mapping[str, Any]) -> Obj | None:
    """The claim the scheduler creates for a pod's extended resources: annotated, and controlled by the pod."""
    uid = pod.get("metadata", {}).get("uid")
    for claim in kube.list(RESOURCE_API, "ResourceClaim", namespace):
        metadata = claim["metadata"]
        owners = metadata.get("ownerReferences") or []
        if (metadata.get("annotations") or {}).get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true" and any(
            o.get("uid") == uid and o.get("controller") for o in owners
        ):
            return claim
    return None


def extended_resource_pod(
    kube: Kube, deployed: Deployed, resource: str, expect_bound: bool, count: int = 1
) -> ExtendedResourcePod:
    """A plain pod with `resources.limits: {resource: count}` in the claim namespace, tolerating the GPU groups' taints.

    Waited for until bound with its claim allocated (`expect_bound`), or until the scheduler's verdict and then
    watched to stay unplaced; deleted either way, and its claim waited for until gone.
    """
    namespace = deployed.claim_namespace
    name = _pod_name(f"legacy-{resource.replace('/', '-').replace('.', '-')}")
    container = {"name": "cuda", "image": PROBE_IMAGE, "resources": {"limits": {resource: str(count)}}}
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {PROBE_LABEL[0]: PROBE_LABEL[1]}},
        "spec": {"restartPolicy": "Never", "tolerations": deployed.tolerations(), "containers": [container]},
    }
    kube.create(manifest)
    result = ExtendedResourcePod(name, namespace)
    try:
        if expect_bound:

            def placed() -> bool:
                pod = kube.pod(namespace, name) or {}
                claim = extended_resource_claim(kube, namespace, pod)
                done = bool(pod.get("spec", {}).get("nodeName") and claim and claim.get("status", {}).get("allocation"))
                if done:
                    result.node, result.claim = pod["spec"]["nodeName"], claim
                    result.status = pod.get("status", {}).get("extendedResourceClaimStatus")
                return done and result.status is not None

            wait_for(
                f"the scheduler to bind pod {namespace}/{name} ({resource}: {count}) with an allocated claim",
                placed,
                explain=lambda: kube.pod_story(namespace, name),
            )
        else:
            result.message = wait_for(
                f"the scheduler to judge pod {namespace}/{name} ({resource}: {count}) unschedulable",
                lambda: unschedulable_message(kube.pod(namespace, name) or {}),
                explain=lambda: kube.pod_story(namespace, name),
            )
            time.sleep(HOLD)
            pod = kube.pod(namespace, name) or {}
            result.node = pod.get("spec", {}).get("nodeName")
            result.claim = extended_resource_claim(kube, namespace, pod)
            result.status = pod.get("status", {}).get("extendedResourceClaimStatus")
        result.story = kube.pod_story(namespace, name)
    finally:
        kube.delete("v1", "Pod", name, namespace, force=True)
        if result.claim:
            kube.wait_gone(RESOURCE_API, "ResourceClaim", [result.claim["metadata"]["name"]], namespace)
    return result


@dataclass
class Refusal:
    pod: str
    message: str  # the PodScheduled condition's message
    events: list[str]  # FailedScheduling events, as the scheduler wrote them
    story: str
    seconds: float  # from the pod's creation to the scheduler's verdict


def unschedulable(
    kube: Kube, deployed: Deployed, template: str, namespace: str, node_selector: Mapping[str, str] | None = None
) -> Refusal:
    """A pod that must never be placed: waits for the scheduler's verdict, watches it stay unplaced, deletes it."""
    name = _pod_name(f"never-{template}")
    started = time.monotonic()
    kube.create(probe_pod(name, namespace, template, deployed.tolerations(), node_selector))
    message = wait_for(
        f"the scheduler to judge pod {namespace}/{name} unschedulable (template {template})",
        lambda: unschedulable_message(kube.pod(namespace, name) or {}),
        explain=lambda: kube.pod_story(namespace, name),
    )
    seconds = time.monotonic() - started
    events = wait_for(
        f"a FailedScheduling event for pod {namespace}/{name}",
        lambda: [e["message"] for e in kube.events(namespace, "Pod", name) if e.get("reason") == "FailedScheduling"],
        explain=lambda: kube.pod_story(namespace, name),
    )
    time.sleep(HOLD)
    pod = kube.pod(namespace, name) or {}
    story = kube.pod_story(namespace, name)
    assert not pod.get("spec", {}).get("nodeName"), f"pod {name} was bound after all:\n{story}"
    for claim_name in claim_names(pod).values():
        claim = kube.claim(namespace, claim_name) or {}
        assert not claim.get("status", {}).get("allocation"), f"claim {claim_name} was allocated after all:\n{story}"
    release(kube, namespace, name)
    return Refusal(name, message, events, story, round(seconds, 1))
