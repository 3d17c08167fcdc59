"""What the bootstrap registers for one environment, from its parsed config."""

from __future__ import annotations

from pulumi.runtime import config as config_runtime

from components.dra_constants import NAMESPACE as MAIN_NAMESPACE
from policies.dra_guardrails.identity_rules import DEPLOY, PREVIEW
from tools.ci_identity.config import NAMESPACE, CiIdentityConfig, parse_ci_config
from tools.ci_identity.identity import CiIdentity, CiIdentityArgs


def read_ci_config(stack: str) -> CiIdentityConfig:
    """Every key of the namespace the engine set (the CLI fills in Pulumi.yaml's defaults), parsed once: an
    undeclared one is refused by name, never skipped."""
    prefix = f"{NAMESPACE}:"
    engine = {**config_runtime.get_config_env(), **config_runtime.CONFIG.get()}
    values = {key[len(prefix) :]: str(value) for key, value in engine.items() if key.startswith(prefix)}
    return parse_ci_config(
        values, stack, main_keys=sorted(key for key in engine if key.startswith(f"{MAIN_NAMESPACE}:"))
    )


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
