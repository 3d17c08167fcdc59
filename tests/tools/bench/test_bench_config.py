"""The benchmark's generated fleets are stacks the program accepts, so `make bench` measures real plans."""

from __future__ import annotations

import gc
import sys

from tools.bench.__main__ import Measurement, Scenario, child_environment, decades_report, time_once
from tools.bench.fleets import generated_config
from tools.plan.mock_engine import run_program


def test_generated_fleet_is_planned_with_every_group_and_template():
    run = run_program("dev", config=generated_config(3, 4))
    assert run.error is None
    node_groups = run.of_type("nebius:index/mk8sV1NodeGroup:Mk8sV1NodeGroup")
    templates = [
        r.inputs["metadata"]["name"] for r in run.of_type("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")
    ]
    assert len(node_groups) == 3 + 1
    assert {f"user-{index:03d}" for index in range(4)} <= set(templates)


def test_program_runs_without_the_cyclic_collector_and_gets_it_back():
    """Its full collections walked every pending registration (components/cyclic_gc.py)."""
    seen: list[bool] = []
    assert gc.isenabled()
    run = run_program("dev", config={}, entry=lambda: seen.append(gc.isenabled()))
    assert run.error is None
    assert seen == [False]
    assert gc.isenabled()


def test_a_collector_turned_off_by_the_caller_stays_off():
    gc.disable()
    try:
        run_program("dev", config={}, entry=lambda: None)
        assert not gc.isenabled()
    finally:
        gc.enable()


def _scenario(groups: int, templates: int, resources: int, program_s: float, floor_s: float) -> Scenario:
    return Scenario(groups, templates, resources, Measurement("program", [program_s]), Measurement("floor", [floor_s]))


def test_decades_report_the_marginal_cost_and_its_growth():
    scenarios: dict[tuple[int, int], Scenario | str] = {
        (10, 20): _scenario(10, 20, 59, 1.0, 0.9),
        (100, 200): _scenario(100, 200, 419, 1.0 + 0.360 * 2, 0.9 + 0.360 * 2),
        (1000, 2000): _scenario(1000, 2000, 4019, 1.72 + 3.6 * 3, 1.62 + 3.6 * 2),
    }
    lines = decades_report(scenarios)
    assert lines[1].split() == ["59", "->", "419", "2.00", "2.00", "1.00x"]
    assert lines[2].split() == ["419", "->", "4019", "3.00", "2.00", "1.50x"]
    assert lines[-1] == "FAIL  the program's marginal cost, last decade over first: 1.50x (target <= 1.25x)"


def test_decades_report_says_when_a_decade_is_missing():
    scenarios: dict[tuple[int, int], Scenario | str] = {
        (10, 20): _scenario(10, 20, 59, 1.0, 0.9),
        (100, 200): "the program failed",
        (1000, 2000): _scenario(1000, 2000, 4019, 9.0, 8.0),
    }
    assert decades_report(scenarios) == ["marginal cost per decade: not measured (a scenario failed)"]


def test_timed_children_may_cache_bytecode(monkeypatch):
    """The program's modules compiled on every run where the SDK's were compiled at install."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("BENCH_PROBE", "kept")
    environment = child_environment()
    assert "PYTHONDONTWRITEBYTECODE" not in environment
    assert environment["BENCH_PROBE"] == "kept"


def test_a_crash_is_no_timing_though_it_exits_1_like_a_blocked_plan():
    """A base plan's traceback (exit 1) was timed as a plan: 0.76x the import floor."""
    blocked, crashed = Measurement("blocked"), Measurement("crashed")
    time_once(blocked, [sys.executable, "-c", "raise SystemExit(1)"])
    time_once(crashed, [sys.executable, "-c", "raise RuntimeError('boom')"])
    assert len(blocked.seconds) == 1 and blocked.failure is None
    assert crashed.seconds == [] and crashed.failure == "RuntimeError: boom"
