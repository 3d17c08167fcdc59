"""The benchmark's runner: the parent that times child processes, and the children it starts (see `__init__`)."""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import tools.bench
from tools.bench import PROJECT_DIR
from tools.bench.arguments import positive
from tools.bench.fleets import DECADES, FLEET, FLEET_10X, GENERATED, fleet_label
from tools.bench.interrupts import run_interruptible

IMPORT_FLOOR = (
    "import pulumi, pulumi_nebius, pulumi_kubernetes.core.v1, pulumi_kubernetes.helm.v3, pulumi_kubernetes.resource.v1"
)
DEV_TARGET = 1.3
FLOOR_TARGET = 1.10
PARTS = ("plans", "fleets")
# The program's marginal cost of a resource in the last decade over that in the first.
FLAT_TARGET = 1.25
BENCH_STACK = "bench"
# The plan as `make plan` runs it in a git checkout: against the last commit's plan, a second whole plan made by
# the commit's own code in another process (tools/plan/base_plan.py). Reported; the bar is on the plan itself.
BASED_DEV = "plan dev, base HEAD"


@dataclass
class Measurement:
    label: str
    seconds: list[float] = field(default_factory=list)
    failure: str | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.seconds) if self.seconds else float("nan")

    @property
    def spread(self) -> str:
        return f"{min(self.seconds):.3f}-{max(self.seconds):.3f}" if self.seconds else "-"


def _failure(result: subprocess.CompletedProcess) -> str:
    last_lines = result.stderr.strip().splitlines()
    return last_lines[-1] if last_lines else f"exit {result.returncode}"


