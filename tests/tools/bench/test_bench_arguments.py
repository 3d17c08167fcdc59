"""The benchmarks refuse a count or a name they cannot measure (exit 2, from argparse) before they start anything."""

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
        ("e2e/cli/bench_cli.py", "--templates", "20000"),  # past userClaimTemplates' 1 MiB
        ("e2e/dra/bench_allocation.py", "--pods", "0"),
        ("e2e/dra/bench_allocation.py", "--nodes", "1"),
        ("e2e/dra/bench_allocation.py", "--scheduler-qps", "-1"),
        ("e2e/dra/bench_allocation.py", "--controller-manager-qps", "-1"),
        ("e2e/dra/bench_allocation.py", "--template", "bogus"),
        ("e2e/dra/bench_allocation.py", "--template", "No-Selector"),
        ("e2e/cli/bench_cli.py", "--templates", "100000000"),  # built a list for minutes before it was refused
        ("e2e/cli/bench_cli.py", "--templates", "9" * 30),  # MemoryError
        ("e2e/dra/bench_allocation.py", "--anchor-workload", ".*"),  # into -test.bench: every workload
        ("e2e/dra/bench_allocation.py", "--anchor-workload", "a|b"),
    ],
)
def test_the_e2e_benchmarks_refuse_what_they_cannot_measure_before_they_start(script, flag, value, monkeypatch, capsys):
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


def _bench_e2e_main(monkeypatch, workloads):
    monkeypatch.setattr(sys, "path", list(sys.path))
    main = runpy.run_path("e2e/dra/bench_allocation.py")["main"]
    main.__globals__["measure_on"] = _started
    monkeypatch.setattr(main.__globals__["scheduler_perf"], "workloads", lambda minor: workloads)
    return main


@pytest.mark.parametrize(
    "args",
    [
        ["--no-anchor", "--anchor-workload", "fast"],  # the workload was dropped without a word
        ["--anchor-workload", "bogus"],  # found only after the control plane's minutes
    ],
)
def test_bench_e2e_refuses_an_anchor_workload_it_would_not_run(args, monkeypatch, capsys):
    main = _bench_e2e_main(monkeypatch, ["fast", "2000pods_100nodes"])
    with pytest.raises(SystemExit) as exited:
        main(args)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "--anchor-workload" in err and "fast" in err


def test_bench_e2e_takes_a_known_anchor_workload(monkeypatch):
    main = _bench_e2e_main(monkeypatch, ["fast", "2000pods_100nodes"])
    measured = []
    main.__globals__["measure_on"] = lambda minor, *a, anchor_workload, **kw: measured.append(anchor_workload)
    assert main(["--anchor-workload", "fast", "--kube-minor", "1.34"]) == 0
    assert measured == ["fast"]


def test_bench_e2e_takes_the_reference_and_every_built_in_template_by_name(monkeypatch):
    main = _bench_e2e_main(monkeypatch, ["2000pods_100nodes"])
    measured = []
    main.__globals__["measure_on"] = lambda minor, *args, only, **kwargs: measured.append(only)
    names = ["no-selector", "gpu", "multi-gpu"]
    assert main([arg for name in names for arg in ("--template", name)]) == 0
    assert measured and all(only == names for only in measured)


def test_bench_e2e_refuses_a_minor_named_twice(monkeypatch, capsys):
    main = _bench_e2e_main(monkeypatch, ["2000pods_100nodes"])
    with pytest.raises(SystemExit) as exited:
        main(["--kube-minor", "1.34", "--kube-minor", "1.34"])
    assert exited.value.code == 2
    assert "--kube-minor" in capsys.readouterr().err
