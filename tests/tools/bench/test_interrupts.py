"""The benchmarks stopped by Ctrl-C or SIGTERM: one line, exit 130 or 143, and what they set up torn down."""

from __future__ import annotations

import os
import runpy
import signal
import sys
import tempfile

import pytest

import tools.bench.__main__ as bench
from tools.bench.interrupts import run_interruptible


def _ctrl_c() -> int:
    raise KeyboardInterrupt


def test_ctrl_c_is_one_line_and_130(capsys):
    assert run_interruptible("bench", _ctrl_c) == 130
    assert capsys.readouterr().err == "bench: interrupted; nothing reported\n"


def test_sigterm_unwinds_the_stack_and_is_143(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def measure() -> int:
        with tempfile.TemporaryDirectory(prefix="bench-plan-"):
            os.kill(os.getpid(), signal.SIGTERM)
            raise AssertionError("SIGTERM did not stop the benchmark")

    before = signal.getsignal(signal.SIGTERM)
    assert run_interruptible("bench", measure) == 143
    assert list(tmp_path.iterdir()) == []  # the scratch directory's `with` ran
    assert capsys.readouterr().err == "bench: terminated; nothing reported\n"
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_broad_except_in_the_benchmark_does_not_swallow_sigterm():
    def measure() -> int:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        except Exception:  # what a benchmark's own error handling may do
            return 0
        return 0

    assert run_interruptible("bench", measure) == 143


def test_make_bench_is_interruptible(monkeypatch, capsys):
    monkeypatch.setattr(bench, "run_benchmark", lambda *args: _ctrl_c())
    assert bench.main(["--runs", "1", "--no-profile"]) == 130
    assert "python -m tools.bench: interrupted" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("script", "starts"), [("e2e/cli/bench_cli.py", "bench"), ("e2e/dra/bench_allocation.py", "measure_on")]
)
def test_the_e2e_benchmarks_are_interruptible(script, starts, monkeypatch, capsys):
    monkeypatch.setattr(sys, "path", list(sys.path))
    main = runpy.run_path(script)["main"]
    main.__globals__[starts] = lambda *args, **kwargs: _ctrl_c()
    assert main(["--no-anchor"] if "allocation" in script else []) == 130  # --no-anchor: no workload lookup
    assert f"{script}: interrupted" in capsys.readouterr().err