def child_environment() -> dict[str, str]:
    """This environment, except that Python may cache bytecode: a user's `make plan` runs on cached bytecode.

    With PYTHONDONTWRITEBYTECODE set, every run compiled this repository's modules again (about 0.2 s of CPU
    for dev's plan, measured with cProfile: `compile` called from the import system for 93 modules) while the
    SDK's modules were compiled when they were installed: a cost the floor never paid.
    """
    return {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def time_once(measurement: Measurement, command: Sequence[str]) -> None:
    """One fresh process of `command`, added to `measurement`; a plan blocked by policy (exit 1) still counts."""
    if measurement.failure:
        return
    started = time.perf_counter()
    result = subprocess.run(command, cwd=PROJECT_DIR, capture_output=True, text=True, env=child_environment())
    elapsed = time.perf_counter() - started
    # A crash exits 1 too: it is a failure, not a plan blocked by policy.
    if result.returncode == 0 or (result.returncode == 1 and "Traceback (most recent call last)" not in result.stderr):
        measurement.seconds.append(elapsed)
    else:
        measurement.failure = _failure(result)


def interleaved(commands: dict[str, Sequence[str]], runs: int) -> dict[str, Measurement]:
    """Each command `runs` times, in turn (A B C A B C ...), so a load change on the machine hits all alike.

    Each runs once untimed first, so that every timed run finds its bytecode cached and its files read.
    """
    measurements = {label: Measurement(label) for label in commands}
    for label, command in commands.items():
        warm_up = Measurement(label)
        time_once(warm_up, command)
        measurements[label].failure = warm_up.failure
    for _ in range(runs):
        for label, command in commands.items():
            time_once(measurements[label], command)
    return measurements


def child(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "tools.bench", *arguments]


@dataclass
class Scenario:
    groups: int
    templates: int
    resources: int
    program: Measurement
    floor: Measurement

    @property
    def ratio(self) -> float:
        return self.program.median / self.floor.median


def record(groups: int, templates: int, shape: Path) -> int:
    """Child: runs the program for a generated stack, writes its shape, and checks the replay registers the same."""
    from tools.bench.fleets import generated_config
    from tools.bench.floor import read_shape, replay_run, same_registrations, write_shape
    from tools.plan.mock_engine import run_program

    program = run_program(BENCH_STACK, config=generated_config(groups, templates))
    if program.error is not None:
        print(f"the program failed: {program.error}", file=sys.stderr)
        return 2
    write_shape(program, shape)
    floor = replay_run(read_shape(shape), BENCH_STACK)
    if floor.error is not None or not same_registrations(program, floor):
        print(f"the floor does not register what the program does ({floor.error})", file=sys.stderr)
        return 2
    print(len(program.resources))
    return 0


def run_generated_program(groups: int, templates: int) -> int:
    """Child: the program for a generated stack under the mock engine, and nothing else."""
    from tools.bench.fleets import generated_config
    from tools.plan.mock_engine import run_program

    return 0 if run_program(BENCH_STACK, config=generated_config(groups, templates)).error is None else 2


def run_floor(shape: Path) -> int:
    """Child: the SDK floor of a recorded shape."""
    from tools.bench.floor import read_shape, replay_run

    return 0 if replay_run(read_shape(shape), BENCH_STACK).error is None else 2


def profile_child(groups: int, templates: int) -> int:
    """Child: one profiled run of the program for a generated stack, imports included, its summary on stdout."""
    from tools.bench.profile import profile_summary, render_summary

    costs = profile_summary(lambda: run_generated_program(groups, templates))
    print("\n".join(render_summary(fleet_label(groups, templates), costs)))
    return 0


def profile_dev(out: Path) -> int:
    """Child: one profiled `make plan` of dev (imports, the program, policies, files), its summary on stdout."""
    from tools.bench.profile import profile_summary, render_summary

    def plan_dev() -> None:
        from tools.plan.model import build_plan

        build_plan("dev", out=out)

    print("\n".join(render_summary("plan dev", profile_summary(plan_dev))))
    return 0


def _row(cells: Sequence[str], widths: Sequence[int]) -> str:
    return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip()


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return [_row(row, widths) for row in [header, *rows]]


def _verdict(name: str, ratio: float, target: float) -> str:
    outcome = "PASS" if ratio <= target else "FAIL"
    return f"{outcome}  {name}: {ratio:.2f}x (target <= {target}x)"


def _seconds(measurement: Measurement) -> str:
    return f"FAILED: {measurement.failure}" if measurement.failure else f"{measurement.median:.3f}"


def plans_report(runs: int, scratch: Path) -> list[str]:
    plan = [sys.executable, "-m", "tools.plan", "--format", "json", "--out", str(scratch / "plan")]
    measured = interleaved(
        {
            "import floor": [sys.executable, "-c", IMPORT_FLOOR],
            "plan dev": [*plan, "--stack", "dev", "--no-base"],
            "plan prod": [*plan, "--stack", "prod", "--no-base"],
            BASED_DEV: [*plan, "--stack", "dev"],
        },
        runs,
    )
    floor = measured["import floor"].median
    rows = [
        (m.label, _seconds(m), m.spread, f"{m.median / floor:.2f}x" if m.seconds else "-") for m in measured.values()
    ]
    lines = _table(("measurement", "median s", "min-max s", "x import floor"), rows)
    if measured["plan dev"].seconds:
        lines += ["", _verdict("dev plan vs import floor", measured["plan dev"].median / floor, DEV_TARGET)]
    return lines


def scenario(groups: int, templates: int, runs: int, scratch: Path) -> Scenario | str:
    shape = scratch / f"shape-{groups}-{templates}.json"
    recorded = subprocess.run(
        child("--record", f"{groups},{templates}", "--shape", str(shape)),
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
    )
    if recorded.returncode != 0:
        return _failure(recorded)
    measured = interleaved(
        {"program": child("--program", f"{groups},{templates}"), "floor": child("--floor", str(shape))}, runs
    )
    return Scenario(groups, templates, int(recorded.stdout), measured["program"], measured["floor"])


def fleets_report(runs: int, scratch: Path) -> list[str]:
    scenarios = {(groups, templates): scenario(groups, templates, runs, scratch) for groups, templates in GENERATED}
    rows = []
    for (groups, templates), result in scenarios.items():
        if isinstance(result, str):
            rows.append((fleet_label(groups, templates), "-", f"FAILED: {result}", "-", "-", "-", "-"))
            continue
        rows.append(
            (
                fleet_label(groups, templates),
                str(result.resources),
                _seconds(result.program),
                result.program.spread,
                _seconds(result.floor),
                result.floor.spread,
                f"{result.ratio:.2f}x" if result.program.seconds and result.floor.seconds else "-",
            )
        )
    header = ("generated stack", "resources", "program s", "min-max", "SDK floor s", "min-max", "x SDK floor")
    lines = _table(header, rows)
    for fleet in (FLEET, FLEET_10X):
        measured = scenarios[fleet]
        if isinstance(measured, Scenario) and measured.program.seconds and measured.floor.seconds:
            lines += ["", _verdict(f"{fleet_label(*fleet)} vs its SDK floor", measured.ratio, FLOOR_TARGET)]
    return [*lines, "", *decades_report(scenarios)]


def decades_report(scenarios: dict[tuple[int, int], Scenario | str]) -> list[str]:
    """The marginal cost of a resource from each of `DECADES` to the next, the program's and its floor's.

    Flat is the last decade's marginal cost of the program over the first's: a cost per resource
    that grows with the stack (a walk of every resource per resource) shows as a ratio above 1.
    """
    measured = [
        step
        for step in (scenarios[decade] for decade in DECADES)
        if isinstance(step, Scenario) and step.program.seconds and step.floor.seconds
    ]
    if len(measured) != len(DECADES):
        return ["marginal cost per decade: not measured (a scenario failed)"]
    rows, program_ms = [], []
    for smaller, larger in itertools.pairwise(measured):
        extra = larger.resources - smaller.resources
        program_ms.append((larger.program.median - smaller.program.median) / extra * 1000)
        floor_ms = (larger.floor.median - smaller.floor.median) / extra * 1000
        rows.append(
            (
                f"{smaller.resources} -> {larger.resources}",
                f"{program_ms[-1]:.2f}",
                f"{floor_ms:.2f}",
                f"{program_ms[-1] / floor_ms:.2f}x" if floor_ms > 0 else "-",
            )
        )
    lines = _table(("resources", "program ms a resource", "SDK floor ms a resource", "x SDK floor"), rows)
    flat = program_ms[-1] / program_ms[0] if program_ms[0] > 0 else float("inf")
    return [*lines, "", _verdict("the program's marginal cost, last decade over first", flat, FLAT_TARGET)]


def profiles_report(scratch: Path) -> list[str]:
    lines: list[str] = []
    commands = [child("--profile-dev", "--out", str(scratch / "profile"))]
    commands += [child("--profile", f"{groups},{templates}") for groups, templates in GENERATED]
    for command in commands:
        result = subprocess.run(command, cwd=PROJECT_DIR, capture_output=True, text=True)
        lines += ["", *(result.stdout.rstrip().splitlines() if result.returncode == 0 else [_failure(result)])]
    return lines


def run_benchmark(runs: int, profiles: bool, parts: Sequence[str] = PARTS) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="bench-plan-") as directory:
        scratch = Path(directory)
        lines = [f"Python {sys.version.split()[0]}, {runs} runs each, fresh process per run, wall-clock medians", ""]
        if "plans" in parts:
            lines += plans_report(runs, scratch)
        if "fleets" in parts:
            lines += ["", *fleets_report(runs, scratch)]
        if profiles:
            lines += profiles_report(scratch)
    return lines


