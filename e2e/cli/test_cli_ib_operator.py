"""prod in operator mode through the real Pulumi CLI: no driversPreset, so the real GPU Operator and Network
Operator charts are installed beside the DRA driver; InfiniBand; the sample pods.

Run from the repository root: venv/bin/python -m pytest -q e2e/cli
"""

from __future__ import annotations

from cli_checks import check_destroy_removes_everything, release_objects
from cli_lifecycle import CliLifecycle

from components.dra_constants import GPU_OPERATOR_CHART, NETWORK_OPERATOR_CHART


class TestIbOperator(CliLifecycle):
    STACK = "ib-operator"

    def test_both_operators_are_installed_from_their_real_charts(self, stack, kube):
        releases = {o["release"] for o in release_objects(kube, stack)}
        assert {GPU_OPERATOR_CHART, NETWORK_OPERATOR_CHART} <= releases, releases

    def test_destroy_leaves_none_of_the_stacks_objects(self, stack, kube):
        check_destroy_removes_everything(stack, kube)
