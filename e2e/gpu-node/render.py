#!/usr/bin/env python3
"""Write what the GPU node runs, for each driver line, from the stack's own plan and the vendored chart.

    venv/bin/python e2e/gpu-node/render.py --out DIR [--vendor ../shared/vendor] [--helm helm]

For each line (LINES: the dev stack's nvidia-dra-driver-gpu 25.12.0, and the kubernetes-sigs
dra-driver-nvidia-gpu line through the stack variant Pulumi.gpunode-sigs.yaml beside this file) it
runs `tools.plan` on the stack, renders the vendored chart with the Helm values that plan wrote
(`helm template`, as the stack's Helm release would install it), and writes DIR/<line>/:

- chart.json: every object the chart renders (DaemonSet, RBAC, DeviceClasses, admission policies), in order;
- samples.json: the plan's sample namespace, claim templates and pods, with only the pod's image and
  command replaced (SAMPLE_IMAGE and SAMPLE_COMMAND below) and a second pod for the by-product template;
- node.json: the labels the stack gives the GPU group's nodes (components.labels.gpu_node_labels),
  the chart's plugin image reference and the release namespace.

Nothing here talks to a cluster; node.py applies these on the GPU machine.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from components.config.stack import parse_stack_config  # noqa: E402
from components.labels import gpu_node_labels  # noqa: E402
from components.model import StackConfig  # noqa: E402
from tools.plan.stack_source import read_stack_source  # noqa: E402

KUBE_VERSION = "1.34.12"
# The sample pod's image (nvidia/cuda:13.1.1-runtime-ubuntu24.04) cannot be pulled on the GPU machine: node.py
# builds this one there from the machine's own files (sh, sleep, ls, ldconfig, cuda-check).
SAMPLE_IMAGE = "example.local/nebius-dra/gpu-node-workload:1"
# The sample's own `nvidia-smi && sleep infinity`, with the UUID listing and the CUDA check in front.
SAMPLE_COMMAND = ["sh", "-c", "nvidia-smi -L && cuda-check && nvidia-smi && sleep infinity"]
# The first line the plan writes in a values file, e.g. "# Helm release NS/NAME: chart oci://.../CHART, version V[, from URL]".
HELM_HEADER = re.compile(r"^# Helm release (\S+)/(\S+): chart (?:\S*/)?([^/\s]+), version ([^,\s]+)")


@dataclass(frozen=True)
class Line:
    name: str
    stack: str
    stack_file: Path | None
    # The github.com/NVIDIA/nvidia-container-toolkit version the driver's go.mod requires at its tag: its
    # nvidia-cdi-hook is what the upstream image ships and what the CDI spec's hooks run.
    cdi_hook: str


LINES = (
    Line("25.12.0", "dev", None, "1.18.2"),
    Line("0.4.1", "gpunode-sigs", HERE / "Pulumi.gpunode-sigs.yaml", "1.19.1"),
)


def plan(line: Line, out: Path) -> Path:
    """Runs the real `tools.plan` and returns the folder of YAML it wrote for the stack."""
    source = ["--stack-file", str(line.stack_file)] if line.stack_file else ["--stack", line.stack]
    command = [sys.executable, "-m", "tools.plan", *source, "--format", "json", "--out", str(out)]
    proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"render: {' '.join(command)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return out / line.stack


def helm_release(plan_dir: Path) -> tuple[Path, str, str, str, str]:
    """(values file, namespace, release, chart, version) of the DRA driver release the plan wrote."""
    for values in sorted((plan_dir / "helm").glob("*/*.values.yaml")):
        match = HELM_HEADER.match(values.read_text().splitlines()[0])
        if match and match.group(3) in ("nvidia-dra-driver-gpu", "dra-driver-nvidia-gpu"):
            namespace, release, chart, version = match.groups()
            return values, namespace, release, chart, version
    sys.exit(f"render: no DRA driver Helm values under {plan_dir / 'helm'}")


def helm_template(helm: str, vendor: Path, values: Path, namespace: str, release: str, chart: str, version: str):
    archive = vendor / "charts" / f"{chart}-{version}.tgz"
    if not archive.is_file():
        sys.exit(f"render: the vendored chart {archive} is missing")
    command = [helm, "template", release, str(archive), "--namespace", namespace, "--kube-version", KUBE_VERSION]
    proc = subprocess.run([*command, "-f", str(values)], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"render: helm template failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return [doc for doc in yaml.safe_load_all(proc.stdout) if doc], command


def plugin_image(objects: list[dict[str, Any]]) -> str:
    for obj in objects:
        if obj.get("kind") == "DaemonSet" and obj["metadata"]["name"].endswith("kubelet-plugin"):
            return str(obj["spec"]["template"]["spec"]["containers"][0]["image"])
    sys.exit("render: the chart rendered no kubelet-plugin DaemonSet")


def samples(plan_dir: Path) -> dict[str, Any]:
    def load(path: str) -> dict[str, Any]:
        return dict(yaml.safe_load((plan_dir / "kubernetes" / path).read_text()))

    pod = load("dra-samples/pod-gpu-workload.yaml")
    container = pod["spec"]["containers"][0]
    original = {"image": container["image"], "command": container["command"]}
    container["image"], container["command"] = SAMPLE_IMAGE, SAMPLE_COMMAND
    by_product = copy.deepcopy(pod)
    by_product["metadata"]["name"] = "gpu-workload-by-product"
    by_product["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] = "gpu-by-product"
    return {
        "namespace": load("_cluster/namespace-dra-samples.yaml"),
        "templates": [
            load("dra-samples/resourceclaimtemplate-gpu.yaml"),
            load("dra-samples/resourceclaimtemplate-gpu-by-product.yaml"),
        ],
        "pods": [pod, by_product],
        "replaced": {"original": original, "image": SAMPLE_IMAGE, "command": SAMPLE_COMMAND},
    }


def stack_config(line: Line) -> StackConfig:
    raw = read_stack_source(line.stack, line.stack_file).values
    prefix = "nebius-dra:"
    return parse_stack_config({k[len(prefix) :]: v for k, v in raw.items() if k.startswith(prefix)}, line.stack)


def node_labels(config: StackConfig) -> dict[str, str]:
    group = config.gpu_node_groups[0]
    return gpu_node_labels(group.name, group.preinstalled_driver, group.labels)


def render(line: Line, out: Path, vendor: Path, helm: str) -> None:
    with tempfile.TemporaryDirectory(prefix="gpu-node-plan-") as tmp:
        plan_dir = plan(line, Path(tmp))
        values, namespace, release, chart, version = helm_release(plan_dir)
        config = stack_config(line)
        objects, command = helm_template(helm, vendor, values, namespace, release, chart, version)
        folder = out / line.name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "values.yaml").write_text(values.read_text())
        (folder / "chart.json").write_text(json.dumps(objects, indent=1) + "\n")
        (folder / "samples.json").write_text(json.dumps(samples(plan_dir), indent=1) + "\n")
        meta = {
            "line": line.name,
            "stack": line.stack,
            "chart": chart,
            "version": version,
            "release": release,
            "namespace": namespace,
            "plugin_image": plugin_image(objects),
            "cdi_hook": line.cdi_hook,
            "node_labels": node_labels(config),
            # The verifier's gpu-metrics step needs the exporter, which the machine cannot run (no image).
            "gpu_metrics": config.observability.enabled,
            "helm_template": [
                os.path.basename(command[0]),
                *command[1:3],
                f"{chart}-{version}.tgz",
                *command[4:],
                "-f",
                f"{release}.values.yaml",
            ],
        }
        (folder / "node.json").write_text(json.dumps(meta, indent=1) + "\n")
        print(f"render: {folder}: {len(objects)} chart objects, image {meta['plugin_image']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--vendor", type=Path, default=Path(os.environ.get("NEBIUS_DRA_E2E_VENDOR", ROOT.parent / "shared" / "vendor"))
    )
    parser.add_argument("--helm", default="helm")
    args = parser.parse_args()
    for line in LINES:
        render(line, args.out, args.vendor, args.helm)
    return 0


if __name__ == "__main__":
    sys.exit(main())
