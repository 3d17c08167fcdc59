"""Which DRA driver settings restart its kubelet plugin, shown by the real Helm rendering the vendored charts.

The table of consequences says a Helm upgrade of a release whose pod template changes restarts its
pods (policies/dra_guardrails/consequences.py, the Helm rows). Here the real `helm template` renders
the vendored charts (../shared/vendor/charts, PROVENANCE.md there) with the Helm values the plan
writes for dev, before and after a setting changes, and the kubelet plugin's DaemonSet pod
template is compared: a change to it is what a `helm upgrade` rolls out to every GPU node. A
setting that reaches only the controller changes no plugin pod.

Helm is the binary e2e/helm/helm_build.py builds from the Go module proxy (the version e2e/gpu-node/build.sh
builds), which this tier's conftest hands over as the `helm` fixture; without the vendored charts the tests fail.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.config.stack_file import load_stack_config
from policies.dra_guardrails import PlannedResource
from policies.dra_guardrails.consequences import HELM_RELEASE_TYPE, Effect, consequence_of_setting
from policies.dra_guardrails.planned import is_dra_driver_release
from tests.helpers import VENDORED_CHARTS
from tests.stack_configs import with_compute_domains
from tools.plan.files import plan_files
from tools.plan.model import build_plan
from tools.plan.values import mock_id_references, presentable

KUBE_VERSION = "1.34.0"
LINES = {"nvidia-dra-driver-gpu": {}, "dra-driver-nvidia-gpu": {"nebius-dra:draDriverChart": "dra-driver-nvidia-gpu"}}


def _rendered(helm: Path, changes: dict[str, str], tmp_path: Path) -> list[dict[str, Any]]:
    """Every object the DRA driver's chart renders with the Helm values the plan writes for dev with `changes`."""
    plan = build_plan("dev", config={**load_stack_config("dev"), **changes}, out=None)
    assert plan.error is None, plan.error
    references = mock_id_references(plan.run.resources)
    inputs = {r.urn: presentable(r.inputs, references) for r in plan.run.resources}
    [release] = [
        r for r in plan.run.resources if is_dra_driver_release(PlannedResource(r.urn, r.type, r.name, r.inputs))
    ]
    values = inputs[release.urn]
    files = plan_files(plan.run.resources, inputs)
    [text] = [t for name, t in files.items() if name == f"helm/{values['namespace']}/{values['name']}.values.yaml"]
    path = tmp_path / f"values-{len(list(tmp_path.iterdir()))}.yaml"
    path.write_text(text)
    archive = VENDORED_CHARTS / f"{values['chart'].rsplit('/', 1)[-1]}-{values['version']}.tgz"
    assert archive.is_file(), f"{archive.name} is not vendored in {VENDORED_CHARTS} (make e2e needs ../shared/vendor)"
    command = [str(helm), "template", values["name"], str(archive), "--namespace", values["namespace"]]
    done = subprocess.run(
        [*command, "-f", str(path), "--kube-version", KUBE_VERSION],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if isinstance(d, dict)]


def _plugin(objects: list[dict[str, Any]]) -> dict[str, Any]:
    [daemonset] = [o for o in objects if o.get("kind") == "DaemonSet" and "kubelet-plugin" in o["metadata"]["name"]]
    return daemonset


# Settings whose change restarts the kubelet plugin (its pod template changes), and ones that reach only the
# controller. draDriverValues is deep-merged last, so a key of it stands for any chart value.
RESTARTS = {
    "draDriverRoot": {"nebius-dra:draDriverRoot": "/run/nvidia/driver"},
    "draComputeDomains": {"nebius-dra:draComputeDomains": "true"},
    "draDriverValues (logVerbosity)": {"nebius-dra:draDriverValues": json.dumps({"logVerbosity": "6"})},
}
# What a case needs on both sides, so that only its setting differs: ComputeDomains need a GB300 group.
BASES = {
    "draComputeDomains": {
        f"nebius-dra:{key}": value for key, value in with_compute_domains("dev").items() if key != "draComputeDomains"
    },
}
KEEPS = {
    "draDriverValues (controller.podAnnotations)": {
        "nebius-dra:draDriverValues": json.dumps({"controller": {"podAnnotations": {"team": "a"}}})
    },
}


@pytest.mark.parametrize("line", LINES)
@pytest.mark.parametrize(("case", "change"), [*RESTARTS.items(), *KEEPS.items()])
def test_a_setting_restarts_the_kubelet_plugin_exactly_when_helm_changes_its_pod_template(
    helm, line, case, change, tmp_path
):
    base = {**LINES[line], **BASES.get(case, {})}
    before = _plugin(_rendered(helm, base, tmp_path))
    after = _plugin(_rendered(helm, {**base, **change}, tmp_path))
    setting = next(iter(change)).removeprefix("nebius-dra:")
    row = consequence_of_setting(setting, HELM_RELEASE_TYPE)
    assert row is not None and row.effect is Effect.HELM_RESTART, f"{setting} is not a Helm upgrade in the table"
    changed = before["spec"]["template"] != after["spec"]["template"]
    assert changed is (case in RESTARTS), f"{line} {case}: the plugin's pod template changed: {changed}"


@pytest.mark.parametrize("line", LINES)
def test_a_restart_reaches_every_gpu_node_at_once_as_the_table_says(helm, line, tmp_path):
    """The chart's kubeletPlugin.updateStrategy, which the stack keeps: every plugin pod is replaced together."""
    strategy = _plugin(_rendered(helm, LINES[line], tmp_path))["spec"]["updateStrategy"]
    assert strategy == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "100%"}}
    [row] = [r for r in (consequence_of_setting("draDriverRoot", HELM_RELEASE_TYPE),) if r is not None]
    assert "every GPU node at once" in row.does and "maxUnavailable 100%" in row.source
    assert "controller" in row.does, "the row says which values leave the plugin running"
