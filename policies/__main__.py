"""Serves the DRA guardrails to the Pulumi CLI: `pulumi preview --policy-pack policies`.

The CLI runs this file from inside `policies/`, so the rules' package is imported as a sibling
(`dra_guardrails`), not as `policies.dra_guardrails` as the tools and tests import it.
"""

from dra_guardrails import POLICIES
from pulumi_policy import EnforcementLevel, PolicyPack

PolicyPack(name="nebius-dra-guardrails", policies=POLICIES, enforcement_level=EnforcementLevel.MANDATORY)
