"""`make bench-cli`: how long the real Pulumi CLI takes on this program's Kubernetes layer, against its CLI floor.

    venv/bin/python e2e/cli/bench_cli.py [--templates 200] [--runs 3]

A benchmark, not a test. The setup is the real-CLI e2e tier's (e2e/cli/conftest.py): a local
Kubernetes control plane with the workload controllers Helm waits on, the real charts served on
127.0.0.1, the kubelet stand-in, the CLI with its Python host and Kubernetes provider built from
source. Two stacks in existing-cluster mode: dev as it is, and dev with TEMPLATES one-GPU user
claim templates (`tools/bench/fleets.py`). For each it times a lifecycle, in order: `pulumi
preview` with the policy pack, `pulumi up` with the pack, a second preview that must find no
change, and `destroy` (after the sample pods have ended, as the e2e tests end them).

The CLI floor of each stack is the same lifecycle of a bare program that registers exactly the
program's resources (`tools/bench/cli_floor.py`, from the program's run under the mock engine),
in a project of its own with the same name, the same stack name (so the same URNs), the same
policy pack, the kubeconfig as the same secret config, on its own file backend, through the
same CLI, host and provider onto the same control plane. Before anything is timed both are
previewed (`--json`) and their steps compared; then the floor is taken up and down once
untimed (the session's first install creates the driver chart's CRDs, which Helm keeps). The
lifecycles alternate, program, floor, program, floor ..., RUNS each, so the machine's load hits
both alike; medians are reported (`x floor`, the targets' ratio), and the fastest
lifecycles' ratio beside (`x min`). Targets: the program's preview and up <= 1.10x the floor's,
for both stacks.

Next to them, the program alone: one fresh process running the same config under the SDK's mock
engine (`tools/plan/mock_engine.py`). The difference between the two stacks, divided by the
resources the templates add, is the cost of one resource: in the CLI, and in the program alone.
Prints a table and PASS or FAIL per target, writes build/e2e/cli-timing.json, exits 0 (1 when a
CLI command fails or the floor does not register what the program does).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

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

from components.config.errors import ConfigError, config_key  # noqa: E402
from components.config.raw import MAX_JSON_TEXT  # noqa: E402
from tools.bench.arguments import positive  # noqa: E402
from tools.bench.cli_floor import cli_shape, floor_program, floor_project, preview_rows, registration_differences  # noqa: E402
from tools.bench.fleets import CLAIM_TEMPLATES_KEY, with_user_templates  # noqa: E402
from tools.bench.interrupts import run_interruptible  # noqa: E402
from tools.plan.mock_engine import run_program  # noqa: E402

REPORT_PATH = PROJECT / "build" / "e2e" / "cli-timing.json"
PHASES = ("preview", "up", "preview, no change", "destroy")
TARGET_PHASES = ("preview", "up")
TARGET = 1.10
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
    program: dict[str, list[float]]  # phase -> wall seconds of the CLI command, one per lifecycle
    floor: dict[str, list[float]]  # the same for the CLI floor
    program_s: float  # the program alone, fresh process, mock engine
    program_resources: int  # what the program registered under the mock engine

    def ratio(self, phase: str) -> float:
        return statistics.median(self.program[phase]) / statistics.median(self.floor[phase])

    def fastest_ratio(self, phase: str) -> float:
        """The fastest lifecycles' ratio: what each side takes when the machine's other work lets it."""
        return min(self.program[phase]) / min(self.floor[phase])


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


def engine_for(binaries: dict[str, Path], root: Path) -> Any:
    """An offline engine whose Python host may cache bytecode, as a user's does after the first run: the
    program's ~90 modules would otherwise be compiled on every command, the floor's one file either way."""
    engine = engine_mod.OfflineEngine(binaries["pulumi"].parent, root=root)
    engine.env.pop("PYTHONDONTWRITEBYTECODE", None)
    engine.env.pop("VIRTUAL_ENV", None)
    return engine


def prepare_floor(program: CliStack, workdir: Path, engine: Any, config: dict[str, str]) -> CliStack:
    """The CLI floor's project and stack beside `program`'s: same project name and stack name (so the same URNs),
    the same policy pack and venv, the kubeconfig set as the same secret config; its program written from the
    program's run under the mock engine, which holds the kubeconfig only as its config key's name."""
    run = run_program(program.name, config=config, secret_keys=[KUBECONFIG_KEY])
    if run.error is not None:
        raise AssertionError(f"the program failed under the mock engine: {run.error}")
    shape = cli_shape(run, {KUBECONFIG_KEY: config[KUBECONFIG_KEY]})
    project = workdir / "floor"
    project.mkdir(parents=True)
    program_project = yaml.safe_load((program.project / "Pulumi.yaml").read_text())
    (project / "Pulumi.yaml").write_text(yaml.safe_dump(floor_project(program_project), sort_keys=False))
    shutil.copytree(program.project / "policies", project / "policies")
    (project / "venv").symlink_to(PROJECT / "venv", target_is_directory=True)
    (project / "__main__.py").write_text(floor_program(shape, f"stack {program.name}"))
    floor = CliStack(program.scenario, project, engine, program.kube, program.kubeconfig, program.deployed)
    floor.ok("stack", "init", program.name)
    floor.ok("config", "set", "--secret", KUBECONFIG_KEY, "--", program.kubeconfig)
    return floor


def check_same_registrations(program: CliStack, floor: CliStack) -> None:
    """Both previewed by the real CLI (untimed; their first runs, which start the host and provider cold): the
    same steps, by URN, type, parent, provider and dependencies."""
    program_rows, floor_rows = (
        preview_rows(json.loads(stack.ok("preview", "--json", *POLICY_PACK).out)) for stack in (program, floor)
    )
    differences = registration_differences(program_rows, floor_rows)
    assert not differences, "the floor does not register what the program does:\n" + "\n".join(differences)
    say(f"{program.name}: the floor previews the same {len(program_rows)} steps as the program")


def lifecycle(stack: CliStack, label: str) -> tuple[dict[str, float], int]:
    """preview, up, preview with no change, destroy: each command's wall seconds, and the resources after `up`."""
    seconds = {}
    say(f"{label}: pulumi preview")
    seconds["preview"] = timed(stack, "preview", *POLICY_PACK)
    say(f"{label}: pulumi up")
    seconds["up"] = timed(stack, "up", "--yes", *POLICY_PACK)
    resources = len(stack.resources())
    say(f"{label}: pulumi preview --expect-no-changes")
    seconds["preview, no change"] = timed(stack, "preview", "--expect-no-changes", *POLICY_PACK)
    end_pods(stack)
    say(f"{label}: pulumi destroy")
    seconds["destroy"] = timed(stack, "destroy", "--yes")
    return seconds, resources


