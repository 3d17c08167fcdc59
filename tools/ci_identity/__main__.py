"""The CI identity bootstrap of one environment: config in, a deploy and a preview identity out.

Run once per repository and environment by an administrator, from this directory:
`pulumi up -s dev` (docs/ci.md, "Keyless deploys", says what it creates and how to revoke it).
"""

import sys
from pathlib import Path

import pulumi

# The Pulumi CLI runs this file from tools/ci_identity; the repository root holds the packages it imports.
ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from tools.ci_identity.bootstrap import ci_identities, read_ci_config  # noqa: E402

config = read_ci_config(pulumi.get_stack())
identities = ci_identities(config)
for kind, identity in identities.items():
    pulumi.export(f"{kind}ServiceAccountId", identity.service_account_id)
    pulumi.export(f"{kind}Subject", identity.trust.federated_subject_id)
