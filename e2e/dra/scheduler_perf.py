"""The anchor of `make bench-e2e`: upstream's scheduler benchmark, built from the same Kubernetes release.

k8s.io/kubernetes ships its scheduler benchmark as an integration test, test/integration/scheduler_perf
(README.md there). Its DRA topic, test/integration/scheduler_perf/dra/performance-config.yaml, has
`SchedulingWithResourceClaimTemplate`: one claim template with no selector (one device of
`test-class`), one pod after another taking a claim from it, on nodes that each publish a
ResourceSlice of the test driver. It runs the API server, the scheduler and the ResourceClaim
controller in one process, on one client of QPS 5000 and burst 5000 (scheduler_perf/util.go,
`mustSetupCluster`, in v1.34.12), against an etcd it starts from PATH. Its result, a JSON of
"data items" (perf-dash's format), holds per workload the `SchedulingThroughput` in pods a second:
the Average (and percentiles) of the rate sampled each second while the measured pods are scheduled.

The test binary is built here with `go test -c` in the minor's wrapper module (e2e/kube/kubernetes-*,
the module that builds the control plane, so its dependencies are the same) and cached beside the
control-plane binaries. It is run in the package's source directory in the Go module cache, where
it reads performance-config.yaml and its templates.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PACKAGE = "test/integration/scheduler_perf/dra"
TEST_CASE = "SchedulingWithResourceClaimTemplate"
# The upstream workload nearest the harness: 100 nodes with DRA, 1,000 pods scheduled first (unmeasured),
# then 1,000 measured, 20 claims a node (performance-config.yaml; no label, so no CI job runs it). It
# runs in about a minute on a 2-core machine.
DEFAULT_WORKLOAD = "2000pods_100nodes"
METRIC = "SchedulingThroughput"


class AnchorError(Exception):
    """The anchor could not be built or run; the message says why, for the report."""


@dataclass(frozen=True)
class Throughput:
    """One workload's SchedulingThroughput (pods/s) as scheduler_perf wrote it."""

    name: str  # the data item's "Name" label: "BenchmarkPerfScheduling/<test case>/<workload>/<namespace>"
    average: float
    perc50: float
    perc90: float


def throughput(document: Mapping[str, Any], test_case: str, workload: str) -> Throughput:
    """The SchedulingThroughput of `test_case`/`workload` in a scheduler_perf data-items document.

    The document is `{"version": "v1", "dataItems": [{"data": {...}, "unit": ..., "labels": {...}}]}`
    (scheduler_perf/util.go, `DataItems`); each workload's items are named
    "BenchmarkPerfScheduling/<test case>/<workload>/<namespace of the measured pods>", and its throughput item
    carries the label
    Metric=SchedulingThroughput. A workload whose pods were scheduled within one sample (one second)
    has no Data: scheduler_perf logs "Failed to measure SchedulingThroughput" and writes the item without
    it. Raises AnchorError when the workload has no throughput item or no data.
    """
    for item in document.get("dataItems") or []:
        labels = item.get("labels") or {}
        if labels.get("Metric") != METRIC or str(labels.get("Name", "")).split("/")[-3:-1] != [test_case, workload]:
            continue
        data = item.get("data") or {}
        if "Average" not in data:
            raise AnchorError(f"{labels['Name']}: {METRIC} has no data (scheduled within one sample?)")
        return Throughput(
            labels["Name"], data["Average"], data.get("Perc50", float("nan")), data.get("Perc90", float("nan"))
        )
    names = sorted({str((item.get("labels") or {}).get("Name")) for item in document.get("dataItems") or []})
    raise AnchorError(f"no {METRIC} of {test_case}/{workload} in the data items (names: {', '.join(names) or 'none'})")


def verdict(reference_rate: float, anchor: Throughput | str, target: float) -> str:
    """The PASS/FAIL line of the harness's no-selector rate against the anchor's (or why there is no anchor).

    The anchor's figure is its Average SchedulingThroughput (the mean of per-second samples); the harness's,
    its pods over first creation to last binding. Both count pods bound by a real kube-scheduler of one
    release allocating one device each from a selector-less template.
    """
    if isinstance(anchor, str):
        return f"FAIL  no anchor: {anchor}"
    ratio = reference_rate / anchor.average if anchor.average > 0 else float("inf")
    outcome = "PASS" if ratio >= target else "FAIL"
    return (
        f"{outcome}  no-selector: {ratio:.2f}x the anchor's rate, {reference_rate:.1f} against {anchor.average:.1f} "
        f"pods/s (scheduler_perf {anchor.name}, Average SchedulingThroughput; target >= {target}x)"
    )


def bench_pattern(test_case: str, workload: str) -> str:
    """The `-test.bench` pattern of exactly one workload: Go splits it on '/' and matches each level as a
    regular expression against the sub-benchmark's name (`go help testflag`), so each is anchored."""
    return f"^BenchmarkPerfScheduling$/^{test_case}$/^{workload}$"


def bench_args(test_case: str, workload: str, data_dir: Path) -> list[str]:
    """The test binary's flags for one workload, the README's benchmark flags (-run=^$ -benchtime=1ns).

    `-perf-scheduling-label-filter=` (empty) runs workloads of any label: the default, "performance",
    would skip the unlabelled 100-node workloads, and -bench alone picks the workload.
    """
    return [
        "-test.run=^$",
        f"-test.bench={bench_pattern(test_case, workload)}",
        "-test.benchtime=1ns",
        "-test.timeout=30m",
        "-perf-scheduling-label-filter=",
        f"-data-items-dir={data_dir}",
    ]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _go() -> str:
    go = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").is_file() else None)
    if not go:
        raise AnchorError("the `go` command was not found on PATH (needed to build the scheduler_perf test binary)")
    return go


