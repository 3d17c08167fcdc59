"""The DRA guardrails: the failure modes that break GPU and NIC allocation, as rules over planned resources.

Each rule reads resources with the engine's (camelCase) property names and returns messages
that say what is wrong, on which resource, and how to fix it. The same rule objects serve
`pulumi preview --policy-pack policies` (through `policies/__main__.py`), the offline plan
(`check_resources`) and the tests, so a verdict never depends on where it was computed.

Modules by concern: `planned` (what a planned resource is), `framework` (rules and their
settings), the rules per subject (`cluster_rules`, `node_group_rules`, `release_rules`,
`claim_rules`, `cost_rules`), `driver_presets` (a dated data table), `registry` (every rule, in
order) and `runner` (the offline runner). Imports inside the package are relative: the CLI
imports it as `dra_guardrails` from inside `policies/`, the program's tools as
`policies.dra_guardrails`.
"""

from .framework import PolicyConfigError
from .planned import PlannedResource
from .registry import POLICIES, RULES
from .runner import (
    DemotedPolicy,
    DisabledPolicy,
    Finding,
    check_resources,
    demoted_policies,
    disabled_policies,
    gating_policies,
    pass_notes,
    validate_policy_config,
)

__all__ = [
    "POLICIES",
    "RULES",
    "DemotedPolicy",
    "DisabledPolicy",
    "Finding",
    "PlannedResource",
    "PolicyConfigError",
    "check_resources",
    "demoted_policies",
    "disabled_policies",
    "gating_policies",
    "pass_notes",
    "validate_policy_config",
]
