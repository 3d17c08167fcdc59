"""Every chart the stack installs can come from a mirror: the repository is a setting, upstream is the default."""

from __future__ import annotations

import json

import pytest
import yaml

from components.config.stack_file import load_stack_config
from components.dra_constants import (
    DCGM_EXPORTER_REPOSITORY,
    GPU_OPERATOR_CHART,
    KUBE_PROMETHEUS_STACK_CHART,
    LEGACY_CHART,
    NETWORK_OPERATOR_CHART,
    NGC_REPOSITORY,
    PROMETHEUS_COMMUNITY_REPOSITORY,
    RENAMED_CHART,
)
from tests.kubernetes_manifests import releases
from tools.plan.mock_engine import ProgramRun, RegisteredResource, run_program

MIRROR = "https://charts.mirror.example:8443/proxy/nvidia"
OCI_MIRROR = "oci://harbor.example/charts"
DCGM_EXPORTER_CHART = "dcgm-exporter"

# Which key moves which chart; the operators appear only on prod without its driversPresets.
CHART_KEYS = {
    LEGACY_CHART: "draDriverRepository",
    GPU_OPERATOR_CHART: "gpuOperatorRepository",
    NETWORK_OPERATOR_CHART: "networkOperatorRepository",
    DCGM_EXPORTER_CHART: "dcgmExporterRepository",
    KUBE_PROMETHEUS_STACK_CHART: "kubePrometheusStackRepository",
}
UPSTREAM = {
    LEGACY_CHART: NGC_REPOSITORY,
    GPU_OPERATOR_CHART: NGC_REPOSITORY,
    NETWORK_OPERATOR_CHART: NGC_REPOSITORY,
    DCGM_EXPORTER_CHART: DCGM_EXPORTER_REPOSITORY,
    KUBE_PROMETHEUS_STACK_CHART: PROMETHEUS_COMMUNITY_REPOSITORY,
}


def every_release_stack(**settings: str) -> ProgramRun:
    """prod in operator mode with kube-prometheus-stack: all five charts are installed."""
    config = dict(load_stack_config("prod"))
    groups = yaml.safe_load(config["nebius-dra:gpuNodeGroups"])
    config["nebius-dra:gpuNodeGroups"] = json.dumps(
        [{key: value for key, value in group.items() if key != "driversPreset"} for group in groups]
    )
    config["nebius-dra:kubePrometheusStack"] = "true"
    config.update({f"nebius-dra:{key}": value for key, value in settings.items()})
    return run_program("prod", config=config)


def release_of(run: ProgramRun, chart: str) -> RegisteredResource:
    (release,) = releases(run, chart)
    return release


def test_without_settings_every_chart_comes_from_its_upstream_repository():
    run = every_release_stack()
    assert run.error is None, run.error
    for chart, repository in UPSTREAM.items():
        release = release_of(run, chart)
        assert (release.inputs["chart"], release.inputs["repositoryOpts"]) == (chart, {"repo": repository}), chart


@pytest.mark.parametrize("chart", list(CHART_KEYS))
def test_a_classic_mirror_moves_only_its_own_chart(chart):
    run = every_release_stack(**{CHART_KEYS[chart]: MIRROR + "/"})
    assert run.error is None, run.error
    for other, repository in UPSTREAM.items():
        expected = MIRROR if other == chart else repository
        assert release_of(run, other).inputs["repositoryOpts"] == {"repo": expected}, other


@pytest.mark.parametrize("chart", list(CHART_KEYS))
def test_an_oci_mirror_is_pulled_by_the_charts_full_reference(chart):
    run = every_release_stack(**{CHART_KEYS[chart]: OCI_MIRROR})
    assert run.error is None, run.error
    release = release_of(run, chart)
    assert release.inputs["chart"] == f"{OCI_MIRROR}/{chart}"
    assert release.inputs.get("repositoryOpts") is None


def test_the_renamed_driver_chart_takes_a_mirror_too():
    run = every_release_stack(draDriverChart=RENAMED_CHART, draDriverRepository=MIRROR)
    assert run.error is None, run.error
    assert release_of(run, RENAMED_CHART).inputs["repositoryOpts"] == {"repo": MIRROR}


@pytest.mark.parametrize("key", sorted(set(CHART_KEYS.values())))
@pytest.mark.parametrize(
    "given",
    [
        "https://robot:hunter2@charts.example/nvidia",
        "ftp://charts.example/nvidia",
        "charts.example/nvidia",
        "https://charts.example/nvidia\n",
        "https://charts.example/nvidia?token=abc",
    ],
)
def test_a_repository_that_is_no_plain_url_is_refused_by_key_before_any_resource(key, given):
    run = every_release_stack(**{key: given})
    assert run.resources == []
    message = str(run.error)
    assert f"nebius-dra:{key}: got" in message and "expected a chart repository or mirror URL" in message, message
    assert "hunter2" not in message, message