def ensure_test_binary(minor: str) -> Path:
    """The scheduler_perf DRA test binary of Kubernetes `minor`, built when missing (`go test -c`, lowest CPU
    priority, CGO off and -trimpath as the control plane is built, so the build cache is shared) into the
    minor's binary directory, under the e2e cache's build lock. Raises AnchorError."""
    from dra_engines import control_plane_mod

    build = control_plane_mod._build
    out = build.binary_dirs(minor)["kube"] / "scheduler_perf_dra.test"
    if out.is_file():
        return out
    module_dir = build.kube_module_dir(minor)
    out.parent.mkdir(parents=True, exist_ok=True)
    with build._build_lock():
        if out.is_file():
            return out
        tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
        cmd = ["nice", "-n", "19", _go(), "test", "-c", "-trimpath", "-o", str(tmp), f"k8s.io/kubernetes/{PACKAGE}"]
        print(f"[bench-e2e] building the anchor: (cd {module_dir} && CGO_ENABLED=0 {' '.join(cmd)})", flush=True)
        started = time.monotonic()
        proc = subprocess.run(
            cmd, cwd=module_dir, env=dict(os.environ, CGO_ENABLED="0"), capture_output=True, text=True
        )
        if proc.returncode != 0:
            tmp.unlink(missing_ok=True)
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-20:])
            raise AnchorError(f"`go test -c k8s.io/kubernetes/{PACKAGE}` failed (exit {proc.returncode}):\n{tail}")
        os.replace(tmp, out)
        print(f"[bench-e2e] built {out} in {time.monotonic() - started:.0f} s", flush=True)
    return out


def package_source(minor: str) -> Path:
    """The DRA topic's directory in the module cache (performance-config.yaml, templates/): the test binary
    reads them relative to its working directory, as `go test` runs it in the package's directory."""
    from dra_engines import control_plane_mod

    build = control_plane_mod._build
    version = build.kube_version(minor)
    source = Path(build.served_module_dir("k8s.io/kubernetes", version)) / PACKAGE
    if not (source / "performance-config.yaml").is_file():
        raise AnchorError(f"k8s.io/kubernetes@{version} has no {PACKAGE}/performance-config.yaml")
    return source


def workloads(minor: str) -> list[str] | None:
    """The workloads of TEST_CASE in `minor`'s performance-config.yaml; None when its source is not on this
    machine yet (the anchor's build fetches it, and a name it lacks is then reported by the anchor)."""
    try:
        source = package_source(minor)
    except Exception:  # no go, no module cache, a failed download: the anchor reports it later
        return None
    import yaml

    cases = yaml.safe_load((source / "performance-config.yaml").read_text()) or []
    return [str(w.get("name")) for case in cases if case.get("name") == TEST_CASE for w in case.get("workloads", [])]


def run_anchor(
    minor: str, workload: str = DEFAULT_WORKLOAD, keep: Path | None = None, timeout: float = 1200.0
) -> tuple[Throughput, float]:
    """Builds (when missing) and runs one scheduler_perf workload of `minor`; its throughput and the wall
    seconds the run took. The data items are copied to `keep` when given. Raises AnchorError with the
    output's tail when the run fails."""
    from dra_engines import control_plane_mod

    binary = ensure_test_binary(minor)
    source = package_source(minor)
    # <cache>/k8s.io/kubernetes@vX/test/integration/scheduler_perf/dra: up five levels is the cache.
    module_cache = source.parents[5]
    etcd = control_plane_mod._build.binary_dirs(minor)["etcd"]
    with tempfile.TemporaryDirectory(prefix="scheduler-perf-") as scratch:
        data_dir, artifacts = Path(scratch) / "data", Path(scratch) / "artifacts"
        artifacts.mkdir()
        env = dict(
            os.environ,
            PATH=f"{etcd}{os.pathsep}{os.environ.get('PATH', '')}",
            # Where it looks for a running etcd first (test/integration/framework/etcd.go); a port nothing
            # listens on, so it starts its own (on a unix socket, data in TMPDIR) and never shares another's.
            KUBE_INTEGRATION_ETCD_URL=f"http://127.0.0.1:{_free_port()}",
            # Logs into $ARTIFACTS/<test>.log instead of the output (scheduler_perf.go, initTestOutput).
            ARTIFACTS=str(artifacts),
            TMPDIR=scratch,
            # Built with -trimpath, the API server's test fixture finds its package directory (its testdata/
            # certificates) only through bazel's variables: TEST_SRCDIR/TEST_WORKSPACE/<module@version/path>
            # (cmd/kube-apiserver/app/testing/testserver.go, pkgPath); the module cache is that root.
            TEST_SRCDIR=str(module_cache),
            TEST_WORKSPACE=".",
        )
        started = time.monotonic()
        try:
            proc = subprocess.run(
                [str(binary), *bench_args(TEST_CASE, workload, data_dir)],
                cwd=source,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            raise AnchorError(f"scheduler_perf {TEST_CASE}/{workload} ran past {timeout:.0f} s") from None
        seconds = time.monotonic() - started
        results = sorted(data_dir.glob("BenchmarkPerfScheduling_benchmark_dra_*.json"))
        if proc.returncode != 0 or not results:
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
            raise AnchorError(f"scheduler_perf exited {proc.returncode}, data items: {len(results)}:\n{tail}")
        if keep is not None:
            keep.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(results[-1], keep)
        return throughput(json.loads(results[-1].read_text()), TEST_CASE, workload), seconds
