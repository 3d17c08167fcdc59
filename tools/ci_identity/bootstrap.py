"""What the bootstrap registers for one environment, from its parsed config."""

from __future__ import annotations

import pulumi

from policies.identity_rules import DEPLOY, PREVIEW
from tools.ci_identity.config import NAMESPACE, CiIdentityConfig, declared_keys, parse_ci_config
from tools.ci_identity.identity import CiIdentity, CiIdentityArgs


def read_ci_config(stack: str) -> CiIdentityConfig:
    """Every declared key the engine set (the CLI fills in Pulumi.yaml's defaults), parsed once."""
    config = pulumi.Config(NAMESPACE)
    values = {key: value for key in declared_keys() if (value := config.get(key)) is not None}
    return parse_ci_config(values, stack)


def ci_identities(config: CiIdentityConfig) -> dict[str, CiIdentity]:
    """The deploy identity, trusted by the environment's subject, and unless turned off the read-only
    preview identity, trusted by pull_request runs of the same repository."""
    subjects = {DEPLOY: config.repository.environment_subject(config.environment)}
    if config.preview_identity:
        subjects[PREVIEW] = config.repository.pull_request_subject()
    return {
        kind: CiIdentity(
            f"ci-{config.environment}-{kind}",
            CiIdentityArgs(kind=kind, environment=config.environment, project_id=config.project_id, subject=subject),
        )
        for kind, subject in subjects.items()
    }