def _pair(text: str) -> tuple[int, int]:
    groups, templates = (int(part) for part in text.split(","))
    return groups, templates


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.bench", description=tools.bench.__doc__.split("\n\n")[0])
    parser.add_argument(
        "--runs", type=positive, default=5, help="runs per measurement; the median is reported (default 5)"
    )
    parser.add_argument("--no-profile", action="store_true", help="skip the profile summaries")
    parser.add_argument("--only", choices=PARTS, help="measure only dev's and prod's plans, or only the fleets")
    for hidden in ("--record", "--program", "--profile"):
        parser.add_argument(hidden, type=_pair, help=argparse.SUPPRESS)
    parser.add_argument("--profile-dev", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--floor", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--shape", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.record:
        groups, templates = args.record
        return record(groups, templates, args.shape)
    if args.program:
        return run_generated_program(*args.program)
    if args.floor:
        return run_floor(args.floor)
    if args.profile:
        return profile_child(*args.profile)
    if args.profile_dev:
        return profile_dev(args.out)

    def measure() -> int:
        print("\n".join(run_benchmark(args.runs, not args.no_profile, [args.only] if args.only else PARTS)))
        return 0

    return run_interruptible("python -m tools.bench", measure)


if __name__ == "__main__":
    sys.exit(main())
