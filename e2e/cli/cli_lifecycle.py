"""The lifecycle every stack goes through with the real CLI, as a base class of each stack's test class.

pytest runs a base class's tests before the subclass's own, so each stack's class adds what only it
checks and ends with its `destroy` test.
"""

from __future__ import annotations

import pytest
from cli_checks import (
    check_claims_allocated,
    check_kubelet_plugin_ready,
    check_no_changes,
    check_preview_passes_the_pack,
    check_secrets_stay_secret,
    check_up_creates_everything,
)
from cli_stack import CliStack
from dra_scenarios import SCENARIOS


class CliLifecycle:
    STACK = ""

    @pytest.fixture(scope="class")
    def stack(self, new_engine, kube, kubelet, cluster, charts, tmp_path_factory):
        scenario = SCENARIOS[self.STACK]
        workdir = tmp_path_factory.mktemp(f"cli-{self.STACK}")
        cli = CliStack.prepare(scenario, workdir, new_engine(self.STACK), kube, cluster.kubeconfig, charts.url)
        yield cli
        cli.close()

    def test_preview_runs_the_program_and_passes_the_policy_pack(self, stack):
        stack.preview_text = check_preview_passes_the_pack(stack)

    def test_up_creates_every_object_with_the_real_provider_and_charts(self, stack, kube, charts):
        check_up_creates_everything(stack, kube, charts.requests)
        check_kubelet_plugin_ready(stack, kube)

    def test_a_second_preview_plans_no_change(self, stack):
        check_no_changes(stack)

    def test_the_clis_claim_templates_are_allocated_by_the_real_scheduler(self, stack, kube):
        check_claims_allocated(stack, kube)

    def test_outputs_state_and_stack_file_keep_the_kubeconfig_secret(self, stack):
        check_secrets_stay_secret(stack)
