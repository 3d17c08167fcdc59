"""The pack as the Pulumi CLI runs it, spoken to over the Analyzer gRPC service.

The CLI's `pulumi-analyzer-policy-python` starts `<virtualenv>/bin/python -u -m pulumi.policy
<engine address> .` inside `policies/`, and `pulumi.policy` runs `__main__.py` from there.
The fixture starts exactly that command, with PYTHONUNBUFFERED cleared: the port line must
reach the CLI because of `-u`, not because a developer's shell happens to set it.
The server is started once for the module and always killed; every call has a deadline,
so a hung server fails the test instead of hanging the suite.
"""

from __future__ import annotations

import copy
import os
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator

import grpc
import pytest
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from policies.dra_guardrails import RULES
from policies.dra_guardrails.framework import ResourceRule
from tests.helpers import ROOT, STACKS, shows_the_hourly_cost
from tools.plan.mock_engine import RegisteredResource

POLICIES_DIR = ROOT / "policies"
START_TIMEOUT_S = 30
CALL_TIMEOUT_S = 20
# pulumi.policy takes the engine address as its first argument but a pack never calls the engine.
UNUSED_ENGINE_ADDRESS = "127.0.0.1:0"


def _read_port(server: subprocess.Popen) -> int:
    """The first stdout line is the port, as the CLI expects; give up at the deadline."""
    selector = selectors.DefaultSelector()
    selector.register(server.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + START_TIMEOUT_S
    line = b""
    while not line.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not selector.select(remaining):
            raise TimeoutError(f"policy pack printed no port within {START_TIMEOUT_S}s")
        chunk = server.stdout.read1(64)
        if not chunk:
            raise RuntimeError(
                f"policy pack exited with {server.wait(CALL_TIMEOUT_S)}: {server.stderr.read().decode()}"
            )
        line += chunk
    return int(line.decode())


@pytest.fixture(scope="module")
def analyzer() -> Iterator[analyzer_pb2_grpc.AnalyzerStub]:
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    server = subprocess.Popen(
        [sys.executable, "-u", "-m", "pulumi.policy", UNUSED_ENGINE_ADDRESS, "."],
        cwd=POLICIES_DIR,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    channel = None
    try:
        channel = grpc.insecure_channel(f"127.0.0.1:{_read_port(server)}")
        grpc.channel_ready_future(channel).result(timeout=CALL_TIMEOUT_S)
        yield analyzer_pb2_grpc.AnalyzerStub(channel)
    finally:
        if channel is not None:
            channel.close()
        server.kill()
        server.wait(CALL_TIMEOUT_S)
        server.stdout.close()
        server.stderr.close()


def _struct(props: dict) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(props)
    return struct


def analyze(stub, resource: RegisteredResource) -> list:
    request = analyzer_pb2.AnalyzeRequest(
        type=resource.type, properties=_struct(resource.inputs), urn=resource.urn, name=resource.name
    )
    return list(stub.Analyze(request, timeout=CALL_TIMEOUT_S).diagnostics)


def analyze_stack(stub, resources: list[RegisteredResource]) -> list:
    request = analyzer_pb2.AnalyzeStackRequest(
        resources=[
            analyzer_pb2.AnalyzerResource(
                type=r.type,
                properties=_struct(r.inputs),
                urn=r.urn,
                name=r.name,
                parent=r.parent,
                dependencies=r.dependencies,
            )
            for r in resources
        ]
    )
    return list(stub.AnalyzeStack(request, timeout=CALL_TIMEOUT_S).diagnostics)


def analyze_all(stub, resources: list[RegisteredResource]) -> list:
    return [d for r in resources for d in analyze(stub, r)] + analyze_stack(stub, resources)


def mandatory(diagnostics: list) -> list[tuple[str, str]]:
    return [(d.policyName, d.message) for d in diagnostics if d.enforcementLevel == analyzer_pb2.MANDATORY]


def test_analyzer_info_lists_every_policy_with_its_level_and_schema(analyzer):
    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty(), timeout=CALL_TIMEOUT_S)
    assert info.name == "nebius-dra-guardrails" and info.supportsConfig
    levels = {p.name: (p.enforcementLevel, p.policy_type) for p in info.policies}
    assert levels == {
        rule.name: (
            analyzer_pb2.MANDATORY if rule.level.value == "mandatory" else analyzer_pb2.ADVISORY,
            analyzer_pb2.POLICY_TYPE_RESOURCE if isinstance(rule, ResourceRule) else analyzer_pb2.POLICY_TYPE_STACK,
        )
        for rule in RULES
    }
    [version_policy] = [p for p in info.policies if p.name == "mk8s-cluster-version"]
    assert version_policy.configSchema.properties["minimumVersion"]["default"] == "1.34"


@pytest.mark.parametrize("stack", STACKS)
def test_real_stacks_have_no_mandatory_violation(analyzer, stack_runs, stack):
    assert mandatory(analyze_all(analyzer, stack_runs[stack].resources)) == []


def test_analyze_reports_a_mutated_resource(analyzer, prod_run):
    [group] = [copy.deepcopy(r) for r in prod_run.resources if "autoscaling" in r.inputs]
    group.inputs["autoscaling"]["minNodeCount"] = 0
    [(policy, message)] = mandatory(analyze(analyzer, group))
    assert policy == "dra-autoscaling-min-nodes"
    assert f'Mk8sV1NodeGroup "{group.name}" autoscales from autoscaling.minNodeCount 0' in message


def test_analyze_stack_reports_a_stack_violation(analyzer, dev_run):
    without_driver = [
        r
        for r in dev_run.resources
        if r.inputs.get("chart", "").rsplit("/", 1)[-1] not in ("nvidia-dra-driver-gpu", "dra-driver-nvidia-gpu")
    ]
    assert len(without_driver) < len(dev_run.resources), "dev registers no DRA driver release"
    [(policy, message)] = mandatory(analyze_stack(analyzer, without_driver))
    assert policy == "single-dra-driver-release" and "no NVIDIA DRA driver release" in message


def test_configure_sets_minimum_version_and_levels(analyzer, dev_run):
    [cluster] = dev_run.of_type("nebius:index/mk8sV1Cluster:Mk8sV1Cluster")
    stricter = analyzer_pb2.ConfigureAnalyzerRequest(
        policyConfig={
            "mk8s-cluster-version": analyzer_pb2.PolicyConfig(
                enforcementLevel=analyzer_pb2.MANDATORY, properties=_struct({"minimumVersion": "1.35"})
            ),
        }
    )
    relaxed = analyzer_pb2.ConfigureAnalyzerRequest(
        policyConfig={
            "mk8s-cluster-version": analyzer_pb2.PolicyConfig(
                enforcementLevel=analyzer_pb2.DISABLED, properties=_struct({"minimumVersion": "1.35"})
            ),
        }
    )
    try:
        analyzer.Configure(stricter, timeout=CALL_TIMEOUT_S)
        [(policy, message)] = mandatory(analyze(analyzer, cluster))
        assert policy == "mk8s-cluster-version" and "below the required 1.35" in message
        analyzer.Configure(relaxed, timeout=CALL_TIMEOUT_S)
        assert analyze(analyzer, cluster) == []
    finally:
        analyzer.Configure(analyzer_pb2.ConfigureAnalyzerRequest(), timeout=CALL_TIMEOUT_S)
    assert analyze(analyzer, cluster) == []


@pytest.mark.parametrize(
    ("policy", "setting", "expected"),
    [
        ("mk8s-cluster-version", {"minimumVersoin": "1.35"}, 'mk8s-cluster-version: unknown setting "minimumVersoin"'),
        ("gpu-node-group-dra-enabled", {"strict": True}, 'gpu-node-group-dra-enabled: unknown setting "strict"'),
    ],
)
def test_an_unknown_setting_fails_the_analysis_instead_of_being_ignored(analyzer, dev_run, policy, setting, expected):
    # The CLI validates settings against each policy's config schema, but that schema travels as
    # properties and required only, so it lets an extra key through: the pack must refuse it.
    [cluster] = dev_run.of_type("nebius:index/mk8sV1Cluster:Mk8sV1Cluster")
    typo = analyzer_pb2.ConfigureAnalyzerRequest(
        policyConfig={
            policy: analyzer_pb2.PolicyConfig(enforcementLevel=analyzer_pb2.MANDATORY, properties=_struct(setting))
        }
    )
    try:
        analyzer.Configure(typo, timeout=CALL_TIMEOUT_S)
        with pytest.raises(grpc.RpcError) as failed:
            analyze_all(analyzer, [cluster])
        assert expected in failed.value.details()
    finally:
        analyzer.Configure(analyzer_pb2.ConfigureAnalyzerRequest(), timeout=CALL_TIMEOUT_S)
    assert analyze(analyzer, cluster) == []


def test_a_budget_from_the_policy_config_gates_the_stack_over_grpc(analyzer, prod_run):
    """`max-hourly-cost` as the CLI runs it: configured mandatory, prod over its budget fails, at its budget passes."""
    [estimate] = prod_run.of_type("nebius-dra:cost:CostEstimate")
    cost = estimate.inputs["total"]["hourlyUsd"]["max"]
    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty(), timeout=CALL_TIMEOUT_S)
    [budget_policy] = [p for p in info.policies if p.name == "max-hourly-cost"]
    assert budget_policy.enforcementLevel == analyzer_pb2.ADVISORY
    assert budget_policy.configSchema.properties["maxHourlyUsd"]["minimum"] == 0.01

    def gate(limit: float) -> analyzer_pb2.ConfigureAnalyzerRequest:
        settings = analyzer_pb2.PolicyConfig(
            enforcementLevel=analyzer_pb2.MANDATORY, properties=_struct({"maxHourlyUsd": limit})
        )
        return analyzer_pb2.ConfigureAnalyzerRequest(policyConfig={"max-hourly-cost": settings})

    try:
        analyzer.Configure(gate(cost - 1), timeout=CALL_TIMEOUT_S)
        [(policy, message)] = mandatory(analyze_stack(analyzer, prod_run.resources))
        assert policy == "max-hourly-cost" and shows_the_hourly_cost(message, cost)
        analyzer.Configure(gate(cost), timeout=CALL_TIMEOUT_S)
        assert mandatory(analyze_stack(analyzer, prod_run.resources)) == []
    finally:
        analyzer.Configure(analyzer_pb2.ConfigureAnalyzerRequest(), timeout=CALL_TIMEOUT_S)
