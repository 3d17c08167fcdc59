"""`make bench-cli`: how long the real Pulumi CLI takes on this program's Kubernetes layer, and what it adds.

    venv/bin/python e2e/cli/bench_cli.py [--templates 200]

A benchmark, not a test. The setup is the real-CLI e2e tier's (e2e/cli/conftest.py): a local
Kubernetes control plane with the workload controllers Helm waits on, the real charts served on
127.0.0.1, the kubelet stand-in, the CLI with its Python host and Kubernetes provider built from
source. Two stacks in existing-cluster mode: dev as it is, and dev with TEMPLATES one-GPU user
claim templates (`tools/bench/fleets.py`). For each it times, in order: `pulumi preview` with the
policy pack, `pulumi up` with the pack, a second preview that must find no change, and `destroy`
(after the sample pods have ended, as the e2e tests end them).
Next to them, the program alone: one fresh process running the same config under the SDK's mock
engine (`tools/plan/mock_engine.py`). The difference between the two stacks, divided by the
resources the templates add, is the cost of one resource: in the CLI, and in the program alone;
the gap is what the engine adds per resource. Prints a table, writes build/e2e/cli-timing.json,
exits 0 (1 when a CLI command fails).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]
for path in (str(PROJECT), str(PROJECT / "e2e" / "dra"), str(HERE)):
    if path not in sys.path:
        sys.path.insert(0, path)

from chart_repository import ChartRepository  # noqa: E402
from cli_checks import POLICY_PACK, kubernetes_objects  # noqa: E402
from cli_stack import CliStack, local_config  # noqa: E402
from dra_engines import control_plane_mod, engine_build, engine_mod  # noqa: E402
from dra_kube import Kube  # noqa: E402
from dra_scenarios import SCENARIOS, Scenario  # noqa: E402
from dra_stack import release  # noqa: E402
from kubelet_stand_in import KubeletStandIn  # noqa: E402

from components.config.errors import config_key  # noqa: E402
from tools.bench.fleets import with_user_templates  # noqa: E402

REPORT_PATH = PROJECT / "build" / "e2e" / "cli-timing.json"
PHASES = ("preview", "up", "preview, no change", "destroy")
KUBECONFIG_KEY = config_key("existingClusterKubeconfig")
# Runs the program once under the mock engine in a fresh process: config from the file named by argv[1].
MOCK_RUN = """
import json, sys
from tools.plan.mock_engine import run_program
config = json.loads(open(sys.argv[1]).read())
run = run_program(sys.argv[2], config=config, secret_keys=[sys.argv[3]])
if run.error is not None:
    sys.exit(f"the program failed: {run.error}")
