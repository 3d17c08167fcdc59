"""What every stack must show through the real CLI; the test modules call these in lifecycle order."""

from __future__ import annotations

import base64
from typing import Any

from cli_stack import CliStack, summary_counts
from dra_checks import check_templates
from dra_kube import Kube, wait_for
from dra_stack import probe, release, watch_allocation

POLICY_PACK = ("--policy-pack", "policies")
RELEASE = "kubernetes:helm.sh/v3:Release"
# Helm installs the files of a chart's crds/ directory but never upgrades or deletes them
# (https://helm.sh/docs/chart_best_practices/custom_resource_definitions/), so they outlive `destroy`.
HELM_KEEPS = {"CustomResourceDefinition"}


def kubernetes_objects(stack: CliStack) -> list[dict[str, Any]]:
    """The stack's own Kubernetes objects from the CLI's state: kind, apiVersion, name, namespace."""
    objects = []
    for resource in stack.resources():
        kind = resource["type"]
        if not kind.startswith("kubernetes:") or kind == RELEASE or kind.startswith("kubernetes:yaml"):
            continue
        outputs = resource.get("outputs") or {}
        metadata = outputs.get("metadata") or {}
        objects.append(
            {
                "apiVersion": outputs["apiVersion"],
                "kind": outputs["kind"],
                "name": metadata["name"],
                "namespace": metadata.get("namespace"),
            }
        )
    return objects


def release_objects(kube: Kube, stack: CliStack) -> list[dict[str, Any]]:
    """What the stack's Helm releases made, found by Helm's ownership annotation on DaemonSets, Deployments and
    DeviceClasses (the objects the DRA path depends on)."""
    names = {r["outputs"]["name"] for r in stack.resources() if r["type"] == RELEASE}
    found = []
    for api_version, kind in (
        ("apps/v1", "DaemonSet"),
        ("apps/v1", "Deployment"),
        ("resource.k8s.io/v1", "DeviceClass"),
    ):
        for item in kube.list(api_version, kind):
            annotations = item["metadata"].get("annotations") or {}
            if annotations.get("meta.helm.sh/release-name") in names:
                found.append(
                    {
                        "apiVersion": api_version,
                        "kind": kind,
                        "name": item["metadata"]["name"],
                        "namespace": item["metadata"].get("namespace"),
                        "release": annotations["meta.helm.sh/release-name"],
                    }
                )
    return found


def check_preview_passes_the_pack(stack: CliStack) -> str:
    result = stack.ok("preview", *POLICY_PACK)
    counts = summary_counts(result.out)
    assert counts.get("create", 0) >= 5, f"the preview plans too little: {counts}\n{result}"
    return result.text


def check_up_creates_everything(stack: CliStack, kube: Kube, repository_requests: list[str]) -> dict[str, Any]:
    result = stack.ok("up", "--yes", "--skip-preview", *POLICY_PACK)
    assert summary_counts(result.out).get("created", 0) >= 5, str(result)
    objects = kubernetes_objects(stack)
    missing = [o for o in objects if kube.get(o["apiVersion"], o["kind"], o["name"], o["namespace"]) is None]
    assert not missing, f"objects the CLI reports created are not on the API server: {missing}"
    releases = [r for r in stack.resources() if r["type"] == RELEASE]
    assert releases, "the stack installed no Helm release"
    for helm_release in releases:
        status = (helm_release["outputs"].get("status") or {}).get("status")
        assert status == "deployed", f"release {helm_release['outputs'].get('name')}: status {status}"
    charts = {r["outputs"]["chart"].rsplit("/", 1)[-1] for r in releases}
    fetched = [path for path in repository_requests if path.endswith(".tgz")]
    for chart in charts:
        assert any(path.lstrip("/").startswith(chart + "-") for path in fetched), f"{chart} was not pulled: {fetched}"
    made = release_objects(kube, stack)
    classes = {o["name"] for o in made if o["kind"] == "DeviceClass"}
    assert "gpu.nvidia.com" in classes, f"the DRA driver chart made no gpu.nvidia.com DeviceClass: {made}"
    return {"objects": objects, "release_objects": made}


