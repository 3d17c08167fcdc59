"""CI identity guardrails: a deploy identity holds only its named roles, and trusts one repository and environment.

The bootstrap in tools/ci_identity gives each environment a deploy service account and a read-only
preview one, each trusted by Nebius federated credentials for exactly one GitHub OIDC subject. An
identity with a wider role, or trust in a wider subject (a wildcard, a branch where an environment
is expected, another repository, no repository at all), is what this module refuses. The rules read
only values a preview knows (roles, resource IDs from config, subjects, labels), never IDs the engine
has yet to assign, so a first preview is judged as fully as a later one.

Like the rest of the pack this module imports nothing from the program; the bootstrap imports the
role table, the issuer and the subject grammar from here, so there is one copy of each.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pulumi_policy import EnforcementLevel

from .planned import PlannedResource, named
from .quoting import listed, quoted, shown

SERVICE_ACCOUNT_TYPE = "nebius:index/iamV1ServiceAccount:IamV1ServiceAccount"
GROUP_TYPE = "nebius:index/iamV1Group:IamV1Group"
ACCESS_PERMIT_TYPE = "nebius:index/iamV1AccessPermit:IamV1AccessPermit"
GROUP_MEMBERSHIP_TYPE = "nebius:index/iamV1GroupMembership:IamV1GroupMembership"
FEDERATED_CREDENTIALS_TYPE = "nebius:index/iamV1FederatedCredentials:IamV1FederatedCredentials"
# Long-lived keys of a service account: a keyless CI identity has none.
KEY_TYPES = (
    "nebius:index/iamV1AuthPublicKey:IamV1AuthPublicKey",
    "nebius:index/iamV2AccessKey:IamV2AccessKey",
)

# GitHub's OIDC issuer, the token's `iss` (docs.github.com/en/actions/reference/security/oidc, "Standard
# audience, issuer, and subject claims").
GITHUB_ISSUER = "https://token.actions.githubusercontent.com"

# Every CI identity resource carries these labels: which identity it belongs to and for which environment.
IDENTITY_LABEL = "nebius-dra-ci-identity"
ENVIRONMENT_LABEL = "nebius-dra-environment"
DEPLOY, PREVIEW = "deploy", "preview"

# The roles each identity needs on its environment's project, and no more. Nebius documents general roles
# (auditor, viewer, editor, admin) and Object Storage roles only (docs.nebius.com/iam/authorization/roles):
# there is no Managed Kubernetes, Compute or VPC role to name instead. `editor` ("view and manage most types
# of resources", not access management) creates the cluster, node groups and GPU cluster and reads the
# subnet; `viewer` is what `pulumi preview --refresh` needs to read them. `admin` would also let the
# identity manage IAM, including its own trust.
ROLES: Mapping[str, frozenset[str]] = {DEPLOY: frozenset({"editor"}), PREVIEW: frozenset({"viewer"})}
# The only resource a permit may name: the environment's project (IDs such as project-e00...), never a tenant.
PROJECT_ID = re.compile(r"^project-[a-z0-9]+\Z")

# GitHub's default subject formats (docs.github.com/en/actions/reference/security/oidc, "Example subject
# claims"): `repo:OWNER/REPO:environment:NAME` for a job that references an environment, and
# `repo:OWNER/REPO:pull_request` for a pull_request run without one. Repositories created, renamed or
# transferred on or after 2026-07-15, or opted in, send the immutable form with the owner's and the
# repository's numeric IDs after `@`: `repo:OWNER@OWNER_ID/REPO@REPO_ID:...` (GitHub changelog
# 2026-04-23 "Immutable subject claims for GitHub Actions OIDC tokens"; github/docs PR 45221). Names
# follow GitHub's rules: an owner is 1-39 letters, digits and hyphens, not starting with one; a
# repository 1-100 letters, digits, '.', '-' and '_'. Environment names here are the stacks' names.
OWNER = r"[A-Za-z0-9][A-Za-z0-9-]{0,38}"
REPOSITORY_NAME = r"[A-Za-z0-9._-]{1,100}"
GITHUB_ID = r"[1-9][0-9]{0,19}"
ENVIRONMENT = r"[A-Za-z0-9._-]{1,255}"
REPOSITORY_PART = re.compile(
    rf"^repo:(?P<owner>{OWNER})(?:@(?P<owner_id>{GITHUB_ID}))?/(?P<name>{REPOSITORY_NAME})"
    rf"(?(owner_id)@(?P<repository_id>{GITHUB_ID}))(?P<context>:.*)?\Z",
    re.S,
)
ENVIRONMENT_NAME = re.compile(rf"^{ENVIRONMENT}\Z")
ENVIRONMENT_CONTEXT = re.compile(rf"^:environment:(?P<environment>{ENVIRONMENT})\Z")
PULL_REQUEST_CONTEXT = ":pull_request"
WILDCARDS = ("*", "?")


def _labels(resource: PlannedResource) -> Mapping[str, Any]:
    labels = resource.props.get("labels")
    return labels if isinstance(labels, Mapping) else {}


def identity_of(resource: PlannedResource) -> tuple[str | None, str | None]:
    """(deploy or preview, environment) from the resource's labels; None where a label is missing."""
    labels = _labels(resource)
    kind, environment = labels.get(IDENTITY_LABEL), labels.get(ENVIRONMENT_LABEL)
    return (
        kind if isinstance(kind, str) else None,
        environment if isinstance(environment, str) else None,
    )


