"""A key of draDriverValues or gpuMetricsValues that the chart does not read is refused by name, with the closest key.

Helm ignores such a key without a word, so a misspelt override would install the chart's default. The key lists
are the program's own data (components/chart_keys/), checked here for shape and for what they let through: the
maps a chart leaves to the user and the maps its templates hand to Kubernetes whole.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from components.config.chart_keys import CHART_KEYS_DIR, OPEN_MAP, chart_keys
from components.config.errors import ConfigError
from components.config.stack import parse_stack_config
from components.config.stack_file import load_stack_config, program_config
from components.dra_constants import LEGACY_CHART, RENAMED_CHART
from tools.plan.mock_engine import run_program

BASE = program_config(load_stack_config("dev"))


def problems_of(**settings: Any) -> list[str]:
    config = {
        **BASE,
        **{key: json.dumps(value) if not isinstance(value, str) else value for key, value in settings.items()},
    }
    try:
        parse_stack_config(config, "dev")
    except ConfigError as error:
        return str(error).splitlines()[1:]
    return []


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (
            {"servceMonitor": {"enabled": True}},
            "nebius-dra:gpuMetricsValues: servceMonitor is not a value of chart dcgm-exporter 4.8.3 "
            "(components/chart_keys/dcgm-exporter-4.8.3.keys); did you mean serviceMonitor?",
        ),
        ({"serviceMonitor": {"intervall": "1m"}}, "serviceMonitor.intervall is not a value of chart dcgm-exporter"),
        ({"serviceMonitor": {"intervall": "1m"}}, "did you mean serviceMonitor.interval?"),
        (
            {"livenessProbe": {"failureThreshold": 3}},
            "the chart's keys under livenessProbe: initialDelaySeconds, periodSeconds",
        ),
        ({"zzz": 1}, "the chart's keys at the top level: affinity, arguments, basicAuth,"),
    ],
)
def test_a_gpu_metrics_value_the_chart_does_not_read_is_refused(values, expected):
    problems = problems_of(gpuMetricsValues=values)
    assert len(problems) == 1 and expected in problems[0], problems


def test_maps_the_exporter_chart_leaves_open_or_hands_to_kubernetes_take_any_key():
    values = {
        "podLabels": {"team": "ml"},
        "resources": {"limits": {"ephemeral-storage": "1Gi"}},
        "securityContext": {"readOnlyRootFilesystem": True},
        "initContainers": [],
        "serviceMonitor": {"interval": "1m"},
    }
    assert problems_of(gpuMetricsValues=values) == []


@pytest.mark.parametrize(("chart", "version"), [(LEGACY_CHART, "25.12.0"), (RENAMED_CHART, "0.4.1")])
@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"kubeletPlugin": {"tolerationz": []}}, "did you mean kubeletPlugin.tolerations?"),
        ({"namespace": "gpu"}, "namespace is not a value of chart {chart} {version}"),
        ({"namespace": "gpu"}, "did you mean namespaceOverride?"),
    ],
)
def test_a_dra_driver_value_the_chart_does_not_read_is_refused(chart, version, values, expected):
    problems = problems_of(draDriverChart=chart, draDriverValues=values)
    assert len(problems) == 1 and expected.format(chart=chart, version=version) in problems[0], problems


def test_each_driver_chart_line_is_checked_against_its_own_keys():
    assert problems_of(draDriverChart=RENAMED_CHART, draDriverValues={"altProcDevices": []}) == []
    (problem,) = problems_of(draDriverChart=LEGACY_CHART, draDriverValues={"altProcDevices": []})
    assert f"altProcDevices is not a value of chart {LEGACY_CHART} 25.12.0" in problem


def test_driver_maps_handed_to_kubernetes_take_any_key():
    values = {
        "kubeletPlugin": {
            "affinity": {"podAntiAffinity": {}},
            "containers": {"gpus": {"securityContext": {"readOnlyRootFilesystem": True}}},
        },
        "webhook": {"serviceAccount": {"annotations": {"a": "b"}}},
        "maskNvidiaDriverParams": True,
    }
    assert problems_of(draDriverValues=values) == []


def test_a_misspelt_key_of_secret_values_is_named_and_the_value_never_quoted():
    config = {
        **load_stack_config("dev"),
        "nebius-dra:draDriverValues": json.dumps({"kubeletPlugin": {"tolerationz": "hunter2-secret"}}),
    }
    run = run_program("dev", config=config, secret_keys=["nebius-dra:draDriverValues"])
    assert isinstance(run.error, ConfigError)
    assert "kubeletPlugin.tolerationz" in str(run.error) and "hunter2" not in str(run.error)


@pytest.mark.parametrize("path", sorted(CHART_KEYS_DIR.glob("*.keys")), ids=lambda path: path.name)
def test_a_key_list_names_its_source_and_every_path_has_its_parent(path):
    chart, version = path.stem.rsplit("-", 1)
    assert path.read_text().startswith(f"# Value keys of chart {chart} {version}")
    keys = chart_keys(chart, version)
    for dotted in keys.paths | keys.open_maps:
        parent = dotted.rpartition(".")[0]
        assert not parent or parent in keys.paths, f"{dotted} has no parent {parent} in {path.name}"
    assert not any(line.endswith(OPEN_MAP) for line in keys.paths)


def test_many_unknown_keys_give_a_bounded_refusal():
    """Issue 37: 0.9 MB of unknown keys in draDriverValues gave 30 MB of problems; the first 20 are told, the rest
    counted."""
    values = {f"unknownKey{index:06d}": {"x": index} for index in range(25_000)}
    config = {**program_config(load_stack_config("dev")), "draDriverValues": json.dumps(values)}
    with pytest.raises(ConfigError) as refused:
        parse_stack_config(config, "dev")
    message = str(refused.value)
    assert "and 24980 more keys chart" in message
    assert len(message) < 20_000, len(message)


def test_a_plain_chart_value_of_a_credentials_shape_is_refused_naming_the_path_and_the_secret_command():
    """Attack 2, A13: `priorityClassName: https://u:CANARY@x` was taken, deployed in clear, and the plan's values file
    (redacted leaf by leaf) showed another value than `pulumi up` would send."""
    problems = problems_of(draDriverValues={"kubeletPlugin": {"priorityClassName": "https://u:CANARY@x"}})
    assert len(problems) == 1, problems
    assert problems[0].startswith(
        "  - nebius-dra:draDriverValues: kubeletPlugin.priorityClassName may hold a credential"
    )
    assert (
        "`pulumi config set --path --secret 'nebius-dra:draDriverValues.kubeletPlugin.priorityClassName'"
        in (problems[0])
    )
    assert "CANARY" not in problems[0]
    [metrics] = problems_of(gpuMetricsValues={"podLabels": {"team": "https://u:CANARY@x"}})
    assert metrics.startswith("  - nebius-dra:gpuMetricsValues: podLabels.team may hold a credential")
    assert "cannot be set as a secret" in metrics


def test_a_secret_chart_value_of_a_credentials_shape_is_taken():
    config = {
        **load_stack_config("dev"),
        "nebius-dra:draDriverValues": json.dumps({"kubeletPlugin": {"priorityClassName": "https://u:CANARY@x"}}),
    }
    run = run_program("dev", config=config, secret_keys=["nebius-dra:draDriverValues"])
    assert run.error is None
