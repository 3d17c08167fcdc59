"""The real Pulumi CLI running this repository's program and policy pack against a real control plane.

Session-wide: the engine (e2e/pulumi/build.py: CLI, Python language host, Kubernetes provider), a
Kubernetes control plane with the workload controllers Helm waits on (e2e/kube), a chart repository
on 127.0.0.1 serving the real upstream charts of the vendor directory, and the kubelet stand-in
(kubelet_stand_in.py). Each test module takes one stack through the CLI (cli_stack.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]
for path in (str(PROJECT), str(PROJECT / "e2e" / "dra"), str(HERE)):
    if path not in sys.path:
        sys.path.insert(0, path)

from chart_repository import ChartRepository  # noqa: E402
from dra_engines import control_plane_mod, engine_build, engine_mod  # noqa: E402
from dra_kube import Kube  # noqa: E402
from kubelet_stand_in import KubeletStandIn  # noqa: E402


@pytest.fixture(scope="session")
def binaries() -> dict[str, Path]:
    try:
        return engine_build.ensure_binaries()
    except engine_build.BuildError as err:
        pytest.fail(f"building the Pulumi engine failed: {err}", pytrace=False)


@pytest.fixture(scope="session")
def cluster():
    with control_plane_mod.ControlPlane(quiet=True, workload_controllers=True) as plane:
        yield plane


@pytest.fixture(scope="session")
def kube(cluster):
    client = Kube(str(cluster.kubeconfig))
    yield client
    client.close()


@pytest.fixture(scope="session")
def kubelet(cluster):
    with KubeletStandIn(str(cluster.kubeconfig)) as stand_in:
        yield stand_in


@pytest.fixture(scope="session")
def charts(tmp_path_factory):
    vendor = engine_build.vendor_dir() / "charts"
    if not vendor.is_dir():
        pytest.fail(
            f"no chart directory {vendor}: the real upstream charts are needed (NEBIUS_DRA_E2E_VENDOR names "
            "the vendor directory)",
            pytrace=False,
        )
    with ChartRepository(vendor, tmp_path_factory.mktemp("chart-repository")) as repository:
        yield repository


@pytest.fixture(scope="session")
def new_engine(binaries, tmp_path_factory):
    """A fresh engine per stack: its own PULUMI_HOME and file backend, so stack names never collide."""
    engines = []

    def make(label: str):
        engine = engine_mod.OfflineEngine(binaries["pulumi"].parent, root=tmp_path_factory.mktemp(f"pulumi-{label}"))
        # The engine's own Python processes must not write bytecode into the copied project.
        engine.env["PYTHONDONTWRITEBYTECODE"] = "1"
        engine.env.pop("VIRTUAL_ENV", None)
        engines.append(engine)
        return engine

    yield make
    for engine in engines:
        engine.close()
