"""Serves the DRA guardrails to the Pulumi CLI: `pulumi preview --policy-pack policies`.

The CLI runs this file from inside `policies/`, so the rules are imported as a sibling module.
"""

from dra_rules import POLICIES
from pulumi_policy import EnforcementLevel, PolicyPack

PolicyPack(name="nebius-dra-guardrails", policies=POLICIES, enforcement_level=EnforcementLevel.MANDATORY)
