"""Helpers the test modules share: which stacks exist, found the way a user adds one."""

from __future__ import annotations

from collections.abc import Sequence

from components.config.stack_file import stack_names
from policies.dra_rules import Finding

# Every Pulumi.<stack>.yaml beside Pulumi.yaml: a new stack file is tested without editing a test.
STACKS = tuple(stack_names())


UNLISTED_MINOR_POLICY = "gpu-drivers-preset-known"


def beyond_the_unlisted_minor(findings: Sequence[Finding]) -> list[Finding]:
    """The findings besides the advisory each preset GPU group of a 1.34 stack gets.

    The dated table of Nebius driver presets has no row for Kubernetes 1.34, so the real stacks
    carry that advisory on every group with a driversPreset; anything else is a real finding.
    """
    return [f for f in findings if not (f.policy == UNLISTED_MINOR_POLICY and "has no row for 1.34 " in f.message)]
