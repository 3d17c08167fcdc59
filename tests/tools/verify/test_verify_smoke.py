"""Smoke workloads, the step runner and the CLI against a fake cluster: no real cluster anywhere.

The fake (tests/fake_cluster.py) answers with the captured API objects of tests/data/verify and records every pod and
claim deletion, so the tests can show that cleanup happens on success, on failure, on an API
error and on Ctrl-C, and that a second Ctrl-C cannot cut the cleanup short.
"""

from __future__ import annotations

import http.server
import io
import json
import os
import signal
import threading
from typing import Any, ClassVar

import kubernetes_validate
import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException
from kubernetes.stream import ws_client
from websocket import WebSocketBadStatusException, WebSocketConnectionClosedException

from tests.fake_cluster import (
    GPU_CLAIM,
    GPU_POD,
    IB_CLAIM,
    IB_POD,
    LS_IB,
    LS_NET,
    NVIDIA_SMI,
    FakeCluster,
    settings,
    slice_node_state,
)
from tests.verify_fixtures import (
    FakeClock,
    copied,
    dev_expectations,
    healthy_dev_state,
    healthy_prod_state,
    items,
    load,
    node_names,
    prod_expectations,
    replace_node,
)
from tools.verify import __main__ as cli
from tools.verify.allocation import parse_gpu_list
from tools.verify.cluster import (
    ClusterError,
    ClusterUnreachableError,
    CredentialRefusedError,
    ExecResult,
    KubeCluster,
    exit_status,
)
from tools.verify.report import Progress, summary_table
from tools.verify.runner import FAIL, NOT_READ, PASS, SKIP, UNREACHABLE, WARN, CheckResult, Verification
from tools.verify.smoke import GPU_WORKLOAD, NETWORK_WORKLOAD, SmokeRun, SmokeSettings, smoke_pod


@pytest.fixture
def cluster() -> FakeCluster:
    return FakeCluster(slice_node_state(copied(healthy_prod_state())))


def smoke(cluster: FakeCluster, workload=GPU_WORKLOAD, timeout_s: float = 10.0, notes: list[str] | None = None):
    return SmokeRun(cluster, prod_expectations(), settings(timeout_s), (notes if notes is not None else []).append).run(
        workload
    )


def test_the_gpu_smoke_passes_and_deletes_its_pod_and_claim(cluster):
    outcome = smoke(cluster)
    assert outcome.passed, outcome.findings
    assert outcome.summary == (
        "pod on computeinstance-e00h7qk2rm8v1t9b4x: claim got gpu.nvidia.com computeinstance-e00h7qk2rm8v1t9b4x/gpu-3 (request gpu); "
        "nvidia-smi -L lists exactly it (NVIDIA H200 GPU-1f6a3d8b-c2e7-4950-8ab4-73d5e1c09f26)"
    )
    assert [pod["metadata"]["name"] for pod in cluster.created] == [GPU_POD]
    assert cluster.deleted == [f"pod/{GPU_POD}", f"resourceclaim/{GPU_CLAIM}"]


