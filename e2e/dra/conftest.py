"""Shared fixtures of the DRA e2e tests: one real control plane per Kubernetes minor, the stacks' plans, the report.

Each test module covers one base stack and its variants: its `scenarios` marker names them (scenarios of
dra_scenarios.py), and a test's own marker names those it runs on when it is not every one of the module's.
Each test runs once per scenario (`scenario_name`, a module-scoped parameter): the `deployed` fixture builds
that scenario's stack on the control plane of its minor and tears it down when the module's tests of that
scenario are done, so the next scenario starts from an empty cluster. The tests are ordered by their
scenario's minor and one control plane runs at a time: the next minor's starts when the previous one is
stopped. The plans of every collected scenario are started in subprocesses as soon as the session begins,
so they run while the control plane starts.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent.parent
for path in (str(PROJECT), str(HERE)):
    if path not in sys.path:
        sys.path.insert(0, path)

from dra_engines import control_plane_mod  # noqa: E402
from dra_fakes import device_classes  # noqa: E402
from dra_kube import Kube, api_message  # noqa: E402
from dra_scenarios import SCENARIOS  # noqa: E402
from dra_stack import Deployed, deploy, probe, release, teardown, watch_allocation  # noqa: E402

REPORT_PATH = PROJECT / "build" / "e2e" / "report.json"
PLAN_TIMEOUT = 240.0


# ------------------------------------------------------------------------------------------ report
class Report:
    """What `make e2e` prints at the end and writes to build/e2e/report.json."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.data: dict = {"control_planes": {}, "scenarios": {}, "device_classes": {}}

    def scenario(self, name: str) -> dict:
        return self.data["scenarios"].setdefault(
            name, {"objects": 0, "accepted": 0, "helm_not_installed": [], "claims": {}, "seconds": 0.0}
        )

    def claim(self, scenario: str, template: str, allocated: bool, where: str, result=None) -> None:
        """One claim from `template`: allocated or refused, where, and (given a Probe) the devices it got."""
        entry = self.scenario(scenario)["claims"].setdefault(
            template, {"allocated": 0, "refused": 0, "where": [], "devices": []}
        )
        entry["allocated" if allocated else "refused"] += 1
        entry["where"].append(where)
        if result is not None and result.results:
            devices: dict[str, list[str]] = {}
            for r in result.results:
                devices.setdefault(r["request"], []).append(f"{r['pool']}/{r['device']}")
            entry["devices"].append(devices)

    def table(self) -> str:
        scenarios = [("scenario", "objects accepted", "seconds")] + [
            (name, f"{s['accepted']}/{s['objects']}", f"{s['seconds']:.1f}")
            for name, s in self.data["scenarios"].items()
        ]
        claims = [("scenario", "template", "allocated", "refused", "where")] + [
            (name, template, str(c["allocated"]), str(c["refused"]), ", ".join(c["where"]))
            for name, s in self.data["scenarios"].items()
            for template, c in s["claims"].items()
        ]
        total = self.data.get("seconds", time.monotonic() - self.started)
        starts = ", ".join(
            f"{plane['kubernetes']} start {plane['startup_seconds']:.1f}s"
            for plane in self.data["control_planes"].values()
        )
        helm = sorted({release for s in self.data["scenarios"].values() for release in s["helm_not_installed"]})
        return "\n".join(
            [
                *_columns(scenarios),
                "Helm releases planned but not installed (this control plane has no charts; the tests stand in for",
                "the DRA driver's DeviceClasses and kubelet plugin pods): " + (", ".join(helm) or "none"),
                "",
                *_columns(claims),
                "",
                f"total {total:.1f}s" + (f" (control planes: {starts})" if starts else ""),
            ]
        )

    def write(self) -> None:
        self.data["seconds"] = round(time.monotonic() - self.started, 1)
        REPORT_PATH.parent.mkdir(parents=True, exist_ok=True)
        REPORT_PATH.write_text(json.dumps(self.data, indent=2, sort_keys=True) + "\n")


