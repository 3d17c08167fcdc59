"""dev through the real Pulumi CLI: preview with the policy pack, up, no-change preview, a diff, a mandatory
finding, allocation by the real scheduler, secrets, destroy.

Run from the repository root: venv/bin/python -m pytest -q e2e/cli
"""

from __future__ import annotations

import json

import pytest
from cli_checks import (
    POLICY_PACK,
    check_claims_allocated,
    check_destroy_removes_everything,
    check_kubelet_plugin_ready,
    check_no_changes,
    check_preview_passes_the_pack,
    check_secrets_stay_secret,
    check_up_creates_everything,
)
from cli_stack import CliStack, summary_counts
from dra_scenarios import SCENARIOS

from components.config.errors import config_key

STACK = "dev"


@pytest.fixture(scope="module")
def stack(engine, kube, kubelet, cluster, charts, tmp_path_factory):
    cli = CliStack.prepare(SCENARIOS[STACK], tmp_path_factory.mktemp(f"cli-{STACK}"), engine, kube, cluster.kubeconfig, charts.url)
    yield cli
    cli.close()


def test_preview_runs_the_program_and_the_pack_warns_with_its_advisory(stack):
    text = check_preview_passes_the_pack(stack)
    # dev asks for cuda13.0 on 1.34, which the dated preset table has no row for: advisory, so the preview passes.
    assert "gpu-drivers-preset-known" in text and "advisory" in text and "has no row for 1.34" in text, text


def test_up_creates_every_object_with_the_real_provider_and_charts(stack, kube, charts):
    check_up_creates_everything(stack, kube, charts.requests)
    check_kubelet_plugin_ready(stack, kube)


def test_a_second_preview_plans_no_change(stack):
    check_no_changes(stack)


def test_the_clis_claim_templates_are_allocated_by_the_real_scheduler(stack, kube):
    check_claims_allocated(stack, kube)


def test_a_mandatory_finding_fails_the_preview_with_the_rules_name_and_message(stack, tmp_path):
    config = tmp_path / "policy-config.json"
    config.write_text(json.dumps({"gpu-drivers-preset-known": "mandatory"}))
    result = stack.pulumi("preview", *POLICY_PACK, "--policy-pack-config", str(config))
    assert result.code != 0, f"a mandatory violation passed the preview: {result}"
    assert "gpu-drivers-preset-known" in result.text and "mandatory" in result.text, str(result)
    assert "has no row for 1.34" in result.text, str(result)


def test_a_config_change_previews_exactly_its_diff_and_up_applies_it(stack, kube):
    stack.ok("config", "set", "--path", f"{config_key('draDriverValues')}.logVerbosity", "6")
    stack.ok("config", "set", config_key("gpuProducts"), '["NVIDIA H200", "NVIDIA H100 80GB HBM3"]', "--path=false")
    preview = stack.ok("preview", "--diff", *POLICY_PACK)
    counts = summary_counts(preview.out)
    changed = {verb: n for verb, n in counts.items() if verb != "unchanged"}
    assert changed == {"update": 1, "replace": 1}, f"expected the driver release updated and gpu-by-product replaced: {preview}"
    assert "logVerbosity" in preview.out and "NVIDIA H100 80GB HBM3" in preview.out, str(preview)
    stack.ok("up", "--yes", "--skip-preview", *POLICY_PACK)
    template = kube.get("resource.k8s.io/v1", "ResourceClaimTemplate", "gpu-by-product", stack.deployed.claim_namespace)
    assert "NVIDIA H100 80GB HBM3" in json.dumps(template), template
    check_no_changes(stack)


def test_stack_outputs_the_state_and_the_stack_file_keep_the_kubeconfig_secret(stack):
    check_secrets_stay_secret(stack)


def test_destroy_leaves_none_of_the_stacks_objects(stack, kube, kubelet):
    check_destroy_removes_everything(stack, kube)
    assert kubelet.errors == [], kubelet.errors
