"""prod through the real Pulumi CLI: four InfiniBand H200 nodes and a burst group, the preset driver path.

Run from the repository root: venv/bin/python -m pytest -q e2e/cli
"""

from __future__ import annotations

from cli_checks import check_destroy_removes_everything
from cli_lifecycle import CliLifecycle


class TestProd(CliLifecycle):
    STACK = "prod"

    def test_destroy_leaves_none_of_the_stacks_objects(self, stack, kube):
        check_destroy_removes_everything(stack, kube)