def labeled(
    resources: Sequence[PlannedResource], type_token: str, findings: list[tuple[str | None, str]]
) -> Iterator[tuple[PlannedResource, str, str]]:
    """(resource, deploy or preview, environment) for each `type_token` resource; one that does not name its
    identity and its environment cannot be judged (its subject and its project belong to an environment), so
    it becomes a finding instead."""
    for resource in resources:
        if resource.type != type_token:
            continue
        kind, environment = identity_of(resource)
        if kind in ROLES and environment is not None and ENVIRONMENT_NAME.match(environment):
            yield resource, str(kind), environment
            continue
        if kind in ROLES:
            findings.append(
                (
                    resource.urn,
                    f"{named(resource)}: label {ENVIRONMENT_LABEL} is {quoted(environment)}, not an environment name; a CI "
                    "identity resource must name its environment, whose subject and project it may use only "
                    "(tools/ci_identity sets it)",
                )
            )
            continue
        findings.append(
            (
                resource.urn,
                f"{named(resource)}: label {IDENTITY_LABEL} is {quoted(kind)}, not {DEPLOY} or {PREVIEW}; a CI identity "
                "resource must say which identity it serves, so its roles and its trust can be judged "
                "(tools/ci_identity sets it)",
            )
        )


def identity_projects(resources: Sequence[PlannedResource]) -> dict[tuple[str | None, str | None], set[Any]]:
    """The projects each identity's service account lives in (its parentId), by (kind, environment)."""
    projects: dict[tuple[str | None, str | None], set[Any]] = {}
    for resource in resources:
        if resource.type == SERVICE_ACCOUNT_TYPE:
            projects.setdefault(identity_of(resource), set()).add(resource.props.get("parentId"))
    return projects


def project_problem(
    value: Any, field: str, kind: str, environment: str, projects: Mapping[tuple[str | None, str | None], set[Any]]
) -> str | None:
    """Why `field` (a permit's resourceId, credentials' parentId) is not the project of the identity's environment:
    the one its service account lives in, which the bootstrap takes from the environment's stack."""
    homes = projects.get((kind, environment), set())
    if len(homes) != 1:
        quoted_homes = ", ".join(sorted(f"{quoted(home)}" for home in homes))
        return (
            f"the {kind} identity of {quoted(environment)} has {'no service account' if not homes else 'service accounts in '}"
            f"{quoted_homes} beside it; its {field} must be the one project its account lives in"
        )
    (home,) = homes
    if value != home:
        return (
            f"{field} {quoted(value)} is not the project of {quoted(environment)}'s {kind} identity ({quoted(home)}, where its service "
            "account lives): a CI identity acts on its own environment's project only"
        )
    return None


def repository_of(subject: str) -> str | None:
    """`OWNER/REPO`, or `OWNER@ID/REPO@ID` in the immutable form, that a subject names; None when it names none."""
    match = REPOSITORY_PART.match(subject)
    if match is None:
        return None
    owner, name = match["owner"], match["name"]
    if match["owner_id"]:
        return f"{owner}@{match['owner_id']}/{name}@{match['repository_id']}"
    return f"{owner}/{name}"


def subject_problem(subject: Any, kind: str, environment: str | None) -> str | None:
    """Why `subject` is wider than one repository and this identity's context, or None when it is exactly that."""
    if not isinstance(subject, str) or not subject:
        return (
            "federatedSubjectId is empty: the credentials would not pin a subject; it must be the one GitHub "
            "sends for this repository and environment"
        )
    if any(wildcard in subject for wildcard in WILDCARDS):
        return f"federatedSubjectId {quoted(subject)} has a wildcard; trust names one subject exactly"
    match = REPOSITORY_PART.match(subject)
    if match is None:
        return (
            f"federatedSubjectId {quoted(subject)} names no repository (GitHub's subjects start repo:OWNER/REPO, or "
            "repo:OWNER@OWNER_ID/REPO@REPO_ID); a customized subject such as repository_owner:... trusts every "
            "repository of an owner"
        )
    context = match["context"] or ""
    if kind == PREVIEW:
        if context != PULL_REQUEST_CONTEXT:
            return (
                f"federatedSubjectId {quoted(subject)}: the read-only preview identity trusts pull_request runs only "
                f"(repo:OWNER/REPO{PULL_REQUEST_CONTEXT})"
            )
        return None
    found = ENVIRONMENT_CONTEXT.match(context)
    if found is None:
        what = "a branch or tag" if context.startswith(":ref:") else "no environment"
        if context == PULL_REQUEST_CONTEXT:
            what = "every pull request"
        return (
            f"federatedSubjectId {quoted(subject)} names {what} where the deploy identity needs an environment "
            f"(repo:OWNER/REPO:environment:{environment or 'NAME'}); only a job in that GitHub environment, "
            "behind its protection rules, may deploy"
        )
    if environment is not None and found["environment"] != environment:
        return (
            f"federatedSubjectId {quoted(subject)} names environment {quoted(found['environment'])}, but the identity is "
            f"{quoted(environment)}'s ({ENVIRONMENT_LABEL})"
        )
    return None


