"""The offline engine hands the program what a real engine would: config as strings, state back intact."""

from __future__ import annotations

import pulumi
from pulumi.runtime import rpc
from pulumi.runtime.sync_await import _sync_await

from components.config.stack_file import load_stack_config
from tools.plan.mock_engine import run_program, state_struct


def test_plain_state_is_sent_as_the_sdk_serialiser_would_send_it():
    state = {"name": "x", "count": 3, "nested": {"flags": [True, False], "labels": {"a": "b"}}, "items": [{"k": 1.5}]}
    assert state_struct(state) == _sync_await(rpc.serialize_properties(state, {}))
    assert rpc.deserialize_properties(state_struct(state))["nested"] == {"flags": [True, False], "labels": {"a": "b"}}


def test_state_that_is_not_plain_data_goes_through_the_sdk_serialiser():
    struct = state_struct({"script": pulumi.StringAsset("echo hi")})
    assert rpc.deserialize_properties(struct)["script"].text == "echo hi"


def test_structured_stack_values_reach_the_program_as_json_text():
    config = load_stack_config("prod")
    assert config["nebius-dra:etcdClusterSize"] == "3"
    assert config["nebius-dra:protect"] == "true"
    assert config["nebius-dra:gpuNodeGroups"].startswith("[{")


def test_runs_are_independent_and_record_parents():
    first = run_program("prod")
    second = run_program("dev")
    assert first.error is None and second.error is None
    assert {r.urn for r in first.resources}.isdisjoint(r.urn for r in second.resources)
    urns = {r.urn for r in second.resources}
    assert all(r.parent in urns or r.parent.endswith("::nebius-dra-dev") for r in second.resources)


def test_the_sdk_stack_trace_hook_is_restored_after_a_run():
    import pulumi.runtime.resource as resource_runtime

    before = resource_runtime._get_stack_trace
    run_program("dev")
    assert resource_runtime._get_stack_trace is before
