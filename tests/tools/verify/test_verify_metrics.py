"""The verifier's GPU metrics step: exporter output parsed and judged, and the step run inside the GPU smoke workload.

The exporter pages in tests/data/verify are shaped as dcgm-exporter 4.6.0-4.8.3 renders them for the fixture
node while the GPU smoke pod holds gpu-3 (see each file's header).
"""

from __future__ import annotations

import io

import pytest

from tests.fake_cluster import GPU_CLAIM, GPU_POD, FakeCluster, settings, slice_node_state
from tests.verify_fixtures import FIXTURE_NODE, FakeClock, copied, healthy_prod_state, load, prod_expectations, text
from tools.verify.cluster import ClusterError
from tools.verify.metrics import (
    ExpositionError,
    HeldGpu,
    MetricsSettings,
    exporter_pod,
    judge_attribution,
    parse_exposition,
    read_attribution,
)
from tools.verify.report import Progress
from tools.verify.runner import FAIL, NOT_HELD, PASS, SKIP, Verification

HELD = HeldGpu(
    pod=GPU_POD,
    namespace="dra-samples",
    node=FIXTURE_NODE,
    claim=GPU_CLAIM,
    devices=frozenset({(FIXTURE_NODE, "gpu-3")}),
)
SOURCE = "exporter gpu-metrics/dcgm-exporter-x7q2m"


def page(name: str = "dcgm-metrics-dra.txt") -> str:
    return text(name)


def cause(outcome) -> str:
    (finding,) = outcome.findings
    return finding.likely_cause


def test_the_exporter_page_parses_into_gpu_series_with_their_labels():
    samples = parse_exposition(page())
    assert len(samples) == 32
    held = [s for s in samples if s.labels.get("pod") == GPU_POD]
    assert {s.name for s in held} == {
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    }
    assert {s.uuid for s in held} == {"GPU-1f6a3d8b-c2e7-4950-8ab4-73d5e1c09f26"}
    assert held[0].labels["dra_claim_namespace"] == "dra-samples" and held[0].labels["dra_device_name"] == "gpu-3"


def test_label_values_keep_escapes_commas_and_braces():
    [sample] = parse_exposition('DCGM_FI_DEV_GPU_UTIL{UUID="GPU-1",modelName="a \\"b\\", {c}\\\\"} 5 1700000000\n')
    assert sample.labels["modelName"] == 'a "b", {c}\\' and sample.value == "5"


@pytest.mark.parametrize("garbage", ["<html>502 Bad Gateway</html>", 'DCGM_FI_DEV_GPU_UTIL{UUID="x} 1'])
def test_a_page_that_is_not_prometheus_text_is_an_error(garbage):
    with pytest.raises(ExpositionError):
        parse_exposition(garbage)
    outcome = judge_attribution(garbage, HELD, SOURCE, 0)
    assert not outcome.passed and "not Prometheus text" in outcome.findings[0].found


def test_series_naming_the_pod_its_claim_and_the_allocated_device_pass():
    outcome = judge_attribution(page(), HELD, SOURCE, 12)
    assert outcome.passed, outcome.findings
    assert outcome.summary == (
        f"4 series on GPU-1f6a3d8b-c2e7-4950-8ab4-73d5e1c09f26 name pod {GPU_POD} and claim {GPU_CLAIM} ({SOURCE})"
    )


def test_an_exporter_without_dra_mode_fails_with_the_cause():
    outcome = judge_attribution(page("dcgm-metrics-no-dra.txt"), HELD, SOURCE, 90)
    (finding,) = outcome.findings
    assert finding.found.startswith("32 GPU series and none names a pod or claim (after 90s)")
    assert "kubernetesDRA.enabled is off" in finding.likely_cause
    assert f"dra_claim_name={GPU_CLAIM}" in finding.expected


def test_a_series_of_another_claim_is_not_this_pods_attribution():
    other = page().replace(GPU_POD, "trainer-0").replace(GPU_CLAIM, "trainer-0-gpu-abcde")
    outcome = judge_attribution(other, HELD, SOURCE, 30)
    assert "some attributed to other claims, none to this pod after 30s" in outcome.findings[0].found
    assert "--metrics-timeout" in cause(outcome)


def test_the_pod_named_without_a_claim_is_the_device_plugin_path():
    legacy = "\n".join(
        line.split(',dra_claim_name="')[0] + ',namespace="dra-samples",pod="verify-gpu-k3x9q"} 97'
        if 'pod="verify-gpu-k3x9q"' in line
        else line
        for line in page().splitlines()
    )
    outcome = judge_attribution(legacy, HELD, SOURCE, 0)
    assert "name the pod but no claim" in outcome.findings[0].found
    assert "device plugin's pod resources, not DRA" in cause(outcome)


def test_the_claim_on_a_different_gpu_than_allocated_fails():
    outcome = judge_attribution(
        page(), HeldGpu(**{**HELD.__dict__, "devices": frozenset({(FIXTURE_NODE, "gpu-5")})}), SOURCE, 0
    )
    assert "name another claim or device" in outcome.findings[0].found
    assert "ResourceSlice cache is stale" in cause(outcome)


def test_a_page_without_gpu_series_points_at_dcgm_and_the_profile():
    outcome = judge_attribution("# HELP go_goroutines x\ngo_goroutines 12\n", HELD, SOURCE, 0)
    assert "serves no DCGM GPU series" in outcome.findings[0].found
    assert "gpuMetricsProfile to basic" in cause(outcome)


