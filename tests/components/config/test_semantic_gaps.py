"""Values the schema's shapes accept but the stack cannot use are refused by key, value and what is allowed,
before anything registers (issue 23, second round): a spot ceiling of 0, a capacity block group ID of another
kind, a claim namespace kube-prometheus-stack installs into, and gpuMetricsValues that reach a guarded value
around its key (the dcgm-exporter chart's `arguments`, `extraEnv`, mounts) or pick an unpinned image.
"""

from __future__ import annotations

from typing import Any

import pytest

from components.config.errors import ConfigError
from tests.stack_configs import parsed, without_presets


def refusal(**overrides: Any) -> str:
    with pytest.raises(ConfigError) as raised:
        parsed("dev", **overrides)
    return str(raised.value)


def groups_with_capacity(capacity: dict[str, Any]) -> list[dict[str, Any]]:
    groups = without_presets("dev")
    for group in groups:
        group.pop("driversPreset", None)
        group["capacity"] = capacity
    return groups


@pytest.mark.parametrize("price", ["0", "0.0", "0.000"])
def test_a_spot_ceiling_of_zero_is_refused(price):
    message = refusal(gpuNodeGroups=groups_with_capacity({"type": "spot", "maxPricePerGpuHour": price}))
    assert f'capacity.maxPricePerGpuHour got "{price}": a spot VM is never offered at no price' in message


def test_a_capacity_block_group_id_of_another_kind_is_refused():
    capacity = {"type": "reserved", "capacityBlockGroupIds": ["computeinstance-e00aaaa"]}
    message = refusal(gpuNodeGroups=groups_with_capacity(capacity))
    assert (
        'capacityBlockGroupIds has ["computeinstance-e00aaaa"], which is not the ID of a capacity block group'
        in message
    )


def test_the_claim_namespace_may_not_be_kube_prometheus_stacks():
    message = refusal(claimNamespace="monitoring", gpuMetrics="true", kubePrometheusStack="true")
    assert 'nebius-dra:claimNamespace: got "monitoring", the namespace of the kube-prometheus-stack release' in message


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (
            {"extraEnv": [{"name": "KUBERNETES_ENABLE_DRA", "value": "false"}]},
            'extraEnv: [0] sets "KUBERNETES_ENABLE_DRA"',
        ),
        (
            {"extraEnv": [{"name": "DCGM_EXPORTER_COLLECTORS", "value": "/x.csv"}]},
            'extraEnv: [0] sets "DCGM_EXPORTER_COLLECTORS"',
        ),
        ({"arguments": ["-f", "/etc/dcgm-exporter/dcp-metrics-included.csv"]}, "arguments: got"),
        ({"arguments": ["-f", "/etc/dcgm-exporter/default-counters.csv", "-m", "x:y"]}, "arguments: got"),
        ({"extraVolumeMounts": []}, "extraVolumeMounts: replaces the chart's list"),
        ({"image": {"tag": "latest"}}, 'image.tag: got "latest"'),
    ],
    ids=["env-dra-off", "env-field-list", "arguments-replaced", "arguments-configmap", "mounts", "latest"],
)
def test_gpu_metrics_values_cannot_reach_a_guarded_value_around_its_key(values, expected):
    message = refusal(gpuMetrics="true", gpuMetricsValues=values)
    assert f"nebius-dra:gpuMetricsValues: {expected}" in message


@pytest.mark.parametrize(
    "values",
    [
        {"arguments": ["-f", "/etc/dcgm-exporter/default-counters.csv", "-n"]},
        {"extraEnv": [{"name": "HTTPS_PROXY", "value": "http://proxy:3128"}]},
        {"image": {"tag": "4.5.3-4.8.2-distroless"}},
    ],
    ids=["extra-argument", "unrelated-env", "pinned-tag"],
)
def test_gpu_metrics_values_that_keep_the_guards_are_accepted(values):
    assert parsed("dev", gpuMetrics="true", gpuMetricsValues=values).observability is not None


@pytest.mark.parametrize("key", ["draDriverValues", "gpuMetricsValues"])
@pytest.mark.parametrize(
    ("tag", "why"),
    [
        ("latest", "(the tag a push without one gets"),
        ("Latest ", "(the tag a push without one gets"),
        # Issue 37: only `latest` was refused.
        ("main", "(a build of a git branch's newest commit"),
        ("Nightly", "(rebuilt every night"),
        ("edge", "(the newest build ahead of any release"),
    ],
)
def test_every_chart_values_override_refuses_an_image_tag_that_moves(key, tag, why):
    """Hostile review: draDriverValues took `image.tag: latest` (the driver's controller and kubelet plugin on every
    GPU node would run whatever was pushed last), while gpuMetricsValues refused it."""
    values = {"image": {"repository": "registry.example.com/dra", "tag": tag}}
    message = refusal(gpuMetrics="true", **{key: values})
    assert f"nebius-dra:{key}: image.tag: got {tag!r}".replace("'", '"') in message, message
    assert f"a tag that moves {why}" in message


def test_a_pinned_dra_driver_image_tag_is_accepted():
    values = {"image": {"repository": "registry.example.com/dra", "tag": "v25.12.0"}}
    assert parsed("dev", draDriverValues=values).driver.value_overrides == values