def end_pods(stack: CliStack) -> None:
    """The sample pods end first, as workloads do (untimed): no kubelet here ends a pod the scheduler bound, and
    its claims keep their devices until it is gone."""
    for pod in (o for o in kubernetes_objects(stack) if o["kind"] == "Pod"):
        release(stack.kube, pod["namespace"], pod["name"])


def measure(
    scenario: Scenario,
    templates: int,
    runs: int,
    warm_up: bool,
    work: Path,
    binaries,
    kube: Kube,
    plane,
    charts_url: str,
) -> StackTiming:
    config = local_config(scenario, charts_url)
    config[KUBECONFIG_KEY] = Path(plane.kubeconfig).read_text()
    engines = [engine_for(binaries, work / f"pulumi-{scenario.name}{side}") for side in ("", "-floor")]
    try:
        program = CliStack.prepare(scenario, work / scenario.name, engines[0], kube, plane.kubeconfig, charts_url)
        try:
            floor = prepare_floor(program, work / scenario.name, engines[1], config)
            check_same_registrations(program, floor)
            if warm_up:
                say(f"{scenario.name}: the floor up and down once, untimed")
                floor.ok("up", "--yes", "--skip-preview")
                end_pods(floor)
                floor.ok("destroy", "--yes")
            timings: dict[str, dict[str, list[float]]] = {"program": {}, "floor": {}}
            resources = 0
            for run in range(runs):
                for side, stack in (("program", program), ("floor", floor)):
                    seconds, counted = lifecycle(stack, f"{scenario.name} {side} {run + 1}/{runs}")
                    resources = counted if side == "program" else resources
                    for phase, value in seconds.items():
                        timings[side].setdefault(phase, []).append(value)
        finally:
            program.close()
    finally:
        for engine in engines:
            engine.close()
    say(f"{scenario.name}: the program alone under the mock engine")
    program_s, program_resources = program_alone(config, scenario.name, work)
    return StackTiming(
        scenario.name, templates, resources, timings["program"], timings["floor"], program_s, program_resources
    )


def _median(values: list[float]) -> float:
    return statistics.median(values)