def test_the_smoke_pod_validates_against_kubernetes_1_34_and_tolerates_the_gpu_taints():
    pod = smoke_pod(
        GPU_POD,
        "dra-samples",
        GPU_WORKLOAD,
        "nvidia/cuda:13.1.1-runtime-ubuntu24.04",
        prod_expectations().smoke_tolerations(),
        900,
    )
    kubernetes_validate.validate(pod, "1.34", strict=True)
    assert pod["spec"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ]
    assert pod["spec"]["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "gpu"}]
    assert pod["spec"]["activeDeadlineSeconds"] == 900


def test_nvidia_smi_listing_more_gpus_than_claimed_fails(cluster):
    every_gpu = "".join(
        f"GPU {index}: NVIDIA H200 (UUID: {device['attributes']['uuid']['string']})\n"
        for index, device in enumerate(load("resourceslice-gpu.yaml")["spec"]["devices"])
    )
    cluster.outputs[NVIDIA_SMI] = ExecResult(every_gpu, "", 0)
    finding = smoke(cluster).findings[0]
    assert finding.expected == "exactly the claimed GPU(s): GPU-1f6a3d8b-c2e7-4950-8ab4-73d5e1c09f26"
    assert finding.found.startswith("8 GPU(s): GPU-da13c5fc")
    assert "GPUs it did not claim" in finding.likely_cause


def test_nvidia_smi_missing_from_the_container_fails_with_the_image_as_cause(cluster):
    cluster.outputs[NVIDIA_SMI] = ExecResult("", 'exec: "nvidia-smi": executable file not found in $PATH', 126)
    finding = smoke(cluster).findings[0]
    assert finding.found.startswith('exit code 126: exec: "nvidia-smi"')
    assert "--image" in finding.likely_cause
    assert f"pod/{GPU_POD}" in cluster.deleted


def test_a_pending_pod_with_cannot_allocate_all_claims_fails_and_is_cleaned_up(cluster):
    cluster.pods[GPU_POD] = [load("pod-smoke-pending.yaml")]
    cluster.events = items("events-cannot-allocate.yaml")
    notes: list[str] = []
    outcome = smoke(cluster, timeout_s=10, notes=notes)
    assert len(outcome.findings) == 1
    finding = outcome.findings[0]
    assert finding.subject == f"pod {GPU_POD}"
    assert finding.expected == "Running within 10s"
    assert "6 cannot allocate all claims" in finding.found
    assert "DRA is not enabled on the GPU node group" in finding.likely_cause
    assert any("cannot allocate all claims" in note for note in notes)
    assert cluster.reads[GPU_POD] == 5
    assert cluster.deleted == [f"pod/{GPU_POD}", f"resourceclaim/{GPU_CLAIM}"]


def test_a_smoke_pod_deleted_by_someone_else_fails_at_once(cluster):
    cluster.pods[GPU_POD] = [load("pod-smoke-pending.yaml"), None]
    finding = single(smoke(cluster, timeout_s=300).findings)
    assert (finding.subject, finding.found) == (f"pod {GPU_POD}", "the pod no longer exists")
    assert cluster.reads[GPU_POD] == 1


def test_cleanup_runs_when_the_api_fails_mid_test(cluster):
    cluster.outputs[NVIDIA_SMI] = ClusterError("exec nvidia-smi -L: HTTP 500")
    finding = single(smoke(cluster).findings)
    assert finding.found == "exec nvidia-smi -L: HTTP 500"
    assert cluster.deleted == [f"pod/{GPU_POD}", f"resourceclaim/{GPU_CLAIM}"]


def test_an_api_failure_and_a_failed_cleanup_are_reported_together(cluster):
    cluster.outputs[NVIDIA_SMI] = ClusterError("exec nvidia-smi -L: HTTP 500")
    cluster.fail_deletes = True
    findings = smoke(cluster).findings
    assert [f.subject for f in findings] == [
        "Kubernetes API",
        f"pod dra-samples/{GPU_POD}",
        f"resourceclaim dra-samples/{GPU_CLAIM}",
    ]


def test_cleanup_runs_on_ctrl_c(cluster):
    def interrupted(_seconds: float) -> None:
        raise KeyboardInterrupt

    cluster.pods[GPU_POD] = [load("pod-smoke-pending.yaml")]
    run = SmokeRun(cluster, prod_expectations(), settings(), lambda _note: None)
    run.settings.sleep = interrupted
    with pytest.raises(KeyboardInterrupt):
        run.run(GPU_WORKLOAD)
    assert cluster.deleted == [f"pod/{GPU_POD}", f"resourceclaim/{GPU_CLAIM}"]


def test_a_second_ctrl_c_waits_until_the_cleanup_is_done(cluster):
    cluster.interrupt_on_delete = True
    with pytest.raises(KeyboardInterrupt):
        smoke(cluster)
    assert cluster.deleted == [f"pod/{GPU_POD}", f"resourceclaim/{GPU_CLAIM}"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_failed_cleanup_is_reported_with_the_command_to_finish_it(cluster):
    cluster.fail_deletes = True
    outcome = smoke(cluster)
    assert [f.likely_cause for f in outcome.findings] == [
        f"delete it by hand: `kubectl -n dra-samples delete pod {GPU_POD}`",
        f"delete it by hand: `kubectl -n dra-samples delete resourceclaim {GPU_CLAIM}`",
    ]


def test_a_missing_claim_template_fails_without_creating_anything(cluster):
    del cluster.templates["gpu"]
    finding = smoke(cluster).findings[0]
    assert finding.subject == "ResourceClaimTemplate dra-samples/gpu"
    assert cluster.created == [] and cluster.deleted == []


def test_the_infiniband_smoke_sees_the_claimed_interface_and_rdma_device(cluster):
    outcome = smoke(cluster, NETWORK_WORKLOAD)
    assert outcome.passed, outcome.findings
    assert "dra.net computeinstance-e00h7qk2rm8v1t9b4x/pci-0000-98-00-0 (request ib)" in outcome.summary
    assert "/sys/class/infiniband: mlx5_3" in outcome.summary
    assert cluster.deleted == [f"pod/{IB_POD}", f"resourceclaim/{IB_CLAIM}"]


def test_the_infiniband_smoke_fails_when_the_rdma_device_is_not_in_the_pod(cluster):
    cluster.outputs[LS_IB] = ExecResult("mlx5_0\n", "", 0)
    cluster.outputs[LS_NET] = ExecResult("eth0\nlo\n", "", 0)
    findings = smoke(cluster, NETWORK_WORKLOAD).findings
    assert [f.expected for f in findings] == [
        "interface ibp152s0 in the pod's /sys/class/net",
        "RDMA device mlx5_3 in the pod's /sys/class/infiniband",
    ]


def test_a_claim_allocated_from_the_wrong_driver_fails(cluster):
    cluster.claims[GPU_CLAIM]["status"]["allocation"]["devices"]["results"][0]["driver"] = "dra.net"
    finding = smoke(cluster).findings[0]
    assert finding.expected == "devices from driver gpu.nvidia.com"


def single(findings):
    assert len(findings) == 1, findings
    return findings[0]


def run_all(cluster: FakeCluster, expect, smoke_settings: SmokeSettings | None):
    progress = Progress(io.StringIO(), interactive=False)
    return list(Verification(cluster, expect, smoke_settings, progress).run()), progress.stream.getvalue()


def test_every_step_passes_on_a_healthy_prod_cluster(cluster):
    results, shown = run_all(cluster, prod_expectations(), settings())
    assert [(r.name, r.status) for r in results] == [
        ("cluster-read", PASS),
        ("gpu-nodes", PASS),
        ("node-health", PASS),
        ("driver-pods", PASS),
        ("gpu-deviceclass", PASS),
        ("gpu-slices", PASS),
        ("gpu-taints", PASS),
        ("legacy-device-plugin", PASS),
        ("dranet", PASS),
        ("network-deviceclasses", PASS),
        ("dranet-slices", PASS),
        ("smoke-gpu", PASS),
        ("gpu-metrics", PASS),
        ("smoke-ib-network", PASS),
        ("burn-in", SKIP),
    ]
    assert "PASS [12/15] Smoke workload: gpu claim, nvidia-smi -L: pod on computeinstance-e00h7qk2rm8v1t9b4x" in shown
    assert (
        "PASS [13/15] GPU metrics name the smoke pod and its claim (dcgm-exporter): 4 series on "
        "GPU-1f6a3d8b-c2e7-4950-8ab4-73d5e1c09f26 name pod verify-gpu-k3x9q and claim verify-gpu-k3x9q-gpu-7tq2n "
        "(exporter gpu-metrics/dcgm-exporter-x7q2m)"
    ) in shown
    assert cluster.proxied == [("gpu-metrics", "dcgm-exporter-x7q2m", 9400, "metrics")]
    assert "all 14 checks passed (1 skipped)" in summary_table(results)


def test_dev_skips_the_infiniband_steps_and_skip_smoke_skips_the_workloads():
    results, _ = run_all(FakeCluster(healthy_dev_state()), dev_expectations(), None)
    statuses = {r.name: (r.status, r.summary) for r in results}
    assert statuses["dranet"] == (SKIP, "the stack has no InfiniBand GPU groups")
    assert statuses["smoke-gpu"] == (SKIP, "skipped (--skip-smoke)")
    assert all(status in (PASS, SKIP) for status, _ in statuses.values())
    assert statuses["gpu-metrics"] == (SKIP, "skipped (--skip-smoke): it needs the GPU smoke pod")
    assert statuses["burn-in"] == (SKIP, "skipped (--skip-smoke): the burn-in creates pods")
    assert summary_table(results).endswith("all 8 checks passed (7 skipped)\n")


def test_an_unreadable_cluster_fails_the_read_and_runs_nothing_else(cluster):
    def refuse():
        raise ClusterError("list nodes: unauthorized (401): check that the `nebius` CLI is on PATH")

    cluster.list_nodes = refuse
    results, shown = run_all(cluster, prod_expectations(), settings())
    assert results[0].status == FAIL and "unauthorized (401)" in results[0].findings[0].found
    assert {r.status for r in results[1:]} == {SKIP} and results[1].summary == NOT_READ
    assert cluster.created == []
    assert "likely cause:" in shown


def test_an_object_of_an_unknown_shape_fails_its_step_and_the_run_goes_on(cluster):
    cluster.state.device_classes.append({"metadata": None})
    results, shown = run_all(cluster, prod_expectations(), settings())
    broken = [r for r in results if r.status == FAIL]
    assert [r.name for r in broken] == ["gpu-deviceclass", "network-deviceclasses"]
    assert broken[0].findings[0].found.startswith(("TypeError", "AttributeError"))
    assert "report it with the --json report" in shown
    assert results[-2].name == "smoke-ib-network" and results[-2].status == PASS


def test_without_any_devices_the_smoke_workloads_do_not_wait_for_a_timeout(cluster):
    cluster.state.resource_slices.clear()
    results, _ = run_all(cluster, prod_expectations(), settings())
    smoke_results = [(r.status, r.summary) for r in results if r.name.startswith("smoke-")]
    assert smoke_results == [
        (
            SKIP,
            "not run: no node publishes gpu.nvidia.com devices, so the claim cannot be allocated (see the slice checks)",
        ),
        (SKIP, "not run: no node publishes dra.net devices, so the claim cannot be allocated (see the slice checks)"),
    ]
    assert cluster.created == []


def test_a_failing_check_prints_expected_found_and_cause(cluster):
    cluster.state.resource_slices.clear()
    results, shown = run_all(cluster, prod_expectations(), None)
    assert next(r for r in results if r.name == "gpu-slices").status == FAIL
    assert "FAIL [6/15] gpu.nvidia.com ResourceSlices: 5 of 5 GPU node(s) publish the wrong GPUs" in shown
    assert "        expected:     8 GPU device(s) in gpu.nvidia.com slices" in shown
    assert "        likely cause: the kubelet plugin is not scheduled there" in shown
    assert summary_table(results).splitlines()[-1] == "2 of 11 checks failed: gpu-slices, dranet-slices"


@pytest.fixture
def cli_cluster(monkeypatch, cluster):
    monkeypatch.setattr(KubeCluster, "from_kubeconfig", classmethod(lambda cls, path, context=None, **_limits: cluster))
    monkeypatch.setattr(cli, "SmokeSettings", lambda timeout_s, **_: settings(timeout_s))
    return cluster


def test_the_cli_exits_0_and_writes_the_json_report_when_all_pass(cli_cluster, tmp_path, capsys):
    report = tmp_path / "verify.json"
    assert cli.main(["--stack", "prod", "--no-burn-in", "--json", str(report)]) == 0
    written = json.loads(report.read_text())
    assert written["passed"] is True and written["stack"] == "prod"
    assert [c["status"] for c in written["checks"]] == [PASS] * 14 + [SKIP]
    assert "all 14 checks passed (1 skipped)" in capsys.readouterr().out


def test_a_scheduled_maintenance_warns_and_the_run_still_passes(cli_cluster, tmp_path, capsys):
    node = next(name for name, group in node_names({"h200-train": 4}).items() if group == "h200-train")
    replace_node(cli_cluster.state, node, "node-gpu-maintenance.yaml")
    report = tmp_path / "verify.json"
    assert cli.main(["--stack", "prod", "--skip-smoke", "--json", str(report)]) == 0
    shown = capsys.readouterr()
    assert "WARN [3/15] Nebius health conditions on GPU nodes: 5 GPU node(s): no GPU or boot-disk error" in shown.err
    assert f"    ! node {node} (group h200-train)" in shown.err
    assert shown.out.splitlines()[-1] == "all 11 checks passed (4 skipped; with warnings: node-health)"
    written = json.loads(report.read_text())
    health = next(check for check in written["checks"] if check["name"] == "node-health")
    assert (written["passed"], health["status"], health["findings"]) == (True, WARN, [])
    assert health["warnings"][0]["found"].endswith("deadline 2026-11-30T12:26:00Z")


def test_a_gpu_error_on_a_node_fails_the_run(cli_cluster, tmp_path, capsys):
    node = next(iter(node_names({"h200-train": 4})))
    replace_node(cli_cluster.state, node, "node-gpu-gpu-error.yaml")
    assert cli.main(["--stack", "prod", "--skip-smoke"]) == 1
    shown = capsys.readouterr()
    assert "FAIL [3/15] Nebius health conditions on GPU nodes: 1 health problem(s) on 5 GPU node(s)" in shown.err
    assert shown.out.splitlines()[-1] == "1 of 11 checks failed: node-health"


def test_the_cli_exits_1_when_a_check_fails(cli_cluster, tmp_path):
    cli_cluster.state.device_classes.clear()
    report = tmp_path / "verify.json"
    assert cli.main(["--stack", "prod", "--skip-smoke", "--json", str(report)]) == 1
    failed = [c for c in json.loads(report.read_text())["checks"] if c["status"] == FAIL]
    assert [c["name"] for c in failed] == ["gpu-deviceclass", "network-deviceclasses"]
    assert set(failed[0]["findings"][0]) == {"subject", "expected", "found", "likely_cause"}


def test_the_cli_exits_130_on_ctrl_c_after_deleting_the_smoke_pod(cli_cluster, monkeypatch, capsys):
    cli_cluster.outputs[NVIDIA_SMI] = KeyboardInterrupt()
    assert cli.main(["--stack", "prod"]) == 130
    assert f"pod/{GPU_POD}" in cli_cluster.deleted
    assert "smoke-gpu" not in capsys.readouterr().out


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_an_interrupted_run_never_reports_a_pass_however_many_checks_passed_before(cli_cluster, tmp_path, capsys, how):
    """Every read-only check passed, then Ctrl-C (or a cancelled CI job's SIGTERM) hit the GPU smoke."""
    if how == "ctrl-c":
        cli_cluster.outputs[NVIDIA_SMI] = KeyboardInterrupt()
    else:

        def terminated(namespace, name, container, command):
            os.kill(os.getpid(), signal.SIGTERM)
            return ExecResult("", "", 0)

        cli_cluster.exec_in_pod = terminated
    before = signal.getsignal(signal.SIGTERM)
    report = tmp_path / "verify.json"
    assert cli.main(["--stack", "prod", "--json", str(report)]) == 130
    out = capsys.readouterr().out
    assert "passed" not in out
    assert out.splitlines()[-1] == "interrupted after 11 check(s); the others did not run, so this is not a pass"
    written = json.loads(report.read_text())
    assert (written["passed"], written["interrupted"]) == (False, True)
    assert f"pod/{GPU_POD}" in cli_cluster.deleted
    assert signal.getsignal(signal.SIGTERM) is before


def test_an_interrupted_summary_names_the_failures_and_is_no_pass():
    results = [
        CheckResult("cluster-read", "Read", PASS, "ok"),
        CheckResult("gpu-nodes", "Nodes", FAIL, "1 node missing"),
        CheckResult("dranet", "dranet", SKIP, "no InfiniBand"),
    ]
    assert summary_table(results, interrupted=True).splitlines()[-1] == (
        "interrupted after 2 check(s), 1 failed: gpu-nodes; the others did not run, so this is not a pass"
    )
    assert summary_table([], interrupted=True).splitlines()[-1].startswith("interrupted after 0 check(s)")
    assert "passed" not in summary_table(results[:1], interrupted=True)


def test_a_cluster_that_stops_answering_mid_run_skips_the_rest_and_exits_2(cli_cluster, tmp_path, capsys):
    def silent(namespace, name, container, command):
        raise ClusterUnreachableError(
            "exec nvidia-smi -L: the API server https://10.0.0.1 did not answer within 30s (--request-timeout)"
        )

    cli_cluster.exec_in_pod = silent
    report = tmp_path / "verify.json"
    assert cli.main(["--stack", "prod", "--json", str(report)]) == 2
    written = json.loads(report.read_text())
    by_name = {check["name"]: check for check in written["checks"]}
    assert by_name["smoke-gpu"]["status"] == FAIL
    assert by_name["smoke-gpu"]["summary"] == "the cluster could not be reached"
    assert by_name["smoke-ib-network"]["summary"] == UNREACHABLE
    assert (written["passed"], written["unreachable"]) == (False, True)
    assert f"pod/{GPU_POD}" in cli_cluster.deleted
    assert "https://10.0.0.1 did not answer within 30s" in capsys.readouterr().err


def test_ctrl_c_with_a_failed_cleanup_names_what_is_left_and_claims_nothing_was(cli_cluster, tmp_path, capsys):
    cli_cluster.outputs[NVIDIA_SMI] = KeyboardInterrupt()
    cli_cluster.fail_deletes = True
    report = tmp_path / "verify.json"
    assert cli.main(["--stack", "prod", "--json", str(report)]) == 130
    shown = capsys.readouterr()
    assert "were deleted" not in shown.err
    assert f"kubectl -n dra-samples delete pod {GPU_POD}" in shown.err
    assert "smoke-cleanup" in shown.out
    cleanup = json.loads(report.read_text())["checks"][-1]
    assert (cleanup["name"], cleanup["status"]) == ("smoke-cleanup", FAIL)
    assert [f["subject"] for f in cleanup["findings"]] == [
        f"pod dra-samples/{GPU_POD}",
        f"resourceclaim dra-samples/{GPU_CLAIM}",
    ]


def test_a_second_ctrl_c_during_a_failing_cleanup_still_reports_the_leftovers(cluster):
    cluster.interrupt_on_delete = True
    cluster.fail_deletes = True
    with pytest.raises(KeyboardInterrupt) as interrupt:
        smoke(cluster)
    assert [f.subject for f in interrupt.value.leftovers] == [
        f"pod dra-samples/{GPU_POD}",
        f"resourceclaim dra-samples/{GPU_CLAIM}",
    ]


def test_the_cli_refuses_an_unknown_stack_with_exit_2(capsys):
    assert cli.main(["--stack", "nope"]) == 2
    assert "no stack file Pulumi.nope.yaml" in capsys.readouterr().err


def test_exec_exit_status_comes_from_the_error_channel():
    assert exit_status('{"metadata":{},"status":"Success"}') == (0, "")
    failure = {
        "status": "Failure",
        "message": "command terminated with non-zero exit code: exit status 2",
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": "2"}]},
    }
    assert exit_status(json.dumps(failure)) == (2, failure["message"])


def test_the_adapter_turns_404_into_none_and_401_into_a_refused_credential():
    adapter = KubeCluster(client.ApiClient(client.Configuration(host="http://127.0.0.1:9")), refused="REFUSED-TEXT")

    def answer(status: int):
        def call(*_args, **_kwargs):
            raise ApiException(status=status, reason="nope")

        return call

    assert adapter._call("read DaemonSet kube-system/dranet", answer(404), missing_ok=True) is None
    with pytest.raises(CredentialRefusedError, match=r"^list nodes: unauthorized \(401\): REFUSED-TEXT$"):
        adapter._call("list nodes", answer(401))


class FakeApiServer(http.server.BaseHTTPRequestHandler):
    """Serves captured objects at their real API paths, so the adapter runs through the real client."""

    routes: ClassVar[dict[str, Any]] = {}
    received: ClassVar[list[tuple[str, str, Any]]] = []

    def _answer(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        self.received.append(("GET", self.path, None))
        if path in self.routes:
            self._answer(200, self.routes[path])
        else:
            self._answer(
                404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404}
            )

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.received.append(("POST", self.path, body))
        self._answer(201, body)

    def log_message(self, *_args: Any) -> None:
        return


@pytest.fixture
def api_server():
    FakeApiServer.routes = {
        "/api/v1/nodes": {"kind": "NodeList", "apiVersion": "v1", "items": [load("node-gpu.yaml")]},
        "/apis/resource.k8s.io/v1/resourceslices": {
            "kind": "ResourceSliceList",
            "apiVersion": "resource.k8s.io/v1",
            "items": [load("resourceslice-gpu.yaml")],
        },
        "/api/v1/namespaces/dra-samples/events": {
            "kind": "EventList",
            "apiVersion": "v1",
            "items": items("events-cannot-allocate.yaml"),
        },
    }
    FakeApiServer.received = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeApiServer)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    configuration = client.Configuration(host=f"http://127.0.0.1:{server.server_address[1]}")
    yield KubeCluster(client.ApiClient(configuration))
    server.shutdown()


def test_the_adapter_hands_back_raw_api_json_through_the_real_client(api_server):
    nodes = api_server.list_nodes()
    assert nodes == [load("node-gpu.yaml")]
    assert api_server.list_resource_slices()[0]["spec"]["devices"][0]["attributes"]["uuid"] == {
        "string": "GPU-da13c5fc-62e4-9b9e-3bdb-1f9b016fbbe1"
    }
    assert api_server.read_daemonset("kube-system", "dranet") is None
    with pytest.raises(ClusterError, match=r"needs Kubernetes 1\.34"):
        api_server.list_device_classes()
    manifest = smoke_pod(GPU_POD, "dra-samples", GPU_WORKLOAD, "nvidia/cuda:13.1.1-runtime-ubuntu24.04", [], 900)
    assert api_server.create_pod("dra-samples", manifest) == manifest
    assert FakeApiServer.received[-1] == ("POST", "/api/v1/namespaces/dra-samples/pods", manifest)
    assert api_server.pod_events("dra-samples", GPU_POD)[0]["reason"] == "FailedScheduling"
    assert (
        "fieldSelector=involvedObject.kind%3DPod%2CinvolvedObject.name%3Dverify-gpu-k3x9q"
        in FakeApiServer.received[-1][1]
    )


def test_the_live_display_redraws_on_a_terminal_and_prints_each_state_once_in_a_log():
    clock = FakeClock()
    for interactive in (False, True):
        stream = io.StringIO()
        progress = Progress(stream, interactive=interactive, clock=clock)
        progress.start(10, 11, "Smoke workload")
        for _ in range(3):
            clock.sleep(2)
            progress.update("Pending: 0/6 nodes are available: 6 cannot allocate all claims.")
        shown = stream.getvalue()
        if interactive:
            assert shown.count("\r\033[K") == 3 and "... 6s Pending" in shown and "\n" not in shown
        else:
            assert shown.count("Pending") == 1


def test_nvidia_smi_list_parsing_keeps_whole_gpus_and_skips_mig_devices():
    listing = (
        "GPU 0: NVIDIA H200 (UUID: GPU-da13c5fc-62e4-9b9e-3bdb-1f9b016fbbe1)\n"
        "  MIG 1g.18gb     Device  0: (UUID: MIG-5c1e7a3f-9b2d-5e6a-8c0f-1b3d5e7a9c2e)\n"
        "GPU 1: NVIDIA H200 (UUID: GPU-3b9f0a1e-7c44-2d58-91e6-0f4a8c2d7b35)\n"
    )
    assert parse_gpu_list(listing) == [
        ("NVIDIA H200", "GPU-da13c5fc-62e4-9b9e-3bdb-1f9b016fbbe1"),
        ("NVIDIA H200", "GPU-3b9f0a1e-7c44-2d58-91e6-0f4a8c2d7b35"),
    ]
    assert parse_gpu_list("No devices were found\n") == []


class ScriptedSocket:
    """Stands in for the client's exec websocket: `failure` is what opening it or waiting on it raises."""

    failure: BaseException = KeyboardInterrupt()
    fails_on_open = True
    closed = False

    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        if ScriptedSocket.fails_on_open:
            raise ScriptedSocket.failure

    def run_forever(self, timeout: float) -> None:
        raise ScriptedSocket.failure

    def close(self) -> None:
        ScriptedSocket.closed = True


@pytest.fixture
def scripted_exec(monkeypatch, api_server):
    monkeypatch.setattr(ws_client, "WSClient", ScriptedSocket)
    ScriptedSocket.closed = False
    return api_server


def test_ctrl_c_while_the_exec_stream_opens_stays_an_interrupt(scripted_exec):
    ScriptedSocket.failure, ScriptedSocket.fails_on_open = KeyboardInterrupt(), True
    with pytest.raises(KeyboardInterrupt):
        scripted_exec.exec_in_pod("dra-samples", GPU_POD, "smoke", NVIDIA_SMI)


def test_an_exec_stream_refused_or_dropped_is_a_cluster_error_and_the_socket_is_closed(scripted_exec):
    refused = WebSocketBadStatusException("Handshake status 403 Forbidden -+-+- {} -+-+- b''", 403, "Forbidden")
    ScriptedSocket.failure, ScriptedSocket.fails_on_open = refused, True
    with pytest.raises(
        ClusterError, match=r"could not open the exec stream: Handshake status 403 Forbidden.*pods/exec"
    ):
        scripted_exec.exec_in_pod("dra-samples", GPU_POD, "smoke", NVIDIA_SMI)
    ScriptedSocket.failure, ScriptedSocket.fails_on_open = (
        WebSocketConnectionClosedException("socket is already closed."),
        False,
    )
    with pytest.raises(ClusterError, match="exec stream broke: socket is already closed"):
        scripted_exec.exec_in_pod("dra-samples", GPU_POD, "smoke", NVIDIA_SMI)
    assert ScriptedSocket.closed
