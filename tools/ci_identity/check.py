"""What the bootstrap of one environment would create, checked offline before an administrator runs it.

    python -m tools.ci_identity.check --stack dev

Runs tools/ci_identity with its real stack file under the SDK's mock engine (no cloud account, no Pulumi
CLI), prints each identity with its role and the subject it trusts, and runs the policy pack over it as
`pulumi preview --policy-pack ../../policies` would: each finding, then the verdict on a line of its own
(`policy pack: pass` or `policy pack: BLOCKED ...`), so a clean run says that it passed.

Exit status: 0 when the bootstrap could proceed, 1 when a mandatory policy is violated, 2 when the
bootstrap refuses its config (each problem names its key) or the stack file cannot be read.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from components.config.reading import printable
from policies.dra_guardrails import RULES, Finding, PlannedResource, check_resources
from policies.dra_guardrails.identity_rules import ACCESS_PERMIT_TYPE, FEDERATED_CREDENTIALS_TYPE, identity_of
from tools.ci_identity.config import NAMESPACE, PLACEHOLDER_OWNER, check_readable_config
from tools.plan.mock_engine import run_program

BOOTSTRAP_DIR = Path(__file__).resolve().parent
PROJECT = "nebius-dra-ci-identity"
EXIT_OK, EXIT_POLICY, EXIT_CONFIG = 0, 1, 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.ci_identity.check", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument(
        "--stack", required=True, help="the bootstrap's stack: Pulumi.<stack>.yaml in tools/ci_identity"
    )
    stack = parser.parse_args(argv).stack
    run = run_program(stack, project_dir=BOOTSTRAP_DIR, project=PROJECT, check_readable=check_readable_config)
    if run.error is not None:
        print(printable(f"tools/ci_identity -s {stack}: {run.error}", lines=True), file=sys.stderr)
        return EXIT_CONFIG
    planned = [PlannedResource(r.urn, r.type, r.name, r.inputs) for r in run.resources]
    roles = {identity_of(r): r.props["role"] for r in planned if r.type == ACCESS_PERMIT_TYPE}
    for resource in planned:
        if resource.type == FEDERATED_CREDENTIALS_TYPE:
            kind, environment = identity_of(resource)
            props = resource.props
            print(f"{kind} identity of {environment}: {roles.get((kind, environment))} on {props['parentId']}")
            print(f"  trusts {props['oidcProvider']['issuerUrl']} for sub {props['federatedSubjectId']}")
            if re.match(rf"(?i)repo:{re.escape(PLACEHOLDER_OWNER)}[/@]", props["federatedSubjectId"]):
                print(
                    f"  the repository is the project's example ({PLACEHOLDER_OWNER}/...), not yours: set "
                    f"{NAMESPACE}:repository in this stack's file before `pulumi up`, or these "
                    "identities trust whoever owns that name on GitHub"
                )
    findings = check_resources(planned)
    for finding in findings:
        print(f"{'mandatory' if finding.mandatory else 'advisory'} {finding.policy}: {finding.message}")
    print(verdict(findings))
    return EXIT_POLICY if any(finding.mandatory for finding in findings) else EXIT_OK


def verdict(findings: Sequence[Finding]) -> str:
    """The pack's verdict in the offline plan's words, with how many rules judged: silence would not say it ran."""
    mandatory = sum(1 for finding in findings if finding.mandatory)
    advisory = len(findings) - mandatory
    passed = f"BLOCKED by {mandatory} mandatory policy violation(s)" if mandatory else "pass"
    advice = f", {advisory} advisory finding(s)" if advisory else ("" if mandatory else ", no finding")
    return f"policy pack: {passed}{advice} ({len(RULES)} rules)"


if __name__ == "__main__":
    sys.exit(main())