print(len(run.resources))
"""


@dataclass
class StackTiming:
    stack: str
    user_templates: int
    resources: int  # in the stack's state after `up`, the stack resource and providers left out
    seconds: dict[str, float]  # phase -> wall seconds of the CLI command
    program_s: float  # the program alone, fresh process, mock engine
    program_resources: int  # what the program registered under the mock engine


def say(message: str) -> None:
    print(f"[bench-cli] {message}", file=sys.stderr, flush=True)


def timed(stack: CliStack, *args: str) -> float:
    started = time.perf_counter()
    stack.ok(*args)
    return time.perf_counter() - started


def program_alone(config: dict[str, str], stack: str, workdir: Path) -> tuple[float, int]:
    config_file = workdir / f"{stack}-config.json"
    config_file.write_text(json.dumps(config))
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", MOCK_RUN, str(config_file), stack, KUBECONFIG_KEY],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"mock-engine run of {stack} failed: {done.stderr[-2000:]}")
    return elapsed, int(done.stdout.split()[-1])


def measure(scenario: Scenario, templates: int, work: Path, binaries, kube: Kube, plane, charts_url: str):
    engine = engine_mod.OfflineEngine(binaries["pulumi"].parent, root=work / f"pulumi-{scenario.name}")
    engine.env["PYTHONDONTWRITEBYTECODE"] = "1"
    engine.env.pop("VIRTUAL_ENV", None)
    try:
        stack = CliStack.prepare(scenario, work / scenario.name, engine, kube, plane.kubeconfig, charts_url)
        try:
            seconds = {}
            say(f"{scenario.name}: pulumi preview")
            seconds["preview"] = timed(stack, "preview", *POLICY_PACK)
            say(f"{scenario.name}: pulumi up")
            seconds["up"] = timed(stack, "up", "--yes", *POLICY_PACK)
            resources = len(stack.resources())
            say(f"{scenario.name}: pulumi preview --expect-no-changes")
            seconds["preview, no change"] = timed(stack, "preview", "--expect-no-changes", *POLICY_PACK)
            # The sample pods end first, as workloads do (untimed): no kubelet here ends a pod the scheduler
            # bound, and its claims keep their devices until it is gone.
            for pod in (o for o in kubernetes_objects(stack) if o["kind"] == "Pod"):
                release(kube, pod["namespace"], pod["name"])
            say(f"{scenario.name}: pulumi destroy")
            seconds["destroy"] = timed(stack, "destroy", "--yes")
        finally:
            stack.close()
    finally:
        engine.close()
    config = local_config(scenario, charts_url)
    config[KUBECONFIG_KEY] = Path(plane.kubeconfig).read_text()
    say(f"{scenario.name}: the program alone under the mock engine")
    program_s, program_resources = program_alone(config, scenario.name, work)
    return StackTiming(scenario.name, templates, resources, seconds, program_s, program_resources)


def render(timings: list[StackTiming]) -> str:
    header = f"{'stack':<14}{'resources':>10}" + "".join(f"{phase:>20}" for phase in PHASES) + f"{'program alone':>16}"
    lines = [header]
    for t in timings:
        row = f"{t.stack:<14}{t.resources:>10}" + "".join(f"{t.seconds[p]:>19.1f}s" for p in PHASES)
        lines.append(row + f"{t.program_s:>15.1f}s")
    small, large = timings
    added = large.resources - small.resources
    if added > 0:
        lines.append("")
        lines.append(f"per added resource ({added} resources: {large.user_templates} claim templates):")
        program_ms = 1000 * (large.program_s - small.program_s) / added
        for phase in PHASES:
            cli_ms = 1000 * (large.seconds[phase] - small.seconds[phase]) / added
            lines.append(f"  {phase:<20} {cli_ms:7.1f} ms in the CLI, of which the program alone {program_ms:.1f} ms")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--templates", type=int, default=200, help="user claim templates of the larger stack")
    args = parser.parse_args()
    try:
        binaries = engine_build.ensure_binaries()
    except engine_build.BuildError as err:
        print(f"[bench-cli] building the Pulumi engine failed: {err}", file=sys.stderr)
        return 1
    large = Scenario(f"dev-{args.templates}t", "dev", functools.partial(with_user_templates, count=args.templates))
    timings: list[StackTiming] = []
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="nebius-dra-bench-cli-") as tmp:
        work = Path(tmp)
        with control_plane_mod.ControlPlane(quiet=True, workload_controllers=True) as plane:
            kube = Kube(str(plane.kubeconfig))
            try:
                with (
                    ChartRepository(engine_build.vendor_dir() / "charts", work / "charts") as charts,
                    KubeletStandIn(str(plane.kubeconfig)),
                ):
                    for scenario, templates in ((SCENARIOS["dev"], 0), (large, args.templates)):
                        try:
                            timings.append(measure(scenario, templates, work, binaries, kube, plane, charts.url))
                        except AssertionError as failed:
                            print(f"[bench-cli] {scenario.name}: {failed}", file=sys.stderr)
                            return 1
            finally:
                kube.close()
    print(render(timings))
    load = os.getloadavg()
    print(f"load average {load_before[0]:.1f} before, {load[0]:.1f} after; {os.cpu_count()} CPUs")
    REPORT_PATH.parent.mkdir(parents=True, exist_ok=True)
    report = {"timings": [asdict(t) for t in timings], "load_average": [load_before[0], load[0]]}
    REPORT_PATH.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
