"""`make bench`: how long an offline plan takes, and how that grows with the fleet.

    python -m tools.bench [--runs 5]

Every measurement is a fresh Python process timed from the outside, the way `make plan`
is felt: interpreter start, imports, the program under the mock engine, policies, files.
The yardstick is the import floor, a process that only imports what the program cannot
do without (`pulumi`, `pulumi_nebius` and the `pulumi_kubernetes` modules it uses); a
plan cannot be faster than that, so the ratio to it is the program's own cost.

Generated stacks start from dev's config and replace its GPU node groups and its user
claim templates (`userClaimTemplates`) with N copies; they are built in memory and handed
to `run_program(config=...)`.

This is a benchmark, not a test: it prints PASS or FAIL per target and always exits 0.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parent.parent
IMPORT_FLOOR = (
    "import pulumi, pulumi_nebius, pulumi_kubernetes.core.v1, pulumi_kubernetes.helm.v3, pulumi_kubernetes.resource.v1"
)
CLAIM_TEMPLATES_KEY = "userClaimTemplates"
GENERATED = ((1, 0), (10, 0), (100, 0), (1, 200), (10, 20), (100, 200))
DEV_TARGET = 1.3
FLEET_TARGET = 1.5


def generated_config(gpu_groups: int, claim_templates: int) -> dict[str, str]:
    """dev's merged config with `gpu_groups` identical 8-GPU groups and `claim_templates` one-GPU templates."""
    from components.config.stack_file import load_stack_config

    config = load_stack_config("dev")
    groups = [
        {
            "name": f"g{index:03d}",
            "platform": "gpu-h200-sxm",
            "preset": "8gpu-128vcpu-1600gb",
            "driversPreset": "cuda13.0",
            "fixedNodeCount": 1,
        }
        for index in range(gpu_groups)
    ]
    config["nebius-dra:gpuNodeGroups"] = json.dumps(groups)
    if claim_templates:
        templates = [
            {
                "name": f"user-{index:03d}",
                "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}}],
            }
            for index in range(claim_templates)
        ]
        config[f"nebius-dra:{CLAIM_TEMPLATES_KEY}"] = json.dumps(templates)
    return config


def plan_generated(gpu_groups: int, claim_templates: int, out: Path) -> int:
    """The child process of a generated scenario: the same pipeline as `make plan`, JSON on stdout.

    Imported here, not at the top, so the parent process that only times children stays light.
    """
    from tools.plan.__main__ import exit_status
    from tools.plan.model import build_plan
    from tools.plan.report import render_json

    plan = build_plan("bench", config=generated_config(gpu_groups, claim_templates), out=out)
    sys.stdout.write(render_json(plan))
    return exit_status(plan)


@dataclass
class Measurement:
    label: str
    seconds: list[float]
    resources: int | None = None
    claim_templates: int | None = None
    failure: str | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.seconds) if self.seconds else float("nan")


def _count(tree: list[dict], predicate) -> int:
    return sum(predicate(node) + _count(node["children"], predicate) for node in tree)


def _failure(result: subprocess.CompletedProcess) -> str:
    """The first line of why a plan failed: the JSON document's error, or the last line of stderr."""
    if result.stdout.startswith("{"):
        return " ".join(line.strip() for line in str(json.loads(result.stdout)["error"]).splitlines())
    last_lines = result.stderr.strip().splitlines()
    return last_lines[-1] if last_lines else f"exit {result.returncode}"


def measure(label: str, command: Sequence[str], runs: int) -> Measurement:
    """Runs `command` `runs` times from PROJECT_DIR; a plan blocked by policy still counts, a crash does not."""
    measurement = Measurement(label, [])
    for _ in range(runs):
        started = time.perf_counter()
        result = subprocess.run(command, cwd=PROJECT_DIR, capture_output=True, text=True)
        measurement.seconds.append(time.perf_counter() - started)
        if result.returncode not in (0, 1):
            measurement.failure = _failure(result)
            return measurement
    if result.stdout.startswith("{"):
        tree = json.loads(result.stdout)["tree"]
        measurement.resources = _count(tree, lambda node: 1)
        measurement.claim_templates = _count(tree, lambda node: node["kind"] == "ResourceClaimTemplate")
    return measurement


def fleet_label(groups: int, templates: int) -> str:
    return f"{groups} GPU group{'s' if groups != 1 else ''}, {templates} user claim templates"


def _ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base else "-"


def _verdict(name: str, ratio: float, target: float) -> str:
    outcome = "PASS" if ratio <= target else "FAIL"
    return f"{outcome}  {name}: {ratio:.2f}x (target <= {target}x)"


def run_benchmark(runs: int) -> list[str]:
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="bench-plan-") as scratch:
        measurements = [
            measure("import floor", [python, "-c", IMPORT_FLOOR], runs),
            measure(
                "plan dev", [python, "-m", "tools.plan", "--stack", "dev", "--format", "json", "--out", scratch], runs
            ),
            measure(
                "plan prod", [python, "-m", "tools.plan", "--stack", "prod", "--format", "json", "--out", scratch], runs
            ),
        ]
        for groups, templates in GENERATED:
            command = [python, "-m", "tools.bench", "--generated", f"{groups},{templates}", "--out", scratch]
            measurements.append(measure(fleet_label(groups, templates), command, runs))
    floor = measurements[0].median
    header = ("measurement", "median s", "x import floor", "resources", "claim templates", "runs")
    rows = [
        (
            m.label,
            f"{m.median:.3f}",
            _ratio(m.median, floor),
            "-" if m.resources is None else str(m.resources),
            "-" if m.claim_templates is None else str(m.claim_templates),
            str(len(m.seconds)) if m.failure is None else f"FAILED: {m.failure}",
        )
        for m in measurements
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = [f"Python {sys.version.split()[0]}, {runs} runs each, fresh process per run, wall-clock medians", ""]
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in [header, *rows]]
    by_label = {m.label: m for m in measurements if m.failure is None}
    lines.append("")
    if "plan dev" in by_label:
        lines.append(_verdict("dev plan vs import floor", by_label["plan dev"].median / floor, DEV_TARGET))
    biggest, smallest = by_label.get(fleet_label(100, 200)), by_label.get(fleet_label(1, 0))
    if biggest and smallest:
        lines.append(_verdict(f"{biggest.label} vs 1 GPU group", biggest.median / smallest.median, FLEET_TARGET))
        if biggest.resources and smallest.resources:
            extra = biggest.resources - smallest.resources
            per_resource = (biggest.median - smallest.median) / extra * 1000
            lines.append(f"      marginal cost: {per_resource:.2f} ms for each of the {extra} extra resources")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs per measurement; the median is reported (default 5)")
    parser.add_argument("--generated", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.generated:
        groups, templates = (int(part) for part in args.generated.split(","))
        return plan_generated(groups, templates, args.out)
    print("\n".join(run_benchmark(args.runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
