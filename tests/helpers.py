"""Helpers the test modules share: which stacks exist, found the way a user adds one."""

from __future__ import annotations

from components.config.stack_file import stack_names

# Every Pulumi.<stack>.yaml beside Pulumi.yaml: a new stack file is tested without editing a test.
STACKS = tuple(stack_names())
