"""dev through the real Pulumi CLI: preview with the policy pack, up, no-change preview, a diff, a mandatory
finding, allocation by the real scheduler, secrets, destroy.

Run from the repository root: venv/bin/python -m pytest -q e2e/cli
"""

from __future__ import annotations

import json
import re

from cli_checks import POLICY_PACK, check_destroy_removes_everything, check_no_changes
from cli_lifecycle import CliLifecycle
from cli_stack import summary_counts

from components.config.errors import config_key
from policies.dra_guardrails.consequences import CLAIM_TEMPLATE_TYPE, HELM_RELEASE_TYPE, Effect, consequences_of

# The engine's word for each effect of the table on the resource itself: a Helm upgrade updates the release.
ENGINE_VERB = {Effect.DELETE_CREATE: "replace", Effect.HELM_RESTART: "update", Effect.IN_PLACE: "update"}


def table_effects(resource_type: str, path: str) -> set[Effect]:
    """The effects the table gives a changed field, less CRDS_NOT_UPDATED (a note on a version change)."""
    return {row.effect for row in consequences_of(resource_type, path)} - {Effect.CRDS_NOT_UPDATED}


class TestDev(CliLifecycle):
    STACK = "dev"

    def test_the_preview_warned_with_the_advisory_and_passed(self, stack):
        # GPU metrics are off here (LOCAL_SETTINGS): gpu-metrics-present is advisory, so the preview warned and passed.
        text = stack.preview_text
        assert "gpu-metrics-present" in text and "advisory" in text and "but no GPU metrics" in text, text

    def test_a_mandatory_finding_fails_the_preview_with_the_rules_name_and_message(self, stack, tmp_path):
        config = tmp_path / "policy-config.json"
        config.write_text(json.dumps({"gpu-metrics-present": "mandatory"}))
        result = stack.pulumi("preview", *POLICY_PACK, "--policy-pack-config", str(config))
        assert result.code != 0, f"a mandatory violation passed the preview: {result}"
        assert "gpu-metrics-present" in result.text and "mandatory" in result.text, str(result)
        assert "but no GPU metrics" in result.text, str(result)

    def test_a_config_change_previews_exactly_its_diff_and_up_applies_it(self, stack, kube):
        stack.ok("config", "set", "--path", f"{config_key('draDriverValues')}.logVerbosity", "6")
        for index, product in enumerate(["NVIDIA H200", "NVIDIA H100 80GB HBM3"]):
            stack.ok("config", "set", "--path", f"{config_key('gpuProducts')}[{index}]", product)
        preview = stack.ok("preview", "--diff", *POLICY_PACK)
        changed = {verb: n for verb, n in summary_counts(preview.out).items() if verb != "unchanged"}
        assert changed == {"update": 1, "replace": 1}, (
            f"expected the driver release updated, gpu-by-product replaced: {preview}"
        )
        assert "logVerbosity" in preview.out and "NVIDIA H100 80GB HBM3" in preview.out, str(preview)
        # The table of consequences against the engine: what it calls a replacement the CLI replaces, what it calls
        # a Helm upgrade (in place for the release) the CLI updates.
        verbs = set(re.findall(r"(kubernetes:[\w./-]+:\w+): \((update|replace)\)", preview.out))
        expected = {
            (HELM_RELEASE_TYPE, ENGINE_VERB[effect])
            for effect in table_effects(HELM_RELEASE_TYPE, "values.logVerbosity")
        } | {(CLAIM_TEMPLATE_TYPE, ENGINE_VERB[effect]) for effect in table_effects(CLAIM_TEMPLATE_TYPE, "spec.spec")}
        assert verbs == expected == {(HELM_RELEASE_TYPE, "update"), (CLAIM_TEMPLATE_TYPE, "replace")}, str(preview)
        stack.ok("up", "--yes", "--skip-preview", *POLICY_PACK)
        template = kube.get(
            "resource.k8s.io/v1", "ResourceClaimTemplate", "gpu-by-product", stack.deployed.claim_namespace
        )
        assert "NVIDIA H100 80GB HBM3" in json.dumps(template), template
        check_no_changes(stack)

    def test_a_preview_names_a_shape_problem_and_what_the_rules_find_in_one_run(self, stack):
        """Issue 25 under the real engine: a misspelt field of a new group comes with the fabric the group lacks."""
        stack_file = stack.project / f"Pulumi.{stack.name}.yaml"
        before = stack_file.read_text()
        groups = json.loads(stack.scenario.raw_config()[config_key("gpuNodeGroups")])
        h100 = {"name": "h100", "platform": "gpu-h100-sxm", "preset": "8gpu-128vcpu-1600gb", "driversPreset": "cuda12"}
        stack.ok(
            "config",
            "set",
            config_key("gpuNodeGroups"),
            json.dumps([*groups, {**h100, "fixedNodeCont": 2, "infiniband": True}]),
        )
        try:
            result = stack.pulumi("preview", *POLICY_PACK)
        finally:
            stack_file.write_text(before)
        assert result.code != 0, str(result)
        where = f"{config_key('gpuNodeGroups')} entry h100"
        assert "invalid stack configuration (2 problems)" in result.text, str(result)
        assert f'{where}: has unknown field(s) "fixedNodeCont"; did you mean fixedNodeCount?' in result.text
        assert f"{where}: infiniband is true but {config_key('infinibandFabric')} is not set" in result.text
        assert "Traceback" not in result.text, str(result)

    def test_destroy_leaves_none_of_the_stacks_objects(self, stack, kube, kubelet):
        check_destroy_removes_everything(stack, kube)
        assert kubelet.errors == [], kubelet.errors