def test_the_held_gpu_comes_from_the_running_pod_and_its_allocated_claim():
    held = HeldGpu.from_objects(load("pod-smoke-gpu-running.yaml"), load("resourceclaim-gpu.yaml"))
    assert held == HELD


# Reading the exporter through the API server


def metrics_settings(timeout_s: float = 60) -> tuple[MetricsSettings, FakeClock]:
    clock = FakeClock()
    return MetricsSettings(timeout_s, 5.0, clock, clock.sleep), clock


@pytest.fixture
def cluster() -> FakeCluster:
    return FakeCluster(slice_node_state(copied(healthy_prod_state())))


def test_the_exporter_is_read_until_it_names_the_pod(cluster):
    cluster.metrics_pages = [page("dcgm-metrics-no-dra.txt")] * 3 + [page()]
    found, clock = metrics_settings()
    outcome = read_attribution(cluster, "gpu-metrics", HELD, found, lambda _: None)
    assert outcome.passed, outcome.findings
    assert len(cluster.proxied) == 4 and clock.now == 15


def test_the_exporter_is_read_until_the_time_is_up_then_the_last_answer_is_judged(cluster):
    cluster.metrics_pages = [page("dcgm-metrics-no-dra.txt")]
    found, clock = metrics_settings(timeout_s=20)
    outcome = read_attribution(cluster, "gpu-metrics", HELD, found, lambda _: None)
    assert not outcome.passed and "(after 20s)" in outcome.findings[0].found
    assert len(cluster.proxied) == 5 and clock.now == 20


def test_no_exporter_on_the_node_says_where_to_look(cluster):
    cluster.exporter_pods[0]["spec"]["nodeName"] = "computeinstance-e00other000000000"
    assert exporter_pod(cluster.exporter_pods, FIXTURE_NODE) is None
    outcome = read_attribution(cluster, "gpu-metrics", HELD, metrics_settings()[0], lambda _: None)
    assert outcome.summary == "no exporter on the smoke pod's node" and cluster.proxied == []
    assert "nvidia.com/dra-kubelet-plugin=true" in cause(outcome)


def test_an_exporter_that_is_not_ready_is_named(cluster):
    cluster.exporter_pods[0]["status"]["conditions"][0]["status"] = "False"
    outcome = read_attribution(cluster, "gpu-metrics", HELD, metrics_settings()[0], lambda _: None)
    assert outcome.summary == "the exporter on the smoke pod's node is not ready"
    assert "kubectl -n gpu-metrics logs dcgm-exporter-x7q2m" in cause(outcome)


# The step inside the verification


def run(cluster: FakeCluster, expect=None):
    progress = Progress(io.StringIO(), interactive=False)
    results = list(Verification(cluster, expect or prod_expectations(), settings(), progress).run())
    return {r.name: r for r in results}


def test_missing_attribution_fails_gpu_metrics_and_leaves_smoke_gpu_passing(cluster):
    cluster.metrics_pages = [page("dcgm-metrics-no-dra.txt")]
    results = run(cluster)
    assert results["smoke-gpu"].status == PASS
    assert results["gpu-metrics"].status == FAIL
    assert "none names a pod or claim" in results["gpu-metrics"].findings[0].found
    assert cluster.deleted == [
        f"pod/{GPU_POD}",
        f"resourceclaim/{GPU_CLAIM}",
        "pod/verify-ib-network-k3x9q",
        "resourceclaim/verify-ib-network-k3x9q-network-b5c8d",
    ]


def test_an_api_error_reading_the_exporter_fails_only_the_metrics_step(cluster):
    def refuse(*_):
        raise ClusterError("read /metrics of pod gpu-metrics/dcgm-exporter-x7q2m:9400: forbidden (403)")

    cluster.proxy_pod = refuse  # type: ignore[method-assign]
    results = run(cluster)
    assert results["smoke-gpu"].status == PASS
    assert results["gpu-metrics"].status == FAIL and "forbidden (403)" in results["gpu-metrics"].findings[0].found


def test_the_metrics_step_is_not_run_when_the_smoke_pod_never_held_its_gpu(cluster):
    cluster.outputs[("nvidia-smi", "-L")] = cluster.outputs[("nvidia-smi", "-L")].__class__("", "not found", 127)
    results = run(cluster)
    assert results["smoke-gpu"].status == FAIL
    assert (results["gpu-metrics"].status, results["gpu-metrics"].summary) == (SKIP, NOT_HELD)
    assert cluster.proxied == []


def test_the_metrics_step_is_skipped_on_a_stack_without_the_exporter(cluster):
    expect = prod_expectations()
    results = run(cluster, expect.__class__(**{**expect.__dict__, "metrics_namespace": None}))
    assert results["gpu-metrics"].status == SKIP and "gpuMetrics: false" in results["gpu-metrics"].summary
    assert cluster.proxied == []


def test_the_pods_series_under_another_claim_name_fail():
    """A pod with two claims: its series must carry the claim the smoke pod's template generated."""
    outcome = judge_attribution(page().replace(GPU_CLAIM, "verify-gpu-k3x9q-other-zz9zz"), HELD, SOURCE, 0)
    assert "name another claim or device" in outcome.findings[0].found
