"""The benchmarks refuse a count they cannot measure (exit 2, from argparse) before they start anything."""

from __future__ import annotations

import runpy
import sys
from types import SimpleNamespace

import pytest

import tools.bench.__main__ as bench

NOT_COUNTS = ["0", "-1", "1e9", "+3", " 3", "1_000", "abc", ""]


def _started(*args, **kwargs):
    raise AssertionError("the benchmark started")


@pytest.mark.parametrize("runs", NOT_COUNTS)
def test_bench_refuses_runs_that_measure_nothing(runs, monkeypatch, capsys):
    monkeypatch.setattr(bench, "run_benchmark", _started)
    with pytest.raises(SystemExit) as exited:
        bench.main(["--runs", runs, "--no-profile"])
    assert exited.value.code == 2
    assert "--runs" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("script", "flag", "value"),
    [
        ("e2e/cli/bench_cli.py", "--runs", "0"),
        ("e2e/cli/bench_cli.py", "--runs", "-1"),
        ("e2e/cli/bench_cli.py", "--templates", "-5"),
        ("e2e/cli/bench_cli.py", "--templates", "0"),
        ("e2e/dra/bench_allocation.py", "--pods", "0"),
        ("e2e/dra/bench_allocation.py", "--nodes", "1"),
        ("e2e/dra/bench_allocation.py", "--scheduler-qps", "-1"),
        ("e2e/dra/bench_allocation.py", "--controller-manager-qps", "-1"),
    ],
)
def test_the_e2e_benchmarks_refuse_a_count_before_they_start(script, flag, value, monkeypatch, capsys):
    monkeypatch.setattr(sys, "path", list(sys.path))
    main = runpy.run_path(script)["main"]
    # What each would start first: the CLI's build (bench-cli), a control plane (bench-e2e).
    main.__globals__["engine_build"] = SimpleNamespace(ensure_binaries=_started, BuildError=RuntimeError)
    main.__globals__["measure_on"] = _started
    monkeypatch.setattr(sys, "argv", [script])
    with pytest.raises(SystemExit) as exited:
        main([flag, value])
    assert exited.value.code == 2
    assert flag in capsys.readouterr().err
