"""Helpers the test modules share: which stacks exist, found the way a user adds one."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from components.config.stack_file import load_stack_config, stack_names
from policies.dra_rules import Finding

# Every Pulumi.<stack>.yaml beside Pulumi.yaml: a new stack file is tested without editing a test.
STACKS = tuple(stack_names())


def with_gpu_groups_changed(stack: str, changes_of: Callable[[dict[str, Any]], Mapping[str, Any]]) -> dict[str, str]:
    """The stack's merged config with `changes_of(group)` applied to each GPU group; a value None removes the field."""
    config = dict(load_stack_config(stack))
    groups = json.loads(config["nebius-dra:gpuNodeGroups"])
    for group in groups:
        for key, value in changes_of(group).items():
            if value is None:
                group.pop(key, None)
            else:
                group[key] = value
    config["nebius-dra:gpuNodeGroups"] = json.dumps(groups)
    return config


UNLISTED_MINOR_POLICY = "gpu-drivers-preset-known"


def beyond_the_unlisted_minor(findings: Sequence[Finding]) -> list[Finding]:
    """The findings besides the advisory each preset GPU group of a 1.34 stack gets.

    The dated table of Nebius driver presets has no row for Kubernetes 1.34, so the real stacks
    carry that advisory on every group with a driversPreset; anything else is a real finding.
    """
    return [f for f in findings if not (f.policy == UNLISTED_MINOR_POLICY and "has no row for 1.34 " in f.message)]