def render(timings: list[StackTiming]) -> str:
    header = (
        f"{'stack':<14}{'resources':>10}  {'phase':<20}{'program s':>10}{'min-max':>13}"
        f"{'floor s':>10}{'min-max':>13}{'x floor':>9}{'x min':>8}"
    )
    lines = [header]
    for t in timings:
        for index, phase in enumerate(PHASES):
            program, floor = t.program[phase], t.floor[phase]
            lines.append(
                (f"{t.stack:<14}{t.resources:>10}  " if index == 0 else " " * 26)
                + f"{phase:<20}{_median(program):>10.1f}{f'{min(program):.1f}-{max(program):.1f}':>13}"
                + f"{_median(floor):>10.1f}{f'{min(floor):.1f}-{max(floor):.1f}':>13}{t.ratio(phase):>8.2f}x"
                + f"{t.fastest_ratio(phase):>7.2f}x"
            )
    lines.append("")
    lines += [
        f"program alone (mock engine): {t.stack} {t.program_s:.1f}s ({t.program_resources} resources)" for t in timings
    ]
    small, large = timings
    added = large.resources - small.resources
    if added > 0:
        lines.append("")
        lines.append(f"per added resource ({added} resources: {large.user_templates} claim templates):")
        program_ms = 1000 * (large.program_s - small.program_s) / added
        for phase in PHASES:
            cli_ms = 1000 * (_median(large.program[phase]) - _median(small.program[phase])) / added
            floor_ms = 1000 * (_median(large.floor[phase]) - _median(small.floor[phase])) / added
            lines.append(
                f"  {phase:<20} {cli_ms:7.1f} ms in the CLI (the floor {floor_ms:.1f} ms), "
                f"of which the program alone {program_ms:.1f} ms"
            )
    lines.append("")
    for t in timings:
        for phase in TARGET_PHASES:
            verdict = "PASS" if t.ratio(phase) <= TARGET else "FAIL"
            lines.append(f"{verdict}  {t.stack} {phase} vs its CLI floor: {t.ratio(phase):.2f}x (target <= {TARGET}x)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--templates", type=positive, default=200, help="user claim templates of the larger stack (default 200)"
    )
    parser.add_argument(
        "--runs", type=positive, default=3, help="lifecycles of the program and of the floor, alternating (default 3)"
    )
    args = parser.parse_args(argv)
    # Each generated template is at least as long as the first, so past this count the JSON cannot fit: refused
    # before it is built (unchecked, --templates 100000000 built a list for minutes; more ran out of memory).
    most = MAX_JSON_TEXT // len(with_user_templates({}, 1)[f"nebius-dra:{CLAIM_TEMPLATES_KEY}"])
    if args.templates > most:
        parser.error(
            f"--templates {args.templates}: dev's userClaimTemplates holds at most {MAX_JSON_TEXT} characters "
            f"of JSON, fewer than {most + 1} of the generated templates"
        )
    large = Scenario(f"dev-{args.templates}t", "dev", functools.partial(with_user_templates, count=args.templates))
    try:
        large.config()
    except ConfigError as refused:
        # Found here, not after minutes of engine build and control plane (userClaimTemplates is at most 1 MiB).
        parser.error(f"--templates {args.templates}: dev with that many user templates is refused: {refused}")
    return run_interruptible("e2e/cli/bench_cli.py", functools.partial(bench, large, args.templates, args.runs))


def bench(large: Scenario, templates: int, runs: int) -> int:
    """dev and `large`, each `runs` lifecycles of the program and of its floor, alternating; the report."""
    try:
        binaries = engine_build.ensure_binaries()
    except engine_build.BuildError as err:
        print(f"[bench-cli] building the Pulumi engine failed: {err}", file=sys.stderr)
        return 1
    timings: list[StackTiming] = []
    load_before = os.getloadavg()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="nebius-dra-bench-cli-") as tmp:
        work = Path(tmp)
        with control_plane_mod.ControlPlane(quiet=True, workload_controllers=True) as plane:
            kube = Kube(str(plane.kubeconfig))
            try:
                with (
                    ChartRepository(engine_build.vendor_dir() / "charts", work / "charts") as charts,
                    KubeletStandIn(str(plane.kubeconfig)),
                ):
                    for index, (scenario, count) in enumerate(((SCENARIOS["dev"], 0), (large, templates))):
                        try:
                            timings.append(
                                measure(scenario, count, runs, index == 0, work, binaries, kube, plane, charts.url)
                            )
                        except AssertionError as failed:
                            print(f"[bench-cli] {scenario.name}: {failed}", file=sys.stderr)
                            return 1
            finally:
                kube.close()
    print(render(timings))
    load = os.getloadavg()
    print(
        f"load average {load_before[0]:.1f} before, {load[0]:.1f} after; {os.cpu_count()} CPUs; "
        f"{runs} lifecycles each; {time.perf_counter() - started:.0f} s in all"
    )
    REPORT_PATH.parent.mkdir(parents=True, exist_ok=True)
    report = {"timings": [asdict(t) for t in timings], "load_average": [load_before[0], load[0]], "runs": runs}
    REPORT_PATH.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
