"""One keyless CI identity: a service account, the group that holds its roles, and the trust that lets a
GitHub job act as it.

Nebius grants roles to groups, never to accounts (docs.nebius.com/iam/authorization/groups): the account
joins a group of its own, whose access permits name the environment's project and the identity's roles.
`IamV1FederatedCredentials` then lets a token from GitHub's issuer whose `sub` is exactly `subject`
impersonate the account (nebius/api nebius/iam/v1/federated_credentials.proto: `subject_id` is "the IAM
subject in which the federated subject will be impersonated"). No key is created: a job proves who it is
with GitHub's short-lived token, exchanged at run time (tools/ci_identity/exchange.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_nebius as nebius

from policies.dra_guardrails.identity_rules import ENVIRONMENT_LABEL, GITHUB_ISSUER, IDENTITY_LABEL, ROLES

TYPE = "nebius-dra:ci_identity:CiIdentity"


def identity_labels(kind: str, environment: str) -> dict[str, str]:
    """The labels the pack's identity rules read to tell a deploy identity from a preview one."""
    return {IDENTITY_LABEL: kind, ENVIRONMENT_LABEL: environment}


def account_name(kind: str, environment: str) -> str:
    return f"nebius-dra-{environment}-{kind}"


@dataclass(frozen=True)
class CiIdentityArgs:
    kind: str
    environment: str
    project_id: str
    subject: str


class CiIdentity(pulumi.ComponentResource):
    """The service account `kind` (deploy or preview) of `environment`, trusted by `subject` alone."""

    def __init__(self, name: str, args: CiIdentityArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE, name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        labels = identity_labels(args.kind, args.environment)
        title = account_name(args.kind, args.environment)
        self.account = nebius.IamV1ServiceAccount(
            f"{name}-account",
            nebius.IamV1ServiceAccountArgs(
                parent_id=args.project_id,
                name=title,
                description=f"CI {args.kind} identity of {args.environment}, keyless: GitHub OIDC {args.subject}",
                labels=labels,
            ),
            opts=child,
        )
        self.group = nebius.IamV1Group(
            f"{name}-group", nebius.IamV1GroupArgs(parent_id=args.project_id, name=title, labels=labels), opts=child
        )
        self.permits = [
            nebius.IamV1AccessPermit(
                f"{name}-{role}",
                nebius.IamV1AccessPermitArgs(
                    parent_id=self.group.id, resource_id=args.project_id, role=role, labels=labels
                ),
                opts=child,
            )
            for role in sorted(ROLES[args.kind])
        ]
        self.membership = nebius.IamV1GroupMembership(
            f"{name}-member",
            nebius.IamV1GroupMembershipArgs(parent_id=self.group.id, member_id=self.account.id, labels=labels),
            opts=child,
        )
        self.trust = nebius.IamV1FederatedCredentials(
            f"{name}-trust",
            nebius.IamV1FederatedCredentialsArgs(
                parent_id=args.project_id,
                name=title,
                subject_id=self.account.id,
                federated_subject_id=args.subject,
                oidc_provider=nebius.IamV1FederatedCredentialsOidcProviderArgs(issuer_url=GITHUB_ISSUER),
                labels=labels,
            ),
            opts=child,
        )
        self.service_account_id = self.account.id
        self.register_outputs({"serviceAccountId": self.service_account_id, "subject": args.subject})
