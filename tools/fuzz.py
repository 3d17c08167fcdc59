"""`python -m tools.fuzz [--seconds N] [--seed S]` (`make fuzz`): the property tests, explored at random, for a budget.

`make test` runs the property tests derandomized (tests/conftest.py), so its verdict is the commit's. Exploration
lives here: the property tests (pytest's `hypothesis` marker) of every test module that uses Hypothesis run under
the `fuzz` profile, one pytest run after another, each with its own seed (the first is fresh unless --seed gives
it, the next ones count up from it), until the budget is spent. A run starts only while the time left is at
least the last run's length, so the budget is not overrun by more than the first run. Failures stay in the
example database (.hypothesis/fuzz), which replays them first in every later run; the first failing run ends
the session with its seed and the command that reproduces it.
"""

from __future__ import annotations

import argparse
import math
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[1]
TESTS = PROJECT_DIR / "tests"
SEED_LIMIT = 2**32
# A day of exploration at most, and at most a thousand times each test's examples a run: the budget is checked only
# between runs, so the first run always finishes, and a scale past this would make it the whole session.
MAX_SECONDS = 86400
MAX_SCALE = 1000
# What a module that holds property tests imports; the marker then picks the tests themselves.
HYPOTHESIS_IMPORTS = ("from hypothesis import", "import hypothesis")


def property_modules(tests: Path = TESTS) -> list[Path]:
    """The test modules that use Hypothesis, in name order."""
    return sorted(
        path
        for path in tests.rglob("test_*.py")
        if any(line.startswith(HYPOTHESIS_IMPORTS) for line in path.read_text().splitlines())
    )


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    failed: tuple[str, ...]  # pytest's `FAILED <test id> - ...` lines, as it printed them


def pytest_command(modules: Sequence[Path]) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-rf",
        "-m",
        "hypothesis",
        "--hypothesis-profile=fuzz",
        *(str(module) for module in modules),
    ]


def run_pytest(seed: int, modules: Sequence[Path], scale: int) -> Outcome:
    """One pytest run under `seed`, its output passed through as it comes; the failed tests' lines kept."""
    env = dict(os.environ, NEBIUS_DRA_FUZZ_SEED=str(seed), NEBIUS_DRA_FUZZ_SCALE=str(scale))
    failed: list[str] = []
    with subprocess.Popen(pytest_command(modules), cwd=PROJECT_DIR, env=env, stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            if line.startswith("FAILED "):
                failed.append(line.rstrip("\n"))
    sys.stdout.flush()
    return Outcome(proc.returncode, tuple(failed))


def reproduce_command(seed: int, seconds: float, scale: int) -> str:
    return f"make fuzz SEED={seed} FUZZ_SECONDS={seconds:g}" + (f" FUZZ_SCALE={scale}" if scale != 1 else "")


def fuzz(
    budget_s: float,
    first_seed: int,
    scale: int,
    run: Callable[[int], Outcome],
    say: Callable[[str], None],
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Runs `run(seed)` with seeds counting up from `first_seed` until the budget is spent; the exit status."""
    started = clock()
    last_s = 0.0
    runs = 0
    seed = first_seed
    say(
        f"fuzz: budget {budget_s:g} s, first seed {first_seed} (reproduce this session: {reproduce_command(first_seed, budget_s, scale)})"
    )
    while runs == 0 or 0 < budget_s - (clock() - started) >= last_s:
        runs += 1
        say(f"fuzz: run {runs}, seed {seed}")
        run_started = clock()
        outcome = run(seed)
        last_s = clock() - run_started
        if outcome.exit_code != 0:
            what = "failed" if outcome.exit_code == 1 else f"ended with pytest's exit status {outcome.exit_code}"
            say(f"fuzz: run {runs} (seed {seed}) {what} after {last_s:.0f} s")
            for line in outcome.failed:
                say(f"fuzz:   {line}")
            say(
                f"fuzz: reproduce with `{reproduce_command(seed, budget_s, scale)}`: that seed runs first, and the example"
            )
            say("fuzz: database (.hypothesis/fuzz) replays the failing examples; pin each with @example once fixed")
            return 1
        seed = (seed + 1) % SEED_LIMIT
    say(f"fuzz: {runs} run(s), no failure, in {clock() - started:.0f} s (budget {budget_s:g} s)")
    return 0


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tools.fuzz", description=__doc__.split("\n\n")[0], allow_abbrev=False
    )
    parser.add_argument("--seconds", type=float, default=300.0, help="time budget (default 300)")
    parser.add_argument("--seed", type=int, help=f"the first run's seed, 0 to {SEED_LIMIT - 1} (default: a fresh one)")
    parser.add_argument(
        "--scale", type=int, default=1, help="each property test's own max_examples times this, per run (default 1)"
    )
    args = parser.parse_args(argv)
    # nan compares false with everything, and inf (or 1e400) never ends: a budget is a finite number of seconds.
    if not math.isfinite(args.seconds) or not 0 <= args.seconds <= MAX_SECONDS:
        parser.error(f"--seconds: got {args.seconds:g}; expected 0 to {MAX_SECONDS} (a day)")
    if args.seed is not None and not 0 <= args.seed < SEED_LIMIT:
        parser.error(f"--seed: got {args.seed}; expected 0 to {SEED_LIMIT - 1}")
    if not 1 <= args.scale <= MAX_SCALE:
        parser.error(f"--scale: got {args.scale}; expected 1 to {MAX_SCALE} (the first run is never cut short)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    modules = property_modules()
    seed = secrets.randbelow(SEED_LIMIT) if args.seed is None else args.seed
    print(f"fuzz: {len(modules)} modules: {', '.join(module.name for module in modules)}", flush=True)
    try:
        return fuzz(
            args.seconds,
            seed,
            args.scale,
            lambda each: run_pytest(each, modules, args.scale),
            lambda line: print(line, flush=True),
        )
    except KeyboardInterrupt:
        print("fuzz: interrupted; the examples found so far are in the database (.hypothesis/fuzz)", flush=True)
        return 130


if __name__ == "__main__":
    sys.exit(main())
