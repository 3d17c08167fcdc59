"""pulumi_nebius is imported when the program builds a Nebius resource, never by a stack on an existing cluster."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.helpers import ROOT

# Runs in a fresh interpreter: the test process has long imported pulumi_nebius for real.
STACK_RUN = textwrap.dedent(
    """
    import sys
    from tests.existing_clusters import existing
    from tools.plan.mock_engine import run_program
    run = existing(sys.argv[1]) if sys.argv[2] == "existing" else run_program(sys.argv[1])
    assert run.error is None, run.error
    module = sys.modules.get("pulumi_nebius")
    print("executed" if module is not None and type(module).__name__ == "module" else "not executed")
    """
)


def _pulumi_nebius_after(stack: str, mode: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", STACK_RUN, stack, mode], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_a_stack_on_an_existing_cluster_never_executes_pulumi_nebius():
    """Its ~260 modules cost each run of the program in the Python host 0.17 s of CPU (components/nebius_sdk.py)."""
    assert _pulumi_nebius_after("dev", "existing") == "not executed"


def test_a_stack_that_creates_its_cluster_builds_it_with_pulumi_nebius():
    assert _pulumi_nebius_after("dev", "cloud") == "executed"