def _columns(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return lines


REPORT = Report()


@pytest.fixture(scope="session")
def report() -> Report:
    return REPORT


def pytest_sessionfinish(session):
    if REPORT.data["scenarios"]:
        REPORT.write()


def pytest_terminal_summary(terminalreporter):
    if REPORT.data["scenarios"]:
        terminalreporter.write_sep("-", "DRA e2e report")
        terminalreporter.write_line(REPORT.table())
        terminalreporter.write_line(f"written to {REPORT_PATH.relative_to(PROJECT)}")


# ------------------------------------------------------------------------------------------ plans
class Plans:
    """The offline plan of each stack, run in a subprocess into a temporary directory."""

    def __init__(self, names: list[str], out: Path) -> None:
        self.out = out
        self.runs: dict[str, subprocess.Popen] = {}
        self.done: dict[str, Path] = {}
        for name in names:
            self.runs[name] = self._start(name)

    def _start(self, name: str) -> subprocess.Popen:
        scenario = SCENARIOS[name]
        out = self.out / name  # its own directory: two scenarios may plan the same stack file
        if scenario.has_stack_file:
            argv = [sys.executable, "-m", "tools.plan", "--stack", scenario.stack, "--out", str(out)]
        else:
            config_file = self.out / f"{name}.config.json"
            config_file.write_text(json.dumps(scenario.raw_config(), indent=2))
            argv = [
                sys.executable,
                str(HERE / "plan_variant.py"),
                "--stack",
                name,
                "--config",
                str(config_file),
                "--out",
                str(out),
            ]
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        return subprocess.Popen(argv, cwd=PROJECT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)

    def directory(self, name: str) -> Path:
        """Waits for the plan (bounded) and returns `<out>/<stack>`; a failed plan fails with its own message."""
        if name in self.done:
            return self.done[name]
        run = self.runs.get(name) or self.runs.setdefault(name, self._start(name))
        try:
            stdout, stderr = run.communicate(timeout=PLAN_TIMEOUT)
        except subprocess.TimeoutExpired:
            run.kill()
            run.communicate()
            raise AssertionError(
                f"the plan of {name} did not finish within {PLAN_TIMEOUT:.0f}s: {' '.join(run.args)}"
            ) from None
        assert run.returncode == 0, (
            f"the plan of {name} exited {run.returncode} ({' '.join(run.args)}):\n{stderr[-4000:]}\n{stdout[-2000:]}"
        )
        self.done[name] = self.out / name / SCENARIOS[name].stack
        return self.done[name]

    def close(self) -> None:
        for run in self.runs.values():
            if run.poll() is None:
                run.kill()
                run.wait(10)


@pytest.fixture(scope="session")
def plans(request, tmp_path_factory):
    wanted = []
    for item in request.session.items:
        name = _item_scenario(item)
        if name and name not in wanted:
            wanted.append(name)
    runs = Plans(wanted, tmp_path_factory.mktemp("plans"))
    yield runs
    runs.close()


# ------------------------------------------------------------------------------------- the cluster
@functools.cache
def _scenario_minor(name: str) -> tuple[int, ...]:
    """The Kubernetes minor scenario `name` runs on, as numbers (parsing its config once)."""
    return tuple(int(part) for part in SCENARIOS[name].kube_minor.split("."))


def _item_scenario(item) -> str | None:
    """The scenario a collected test runs on; None for a test without one."""
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("scenario_name") if callspec else None


def _item_minor(item) -> tuple[int, ...]:
    """The minor a test's scenario runs on; () for tests without a scenario."""
    name = _item_scenario(item)
    return _scenario_minor(name) if name else ()


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "scenarios(*names): the scenarios (dra_scenarios.SCENARIOS) a module's or a test's tests run on"
    )


def pytest_generate_tests(metafunc):
    """One test per scenario its closest `scenarios` marker names: the test's own, else its module's."""
    marker = metafunc.definition.get_closest_marker("scenarios")
    if marker is not None:
        unknown = [name for name in marker.args if name not in SCENARIOS]
        assert marker.args and not unknown, f"{metafunc.definition.nodeid}: scenarios {marker.args} ({unknown} unknown)"
        metafunc.parametrize("scenario_name", marker.args, ids=marker.args, scope="module")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """This directory's tests of one minor run together, so each control plane starts once.

    It runs after pytest has grouped each module's tests by scenario; a stable sort keeps that order within a
    minor; tests outside e2e/dra keep their places.
    """
    slots = [index for index, item in enumerate(items) if Path(item.path).is_relative_to(HERE)]
    ordered = sorted((items[index] for index in slots), key=_item_minor)
    for index, item in zip(slots, ordered, strict=True):
        items[index] = item


def _create_classes(kube: Kube) -> dict:
    """The NVIDIA chart's DeviceClasses and Nebius's network classes: name -> (error or None, stored object)."""
    created = {}
    for manifest in device_classes():
        name = manifest["metadata"]["name"]
        try:
            created[name] = (None, kube.create(manifest))
        except Exception as error:
            created[name] = (api_message(error), None)
    return created