def check_kubelet_plugin_ready(stack: CliStack, kube: Kube) -> None:
    """The chart's kubelet-plugin DaemonSet, scheduled by the real DaemonSet controller and scheduler on every GPU node."""
    namespace = stack.deployed.config.driver.namespace
    (plugin,) = [d for d in kube.list("apps/v1", "DaemonSet", namespace) if "kubelet-plugin" in d["metadata"]["name"]]
    status = plugin.get("status") or {}
    gpu_nodes = len(stack.deployed.gpu_nodes())
    assert status.get("desiredNumberScheduled") == gpu_nodes and status.get("numberReady") == gpu_nodes, (
        f"{namespace}/{plugin['metadata']['name']} status {status}, expected {gpu_nodes} GPU nodes"
    )


def check_no_changes(stack: CliStack) -> None:
    result = stack.pulumi("preview", "--expect-no-changes", "--diff", *POLICY_PACK)
    assert result.code == 0, f"a second preview right after `up` plans changes (a perpetual diff): {result}"


def check_claims_allocated(stack: CliStack, kube: Kube) -> dict[str, Any]:
    """Every template the CLI created gets a claim allocated and bound by the real scheduler; samples are placed."""
    deployed = stack.deployed
    templates = [o for o in kubernetes_objects(stack) if o["kind"] == "ResourceClaimTemplate"]
    samples = [o for o in kubernetes_objects(stack) if o["kind"] == "Pod"]
    placed = {}
    for pod in samples:
        template = kube.pod(pod["namespace"], pod["name"])["spec"]["resourceClaims"][0]["resourceClaimTemplateName"]
        placed[pod["name"]] = watch_allocation(kube, pod["namespace"], pod["name"], template)
    problems = [f"{name}: {p.problem}" for name, p in placed.items() if p.problem]
    assert not problems, "\n".join(problems)
    for name, result in placed.items():
        allowed = deployed.scenario.sample_pods.get(name)
        assert allowed is None or result.group in allowed, f"sample pod {name} ran on {result.group}, not {allowed}"
    # The samples hold their devices until their claims are gone too (dev's node has one GPU); then probes,
    # one after the other, get what is free.
    for result in placed.values():
        release(kube, result.namespace, result.pod)
    probes = {t["name"]: probe(kube, deployed, t["name"], namespace=t["namespace"]) for t in templates}
    check_templates(deployed, probes)
    return {name: p.group for name, p in probes.items()}


def check_secrets_stay_secret(stack: CliStack) -> None:
    outputs = stack.ok("stack", "output", "--json").out
    assert '"kubeconfig": "[secret]"' in outputs, outputs
    client_key = next(line for line in stack.kubeconfig.splitlines() if "client-key-data" in line)
    key_data = client_key.split(":", 1)[1].strip().strip('",')
    assert base64.b64decode(key_data)
    stack_file = (stack.project / f"Pulumi.{stack.name}.yaml").read_text()
    assert key_data not in stack_file and "secure:" in stack_file, "the kubeconfig is in the stack file in clear"
    exported = stack.ok("stack", "export").out
    assert key_data not in exported, "the kubeconfig's client key is in the state in clear"
    for argv, result in stack.history:
        assert key_data not in result.text, f"`pulumi {' '.join(argv[:3])}` printed the client key"


def check_destroy_removes_everything(stack: CliStack, kube: Kube) -> None:
    owned = kubernetes_objects(stack)
    before = owned + release_objects(kube, stack)
    result = stack.ok("destroy", "--yes")
    assert summary_counts(result.out).get("deleted", 0) >= len(owned), str(result)

    def remaining() -> list[dict[str, Any]]:
        return [
            o
            for o in before
            if o["kind"] not in HELM_KEEPS and kube.get(o["apiVersion"], o["kind"], o["name"], o["namespace"])
        ]

    wait_for("the stack's objects to be gone after `pulumi destroy`", lambda: not remaining(), explain=remaining)