def check_identity_trust(
    resources: Sequence[PlannedResource], config: Mapping[str, Any]
) -> list[tuple[str | None, str]]:
    """Federated credentials trust GitHub's issuer for one subject of one repository, shaped for their identity."""
    findings: list[tuple[str | None, str]] = []
    repositories: dict[str, list[str]] = {}
    projects = identity_projects(resources)
    for resource, kind, environment in labeled(resources, FEDERATED_CREDENTIALS_TYPE, findings):
        if problem := project_problem(resource.props.get("parentId"), "parentId", kind, environment, projects):
            findings.append((resource.urn, f"{named(resource)}: {problem}"))
        provider = resource.props.get("oidcProvider")
        issuer = provider.get("issuerUrl") if isinstance(provider, Mapping) else None
        if issuer != GITHUB_ISSUER:
            findings.append(
                (
                    resource.urn,
                    f"{named(resource)}: oidcProvider.issuerUrl is {quoted(issuer)}; a CI identity trusts GitHub's issuer "
                    f"{GITHUB_ISSUER} only",
                )
            )
        subject = resource.props.get("federatedSubjectId")
        problem = subject_problem(subject, kind, environment)
        if problem:
            findings.append((resource.urn, f"{named(resource)}: {problem}"))
            continue
        repositories.setdefault(str(repository_of(str(subject))), []).append(resource.name)
    if len(repositories) > 1:
        trusted = "; ".join(f"{shown(repo)} ({listed(sorted(names))})" for repo, names in sorted(repositories.items()))
        findings.append((None, f"the CI identities trust more than one repository: {trusted}; a bootstrap serves one"))
    return findings


def check_identity_roles(
    resources: Sequence[PlannedResource], config: Mapping[str, Any]
) -> list[tuple[str | None, str]]:
    """Access permits give a deploy identity only `editor`, a preview identity only `viewer`, on a project; no keys."""
    findings: list[tuple[str | None, str]] = []
    findings += [
        (
            resource.urn,
            f"{named(resource)}: a long-lived service account key; CI identities are keyless (federated "
            "credentials), and a key would outlive every job that used it",
        )
        for resource in resources
        if resource.type in KEY_TYPES
    ]
    projects = identity_projects(resources)
    for resource, kind, environment in labeled(resources, ACCESS_PERMIT_TYPE, findings):
        allowed = ROLES[kind]
        role = resource.props.get("role")
        if role not in allowed:
            findings.append(
                (
                    resource.urn,
                    f"{named(resource)}: role {quoted(role)} for the {kind} identity, which holds only "
                    f"{', '.join(sorted(allowed))} (the roles the stack needs, docs.nebius.com/iam/authorization/roles)",
                )
            )
        target = resource.props.get("resourceId")
        if not isinstance(target, str) or not PROJECT_ID.match(target):
            findings.append(
                (
                    resource.urn,
                    f"{named(resource)}: resourceId {quoted(target)} is not a project (project-...); a permit on a tenant "
                    "reaches every project in it",
                )
            )
        elif problem := project_problem(target, "resourceId", kind, environment, projects):
            findings.append((resource.urn, f"{named(resource)}: {problem}"))
    return findings


# (name, description, level, check): registry.RULES registers each as a StackRule.
IDENTITY_RULES = (
    (
        "ci-identity-trust",
        "Federated credentials of a CI identity trust GitHub's issuer for exactly one subject of one repository: "
        "the deploy identity its environment (repo:OWNER/REPO:environment:NAME), the preview identity pull_request "
        "runs; no wildcard, branch pattern or repository-less subject.",
        EnforcementLevel.MANDATORY,
        check_identity_trust,
    ),
    (
        "ci-identity-roles",
        "A CI identity's access permits name its environment's project (the one its service account lives in) and only the roles the stack needs: editor "
        "for deploys, viewer for previews; no long-lived service account key exists beside them.",
        EnforcementLevel.MANDATORY,
        check_identity_roles,
    ),
)