def _classes_report(created: dict) -> dict:
    gpu = created.get("gpu.nvidia.com", (None, None))[1] or {}
    return {
        "created": sorted(n for n, (e, _) in created.items() if e is None),
        "refused": {n: e for n, (e, _) in created.items() if e},
        "gpu.nvidia.com extendedResourceName kept": "extendedResourceName" in gpu.get("spec", {}),
    }


class Cluster:
    """One running control plane of a minor, its client and the DeviceClasses created on it once for every stack."""

    def __init__(self, minor: str, report: Report) -> None:
        control_plane = control_plane_mod
        self.minor = minor
        self.plane = control_plane.ControlPlane(quiet=True, kube_minor=minor)
        self.plane.__enter__()
        try:
            self.kube = Kube(str(self.plane.kubeconfig))
            self.classes = _create_classes(self.kube)
        except BaseException:
            self.plane.__exit__(None, None, None)
            raise
        report.data["control_planes"][minor] = {
            "server": self.plane.server,
            "startup_seconds": round(self.plane.startup_seconds, 1),
            "kubernetes": self.plane.kube_version,
        }
        report.data["device_classes"][minor] = _classes_report(self.classes)

    def close(self) -> None:
        try:
            self.kube.close()
        finally:
            self.plane.__exit__(None, None, None)


class Clusters:
    """At most one Cluster at a time: asking for another minor stops the running one first."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.current: Cluster | None = None

    def of(self, minor: str) -> Cluster:
        if self.current is not None and self.current.minor != minor:
            self.close()
        if self.current is None:
            self.current = Cluster(minor, self.report)
        return self.current

    def close(self) -> None:
        if self.current is not None:
            current, self.current = self.current, None
            current.close()


@pytest.fixture(scope="session")
def clusters(plans, report):
    running = Clusters(report)
    yield running
    running.close()


@pytest.fixture(scope="module")
def scenario_name() -> str | None:
    """The scenario a test runs on, parametrized from its `scenarios` marker (pytest_generate_tests); None without one."""
    return None


@pytest.fixture(scope="module")
def cluster(scenario_name, clusters) -> Cluster:
    """The control plane of the scenario's minor (the oldest minor for a test without a scenario)."""
    minor = SCENARIOS[scenario_name].kube_minor if scenario_name else control_plane_mod._build.default_minor()
    return clusters.of(minor)


@pytest.fixture(scope="module")
def cp(cluster):
    return cluster.plane


@pytest.fixture(scope="module")
def kube(cluster):
    return cluster.kube


@pytest.fixture(scope="module")
def classes(cluster):
    return cluster.classes


@pytest.fixture(scope="module")
def deployed(scenario_name, kube, plans, classes, report):
    started = time.monotonic()
    assert scenario_name, "a test that deploys a stack needs a scenarios marker naming it"
    scenario = SCENARIOS[scenario_name]
    stack = Deployed(scenario, scenario.config(), plans.directory(scenario_name))
    entry = report.scenario(scenario_name)
    try:
        deploy(kube, stack)
        entry["objects"] = len(stack.applied)
        entry["accepted"] = sum(1 for a in stack.applied if a.error is None and not a.differences)
        entry["helm_not_installed"] = [f"{r.namespace}/{r.release} ({r.chart} {r.version})" for r in stack.helm]
        entry["nodes"] = {node: group or "system" for node, group in stack.nodes.items()}
        yield stack
    finally:
        teardown(kube)
        entry["seconds"] = round(time.monotonic() - started, 1)


@pytest.fixture(scope="module")
def samples(deployed, kube, report):
    """The stack's sample pods, waited for until allocated and bound, then deleted to free their devices."""
    found = {}
    for applied in deployed.applied:
        if applied.kind == "Pod" and applied.error is None:
            template = deployed.manifests()[applied.path]["spec"]["resourceClaims"][0]["resourceClaimTemplateName"]
            found[applied.name] = watch_allocation(kube, applied.namespace, applied.name, template)
    for name, result in found.items():
        report.claim(deployed.scenario.name, f"sample pod {name}", result.problem is None, result.group or "-", result)
        release(kube, result.namespace, name)
    return found


@pytest.fixture(scope="module")
def probes(deployed, samples, kube, report):
    """One probe pod per ResourceClaimTemplate the stack ships, one after the other (each frees its devices)."""
    found = {}
    for applied in deployed.applied:
        if applied.kind == "ResourceClaimTemplate" and applied.error is None:
            result = probe(kube, deployed, applied.name, namespace=applied.namespace)
            found[applied.name] = result
            report.claim(deployed.scenario.name, applied.name, result.problem is None, result.group or "-", result)
    return found
